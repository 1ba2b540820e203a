//! `trainer stats`, `trainer wdl-fit` and `trainer load` on generated data.

use std::path::Path;
use std::process::Command;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use trainer::data::synthetic::random_games;
use trainer::data::{self, Format, Sample};

fn write(path: &Path, format: Format, samples: &[Sample]) {
    let mut w = data::create_writer(path, format).unwrap();
    for s in samples {
        w.write(s).unwrap();
    }
    w.finish().unwrap();
}

fn trainer(args: &[&str]) -> (bool, String, String) {
    let plugins = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let out = Command::new(env!("CARGO_BIN_EXE_trainer"))
        .arg("--plugin-dir")
        .arg(plugins)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The number after `key` in `text`.
fn number_after(text: &str, key: &str) -> f64 {
    let rest = &text[text
        .find(key)
        .unwrap_or_else(|| panic!("no '{key}' in {text}"))
        + key.len()..];
    rest.split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
fn stats_counts_positions_games_and_dead_features() {
    let dir = tempfile::tempdir().unwrap();
    let samples: Vec<Sample> = random_games(31).take(6000).collect();
    let games = 1 + samples.windows(2).filter(|w| w[1].ply <= w[0].ply).count();
    let path = dir.path().join("d.binpack");
    write(&path, Format::Binpack, &samples);
    let plots = dir.path().join("plots");
    let tsv = dir.path().join("act.tsv");
    let (ok, out, err) = trainer(&[
        "stats",
        "--in",
        path.to_str().unwrap(),
        "--spec",
        "all+ph",
        "--plots",
        plots.to_str().unwrap(),
        "--activations",
        tsv.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    assert_eq!(number_after(&out, "\npositions "), 6000.0);
    assert_eq!(number_after(&out, "\ngames "), games as f64);
    // Pawns never stand on the first or last rank: at least 2 ranks × 8 files × 2 colours of the
    // `all` block's pawn indices are dead.
    let all_line = out
        .lines()
        .find(|l| l.trim_start().starts_with("all "))
        .unwrap();
    let fields: Vec<&str> = all_line.split_whitespace().collect();
    assert_eq!(fields[1], "768");
    assert!(fields[2].parse::<u32>().unwrap() >= 32, "{all_line}");
    assert!(out.contains("mobility |M| per role"));
    for chart in ["score", "ply", "pieces", "mobility", "features"] {
        let svg = std::fs::read_to_string(plots.join(format!("{chart}.svg"))).unwrap();
        assert!(svg.starts_with("<svg"), "{chart}");
    }
    let tsv = std::fs::read_to_string(&tsv).unwrap();
    assert_eq!(tsv.lines().count(), 1 + 768 + 1152);
    // all index 6 (own rook a1) is active in about half the views or more early on.
    let a1_rook: u64 = tsv
        .lines()
        .nth(7)
        .unwrap()
        .split('\t')
        .nth(3)
        .unwrap()
        .parse()
        .unwrap();
    assert!(a1_rook > 0);

    // Filters apply to stats too, and are reported.
    let (ok, out, _) = trainer(&["stats", "--in", path.to_str().unwrap(), "--quiet"]);
    assert!(ok);
    assert!(
        out.contains("in check") && out.contains("filtered"),
        "{out}"
    );
    assert!(number_after(&out, "\npositions ") < 6000.0);
}

#[test]
fn wdl_fit_recovers_the_model_behind_the_results() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (1.28, 297.21);
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let samples: Vec<Sample> = random_games(32)
        .take(200_000)
        .map(|s| {
            let score: i16 = rng.random_range(-1200..=1200);
            let p = 1.0 / (1.0 + (-(f64::from(score) - a) / b).exp());
            let result = if rng.random::<f64>() < p { 1 } else { -1 };
            Sample {
                score,
                result: Some(result),
                ..s
            }
        })
        .collect();
    let path = dir.path().join("w.bin");
    write(&path, Format::Bin, &samples);
    // Scores in centipawns, as this project writes them (a `.bin` without a record would be
    // read as Stockfish's internal units).
    trainer::data::score_units::record(&path, nnue::units::ScoreUnits::Centipawns).unwrap();
    let svg = dir.path().join("wdl.svg");
    let (ok, out, err) = trainer(&[
        "wdl-fit",
        "--in",
        path.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    let (fa, fb) = (number_after(&out, "a = "), number_after(&out, "b = "));
    let (sa, sb) = (
        number_after(&out, &format!("a = {fa:.2} ± ")),
        number_after(&out, &format!("b = {fb:.2} ± ")),
    );
    assert!((fa - a).abs() < 4.0 * sa, "{out}");
    assert!((fb - b).abs() < 4.0 * sb, "{out}");
    assert!(
        std::fs::read_to_string(&svg)
            .unwrap()
            .contains("fitted sigmoid")
    );

    // Text data has no results: a clear error.
    let text = dir.path().join("t.txt");
    write(&text, Format::Text, &samples[..100]);
    let (ok, out, err) = trainer(&["wdl-fit", "--in", text.to_str().unwrap()]);
    assert!(!ok);
    assert!(out.contains("100 positions have no game result"), "{out}");
    assert!(err.contains("no samples with a game result"), "{err}");
}

#[test]
fn load_reports_throughput() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("l.binpack");
    write(
        &path,
        Format::Binpack,
        &random_games(33).take(5000).collect::<Vec<_>>(),
    );
    let (ok, out, err) = trainer(&[
        "load",
        "--in",
        path.to_str().unwrap(),
        "--spec",
        "all+ph+pv",
        "--batch-size",
        "1000",
        "--quiet",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("read 5000 positions"), "{out}");
    assert!(out.contains("positions/s per thread"), "{out}");
}

/// Hostile inputs end with clean lines in bounded time and memory: a "text" file without line
/// breaks (`/dev/zero`) under either error policy, and an absurd thread count.
#[test]
fn endless_lines_and_absurd_thread_counts_end_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.txt");
    for policy in ["skip", "fail"] {
        let (ok, _, err) = trainer(&[
            "convert",
            "--in",
            "/dev/zero",
            "--in-format",
            "text",
            "--out",
            out.to_str().unwrap(),
            "--on-error",
            policy,
        ]);
        assert_eq!(ok, policy == "skip", "{policy}: {err}");
        assert!(
            err.contains("/dev/zero:1: syntax error: line longer than 1048576 bytes"),
            "{policy}: {err}"
        );
        assert!(err.lines().all(|l| l.len() < 200), "{policy}: {err}");
    }
    let (ok, _, err) = trainer(&[
        "load",
        "--in",
        "/dev/null",
        "--spec",
        "all",
        "--threads",
        "100000",
    ]);
    assert!(!ok);
    // clap's usage error: the first line says it all; the rest is its pointer to --help.
    let first = err.lines().next().unwrap_or("");
    assert!(
        first.contains("100000 threads is more than the 1024"),
        "{err}"
    );
}
