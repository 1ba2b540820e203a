//! `trainer viz` as a program: a network of a set with a block from a fixture plugin that the
//! tool has never heard of is drawn in the block's declared geometry; the thesis's networks
//! are attributed block by block; the self-contained HTML page renders in a real browser.

#[path = "common/browser.rs"]
mod browser;
#[path = "common/paths.rs"]
mod paths;

use std::path::{Path, PathBuf};

use paths::{shared, stockfish_positions, target_dir};
use std::process::{Command, Output};

fn run(cmd: &mut Command) -> String {
    let o: Output = cmd.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{cmd:?} failed:\n{text}");
    text
}

/// A plugin folder with the `all` plugin and the geometry fixture (named like a plugin, as a
/// user would install it).
fn plugin_dir_with_fixture(dir: &Path) -> PathBuf {
    let plugins = dir.join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    let deps = paths::plugin_dir();
    for (lib, name) in [
        ("libnnue_plugin_all.so", "libnnue_plugin_all.so"),
        (
            "libfixture_geometry_plugin.so",
            "libnnue_plugin_king_zone.so",
        ),
    ] {
        std::fs::copy(deps.join(lib), plugins.join(name)).unwrap();
    }
    plugins
}

#[test]
fn a_new_plugins_block_is_drawn_in_its_own_geometry_and_the_page_renders() {
    let dir = tempfile::tempdir().unwrap();
    let plugins = plugin_dir_with_fixture(dir.path());
    let net = dir.path().join("r.nnue");
    run(Command::new(target_dir().join("host"))
        .args([
            "net",
            "random",
            "--spec",
            "all+king_zone",
            "--l1",
            "32",
            "--l2",
            "8",
        ])
        .arg("--plugin-dir")
        .arg(&plugins)
        .arg("--out")
        .arg(&net));
    let out = dir.path().join("viz");
    let printed = run(Command::new(env!("CARGO_BIN_EXE_trainer"))
        .arg("--plugin-dir")
        .arg(&plugins)
        .args(["viz", "--neuron", "5", "--positions", "300", "--net"])
        .arg(&net)
        .arg("--data")
        .arg(stockfish_positions())
        .arg("--out")
        .arg(&out));
    assert!(printed.contains("| king_zone | 108 |"), "{printed}");
    let svg = std::fs::read_to_string(out.join("neuron-5.svg")).unwrap();
    // The fixture's section: its title and its 12 sheets, named by the plugin.
    let zone = svg
        .split(">king_zone<")
        .nth(1)
        .expect("a king_zone section");
    assert!(
        zone.contains("square around the own king (file offset, rank offset)"),
        "{zone}"
    );
    for sheet in ["own pawn", "their queen", "own king"] {
        assert!(
            zone.contains(&format!(">{sheet}<")),
            "sheet {sheet} missing"
        );
    }
    // 12 boards of `all` and 12 zone grids, each one image.
    assert_eq!(svg.matches("<image ").count(), 24);
    let page = out.join("insight.html");
    assert!(!std::fs::read_to_string(&page).unwrap().contains("src=\"./"));
    // neuron, features, weights, attribution and activations pictures.
    assert_eq!(browser::assert_renders(&page, 5), 5);
}

#[test]
fn the_thesis_networks_are_attributed_block_by_block() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("mb");
    run(Command::new(env!("CARGO_BIN_EXE_trainer"))
        .arg("--plugin-dir")
        .arg(paths::plugin_dir())
        .args(["viz", "--top", "1", "--positions", "400", "--net"])
        .arg(shared().join("nets/thesis/all+mb.nn"))
        .arg("--data")
        .arg(stockfish_positions())
        .arg("--out")
        .arg(&out));
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("attribution.json")).unwrap()).unwrap();
    let terms = json["terms"].as_array().unwrap();
    assert_eq!(terms.len(), 2);
    assert_eq!(terms[1]["term"], "mb");
    let loss = json["loss"].as_f64().unwrap();
    let share: f64 = terms
        .iter()
        .map(|t| t["contribution_share"].as_f64().unwrap())
        .sum();
    assert!((share - 1.0).abs() < 1e-9, "{share}");
    for t in terms {
        // Removing a block the network was trained with costs loss and moves the evaluation.
        assert!(t["loss_without"].as_f64().unwrap() > loss, "{t}");
        assert!(t["mean_abs_eval_change"].as_f64().unwrap() > 1.0, "{t}");
        let dead = t["dead"].as_f64().unwrap();
        assert!((0.0..1.0).contains(&dead), "{t}");
    }
    // Pawns never stand on the first or last rank: 32 of `all`'s 768 features are dead in any
    // data, and more in 400 positions.
    assert!(terms[0]["dead"].as_f64().unwrap() >= 32.0 / 768.0);
}

#[test]
fn a_neuron_that_does_not_exist_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_trainer"))
        .arg("--plugin-dir")
        .arg(paths::plugin_dir())
        .args(["viz", "--neuron", "512", "--net"])
        .arg(shared().join("nets/thesis/all.nn"))
        .arg("--out")
        .arg(dir.path().join("v"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("neuron 512 does not exist") && err.contains("all.nn"),
        "{err}"
    );
}

#[test]
fn removing_a_block_is_evaluating_the_network_with_its_rows_zeroed() {
    use nnue::{Kernels, Network, Nnue};
    use trainer::insight::attribution::attribute;
    use trainer::train::loss::ScoreLoss;

    let registry = paths::registry();
    let thesis = Nnue::load(&shared().join("nets/thesis/all+h+v.nn"), &registry).unwrap();
    // Stockfish's shape on the same set: a term's PSQT weights go with its rows, and each
    // position's piece count picks its stack and bucket with or without the term.
    let set = registry.feature_set("all+h+v").unwrap();
    let parts = nnue::NetworkParts::synthetic_arch(&set, 64, &nnue::Arch::sfnnv5(), 7);
    let stockfish_like =
        Nnue::bind(Network::from_parts(parts).unwrap(), "sf-like", &registry).unwrap();
    let samples = trainer::data::first_samples(&stockfish_positions(), None, 300, None).unwrap();
    let loss = ScoreLoss::default();
    // The loss of a network over the samples, evaluated by the engine (a fresh refresh each).
    let engine_loss = |nnue: &Nnue| -> f64 {
        samples
            .iter()
            .map(|s| {
                let out = nnue.evaluate(&s.board, Kernels::best()).unwrap();
                loss.sample_loss(
                    f64::from(out),
                    loss.sample_target(f64::from(s.score), s.result),
                )
            })
            .sum::<f64>()
            / samples.len() as f64
    };
    for nnue in [&thesis, &stockfish_like] {
        let a = attribute(&nnue.network(), nnue.features(), &samples, &loss, None).unwrap();
        assert_eq!(a.positions, samples.len());
        assert!(
            (a.loss - engine_loss(nnue)).abs() < 1e-12,
            "{} vs the engine's",
            a.loss
        );
        for (t, term) in nnue.features().terms().iter().enumerate() {
            let mut parts = nnue.network().to_parts();
            let l1 = parts.l1;
            let rows = term.offset as usize * l1..(term.offset + term.size) as usize * l1;
            parts.w1[rows].fill(0);
            let b = parts.arch.psqt_buckets;
            parts.psqt[term.offset as usize * b..(term.offset + term.size) as usize * b].fill(0);
            let zeroed =
                Nnue::bind(Network::from_parts(parts).unwrap(), "zeroed", &registry).unwrap();
            let want = engine_loss(&zeroed);
            let got = a.terms[t].loss_without;
            assert!(
                (got - want).abs() < 1e-12,
                "{}: {got} vs the engine's {want}",
                term.name
            );
            assert!(
                nnue.network().arch().stacks > 1 || got > a.loss,
                "{}: removing it should cost",
                term.name
            );
        }
        // Each stack's activations, for a shape with several.
        let stacks = nnue.network().arch().stacks;
        assert_eq!(a.stacks.len(), if stacks == 1 { 0 } else { stacks });
        assert_eq!(
            a.stacks.iter().map(|st| st.positions).sum::<usize>(),
            if stacks == 1 { 0 } else { samples.len() }
        );
    }
}

/// `trainer viz` reads a network of Stockfish's shape: its PSQT weights drawn per bucket in the
/// blocks' geometry, each layer stack's activations, every layer's weights.
#[test]
fn a_network_of_stockfishs_shape_is_drawn_with_its_psqt_buckets_and_stacks() {
    use nnue::{Arch, NetFormat, Network, NetworkParts, write_network};
    let dir = tempfile::tempdir().unwrap();
    let registry = paths::registry();
    let set = registry.feature_set("all+h").unwrap();
    let parts = NetworkParts::synthetic_arch(&set, 64, &Arch::sfnnv5(), 3);
    let net_path = dir.path().join("sf-like.nnue");
    write_network(
        &Network::from_parts(parts).unwrap(),
        &net_path,
        NetFormat::Own,
    )
    .unwrap();
    let out = dir.path().join("viz");
    run(Command::new(env!("CARGO_BIN_EXE_trainer"))
        .arg("--plugin-dir")
        .arg(paths::plugin_dir())
        .args(["viz", "--top", "1", "--positions", "300", "--net"])
        .arg(&net_path)
        .arg("--data")
        .arg(stockfish_positions())
        .arg("--out")
        .arg(&out));
    for b in 0..8 {
        let svg = std::fs::read_to_string(out.join(format!("psqt-{b}.svg"))).unwrap();
        assert!(svg.contains(&format!("PSQT weights of bucket {b}")));
    }
    let md = std::fs::read_to_string(out.join("insight.md")).unwrap();
    assert!(md.contains("Positions per layer stack"), "{md}");
    let stacks = std::fs::read_to_string(out.join("stacks.svg")).unwrap();
    assert_eq!(stacks.matches("Stack ").count(), 8);
    let weights = std::fs::read_to_string(out.join("weights.svg")).unwrap();
    for layer in [
        "W2 (hidden 1, 64 -&gt; 16",
        "W3 (hidden 2, 30 -&gt; 32",
        "W4 (output",
        "PSQT (8 buckets)",
    ] {
        assert!(weights.contains(layer), "{layer}");
    }
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("attribution.json")).unwrap()).unwrap();
    assert_eq!(json["stacks"].as_array().unwrap().len(), 8);
}
