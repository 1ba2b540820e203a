//! UCI engine processes: how to start one (`EngineSpec`), and a blocking, timeout-aware client
//! (`EngineProcess`) for the few commands a match runner needs.
//!
//! The engine's stdout is read by a thread that forwards each line (with its arrival time) over a
//! channel, so every wait has a deadline (`recv_timeout`) and a silent or dead engine can never
//! hang the caller. The engine's stderr goes to /dev/null so it cannot scribble over a progress
//! bar.
//!
//! Engine specs follow cutechess-cli's `-engine` syntax: comma-separated `key=value` pairs
//! (`name=X,cmd=PATH,arg=--flag,option.Hash=16`). A bare path to a network file is shorthand
//! for this workspace's `host` engine with `EvalFile` set to it.

use std::fmt;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

/// How long `start` waits for `readyok` after the options (a network may load).
pub const DEFAULT_INIT_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest `start` waits for `uciok`.
const UCIOK_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a search waits for `bestmove` after sending `stop` on a timeout.
const STOP_GRACE: Duration = Duration::from_millis(1000);
/// How long `Drop` waits for the process to exit after `quit` before killing it.
const QUIT_GRACE: Duration = Duration::from_millis(300);

/// An engine spec that does not say how to start an engine. `Display`: one line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EngineSpecError {
    /// Nothing given.
    #[error("empty engine spec")]
    Empty,
    /// A shorthand path that is no file.
    #[error(
        "engine spec '{0}': no such file (expected a network file, an engine executable, or name=..,cmd=..)"
    )]
    NoSuchFile(String),
    /// A part without `=`.
    #[error("engine spec '{spec}': '{part}' is not key=value")]
    NotKeyValue {
        /// The spec.
        spec: String,
        /// The part.
        part: String,
    },
    /// A key that is none of the known ones.
    #[error("engine spec '{spec}': unknown key '{key}' (known: name, cmd, arg, net, option.NAME)")]
    UnknownKey {
        /// The spec.
        spec: String,
        /// The key.
        key: String,
    },
    /// Both `cmd=` and `net=`.
    #[error("engine spec '{0}': give either cmd= or net=, not both")]
    CommandAndNet(String),
    /// Neither `cmd=` nor `net=`.
    #[error("engine spec '{0}': no cmd= (or net=)")]
    NoCommand(String),
    /// `name=` with nothing after it.
    #[error("engine spec '{0}': empty name")]
    EmptyName(String),
    /// A network file that is not there.
    #[error("network {}: no such file", .0.display())]
    NoNetwork(PathBuf),
    /// This workspace's `host` engine is nowhere to be found.
    #[error("cannot find the host engine next to this program or on PATH (cargo build -p host)")]
    NoHost,
}

/// How to start one engine: a display name, a command with arguments, and UCI options to set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineSpec {
    /// The player's name in PGN files and tables (must be unique within a tournament).
    pub name: String,
    /// The executable.
    pub command: PathBuf,
    /// Command-line arguments.
    pub args: Vec<String>,
    /// UCI options sent with `setoption` after `uciok`, in order.
    pub options: Vec<(String, String)>,
}

impl EngineSpec {
    /// Parses a cutechess-like spec `name=X,cmd=PATH,arg=..,option.Hash=16` (also `net=FILE`:
    /// the `host` engine with `EvalFile=FILE`; `cmd=host` finds this workspace's `host`), or a
    /// shorthand: a path to an existing file that is not executable (a network) means the
    /// `host` engine with `EvalFile` set to it, an executable path means that engine.
    pub fn parse(text: &str) -> Result<EngineSpec, EngineSpecError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(EngineSpecError::Empty);
        }
        if !text.contains('=') {
            let path = Path::new(text);
            if !path.is_file() {
                return Err(EngineSpecError::NoSuchFile(text.to_string()));
            }
            if is_executable(path) {
                return Ok(EngineSpec {
                    name: stem(path),
                    command: path.to_path_buf(),
                    args: Vec::new(),
                    options: Vec::new(),
                });
            }
            return EngineSpec::host_with_net(path);
        }
        let mut name = None;
        let mut command = None;
        let mut net = None;
        let mut args = Vec::new();
        let mut options = Vec::new();
        for part in text.split(',') {
            let Some((key, value)) = part.split_once('=') else {
                return Err(EngineSpecError::NotKeyValue {
                    spec: text.to_string(),
                    part: part.to_string(),
                });
            };
            let key = key.trim();
            match key {
                "name" => name = Some(value.to_string()),
                "cmd" => command = Some(value.to_string()),
                "arg" => args.push(value.to_string()),
                "net" => net = Some(value.to_string()),
                _ => match key.strip_prefix("option.") {
                    Some(option) if !option.is_empty() => {
                        options.push((option.to_string(), value.to_string()))
                    }
                    _ => {
                        return Err(EngineSpecError::UnknownKey {
                            spec: text.to_string(),
                            key: key.to_string(),
                        });
                    }
                },
            }
        }
        let mut spec = match (command, net) {
            (Some(_), Some(_)) => return Err(EngineSpecError::CommandAndNet(text.to_string())),
            (None, None) => return Err(EngineSpecError::NoCommand(text.to_string())),
            (None, Some(net)) => EngineSpec::host_with_net(Path::new(&net))?,
            (Some(cmd), None) => {
                let command = if cmd == "host" {
                    find_host()?
                } else {
                    PathBuf::from(&cmd)
                };
                EngineSpec {
                    name: stem(Path::new(&cmd)),
                    command,
                    args: Vec::new(),
                    options: Vec::new(),
                }
            }
        };
        if let Some(name) = name {
            if name.trim().is_empty() {
                return Err(EngineSpecError::EmptyName(text.to_string()));
            }
            spec.name = name;
        }
        spec.args = args;
        spec.options.extend(options);
        Ok(spec)
    }

    /// The `host` engine of this workspace playing with the network `net` (`EvalFile`), named
    /// after the file's stem.
    pub fn host_with_net(net: &Path) -> Result<EngineSpec, EngineSpecError> {
        if !net.is_file() {
            return Err(EngineSpecError::NoNetwork(net.to_path_buf()));
        }
        let net = net.canonicalize().unwrap_or_else(|_| net.to_path_buf());
        let mut spec = EngineSpec::host(&stem(&net))?;
        spec.options
            .push(("EvalFile".to_string(), net.display().to_string()));
        Ok(spec)
    }

    /// The `host` engine of this workspace with its built-in evaluation (no `EvalFile`).
    pub fn host(name: &str) -> Result<EngineSpec, EngineSpecError> {
        Ok(EngineSpec {
            name: name.to_string(),
            command: find_host()?,
            args: Vec::new(),
            options: Vec::new(),
        })
    }
}

/// The file name without its extension, or the whole path when it has none.
fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "exe")
}

/// Finds this workspace's `host` engine: next to the running executable (its directory, or
/// the parent for `target/<profile>/deps` test binaries), else on `PATH`.
pub fn find_host() -> Result<PathBuf, EngineSpecError> {
    let exe_name = format!("host{}", std::env::consts::EXE_SUFFIX);
    if let Ok(exe) = std::env::current_exe()
        && let Some(dir) = exe.parent()
    {
        for candidate in [Some(dir), dir.parent()].into_iter().flatten() {
            let path = candidate.join(&exe_name);
            if is_executable(&path) {
                return Ok(path);
            }
        }
    }
    if let Some(paths) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&paths) {
            let path = dir.join(&exe_name);
            if is_executable(&path) {
                return Ok(path);
            }
        }
    }
    Err(EngineSpecError::NoHost)
}

/// A search limit for one `go` command.
#[derive(Clone, Debug, PartialEq)]
pub enum SearchLimit {
    /// `go nodes N`.
    Nodes(u64),
    /// `go depth N`.
    Depth(u32),
    /// `go movetime MS`.
    MoveTime(Duration),
    /// `go wtime .. btime .. winc .. binc ..`: the clocks as they stand before this move.
    Clock {
        /// White's remaining time.
        white: Duration,
        /// Black's remaining time.
        black: Duration,
        /// White's increment per move.
        white_inc: Duration,
        /// Black's increment per move.
        black_inc: Duration,
    },
}

impl SearchLimit {
    /// The arguments of `go` for this limit.
    pub fn go_command(&self) -> String {
        match self {
            SearchLimit::Nodes(n) => format!("go nodes {n}"),
            SearchLimit::Depth(d) => format!("go depth {d}"),
            SearchLimit::MoveTime(t) => format!("go movetime {}", t.as_millis()),
            SearchLimit::Clock {
                white,
                black,
                white_inc,
                black_inc,
            } => format!(
                "go wtime {} btime {} winc {} binc {}",
                white.as_millis(),
                black.as_millis(),
                white_inc.as_millis(),
                black_inc.as_millis()
            ),
        }
    }
}

/// An engine's evaluation, from the side to move's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    /// Centipawns.
    Cp(i32),
    /// Mate in this many moves (negative: the side to move gets mated).
    Mate(i32),
}

impl Score {
    /// The score as centipawns, mates mapped beyond any real evaluation (±100 000 minus the
    /// distance), for thresholds such as adjudication.
    pub fn as_cp(self) -> i32 {
        match self {
            Score::Cp(cp) => cp,
            Score::Mate(n) if n > 0 => 100_000 - n,
            Score::Mate(n) => -100_000 - n,
        }
    }

    /// The same score from the other side's point of view.
    pub fn negate(self) -> Score {
        match self {
            Score::Cp(cp) => Score::Cp(-cp),
            Score::Mate(n) => Score::Mate(-n),
        }
    }
}

impl fmt::Display for Score {
    /// cutechess style: `+0.31`, `-1.20`, `+M3`, `-M2`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Score::Cp(cp) => {
                let sign = if cp < 0 { '-' } else { '+' };
                let a = cp.unsigned_abs();
                write!(f, "{sign}{}.{:02}", a / 100, a % 100)
            }
            Score::Mate(n) => {
                let sign = if n < 0 { '-' } else { '+' };
                write!(f, "{sign}M{}", n.unsigned_abs())
            }
        }
    }
}

/// What one search returned.
#[derive(Clone, Debug, PartialEq)]
pub struct UciSearchResult {
    /// The move played, in UCI notation as the engine sent it.
    pub best_move: String,
    /// The score of the last `info ... score` line (exact scores preferred over bounds), from the
    /// side to move's point of view.
    pub score: Option<Score>,
    /// The depth of that line.
    pub depth: Option<u32>,
    /// The last reported node count.
    pub nodes: Option<u64>,
    /// Time from sending `go` to receiving `bestmove`.
    pub elapsed: Duration,
    /// The last reported principal variation.
    pub pv: Vec<String>,
}

/// Why talking to an engine failed. `Display` is one line naming the engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UciError {
    /// The process could not be started.
    Spawn {
        /// The engine's name.
        engine: String,
        /// The command that failed.
        command: PathBuf,
        /// The operating system's reason.
        reason: String,
    },
    /// The process exited or closed its pipes.
    Crashed {
        /// The engine's name.
        engine: String,
        /// What was going on, and the exit status when known.
        detail: String,
    },
    /// The engine did not answer in time.
    Timeout {
        /// The engine's name.
        engine: String,
        /// The answer that did not come (`uciok`, `readyok`, `bestmove`).
        waiting_for: String,
        /// How long we waited.
        after: Duration,
    },
    /// The engine answered something that breaks the protocol (or reported an error).
    Protocol {
        /// The engine's name.
        engine: String,
        /// What was wrong.
        message: String,
    },
}

impl fmt::Display for UciError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UciError::Spawn {
                engine,
                command,
                reason,
            } => write!(
                f,
                "engine {engine}: cannot start {}: {reason}",
                command.display()
            ),
            UciError::Crashed { engine, detail } => {
                write!(f, "engine {engine} crashed: {detail}")
            }
            UciError::Timeout {
                engine,
                waiting_for,
                after,
            } => write!(
                f,
                "engine {engine}: no {waiting_for} after {:.1}s",
                after.as_secs_f64()
            ),
            UciError::Protocol { engine, message } => write!(f, "engine {engine}: {message}"),
        }
    }
}

impl std::error::Error for UciError {}

/// A running UCI engine process. Dropping it sends `quit` and kills the process if needed.
pub struct EngineProcess {
    name: String,
    id_name: Option<String>,
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<(Instant, String)>,
    usable: bool,
    ready_timeout: Duration,
}

impl EngineProcess {
    /// Spawns the engine, sends `uci` and waits for `uciok`, sets the spec's options, and waits
    /// for `readyok` (each wait up to `DEFAULT_INIT_TIMEOUT`).
    pub fn start(spec: &EngineSpec) -> Result<EngineProcess, UciError> {
        EngineProcess::start_with_timeout(spec, DEFAULT_INIT_TIMEOUT)
    }

    /// `start` with another limit on each wait during start-up (and on later `isready`s).
    pub fn start_with_timeout(
        spec: &EngineSpec,
        timeout: Duration,
    ) -> Result<EngineProcess, UciError> {
        let mut child = Command::new(&spec.command)
            .args(&spec.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| UciError::Spawn {
                engine: spec.name.clone(),
                command: spec.command.clone(),
                reason: e.to_string(),
            })?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let (sender, lines) = mpsc::channel();
        // Detached: it ends when the engine's stdout closes (never joined, so a grandchild
        // holding the pipe open cannot block us).
        thread::Builder::new()
            .name(format!("uci-{}", spec.name))
            .spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if sender.send((Instant::now(), line)).is_err() {
                        break;
                    }
                }
            })
            .map_err(|e| UciError::Spawn {
                engine: spec.name.clone(),
                command: spec.command.clone(),
                reason: format!("cannot start a reader thread: {e}"),
            })?;
        let mut engine = EngineProcess {
            name: spec.name.clone(),
            id_name: None,
            child,
            stdin,
            lines,
            usable: true,
            ready_timeout: timeout,
        };
        engine.send("uci")?;
        // `uciok` comes at once from any UCI engine; no need to wait as long as for a network.
        let uci_timeout = timeout.min(UCIOK_TIMEOUT);
        let deadline = Instant::now() + uci_timeout;
        loop {
            let line = engine.read_line(deadline, "uciok (is it a UCI engine?)", uci_timeout)?;
            if line.trim() == "uciok" {
                break;
            }
            if let Some(id) = line.trim().strip_prefix("id name ") {
                engine.id_name = Some(id.trim().to_string());
            }
        }
        for (name, value) in &spec.options {
            engine.send(&format!("setoption name {name} value {value}"))?;
        }
        let errors = engine.sync()?;
        if let Some(error) = errors.first() {
            engine.usable = false;
            return Err(engine.protocol(format!("rejected its options: {error}")));
        }
        Ok(engine)
    }

    /// The name from the spec.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The name the engine reported with `id name`, if any.
    pub fn id_name(&self) -> Option<&str> {
        self.id_name.as_deref()
    }

    /// False once the engine crashed, broke the protocol or ignored `stop`: the caller should
    /// drop it and start a fresh one.
    pub fn is_usable(&self) -> bool {
        self.usable
    }

    /// Starts a new game: `ucinewgame`, then `isready` until `readyok`.
    pub fn new_game(&mut self) -> Result<(), UciError> {
        self.send("ucinewgame")?;
        self.sync().map(|_| ())
    }

    /// Searches `moves` (UCI) played from `start_fen` (the start position when `None`) under
    /// `limit`, waiting at most `timeout` for `bestmove`. On a timeout it sends `stop` and waits
    /// briefly for the late `bestmove` (so the engine stays usable) before returning the error.
    pub fn search(
        &mut self,
        start_fen: Option<&str>,
        moves: &[String],
        limit: &SearchLimit,
        timeout: Duration,
    ) -> Result<UciSearchResult, UciError> {
        self.drain()?;
        let mut position = match start_fen {
            Some(fen) => format!("position fen {fen}"),
            None => "position startpos".to_string(),
        };
        if !moves.is_empty() {
            position.push_str(" moves ");
            position.push_str(&moves.join(" "));
        }
        self.send(&position)?;
        self.send(&limit.go_command())?;
        let start = Instant::now();
        let deadline = start + timeout;
        let mut info = InfoState::default();
        loop {
            let (at, line) = match self.read_timed(deadline, "bestmove", timeout) {
                Ok(x) => x,
                Err(error @ UciError::Timeout { .. }) => {
                    self.stop_after_timeout();
                    return Err(error);
                }
                Err(error) => return Err(error),
            };
            let mut tokens = line.split_whitespace();
            match tokens.next() {
                Some("info") => info.update(&line),
                Some("bestmove") => {
                    let Some(best_move) = tokens.next() else {
                        self.usable = false;
                        return Err(self.protocol("'bestmove' without a move".to_string()));
                    };
                    return Ok(UciSearchResult {
                        best_move: best_move.to_string(),
                        score: info.exact.or(info.bound).map(|(s, _)| s),
                        depth: info.exact.or(info.bound).map(|(_, d)| d).or(info.depth),
                        nodes: info.nodes,
                        elapsed: at.saturating_duration_since(start),
                        pv: info.pv,
                    });
                }
                _ => {}
            }
        }
    }

    /// Sends `quit` and waits briefly for the process to exit (killing it otherwise).
    pub fn quit(self) {
        drop(self);
    }

    /// After a search timed out: `stop`, then wait a little for the late `bestmove`.
    fn stop_after_timeout(&mut self) {
        if self.send("stop").is_err() {
            return;
        }
        let deadline = Instant::now() + STOP_GRACE;
        loop {
            match self.read_line(deadline, "bestmove", STOP_GRACE) {
                Ok(line) if line.starts_with("bestmove") => return,
                Ok(_) => {}
                Err(_) => {
                    self.usable = false;
                    return;
                }
            }
        }
    }

    /// `isready` until `readyok`; returns the `info string error` lines seen meanwhile.
    fn sync(&mut self) -> Result<Vec<String>, UciError> {
        self.send("isready")?;
        let deadline = Instant::now() + self.ready_timeout;
        let mut errors = Vec::new();
        loop {
            let line = self.read_line(deadline, "readyok", self.ready_timeout)?;
            let line = line.trim();
            if line == "readyok" {
                return Ok(errors);
            }
            if let Some(error) = line.strip_prefix("info string error") {
                errors.push(error.trim_start_matches(':').trim().to_string());
            }
        }
    }

    /// Throws away lines left over from an earlier command (a late `bestmove`).
    fn drain(&mut self) -> Result<(), UciError> {
        loop {
            match self.lines.try_recv() {
                Ok(_) => {}
                Err(mpsc::TryRecvError::Empty) => return Ok(()),
                Err(mpsc::TryRecvError::Disconnected) => {
                    return Err(self.crashed("closed its output"));
                }
            }
        }
    }

    fn send(&mut self, line: &str) -> Result<(), UciError> {
        let result = writeln!(self.stdin, "{line}").and_then(|()| self.stdin.flush());
        result.map_err(|e| self.crashed(&format!("cannot send '{}': {e}", first_word(line))))
    }

    fn read_line(
        &mut self,
        deadline: Instant,
        waiting_for: &str,
        timeout: Duration,
    ) -> Result<String, UciError> {
        self.read_timed(deadline, waiting_for, timeout)
            .map(|(_, line)| line)
    }

    fn read_timed(
        &mut self,
        deadline: Instant,
        waiting_for: &str,
        timeout: Duration,
    ) -> Result<(Instant, String), UciError> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(left) {
            Ok(x) => Ok(x),
            Err(RecvTimeoutError::Timeout) => Err(UciError::Timeout {
                engine: self.name.clone(),
                waiting_for: waiting_for.to_string(),
                after: timeout,
            }),
            Err(RecvTimeoutError::Disconnected) => {
                Err(self.crashed(&format!("exited while we waited for {waiting_for}")))
            }
        }
    }

    /// A `Crashed` error with the exit status when the process has ended; marks it unusable.
    fn crashed(&mut self, what: &str) -> UciError {
        self.usable = false;
        // The pipe closes a moment before the process is reaped.
        let mut status = None;
        for _ in 0..20 {
            if let Ok(Some(s)) = self.child.try_wait() {
                status = Some(s);
                break;
            }
            thread::sleep(Duration::from_millis(5));
        }
        let detail = match status {
            Some(s) => format!("{what} ({s})"),
            None => what.to_string(),
        };
        UciError::Crashed {
            engine: self.name.clone(),
            detail,
        }
    }

    fn protocol(&self, message: String) -> UciError {
        UciError::Protocol {
            engine: self.name.clone(),
            message,
        }
    }
}

impl Drop for EngineProcess {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = writeln!(self.stdin, "quit").and_then(|()| self.stdin.flush());
            let deadline = Instant::now() + QUIT_GRACE;
            while Instant::now() < deadline {
                if let Ok(Some(_)) = self.child.try_wait() {
                    return;
                }
                thread::sleep(Duration::from_millis(5));
            }
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

fn first_word(line: &str) -> &str {
    line.split_whitespace().next().unwrap_or("")
}

/// What the `info` lines of one search said so far.
#[derive(Default)]
struct InfoState {
    /// The last exact score and its depth.
    exact: Option<(Score, u32)>,
    /// The last bound (lowerbound/upperbound) score and its depth.
    bound: Option<(Score, u32)>,
    depth: Option<u32>,
    nodes: Option<u64>,
    pv: Vec<String>,
}

impl InfoState {
    fn update(&mut self, line: &str) {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let mut score = None;
        let mut is_bound = false;
        let mut multipv = 1;
        let mut depth = None;
        let mut i = 1;
        while i < tokens.len() {
            let next = |k: usize| tokens.get(i + k).copied();
            match tokens[i] {
                "depth" => depth = next(1).and_then(|v| v.parse().ok()),
                "nodes" => {
                    if let Some(n) = next(1).and_then(|v| v.parse().ok()) {
                        self.nodes = Some(n);
                    }
                }
                "multipv" => multipv = next(1).and_then(|v| v.parse().ok()).unwrap_or(1),
                "score" => {
                    let value = next(2).and_then(|v| v.parse::<i32>().ok());
                    score = match (next(1), value) {
                        (Some("cp"), Some(v)) => Some(Score::Cp(v)),
                        (Some("mate"), Some(v)) => Some(Score::Mate(v)),
                        _ => None,
                    };
                    i += 2;
                }
                "lowerbound" | "upperbound" => is_bound = true,
                "pv" => {
                    if multipv == 1 {
                        self.pv = tokens[i + 1..].iter().map(|s| s.to_string()).collect();
                    }
                    break;
                }
                "string" => return,
                _ => {}
            }
            i += 1;
        }
        if multipv != 1 {
            return;
        }
        if depth.is_some() {
            self.depth = depth;
        }
        if let Some(score) = score {
            let entry = Some((score, depth.or(self.depth).unwrap_or(0)));
            if is_bound {
                self.bound = entry;
            } else {
                self.exact = entry;
                self.bound = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_key_value_specs() {
        let spec =
            EngineSpec::parse("name=sf,cmd=/usr/bin/stockfish,arg=-x,option.Hash=16").unwrap();
        assert_eq!(spec.name, "sf");
        assert_eq!(spec.command, PathBuf::from("/usr/bin/stockfish"));
        assert_eq!(spec.args, vec!["-x".to_string()]);
        assert_eq!(spec.options, vec![("Hash".into(), "16".into())]);
        let spec = EngineSpec::parse("cmd=/opt/engines/foo").unwrap();
        assert_eq!(spec.name, "foo");
        assert!(EngineSpec::parse("name=x,bogus=1,cmd=y").is_err());
        assert!(EngineSpec::parse("name=x").is_err());
        assert!(EngineSpec::parse("/no/such/file.nn").is_err());
    }

    #[test]
    fn formats_scores_like_cutechess() {
        assert_eq!(Score::Cp(31).to_string(), "+0.31");
        assert_eq!(Score::Cp(-120).to_string(), "-1.20");
        assert_eq!(Score::Cp(-5).to_string(), "-0.05");
        assert_eq!(Score::Mate(3).to_string(), "+M3");
        assert_eq!(Score::Mate(-2).to_string(), "-M2");
        assert!(Score::Mate(5).as_cp() > Score::Mate(6).as_cp());
        assert!(Score::Mate(-5).as_cp() < Score::Cp(-3000).as_cp());
    }

    #[test]
    fn info_lines_keep_the_last_exact_score() {
        let mut info = InfoState::default();
        info.update("info depth 5 seldepth 7 score cp 20 nodes 100 pv e2e4 e7e5");
        info.update("info depth 6 score cp 40 lowerbound nodes 200");
        assert_eq!(info.exact, Some((Score::Cp(20), 5)));
        assert_eq!(info.bound, Some((Score::Cp(40), 6)));
        info.update("info depth 6 score mate 3 nodes 300 pv d1h5");
        assert_eq!(info.exact, Some((Score::Mate(3), 6)));
        assert_eq!(info.bound, None);
        assert_eq!(info.nodes, Some(300));
        assert_eq!(info.pv, vec!["d1h5".to_string()]);
        info.update("info string score cp 999");
        assert_eq!(info.exact, Some((Score::Mate(3), 6)));
    }

    #[test]
    fn go_commands() {
        assert_eq!(SearchLimit::Nodes(300).go_command(), "go nodes 300");
        assert_eq!(
            SearchLimit::MoveTime(Duration::from_millis(100)).go_command(),
            "go movetime 100"
        );
        let clock = SearchLimit::Clock {
            white: Duration::from_secs(10),
            black: Duration::from_millis(9500),
            white_inc: Duration::from_millis(100),
            black_inc: Duration::from_millis(100),
        };
        assert_eq!(
            clock.go_command(),
            "go wtime 10000 btime 9500 winc 100 binc 100"
        );
    }
}
