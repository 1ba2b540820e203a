//! Training data by self-play (`trainer gensfen`), after Stockfish's `gensfen`.
//!
//! Games are played by a search, the *player* (the host's own, with a network or the built-in
//! evaluation, or an external UCI engine at a node limit); every position of a game inside the
//! write window is stored with a score and the player's best move (side to move's view) and,
//! once the game is over, the game's result from the side to move's view (`.bin` / `.binpack`
//! convention; the text formats hold no result).
//!
//! The score is the player's own search's, or, with a label budget (`label`), the *labeller's*:
//! the host's engine with its own network (`label_net`, default the player's), scoring each
//! written position once the game is over by its static evaluation, its quiescence search or a
//! search of N nodes or depth D ([`host::engine::label`]), with the game's earlier positions
//! for repetitions. Scores are centipawns: a Stockfish `.nnue` speaks Stockfish's internal
//! units, converted as its UCI does (`v · 100 / 361`), which `eval_limit` compares too. With
//! `skip_noisy`, positions in check or whose best move (the player's) captures are neither
//! labelled nor written (the thesis's quiet filter). With `dedup_mb`, the writer drops every
//! position whose Zobrist key it wrote before, through a table of that many MiB with one slot
//! per key modulo its size (Stockfish's `gensfen` way: bounded memory, a forgotten key now and
//! then); the table fills in game order and is refilled from the file's committed positions on
//! resuming, so threads and interruptions change nothing.
//!
//! ## One game
//!
//! A game starts from the standard position, or from a random line of an EPD book. Its game ply
//! counts from that start (0). At each ply, in this order:
//!
//! 1. checkmate ends the game (a loss for the side to move); stalemate, insufficient material,
//!    the fifty-move rule (`halfmoves >= 100`), threefold repetition and reaching `max_ply` end
//!    it as a draw;
//! 2. the position is searched (depth drawn from `depth_min..=depth_max` per search and/or a
//!    node limit); a score with `|score| >= eval_limit` ends the game, won by the side the score
//!    favours, and that position is not written;
//! 3. the position is kept if `write_minply <= ply <= write_maxply`;
//! 4. the best move is played, except at the game's random plies: `random_moves` plies drawn
//!    from `random_minply..=random_maxply` (or the first `random_moves` plies when
//!    `random_minply` is negative, Stockfish's `-1`). A random move is drawn uniformly from the
//!    legal moves, or, with `random_multipv = M > 0`, from the best `M` moves by a
//!    `random_depth` search of each (the host's search, whatever the labeler), those within
//!    `random_margin` of the best. A random ply outside the write window is not searched.
//!
//! ## Reproducibility, threads and shards
//!
//! Games are numbered from 0. Game `g` draws everything random from a ChaCha8 generator seeded
//! with `seed` on stream `g`, and its searches run on one thread with a node and/or depth limit
//! and a transposition table and histories cleared at the game's start, so a game depends only on
//! `(configuration, seed, g)`. Worker threads take game numbers; one writer writes finished games
//! strictly in game order. The output is therefore the same bit for bit for any `threads`.
//!
//! `shard = (i, N)` plays the games `g ≡ i (mod N)` only:
//! - with a game target `G`, shard `i` plays the games `g < G` of its residue, so the `N` shards
//!   together play exactly the games of the one-shard run: the same positions, in count and
//!   content, none twice;
//! - with a position target `P`, shard `i` writes `P / N` positions (one more for
//!   `i < P mod N`), stopping inside its last game (as Stockfish's `loop` does), so the shards
//!   together write exactly `P` positions, as one run does; their games are disjoint (different
//!   residues) but not the same set as the one-shard run's.
//!
//! ## Output, batches and resuming
//!
//! Finished games are gathered into batches of at least `flush_every` positions (whole games; the
//! last batch may be smaller); each batch is encoded on its own (a `.binpack` batch is complete
//! chunks) and appended to the file, which is then flushed, and the sidecar `OUT.progress`
//! (JSON: the configuration and its hash, games done, positions, committed bytes) is replaced.
//! Batch boundaries depend on the games alone, so an interrupted run that is started again with
//! the same configuration truncates the file to the committed length, continues with the next
//! game and ends with the same bytes as a run that was never interrupted. A different
//! configuration is refused unless the caller starts over (`force`).
//!
//! Tests interrupt a run deterministically with [`ABORT_AFTER_COMMITS_ENV`]: set to `K`, the
//! process aborts (as a kill would, no cleanup) in its commit number `K + 1`, after that batch's
//! bytes are appended but before the sidecar records them: the worst moment for a kill.
//!
//! Files: `config` (what defines a run), `progress` (the resume record), `book` (openings),
//! `labelers` (the host's search or an external engine), `game` (one game, then its labels),
//! `output` (batches in game order, the key table); this file runs the workers and the writer.

use anyhow::{Context, Result, bail};
use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::io::{Seek, SeekFrom};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use shakmaty::Chess;

use host::engine::Engine;
use host::engine::eval_source::EvalSource;

use crate::data::Format;

mod book;
mod config;
mod game;
mod labelers;
mod output;
mod progress;

pub use book::read_book;
pub use config::{
    DEFAULT_DEPTH, GensfenConfig, LabelSettings, Labeler, MAX_DEDUP_MB, PlayerSettings,
    SelfPlaySettings, Target,
};
use game::{Evals, GameWorker, SelfPlayRecord};

use output::{SeenKeys, ShardOutput};
pub use progress::{ABORT_AFTER_COMMITS_ENV, is_complete, progress_path};
use progress::{identity, read_progress};

/// What a run did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GensfenSummary {
    /// Games in the file (this shard), including any from before a resume.
    pub games: u64,
    /// Positions in the file.
    pub positions: u64,
    /// Bytes in the file.
    pub bytes: u64,
    /// Games already done when this run started (resumed), 0 for a fresh run.
    pub resumed_games: u64,
    /// Positions written by this run.
    pub new_positions: u64,
    /// Wall time of this run.
    pub elapsed: Duration,
    /// Searches run by this run (labels, moves; multi-PV ranking excluded), all workers.
    pub searches: u64,
    /// Nodes of those searches (as reported by an external engine).
    pub nodes: u64,
    /// Time spent inside those searches, summed over workers.
    pub search_time: Duration,
    /// Labels by the labeller (a label budget set), all workers.
    pub labels: u64,
    /// Nodes of those labels.
    pub label_nodes: u64,
    /// Time spent labelling, summed over workers.
    pub label_time: Duration,
    /// Positions dropped as duplicates (by key) by this run.
    pub duplicates: u64,
    /// Whether the file was already complete (nothing was generated).
    pub already_complete: bool,
}

impl GensfenSummary {
    /// Positions per second of this run.
    pub fn positions_per_second(&self) -> f64 {
        self.new_positions as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Generates (or resumes) the data of `config` into `out`. With `force`, an existing output and
/// its progress record are replaced; without it, an output with a progress record of the same
/// configuration is resumed (or reported complete) and any other existing output is refused.
/// `progress` draws a progress bar on standard error (when it is a terminal).
pub fn generate_with(
    config: &GensfenConfig,
    out: &Path,
    progress: bool,
    force: bool,
) -> Result<GensfenSummary> {
    config.check().map_err(anyhow::Error::msg)?;
    let format = Format::resolve(config.format, out).map_err(anyhow::Error::msg)?;
    let started = Instant::now();
    let book = match &config.player.book {
        Some(p) => read_book(p)?,
        None => Vec::new(),
    };
    let (hash, identity_json) = identity(config, format)?;
    let eval = match &config.player.net {
        Some(p) => EvalSource::load(p, config.plugin_dir.as_deref())
            .map_err(anyhow::Error::msg)
            .with_context(|| format!("network {}", p.display()))?,
        None => EvalSource::Builtin,
    };
    // The labeller's network is loaded before any game: one that cannot load (or whose
    // feature plugins are missing) fails here.
    let label_eval = match &config.label.net {
        Some(p) => EvalSource::load(p, config.plugin_dir.as_deref())
            .map_err(anyhow::Error::msg)
            .with_context(|| format!("label_net {}", p.display()))?,
        None if config.player.labeler.is_none() => eval.clone(),
        None => EvalSource::Builtin,
    };
    let evals = Evals {
        player: &eval,
        labeller: &label_eval,
    };
    // Fresh start or resume.
    let existing = if force { None } else { read_progress(out)? };
    let (games, positions, bytes) = match &existing {
        Some(p) => {
            if p.config_hash != hash {
                bail!(
                    "{} was made by a different configuration (use --force to start over)",
                    progress_path(out).display()
                );
            }
            let len = std::fs::metadata(out)
                .with_context(|| format!("cannot open {}", out.display()))?
                .len();
            if len < p.bytes {
                bail!(
                    "{} is shorter ({len} bytes) than its progress record says ({} bytes); use --force to start over",
                    out.display(),
                    p.bytes
                );
            }
            if p.complete {
                return Ok(GensfenSummary {
                    games: p.games,
                    positions: p.positions,
                    bytes: p.bytes,
                    resumed_games: p.games,
                    elapsed: started.elapsed(),
                    already_complete: true,
                    ..GensfenSummary::default()
                });
            }
            (p.games, p.positions, p.bytes)
        }
        None => {
            if !force && out.exists() {
                bail!(
                    "{} exists and has no progress record (use --force to overwrite)",
                    out.display()
                );
            }
            (0, 0, 0)
        }
    };
    let mut file = OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(existing.is_none())
        .open(out)
        .with_context(|| format!("cannot create {}", out.display()))?;
    file.set_len(bytes)
        .and_then(|()| file.seek(SeekFrom::Start(bytes)).map(|_| ()))
        .with_context(|| format!("cannot write {}", out.display()))?;
    let mut output = ShardOutput {
        out,
        name: out.display().to_string(),
        file,
        format,
        hash,
        config: identity_json,
        batch: None,
        batch_positions: 0,
        games,
        positions,
        bytes,
        pending_games: 0,
        pending_positions: 0,
        commits: 0,
        abort_after_commits: std::env::var(ABORT_AFTER_COMMITS_ENV)
            .ok()
            .and_then(|v| v.parse().ok()),
        seen: None,
        duplicates: 0,
    };
    if config.game.dedup_mb > 0 {
        let mut seen = SeenKeys::new(config.game.dedup_mb);
        seen.refill(out, format, bytes)
            .with_context(|| format!("{}: reading the written positions back", out.display()))?;
        output.seen = Some(seen);
    }
    // Record the start, so that a run interrupted before its first batch resumes too.
    output.commit(false)?;

    let game_limit = config.shard_games();
    let position_limit = config.shard_positions();
    let mut summary = GensfenSummary {
        resumed_games: games,
        ..GensfenSummary::default()
    };
    let finished = |o: &ShardOutput| {
        game_limit.is_some_and(|g| o.games + o.pending_games >= g)
            || position_limit.is_some_and(|p| o.positions + o.pending_positions >= p)
    };
    let pb = progress_bar(progress, game_limit, position_limit, games, positions);
    if !finished(&output) {
        run_workers(
            config,
            &book,
            evals,
            &mut output,
            &mut summary,
            &pb,
            (game_limit, position_limit),
        )?;
    }
    output.commit(true)?;
    pb.finish_and_clear();
    summary.games = output.games;
    summary.positions = output.positions;
    summary.bytes = output.bytes;
    summary.new_positions = output.positions - positions;
    summary.duplicates = output.duplicates;
    summary.elapsed = started.elapsed();
    Ok(summary)
}

/// [`generate_with`] without `force`: a fresh run, or the continuation of an interrupted one.
pub fn generate(config: &GensfenConfig, out: &Path, progress: bool) -> Result<GensfenSummary> {
    generate_with(config, out, progress, false)
}

fn progress_bar(
    show: bool,
    game_limit: Option<u64>,
    position_limit: Option<u64>,
    games: u64,
    positions: u64,
) -> indicatif::ProgressBar {
    if !show {
        return indicatif::ProgressBar::hidden();
    }
    let (total, unit, done) = match (game_limit, position_limit) {
        (Some(g), _) => (g, "games", games),
        (_, Some(p)) => (p, "positions", positions),
        _ => (0, "games", games),
    };
    let pb = indicatif::ProgressBar::new(total);
    pb.set_style(
        indicatif::ProgressStyle::with_template(&format!(
            "{{elapsed_precise}} [{{bar:32}}] {{pos}}/{{len}} {unit} ETA {{eta}} {{msg}}"
        ))
        .expect("valid template")
        .progress_chars("=> "),
    );
    pb.set_position(done);
    pb
}

type WorkerResult = Result<(u64, SelfPlayRecord)>;

/// Plays the games of `config` on its worker threads into `output`, in game order, until
/// `game_limit` games or `position_limit` positions (this shard's) are written.
fn run_workers(
    config: &GensfenConfig,
    book: &[Chess],
    evals: Evals<'_>,
    output: &mut ShardOutput<'_>,
    summary: &mut GensfenSummary,
    pb: &indicatif::ProgressBar,
    (game_limit, position_limit): (Option<u64>, Option<u64>),
) -> Result<()> {
    let threads = arena::workers::workers(config.threads);
    let first = output.games;
    let next = Arc::new(AtomicU64::new(first));
    let needed = Arc::new(AtomicU64::new(first));
    let stop = Arc::new(AtomicBool::new(false));
    let window = 8 * threads as u64 + 8;
    let (shard_i, shard_n) = config.shard;
    let (tx, rx) = mpsc::channel::<WorkerResult>();
    let run_started = Instant::now();
    let new_start = output.positions;
    std::thread::scope(|s| -> Result<()> {
        for w in 0..threads {
            let tx = tx.clone();
            let (next, needed, halt) = (next.clone(), needed.clone(), stop.clone());
            let spawned = std::thread::Builder::new()
                .name(format!("gensfen-{w}"))
                .stack_size(Engine::SEARCH_STACK_BYTES)
                .spawn_scoped(s, move || {
                    let mut player = match GameWorker::new(config, book, evals) {
                        Ok(p) => p,
                        Err(e) => {
                            let _ = tx.send(Err(e));
                            return;
                        }
                    };
                    while !halt.load(Ordering::Relaxed) {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        if game_limit.is_some_and(|g| k >= g) {
                            break;
                        }
                        while k >= needed.load(Ordering::Acquire) + window
                            && !halt.load(Ordering::Relaxed)
                        {
                            std::thread::sleep(Duration::from_millis(2));
                        }
                        if halt.load(Ordering::Relaxed) {
                            break;
                        }
                        let g = shard_i + k * shard_n;
                        let r = player.play(g).map(|rec| (k, rec));
                        let failed = r.is_err();
                        if tx.send(r).is_err() || failed {
                            break;
                        }
                    }
                });
            if let Err(e) = spawned {
                stop.store(true, Ordering::Relaxed);
                bail!("cannot start worker thread: {e}");
            }
        }
        drop(tx);
        let mut pending: BTreeMap<u64, SelfPlayRecord> = BTreeMap::new();
        let mut outcome = Ok(());
        'receive: for item in rx.iter() {
            let (k, rec) = match item {
                Ok(x) => x,
                Err(e) => {
                    outcome = Err(e);
                    break;
                }
            };
            pending.insert(k, rec);
            while let Some(rec) = pending.remove(&(output.games + output.pending_games)) {
                summary.searches += rec.searches;
                summary.nodes += rec.nodes;
                summary.search_time += rec.search_time;
                summary.labels += rec.labels;
                summary.label_nodes += rec.label_nodes;
                summary.label_time += rec.label_time;
                if let Err(e) = output.add_game(&rec.samples, &rec.keys, position_limit) {
                    outcome = Err(e);
                    break 'receive;
                }
                needed.store(output.games + output.pending_games, Ordering::Release);
                let done = output.games + output.pending_games;
                let pos = output.positions + output.pending_positions;
                let rate = (pos - new_start) as f64 / run_started.elapsed().as_secs_f64().max(1e-9);
                match position_limit {
                    Some(_) => {
                        pb.set_position(pos);
                        pb.set_message(format!("{done} games, {rate:.0} pos/s"));
                    }
                    None => {
                        pb.set_position(done);
                        pb.set_message(format!("{pos} positions, {rate:.0} pos/s"));
                    }
                }
                let complete = game_limit.is_some_and(|g| done >= g)
                    || position_limit.is_some_and(|p| pos >= p);
                if complete {
                    break 'receive;
                }
                if output.batch_positions >= config.game.flush_every
                    && let Err(e) = output.commit(false)
                {
                    outcome = Err(e);
                    break 'receive;
                }
            }
        }
        stop.store(true, Ordering::Relaxed);
        // Let the workers finish their games (their results are dropped with the receiver).
        drop(rx);
        outcome
    })
}
