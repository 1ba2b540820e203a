//! Tournaments: round robin or gauntlet, game pairs (each opening twice, colours reversed),
//! games in parallel, PGN appended as games finish, and per-player failure counts.
//!
//! Each worker thread owns its engine processes, starts them when first needed, reuses them
//! between games (`ucinewgame`) and restarts one after it crashed or stopped answering. Games
//! are scheduled round by round: in round `r` every pairing plays opening `r` (cycling through
//! the chosen openings) twice, first with the first-listed player as White.

use std::collections::{HashMap, VecDeque};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, mpsc};
use std::thread;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use crate::game::{GameRecord, GameSettings, Termination, play_game};
use crate::openings::{self, OpeningOrder};
use crate::pgn::{self, Outcome};
use crate::uci::{EngineProcess, EngineSpec};

/// Who plays whom.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum TournamentFormat {
    /// Every player against every other.
    #[default]
    RoundRobin,
    /// The first player against each of the others (the others do not meet).
    Gauntlet,
    /// Only these pairings `(first, second)` of player indices (an A/B comparison of several
    /// pairs at once, with all the games spent on the pairs that matter).
    Pairs(Vec<(usize, usize)>),
}

/// Everything a tournament needs.
#[derive(Clone, Debug)]
pub struct TournamentConfig {
    /// The players; names must be unique.
    pub players: Vec<EngineSpec>,
    /// Round robin or gauntlet.
    pub format: TournamentFormat,
    /// Opening positions (FEN) to choose from; empty: the standard start position.
    pub openings: Vec<String>,
    /// File order or shuffled with `seed`.
    pub opening_order: OpeningOrder,
    /// Game pairs per pairing (each pair: one opening, both colours).
    pub rounds: usize,
    /// Limits, adjudication, time margin.
    pub game: GameSettings,
    /// Games played at the same time (one worker thread each, with its own engines; 0: one per
    /// core, [`crate::workers::workers`]).
    pub concurrency: usize,
    /// PGN file the games are appended to as they finish, in schedule order (a game waits
    /// for those before it).
    pub pgn: Option<PathBuf>,
    /// The PGN `Event` tag.
    pub event: String,
    /// Seed for the opening shuffle.
    pub seed: u64,
    /// Play only batch `i` of `n` (`(i, n)`; `(0, 1)`: all): the game pairs
    /// `[i·P/n, (i+1)·P/n)` of the schedule's P, numbered as in the whole tournament, so that
    /// batches played apart (on several machines) merge into exactly the whole tournament.
    pub batch: (usize, usize),
}

impl TournamentConfig {
    /// A round robin of `players` under `game`, one pair per pairing from the start position,
    /// one game at a time, no PGN.
    pub fn new(players: Vec<EngineSpec>, game: GameSettings) -> TournamentConfig {
        TournamentConfig {
            players,
            format: TournamentFormat::RoundRobin,
            openings: Vec::new(),
            opening_order: OpeningOrder::Sequential,
            rounds: 1,
            game,
            concurrency: 1,
            pgn: None,
            event: "arena tournament".to_string(),
            seed: 0,
            batch: (0, 1),
        }
    }

    /// The pairings `(first, second)` by player index, in schedule order.
    pub fn pairings(&self) -> Vec<(usize, usize)> {
        let n = self.players.len();
        match &self.format {
            TournamentFormat::RoundRobin => (0..n)
                .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
                .collect(),
            TournamentFormat::Gauntlet => (1..n).map(|b| (0, b)).collect(),
            TournamentFormat::Pairs(pairs) => pairs.clone(),
        }
    }

    /// The number of games the tournament plays (all batches).
    pub fn total_games(&self) -> usize {
        self.pairings().len() * self.rounds * 2
    }

    /// The game pairs of batch `i` of `n`: `[i·P/n, (i+1)·P/n)` of the P pairs.
    pub fn batch_pairs(&self, (i, n): (usize, usize)) -> std::ops::Range<usize> {
        let pairs = self.pairings().len() * self.rounds;
        i * pairs / n.max(1)..(i + 1) * pairs / n.max(1)
    }
}

/// One finished game of a tournament (serializable: the batches of a tournament played apart
/// keep theirs until they are merged).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TournamentGame {
    /// 0-based number in schedule order.
    pub number: usize,
    /// 0-based game pair: the two games of one opening between the same two players.
    pub pair: usize,
    /// White's player index.
    pub white: usize,
    /// Black's player index.
    pub black: usize,
    /// The game.
    pub record: GameRecord,
}

/// How often a player's engine failed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Failures {
    /// Games lost by a crash or protocol error.
    pub crashes: u32,
    /// Games lost on time.
    pub time_forfeits: u32,
    /// Games lost by an illegal move.
    pub illegal_moves: u32,
    /// Games lost by not answering a fixed-nodes/depth search.
    pub stalls: u32,
}

impl Failures {
    /// Games lost by any failure.
    pub fn total(&self) -> u32 {
        self.crashes + self.time_forfeits + self.illegal_moves + self.stalls
    }

    /// Counts a game lost by `termination`, if it is a failure.
    fn count(&mut self, termination: Termination) {
        match termination {
            Termination::Crash => self.crashes += 1,
            Termination::TimeForfeit => self.time_forfeits += 1,
            Termination::IllegalMove => self.illegal_moves += 1,
            Termination::Stalled => self.stalls += 1,
            _ => {}
        }
    }
}

/// The failures of two sets of games together (a tournament played in batches).
impl std::ops::AddAssign for Failures {
    fn add_assign(&mut self, other: Failures) {
        self.crashes += other.crashes;
        self.time_forfeits += other.time_forfeits;
        self.illegal_moves += other.illegal_moves;
        self.stalls += other.stalls;
    }
}

/// W/D/L of `first` against `second`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PairingResult {
    /// Player index.
    pub first: usize,
    /// Player index.
    pub second: usize,
    /// Wins of `first`.
    pub wins: u32,
    /// Draws.
    pub draws: u32,
    /// Losses of `first`.
    pub losses: u32,
}

impl PairingResult {
    /// `first`'s points.
    pub fn points(&self) -> f64 {
        f64::from(self.wins) + 0.5 * f64::from(self.draws)
    }

    /// Games played.
    pub fn games(&self) -> u32 {
        self.wins + self.draws + self.losses
    }
}

/// The result of `run`.
#[derive(Clone, Debug, Default)]
pub struct TournamentOutcome {
    /// Player names by index.
    pub players: Vec<String>,
    /// Games in completion order.
    pub games: Vec<TournamentGame>,
    /// Failures by player index.
    pub failures: Vec<Failures>,
}

impl TournamentOutcome {
    /// Points and games of a player.
    pub fn score(&self, player: usize) -> (f64, u32) {
        let mut points = 0.0;
        let mut games = 0;
        for g in &self.games {
            let Some(white_score) = g.record.outcome.white_score() else {
                continue;
            };
            if g.white == player {
                points += white_score;
                games += 1;
            } else if g.black == player {
                points += 1.0 - white_score;
                games += 1;
            }
        }
        (points, games)
    }

    /// W/D/L of every pair of players that met, `first < second`, ordered by indices.
    pub fn pairing_results(&self) -> Vec<PairingResult> {
        let mut map: HashMap<(usize, usize), PairingResult> = HashMap::new();
        for g in &self.games {
            let Some(white_score) = g.record.outcome.white_score() else {
                continue;
            };
            let (first, second, score) = if g.white < g.black {
                (g.white, g.black, white_score)
            } else {
                (g.black, g.white, 1.0 - white_score)
            };
            let entry = map.entry((first, second)).or_insert(PairingResult {
                first,
                second,
                ..PairingResult::default()
            });
            if score == 1.0 {
                entry.wins += 1;
            } else if score == 0.0 {
                entry.losses += 1;
            } else {
                entry.draws += 1;
            }
        }
        let mut results: Vec<PairingResult> = map.into_values().collect();
        results.sort_by_key(|r| (r.first, r.second));
        results
    }

    /// Pentanomial counts of `player` against `opponent` over complete game pairs: how many
    /// pairs scored 0, ½, 1, 1½, 2 points for `player`.
    pub fn pentanomial(&self, player: usize, opponent: usize) -> [u32; 5] {
        let mut pairs: HashMap<usize, Vec<f64>> = HashMap::new();
        for g in &self.games {
            let Some(white_score) = g.record.outcome.white_score() else {
                continue;
            };
            if (g.white, g.black) == (player, opponent) {
                pairs.entry(g.pair).or_default().push(white_score);
            } else if (g.white, g.black) == (opponent, player) {
                pairs.entry(g.pair).or_default().push(1.0 - white_score);
            }
        }
        let mut counts = [0; 5];
        for scores in pairs.values().filter(|s| s.len() == 2) {
            counts[((scores[0] + scores[1]) * 2.0).round() as usize] += 1;
        }
        counts
    }
}

/// One scheduled game.
struct GameJob {
    number: usize,
    pair: usize,
    white: usize,
    black: usize,
    opening: Option<String>,
}

/// Why a tournament did not finish. `Display`: one line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TournamentError {
    /// A configuration that makes no tournament.
    #[error("{0}")]
    Config(String),
    /// An engine that does not start or answer.
    #[error("{0}")]
    EngineProcess(String),
    /// The PGN file cannot be opened or written.
    #[error("{0}")]
    Pgn(String),
    /// A game that could not be played (a bad opening, an engine lost).
    #[error("{0}")]
    Game(String),
}

/// Plays the tournament. Engines are first started once each to check they work (errors name
/// the engine); then `concurrency` workers play the games. With `progress`, an indicatif bar on
/// stderr shows games done, rate, ETA and the leader. Errors: bad configuration, an engine that
/// cannot be started, an unwritable PGN file.
pub fn run(
    config: &TournamentConfig,
    progress: bool,
) -> Result<TournamentOutcome, TournamentError> {
    check_config(config).map_err(TournamentError::Config)?;
    for spec in &config.players {
        EngineProcess::start(spec)
            .map_err(|e| TournamentError::EngineProcess(e.to_string()))?
            .quit();
    }
    let mut pgn_file = match &config.pgn {
        Some(path) => Some(
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| TournamentError::Pgn(format!("PGN file {}: {e}", path.display())))?,
        ),
        None => None,
    };
    let jobs = schedule(config);
    let total = jobs.len();
    // The PGN gets the games in schedule order whatever order they finish in: each waits
    // here until those before it are written.
    let mut unwritten: VecDeque<usize> = jobs.iter().map(|j| j.number).collect();
    let mut finished: HashMap<usize, TournamentGame> = HashMap::new();
    let queue = Mutex::new(jobs);
    let abort = AtomicBool::new(false);
    let bar = progress_bar(progress, total);
    let mut outcome = TournamentOutcome {
        players: config.players.iter().map(|p| p.name.clone()).collect(),
        games: Vec::with_capacity(total),
        failures: vec![Failures::default(); config.players.len()],
    };
    let mut error = None;
    thread::scope(|scope| {
        let (sender, receiver) = mpsc::channel();
        for _ in 0..crate::workers::workers(config.concurrency).min(total.max(1)) {
            let sender = sender.clone();
            let (queue, abort) = (&queue, &abort);
            scope.spawn(move || worker(config, queue, abort, sender));
        }
        drop(sender);
        for message in receiver {
            let game = match message {
                Ok(game) => game,
                Err(e) => {
                    abort.store(true, Ordering::Relaxed);
                    error.get_or_insert(TournamentError::Game(e));
                    continue;
                }
            };
            if let Some(file) = pgn_file.as_mut() {
                finished.insert(game.number, game.clone());
                while let Some(next) = unwritten.front().and_then(|n| finished.remove(n)) {
                    unwritten.pop_front();
                    if let Err(e) = append_game(file, config, &next) {
                        abort.store(true, Ordering::Relaxed);
                        error.get_or_insert(TournamentError::Pgn(format!(
                            "writing the PGN file: {e}"
                        )));
                    }
                }
            }
            count_failure(&mut outcome.failures, &game);
            outcome.games.push(game);
            bar.inc(1);
            bar.set_message(leader_message(&outcome));
        }
    });
    bar.finish_and_clear();
    // Schedule order, whatever order the workers finished in.
    outcome.games.sort_by_key(|g| g.number);
    match error {
        Some(e) => Err(e),
        None => Ok(outcome),
    }
}

fn check_config(config: &TournamentConfig) -> Result<(), String> {
    if config.players.len() < 2 {
        return Err("a tournament needs at least two engines".to_string());
    }
    for (i, a) in config.players.iter().enumerate() {
        if config.players[..i].iter().any(|b| b.name == a.name) {
            return Err(format!(
                "two engines are named '{}'; give one another name (name=...)",
                a.name
            ));
        }
    }
    if let TournamentFormat::Pairs(pairs) = &config.format {
        let n = config.players.len();
        if pairs.is_empty() {
            return Err("a tournament of pairs needs at least one pair".to_string());
        }
        if let Some(&(a, b)) = pairs.iter().find(|&&(a, b)| a >= n || b >= n || a == b) {
            return Err(format!(
                "pair ({a}, {b}) is not two different engines of the {n}"
            ));
        }
    }
    if config.rounds == 0 {
        return Err("rounds must be at least 1".to_string());
    }
    let (i, n) = config.batch;
    if n == 0 || i >= n {
        return Err(format!(
            "batch {i} of {n}: the index must be below the count"
        ));
    }
    Ok(())
}

/// The games in schedule order: round by round, pairing by pairing, two games per pair.
fn schedule(config: &TournamentConfig) -> VecDeque<GameJob> {
    let chosen = openings::select(
        &config.openings,
        config.rounds,
        config.opening_order,
        config.seed,
    );
    let pairings = config.pairings();
    let mut jobs = VecDeque::new();
    let mut number = 0;
    for round in 0..config.rounds {
        let opening = (!chosen.is_empty()).then(|| chosen[round % chosen.len()].clone());
        for &(a, b) in &pairings {
            let pair = number / 2;
            for (white, black) in [(a, b), (b, a)] {
                jobs.push_back(GameJob {
                    number,
                    pair,
                    white,
                    black,
                    opening: opening.clone(),
                });
                number += 1;
            }
        }
    }
    let batch = config.batch_pairs(config.batch);
    jobs.retain(|j| batch.contains(&j.pair));
    jobs
}

/// Plays jobs until the queue is empty or the tournament is aborted.
fn worker(
    config: &TournamentConfig,
    queue: &Mutex<VecDeque<GameJob>>,
    abort: &AtomicBool,
    results: mpsc::Sender<Result<TournamentGame, String>>,
) {
    let mut engines: HashMap<usize, EngineProcess> = HashMap::new();
    while !abort.load(Ordering::Relaxed) {
        let Some(job) = queue.lock().map(|mut q| q.pop_front()).unwrap_or(None) else {
            break;
        };
        for player in [job.white, job.black] {
            if let std::collections::hash_map::Entry::Vacant(slot) = engines.entry(player) {
                match EngineProcess::start(&config.players[player]) {
                    Ok(engine) => {
                        slot.insert(engine);
                    }
                    Err(e) => {
                        let _ = results.send(Err(e.to_string()));
                        return;
                    }
                }
            }
        }
        let mut white = engines.remove(&job.white).expect("started above");
        let mut black = engines.remove(&job.black).expect("started above");
        let played = play_game(
            [&mut white, &mut black],
            job.opening.as_deref(),
            &config.game,
        );
        // A crashed or unresponsive engine is dropped (killed) and restarted for the next game.
        for (player, engine) in [(job.white, white), (job.black, black)] {
            if engine.is_usable() {
                engines.insert(player, engine);
            }
        }
        let message = played
            .map_err(|e| format!("opening: {e}"))
            .map(|record| TournamentGame {
                number: job.number,
                pair: job.pair,
                white: job.white,
                black: job.black,
                record,
            });
        let failed = message.is_err();
        if results.send(message).is_err() || failed {
            return;
        }
    }
}

/// Writes one whole game and flushes, so an interrupted run leaves a valid PGN file.
/// Writes `games` to the PGN file `path` (replacing it) in the order given, as the tournament
/// writes them: the merge of batches played apart.
pub fn write_pgn(
    path: &Path,
    config: &TournamentConfig,
    games: &[TournamentGame],
) -> std::io::Result<()> {
    let mut file = File::create(path)?;
    for game in games {
        append_game(&mut file, config, game)?;
    }
    Ok(())
}

fn append_game(
    file: &mut File,
    config: &TournamentConfig,
    game: &TournamentGame,
) -> std::io::Result<()> {
    let round = format!("{}.{}", game.pair + 1, game.number % 2 + 1);
    let mut text = Vec::new();
    pgn::write_game(&mut text, &game.record.to_pgn(&config.event, &round))?;
    file.write_all(&text)?;
    file.flush()
}

fn count_failure(failures: &mut [Failures], game: &TournamentGame) {
    let loser = match game.record.outcome {
        Outcome::WhiteWins => game.black,
        Outcome::BlackWins => game.white,
        _ => return,
    };
    failures[loser].count(game.record.termination);
}

fn progress_bar(enabled: bool, total: usize) -> ProgressBar {
    if !enabled {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total as u64);
    let style =
        ProgressStyle::with_template("{bar:30} {pos}/{len} games  {per_sec}  ETA {eta}  {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.enable_steady_tick(Duration::from_millis(500));
    bar
}

/// `leader: NAME 3.5/6`.
fn leader_message(outcome: &TournamentOutcome) -> String {
    let best = (0..outcome.players.len())
        .map(|p| (p, outcome.score(p)))
        .max_by(|a, b| {
            let rate = |(points, games): (f64, u32)| points / f64::from(games.max(1));
            rate(a.1).total_cmp(&rate(b.1))
        });
    match best {
        Some((p, (points, games))) => {
            format!("leader: {} {points}/{games}", outcome.players[p])
        }
        None => String::new(),
    }
}
