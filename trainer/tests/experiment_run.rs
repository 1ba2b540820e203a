//! `trainer run` as a program on a tiny manifest: self-play data, two feature sets trained,
//! a tournament played by the real `host` binary, puzzles, and a report; a rerun finds every
//! stage cached; runs killed with SIGKILL in the middle of training and of the tournament finish
//! on the next invocation with the results of an uninterrupted run; bad manifests are one-line
//! errors naming the file, the line and the key.

#[path = "common/browser.rs"]
mod browser;
#[path = "common/paths.rs"]
mod paths;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use paths::{shared, target_dir};
use std::process::{Command, Output, Stdio};

fn trainer() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_trainer"));
    c.arg("--plugin-dir").arg(paths::plugin_dir());
    c
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
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
puzzles = {{ file = "{puzzles}", count = 20, nodes = 300, threads = 2 }}

[evaluation.f]
tournament = {{ rounds = 3, nodes = 200, openings = "{book}", concurrency = 2, pairs = [["all", "all+pv"]] }}
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

fn run_to_end(manifest: &Path, out: &Path) -> Output {
    let o = trainer()
        .args(["run", "--no-progress", "--out"])
        .arg(out)
        .arg(manifest)
        .output()
        .unwrap();
    assert!(o.status.success(), "trainer run failed:\n{}", text(&o));
    o
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

    // Uninterrupted.
    let clean = dir.path().join("clean");
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

    // A rerun redoes nothing.
    let again = text(&run_to_end(&manifest, &clean));
    assert_eq!(again.matches("(cached").count(), 8, "{again}");
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

#[test]
fn bad_manifests_name_the_file_the_line_and_the_key() {
    let data = format!(
        "[data.d]\ntrain = [\"{0}\"]\nval = [\"{0}\"]\n",
        shared().join("data/puzzles.csv").display()
    );
    let ok =
        format!("{data}[[experiment]]\nname = \"x\"\nfeature_sets = [\"all\"]\ndata = \"d\"\n");
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

    let tournament_without_limit = format!(
        "{data}[evaluation.e]\ntournament = {{ rounds = 1, openings = \"{}\" }}\n[[experiment]]\nname = \"x\"\nfeature_sets = [\"all\"]\ndata = \"d\"\nevaluation = \"e\"\n",
        shared().join("data/noob_3moves.epd").display()
    );
    // (manifest, what the one-line error must say)
    let cases = [
        (format!("{ok}lrr = 0.1\n"), vec!["m.toml:8", "lrr"]),
        (format!("{ok}l2 = \"wide\"\n"), vec!["m.toml:8: l2:"]),
        (format!("{ok}insight = \"yes\"\n"), vec!["m.toml:8: insight:"]),
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
            tournament_without_limit,
            vec!["m.toml:5", "exactly one of nodes"],
        ),
        // What the stages would refuse later is refused here, with the stage's own limits.
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
            vec!["m.toml:5", "min_ply", "max_ply 10"],
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
    ];
    for (manifest, needles) in cases {
        let err = check(&manifest);
        for needle in needles {
            assert!(err.contains(needle), "'{needle}' not in: {err}");
        }
    }
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
    assert_eq!(entries[1].settings.shape(768).arch(), nnue::Arch::sfnnv5());
    assert_eq!(entries[2].settings.shape(768).arch().stacks, 2);
    assert!(entries[0].settings.shape(768).arch().is_thesis());
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
