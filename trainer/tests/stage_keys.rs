//! Stage keys, pinned in golden files: one stage of each kind made from fixed inputs
//! (`tests/data/stage-keys.golden`), and every generated dataset's, ladder rung's and training
//! run's folder of the repository's own `experiments.toml` as the manifest alone decides it
//! (`tests/data/experiments-stage-folders.golden`). An accidental change of a key (a setting
//! serialized differently, a new field in a run's identity, a path where a file's contents
//! belonged) fails here, so that nobody's finished stages are silently orphaned; a deliberate
//! one is a visible edit of a golden file (rerun with `UPDATE_GOLDEN=1`).

#[path = "common/paths.rs"]
mod paths;

use std::path::{Path, PathBuf};

use trainer::experiment::manifest::{DataSource, Manifest};
use trainer::experiment::stage_key::StageKey;
use trainer::experiment::stages::planned_folders;
use trainer::train::config::{DataFile, TrainConfig};
use trainer::train::settings::TrainSettings;

/// Asserts that `made` is the golden file `name` of `tests/data` (written first when
/// `UPDATE_GOLDEN` is set).
fn assert_golden(name: &str, made: &str) {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&golden, made).unwrap();
    }
    let want = std::fs::read_to_string(&golden).unwrap();
    assert_eq!(
        made,
        want,
        "stage keys changed: if deliberately, rerun with UPDATE_GOLDEN=1 and commit {}",
        golden.display()
    );
}

/// One stage of each kind from fixed inputs, as `KIND/NAME-KEY` lines, with the output folder
/// `out`. Every input file is one of fixed contents (keys hash what a file holds, not where it
/// lies).
fn fixed_keys(out: &Path) -> String {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input.binpack");
    std::fs::write(&input, "the fixed input of the stage keys' test\n").unwrap();
    let sample = input.display().to_string();
    let networks = vec![
        ("a".to_string(), "00112233aabbccdd".to_string()),
        ("b".to_string(), "44556677eeff0011".to_string()),
    ];
    let manifest = Manifest::parse(
        &format!(
            r#"
[data.d]
generate = {{ positions = 1000, val_games = 2, nodes = 100, book = "{sample}", net = "{sample}", label = "qsearch", seed = 5, threads = 2, write_minply = 16 }}

[evaluation.v]
tournament = {{ rounds = 4, nodes = 300, openings = "{sample}", players = ["{sample}", "name=sf,cmd=stockfish"] }}
puzzles = {{ file = "{sample}", count = 20, nodes = 300 }}
speed = {{ depth = 4 }}

[[experiment]]
name = "e"
feature_sets = ["all+pv"]
data = "d"
evaluation = "v"
"#
        ),
        Path::new("m.toml"),
    )
    .unwrap();
    let DataSource::Generate(generate) = &manifest.dataset("d").unwrap().source else {
        panic!("a generated dataset");
    };
    let ev = &manifest.experiment("e").unwrap().evaluations[0];
    let rung = out.join("data/d-0123/train.binpack");
    let config = TrainConfig::new(
        &TrainSettings::default(),
        "all+pv",
        1920,
        (
            DataFile::all(std::slice::from_ref(&rung), None).unwrap(),
            DataFile::all(&[PathBuf::from(&sample)], None).unwrap(),
        ),
        nnue::units::ScoreUnits::Centipawns,
    );
    let tournament = ev.tournament.as_ref().unwrap();
    let keys = [
        ("d", StageKey::data(generate, out).unwrap()),
        (
            "d-first1000",
            StageKey::first_positions(&[rung], 1000, out).unwrap(),
        ),
        (
            "e-all+pv-run1",
            StageKey::train(&config, vec!["pv:1:7".to_string()], out).unwrap(),
        ),
        ("e", StageKey::speed(&networks, ev.speed.as_ref().unwrap())),
        (
            "e",
            StageKey::tournament(tournament, &networks, Some("a"), out).unwrap(),
        ),
        (
            "a",
            StageKey::puzzles(ev.puzzles.as_ref().unwrap(), &networks[0].1, out).unwrap(),
        ),
    ];
    keys.iter()
        .map(|(name, k)| {
            let dir = k.dir(out, name);
            format!("{}\n", dir.strip_prefix(out).unwrap().display())
        })
        .collect()
}

#[test]
fn the_keys_of_fixed_inputs_are_the_golden_ones() {
    let made = fixed_keys(Path::new("/some/out"));
    assert_golden("stage-keys.golden", &made);
    assert_eq!(made.lines().count(), 6);
    // Where the output folder lies changes no key.
    assert_eq!(fixed_keys(Path::new("/elsewhere")), made);
}

/// `STAGE KIND/NAME-KEY` of every planned folder of `manifest` with the output folder `out`.
fn folders(manifest: &Manifest, out: &Path) -> String {
    let selected = manifest.select(&[]).unwrap();
    let registry = paths::registry();
    planned_folders(manifest, &registry, &selected, out)
        .unwrap()
        .iter()
        .map(|p| {
            format!(
                "{} {}\n",
                p.name,
                p.dir.strip_prefix(out).unwrap().display()
            )
        })
        .collect()
}

#[test]
fn the_repositorys_stage_folders_are_the_golden_ones() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let manifest = Manifest::load(&root.join("experiments.toml")).unwrap();
    let made = folders(&manifest, Path::new("/runs"));
    assert_golden("experiments-stage-folders.golden", &made);
    // Every kind the manifest has is pinned, and no folder twice.
    for kind in ["data:", "train:", " rung "] {
        assert!(made.contains(kind), "no {kind} folder planned");
    }
    let mut seen: Vec<&str> = made
        .lines()
        .map(|l| l.rsplit(' ').next().unwrap())
        .collect();
    let n = seen.len();
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), n, "a folder planned twice");

    // The same manifest loaded from another place (its paths resolved elsewhere, its output
    // folder elsewhere) plans the same folders: keys hold files by content, not by path.
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("experiments.toml");
    let text = std::fs::read_to_string(root.join("experiments.toml")).unwrap();
    let shared = paths::shared();
    std::fs::write(
        &copy,
        text.replace("\"../shared/", &format!("\"{}/", shared.display())),
    )
    .unwrap();
    let moved = Manifest::load(&copy).unwrap();
    assert_eq!(folders(&moved, Path::new("/elsewhere/runs")), made);
}
