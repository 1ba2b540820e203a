//! The UCI protocol: `host` with no subcommand reads commands from standard input and answers
//! on standard output.
//!
//! The reading thread never waits for a search: `isready` is answered at once, also while
//! searching; `stop` and `ponderhit` reach the running search through the [`Engine`]. The
//! search runs on its own thread ([`Engine::start_search`], and helpers for `Threads` > 1) and
//! prints its `info` lines and the `bestmove`. A command that changes the engine's state (`position`, `go`, `setoption`,
//! `ucinewgame`) first stops a running search and waits for its `bestmove`.
//!
//! Bad input never ends the engine and never half-applies: the command is refused with
//! `info string error: ...` and the previous state is kept. That covers illegal positions (no
//! king, the side not to move in check, ...), garbage around a FEN, illegal or malformed moves,
//! unknown commands and options, bad option values and networks that cannot be loaded. A FEN
//! without its clock fields gets the defaults (0 and 1). `go` in a position without legal moves
//! answers `bestmove 0000`; `go depth 0` searches one ply.
//!
//! Beyond the protocol, `d` prints the current position (`info string fen ...`) and the
//! evaluation in use (`info string eval ...`), for tests and debugging.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Move, Position};

use super::eval_source::EvalSource;
use super::facade::Engine;
use super::limits::{Ablation, Limits};
use super::position::accept;
use super::search::SearchResult;
use super::time::{self, Clock};
use super::tt::HashError;
use super::uci_format::{info_line, uci_move, uci_score};
use super::zobrist;

/// Default transposition table size in MiB (the thesis engine's 128 MB).
pub const DEFAULT_HASH_MB: usize = 128;
/// Largest accepted `Hash`.
pub const MAX_HASH_MB: usize = 65_536;
/// Largest accepted `Threads`.
pub const MAX_THREADS: usize = 256;
/// Default `Move Overhead` in milliseconds.
pub const DEFAULT_MOVE_OVERHEAD_MS: u64 = 20;
/// Largest accepted `Move Overhead`.
pub const MAX_MOVE_OVERHEAD_MS: u64 = 5_000;

/// Where the engine's output lines go (standard output in the binary; a buffer in tests).
pub type Output = Arc<dyn Fn(&str) + Send + Sync>;

/// Output to standard output, one flushed line per call (errors such as a closed pipe are
/// ignored: the engine keeps reading until `quit` or the end of its input).
pub fn stdout_output() -> Output {
    let lock = Arc::new(Mutex::new(()));
    Arc::new(move |line: &str| {
        let _guard = lock.lock().unwrap_or_else(|e| e.into_inner());
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    })
}

/// The option values the [`Engine`] does not hold.
#[derive(Clone, Debug)]
struct Options {
    move_overhead_ms: u64,
    ponder: bool,
    eval_file: String,
    plugin_dir: String,
    ablation: Ablation,
}

/// The engine behind the protocol: options, the current position and game history, and the
/// [`Engine`] (table, histories, evaluation, the running search if any).
pub struct UciEngine {
    out: Output,
    options: Options,
    root: Chess,
    /// Hashes of the game's positions before `root`, oldest first.
    history: Vec<u64>,
    engine: Engine,
    default_plugin_dir: Option<PathBuf>,
}

fn is_empty_value(v: &str) -> bool {
    let v = v.trim();
    v.is_empty() || v == "<empty>"
}

impl UciEngine {
    /// An engine writing to `out`; `plugin_dir` is the default for `PluginDir` (the host's
    /// `--plugin-dir`). Fails only if the default hash table cannot be allocated.
    pub fn new(out: Output, plugin_dir: Option<PathBuf>) -> Result<Self, HashError> {
        Ok(UciEngine {
            out,
            options: Options {
                move_overhead_ms: DEFAULT_MOVE_OVERHEAD_MS,
                ponder: false,
                eval_file: String::new(),
                plugin_dir: String::new(),
                ablation: Ablation::default(),
            },
            root: Chess::default(),
            history: Vec::new(),
            engine: Engine::new(DEFAULT_HASH_MB, 1, EvalSource::Builtin)?,
            default_plugin_dir: plugin_dir,
        })
    }

    fn send(&self, line: &str) {
        (self.out)(line);
    }

    fn error(&self, message: &str) {
        self.send(&format!("info string error: {message}"));
    }

    /// Reads commands from `input` until `quit` or its end, then stops any search.
    pub fn run(&mut self, mut input: impl BufRead) {
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match input.read_until(b'\n', &mut buf) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
            let line = String::from_utf8_lossy(&buf);
            if !self.handle(&line) {
                break;
            }
        }
        self.engine.finish();
    }

    /// Handles one command line; `false` after `quit`.
    pub fn handle(&mut self, line: &str) -> bool {
        let line = line.trim();
        let mut parts = line.split_whitespace();
        let Some(command) = parts.next() else {
            return true;
        };
        let rest: Vec<&str> = parts.collect();
        match command {
            "uci" => self.uci(),
            "isready" => self.send("readyok"),
            "debug" | "register" => {}
            "setoption" => {
                self.engine.finish();
                self.setoption(line);
            }
            "ucinewgame" => self.engine.new_game(),
            "position" => {
                self.engine.finish();
                match parse_position(&rest) {
                    Ok((root, history)) => {
                        self.root = root;
                        self.history = history;
                    }
                    Err(e) => self.error(&e),
                }
            }
            "go" => {
                self.engine.finish();
                self.go(&rest);
            }
            "stop" => self.engine.stop(),
            "ponderhit" => self.engine.ponderhit(),
            "quit" => return false,
            "d" => {
                let fen = Fen::from_position(&self.root, EnPassantMode::Legal);
                self.send(&format!("info string fen {fen}"));
                self.send(&format!(
                    "info string eval {}",
                    self.engine.eval().describe()
                ));
            }
            _ => self.error(&format!("unknown command '{}'", truncate(command, 40))),
        }
        true
    }

    fn uci(&self) {
        self.send(&format!("id name host {}", env!("CARGO_PKG_VERSION")));
        self.send("id author the nnue-features authors");
        self.send(&format!(
            "option name Hash type spin default {DEFAULT_HASH_MB} min 1 max {MAX_HASH_MB}"
        ));
        self.send(&format!(
            "option name Threads type spin default 1 min 1 max {MAX_THREADS}"
        ));
        self.send(&format!(
            "option name Move Overhead type spin default {DEFAULT_MOVE_OVERHEAD_MS} min 0 max {MAX_MOVE_OVERHEAD_MS}"
        ));
        self.send("option name Clear Hash type button");
        self.send("option name Ponder type check default false");
        self.send("option name EvalFile type string default <empty>");
        self.send("option name PluginDir type string default <empty>");
        self.send("option name Ablation type string default <empty>");
        self.send("uciok");
    }

    fn setoption(&mut self, line: &str) {
        let Some((name, value)) = parse_setoption(line) else {
            self.error("malformed setoption (expected 'setoption name <id> [value <x>]')");
            return;
        };
        let key = name.to_ascii_lowercase();
        let spin = |max: u64, min: u64| -> Result<u64, String> {
            let v = value.as_deref().unwrap_or("").trim();
            let n: u64 = v.parse().map_err(|_| {
                format!(
                    "option {name} needs an integer value, got '{}'",
                    truncate(v, 40)
                )
            })?;
            if n < min || n > max {
                return Err(format!(
                    "option {name} must be between {min} and {max}, got {n}"
                ));
            }
            Ok(n)
        };
        match key.as_str() {
            "hash" => match spin(MAX_HASH_MB as u64, 1) {
                Ok(mb) => {
                    if let Err(e) = self.engine.resize_hash(mb as usize) {
                        self.error(&e.to_string());
                    }
                }
                Err(e) => self.error(&e),
            },
            "threads" => match spin(MAX_THREADS as u64, 1) {
                Ok(n) => self.engine.set_threads(n as usize),
                Err(e) => self.error(&e),
            },
            "move overhead" => match spin(MAX_MOVE_OVERHEAD_MS, 0) {
                Ok(ms) => self.options.move_overhead_ms = ms,
                Err(e) => self.error(&e),
            },
            "clear hash" => self.engine.clear_hash(),
            "ablation" => match Ablation::parse(value.as_deref().unwrap_or("")) {
                Ok(set) => self.options.ablation = set,
                Err(e) => self.error(&format!("option Ablation: {e}")),
            },
            "ponder" => match value.as_deref().map(str::trim) {
                Some("true") => self.options.ponder = true,
                Some("false") => self.options.ponder = false,
                other => self.error(&format!(
                    "option Ponder needs true or false, got '{}'",
                    truncate(other.unwrap_or(""), 40)
                )),
            },
            "evalfile" => {
                let v = value.unwrap_or_default();
                self.set_eval_file(v.trim(), &self.options.plugin_dir.clone());
            }
            "plugindir" => {
                let v = value.unwrap_or_default().trim().to_string();
                let dir = if is_empty_value(&v) { String::new() } else { v };
                if !self.options.eval_file.is_empty() {
                    // Rebind the network to the new directory's plugins (or keep everything).
                    let file = self.options.eval_file.clone();
                    if self.set_eval_file(&file, &dir) {
                        self.options.plugin_dir = dir;
                    }
                } else {
                    self.options.plugin_dir = dir;
                }
            }
            _ => self.error(&format!("unknown option '{}'", truncate(&name, 60))),
        }
    }

    /// Loads `file` (empty: the built-in evaluation) with the plugins of `plugin_dir`; on
    /// failure reports and keeps the current evaluation. Returns whether it succeeded.
    fn set_eval_file(&mut self, file: &str, plugin_dir: &str) -> bool {
        if is_empty_value(file) {
            self.engine.set_eval(EvalSource::Builtin);
            self.options.eval_file = String::new();
            self.send(&format!(
                "info string using {}",
                self.engine.eval().describe()
            ));
            return true;
        }
        let dir = if plugin_dir.is_empty() {
            self.default_plugin_dir.clone()
        } else {
            Some(PathBuf::from(plugin_dir))
        };
        match EvalSource::load(std::path::Path::new(file), dir.as_deref()) {
            Ok(source) => {
                self.engine.set_eval(source);
                self.options.eval_file = file.to_string();
                self.send(&format!(
                    "info string using {}",
                    self.engine.eval().describe()
                ));
                true
            }
            Err(e) => {
                self.error(&format!(
                    "{e}; keeping the {}",
                    self.engine.eval().describe()
                ));
                false
            }
        }
    }

    fn go(&mut self, args: &[&str]) {
        let (limits, ponder) = self.parse_go(args);
        let report_out = Arc::clone(&self.out);
        let out = Arc::clone(&self.out);
        let root = self.root.clone();
        let started = self.engine.start_search(
            self.root.clone(),
            self.history.clone(),
            limits,
            ponder,
            move |it, c, t| report_out(&info_line(it, c, t)),
            move |outcome| match outcome {
                Some(result) => send_result(&out, &result),
                None => {
                    out("info string error: the search failed; playing the first legal move");
                    out(&first_legal_bestmove(&root));
                }
            },
        );
        if let Err(e) = started {
            self.error(&format!("cannot start the search thread: {e}"));
            self.send(&first_legal_bestmove(&self.root));
        }
    }

    /// The limits of `go ARGS`; malformed parts are reported and ignored.
    fn parse_go(&self, args: &[&str]) -> (Limits, bool) {
        const KEYWORDS: [&str; 12] = [
            "wtime",
            "btime",
            "winc",
            "binc",
            "movestogo",
            "depth",
            "nodes",
            "mate",
            "movetime",
            "infinite",
            "ponder",
            "searchmoves",
        ];
        let mut limits = Limits {
            ablation: self.options.ablation,
            ..Limits::default()
        };
        let mut ponder = false;
        let (mut wtime, mut btime, mut winc, mut binc) = (None, None, 0i64, 0i64);
        let mut movestogo = None;
        let mut movetime = None;
        let mut i = 0;
        while i < args.len() {
            let key = args[i];
            i += 1;
            let mut value = |what: &str| -> Option<String> {
                match args.get(i) {
                    Some(v) if !KEYWORDS.contains(v) => {
                        i += 1;
                        Some(v.to_string())
                    }
                    _ => {
                        self.error(&format!("go {what} needs a value"));
                        None
                    }
                }
            };
            fn num<T: std::str::FromStr>(
                engine: &UciEngine,
                key: &str,
                v: Option<String>,
            ) -> Option<T> {
                let v = v?;
                match v.parse::<T>() {
                    Ok(n) => Some(n),
                    Err(_) => {
                        engine.error(&format!(
                            "go {key}: '{}' is not a valid number",
                            truncate(&v, 40)
                        ));
                        None
                    }
                }
            }
            match key {
                "wtime" => wtime = num::<i64>(self, key, value(key)).or(wtime),
                "btime" => btime = num::<i64>(self, key, value(key)).or(btime),
                "winc" => winc = num::<i64>(self, key, value(key)).unwrap_or(winc),
                "binc" => binc = num::<i64>(self, key, value(key)).unwrap_or(binc),
                "movestogo" => movestogo = num::<u32>(self, key, value(key)).or(movestogo),
                "depth" => limits.depth = num::<u32>(self, key, value(key)).or(limits.depth),
                "nodes" => limits.nodes = num::<u64>(self, key, value(key)).or(limits.nodes),
                "mate" => limits.mate = num::<u32>(self, key, value(key)).or(limits.mate),
                "movetime" => movetime = num::<i64>(self, key, value(key)).or(movetime),
                "infinite" => limits.infinite = true,
                "ponder" => ponder = true,
                "searchmoves" => {
                    while i < args.len() && !KEYWORDS.contains(&args[i]) {
                        let text = args[i];
                        i += 1;
                        match text
                            .parse::<UciMove>()
                            .ok()
                            .and_then(|u| u.to_move(&self.root).ok())
                        {
                            Some(m) => limits.search_moves.push(m),
                            None => self.error(&format!(
                                "searchmoves: '{}' is not a legal move here; ignored",
                                truncate(text, 20)
                            )),
                        }
                    }
                }
                other => self.error(&format!(
                    "go: unknown parameter '{}' ignored",
                    truncate(other, 40)
                )),
            }
        }
        if let Some(n) = limits.mate
            && limits.depth.is_none()
        {
            // A mate in n moves is 2n - 1 plies: search a little deeper, then give up.
            limits.depth = Some(n.saturating_mul(2).saturating_add(4));
        }
        let white = self.root.turn() == shakmaty::Color::White;
        let (time, inc) = if white { (wtime, winc) } else { (btime, binc) };
        if let Some(t) = movetime {
            limits.time = Some(time::fixed(t, self.options.move_overhead_ms));
        } else if let Some(t) = time {
            limits.time = Some(time::budget(
                Clock {
                    time: t,
                    inc,
                    moves_to_go: movestogo,
                },
                self.options.move_overhead_ms,
            ));
        }
        if limits.time.is_none()
            && limits.depth.is_none()
            && limits.nodes.is_none()
            && limits.mate.is_none()
        {
            // A bare `go` (or only the other side's clock): search until `stop`.
            limits.infinite = true;
        }
        (limits, ponder)
    }
}

/// Sends the end of a search: the errors met on the way, `info depth 0` with the score when no
/// iteration completed (a root without legal moves), then `bestmove` (with `ponder` if known).
fn send_result(out: &Output, result: &SearchResult) {
    for e in &result.errors {
        out(&format!("info string error: {e}"));
    }
    if result.last.depth == 0 {
        out(&format!(
            "info depth 0 score {}",
            uci_score(result.last.score)
        ));
    }
    let mut line = format!("bestmove {}", uci_move(result.best.as_ref()));
    if let Some(p) = result.ponder {
        line.push_str(&format!(" ponder {}", uci_move(Some(&p))));
    }
    out(&line);
}

/// The `bestmove` line of the first legal move of `root` (`0000` if none), for when no search
/// could run.
fn first_legal_bestmove(root: &Chess) -> String {
    let first = root.legal_moves().first().copied();
    format!("bestmove {}", uci_move(first.as_ref()))
}

/// Splits `setoption name <id> [value <x>]` into the name and the value (kept verbatim).
fn parse_setoption(line: &str) -> Option<(String, Option<String>)> {
    let rest = line.trim().strip_prefix("setoption")?.trim_start();
    let rest = rest.strip_prefix("name")?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let words: Vec<&str> = rest.split_whitespace().collect();
    let value_at = words.iter().position(|w| *w == "value");
    let (name_words, value) = match value_at {
        Some(k) => {
            // The value is the raw text after the first " value ", so paths keep their spaces.
            let after = rest
                .match_indices("value")
                .find(|(i, _)| {
                    let before_ok = rest[..*i].ends_with(char::is_whitespace);
                    let after_ok =
                        rest[i + 5..].is_empty() || rest[i + 5..].starts_with(char::is_whitespace);
                    before_ok && after_ok
                })
                .map(|(i, _)| rest[i + 5..].trim().to_string())
                .unwrap_or_default();
            (&words[..k], Some(after))
        }
        None => (&words[..], None),
    };
    if name_words.is_empty() {
        return None;
    }
    Some((name_words.join(" "), value))
}

/// Parses the arguments of `position`: the root and the hashes of the positions before it.
pub(crate) fn parse_position(args: &[&str]) -> Result<(Chess, Vec<u64>), String> {
    let (mut pos, rest) = match args.first() {
        Some(&"startpos") => (Chess::default(), &args[1..]),
        Some(&"fen") => {
            let end = args
                .iter()
                .position(|t| *t == "moves")
                .unwrap_or(args.len());
            let fields = &args[1..end];
            if fields.is_empty() {
                return Err("position fen needs a FEN".into());
            }
            if fields.len() > 6 {
                return Err(format!(
                    "invalid FEN: unexpected '{}' after the six FEN fields",
                    truncate(fields[6], 40)
                ));
            }
            let text = fields.join(" ");
            let setup = chess_text::parse_fen(&text).map_err(|e| e.to_string())?;
            let pos = accept(setup.position::<Chess>(CastlingMode::Standard))
                .map_err(|e| format!("illegal position '{}': {e}", truncate(&text, 100)))?;
            (pos, &args[end..])
        }
        Some(other) => {
            return Err(format!(
                "position needs 'startpos' or 'fen', got '{}'",
                truncate(other, 40)
            ));
        }
        None => return Err("position needs 'startpos' or 'fen'".into()),
    };
    let mut history = Vec::new();
    match rest.first() {
        None => {}
        Some(&"moves") => {
            for (i, text) in rest[1..].iter().enumerate() {
                let m: Move = text
                    .parse::<UciMove>()
                    .ok()
                    .and_then(|u| u.to_move(&pos).ok())
                    .ok_or_else(|| {
                        format!(
                            "illegal move '{}' (move {} of the list) in position '{}'",
                            truncate(text, 20),
                            i + 1,
                            Fen::from_position(&pos, EnPassantMode::Legal)
                        )
                    })?;
                history.push(zobrist::hash(&pos));
                pos.play_unchecked(m);
            }
        }
        Some(other) => {
            return Err(format!(
                "unexpected '{}' in position (expected 'moves')",
                truncate(other, 40)
            ));
        }
    }
    Ok((pos, history))
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max).collect();
        t.push_str("...");
        t
    }
}

/// Runs the UCI loop on standard input and output.
pub fn run_stdio(plugin_dir: Option<PathBuf>) -> Result<(), HashError> {
    let mut engine = UciEngine::new(stdout_output(), plugin_dir)?;
    let stdin = std::io::stdin();
    engine.run(stdin.lock());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capture() -> (Output, Arc<Mutex<Vec<String>>>) {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let l2 = Arc::clone(&lines);
        (
            Arc::new(move |s: &str| l2.lock().unwrap().push(s.to_string())),
            lines,
        )
    }

    fn engine() -> (UciEngine, Arc<Mutex<Vec<String>>>) {
        let (out, lines) = capture();
        let mut e = UciEngine::new(out, None).unwrap();
        e.handle("setoption name Hash value 4");
        (e, lines)
    }

    fn take(lines: &Arc<Mutex<Vec<String>>>) -> Vec<String> {
        std::mem::take(&mut *lines.lock().unwrap())
    }

    #[test]
    fn setoption_parsing() {
        assert_eq!(
            parse_setoption("setoption name Move Overhead value 30"),
            Some(("Move Overhead".into(), Some("30".into())))
        );
        assert_eq!(
            parse_setoption("setoption name Clear Hash"),
            Some(("Clear Hash".into(), None))
        );
        assert_eq!(
            parse_setoption("setoption name EvalFile value /a b/c.nn"),
            Some(("EvalFile".into(), Some("/a b/c.nn".into())))
        );
        assert_eq!(parse_setoption("setoption name"), None);
        assert_eq!(parse_setoption("setoption value 3"), None);
    }

    #[test]
    fn positions_parse_and_bad_ones_are_refused() {
        let (p, h) = parse_position(&["startpos", "moves", "e2e4", "e7e5", "g1f3"]).unwrap();
        assert_eq!(h.len(), 3);
        assert_eq!(p.turn(), shakmaty::Color::Black);
        // Clock fields missing: defaults.
        let (p, _) = parse_position(&["fen", "8/8/8/8/8/2k5/8/K7", "w", "-", "-"]).unwrap();
        assert_eq!(p.halfmoves(), 0);
        for bad in [
            vec![],
            vec!["nonsense"],
            vec!["fen"],
            vec!["fen", "garbage"],
            vec!["fen", "8/8/8/8/8/8/8/8", "w", "-", "-", "0", "1"],
            vec![
                "fen",
                "8/8/8/8/8/2k5/8/K7",
                "w",
                "-",
                "-",
                "0",
                "1",
                "extra",
            ],
            vec!["fen", "4k3/8/8/8/8/8/8/4R1K1", "w", "-", "-", "0", "1"],
            vec!["startpos", "moves", "e2e5"],
            vec!["startpos", "moves", "e2e4", "xyzzy"],
            vec!["startpos", "junk", "e2e4"],
        ] {
            assert!(parse_position(&bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn bad_position_keeps_the_previous_one() {
        let (mut e, lines) = engine();
        e.handle("position startpos moves e2e4");
        e.handle("position fen 8/8/8/8/8/8/8/8 w - - 0 1");
        e.handle("d");
        let out = take(&lines);
        assert!(
            out.iter()
                .any(|l| l.starts_with("info string error: illegal position"))
        );
        assert!(
            out.iter()
                .any(|l| l.contains("4P3/8/PPPP1PPP/RNBQKBNR b KQkq")),
            "{out:?}"
        );
    }

    #[test]
    fn go_in_checkmate_answers_0000() {
        let (mut e, lines) = engine();
        e.handle("position fen 7k/6Q1/6K1/8/8/8/8/8 b - - 0 1");
        e.handle("go depth 3");
        e.engine.finish();
        let out = take(&lines);
        assert_eq!(out.last().unwrap(), "bestmove 0000");
        assert!(out.iter().any(|l| l == "info depth 0 score mate 0"));
    }

    /// Waits (at most 30 s) for the running search's own `bestmove`, without stopping it.
    fn wait_for_bestmove(lines: &Arc<Mutex<Vec<String>>>) -> String {
        let start = std::time::Instant::now();
        while start.elapsed() < std::time::Duration::from_secs(30) {
            if let Some(l) = lines
                .lock()
                .unwrap()
                .iter()
                .find(|l| l.starts_with("bestmove"))
            {
                return l.clone();
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        panic!("no bestmove within 30 s");
    }

    /// `go movetime T` searches T (UCI: "search exactly T ms"): the clock's stopping rules
    /// (stability scaling, no new iteration past 60%) once ended this search after ~0.13 s.
    #[test]
    fn go_movetime_uses_the_whole_time() {
        let (mut e, lines) = engine();
        e.handle("setoption name Move Overhead value 0");
        e.handle("position fen r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3");
        let start = std::time::Instant::now();
        e.handle("go movetime 300");
        let bestmove = wait_for_bestmove(&lines);
        let took = start.elapsed();
        // A lower bound only: a loaded machine can make the search later, never earlier.
        assert!(took >= std::time::Duration::from_millis(295), "{took:?}");
        assert!(bestmove.starts_with("bestmove "));
    }

    /// A movetime search still ends at once when more time cannot change the move.
    #[test]
    fn go_movetime_ends_early_with_one_legal_move_or_a_proven_mate() {
        for (fen, expected) in [
            // The king's only move.
            ("7k/8/8/8/8/8/5r2/7K w - - 0 1", "bestmove h1g1"),
            // Mate in one.
            ("6k1/5ppp/8/8/8/8/8/K2R4 w - - 0 1", "bestmove d1d8"),
        ] {
            let (mut e, lines) = engine();
            e.handle(&format!("position fen {fen}"));
            e.handle("go movetime 60000");
            let bestmove = wait_for_bestmove(&lines);
            assert!(bestmove.starts_with(expected), "{fen}: {bestmove}");
        }
    }

    #[test]
    fn go_depth_zero_still_plays_a_move() {
        let (mut e, lines) = engine();
        e.handle("position startpos");
        e.handle("go depth 0");
        e.engine.finish();
        let out = take(&lines);
        let last = out.last().unwrap();
        assert!(
            last.starts_with("bestmove ") && last != "bestmove 0000",
            "{out:?}"
        );
    }

    #[test]
    fn unknown_commands_and_options_are_reported() {
        let (mut e, lines) = engine();
        e.handle("frobnicate");
        e.handle("setoption name NoSuchOption value 3");
        e.handle("setoption name Hash value lots");
        e.handle("setoption name Threads value 0");
        e.handle("setoption name EvalFile value /nonexistent/net.nn");
        e.handle("isready");
        let out = take(&lines);
        assert_eq!(
            out.iter()
                .filter(|l| l.starts_with("info string error:"))
                .count(),
            5,
            "{out:?}"
        );
        assert_eq!(out.last().unwrap(), "readyok");
        assert_eq!(e.engine.hash_mb(), 4);
        assert_eq!(e.engine.threads(), 1);
        assert!(matches!(e.engine.eval(), EvalSource::Builtin));
    }
}
