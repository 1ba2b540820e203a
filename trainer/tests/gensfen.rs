//! `trainer gensfen` through the real binary and the library: one seed one file, any thread
//! count, shards that add up, resume after a kill, read-back, a labeller apart from the player
//! (Stockfish 15.1's network), quiet positions only, no duplicates, and one-line errors.

#[path = "common/paths.rs"]
mod paths;
#[path = "../../host/tests/common/stockfish_eval.rs"]
mod stockfish_eval;

use std::collections::HashSet;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use host::nnue::{AccumulatorStack, Kernels, Nnue};
use plugin_api::board_from_position;
use trainer::checked::Positive;
use trainer::data::{self, Format, ReadOptions, Sample};
use trainer::gensfen::{self, GensfenConfig, PlayerSettings, SelfPlaySettings, Target};

const BIN: &str = env!("CARGO_BIN_EXE_trainer");

/// Small, fast games unless `extra` says otherwise: 600-node searches, positions from ply 4.
const FAST: &[(&str, &str)] = &[("--nodes", "600"), ("--write-minply", "4")];

fn command(out: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.arg("gensfen").arg("--out").arg(out).arg("--quiet");
    for (key, value) in FAST {
        if !extra.contains(key) {
            c.args([key, value]);
        }
    }
    c.args(extra);
    c
}

fn gensfen(out: &Path, extra: &[&str]) -> Output {
    command(out, extra).output().expect("run trainer")
}

fn ok(out: &Path, extra: &[&str]) -> String {
    let o = gensfen(out, extra);
    assert!(
        o.status.success(),
        "gensfen {extra:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The one-line error of a failing run.
fn fails(out: &Path, extra: &[&str]) -> String {
    let o = gensfen(out, extra);
    assert!(!o.status.success(), "gensfen {extra:?} should fail");
    let err = String::from_utf8_lossy(&o.stderr).trim().to_string();
    assert_eq!(err.lines().count(), 1, "not one line: {err}");
    assert!(err.starts_with("error: "), "{err}");
    err
}

fn samples(path: &Path) -> Vec<Sample> {
    let format = Format::from_path(path).unwrap();
    data::open_reader(path, format, None, ReadOptions::default())
        .unwrap()
        .map(|s| s.unwrap())
        .collect()
}

/// Samples as sortable strings (position, labels, result).
fn keys(samples: &[Sample]) -> Vec<String> {
    let mut k: Vec<String> = samples
        .iter()
        .map(|s| {
            format!(
                "{} {} {:?} {:?} {}",
                s.fen(),
                s.score,
                s.best_move.map(|m| trainer::data::sample::uci(&m)),
                s.result,
                s.ply
            )
        })
        .collect();
    k.sort();
    k
}

/// Runs gensfen aborting in its third commit (the first records the start): after appending
/// the second batch, before recording it, the worst moment for a kill.
fn interrupt_in_third_commit(out: &Path, args: &[&str]) {
    let status = command(out, args)
        .env(gensfen::ABORT_AFTER_COMMITS_ENV, "2")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(!status.success(), "the run was not interrupted");
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn one_seed_gives_one_file_for_any_thread_count() {
    let dir = tmp();
    let p = |n: &str| dir.path().join(n);
    let args = [
        "--games",
        "5",
        "--seed",
        "7",
        "--random-multipv",
        "3",
        "--random-depth",
        "2",
    ];
    ok(&p("a.binpack"), &args);
    ok(&p("b.binpack"), &args);
    ok(&p("c.binpack"), &[&args[..], &["--threads", "2"]].concat());
    // 0: one worker per core.
    ok(&p("e.binpack"), &[&args[..], &["--threads", "0"]].concat());
    let a = std::fs::read(p("a.binpack")).unwrap();
    assert!(!a.is_empty());
    assert_eq!(a, std::fs::read(p("b.binpack")).unwrap(), "same seed twice");
    assert_eq!(a, std::fs::read(p("c.binpack")).unwrap(), "--threads 2");
    assert_eq!(a, std::fs::read(p("e.binpack")).unwrap(), "--threads 0");
    ok(&p("d.binpack"), &["--games", "5", "--seed", "8"]);
    assert_ne!(a, std::fs::read(p("d.binpack")).unwrap(), "another seed");
}

#[test]
fn shards_together_are_the_unsharded_run() {
    let dir = tmp();
    let p = |n: &str| dir.path().join(n);
    let base = &["--games", "7", "--seed", "3"][..];
    ok(&p("all.bin"), base);
    let all = samples(&p("all.bin"));
    let mut parts = Vec::new();
    for i in 0..3 {
        let name = format!("s{i}.bin");
        let shard = format!("{i}/3");
        let threads = if i == 1 { "2" } else { "1" };
        ok(
            &p(&name),
            &[base, &["--shard", &shard, "--threads", threads]].concat(),
        );
        parts.extend(samples(&p(&name)));
    }
    assert_eq!(parts.len(), all.len(), "positions in count");
    // The same multiset of samples: the shards played exactly the run's games, none twice.
    assert_eq!(keys(&parts), keys(&all));

    // A position target is split over the shards and met exactly.
    ok(&p("pos.bin"), &["--positions", "150", "--seed", "3"]);
    assert_eq!(samples(&p("pos.bin")).len(), 150);
    let mut total = 0;
    for i in 0..2 {
        let name = format!("ps{i}.bin");
        ok(
            &p(&name),
            &[
                "--positions",
                "151",
                "--seed",
                "3",
                "--shard",
                &format!("{i}/2"),
            ],
        );
        let s = samples(&p(&name));
        assert_eq!(s.len(), if i == 0 { 76 } else { 75 });
        total += s.len();
    }
    assert_eq!(total, 151);
}

#[test]
fn an_interrupted_run_resumes_to_the_same_file() {
    let dir = tmp();
    let full = dir.path().join("full.binpack");
    let cut = dir.path().join("cut.binpack");
    let args = [
        "--games",
        "12",
        "--seed",
        "5",
        "--flush-every",
        "40",
        "--nodes",
        "1500",
    ];
    let out = ok(&full, &args);
    assert!(out.contains("12 games"), "{out}");
    let expected = std::fs::read(&full).unwrap();

    // Interrupted deterministically: the process aborts in its third commit (the first records
    // the start), after appending the second batch but before recording it.
    let progress = gensfen::progress_path(&cut);
    interrupt_in_third_commit(&cut, &args);
    let partial = std::fs::read(&cut).unwrap();
    assert!(partial.len() < expected.len());
    let text = std::fs::read_to_string(&progress).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["complete"], serde_json::Value::Bool(false));
    assert!(v["games"].as_u64().unwrap() >= 1, "{text}");
    // What was committed is a prefix of the full file; the torn batch after it is not recorded.
    let committed = v["bytes"].as_u64().unwrap() as usize;
    assert!(
        committed < partial.len(),
        "no torn tail: {committed} of {}",
        partial.len()
    );
    assert_eq!(partial[..committed], expected[..committed]);
    let out = ok(&cut, &args);
    assert!(out.contains("resumed after game"), "{out}");
    assert_eq!(std::fs::read(&cut).unwrap(), expected, "resumed file");
    // Run again: nothing to do.
    let out = ok(&cut, &args);
    assert!(out.contains("already complete"), "{out}");
    // Another configuration is refused, --force starts over.
    let err = fails(&cut, &["--games", "13", "--seed", "5"]);
    assert!(err.contains("different configuration"), "{err}");
    ok(&cut, &["--games", "1", "--seed", "5", "--force"]);
}

#[test]
fn output_reads_back_with_labels_and_results() {
    let dir = tmp();
    let out = dir.path().join("g.bin");
    ok(
        &out,
        &[
            "--games",
            "3",
            "--write-minply",
            "10",
            "--write-maxply",
            "60",
        ],
    );
    let s = samples(&out);
    assert!(!s.is_empty());
    for x in &s {
        assert!((10..=60).contains(&x.ply), "ply {}", x.ply);
        assert!(x.result.is_some());
        assert!(x.best_move.is_some());
        assert!(i32::from(x.score).abs() < 3000);
    }
    // Consecutive positions of one game carry consistent results (side to move flips).
    let flips = s
        .windows(2)
        .filter(|w| w[1].ply == w[0].ply + 1)
        .all(|w| w[1].result == w[0].result.map(|r| -r));
    assert!(flips);

    // Text output, a book, and the library entry point.
    let book = dir.path().join("book.epd");
    std::fs::write(
        &book,
        "r1bq1rk1/ppp2ppp/5n2/2bp4/2NPP3/2P5/PP3PPP/RNBQK2R w KQ d6 id \"x\";\n\
         rn1qk2r/pp2b1pp/3p1n2/2pPp3/2P5/2Nb2P1/PP3P1P/R1BQK1NR w KQkq -\n",
    )
    .unwrap();
    let config = GensfenConfig {
        target: Target::Positions(40),
        player: PlayerSettings {
            nodes: Some(Positive::new(500)),
            book: Some(book.clone()),
            ..PlayerSettings::default()
        },
        game: SelfPlaySettings {
            random_moves: 2,
            write_minply: 0,
            ..SelfPlaySettings::default()
        },
        ..GensfenConfig::default()
    };
    let txt = dir.path().join("lib.txt");
    let summary = gensfen::generate(&config, &txt, false).unwrap();
    assert_eq!(summary.positions, 40);
    let text = std::fs::read_to_string(&txt).unwrap();
    assert_eq!(text.lines().count(), 40);
    assert!(
        text.starts_with("r1bq1rk1/ppp2ppp/5n2/2bp4/2NPP3/2P5/PP3PPP/RNBQK2R w KQ")
            || text.starts_with("rn1qk2r/pp2b1pp/3p1n2/2pPp3/2P5/2Nb2P1/PP3P1P/R1BQK1NR w KQkq"),
        "{text}"
    );
    let again = gensfen::generate(&config, &txt, false).unwrap();
    assert!(again.already_complete);
}

#[test]
fn bad_arguments_are_one_line_errors() {
    let dir = tmp();
    let out = dir.path().join("x.binpack");
    let err = fails(&out, &["--games", "1", "--shard", "3/2"]);
    assert!(err.contains("--shard '3/2'"), "{err}");
    let err = fails(
        Path::new("/nonexistent-dir/sub/x.binpack"),
        &["--games", "1"],
    );
    assert!(
        err.contains("cannot create /nonexistent-dir/sub/x.binpack"),
        "{err}"
    );
    let book = dir.path().join("bad.epd");
    std::fs::write(
        &book,
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -\nnot a fen\n",
    )
    .unwrap();
    let err = fails(&out, &["--games", "1", "--book", book.to_str().unwrap()]);
    assert!(err.contains("bad.epd:2: invalid EPD line"), "{err}");
    let err = fails(&dir.path().join("x.zip"), &["--games", "1"]);
    assert!(err.contains("x.zip"), "{err}");
    let err = fails(
        &out,
        &["--games", "1", "--depth-min", "5", "--depth-max", "3"],
    );
    assert!(err.contains("depth range"), "{err}");
    // Games or positions: the manifest's rule (gensfen::Target::of).
    for target in [&[][..], &["--games", "1", "--positions", "5"][..]] {
        let err = fails(&out, target);
        assert!(
            err.contains("give exactly one of games and positions"),
            "{err}"
        );
    }
    // An existing file without a progress record is not overwritten.
    let existing = dir.path().join("keep.bin");
    std::fs::write(&existing, b"precious").unwrap();
    let err = fails(&existing, &["--games", "1"]);
    assert!(err.contains("--force"), "{err}");
    assert_eq!(std::fs::read(&existing).unwrap(), b"precious");
}

/// Debian's Stockfish as the external labeler. `scripts/test.sh` installs it, so a missing
/// engine is a failure wherever the tests run, never a skip.
#[test]
fn an_external_uci_engine_plays_and_labels_reproducibly() {
    let sf = Path::new("/usr/games/stockfish");
    assert!(
        sf.exists(),
        "/usr/games/stockfish is missing: scripts/test.sh installs it (apt-get install stockfish)"
    );
    let dir = tmp();
    let spec = "cmd=/usr/games/stockfish,option.Threads=1,option.Hash=8";
    let args = ["--games", "2", "--labeler", spec, "--nodes", "1000"];
    ok(&dir.path().join("a.binpack"), &args);
    ok(
        &dir.path().join("b.binpack"),
        &[&args[..], &["--threads", "2"]].concat(),
    );
    let a = std::fs::read(dir.path().join("a.binpack")).unwrap();
    assert_eq!(a, std::fs::read(dir.path().join("b.binpack")).unwrap());
    let s = samples(&dir.path().join("a.binpack"));
    assert!(!s.is_empty() && s.iter().all(|x| x.result.is_some()));
    let err = fails(
        &dir.path().join("c.binpack"),
        &[
            "--games",
            "1",
            "--labeler",
            "cmd=/nonexistent/engine",
            "--nodes",
            "10",
        ],
    );
    assert!(err.contains("labeler"), "{err}");
}

/// A labeller apart from the player: the built-in evaluation plays 300-node searches, Stockfish
/// 15.1's network scores the written positions, statically and by quiescence search, in
/// centipawns as Stockfish's UCI reports them (`v · 100 / 361`). Only quiet positions, none twice,
/// the same file for any thread count and after an interruption.
#[test]
fn a_labeller_apart_from_the_player_scores_quiet_positions_once() {
    let dir = tmp();
    let net = stockfish_eval::exported_net(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let net_arg = net.to_str().unwrap();
    let plugins = paths::plugin_dir();
    let common = [
        "--plugin-dir",
        plugins.to_str().unwrap(),
        "--games",
        "8",
        "--seed",
        "3",
        "--nodes",
        "300",
        "--random-moves",
        "8",
        "--skip-noisy",
        "--dedup-mb",
        "1",
        "--label-net",
        net_arg,
        "--flush-every",
        "60",
    ];
    let run = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        let text = ok(&out, &[&common[..], extra].concat());
        (out, text)
    };
    let (stat, text) = run("static.binpack", &["--label", "static"]);
    assert!(text.contains("labels (static)"), "{text}");
    let (stat2, _) = run("static2.binpack", &["--label", "static", "--threads", "2"]);
    assert_eq!(
        std::fs::read(&stat).unwrap(),
        std::fs::read(&stat2).unwrap()
    );
    let (quiet, text) = run("qsearch.binpack", &["--label", "qsearch"]);
    assert!(text.contains("labels (qsearch)"), "{text}");

    let (s, q) = (samples(&stat), samples(&quiet));
    assert!(s.len() > 100, "{} positions", s.len());
    // The same games (the player decides them), scored twice.
    assert_eq!(keys_of(&s), keys_of(&q));
    let registry = paths::registry();
    let nnue = Nnue::load(&net, &registry).unwrap();
    let mut stack = AccumulatorStack::with_max_ply(&nnue, Kernels::best(), 0);
    let mut seen = HashSet::new();
    let mut raised = 0;
    for (a, b) in s.iter().zip(&q) {
        let pos = a.to_chess().unwrap();
        stack.reset(&board_from_position(&pos)).unwrap();
        assert_eq!(
            i32::from(a.score),
            stack.evaluate() * 100 / 361,
            "{}",
            a.fen()
        );
        // A quiescence search stands pat on the static evaluation, or finds better.
        assert!(b.score >= a.score, "{}: {} < {}", a.fen(), b.score, a.score);
        raised += usize::from(b.score > a.score);
        assert!(!a.in_check(), "in check: {}", a.fen());
        assert!(
            a.best_move.is_some() && !a.best_move_is_capture(),
            "a capture: {}",
            a.fen()
        );
        let fen = a.fen();
        let position: Vec<&str> = fen.split(' ').take(4).collect();
        assert!(seen.insert(position.join(" ")), "twice: {fen}");
    }
    assert!(
        raised > 0,
        "the quiescence search never found more than the static evaluation"
    );

    // Interrupted after its second batch: the resumed run refills the table of written keys from
    // the file and ends with the same bytes.
    let cut = dir.path().join("cut.binpack");
    let args = [&common[..], &["--label", "static"]].concat();
    interrupt_in_third_commit(&cut, &args);
    let out = ok(&cut, &args);
    assert!(out.contains("resumed after game"), "{out}");
    assert_eq!(std::fs::read(&cut).unwrap(), std::fs::read(&stat).unwrap());

    // Bad labellers fail in one line before any game, and write nothing.
    let bad = dir.path().join("bad.binpack");
    let err = fails(&bad, &["--games", "1", "--label", "nodes=0"]);
    assert!(err.contains("label budget 'nodes=0'"), "{err}");
    let err = fails(&bad, &["--games", "1", "--label", "depth=200"]);
    assert!(err.contains("depth must be 1 to 127"), "{err}");
    let missing = dir.path().join("missing.nnue");
    let err = fails(
        &bad,
        &[
            "--games",
            "1",
            "--label",
            "qsearch",
            "--label-net",
            missing.to_str().unwrap(),
        ],
    );
    assert!(
        err.contains("label_net") && err.contains("missing.nnue"),
        "{err}"
    );
    // Only the `all` plugin: Stockfish's HalfKAv2_hm blocks are missing.
    let only_all = dir.path().join("only-all");
    std::fs::create_dir(&only_all).unwrap();
    let so = format!("libnnue_plugin_all{}", std::env::consts::DLL_SUFFIX);
    std::fs::copy(plugins.join(&so), only_all.join(&so)).unwrap();
    let err = fails(
        &bad,
        &[
            "--games",
            "1",
            "--plugin-dir",
            only_all.to_str().unwrap(),
            "--label",
            "static",
            "--label-net",
            net_arg,
        ],
    );
    assert!(err.contains("label_net") && err.contains("halfka"), "{err}");
    assert!(!bad.exists(), "a failed run wrote {}", bad.display());
    let o = gensfen(&bad, &["--games", "1", "--label-net", net_arg]);
    assert!(!o.status.success(), "--label-net without --label");
}

/// The positions of samples, in order.
fn keys_of(samples: &[Sample]) -> Vec<String> {
    samples.iter().map(Sample::fen).collect()
}

/// `--label nodes=N` and `--label depth=D` end to end: every written position scored by a search
/// of that budget, as the host's engine searches it: replayed here position by position, in
/// the game's order and with its history, by a labeller engine of the same settings.
#[test]
fn searched_labels_are_the_searches_of_their_budget() {
    use host::engine::Engine;
    use host::engine::eval_source::EvalSource;
    use host::engine::label::LabelBudget;
    use host::engine::zobrist;
    let dir = tmp();
    // One game from the start position, every position written (no random plies, no
    // duplicates dropped): the file is the game, in order.
    let common = [
        "--games",
        "1",
        "--random-moves",
        "0",
        "--write-minply",
        "0",
        "--nodes",
        "300",
    ];
    let unlabelled = samples(&{
        let out = dir.path().join("player.binpack");
        ok(&out, &common);
        out
    });
    assert!(unlabelled.len() > 20, "{} positions", unlabelled.len());
    for (text, budget) in [
        ("nodes=150", LabelBudget::Nodes(150)),
        ("depth=3", LabelBudget::Depth(3)),
    ] {
        let out = dir.path().join(format!("{text}.binpack"));
        let summary = ok(&out, &[&common[..], &["--label", text]].concat());
        assert!(summary.contains(&format!("labels ({text})")), "{summary}");
        let labelled = samples(&out);
        assert_eq!(keys_of(&labelled), keys_of(&unlabelled), "the same game");
        let mut engine = Engine::new(16, 1, EvalSource::Builtin).unwrap();
        engine.new_game();
        let mut history = Vec::new();
        let mut differ = 0;
        for (s, u) in labelled.iter().zip(&unlabelled) {
            let pos = s.to_chess().unwrap();
            let label = engine.label(&pos, &history, budget).unwrap();
            assert_eq!(i32::from(s.score), label.score, "{text}: {}", s.fen());
            differ += usize::from(s.score != u.score);
            history.push(zobrist::hash(&pos));
        }
        assert!(differ > 0, "{text}: every label equals the player's score");
    }
}
