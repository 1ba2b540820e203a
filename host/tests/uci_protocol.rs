//! The UCI engine as a GUI sees it: the real `host` binary driven over pipes. Handshake and
//! options, `isready` and `stop` during searches, every kind of bad input of the issue (answered
//! with `info string error: ...`, the previous state kept), and seeded random and adversarial
//! command streams after which the engine must still be alive and answer `isready`.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess};

/// A running engine with a reader thread collecting its output lines.
struct HostProcess {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    /// Everything read so far (for failure messages).
    transcript: Vec<String>,
}

const PATIENCE: Duration = Duration::from_secs(20);

impl HostProcess {
    fn start() -> HostProcess {
        let mut child = common::host()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("cannot start host");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut e = HostProcess {
            child,
            stdin,
            lines: rx,
            transcript: Vec::new(),
        };
        // Small tables keep the many engines of these tests light.
        e.send("setoption name Hash value 8");
        e
    }

    fn send(&mut self, line: &str) {
        self.send_bytes(format!("{line}\n").as_bytes());
    }

    fn send_bytes(&mut self, bytes: &[u8]) {
        self.stdin
            .write_all(bytes)
            .and_then(|_| self.stdin.flush())
            .unwrap_or_else(|e| panic!("engine stopped reading ({e}); output: {:?}", self.tail()));
    }

    fn tail(&self) -> Vec<String> {
        self.transcript
            .iter()
            .rev()
            .take(30)
            .rev()
            .cloned()
            .collect()
    }

    /// Lines up to and including the first one satisfying `done`; panics after `PATIENCE`.
    fn until(&mut self, what: &str, done: impl Fn(&str) -> bool) -> Vec<String> {
        self.until_within(what, PATIENCE, done)
    }

    fn until_within(
        &mut self,
        what: &str,
        limit: Duration,
        done: impl Fn(&str) -> bool,
    ) -> Vec<String> {
        let deadline = Instant::now() + limit;
        let mut got = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.transcript.push(line.clone());
                    let finished = done(&line);
                    got.push(line);
                    if finished {
                        return got;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    panic!("no {what} within {limit:?}; last output: {:?}", self.tail())
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let status = self.child.wait().ok();
                    panic!(
                        "engine died ({status:?}) waiting for {what}; last output: {:?}",
                        self.tail()
                    )
                }
            }
        }
    }

    /// `isready` → `readyok`; returns the lines before it.
    fn sync(&mut self) -> Vec<String> {
        self.send("isready");
        let mut lines = self.until("readyok", |l| l == "readyok");
        lines.pop();
        lines
    }

    /// The current position as `d` reports it.
    fn fen(&mut self) -> String {
        self.send("d");
        let lines = self.until("the position", |l| l.starts_with("info string fen "));
        lines.last().unwrap()["info string fen ".len()..].to_string()
    }

    fn bestmove(&mut self) -> String {
        let lines = self.until("bestmove", |l| l.starts_with("bestmove"));
        lines
            .last()
            .unwrap()
            .split_whitespace()
            .nth(1)
            .unwrap()
            .to_string()
    }

    fn quit(mut self) {
        self.send("quit");
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "exit status {status}");
                return;
            }
            assert!(Instant::now() < deadline, "engine did not quit");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for HostProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn errors(lines: &[String]) -> Vec<&String> {
    lines
        .iter()
        .filter(|l| l.starts_with("info string error:"))
        .collect()
}

fn position(fen: &str) -> Chess {
    fen.parse::<Fen>()
        .unwrap()
        .into_position(CastlingMode::Standard)
        .unwrap()
}

fn assert_legal(fen: &str, uci: &str) {
    let pos = position(fen);
    let m = uci
        .parse::<UciMove>()
        .ok()
        .and_then(|u| u.to_move(&pos).ok());
    assert!(m.is_some(), "bestmove {uci} is not legal in {fen}");
}

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

#[test]
fn handshake_lists_the_options() {
    let mut e = HostProcess::start();
    e.send("uci");
    let lines = e.until("uciok", |l| l == "uciok");
    assert!(lines[0].starts_with("id name "), "{lines:?}");
    assert!(lines.iter().any(|l| l.starts_with("id author ")));
    for option in [
        "option name Hash type spin default 128 min 1",
        "option name Threads type spin default 1 min 1",
        "option name Move Overhead type spin default",
        "option name Clear Hash type button",
        "option name EvalFile type string",
        "option name PluginDir type string",
        "option name Ablation type string default <empty>",
        "option name Ponder type check default false",
    ] {
        assert!(
            lines.iter().any(|l| l.starts_with(option)),
            "missing '{option}' in {lines:?}"
        );
    }
    assert!(errors(&e.sync()).is_empty());
    e.quit();
}

#[test]
fn isready_and_stop_during_an_infinite_search() {
    let mut e = HostProcess::start();
    e.send("position startpos moves e2e4");
    e.send("go infinite");
    // The search is under way once it reports a depth. Waiting for that line, not for a fixed
    // time, keeps the test true on a loaded machine, where this file's engines run side by side
    // on two cores (a fixed 300 ms once saw no depth yet).
    let mut before = e.until("the first depth of the search", |l| {
        l.starts_with("info depth")
    });
    let started = Instant::now();
    before.extend(e.sync());
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "readyok took {:?}",
        started.elapsed()
    );
    assert!(
        !before.iter().any(|l| l.starts_with("bestmove")),
        "an infinite search answered before stop: {before:?}"
    );
    let stop = Instant::now();
    e.send("stop");
    let best = e.bestmove();
    assert!(
        stop.elapsed() < Duration::from_secs(1),
        "bestmove took {:?}",
        stop.elapsed()
    );
    assert_legal(
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1",
        &best,
    );
    e.quit();
}

#[test]
fn infinite_search_waits_for_stop_even_when_finished() {
    // A mate in one is solved at once; the answer must still wait for `stop`.
    let mut e = HostProcess::start();
    e.send("position fen 6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1");
    e.send("go infinite");
    std::thread::sleep(Duration::from_millis(500));
    let lines = e.sync();
    assert!(
        !lines.iter().any(|l| l.starts_with("bestmove")),
        "{lines:?}"
    );
    e.send("stop");
    assert_eq!(e.bestmove(), "d1d8");
    e.quit();
}

#[test]
fn ponder_then_ponderhit_and_ponder_then_stop() {
    let mut e = HostProcess::start();
    e.send("setoption name Ponder value true");
    e.send("position startpos moves e2e4 e7e5");
    e.send("go ponder wtime 1000 btime 1000");
    std::thread::sleep(Duration::from_millis(1200));
    let lines = e.sync();
    assert!(
        !lines.iter().any(|l| l.starts_with("bestmove")),
        "pondering answered early: {lines:?}"
    );
    e.send("ponderhit");
    // After ponderhit the clock (1 s) applies: an answer well within a second.
    let best = e.until_within("bestmove after ponderhit", Duration::from_secs(2), |l| {
        l.starts_with("bestmove")
    });
    assert!(best.last().unwrap().starts_with("bestmove "));
    e.send("go ponder wtime 1000 btime 1000");
    std::thread::sleep(Duration::from_millis(100));
    e.send("stop");
    e.bestmove();
    e.quit();
}

#[test]
fn go_variants_answer_with_legal_moves() {
    let mut e = HostProcess::start();
    let fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3";
    e.send(&format!("position fen {fen}"));
    for go in [
        "go depth 5",
        "go nodes 3000",
        "go movetime 100",
        "go wtime 2000 btime 2000 winc 10 binc 10",
        "go wtime 500 btime 500 movestogo 1",
        "go wtime 10 btime 10",
        "go wtime -50 btime 1000",
        "go mate 2",
        "go depth 3 searchmoves d2d4 b1c3",
    ] {
        e.send(go);
        let lines = e.until(go, |l| l.starts_with("bestmove"));
        let best = lines
            .last()
            .unwrap()
            .split_whitespace()
            .nth(1)
            .unwrap()
            .to_string();
        assert_legal(fen, &best);
        if go.contains("searchmoves") {
            assert!(best == "d2d4" || best == "b1c3", "{best}");
        }
        assert!(errors(&lines).is_empty(), "{go}: {lines:?}");
        let info = lines
            .iter()
            .find(|l| l.starts_with("info depth"))
            .expect("an info line");
        for field in [
            "seldepth", "score", "nodes", "nps", "hashfull", "time", "pv",
        ] {
            assert!(info.contains(field), "{go}: no {field} in {info}");
        }
    }
    e.quit();
}

#[test]
fn mate_and_stalemate_answer_0000_and_depth_zero_plays() {
    let mut e = HostProcess::start();
    for fen in [
        "7k/6Q1/6K1/8/8/8/8/8 b - - 0 1",
        "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",
    ] {
        e.send(&format!("position fen {fen}"));
        e.send("go depth 5");
        assert_eq!(e.bestmove(), "0000");
        e.send("go wtime 1000 btime 1000");
        assert_eq!(e.bestmove(), "0000");
    }
    e.send("position startpos");
    e.send("go depth 0");
    let best = e.bestmove();
    assert_legal(START, &best);
    e.quit();
}

#[test]
fn bad_input_is_refused_and_the_previous_state_kept() {
    let mut e = HostProcess::start();
    e.send("position startpos moves e2e4 c7c5");
    let good = e.fen();
    assert_eq!(
        good,
        "rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"
    );
    let bad = [
        // Illegal positions.
        "position fen 8/8/8/8/8/8/8/8 w - - 0 1",
        "position fen 8/8/8/3k4/8/8/8/8 w - - 0 1",
        "position fen 4k3/8/8/8/8/8/8/4R1K1 w - - 0 1",
        "position fen 3kk3/8/8/8/8/8/8/4K3 w - - 0 1",
        "position fen 4k3/8/8/8/8/8/8/P3K3 w - - 0 1",
        // Garbage.
        "position fen",
        "position fen garbage",
        "position fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1",
        "position fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 garbage",
        "position fen rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "position",
        "position frobnicate",
        "position startpos garbage",
        // Illegal and malformed moves.
        "position startpos moves e2e5",
        "position startpos moves e2e4 e7e5 e1g1",
        "position startpos moves e2e4 zz99",
        "position startpos moves e2",
        "position startpos moves e7e5",
        "position fen 8/8/8/8/8/2k5/8/K7 w - - 0 1 moves a1a1",
    ];
    for cmd in bad {
        e.send(cmd);
        let lines = e.sync();
        assert_eq!(errors(&lines).len(), 1, "{cmd}: {lines:?}");
        assert_eq!(e.fen(), good, "{cmd} changed the position");
    }
    // Unknown commands and options, bad values, networks that cannot be loaded.
    for cmd in [
        "frobnicate",
        "go123",
        "setoption name NoSuchOption value 1",
        "setoption name Hash value lots",
        "setoption name Hash value 0",
        "setoption name Threads value -1",
        "setoption name Move Overhead value 1e9",
        "setoption name Ponder value maybe",
        "setoption name Ablation value rfp,warp-drive",
        "setoption name EvalFile value /nonexistent/net.nn",
        "setoption name EvalFile value Cargo.toml",
        "setoption",
        "setoption name",
    ] {
        e.send(cmd);
        let lines = e.sync();
        assert_eq!(errors(&lines).len(), 1, "{cmd}: {lines:?}");
    }
    e.send("d");
    let lines = e.until("eval", |l| l.starts_with("info string eval "));
    assert!(lines.last().unwrap().contains("built-in"), "{lines:?}");
    // Still working: the position kept and searchable.
    e.send("go depth 4");
    let best = e.bestmove();
    assert_legal(&good, &best);
    e.quit();
}

#[test]
fn a_fen_without_clocks_gets_the_defaults() {
    let mut e = HostProcess::start();
    e.send("position fen rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3");
    assert!(errors(&e.sync()).is_empty());
    assert_eq!(
        e.fen(),
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    );
    e.send("position fen 8/8/8/8/8/2k5/8/K7 w moves a1a2");
    assert!(errors(&e.sync()).is_empty());
    assert_eq!(e.fen(), "8/8/8/8/8/2k5/K7/8 b - - 1 1");
    e.quit();
}

#[test]
fn a_thesis_network_loads_and_a_bad_one_keeps_it() {
    let mut e = HostProcess::start();
    let net = common::shared().join("nets/thesis/all.nn");
    e.send(&format!("setoption name EvalFile value {}", net.display()));
    let lines = e.sync();
    assert!(errors(&lines).is_empty(), "{lines:?}");
    assert!(lines.iter().any(|l| l.contains("NNUE")), "{lines:?}");
    e.send("setoption name EvalFile value /nonexistent.nn");
    assert_eq!(errors(&e.sync()).len(), 1);
    e.send("d");
    let lines = e.until("eval", |l| l.starts_with("info string eval "));
    assert!(lines.last().unwrap().contains("all.nn"), "{lines:?}");
    e.send("position startpos moves d2d4");
    e.send("go depth 6");
    let best = e.bestmove();
    assert_legal(
        "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1",
        &best,
    );
    // Back to the built-in evaluation.
    e.send("setoption name EvalFile value <empty>");
    assert!(errors(&e.sync()).is_empty());
    e.quit();
}

#[test]
fn threads_and_hash_can_change_between_searches() {
    let mut e = HostProcess::start();
    e.send("setoption name Threads value 2");
    e.send("setoption name Hash value 16");
    e.send("setoption name Clear Hash");
    e.send("ucinewgame");
    e.send("position startpos");
    e.send("go depth 8");
    assert_legal(START, &e.bestmove());
    e.send("setoption name Threads value 1");
    e.send("go movetime 50");
    assert_legal(START, &e.bestmove());
    assert!(errors(&e.sync()).is_empty());
    e.quit();
}

#[test]
fn end_of_input_ends_the_engine_cleanly() {
    // Closing stdin while searching: the engine stops, answers and exits with success.
    let mut child = common::host()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("cannot start host");
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"setoption name Hash value 8\ngo infinite\n")
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.lines().any(|l| l.starts_with("bestmove ")), "{text}");
}

/// The words of UCI commands that random lines are made of.
const WORDS: [&str; 24] = [
    "uci",
    "isready",
    "position",
    "startpos",
    "fen",
    "moves",
    "go",
    "stop",
    "ponderhit",
    "setoption",
    "name",
    "value",
    "ucinewgame",
    "depth",
    "nodes",
    "movetime",
    "wtime",
    "btime",
    "winc",
    "binc",
    "movestogo",
    "infinite",
    "searchmoves",
    "ponder",
];

/// One of the words of `v`.
fn pick(rng: &mut ChaCha8Rng, v: &[&str]) -> String {
    v[rng.random_range(0..v.len())].to_string()
}

/// A FEN for a random `position fen` line: legal, illegal, incomplete or empty.
fn random_fen(rng: &mut ChaCha8Rng) -> String {
    pick(
        rng,
        &[
            "8/8/8/8/8/8/8/8 w - - 0 1",
            "4k3/8/8/8/8/8/8/4R1K1 w - - 0 1",
            "7k/6Q1/6K1/8/8/8/8/8 b - - 0 1",
            "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq -",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 11",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 junk",
            "8/8/8/8/8/8/8/K6k",
            "k7/8/8/8/8/8/8/7K w - - 200 1",
            "",
        ],
    )
}

/// A random `setoption` line: known and unknown options, good and bad values.
fn random_setoption(rng: &mut ChaCha8Rng) -> String {
    format!(
        "setoption name {} value {}",
        pick(
            rng,
            &[
                "Hash",
                "Threads",
                "Move Overhead",
                "Ponder",
                "EvalFile",
                "PluginDir",
                "Bogus"
            ]
        ),
        pick(
            rng,
            &[
                "1",
                "2",
                "0",
                "-5",
                "16",
                "true",
                "xyz",
                "",
                "/nonexistent",
                "<empty>"
            ]
        )
    )
}

/// One random command line: valid commands, near misses and junk.
fn random_command(rng: &mut ChaCha8Rng, legal: &[String]) -> Vec<u8> {
    let line = match rng.random_range(0..22) {
        0 => "uci".to_string(),
        1 => "ucinewgame".to_string(),
        2 => {
            let n = rng.random_range(0..=legal.len());
            format!("position startpos moves {}", legal[..n].join(" "))
        }
        3 => {
            let n = rng.random_range(0..=legal.len());
            let mut moves = legal[..n].to_vec();
            if !moves.is_empty() {
                let i = rng.random_range(0..moves.len());
                moves[i] = pick(
                    rng,
                    &["e2e5", "a1a1", "zz", "e7e8q", "0000", "e1g1", "", "h9h1"],
                );
            }
            format!("position startpos moves {}", moves.join(" "))
        }
        4 => format!("position fen {}", random_fen(rng)),
        5 => format!("go depth {}", rng.random_range(0..7)),
        6 => format!("go nodes {}", rng.random_range(0..5000)),
        7 => format!("go movetime {}", rng.random_range(-10..60)),
        8 => format!(
            "go wtime {} btime {} winc {} binc {}",
            rng.random_range(-100..300),
            rng.random_range(-100..300),
            rng.random_range(0..20),
            rng.random_range(0..20)
        ),
        9 => "go infinite".to_string(),
        10 => "stop".to_string(),
        11 => "isready".to_string(),
        12 => "ponderhit".to_string(),
        13 => random_setoption(rng),
        14 => "setoption name Clear Hash".to_string(),
        15 => {
            // Random words.
            let n = rng.random_range(1..8);
            (0..n)
                .map(|_| pick(rng, &WORDS))
                .collect::<Vec<_>>()
                .join(" ")
        }
        16 => {
            // Random printable junk.
            let n = rng.random_range(0..80);
            (0..n)
                .map(|_| rng.random_range(b' '..=b'~') as char)
                .collect()
        }
        17 => {
            // Raw bytes, invalid UTF-8 and control characters included (no newline).
            let n = rng.random_range(0..60);
            let bytes: Vec<u8> = (0..n)
                .map(|_| {
                    loop {
                        let b: u8 = rng.random();
                        if b != b'\n' {
                            break b;
                        }
                    }
                })
                .collect();
            let mut v = bytes;
            v.push(b'\n');
            return v;
        }
        18 => "go ponder wtime 200 btime 200".to_string(),
        19 => format!(
            "go depth 3 searchmoves {}",
            pick(rng, &["e2e4", "e2e4 d2d4", "a1a8", "junk"])
        ),
        20 => format!(
            "  \t {}  \r",
            pick(rng, &["isready", "go depth 1", "stop", "uci"])
        ),
        _ => "x".repeat(rng.random_range(1000..20_000)),
    };
    let mut v = line.into_bytes();
    v.push(b'\n');
    v
}

#[test]
fn random_and_adversarial_command_streams_never_kill_the_engine() {
    let legal: Vec<String> =
        "e2e4 e7e5 g1f3 b8c6 f1b5 a7a6 b5a4 g8f6 e1g1 f8e7 f1e1 b7b5 a4b3 d7d6 c2c3 e8g8"
            .split(' ')
            .map(String::from)
            .collect();
    for seed in 0..6u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut e = HostProcess::start();
        for round in 0..40 {
            let n = rng.random_range(1..12);
            let mut sent = Vec::new();
            // Random lines may be `isready` themselves: count the answers to wait for.
            let mut expected_readyok = 1;
            for _ in 0..n {
                let cmd = random_command(&mut rng, &legal);
                let text = String::from_utf8_lossy(&cmd);
                if text.split_whitespace().next() == Some("isready") {
                    expected_readyok += 1;
                }
                sent.push(text.chars().take(80).collect::<String>());
                e.send_bytes(&cmd);
            }
            // Whatever happened, the engine answers isready promptly.
            e.send("isready");
            let mut lines = Vec::new();
            for _ in 0..expected_readyok {
                lines.extend(e.until_within(
                    &format!("readyok after seed {seed} round {round} ({sent:?})"),
                    Duration::from_secs(20),
                    |l| l == "readyok",
                ));
            }
            for l in &lines {
                if let Some(m) = l.strip_prefix("bestmove ") {
                    let m = m.split_whitespace().next().unwrap();
                    assert!(
                        m == "0000" || m.len() == 4 || m.len() == 5,
                        "bad bestmove line {l}"
                    );
                }
            }
        }
        // Wind down: stop whatever runs (setoption waits for it), then a normal search works.
        e.send("stop");
        e.send("setoption name Threads value 1");
        e.sync();
        e.send("position startpos");
        e.send("go depth 3");
        let best = e.bestmove();
        assert_legal(START, &best);
        e.quit();
    }
}
