//! `trainer run` as a program on a tiny manifest: self-play data, two feature sets trained,
//! a tournament played by the real `host` binary, puzzles, and a report; a rerun finds every
//! stage cached; runs killed with SIGKILL in the middle of training and of the tournament finish
//! on the next invocation with the results of an uninterrupted run; bad manifests are one-line
//! errors naming the file, the line and the key.

#[path = "common/browser.rs"]
mod browser;
#[path = "common/output.rs"]
mod output;
#[path = "common/paths.rs"]
mod paths;
#[path = "common/stages.rs"]
mod stages;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use output::text;
use paths::{shared, target_dir};
use std::process::{Command, Output, Stdio};

fn trainer() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_trainer"));
    c.arg("--plugin-dir").arg(paths::plugin_dir());
    c
}

/// A manifest small enough for a few seconds of work on two cores.
fn tiny_manifest(dir: &Path) -> PathBuf {
    let s = shared();
    let text = format!(
        r#"
[data.tiny]
generate = {{ games = 40, val_games = 6, nodes = 300, book = "{book}", write_minply = 4, seed = 3, threads = 2 }}

[evaluation.e]
reference = "all"
tournament = {{ rounds = 4, nodes = 300, openings = "{book}", concurrency = 2 }}
puzzles = {{ file = "{puzzles}", count = 20, nodes = 300, threads = 0 }}

[evaluation.f]
tournament = {{ rounds = 3, nodes = 200, openings = "{book}", concurrency = 0, pairs = [["all", "all+pv"]] }}
speed = {{ depth = 4, repeats = 2 }}

[[experiment]]
name = "tiny"
feature_sets = ["all", "all+pv"]
data = "tiny"
evaluation = ["e", "f"]
l1 = 32
l2 = 8
batch_size = 256
lr = 2e-3
epochs = 3
epoch_positions = 3000
val_positions = 500
runs = 1
"#,
        book = s.join("data/noob_3moves.epd").display(),
        puzzles = s.join("data/puzzles.csv").display(),
    );
    let path = dir.join("tiny.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// `trainer run` of `manifest` into `out` with `flags`, which must succeed.
fn run_ok(manifest: &Path, out: &Path, flags: &[&str]) -> Output {
    let o = trainer()
        .args(["run", "--no-progress"])
        .args(flags)
        .arg("--out")
        .arg(out)
        .arg(manifest)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "trainer run {flags:?} failed:\n{}",
        text(&o)
    );
    o
}

fn run_to_end(manifest: &Path, out: &Path) -> Output {
    run_ok(manifest, out, &[])
}

/// `trainer run --dry-run`'s standard output for `manifest` into `out`.
fn dry_run(manifest: &Path, out: &Path) -> String {
    String::from_utf8_lossy(&run_ok(manifest, out, &["--dry-run"]).stdout).into_owned()
}

/// Starts `trainer run` and kills it (SIGKILL) once a line of its standard error contains
/// `marker`; returns whether the marker was seen before the run ended by itself.
fn kill_at(manifest: &Path, out: &Path, marker: &str) -> bool {
    let mut child = trainer()
        .args(["run", "--no-progress", "--out"])
        .arg(out)
        .arg(manifest)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut seen = false;
    for line in BufReader::new(stderr).lines() {
        if line.unwrap().contains(marker) {
            seen = true;
            child.kill().unwrap();
            break;
        }
    }
    child.wait().unwrap();
    seen
}

/// The PGNs of the tournaments under `out`, one after the other.
fn tournament_pgn(out: &Path) -> String {
    std::fs::read_dir(out.join("tournament"))
        .unwrap()
        .map(|dir| std::fs::read_to_string(dir.unwrap().path().join("games.pgn")).unwrap())
        .collect()
}

fn report_json(out: &Path) -> serde_json::Value {
    let bytes = std::fs::read(out.join("reports/tiny/report.json")).unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

/// The validation losses of every run, per feature set.
fn val_losses(report: &serde_json::Value) -> Vec<(String, Vec<f64>)> {
    report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            let losses = row["runs"][0]["val_losses"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect();
            (row["feature_set"].as_str().unwrap().to_string(), losses)
        })
        .collect()
}

#[test]
fn runs_a_manifest_end_to_end_caches_and_resumes_after_kills() {
    assert!(
        target_dir().join("host").exists(),
        "the host binary must be built (cargo test --workspace builds it)"
    );
    let dir = tempfile::tempdir().unwrap();
    let manifest = tiny_manifest(dir.path());

    // Uninterrupted, after a dry run that finds every stage to do and writes nothing.
    let clean = dir.path().join("clean");
    let planned = dry_run(&manifest, &clean);
    assert!(
        planned.ends_with("6 stages: 0 done, 6 to do\n"),
        "{planned}"
    );
    assert!(
        planned.contains("train:tiny:all+pv:1  to do  "),
        "{planned}"
    );
    assert!(!clean.exists(), "a dry run wrote {}", clean.display());
    let first = run_to_end(&manifest, &clean);
    let out = text(&first);
    let report = std::fs::read_to_string(clean.join("reports/tiny/report.md")).unwrap();
    for needle in [
        "| all | 768 |",
        "Elo vs all (95%) | Puzzles (move acc.) | nps | Training time |",
        "| all+pv | 1920 |",
        "all vs all+pv",
        "val-loss.svg",
        "Pairs, head to head",
        "| all+pv vs all |",
        "### Evaluation `f, go nodes 200`",
        "pairs.svg",
    ] {
        assert!(report.contains(needle), "report lacks {needle}:\n{report}");
    }
    assert!(clean.join("reports/tiny/val-loss.svg").exists());
    let json = report_json(&clean);
    let losses = val_losses(&json);
    assert_eq!(losses.len(), 2);
    for (fs, l) in &losses {
        assert_eq!(l.len(), 3, "{fs}: one validation loss per epoch");
        assert!(l.iter().all(|v| v.is_finite() && *v > 0.0), "{fs}: {l:?}");
    }
    for row in json["rows"].as_array().unwrap() {
        // The network that played is the run's best epoch's.
        let run = &row["runs"][0];
        let losses: Vec<f64> = run["val_losses"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let lowest = losses.iter().cloned().fold(f64::INFINITY, f64::min);
        let best = run["best_epoch"].as_u64().unwrap();
        assert_eq!(losses[best as usize - 1], lowest, "{run}");
        assert_eq!(run["min_val_loss"].as_f64(), Some(lowest));
        assert!(
            run["net"]
                .as_str()
                .unwrap()
                .ends_with(&format!("nets/epoch-{best:04}.nnue")),
            "{run}"
        );
        let acc = row["puzzles"]["accuracy"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&acc), "{acc}");
        assert_eq!(row["puzzles"]["puzzles"].as_u64(), Some(20));
        assert!(row["nps"].as_f64().unwrap() > 1000.0, "{row}");
        assert_eq!(row["elo"].as_array().unwrap().len(), 2);
    }
    let pair = &json["evaluations"][1]["pairs"][0];
    assert_eq!(
        (pair["a"].as_str(), pair["b"].as_str()),
        (Some("all"), Some("all+pv"))
    );
    let games = ["wins", "draws", "losses"].map(|k| pair[k].as_u64().unwrap());
    assert_eq!(games.iter().sum::<u64>(), 6, "{pair}");
    assert_eq!(
        json["evaluations"][1]["speed"][0]["samples"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert!(clean.join("reports/tiny/pairs.svg").exists());
    // Inside the networks: every feature set attributed block by block, and one page with it
    // all (3 charts, then per feature set 4 charts and 4 neurons) that a browser renders.
    assert!(report.contains("## Inside the networks") && report.contains("| pv | 1152 |"));
    for row in json["rows"].as_array().unwrap() {
        let terms = row["attribution"]["terms"].as_array().unwrap();
        assert_eq!(
            terms.len(),
            row["feature_set"].as_str().unwrap().split('+').count()
        );
        assert!(
            terms.iter().all(|t| t["never_trained"].as_f64().is_some()),
            "{row}"
        );
    }
    browser::assert_renders(&clean.join("reports/tiny/report.html"), 3 + 2 * 8);
    // The round robin's 8 games and the pair's 6.
    let games = tournament_pgn(&clean);
    assert_eq!(games.matches("[Result ").count(), 14, "{out}");

    // A rerun redoes nothing: no stage folder's file is written again (nor by a dry run,
    // which finds every stage done).
    let before = stages::stage_files(&clean);
    let planned = dry_run(&manifest, &clean);
    assert!(
        planned.ends_with("6 stages: 6 done, 0 to do\n"),
        "{planned}"
    );
    let again = text(&run_to_end(&manifest, &clean));
    assert_eq!(again.matches("(cached").count(), 8, "{again}");
    assert_eq!(stages::stage_files(&clean), before, "{again}");
    assert_eq!(report_json(&clean), json);

    // Killed in the middle of the second training run, then in the tournament.
    let resumed = dir.path().join("resumed");
    assert!(kill_at(&manifest, &resumed, "epoch 1/3"));
    assert!(kill_at(&manifest, &resumed, "tournament:"));
    let last = text(&run_to_end(&manifest, &resumed));
    assert!(last.contains("data: tiny (cached"), "{last}");
    assert!(last.contains("all run 1/1 (cached"), "{last}");
    assert_eq!(val_losses(&report_json(&resumed)), losses);
    let games = tournament_pgn(&resumed);
    assert_eq!(
        games.matches("[Result ").count(),
        14,
        "a replayed tournament, not appended"
    );
    // One manifest run into two output folders: every stage under the same key (a stage's key
    // holds its inputs' keys and contents, not where the output folder lies).
    let stages = |out: &Path| -> Vec<String> {
        let mut names = Vec::new();
        for kind in ["data", "train", "tournament", "puzzles", "speed"] {
            for entry in std::fs::read_dir(out.join(kind)).unwrap() {
                let name = entry.unwrap().file_name().to_string_lossy().into_owned();
                names.push(format!("{kind}/{name}"));
            }
        }
        names.sort();
        names
    };
    assert_eq!(stages(&clean), stages(&resumed));
    assert_eq!(stages(&clean).len(), 8, "{:?}", stages(&clean));
}

fn check(manifest_text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.toml");
    std::fs::write(&path, manifest_text).unwrap();
    let o = trainer()
        .arg("run")
        .arg("--check")
        .arg(&path)
        .output()
        .unwrap();
    assert!(!o.status.success(), "accepted:\n{manifest_text}");
    let err = String::from_utf8_lossy(&o.stderr).trim().to_string();
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    err
}

/// The manifest the bad ones differ from: its dataset table, and the whole (one experiment).
fn base_manifest() -> (String, String) {
    let data = format!(
        "[data.d]\ntrain = [\"{0}\"]\nval = [\"{0}\"]\n",
        shared().join("data/puzzles.csv").display()
    );
    let ok =
        format!("{data}[[experiment]]\nname = \"x\"\nfeature_sets = [\"all\"]\ndata = \"d\"\n");
    (data, ok)
}

/// Each manifest of `cases` is refused by `--check` with one line holding every needle.
fn assert_refused_manifests<const N: usize>(cases: [(String, Vec<&str>); N]) {
    for (manifest, needles) in cases {
        let err = check(&manifest);
        for needle in needles {
            assert!(err.contains(needle), "'{needle}' not in: {err}");
        }
    }
}

#[test]
fn the_base_manifest_and_the_fields_recipe_pass_the_check() {
    let (_, ok) = base_manifest();
    // Sanity: the base manifest is accepted.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ok.toml");
    std::fs::write(&path, &ok).unwrap();
    let o = trainer()
        .arg("run")
        .arg("--check")
        .arg(&path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    // A manifest that sets no rate trains at the default, nnue-pytorch's.
    assert!(
        text(&o).contains("training lr 0.000875, γ 0.992"),
        "{}",
        text(&o)
    );
    // The field's recipe, listed as it will train.
    let recipe = format!(
        "{ok}optimizer = \"adamw\"\nlr_schedule = \"cosine\"\nlr_floor = 0.05\nwarmup_steps = 100\nlambda_end = 0.75\nmax_grad_norm = 2.0\nepochs = 50\npatience = 4\nwdl_skip = true\nearly_skip_ply = 20\npiece_count_skip = true\nswa_from = 40\n"
    );
    std::fs::write(&path, &recipe).unwrap();
    let o = trainer()
        .arg("run")
        .arg("--check")
        .arg(&path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    for part in [
        "up to 50 epochs of 100000000 positions, until 4 without improvement",
        "adamw (decay 0.01), cosine to 0.05·lr, warm-up 100 steps, λ 1 → 0.75, gradient norm ≤ 2, WDL skip, early-ply skip to 20, piece-count skip, weights averaged from epoch 40",
    ] {
        assert!(text(&o).contains(part), "'{part}' not in {}", text(&o));
    }
}

#[test]
fn bad_manifests_name_the_file_the_line_and_the_key() {
    let (data, ok) = base_manifest();
    let tournament_without_limit = format!(
        "{data}[evaluation.e]\ntournament = {{ rounds = 1, openings = \"{}\" }}\n[[experiment]]\nname = \"x\"\nfeature_sets = [\"all\"]\ndata = \"d\"\nevaluation = \"e\"\n",
        shared().join("data/noob_3moves.epd").display()
    );
    // (manifest, what the one-line error must say)
    assert_refused_manifests([
        (format!("{ok}lrr = 0.1\n"), vec!["m.toml:8", "lrr"]),
        (
            format!("[cluster]\npartiton = \"cpu\"\n{ok}"),
            vec!["m.toml:2", "cluster.", "partiton"],
        ),
        (
            format!("[cluster]\ncpus = 0\n{ok}"),
            vec!["m.toml:2", "cluster.cpus"],
        ),
        (
            format!("[cluster.train]\ngpu = 1\n{ok}"),
            vec!["m.toml:", "train", "gpu"],
        ),
        (format!("{ok}l2 = \"wide\"\n"), vec!["m.toml:8: l2:"]),
        (
            format!("{ok}insight = \"yes\"\n"),
            vec!["m.toml:8: insight:"],
        ),
        (
            format!("{ok}l1 = 100\n"),
            vec!["m.toml:8", "multiple of 32"],
        ),
        (
            format!("{ok}gamma = 1.5\n"),
            vec!["m.toml:8: gamma:", "between 0 and 1"],
        ),
        (
            ok.replace("data = \"d\"", "data = \"nope\""),
            vec!["m.toml:7", "data.nope"],
        ),
        (
            ok.replace("[\"all\"]", "[\"all+nosuchblock\"]"),
            vec!["m.toml:6", "nosuchblock"],
        ),
        (
            ok.replace("puzzles.csv\"]\nval", "missing.binpack\"]\nval"),
            vec!["m.toml:2", "no such file"],
        ),
        (
            tournament_without_limit.clone(),
            vec!["m.toml:5", "exactly one of nodes"],
        ),
        // The move limit's keys are arena's (arena::move_limit), read by the same rule.
        (
            tournament_without_limit.replace("rounds = 1,", "rounds = 1, nodes = 5, depth = 3,"),
            vec!["m.toml:5", "exactly one of nodes, depth, movetime, tc"],
        ),
        (
            tournament_without_limit.replace("rounds = 1,", "rounds = 1, nodes = 5, round = 3,"),
            vec!["m.toml:5", "unknown key `round`"],
        ),
        (
            tournament_without_limit.replace("rounds = 1,", "rounds = 1, tc = \"0+1\","),
            vec!["m.toml:5", "tc: '0+1' is not a time control"],
        ),
        (
            tournament_without_limit.replace("rounds = 1,", "rounds = 1, nodes = 0,"),
            vec!["m.toml:5", "nonzero"],
        ),
        (
            tournament_without_limit
                .replace("tournament = {", "puzzles = {")
                .replace("rounds = 1, openings", "tc = \"10+1\", file"),
            vec!["m.toml:5", "evaluation.e.puzzles: tc is for games"],
        ),
    ]);
}

/// What the stages would refuse later is refused by the check, with the stage's own limits.
#[test]
fn settings_the_stages_would_refuse_are_refused_by_the_check() {
    let (_, ok) = base_manifest();
    assert_refused_manifests([
        (format!("{ok}l1 = 16384\n"), vec!["m.toml:8: l1 must", "up to 8192"]),
        (format!("{ok}l2 = 100000\n"), vec!["m.toml:8: l2:", "between 1 and 4096"]),
        (
            format!("{ok}epochs = 9223372036854775807\n"),
            vec!["m.toml:8: epochs:", "between 1 and"],
        ),
        (
            format!("{ok}batch_size = 9223372036854775807\n"),
            vec!["m.toml:8: batch_size:", "between 1 and"],
        ),
        (format!("{ok}gamma = 0\n"), vec!["m.toml:8: gamma:", "above 0"]),
        (format!("{ok}lr = 1e308\n"), vec!["m.toml:8: lr:", "at most 1"]),
        (
            format!("{ok}min_ply = 50\nmax_ply = 10\n"),
            vec!["m.toml:5", "min_ply", "empty ply window 50..=10"],
        ),
        (
            format!("{ok}arch = \"sfnnv6\"\n"),
            vec!["m.toml:8: arch:", "thesis, sfnnv5"],
        ),
        (
            format!("{ok}l1 = 96\narch = \"sfnnv5\"\n"),
            vec!["m.toml:5", "arch:", "multiple of 64"],
        ),
        (
            format!("{ok}arch = {{ hidden = [], stacks = 8 }}\n"),
            vec!["m.toml:5", "arch:", "hidden layers"],
        ),
        (
            format!("{ok}arch = {{ hidden = [{{ width = 8, activation = \"gelu\" }}] }}\n"),
            vec!["m.toml:8: arch:"],
        ),
        (
            format!("{ok}archs = [\"thesis\", \"thesis\"]\n"),
            vec!["m.toml:8: archs:", "'thesis' is listed twice"],
        ),
        (
            format!("{ok}arch = \"sfnnv5\"\narchs = [\"thesis\"]\n"),
            vec!["m.toml:9: archs:", "not both"],
        ),
        (
            format!("{ok}l1 = 96\narchs = [\"thesis\", \"sfnnv5\"]\n"),
            vec!["m.toml:9: archs: sfnnv5: arch:", "multiple of 64"],
        ),
        (
            ok.replace(
                "data = \"d\"\n",
                &format!("data = \"d\"\nevaluation = \"e\"\n[evaluation.e]\nreference = \"nobody\"\ntournament = {{ rounds = 1, nodes = 10, openings = \"{}\" }}\n", shared().join("data/noob_3moves.epd").display()),
            ),
            vec!["m.toml:", "reference: 'nobody' is not a player", "players: all"],
        ),
        (
            ok.replace(
                "data = \"d\"\n",
                &format!("data = \"d\"\nevaluation = [\"e\"]\n[evaluation.e]\ntournament = {{ rounds = 1, nodes = 10, openings = \"{}\", pairs = [[\"all\", \"all+h\"]] }}\n", shared().join("data/noob_3moves.epd").display()),
            ),
            vec!["m.toml:", "tournament.pairs: 'all+h' is not a player"],
        ),
        (
            ok.replace("data = \"d\"\n", "data = \"d\"\nevaluation = [\"e\", 3]\n[evaluation.e]\n"),
            vec!["m.toml:8: evaluation:", "non-string"],
        ),
        (
            ok.replace("data = \"d\"\n", "data = \"d\"\nevaluation = [\"e\", \"g\"]\n[evaluation.e]\n"),
            vec!["m.toml:8: evaluation:", "no [evaluation.g]"],
        ),
        (
            format!("{ok}i8_blocks = [\"nosuch\"]\n"),
            vec!["m.toml: experiment 'x': i8_blocks:", "nosuch"],
        ),
    ]);
}

/// The field's recipe: each key checked by its type, or by the rule between keys.
#[test]
fn the_fields_recipe_is_checked_key_by_key() {
    let (_, ok) = base_manifest();
    assert_refused_manifests([
        (
            format!("{ok}lr_schedule = \"linear\"\n"),
            vec!["m.toml:8: lr_schedule:", "one-cycle"],
        ),
        (
            format!("{ok}patience = 0\n"),
            vec!["m.toml:8: patience:", "positive"],
        ),
        (
            format!("{ok}min_delta = -1\n"),
            vec!["m.toml:8: min_delta:", "between 0 and 1"],
        ),
        (
            format!("{ok}lambda_end = 2\n"),
            vec!["m.toml:8: lambda_end:", "between 0 and 1"],
        ),
        (
            format!("{ok}max_grad_norm = 0\n"),
            vec!["m.toml:8: max_grad_norm:", "above 0"],
        ),
        (
            format!("{ok}weight_decay = 0.1\n"),
            vec!["m.toml:5", "weight_decay: only the adamw optimizer"],
        ),
        (
            format!("{ok}optimizer = \"rangerlite\"\n"),
            vec!["m.toml:8: optimizer:", "ranger"],
        ),
        (
            format!("{ok}early_skip_ply = -1\n"),
            vec!["m.toml:8: early_skip_ply:"],
        ),
        (format!("{ok}wdl_skip = 1\n"), vec!["m.toml:8: wdl_skip:"]),
        (
            format!("{ok}epochs = 4\nswa_from = 5\n"),
            vec!["m.toml:5", "swa_from: epoch 5 is after the last epoch (4)"],
        ),
    ]);
}

/// `generate` tables: ply windows (at parse) and the inputs the stage would need (`--check`).
#[test]
fn bad_generation_tables_are_refused_by_check() {
    let dir = tempfile::tempdir().unwrap();
    let text_file = dir.path().join("notes.txt");
    std::fs::write(&text_file, "not a network, not a book\n").unwrap();
    let book = shared().join("data/noob_3moves.epd");
    let table = |extra: &str| {
        format!(
            "[data.g]\ngenerate = {{ games = 2, val_games = 1, nodes = 10, book = \"{}\"{extra} }}\n[[experiment]]\nname = \"x\"\nfeature_sets = [\"all\"]\ndata = \"g\"\n",
            book.display()
        )
    };
    let cases = [
        (
            table(", random_minply = 30, random_maxply = 10"),
            vec!["data.g.generate.random_minply: 30 is after random_maxply 10"],
        ),
        (
            table(", write_minply = 30, write_maxply = 10"),
            vec!["data.g.generate.write_minply: 30 is after write_maxply 10"],
        ),
        (
            table(&format!(", net = \"{}\"", text_file.display())),
            vec!["data.g.generate.net:", "not a network file"],
        ),
        (
            table("").replace(
                &book.display().to_string(),
                &text_file.display().to_string(),
            ),
            vec!["data.g.generate.book:", "notes.txt:1: invalid EPD line"],
        ),
        (
            table(", labeler = \"cmd=/nonexistent/engine\""),
            vec!["data.g.generate.labeler: engine /nonexistent/engine does not exist"],
        ),
        (
            table(", label = \"nodes=0\""),
            vec!["data.g.generate.label: label budget 'nodes=0'"],
        ),
        (
            table(&format!(", label_net = \"{}\"", text_file.display())),
            vec!["data.g.generate.label_net: a labeller network needs a label budget"],
        ),
        (
            table(", label = \"static\", label_net = \"export:/nonexistent/engine\""),
            vec!["data.g.generate.label_net: engine /nonexistent/engine does not exist"],
        ),
        (
            table(", positions = 100"),
            vec!["data.g.generate: give exactly one of games and positions"],
        ),
        (
            table(", labeler = \"cmd=/usr/games/stockfish\"").replace("nodes = 10", "depth = 3"),
            vec!["data.g.generate.labeler: an external labeler searches a node count: give nodes"],
        ),
        (
            table(&format!(
                ", label = \"qsearch\", label_net = \"{}\"",
                text_file.display()
            )),
            vec!["data.g.generate.label_net:", "not a network file"],
        ),
    ];
    for (manifest, needles) in cases {
        let err = check(&manifest);
        assert!(err.contains("m.toml"), "{err}");
        for needle in needles {
            assert!(err.contains(needle), "'{needle}' not in: {err}");
        }
    }
}

#[test]
fn the_repositorys_manifest_is_valid() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../experiments.toml");
    let o = trainer()
        .arg("run")
        .arg("--check")
        .arg(&manifest)
        .output()
        .unwrap();
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    for name in [
        "default:",
        "default-converged: 3 feature set(s) x 1 run(s), 128 -> 16 -> 1, up to 60 epochs of 100000 positions, until 3 without improvement",
        "baseline-1024x64:",
        "axes:",
        "pairwise:",
        "mobility:",
        "pqr-from-score:",
        "threats:",
    ] {
        assert!(out.contains(name), "{name} missing from the plan:\n{out}");
    }
    // A trailing `*` selects the 16 cells of the laptop-scale sweep; a pattern that selects
    // nothing is a one-line error.
    let plan = |only: &str| {
        trainer()
            .args(["run", "--check", "--only", only])
            .arg(&manifest)
            .output()
            .unwrap()
    };
    let o = plan("baseline-small-*");
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(out.lines().count(), 16, "{out}");
    assert!(
        out.lines().all(|l| l.starts_with("baseline-small-")),
        "{out}"
    );
    let o = plan("nothing-*");
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr).trim().to_string();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("--only nothing-*: ") && err.contains("baseline-small-2048x256"),
        "{err}"
    );
}

/// `archs` trains every feature set in every listed shape: the networks are named `FS@SHAPE`,
/// which the evaluation's reference and pairs name; a table's label is its place in the list.
#[test]
fn an_experiment_trains_each_feature_set_in_each_listed_shape() {
    use trainer::experiment::manifest::Manifest;
    let data = format!(
        "[data.d]\ntrain = [\"{0}\"]\nval = [\"{0}\"]\n",
        shared().join("data/puzzles.csv").display()
    );
    let text = format!(
        "{data}[evaluation.e]\nreference = \"all@thesis\"\n[[experiment]]\nname = \"x\"\nfeature_sets = [\"all\", \"halfka_v2_hm^\"]\ndata = \"d\"\nevaluation = \"e\"\nl1 = 128\narchs = [\"thesis\", \"sfnnv5\", {{ hidden = [{{ width = 8, activation = \"crelu\" }}], stacks = 2 }}]\n"
    );
    let m = Manifest::parse(&text, Path::new("m.toml")).unwrap();
    let e = &m.experiments[0];
    assert_eq!(
        e.entry_names(),
        [
            "all@thesis",
            "all@sfnnv5",
            "all@arch3",
            "halfka_v2_hm^@thesis",
            "halfka_v2_hm^@sfnnv5",
            "halfka_v2_hm^@arch3"
        ]
    );
    let entries = e.entries();
    assert_eq!(entries[1].settings.shape(768).arch, nnue::Arch::sfnnv5());
    assert_eq!(entries[2].settings.shape(768).arch.stacks, 2);
    assert_eq!(
        entries[0]
            .settings
            .shape(768)
            .arch
            .preset()
            .map(|p| p.name()),
        Some("thesis")
    );
    assert_eq!(entries[3].feature_set, "halfka_v2_hm^");
    // Without archs the networks keep the feature sets' names (and their cache keys).
    let plain = text
        .replace("reference = \"all@thesis\"", "reference = \"all\"")
        .replace(
            "archs = [\"thesis\", \"sfnnv5\", { hidden = [{ width = 8, activation = \"crelu\" }], stacks = 2 }]\n",
            "",
        );
    let m = Manifest::parse(&plain, Path::new("m.toml")).unwrap();
    assert_eq!(m.experiments[0].entry_names(), ["all", "halfka_v2_hm^"]);
    assert!(m.experiments[0].entries()[0].settings.arch.is_none());
}

#[test]
fn insight_is_on_unless_the_manifest_turns_it_off() {
    use trainer::experiment::manifest::Manifest;
    let data = format!(
        "[data.d]\ntrain = [\"{0}\"]\nval = [\"{0}\"]\n",
        shared().join("data/puzzles.csv").display()
    );
    let experiment = |name: &str, extra: &str| {
        format!(
            "[[experiment]]\nname = \"{name}\"\nfeature_sets = [\"all\"]\ndata = \"d\"\n{extra}"
        )
    };
    let text = format!(
        "{data}{}{}",
        experiment("on", ""),
        experiment("off", "insight = false\n")
    );
    let m = Manifest::parse(&text, Path::new("m.toml")).unwrap();
    let flags: Vec<bool> = m.experiments.iter().map(|e| e.insight).collect();
    assert_eq!(flags, [true, false]);
    let text = format!("[defaults]\ninsight = false\n{data}{}", experiment("x", ""));
    let m = Manifest::parse(&text, Path::new("m.toml")).unwrap();
    assert!(!m.experiments[0].insight);
}

/// Two datasets of files (the puzzles file stands for any positions): `a` and `b`.
fn two_datasets() -> String {
    let f = shared().join("data/puzzles.csv");
    format!(
        "[data.a]\ntrain = [\"{0}\"]\nval = [\"{0}\"]\n[data.b]\ntrain = [\"{0}\"]\nval = [\"{0}\"]\n",
        f.display()
    )
}

/// `sweep = { KEY = [...] }` stands for one experiment per cell of the grid, named after its
/// values, equal to the experiments written out one by one; the group's name selects its cells.
#[test]
fn a_sweep_is_one_declaration_of_named_cells() {
    use trainer::experiment::manifest::Manifest;
    let data = two_datasets();
    let swept = format!(
        "{data}[[experiment]]\nname = \"grid\"\nsweep = {{ l2 = [8, 16], l1 = [32, 64] }}\nfeature_sets = [\"all\"]\ndata = \"a\"\nepochs = 3\n[[experiment]]\nname = \"other\"\nfeature_sets = [\"all\"]\ndata = \"a\"\n"
    );
    let mut written = data.clone();
    for l1 in [32, 64] {
        for l2 in [8, 16] {
            written += &format!(
                "[[experiment]]\nname = \"grid-{l1}x{l2}\"\nfeature_sets = [\"all\"]\ndata = \"a\"\nepochs = 3\nl1 = {l1}\nl2 = {l2}\n"
            );
        }
    }
    written += "[[experiment]]\nname = \"other\"\nfeature_sets = [\"all\"]\ndata = \"a\"\n";
    let m = Manifest::parse(&swept, Path::new("m.toml")).unwrap();
    let by_hand = Manifest::parse(&written, Path::new("m.toml")).unwrap();
    let names: Vec<&str> = m.experiments.iter().map(|e| e.name.as_str()).collect();
    // Cells in the keys' alphabetical order (l1, then l2), the later key varying fastest.
    assert_eq!(
        names,
        [
            "grid-32x8",
            "grid-32x16",
            "grid-64x8",
            "grid-64x16",
            "other"
        ]
    );
    for (cell, hand) in m.experiments.iter().zip(&by_hand.experiments) {
        assert_eq!(cell.settings, hand.settings, "{}", cell.name);
        // The same experiment but for the group and the lines errors name.
        let ungrouped = trainer::experiment::manifest::Experiment {
            group: None,
            feature_set_places: hand.feature_set_places.clone(),
            ..cell.clone()
        };
        assert_eq!(&ungrouped, hand);
    }
    assert_eq!(m.experiments[1].settings.l1.get(), 32);
    assert_eq!(m.experiments[1].settings.l2.get(), 16);
    assert_eq!(m.experiments[0].group.as_deref(), Some("grid"));
    assert_eq!(m.experiments[4].group, None);
    let selected = |only: &[&str]| -> Vec<String> {
        let only: Vec<String> = only.iter().map(|s| s.to_string()).collect();
        m.select(&only)
            .unwrap()
            .iter()
            .map(|e| e.name.clone())
            .collect()
    };
    assert_eq!(selected(&["grid"]).len(), 4);
    assert_eq!(selected(&["grid-64*"]), ["grid-64x8", "grid-64x16"]);
    assert_eq!(selected(&["grid-32x16", "other"]), ["grid-32x16", "other"]);

    let refused = |sweep: &str, extra: &str| -> String {
        let text = format!(
            "{data}[[experiment]]\nname = \"grid\"\nsweep = {sweep}\nfeature_sets = [\"all\"]\ndata = \"a\"\n{extra}"
        );
        let err = Manifest::parse(&text, Path::new("m.toml"))
            .map(|_| ())
            .unwrap_err();
        format!("{err:#}")
    };
    let line = data.lines().count() + 3;
    for (sweep, extra, needle) in [
        (
            "{ l1 = [32, 64] }",
            "l1 = 128\n",
            "sweep.l1: is also set in the experiment",
        ),
        ("{ l1 = [] }", "", "sweep.l1: an empty list"),
        ("{ l1 = 32 }", "", "sweep.l1: give a list of values"),
        ("{ l1 = [32, 32] }", "", "sweep.l1: 32 is listed twice"),
        ("{ }", "", "sweep: an empty table"),
        ("[32]", "", "sweep: give a table of keys"),
        (
            "{ method = [\"a b\"] }",
            "",
            "sweep.method: 'a b' cannot be part of a cell's name",
        ),
        ("{ name = [\"x\"] }", "", "sweep.name: cannot be swept"),
        ("{ l1 = [32, \"wide\"] }", "", "l1"),
        ("{ lr_typo = [1.0] }", "", "lr_typo"),
    ] {
        let err = refused(sweep, extra);
        assert!(err.contains(needle), "'{needle}' not in: {err}");
        assert!(err.contains(&format!("m.toml:{line}")), "{err}");
    }
}

/// `data = [...]` trains every feature set on each dataset (networks `FS@DATA`); `val_data`
/// scores them all on one held-out set. Unknown or repeated names are one-line errors.
#[test]
fn an_experiment_trains_on_each_listed_dataset_and_validates_on_one() {
    use trainer::experiment::manifest::Manifest;
    let data = two_datasets();
    let text = format!(
        "{data}[evaluation.e]\nreference = \"all@thesis@b\"\n[[experiment]]\nname = \"x\"\nfeature_sets = [\"all\", \"all+pv\"]\ndata = [\"a\", \"b\"]\nval_data = \"b\"\nevaluation = \"e\"\narchs = [\"thesis\"]\n"
    );
    let m = Manifest::parse(&text, Path::new("m.toml")).unwrap();
    let e = &m.experiments[0];
    assert_eq!(
        e.entry_names(),
        [
            "all@thesis@a",
            "all@thesis@b",
            "all+pv@thesis@a",
            "all+pv@thesis@b"
        ]
    );
    let data_of: Vec<String> = e.entries().into_iter().map(|x| x.data.name).collect();
    assert_eq!(data_of, ["a", "b", "a", "b"]);
    assert_eq!(e.val_data.as_ref().map(|d| d.name.as_str()), Some("b"));
    let names: Vec<&str> = e.datasets().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    // One dataset keeps the plain names (and the cache keys of before).
    let one = text
        .replace("data = [\"a\", \"b\"]", "data = \"a\"")
        .replace("archs = [\"thesis\"]\n", "")
        .replace("all@thesis@b", "all");
    let m = Manifest::parse(&one, Path::new("m.toml")).unwrap();
    assert_eq!(m.experiments[0].entry_names(), ["all", "all+pv"]);
    for (from, to, needle) in [
        (
            "val_data = \"b\"",
            "val_data = \"c\"",
            "val_data: no [data.c]",
        ),
        (
            "data = [\"a\", \"b\"]",
            "data = [\"a\", \"a\"]",
            "data: 'a' is listed twice",
        ),
        (
            "data = [\"a\", \"b\"]",
            "data = []",
            "data: give a dataset's name",
        ),
        (
            "reference = \"all@thesis@b\"",
            "reference = \"all\"",
            "'all' is not a player",
        ),
    ] {
        let err = Manifest::parse(&text.replace(from, to), Path::new("m.toml"))
            .map(|_| ())
            .unwrap_err();
        let err = format!("{err:#}");
        assert!(err.contains(needle), "'{needle}' not in: {err}");
    }
}

/// An experiment over two generated datasets, one counted in positions and labelled by
/// Stockfish 15.1's network exported from Debian's `stockfish` (`label_net = "export:..."`),
/// the other in games and also the held-out set (`val_data`): each network trains on its own
/// dataset and both are scored on the same validation positions.
#[test]
fn networks_trained_on_different_datasets_are_scored_on_one_held_out_set() {
    let dir = tempfile::tempdir().unwrap();
    let book = shared().join("data/noob_3moves.epd");
    let manifest = dir.path().join("m.toml");
    let game = format!(
        "book = \"{}\", write_minply = 4, threads = 2",
        book.display()
    );
    std::fs::write(
        &manifest,
        format!(
            r#"
[data.p]
generate = {{ positions = 300, val_games = 1, nodes = 20, label = "static", label_net = "export:/usr/games/stockfish", skip_noisy = true, {game}, seed = 5 }}
[data.q]
generate = {{ games = 6, val_games = 4, nodes = 50, {game}, seed = 6 }}
[[experiment]]
name = "x"
feature_sets = ["all"]
data = ["p", "q"]
val_data = "q"
insight = false
l1 = 32
l2 = 8
batch_size = 256
epochs = 2
epoch_positions = 1000
val_positions = 400
runs = 1
"#
        ),
    )
    .unwrap();
    let out = dir.path().join("runs");
    let o = run_to_end(&manifest, &out);
    assert!(o.status.success(), "{}", text(&o));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("reports/x/report.json")).unwrap()).unwrap();
    let rows: Vec<&str> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["feature_set"].as_str().unwrap())
        .collect();
    assert_eq!(rows, ["all@p", "all@q"]);
    let datasets: Vec<(&str, &str)> = report["datasets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["name"].as_str().unwrap(), d["role"].as_str().unwrap()))
        .collect();
    assert_eq!(datasets, [("p", "train"), ("q", "train, val")]);
    // p: exactly the positions asked for, labelled with the exported network.
    let stage = |prefix: &str, root: &str| -> PathBuf {
        std::fs::read_dir(out.join(root))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
            .unwrap_or_else(|| panic!("no {root}/{prefix}*"))
    };
    let p = stage("p-", "data");
    let progress: serde_json::Value =
        serde_json::from_slice(&std::fs::read(p.join("train.binpack.progress")).unwrap()).unwrap();
    assert_eq!(progress["positions"], 300, "{progress}");
    let net = std::fs::metadata(p.join("label-net.nnue")).unwrap().len();
    assert_eq!(net, 47_001_499);
    // Both networks are scored on q's validation positions: the constant predictor's loss,
    // which depends on the validation set alone, is the same for both.
    let constant = |run: &str| -> f64 {
        let metrics = std::fs::read_to_string(stage(run, "train").join("metrics.jsonl")).unwrap();
        let last: serde_json::Value =
            serde_json::from_str(metrics.lines().last().unwrap()).unwrap();
        last["val_constant"].as_f64().unwrap()
    };
    let (vp, vq) = (constant("x-all_p-run1-"), constant("x-all_q-run1-"));
    assert_eq!(vp.to_bits(), vq.to_bits(), "{vp} vs {vq}");
    assert!(vp > 0.0);
}

/// A data ladder (`sweep = { train_positions = [...] }`): each rung trains on the first N
/// positions of one dataset (nested: the smaller rung's positions begin the larger's), every
/// rung's networks play the same fixed reference, `--check` lists the rungs and the ladder, the
/// ladder's report draws the curves, and a rerun computes nothing. Sizes beyond the dataset or
/// out of order are one-line errors naming the line.
#[test]
fn a_data_ladder_trains_on_nested_prefixes_and_draws_its_curves() {
    let dir = tempfile::tempdir().unwrap();
    let book = shared().join("data/noob_3moves.epd");
    let reference = shared().join("nets/thesis/h+v.nn");
    let manifest = dir.path().join("m.toml");
    let manifest_text = format!(
        r#"[data.p]
generate = {{ positions = 600, val_games = 2, nodes = 20, book = "{book}", write_minply = 4, threads = 0, seed = 7 }}
[evaluation.e]
reference = "h+v"
tournament = {{ rounds = 1, nodes = 100, openings = "{book}", concurrency = 0, players = ["{reference}"] }}
[[experiment]]
name = "ladder"
sweep = {{ train_positions = [200, 600] }}
feature_sets = ["all"]
data = "p"
evaluation = "e"
insight = false
l1 = 32
l2 = 8
batch_size = 128
epochs = 2
epoch_positions = 800
val_positions = 200
runs = 2
"#,
        book = book.display(),
        reference = reference.display(),
    );
    std::fs::write(&manifest, &manifest_text).unwrap();
    let o = trainer()
        .args(["run", "--check"])
        .arg(&manifest)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let listed = String::from_utf8_lossy(&o.stdout);
    assert!(
        listed.contains("ladder-200: 1 feature set(s) x 2 run(s)")
            && listed.contains("data the first 600 positions of p")
            && listed.contains("ladder: a data ladder of 2 rungs (200, 600 positions)"),
        "{listed}"
    );
    let out = dir.path().join("runs");
    let first = run_to_end(&manifest, &out);
    // The rungs: the first 200 and 600 positions of the dataset, in its order.
    let stage = |prefix: &str| -> PathBuf {
        std::fs::read_dir(out.join("data"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
            .unwrap_or_else(|| panic!("no data/{prefix}*"))
    };
    let read = |p: PathBuf| trainer::data::first_samples(&p, None, usize::MAX, None).unwrap();
    let whole = read(stage("p-").join("train.binpack"));
    let small = read(stage("p-first200-").join("train.binpack"));
    let large = read(stage("p-first600-").join("train.binpack"));
    assert_eq!(whole.len(), 600);
    assert_eq!(small, whole[..200]);
    assert_eq!(large, whole);
    // The ladder: one line per feature set, one column per rung, both pictures.
    let reports = out.join("reports/ladder");
    let md = std::fs::read_to_string(reports.join("ladder.md")).unwrap();
    assert!(md.contains("| feature set | 200 | 600 |"), "{md}");
    assert!(md.contains("## Elo against h+v"), "{md}");
    assert!(
        md.lines().filter(|l| l.starts_with("| all |")).count() == 3,
        "{md}"
    );
    for svg in ["ladder-loss.svg", "ladder-elo.svg"] {
        assert!(reports.join(svg).is_file(), "{svg}");
    }
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(reports.join("ladder.json")).unwrap()).unwrap();
    let points = json["lines"][0]["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    assert_eq!(points[1]["positions"], 600);
    assert_eq!(points[0]["runs"], 2);
    // Each rung's networks trained on their rung: the cells' training stages differ.
    let trained: Vec<String> = std::fs::read_dir(out.join("train"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(trained.len(), 4, "{trained:?}");
    assert!(text(&first).contains("ladder: "), "{}", text(&first));
    // A rerun reuses the dataset, every rung and the ladder: no stage folder's file is
    // written again.
    let before = stages::stage_files(&out);
    let again = run_to_end(&manifest, &out);
    let said = text(&again);
    assert_eq!(stages::stage_files(&out), before, "{said}");
    assert!(said.contains("(cached"), "{said}");
    assert_eq!(
        std::fs::read_to_string(reports.join("ladder.md")).unwrap(),
        md
    );

    let refused = |from: &str, to: &str| -> String {
        std::fs::write(&manifest, manifest_text.replace(from, to)).unwrap();
        let o = trainer()
            .args(["run", "--check"])
            .arg(&manifest)
            .output()
            .unwrap();
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr).trim().to_string();
        assert_eq!(err.lines().count(), 1, "{err}");
        err
    };
    let line = manifest_text
        .lines()
        .position(|l| l.starts_with("sweep"))
        .unwrap()
        + 1;
    for (to, needle) in [
        (
            "[600, 200]",
            "sweep.train_positions: 200 after 600: list a ladder's sizes from the smallest up",
        ),
        ("[200, 200]", "sweep.train_positions: 200 is listed twice"),
        (
            "[200, 601]",
            "train_positions: 601 is more than the 600 training positions of dataset 'p'",
        ),
        (
            "[0, 200]",
            "sweep.train_positions: 0 is not a positive number",
        ),
    ] {
        let err = refused("[200, 600]", to);
        assert!(err.contains(needle), "'{needle}' not in: {err}");
        assert!(
            err.contains(&format!("m.toml:{line}")),
            "line {line} not in: {err}"
        );
    }
}

/// A ladder whose schedule ends by itself and whose loss is measured where no epoch was
/// chosen: `passes` makes each rung's epoch cap proportional to its positions (the cosine
/// schedule reaches its floor there), the best epoch is chosen on the dataset's own validation
/// set, and every run's network is scored on `test_data` by `trainer score`'s yardstick, which
/// the ladder draws.
#[test]
fn a_ladder_with_passes_and_a_test_set_reports_losses_no_epoch_was_chosen_on() {
    let dir = tempfile::tempdir().unwrap();
    let book = shared().join("data/noob_3moves.epd");
    let manifest = dir.path().join("m.toml");
    let game = format!(
        "book = \"{}\", nodes = 20, write_minply = 4, threads = 0",
        book.display()
    );
    std::fs::write(
        &manifest,
        format!(
            r#"[data.p]
generate = {{ positions = 600, val_games = 2, {game}, seed = 7 }}
[data.t]
generate = {{ games = 1, val_games = 3, {game}, seed = 8 }}
[[experiment]]
name = "rungs"
sweep = {{ train_positions = [200, 600] }}
feature_sets = ["all"]
data = "p"
test_data = "t"
evaluation = "loss-only"
insight = false
l1 = 32
l2 = 8
batch_size = 100
passes = 2
epoch_positions = 100
lr_schedule = "cosine"
val_positions = 150
runs = 2
[evaluation.loss-only]
reference = "all"
"#
        ),
    )
    .unwrap();
    let out = dir.path().join("runs");
    let o = run_to_end(&manifest, &out);
    assert!(o.status.success(), "{}", text(&o));
    // Two passes over 200 and 600 positions in epochs of 100: 4 and 12 epochs.
    let report = |cell: &str| -> serde_json::Value {
        let path = out.join(format!("reports/{cell}/report.json"));
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    };
    let test_files: Vec<PathBuf> = std::fs::read_dir(out.join("data"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("t-"))
        .map(|p| p.join("val.binpack"))
        .collect();
    assert_eq!(test_files.len(), 1, "{test_files:?}");
    for (cell, epochs) in [("rungs-200", 4), ("rungs-600", 12)] {
        let r = report(cell);
        let runs = r["rows"][0]["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2);
        for run in runs {
            assert_eq!(run["val_losses"].as_array().unwrap().len(), epochs, "{run}");
            let test = run["test_loss"].as_f64().unwrap();
            // The same number `trainer score` prints for the network on the test set.
            let scored = trainer()
                .args(["score", "--positions", "150", "--data"])
                .arg(&test_files[0])
                .arg("--net")
                .arg(out.join(run["net"].as_str().unwrap()))
                .output()
                .unwrap();
            assert!(scored.status.success(), "{}", text(&scored));
            let printed = String::from_utf8_lossy(&scored.stdout);
            let row = printed.lines().last().unwrap();
            let loss: f64 = row.split('\t').nth(2).unwrap().parse().unwrap();
            assert!((loss - test).abs() < 5e-7, "{loss} vs {test}: {printed}");
        }
        let md = std::fs::read_to_string(out.join(format!("reports/{cell}/report.md"))).unwrap();
        assert!(md.contains("Test loss (mean ± sd of runs)"), "{md}");
        assert!(
            md.contains("- `t`: its validation set tests every run's network"),
            "{md}"
        );
        assert!(
            md.contains("2 passes over the data in epochs of 100 positions"),
            "{md}"
        );
    }
    let ladder = out.join("reports/rungs");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(ladder.join("ladder.json")).unwrap()).unwrap();
    assert_eq!(json["tested"], true, "{json}");
    let md = std::fs::read_to_string(ladder.join("ladder.md")).unwrap();
    assert!(md.contains("## Test loss"), "{md}");
    // Nothing is computed again on a rerun, the test losses included.
    let before = stages::stage_files(&out);
    let again = run_to_end(&manifest, &out);
    assert_eq!(stages::stage_files(&out), before, "{}", text(&again));
    assert_eq!(
        std::fs::read_to_string(ladder.join("ladder.md")).unwrap(),
        md
    );
}

/// Two runs of one manifest at once into one folder: each stage is computed by one of them
/// (the other waits for its lock, then finds it done), and both end with the same report.
#[test]
fn two_runs_at_once_share_their_stages_without_corrupting_them() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = tiny_manifest(dir.path());
    let out = dir.path().join("runs");
    let start = || {
        trainer()
            .args(["run", "--no-progress", "--out"])
            .arg(&out)
            .arg(&manifest)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (start(), start());
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert!(a.status.success(), "{}", text(&a));
    assert!(b.status.success(), "{}", text(&b));
    let both = text(&a) + &text(&b);
    // The data were generated once: one run announced the generation, the other found them.
    assert_eq!(
        both.matches("generating 40 games of training data").count(),
        1,
        "{both}"
    );
    assert_eq!(
        String::from_utf8_lossy(&a.stdout),
        String::from_utf8_lossy(&b.stdout)
    );
}

/// The run as a graph of stages: the datasets first (one stage for a dataset two experiments
/// read), then each experiment's training runs (after their data, and after the run of the
/// `init_from` source they start from: only those runs), its evaluations after all of them,
/// its report last.
#[test]
fn a_run_is_a_graph_of_stages_each_after_those_it_reads() {
    use trainer::experiment::manifest::Manifest;
    use trainer::experiment::stages::graph;
    let data = two_datasets();
    let text = format!(
        "{data}[evaluation.e]\nreference = \"all\"\n[[experiment]]\nname = \"src\"\nfeature_sets = [\"all\", \"all+pv\"]\ndata = \"a\"\nruns = 2\n[[experiment]]\nname = \"x\"\nfeature_sets = [\"all\"]\ndata = \"a\"\nval_data = \"b\"\ninit_from = \"src\"\nruns = 1\nevaluation = \"e\"\n"
    );
    let m = Manifest::parse(&text, Path::new("m.toml")).unwrap();
    let x = m.select(&["x".to_string()]).unwrap();
    let g = graph(&m, &x).unwrap();
    let ids: Vec<String> = g.iter().map(|s| s.id.to_string()).collect();
    assert_eq!(
        ids,
        [
            "data:a",
            "data:b",
            "train:src:all:1",
            "train:x:all:1",
            "eval:x:e",
            "report:x"
        ]
    );
    let needs: Vec<Vec<usize>> = g.iter().map(|s| s.needs.clone()).collect();
    assert_eq!(
        needs,
        [vec![], vec![], vec![0], vec![0, 1, 2], vec![3], vec![3, 4]]
    );
    // Both experiments: src's four runs, one stage for the dataset both read.
    let both = m.select(&[]).unwrap();
    let ids: Vec<String> = graph(&m, &both)
        .unwrap()
        .iter()
        .map(|s| s.id.to_string())
        .collect();
    assert_eq!(ids.iter().filter(|i| i.starts_with("data:")).count(), 2);
    assert_eq!(
        ids.iter().filter(|i| i.starts_with("train:src:")).count(),
        4
    );
    assert_eq!(ids.len(), 2 + 4 + 1 + 1 + 1 + 1);

    // A data ladder: its rungs, then the ladder after every rung's report; a ladder whose
    // rungs are not all selected is not drawn, and a sweep over another key is no ladder.
    let ladder = format!(
        "{data}[[experiment]]\nname = \"l\"\nsweep = {{ train_positions = [10, 20] }}\nfeature_sets = [\"all\"]\ndata = \"a\"\nruns = 1\n[[experiment]]\nname = \"w\"\nsweep = {{ l1 = [32, 64] }}\nfeature_sets = [\"all\"]\ndata = \"a\"\nruns = 1\n"
    );
    let m = Manifest::parse(&ladder, Path::new("m.toml")).unwrap();
    assert_eq!(m.ladders(), ["l"]);
    let g = graph(&m, &m.select(&["l".to_string()]).unwrap()).unwrap();
    let ids: Vec<String> = g.iter().map(|s| s.id.to_string()).collect();
    assert_eq!(
        ids,
        [
            "data:a",
            "train:l-10:all:1",
            "report:l-10",
            "train:l-20:all:1",
            "report:l-20",
            "ladder:l"
        ]
    );
    assert_eq!(g[5].needs, [2, 4]);
    let one = graph(&m, &m.select(&["l-20".to_string()]).unwrap()).unwrap();
    assert!(one.iter().all(|s| !s.id.to_string().starts_with("ladder:")));
}
