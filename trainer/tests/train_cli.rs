//! `trainer train`, `trainer export` and `trainer quant-report` as programs: a run killed with
//! SIGKILL or aborted in the middle of an epoch resumes to the state of an uninterrupted run; the
//! exported network loads in host; the report prints its statistics.

mod common;
#[path = "common/output.rs"]
mod output;
#[path = "common/paths.rs"]
mod paths;
use common::{assert_same_end, fingerprint};
use output::text;
use paths::{plugin_dir, registry};

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use nnue::{Nnue, WeightType};
use trainer::data::synthetic::random_games;
use trainer::data::{self, Format, Sample};

fn trainer() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_trainer"));
    c.arg("--plugin-dir").arg(plugin_dir());
    c
}

fn run<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    trainer().args(args).output().unwrap()
}

/// Writes `samples` (scores in centipawns, as this project writes them) as a binpack, with the
/// record of its units.
fn write(path: &Path, samples: &[Sample]) {
    let mut w = data::create_writer(path, Format::Binpack).unwrap();
    for s in samples {
        w.write(s).unwrap();
    }
    w.finish().unwrap();
    data::score_units::record(path, nnue::units::ScoreUnits::Centipawns).unwrap();
}

struct RunFiles {
    dir: tempfile::TempDir,
    train: String,
    val: String,
    test: String,
}

fn files() -> RunFiles {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let (train, val, test) = (p("train.binpack"), p("val.binpack"), p("test.binpack"));
    write(
        Path::new(&train),
        &random_games(21).take(40_000).collect::<Vec<_>>(),
    );
    write(
        Path::new(&val),
        &random_games(22).take(5000).collect::<Vec<_>>(),
    );
    write(
        Path::new(&test),
        &random_games(23).take(12_000).collect::<Vec<_>>(),
    );
    RunFiles {
        dir,
        train,
        val,
        test,
    }
}

/// The arguments of a small run writing to `out`.
fn train_args(f: &RunFiles, out: &Path, epochs: u64, steps: u64) -> Vec<String> {
    [
        "train",
        "--spec",
        "all",
        "--l1",
        "64",
        "--l2",
        "16",
        "--in",
        &f.train,
        "--val",
        &f.val,
        "--val-size",
        "3000",
        "--epochs",
        &epochs.to_string(),
        "--epoch-size",
        &(steps * 1024).to_string(),
        "--batch-size",
        "1024",
        "--lr",
        "2e-3",
        "--shuffle",
        "8192",
        "--seed",
        "3",
        "--no-progress",
        "--out",
        out.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

#[test]
fn train_export_and_report_from_the_command_line() {
    let f = files();
    let out = f.dir.path().join("run");
    let o = run(&train_args(&f, &out, 4, 16));
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("epoch 4/4") && t.contains("constant predictor"),
        "{t}"
    );

    let ckpt = out.join("checkpoint.ckpt");
    let net = f.dir.path().join("exported.nnue");
    let o = run(&[
        "export",
        "--checkpoint",
        ckpt.to_str().unwrap(),
        "--data",
        &f.val,
        "--calibration",
        "3000",
        "--out",
        net.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    // Calibrated on the same validation positions as the training loop's export: same bytes.
    assert!(
        std::fs::read(&net).unwrap() == std::fs::read(out.join("nets/epoch-0004.nnue")).unwrap(),
        "export differs from the training loop's"
    );
    let registry = registry();
    let nnue = Nnue::load(&net, &registry).unwrap();
    assert_eq!(nnue.features().name(), "all");

    let report_dir = f.dir.path().join("report");
    let o = run(&[
        "quant-report",
        "--checkpoint",
        ckpt.to_str().unwrap(),
        "--net",
        net.to_str().unwrap(),
        "--data",
        &f.test,
        "--positions",
        "5000",
        "--out",
        report_dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("5000 positions") && t.contains("p50"), "{t}");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(report_dir.join("quant-report.json")).unwrap())
            .unwrap();
    let median = json["abs_percentiles"][0][1].as_f64().unwrap();
    assert!(median < 10.0, "median quantization error {median}: {t}");
    assert!(report_dir.join("quant-error.svg").exists());

    // A bad device is refused with a clear message.
    let mut args = train_args(&f, &f.dir.path().join("x"), 1, 1);
    args.extend(["--device".to_string(), "tpu".to_string()]);
    let o = run(&args);
    assert!(!o.status.success());
    assert!(text(&o).contains("unknown device 'tpu'"), "{}", text(&o));
}

#[test]
fn i8_blocks_are_exported_as_i8_and_a_stray_name_is_refused() {
    let f = files();
    let out = f.dir.path().join("narrow");
    let mut args = train_args(&f, &out, 1, 8);
    let spec = args.iter().position(|a| a == "--spec").unwrap() + 1;
    args[spec] = "all+h".into();
    args.extend(["--i8-blocks".to_string(), "h".to_string()]);
    let o = run(&args);
    assert!(o.status.success(), "{}", text(&o));
    let registry = registry();
    let nnue = Nnue::load(&out.join("nets/epoch-0001.nnue"), &registry).unwrap();
    let net = nnue.network();
    let types: Vec<WeightType> = net.blocks().iter().map(|b| b.weight_type).collect();
    assert_eq!(types, [WeightType::I16, WeightType::I8]);
    assert_eq!(net.w1().weight_type(768), WeightType::I8);
    let h = net.blocks()[1].size as usize;
    assert_eq!(net.w1().bytes(), (768 * 2 + h) * 64);

    let mut args = train_args(&f, &f.dir.path().join("stray"), 1, 1);
    args.extend(["--i8-blocks".to_string(), "nosuch".to_string()]);
    let o = run(&args);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr).trim().to_string();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("i8_blocks: ") && err.contains("nosuch"),
        "{err}"
    );
}

/// `--arch sfnnv16` trains the rows in the types Stockfish stores (threat and pair rows `i8`)
/// without being told, so the network converts to Stockfish's format and loads back with the
/// same values; `--i8-blocks none` keeps every row `i16`, and the conversion's refusal names
/// the option.
#[test]
fn todays_shape_is_exportable_to_stockfishs_format_by_default() {
    let f = files();
    let train_today = |name: &str, extra: &[&str]| {
        let out = f.dir.path().join(name);
        let mut args = train_args(&f, &out, 1, 2);
        let at = |key: &str| args.iter().position(|a| a == key).unwrap() + 1;
        let (spec, l1) = (at("--spec"), at("--l1"));
        args[spec] = "halfka_v2_hm+full_threats+pp_3wide".into();
        args[l1] = "64".into();
        args.extend(["--arch", "sfnnv16"].iter().map(|s| s.to_string()));
        args.extend(extra.iter().map(|s| s.to_string()));
        let o = run(&args);
        assert!(o.status.success(), "{}", text(&o));
        Nnue::load(&out.join("nets/epoch-0001.nnue"), &registry()).unwrap()
    };
    let nnue = train_today("today", &[]);
    let net = nnue.network();
    let types: Vec<WeightType> = net.blocks().iter().map(|b| b.weight_type).collect();
    assert_eq!(types, [WeightType::I16, WeightType::I8, WeightType::I8]);
    let bytes = nnue::encode(&net, nnue::NetFormat::Stockfish, None).unwrap();
    let path = f.dir.path().join("today.nnue");
    std::fs::write(&path, &bytes).unwrap();
    let back = Nnue::load(&path, &registry()).unwrap();
    assert!(
        back.network().w1() == net.w1(),
        "the first layer changed on the way"
    );

    let wide = train_today("wide", &["--i8-blocks", "none"]);
    let types: Vec<WeightType> = wide
        .network()
        .blocks()
        .iter()
        .map(|b| b.weight_type)
        .collect();
    assert_eq!(types, [WeightType::I16; 3]);
    let refused = nnue::encode(&wide.network(), nnue::NetFormat::Stockfish, None)
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("--i8-blocks full_threats,pp_3wide")
            && refused.contains("trainer train --arch sfnnv16"),
        "{refused}"
    );
}

/// A network learns its data's score units: the data's record says centipawns, another tool's
/// binpack without one Stockfish's internal units (inferred), and `--score-units` overrides both
/// with a one-line warning where it disagrees; the exported network (and `trainer export`'s)
/// records the units the run read, so the engine reads its output in them.
#[test]
fn networks_record_the_score_units_of_their_data() {
    let f = files();
    let units_of = |path: &Path| {
        Nnue::load(path, &registry())
            .unwrap()
            .network()
            .units()
            .to_string()
    };
    let out = f.dir.path().join("sf-units");
    let mut args = train_args(&f, &out, 1, 2);
    args.extend(["--score-units", "stockfish"].map(String::from));
    let o = run(&args);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(units_of(&out.join("nets/epoch-0001.nnue")), "stockfish");
    let warning = "warning: the training data's scores are in centipawns, but score_units says Stockfish 15.1's internal units";
    assert_eq!(
        String::from_utf8_lossy(&o.stderr)
            .lines()
            .filter(|l| l.starts_with(warning))
            .count(),
        1,
        "{}",
        text(&o)
    );
    let exported = f.dir.path().join("exported.nnue");
    let o = run(&[
        "export".as_ref(),
        "--checkpoint".as_ref(),
        out.join("checkpoint.ckpt").as_os_str(),
        "--out".as_ref(),
        exported.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(units_of(&exported), "stockfish");
    let plain = f.dir.path().join("plain");
    let o = run(&train_args(&f, &plain, 1, 2));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(units_of(&plain.join("nets/epoch-0001.nnue")), "centipawns");
    assert!(!String::from_utf8_lossy(&o.stderr).contains("warning: the training data"));
    // The same binpack without its record, as another tool writes one: Stockfish's units.
    std::fs::remove_file(data::score_units::record_path(Path::new(&f.train))).unwrap();
    let inferred = f.dir.path().join("inferred");
    let o = run(&train_args(&f, &inferred, 1, 2));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        units_of(&inferred.join("nets/epoch-0001.nnue")),
        "stockfish"
    );
    let bad = run(&[
        train_args(&f, &plain, 1, 2),
        vec!["--score-units".into(), "pawns".into()],
    ]
    .concat());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        !bad.status.success() && err.contains("unknown score units 'pawns'"),
        "{err}"
    );
}

#[test]
fn killed_runs_resume_to_the_uninterrupted_state() {
    let f = files();
    let (epochs, steps) = (3, 24);
    let whole = f.dir.path().join("whole");
    let args = train_args(&f, &whole, epochs, steps);
    let o = run(&args);
    assert!(o.status.success(), "{}", text(&o));
    let expected = fingerprint(&whole.join("checkpoint.ckpt"));

    // Aborted (no clean-up at all) in the middle of the second epoch.
    let aborted = f.dir.path().join("aborted");
    let mut args = train_args(&f, &aborted, epochs, steps);
    args.extend(["--abort-after-steps".into(), (steps + 5).to_string()]);
    let o = run(&args);
    assert!(!o.status.success(), "{}", text(&o));
    assert_eq!(fingerprint(&aborted.join("checkpoint.ckpt")).0.epoch, 1);
    let mut args = train_args(&f, &aborted, epochs, steps);
    args.push("--resume".into());
    let o = run(&args);
    assert!(o.status.success(), "{}", text(&o));
    let resumed = fingerprint(&aborted.join("checkpoint.ckpt"));
    assert_same_end(&expected, &resumed, "the aborted run resumed");

    // Killed with SIGKILL as soon as the first checkpoint appears (so during the second epoch,
    // or while writing its files), then resumed, possibly several times.
    let killed = f.dir.path().join("killed");
    let ckpt = killed.join("checkpoint.ckpt");
    let mut child = trainer()
        .args(train_args(&f, &killed, epochs, steps))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !ckpt.exists() && start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(2));
    }
    let was_running = child.try_wait().unwrap().is_none();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(was_running, "the run ended before it could be killed");
    let at_kill = fingerprint(&ckpt).0.epoch;
    assert!(at_kill < epochs, "killed after {at_kill} epochs");
    let mut args = train_args(&f, &killed, epochs, steps);
    args.push("--resume".into());
    let o = run(&args);
    assert!(o.status.success(), "{}", text(&o));
    let resumed = fingerprint(&ckpt);
    assert_same_end(&expected, &resumed, "the killed run resumed");
    assert!(
        std::fs::read(whole.join("nets/epoch-0003.nnue")).unwrap()
            == std::fs::read(killed.join("nets/epoch-0003.nnue")).unwrap(),
        "exported networks differ"
    );
}

/// A value the settings' types refuse is one line naming the option and the limit, before any
/// file is read; so is a missing option.
#[test]
fn bad_settings_are_one_line_errors() {
    // `trainer train --spec all OPTIONS --in a --val b --out c`.
    let with = |options: &[&'static str]| -> Vec<&'static str> {
        [
            &["train", "--spec", "all"],
            options,
            &["--in", "a", "--val", "b", "--out", "c"],
        ]
        .concat()
    };
    for (args, needle) in [
        (with(&["--l1", "100"]), "multiple of 32"),
        (with(&["--gamma", "1.5"]), "between 0 and 1"),
        (vec!["train", "--spec", "all"], "--in <FILE>"),
        (with(&["--patience", "0"]), "--patience"),
        (with(&["--lr-schedule", "linear"]), "--lr-schedule"),
        (
            with(&["--weight-decay", "0.1"]),
            "weight_decay: only the adamw optimizer",
        ),
        (
            with(&["--method", "pqr", "--lambda-end", "0.5"]),
            "lambda_end: only the score method",
        ),
        (
            with(&["--epochs", "10", "--swa-from", "11"]),
            "swa_from: epoch 11 is after the last epoch (10)",
        ),
    ] {
        let o = run(&args);
        assert!(!o.status.success(), "{args:?} accepted");
        let err = String::from_utf8_lossy(&o.stderr).trim().to_string();
        assert_eq!(err.lines().count(), 1, "{args:?}: not one line: {err}");
        assert!(
            err.starts_with("error: ") && err.contains(needle),
            "{args:?}: {err}"
        );
    }
}

/// The field's recipe is on the command line: every setting of it is listed by `--help`.
#[test]
fn the_recipe_settings_are_options() {
    let o = run(&["train", "--help"]);
    assert!(o.status.success(), "{}", text(&o));
    let help = String::from_utf8_lossy(&o.stdout);
    for option in [
        "--optimizer",
        "adamw",
        "--weight-decay",
        "--lr-schedule",
        "one-cycle",
        "--lr-floor",
        "--warmup-steps",
        "--lambda-end",
        "--max-grad-norm",
        "--patience",
        "--min-delta",
        "--swa-from",
        "--wdl-skip",
        "--early-skip-ply",
        "--piece-count-skip",
    ] {
        assert!(
            help.contains(option),
            "{option} missing from --help:\n{help}"
        );
    }
}

#[test]
fn a_product_too_large_for_a_network_is_refused_before_any_allocation() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let (train_file, val_file) = paths::stockfish_sample();
    let o = run(&[
        "train",
        "--spec",
        "halfkp*kr",
        "--in",
        train_file.to_str().unwrap(),
        "--val",
        val_file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr).trim().to_string();
    assert_eq!(
        err,
        "error: the network of 'halfkp*kr' is too large: its number of features N = 110764800 is not between 1 and 16777216"
    );
    assert!(!out.exists(), "nothing written");
}

/// `trainer bench` steps the optimizer it is asked for, mapped to Adam's settings by the one
/// mapping training uses: the header names it and the last step's loss (deterministic on the
/// CPU) tells the optimizers apart, while the same optimizer twice computes the same.
#[test]
fn bench_times_the_optimizer_it_is_asked_for() {
    let bench = |optimizer: &str| -> (String, String) {
        let o = run(&[
            "bench",
            "--spec",
            "all",
            "--l1",
            "64",
            "--l2",
            "8",
            "--batch-size",
            "256",
            "--steps",
            "3",
            "--warmup",
            "2",
            "--optimizer",
            optimizer,
            "--threads",
            "1",
        ]);
        assert!(o.status.success(), "{}", text(&o));
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        let loss = out
            .split("last loss ")
            .nth(1)
            .unwrap_or_else(|| panic!("no loss in {out}"))
            .trim_end_matches(|c: char| c == ')' || c.is_whitespace())
            .to_string();
        (out, loss)
    };
    let (adam_out, adam) = bench("adam");
    assert!(adam_out.contains("optimizer adam,"), "{adam_out}");
    assert_eq!(
        bench("adam").1,
        adam,
        "the same optimizer computes the same"
    );
    for other in ["ranger", "adamw", "sparse-adam"] {
        let (out, loss) = bench(other);
        assert!(out.contains(&format!("optimizer {other},")), "{out}");
        assert_ne!(loss, adam, "{other} stepped as adam: {out}");
    }
}
