//! Puzzle accuracy: how many moves of Lichess puzzle lines an engine finds.
//!
//! # Input
//!
//! CSV lines `FEN,moves,rating,themes` (`shared/data/puzzles.csv`): the FEN is the
//! position *before* the opponent's move; `moves` are UCI moves separated by spaces that
//! alternate the opponent's move and the expected answer (opponent, answer, opponent, answer,
//! ...). A first line whose first field is `FEN` is taken as a header. Every FEN and move is
//! checked when reading; a bad line gives a one-line error with the file and line number.
//!
//! # Scoring (the thesis's rule)
//!
//! The thesis reports *move accuracy*: "the percentage of moves correctly predicted by the
//! engine in Lichess puzzles. Each puzzle may contain multiple moves" (section 6, evaluation).
//! So every answer of every line is scored, not only the first: for each answer the engine
//! searches the position reached by the puzzle's own line (start FEN + the puzzle moves
//! before it, the opponent's replies included), so one wrong answer does not change the
//! positions of the later ones. An answer is correct when it is the expected move, or any
//! legal move that checkmates (the data README's rule, as on Lichess). A mate other than the
//! expected move ends the puzzle (the game is over), and the answers it skips count as
//! correct, so every engine is scored on the same number of moves.
//!
//! Reported: move accuracy = correct answers / answers; puzzles solved (every answer correct);
//! both by rating band (`< 1500`, `1500–1999`, `≥ 2000`).
//!
//! # Running
//!
//! [`solve_all`] starts one engine process per worker thread; workers take the next puzzle
//! index from a shared counter, send `ucinewgame` before each puzzle (so results do not depend
//! on which worker got which puzzle), and results are returned in input order. With a node or
//! depth limit and a single-threaded deterministic engine the results are reproducible.

use std::fmt;
use std::fs;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use shakmaty::uci::UciMove;
use shakmaty::{Chess, Move, Position};

use crate::uci::{EngineProcess, EngineSpec, SearchLimit, UciError};

/// One puzzle.
#[derive(Clone, Debug, PartialEq)]
pub struct Puzzle {
    /// 1-based line in the source file.
    pub line: usize,
    /// Position before the opponent's first move.
    pub fen: String,
    /// UCI moves: opponent, answer, opponent, answer, ...
    pub moves: Vec<String>,
    /// Lichess puzzle rating.
    pub rating: u32,
    /// Themes, space-separated.
    pub themes: String,
}

impl Puzzle {
    /// Number of answers the engine is asked for.
    pub fn answers(&self) -> usize {
        self.moves.len() / 2
    }
}

/// Parses one CSV line `FEN,moves,rating,themes` (themes optional), checking the FEN and that
/// every move is legal in turn.
pub fn parse_puzzle_line(text: &str, line: usize) -> Result<Puzzle, PuzzleError> {
    parse_line(text, line).map_err(|reason| PuzzleError {
        file: String::new(),
        line,
        reason,
    })
}

/// A puzzle file, or a line of one, that is not puzzles. `Display`: `FILE:LINE: REASON`
/// (`FILE: REASON` for the file itself, `REASON` for a line read alone).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render())]
pub struct PuzzleError {
    /// The file (empty for a line read alone).
    pub file: String,
    /// 1-based line number (0: the file itself).
    pub line: usize,
    /// What is wrong.
    pub reason: String,
}

impl PuzzleError {
    fn render(&self) -> String {
        match (self.file.as_str(), self.line) {
            ("", _) => self.reason.clone(),
            (file, 0) => format!("{file}: {}", self.reason),
            (file, line) => format!("{file}:{line}: {}", self.reason),
        }
    }
}

/// [`parse_puzzle_line`], its reason as a clause.
fn parse_line(text: &str, line: usize) -> Result<Puzzle, String> {
    let fields: Vec<&str> = text.split(',').map(str::trim).collect();
    if fields.len() < 3 {
        return Err(format!(
            "expected `FEN,moves,rating,themes`, found {} field(s)",
            fields.len()
        ));
    }
    let fen = fields[0].to_string();
    let mut pos = position_from_fen(&fen)?;
    let moves: Vec<String> = fields[1].split_whitespace().map(str::to_string).collect();
    if moves.len() < 2 {
        return Err(format!(
            "a puzzle needs the opponent's move and at least one answer, found {} move(s)",
            moves.len()
        ));
    }
    for (i, m) in moves.iter().enumerate() {
        let mv = parse_uci(&pos, m).ok_or_else(|| format!("move {} `{m}` is not legal", i + 1))?;
        pos.play_unchecked(mv);
    }
    let rating = fields[2]
        .parse::<u32>()
        .map_err(|_| format!("rating `{}` is not a whole number", fields[2]))?;
    Ok(Puzzle {
        line,
        fen,
        moves,
        rating,
        themes: fields.get(3).map(|s| s.to_string()).unwrap_or_default(),
    })
}

/// Parses a whole puzzle file's text; `name` (the file) prefixes errors: `NAME:LINE: message`.
pub fn parse_puzzles(text: &str, name: &str) -> Result<Vec<Puzzle>, PuzzleError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim().trim_start_matches('\u{feff}');
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if out.is_empty()
            && trimmed
                .split(',')
                .next()
                .is_some_and(|f| f.eq_ignore_ascii_case("fen"))
        {
            continue;
        }
        out.push(parse_line(trimmed, i + 1).map_err(|reason| PuzzleError {
            file: name.to_string(),
            line: i + 1,
            reason,
        })?);
    }
    Ok(out)
}

/// Reads a puzzle file (see [`parse_puzzles`]).
pub fn read_puzzles(path: &Path) -> Result<Vec<Puzzle>, PuzzleError> {
    let text = fs::read_to_string(path).map_err(|e| PuzzleError {
        file: path.display().to_string(),
        line: 0,
        reason: e.to_string(),
    })?;
    parse_puzzles(&text, &path.display().to_string())
}

fn position_from_fen(fen: &str) -> Result<Chess, String> {
    let setup =
        chess_text::parse_fen(fen).map_err(|e| format!("bad FEN `{fen}`: {}", e.reason()))?;
    chess_text::legal_position(&setup, fen)
        .map_err(|e| format!("illegal position `{fen}`: {}", e.reason()))
}

fn parse_uci(pos: &Chess, text: &str) -> Option<Move> {
    text.parse::<UciMove>().ok()?.to_move(pos).ok()
}

/// How one answer was judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PuzzleVerdict {
    /// The expected move.
    Expected,
    /// Another move that checkmates.
    Mate,
    /// A legal move that is neither.
    Wrong,
    /// Not a legal move (or not UCI).
    Illegal,
}

impl PuzzleVerdict {
    /// Whether the answer counts as correct.
    pub fn is_correct(self) -> bool {
        matches!(self, PuzzleVerdict::Expected | PuzzleVerdict::Mate)
    }
}

/// Judges the answer `played` (UCI) in `pos` against the expected move (UCI): the expected
/// move (castling in either UCI form), or any checkmating move, is correct.
pub fn judge_move(pos: &Chess, expected: &str, played: &str) -> PuzzleVerdict {
    let Some(mv) = parse_uci(pos, played) else {
        return PuzzleVerdict::Illegal;
    };
    if parse_uci(pos, expected) == Some(mv) {
        return PuzzleVerdict::Expected;
    }
    let mut after = pos.clone();
    after.play_unchecked(mv);
    if after.is_checkmate() {
        PuzzleVerdict::Mate
    } else {
        PuzzleVerdict::Wrong
    }
}

/// One puzzle's outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct PuzzleResult {
    /// Index in the input.
    pub index: usize,
    /// The puzzle's line in its file.
    pub line: usize,
    /// Puzzle rating.
    pub rating: u32,
    /// The engine's answers in order (fewer than `answers` after an alternative mate).
    pub played: Vec<String>,
    /// The verdicts of those answers.
    pub verdicts: Vec<PuzzleVerdict>,
    /// Answers scored (the puzzle's answer count).
    pub answers: usize,
    /// Correct answers (skipped answers after an alternative mate count as correct).
    pub correct: usize,
}

impl PuzzleResult {
    /// Every answer correct.
    pub fn solved(&self) -> bool {
        self.correct == self.answers
    }
}

/// Scores one puzzle with `answer`, which gets the puzzle moves played so far (UCI, from the
/// puzzle's FEN) and returns the engine's move in UCI. See the module docs for the rule.
pub fn score_puzzle<E>(
    puzzle: &Puzzle,
    index: usize,
    mut answer: impl FnMut(&[String]) -> Result<String, E>,
) -> Result<PuzzleResult, E> {
    let mut pos = position_from_fen(&puzzle.fen).expect("puzzle checked when read");
    let mut result = PuzzleResult {
        index,
        line: puzzle.line,
        rating: puzzle.rating,
        played: Vec::new(),
        verdicts: Vec::new(),
        answers: puzzle.answers(),
        correct: 0,
    };
    for (i, m) in puzzle.moves.iter().enumerate() {
        if i % 2 == 1 {
            let played = answer(&puzzle.moves[..i])?;
            let verdict = judge_move(&pos, m, &played);
            result.played.push(played);
            result.verdicts.push(verdict);
            if verdict.is_correct() {
                result.correct += 1;
            }
            if verdict == PuzzleVerdict::Mate {
                result.correct = result.answers - (result.verdicts.len() - result.correct);
                break;
            }
        }
        let mv = parse_uci(&pos, m).expect("puzzle checked when read");
        pos.play_unchecked(mv);
    }
    Ok(result)
}

/// Totals over a group of puzzles.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally {
    /// Label of the group (e.g. a rating band).
    pub label: String,
    /// Puzzles.
    pub puzzles: usize,
    /// Puzzles with every answer correct.
    pub solved: usize,
    /// Answers.
    pub answers: usize,
    /// Correct answers.
    pub correct: usize,
}

impl Tally {
    /// Move accuracy, 0..1 (0 without answers).
    pub fn accuracy(&self) -> f64 {
        if self.answers == 0 {
            0.0
        } else {
            self.correct as f64 / self.answers as f64
        }
    }

    /// Share of puzzles solved, 0..1.
    pub fn solved_rate(&self) -> f64 {
        if self.puzzles == 0 {
            0.0
        } else {
            self.solved as f64 / self.puzzles as f64
        }
    }

    fn add(&mut self, r: &PuzzleResult) {
        self.puzzles += 1;
        self.solved += usize::from(r.solved());
        self.answers += r.answers;
        self.correct += r.correct;
    }
}

/// The rating bands of the report: label and half-open range.
pub const BANDS: [(&str, u32, u32); 3] = [
    ("< 1500", 0, 1500),
    ("1500-1999", 1500, 2000),
    (">= 2000", 2000, u32::MAX),
];

/// All results of a run, in input order.
#[derive(Clone, Debug, PartialEq)]
pub struct PuzzleReport {
    /// The engine's name.
    pub engine: String,
    /// The search limit, as the `go` command.
    pub limit: String,
    /// Per-puzzle results.
    pub results: Vec<PuzzleResult>,
}

impl PuzzleReport {
    /// Totals over all puzzles.
    pub fn total(&self) -> Tally {
        let mut t = Tally {
            label: "all".to_string(),
            ..Tally::default()
        };
        self.results.iter().for_each(|r| t.add(r));
        t
    }

    /// Move accuracy over all puzzles, 0..1.
    pub fn accuracy(&self) -> f64 {
        self.total().accuracy()
    }

    /// Totals by rating band ([`BANDS`]).
    pub fn by_band(&self) -> Vec<Tally> {
        BANDS
            .iter()
            .map(|&(label, lo, hi)| {
                let mut t = Tally {
                    label: label.to_string(),
                    ..Tally::default()
                };
                self.results
                    .iter()
                    .filter(|r| r.rating >= lo && r.rating < hi)
                    .for_each(|r| t.add(r));
                t
            })
            .collect()
    }

    /// Writes one CSV line per puzzle:
    /// `index,line,rating,answers,correct,solved,played` (`played`: the answers, space-separated).
    pub fn write_csv(&self, out: &mut impl Write) -> std::io::Result<()> {
        writeln!(out, "index,line,rating,answers,correct,solved,played")?;
        for r in &self.results {
            writeln!(
                out,
                "{},{},{},{},{},{},{}",
                r.index,
                r.line,
                r.rating,
                r.answers,
                r.correct,
                u8::from(r.solved()),
                r.played.join(" ")
            )?;
        }
        Ok(())
    }
}

impl fmt::Display for PuzzleReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = self.total();
        writeln!(
            f,
            "Engine {} ({}), {} puzzles",
            self.engine, self.limit, t.puzzles
        )?;
        writeln!(
            f,
            "Move accuracy {:.2}% ({}/{} answers); puzzles solved {:.2}% ({}/{})",
            100.0 * t.accuracy(),
            t.correct,
            t.answers,
            100.0 * t.solved_rate(),
            t.solved,
            t.puzzles
        )?;
        writeln!(
            f,
            "{:<10} {:>7} {:>9} {:>9}",
            "rating", "puzzles", "move acc", "solved"
        )?;
        for b in self.by_band() {
            writeln!(
                f,
                "{:<10} {:>7} {:>8.2}% {:>8.2}%",
                b.label,
                b.puzzles,
                100.0 * b.accuracy(),
                100.0 * b.solved_rate()
            )?;
        }
        Ok(())
    }
}

/// How long one search may take before it is abandoned.
fn search_timeout(limit: &SearchLimit) -> Duration {
    match limit {
        SearchLimit::MoveTime(t) => *t * 2 + Duration::from_secs(5),
        SearchLimit::Clock { white, black, .. } => *white.max(black) + Duration::from_secs(5),
        SearchLimit::Nodes(_) | SearchLimit::Depth(_) => Duration::from_secs(120),
    }
}

/// Scores one puzzle with a running engine (`ucinewgame` first).
fn run_puzzle(
    engine: &mut EngineProcess,
    puzzle: &Puzzle,
    index: usize,
    limit: &SearchLimit,
    timeout: Duration,
) -> Result<PuzzleResult, String> {
    engine.new_game().map_err(|e| e.to_string())?;
    score_puzzle(puzzle, index, |moves| {
        engine
            .search(Some(&puzzle.fen), moves, limit, timeout)
            .map(|r| r.best_move)
            .map_err(|e| e.to_string())
    })
}

/// Why a puzzle run stopped: an engine would not start, a puzzle failed twice (the second
/// time with a fresh engine), or a worker died.
#[derive(Debug, thiserror::Error)]
pub enum SolveError {
    /// The engine process could not be started.
    #[error(transparent)]
    Start(#[from] UciError),
    /// A puzzle failed, and again after a restart.
    #[error("puzzle at line {line}: {first}; retry: {retry}")]
    Puzzle {
        /// The puzzle's line in its file.
        line: usize,
        /// The first failure.
        first: String,
        /// The failure with a fresh engine.
        retry: String,
    },
    /// A worker thread panicked or left a puzzle unrun.
    #[error("{0}")]
    Worker(&'static str),
}

/// Runs `spec` on every puzzle with `threads` engine processes; see the module docs.
pub fn solve_all(
    spec: &EngineSpec,
    puzzles: &[Puzzle],
    limit: SearchLimit,
    threads: usize,
    progress: bool,
) -> Result<PuzzleReport, SolveError> {
    let threads = crate::workers::workers(threads).min(puzzles.len().max(1));
    let bar = if progress {
        let bar = ProgressBar::new(puzzles.len() as u64);
        bar.set_style(
            ProgressStyle::with_template(
                "{elapsed_precise} [{bar:40}] {pos}/{len} puzzles {per_sec} ETA {eta} {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar
    } else {
        ProgressBar::hidden()
    };
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let results: Mutex<Vec<Option<PuzzleResult>>> = Mutex::new(vec![None; puzzles.len()]);
    let correct = AtomicUsize::new(0);
    let answered = AtomicUsize::new(0);
    let timeout = search_timeout(&limit);
    let errors: Vec<SolveError> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let work = || -> Result<(), SolveError> {
                        let mut engine = EngineProcess::start(spec)?;
                        loop {
                            if failed.load(Ordering::Relaxed) {
                                return Ok(());
                            }
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(puzzle) = puzzles.get(i) else {
                                return Ok(());
                            };
                            let result = match run_puzzle(&mut engine, puzzle, i, &limit, timeout) {
                                Ok(r) => r,
                                Err(first) => {
                                    // One retry with a fresh engine (it may have crashed).
                                    engine = EngineProcess::start(spec)?;
                                    run_puzzle(&mut engine, puzzle, i, &limit, timeout).map_err(
                                        |retry| SolveError::Puzzle {
                                            line: puzzle.line,
                                            first,
                                            retry,
                                        },
                                    )?
                                }
                            };
                            let c = correct.fetch_add(result.correct, Ordering::Relaxed)
                                + result.correct;
                            let n = answered.fetch_add(result.answers, Ordering::Relaxed)
                                + result.answers;
                            bar.set_message(format!(
                                "move acc {:.1}%",
                                100.0 * c as f64 / n.max(1) as f64
                            ));
                            bar.inc(1);
                            results
                                .lock()
                                .map_err(|_| SolveError::Worker("results lock poisoned"))?[i] =
                                Some(result);
                        }
                    };
                    let outcome = work();
                    if outcome.is_err() {
                        failed.store(true, Ordering::Relaxed);
                    }
                    outcome
                })
            })
            .collect();
        handles
            .into_iter()
            .filter_map(|h| match h.join() {
                Ok(Ok(())) => None,
                Ok(Err(e)) => {
                    failed.store(true, Ordering::Relaxed);
                    Some(e)
                }
                Err(_) => {
                    failed.store(true, Ordering::Relaxed);
                    Some(SolveError::Worker("a puzzle worker panicked"))
                }
            })
            .collect()
    });
    bar.finish_and_clear();
    if let Some(e) = errors.into_iter().next() {
        return Err(e);
    }
    let results = results
        .into_inner()
        .map_err(|_| SolveError::Worker("results lock poisoned"))?
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or(SolveError::Worker("some puzzles were not run"))?;
    Ok(PuzzleReport {
        engine: spec.name.clone(),
        limit: limit.go_command(),
        results,
    })
}
