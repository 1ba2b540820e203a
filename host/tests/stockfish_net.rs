//! Stockfish 15.1's own network (`nn-ad9b42354671.nnue`, exported by Debian's `stockfish` with
//! its UCI command `export_net`) loaded, evaluated and written by host, checked against
//! Stockfish's own code: the vectors of `host/tests/data/stockfish-15.1/` (its README says how
//! they were made) and the `eval` table of the real binary.

mod common;
mod nnue_common;
#[path = "common/stockfish_eval.rs"]
mod stockfish_eval;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;

use common::{assert_networks_refused, host, run_ok, tsv_rows};
use nnue_common::registry;
use plugin_api::{board_from_position, move_from_shakmaty};
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Position};
use stockfish_eval::{expected_table, exported_net, stockfish_eval_tables};

use host::nnue::{AccumulatorStack, Kernels, Nnue, SimdLevel};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/stockfish-15.1")
}

/// Stockfish 15.1's network, exported once per test run by the real binary.
fn sf_net() -> &'static Path {
    static NET: OnceLock<PathBuf> = OnceLock::new();
    NET.get_or_init(|| exported_net(Path::new(env!("CARGO_TARGET_TMPDIR"))))
}

/// The rows of a vector file, comments dropped.
fn rows(file: &str) -> Vec<Vec<String>> {
    tsv_rows(&data().join(file))
}

/// `host eval --stacks` on every reference position equals Stockfish's own code: the bucket,
/// all 8 stacks' PSQT and positional sums, and `Eval::NNUE::evaluate(pos, false)`.
#[test]
fn host_eval_equals_stockfish_15_1_on_every_position_and_stack() {
    let reference = rows("positions.tsv");
    assert!(reference.len() > 2500);
    let dir = tempfile::tempdir().unwrap();
    let fens = dir.path().join("positions.fen");
    let text: String = reference.iter().map(|r| format!("{}\n", r[0])).collect();
    std::fs::write(&fens, text).unwrap();
    let mut buckets = [0usize; 8];
    for level in SimdLevel::under_test().unwrap_or_else(|e| panic!("{e}")) {
        let out = run_ok(
            host()
                .args(["eval", "--stacks", "--simd", level.name(), "--net"])
                .arg(sf_net())
                .arg("--fens")
                .arg(&fens),
        );
        let ours: Vec<Vec<String>> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| l.split('\t').map(str::to_string).collect())
            .collect();
        assert_eq!(ours.len(), reference.len());
        for (o, r) in ours.iter().zip(&reference) {
            // Reference: FEN, bucket, psqt, positional, evaluate; ours: FEN, value, bucket, ...
            let (fen, bucket, psqt, positional, value) = (&r[0], &r[1], &r[2], &r[3], &r[4]);
            assert_eq!(
                (&o[0], &o[1], &o[2], &o[3], &o[4]),
                (fen, value, bucket, psqt, positional),
                "{level}: {fen}"
            );
            buckets[bucket.parse::<usize>().unwrap()] += 1;
        }
    }
    assert!(buckets.iter().all(|&n| n >= 100), "{buckets:?}");
}

/// Along games (king moves, castling, en passant, promotions, captures) the incremental
/// evaluation of every kernel version equals Stockfish's after every move.
#[test]
fn incremental_evaluation_along_games_equals_stockfish_15_1() {
    let reg = registry();
    let nnue = Nnue::load(sf_net(), &reg).unwrap_or_else(|e| panic!("{e}"));
    let games = rows("games.tsv");
    assert!(games.len() >= 50);
    let mut plies = 0;
    for level in SimdLevel::under_test().unwrap_or_else(|e| panic!("{e}")) {
        let mut stack = AccumulatorStack::new(&nnue, Kernels::new(level).unwrap());
        for game in &games {
            let fen: Fen = game[0].parse().unwrap();
            let mut pos: Chess = fen.into_position(CastlingMode::Standard).unwrap();
            let expected: Vec<i32> = game[2].split(',').map(|v| v.parse().unwrap()).collect();
            stack.reset(&board_from_position(&pos)).unwrap();
            assert_eq!(stack.evaluate(), expected[0], "{level}: {}", game[0]);
            for (k, uci) in game[1].split(' ').enumerate() {
                let m = uci.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
                stack.push(&move_from_shakmaty(&m).unwrap()).unwrap();
                pos = pos.play(m).unwrap();
                if stack.ply() == stack.max_ply() {
                    stack.reset(&board_from_position(&pos)).unwrap();
                }
                assert_eq!(
                    stack.evaluate(),
                    expected[k + 1],
                    "{level}: {} after {} moves",
                    game[0],
                    k + 1
                );
                plies += 1;
            }
        }
    }
    assert!(plies >= 6000);
}

/// Stockfish → own → Stockfish gives the original file byte for byte, and the own file
/// evaluates the same.
#[test]
fn stockfish_files_round_trip_through_the_own_format() {
    let dir = tempfile::tempdir().unwrap();
    let own = dir.path().join("sf.own.nnue");
    let back = dir.path().join("sf.back.nnue");
    run_ok(
        host()
            .args(["net", "convert", "--format", "own", "--in"])
            .arg(sf_net())
            .arg("--out")
            .arg(&own),
    );
    run_ok(
        host()
            .args(["net", "convert", "--format", "stockfish", "--in"])
            .arg(&own)
            .arg("--out")
            .arg(&back),
    );
    // The own file carries no description: the default one is written instead of
    // nnue-pytorch's, so compare around it.
    let (a, b) = (
        std::fs::read(sf_net()).unwrap(),
        std::fs::read(&back).unwrap(),
    );
    let desc = |bytes: &[u8]| 12 + u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize;
    assert_eq!(a[..8], b[..8]);
    assert_eq!(
        a[desc(&a)..],
        b[desc(&b)..],
        "tensors and hashes written back"
    );
    // A Stockfish file converted to Stockfish keeps its description: identical.
    let same = dir.path().join("sf.same.nnue");
    run_ok(
        host()
            .args(["net", "convert", "--format", "stockfish", "--in"])
            .arg(sf_net())
            .arg("--out")
            .arg(&same),
    );
    assert!(std::fs::read(&same).unwrap() == a, "byte for byte");
    let info =
        String::from_utf8(run_ok(host().args(["net", "info", "--net"]).arg(&own)).stdout).unwrap();
    assert!(
        info.contains("own (version 5")
            && info.contains("8 PSQT buckets")
            && info.contains("score units\tStockfish 15.1's internal units (361 to a pawn)"),
        "{info}"
    );
    // The own file keeps the network's units: a search reads its scores as from the Stockfish
    // file (before version 5 it read them as centipawns, 3.61 times too large, and searched
    // another tree).
    let bench = |net: &Path| {
        let out = run_ok(host().args(["bench", "--depth", "4", "--net"]).arg(net)).stdout;
        String::from_utf8(out)
            .unwrap()
            .lines()
            .last()
            .unwrap()
            .split(" nodes")
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(bench(sf_net()), bench(&own), "node counts");
    let fens = dir.path().join("f.fen");
    let some: String = rows("positions.tsv")
        .iter()
        .step_by(97)
        .map(|r| format!("{}\n", r[0]))
        .collect();
    std::fs::write(&fens, some).unwrap();
    let eval = |net: &Path| {
        run_ok(
            host()
                .args(["eval", "--net"])
                .arg(net)
                .arg("--fens")
                .arg(&fens),
        )
        .stdout
    };
    assert_eq!(eval(sf_net()), eval(&own));
    // The thesis's format cannot hold the shape: one line, nothing written.
    let out = host()
        .args(["net", "convert", "--format", "thesis", "--in"])
        .arg(sf_net())
        .arg("--out")
        .arg(dir.path().join("x.nn"))
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        !out.status.success()
            && err.trim().lines().count() == 1
            && err.contains("only the thesis's shape"),
        "{err}"
    );
    assert!(!dir.path().join("x.nn").exists());
}

/// SFNNv5's format at widths other than Stockfish's (nnue-pytorch writes L1 256, this
/// project's `sfnnv5` networks are L1 256 too) and with LEB128-compressed tensors (Stockfish 16
/// to 17.1): written, read by their hash chain and sizes, evaluated as the own file, and
/// converted both ways byte for byte; `net info` says which Stockfish would load each.
#[test]
fn sfnnv5_files_of_any_width_and_compressed_load_and_convert_both_ways() {
    let dir = tempfile::tempdir().unwrap();
    let own = dir.path().join("net.own");
    let raw = dir.path().join("net.nnue");
    run_ok(
        host()
            .args([
                "net",
                "random",
                "--spec",
                "halfka_v2_hm",
                "--arch",
                "sfnnv5",
            ])
            .args(["--l1", "256", "--seed", "5", "--out"])
            .arg(&own),
    );
    // A network in centipawns converted to Stockfish's format, which implies Stockfish's
    // units: written, and said so in one line.
    let converted = run_ok(
        host()
            .args(["net", "convert", "--format", "stockfish", "--in"])
            .arg(&own)
            .arg("--out")
            .arg(&raw),
    );
    let note = String::from_utf8(converted.stderr).unwrap();
    assert!(
        note.trim().lines().count() == 1
            && note.contains("records no score units")
            && note.contains("in centipawns, will be read as Stockfish 15.1's internal units"),
        "{note}"
    );
    let bytes = std::fs::read(&raw).unwrap();
    assert_eq!(
        u32::from_le_bytes(bytes[..4].try_into().unwrap()),
        host::nnue::stockfish::VERSION
    );
    // The same network with its first layer's tensors LEB128-compressed, as Stockfish 16 to
    // 17.1 write them: biases (256), weights (22528 x 256), PSQT (22528 x 8).
    let ft = 12 + u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize + 4;
    let (l1, n) = (256, 22_528);
    let i16s = |b: &[u8]| -> Vec<i16> {
        b.chunks_exact(2)
            .map(|c| i16::from_le_bytes([c[0], c[1]]))
            .collect()
    };
    let mut leb = bytes[..ft].to_vec();
    let (b1, rest) = bytes[ft..].split_at(2 * l1);
    let (w1, rest) = rest.split_at(2 * n * l1);
    let (psqt, stacks) = rest.split_at(4 * n * 8);
    host::nnue::stockfish::leb128::write(&i16s(b1), &mut leb);
    host::nnue::stockfish::leb128::write(&i16s(w1), &mut leb);
    let psqt: Vec<i32> = psqt
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    host::nnue::stockfish::leb128::write(&psqt, &mut leb);
    leb.extend_from_slice(stacks);
    let compressed = dir.path().join("net.leb.nnue");
    std::fs::write(&compressed, &leb).unwrap();
    let fens = dir.path().join("f.fen");
    let some: String = rows("positions.tsv")
        .iter()
        .step_by(53)
        .map(|r| format!("{}\n", r[0]))
        .collect();
    std::fs::write(&fens, some).unwrap();
    let eval = |net: &Path| {
        run_ok(
            host()
                .args(["eval", "--stacks", "--net"])
                .arg(net)
                .arg("--fens")
                .arg(&fens),
        )
        .stdout
    };
    let expected = eval(&own);
    assert!(expected.len() > 1000);
    assert_eq!(eval(&raw), expected);
    assert_eq!(eval(&compressed), expected);
    // Back to Stockfish's format (raw, as 15.1 reads it) and to the own format: the same.
    for (from, name) in [(&raw, "a"), (&compressed, "b")] {
        let back = dir.path().join(format!("{name}.nnue"));
        run_ok(
            host()
                .args(["net", "convert", "--format", "stockfish", "--in"])
                .arg(from)
                .arg("--out")
                .arg(&back),
        );
        assert!(std::fs::read(&back).unwrap() == bytes, "{name}");
    }
    let info = |net: &Path| {
        String::from_utf8(run_ok(host().args(["net", "info", "--net"]).arg(net)).stdout).unwrap()
    };
    assert!(info(&raw).contains("L1\t256"), "{}", info(&raw));
    assert!(
        info(&raw).contains("stockfish\tno Stockfish binary loads it as released"),
        "{}",
        info(&raw)
    );
    assert!(
        info(sf_net()).contains("stockfish\tStockfish 15.1 loads it"),
        "{}",
        info(sf_net())
    );
}

/// Corrupt, truncated and other-architecture Stockfish files: one line each, in bounded memory.
#[test]
fn broken_and_foreign_stockfish_files_are_refused_in_one_line() {
    let original = std::fs::read(sf_net()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let fens = dir.path().join("f.fen");
    std::fs::write(&fens, "8/8/8/8/8/8/8/K6k w - - 0 1\n").unwrap();
    let stack_at = 87 + 4 + 2048 + 2 * 22528 * 1024 + 4 * 22528 * 8;
    let patch = |at: usize, bytes: &[u8]| {
        let mut b = original.clone();
        b[at..at + bytes.len()].copy_from_slice(bytes);
        b
    };
    let mut leb = Vec::new();
    leb.extend_from_slice(&0x7AF3_2F20u32.to_le_bytes());
    leb.extend_from_slice(&(host::nnue::stockfish::network_hash(1536)).to_le_bytes());
    leb.extend_from_slice(&0u32.to_le_bytes());
    leb.extend_from_slice(&host::nnue::stockfish::feature_transformer_hash(1536).to_le_bytes());
    leb.extend_from_slice(b"COMPRESSED_LEB128");
    leb.resize(4096, 0);
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "truncated",
            original[..original.len() - 1].to_vec(),
            "truncated",
        ),
        ("trailing", [&original[..], &[0]].concat(), "trailing bytes"),
        ("header", original[..50].to_vec(), "truncated"),
        ("hash", patch(4, &[0, 0, 0, 0]), "architecture hash"),
        (
            "ft-hash",
            patch(87, &[1, 2, 3, 4]),
            "feature transformer's hash",
        ),
        (
            "stack-hash",
            patch(stack_at + 3 * 17_640, &[9, 9, 9, 9]),
            "layer stack 3",
        ),
        ("dev", patch(0, &0x6A44_8AFAu32.to_le_bytes()), "SFNNv16"),
        ("leb128", leb, "LEB128-compressed biases"),
        (
            "description",
            patch(8, &u32::MAX.to_le_bytes()),
            "description",
        ),
    ];
    assert_networks_refused(dir.path(), &fens, cases);
}

/// The real Stockfish 15.1's `eval` table (each stack's PSQT and positional terms, to 1/361 of
/// its units, side to move) and its `NNUE evaluation` line agree with `host eval --stacks`.
#[test]
fn debian_stockfish_eval_table_agrees_with_host() {
    let quiet: Vec<Vec<String>> = rows("positions.tsv")
        .into_iter()
        .filter(|r| {
            // Stockfish prints no table in check; positions shakmaty calls impossible are left
            // to the vectors.
            let fen: Fen = r[0].parse().unwrap();
            let pos: Option<Chess> = fen.into_position(CastlingMode::Standard).ok();
            pos.is_some_and(|p| !p.is_check())
        })
        .collect();
    let picked: Vec<&Vec<String>> = (0..8)
        .flat_map(|b| {
            quiet
                .iter()
                .filter(move |r| r[1] == b.to_string())
                .step_by(41)
                .take(3)
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let fens = dir.path().join("f.fen");
    std::fs::write(
        &fens,
        picked
            .iter()
            .map(|r| format!("{}\n", r[0]))
            .collect::<String>(),
    )
    .unwrap();
    let out = run_ok(
        host()
            .args(["eval", "--stacks", "--net"])
            .arg(sf_net())
            .arg("--fens")
            .arg(&fens),
    );
    let ours = String::from_utf8(out.stdout).unwrap();
    let fens: Vec<String> = picked.iter().map(|r| r[0].clone()).collect();
    let tables = stockfish_eval_tables(None, &fens);
    // One line of ours and one table of Stockfish's per position: a zip of lists of
    // different lengths would compare only the shorter one's.
    assert_eq!(ours.lines().count(), fens.len(), "{ours}");
    assert_eq!(tables.len(), fens.len());
    for ((line, table), fen) in ours.lines().zip(&tables).zip(&fens) {
        let f: Vec<&str> = line.split('\t').collect();
        let used: usize = f[2].parse().unwrap();
        let psqt: Vec<i32> = f[3].split(',').map(|v| v.parse().unwrap()).collect();
        let pos: Vec<i32> = f[4].split(',').map(|v| v.parse().unwrap()).collect();
        assert_eq!(*table, expected_table(&psqt, &pos, used), "{fen}");
    }
}

/// `host bench --net` searches with Stockfish's network, and `EvalFile` loads it over UCI.
#[test]
fn the_engine_searches_with_stockfish_15_1s_network() {
    let out = run_ok(
        host()
            .args(["bench", "--depth", "5", "--net"])
            .arg(sf_net()),
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.trim().lines().last().unwrap().contains("nodes"),
        "{text}"
    );
    let mut child = host()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    // Black without its queen: Stockfish's network says +3126 of its units (8.66 pawns), which
    // UCI reports as cp 865 (v · 100 / 361), as Stockfish does.
    let script = format!(
        "uci\nsetoption name EvalFile value {}\nisready\n\
         position fen rnb1kbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 3\ngo depth 4\n",
        sf_net().display()
    );
    child
        .stdin
        .as_mut()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    // Wait for the move, then quit.
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    use std::io::BufRead;
    let mut scores = Vec::new();
    while stdout.read_line(&mut line).unwrap() > 0 && !line.starts_with("bestmove") {
        let mut words = line.split_whitespace();
        if words.by_ref().any(|w| w == "cp") {
            scores.push(words.next().unwrap().parse::<i32>().unwrap());
        }
        line.clear();
    }
    assert!(line.starts_with("bestmove"), "no bestmove");
    assert!(
        !scores.is_empty() && scores.iter().all(|cp| (500..1300).contains(cp)),
        "scores in centipawns, a queen up: {scores:?}"
    );
    child.stdin.as_mut().unwrap().write_all(b"quit\n").unwrap();
    assert!(child.wait().unwrap().success());
}

/// `host eval --games` prints Stockfish's evaluations along the reference games (the file's own
/// layout), `--repeat` the speed line and `--stats` what the stack did; a bad move is one line
/// naming file and line.
#[test]
fn host_eval_games_reproduces_the_reference_games_file() {
    let games = data().join("games.tsv");
    let out = run_ok(
        host()
            .args(["eval", "--net"])
            .arg(sf_net())
            .arg("--games")
            .arg(&games),
    );
    let want: String = std::fs::read_to_string(&games)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(
        String::from_utf8(out.stdout).unwrap() == want,
        "games output differs"
    );
    let out = run_ok(
        host()
            .args(["eval", "--repeat", "1", "--net"])
            .arg(sf_net())
            .arg("--games")
            .arg(&games),
    );
    let line = String::from_utf8(out.stdout).unwrap();
    let sum: i64 = rows("games.tsv")
        .iter()
        .flat_map(|r| {
            r[2].split(',')
                .map(|v| v.parse::<i64>().unwrap())
                .collect::<Vec<_>>()
        })
        .sum();
    assert!(
        line.starts_with("positions 6225 evals_per_second ")
            && line.trim().ends_with(&format!("checksum {sum}")),
        "{line}"
    );
    // `--stats`: every move updates or refreshes each perspective once, pass after pass.
    let moves: usize = rows("games.tsv")
        .iter()
        .map(|r| r[1].split_whitespace().count())
        .sum();
    for (extra, cache) in [(None, "cache_hits "), (Some("--full-refresh"), "cache off")] {
        let out = run_ok(
            host()
                .args(["eval", "--repeat", "2", "--stats", "--net"])
                .arg(sf_net())
                .arg("--games")
                .arg(&games)
                .args(extra),
        );
        let err = String::from_utf8(out.stderr).unwrap();
        let stat = |name: &str| -> usize {
            let mut words = err.split_whitespace();
            words.find(|w| *w == name).expect(name);
            words.next().unwrap().parse().unwrap()
        };
        assert_eq!(stat("moves"), 2 * moves, "{err}");
        assert_eq!(
            stat("updates") + stat("refreshes") + stat("hybrids"),
            2 * 2 * moves,
            "{err}"
        );
        assert!(
            stat("refreshes") > 0 && stat("rows") > stat("updates"),
            "{err}"
        );
        assert!(err.starts_with("stats ") && err.contains(cache), "{err}");
    }
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.tsv");
    std::fs::write(
        &bad,
        "# a comment\nrnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\te2e4 e7e5 e1e3\n",
    )
    .unwrap();
    let out = host()
        .args(["eval", "--net"])
        .arg(sf_net())
        .arg("--games")
        .arg(&bad)
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        !out.status.success() && err.trim().lines().count() == 1,
        "{err}"
    );
    assert!(
        err.contains("bad.tsv:2: move 3 'e1e3' is not legal"),
        "{err}"
    );
}
