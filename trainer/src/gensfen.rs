//! Training data by self-play (`trainer gensfen`), after Stockfish's `gensfen`.
//!
//! Games are played by a search (the host's own, with a network or the built-in evaluation, or
//! an external UCI engine at a node limit); every position of a game inside the write window is
//! stored with the search's score and best move (side to move's view) and, once the game is
//! over, the game's result from the side to move's view (`.bin` / `.binpack` convention; the
//! text formats hold no result).
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

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Move, Position};

use host::engine::Engine;
use host::engine::evaluation::EvalSource;
use host::engine::limits::Limits;
use host::engine::search::MATE;
use host::engine::zobrist;

use crate::data::bin::BinWriter;
use crate::data::binpack::BinpackWriter;
use crate::data::text::TextWriter;
use crate::data::{ErrorKind, Format, Sample, SampleWriter};

/// How much to generate (per run; see the module docs for shards).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Target {
    /// Play games `0..G` (of the shard's residue).
    Games(u64),
    /// Write this many positions (split over the shards), stopping inside the last game.
    Positions(u64),
}

/// Who plays and labels the games.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Labeler {
    /// The host's search (with `net`, else the built-in evaluation).
    Host,
    /// An external UCI engine, `arena::uci::EngineSpec` syntax (`cmd=PATH,option.NAME=VALUE`),
    /// searching `nodes` nodes per position. Deterministic only with one engine thread.
    Uci {
        /// The engine specification.
        spec: String,
        /// Nodes per search.
        nodes: u64,
    },
}

/// Everything that defines a `gensfen` run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GensfenConfig {
    /// How much to generate.
    pub target: Target,
    /// Smallest search depth (with `depth_max`, the depth of each search is drawn uniformly).
    pub depth_min: Option<u32>,
    /// Largest search depth.
    pub depth_max: Option<u32>,
    /// Node limit per search (with or without a depth).
    pub nodes: Option<u64>,
    /// Network for the host's search (`None`: the built-in evaluation).
    pub net: Option<PathBuf>,
    /// Where the feature plugins of `net` are (default: the usual plugin directories).
    pub plugin_dir: Option<PathBuf>,
    /// Worker threads (one game and one search thread each); does not change the output.
    pub threads: usize,
    /// The seed of every random choice.
    pub seed: u64,
    /// `(index, count)`: play the games whose number is `index` modulo `count`.
    pub shard: (u64, u64),
    /// EPD book: each game starts from a random line of it.
    pub book: Option<PathBuf>,
    /// Random moves per game.
    pub random_moves: u32,
    /// First ply that may be random; negative: the first `random_moves` plies are random.
    pub random_minply: i32,
    /// Last ply that may be random.
    pub random_maxply: u32,
    /// 0: a random move is any legal move; `M > 0`: one of the best `M` moves within
    /// `random_margin` of the best.
    pub random_multipv: u32,
    /// Score margin of the multi-PV choice (centipawns, side to move's view).
    pub random_margin: i32,
    /// Depth of the searches that rank the moves for the multi-PV choice.
    pub random_depth: u32,
    /// A game ends, adjudicated, when a search's `|score|` reaches this.
    pub eval_limit: i32,
    /// First game ply written.
    pub write_minply: u32,
    /// Last game ply written.
    pub write_maxply: u32,
    /// A game that reaches this ply ends as a draw.
    pub max_ply: u32,
    /// Who plays and labels.
    pub labeler: Labeler,
    /// Transposition table per worker, in MiB (changes the searches, hence the output).
    pub hash_mb: usize,
    /// Positions per committed batch (whole games).
    pub flush_every: u64,
    /// Output format (`None`: from the output's extension).
    #[serde(skip)]
    pub format: Option<Format>,
}

impl Default for GensfenConfig {
    /// Stockfish's defaults: depth 3, 5 random moves in plies 1..=24, eval limit 3000, plies
    /// 16..=400 written.
    fn default() -> Self {
        GensfenConfig {
            target: Target::Games(100),
            depth_min: None,
            depth_max: None,
            nodes: None,
            net: None,
            plugin_dir: None,
            threads: 1,
            seed: 0,
            shard: (0, 1),
            book: None,
            random_moves: 5,
            random_minply: 1,
            random_maxply: 24,
            random_multipv: 0,
            random_margin: 100,
            random_depth: 4,
            eval_limit: 3000,
            write_minply: 16,
            write_maxply: 400,
            max_ply: 400,
            labeler: Labeler::Host,
            hash_mb: 16,
            flush_every: 10_000,
            format: None,
        }
    }
}

/// Default depth when neither a depth nor a node limit is given (Stockfish's).
pub const DEFAULT_DEPTH: u32 = 3;

impl GensfenConfig {
    /// Checks the values; the error names the bad one.
    pub fn check(&self) -> Result<(), String> {
        let (i, n) = self.shard;
        if n == 0 || i >= n {
            return Err(format!(
                "invalid shard {i}/{n}: the index must be below the count (0/1 .. {}/{})",
                n.max(1) - 1,
                n.max(1)
            ));
        }
        match self.target {
            Target::Games(0) | Target::Positions(0) => {
                return Err("the target (games or positions) must be at least 1".into());
            }
            _ => {}
        }
        if let (Some(a), Some(b)) = (self.depth_min, self.depth_max)
            && a > b
        {
            return Err(format!("depth range {a}..{b} is empty"));
        }
        if self.depth_min == Some(0) || self.depth_max == Some(0) {
            return Err("search depth must be at least 1".into());
        }
        if self.nodes == Some(0) {
            return Err("node limit must be at least 1".into());
        }
        if self.threads == 0 {
            return Err("threads must be at least 1".into());
        }
        if self.random_minply >= 0 && self.random_minply as u32 > self.random_maxply {
            return Err(format!(
                "random move window {}..{} is empty",
                self.random_minply, self.random_maxply
            ));
        }
        if self.random_multipv > 0 && self.random_depth == 0 {
            return Err("random multi-PV depth must be at least 1".into());
        }
        if self.random_margin < 0 {
            return Err("random move margin must not be negative".into());
        }
        if self.eval_limit <= 0 {
            return Err("eval limit must be positive".into());
        }
        if self.write_minply > self.write_maxply {
            return Err(format!(
                "write ply window {}..{} is empty",
                self.write_minply, self.write_maxply
            ));
        }
        if self.max_ply == 0 {
            return Err("max ply must be at least 1".into());
        }
        if self.flush_every == 0 {
            return Err("flush-every must be at least 1".into());
        }
        if let Labeler::Uci { spec, nodes } = &self.labeler {
            if spec.trim().is_empty() {
                return Err("empty UCI engine specification".into());
            }
            if *nodes == 0 {
                return Err("label node limit must be at least 1".into());
            }
        }
        Ok(())
    }

    /// The depth range of the host's searches (`None`: node limit only).
    fn depths(&self) -> Option<(u32, u32)> {
        match (self.depth_min, self.depth_max) {
            (Some(a), Some(b)) => Some((a, b)),
            (Some(a), None) | (None, Some(a)) => Some((a, a)),
            (None, None) if self.nodes.is_none() => Some((DEFAULT_DEPTH, DEFAULT_DEPTH)),
            (None, None) => None,
        }
    }

    /// The number of games of this shard with a game target.
    fn shard_games(&self) -> Option<u64> {
        let (i, n) = self.shard;
        match self.target {
            Target::Games(g) if i < g => Some((g - i).div_ceil(n)),
            Target::Games(_) => Some(0),
            Target::Positions(_) => None,
        }
    }

    /// The positions this shard writes with a position target.
    fn shard_positions(&self) -> Option<u64> {
        let (i, n) = self.shard;
        match self.target {
            Target::Positions(p) => Some(p / n + u64::from(i < p % n)),
            Target::Games(_) => None,
        }
    }
}

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
    /// Whether the file was already complete (nothing was generated).
    pub already_complete: bool,
}

impl GensfenSummary {
    /// Positions per second of this run.
    pub fn positions_per_second(&self) -> f64 {
        self.new_positions as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// The sidecar's contents.
#[derive(Serialize, Deserialize, Debug)]
struct Progress {
    version: u32,
    config_hash: String,
    /// Games of this shard done (the next game is `shard.0 + games * shard.1`).
    games: u64,
    positions: u64,
    bytes: u64,
    complete: bool,
    config: serde_json::Value,
}

/// Environment variable of the test hook described in the module docs (a whole number `K`).
pub const ABORT_AFTER_COMMITS_ENV: &str = "NNUE_GENSFEN_ABORT_AFTER_COMMITS";

/// The sidecar of `out`: `OUT.progress`.
pub fn progress_path(out: &Path) -> PathBuf {
    let mut s = out.as_os_str().to_owned();
    s.push(".progress");
    PathBuf::from(s)
}

/// The parts of a configuration that change the output, with the contents of the book and the
/// network, hashed.
fn identity(config: &GensfenConfig, format: Format) -> Result<(String, serde_json::Value), String> {
    let file_crc = |p: &Path| -> Result<String, String> {
        let bytes = std::fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
        Ok(format!("{:08x}", crc32fast::hash(&bytes)))
    };
    let mut c = config.clone();
    c.threads = 0;
    c.plugin_dir = None;
    let mut value = serde_json::to_value(&c).map_err(|e| e.to_string())?;
    if let Some(obj) = value.as_object_mut() {
        obj.remove("threads");
        obj.remove("plugin_dir");
        obj.insert("format".into(), format.name().into());
        if let Some(b) = &config.book {
            obj.insert("book_crc32".into(), file_crc(b)?.into());
        }
        if let Some(n) = &config.net {
            obj.insert("net_crc32".into(), file_crc(n)?.into());
        }
        obj.insert("version".into(), env!("CARGO_PKG_VERSION").into());
    }
    let text = serde_json::to_string(&value).map_err(|e| e.to_string())?;
    let h = fnv1a(text.as_bytes());
    Ok((format!("{h:016x}"), value))
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Reads an EPD book: one position per line (the first four FEN fields; any operations after
/// them are ignored; blank lines and `#` comments skipped). A bad line is an error naming it.
pub fn read_book(path: &Path) -> Result<Vec<Chess>, String> {
    let file = File::open(path).map_err(|e| format!("cannot open book {}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in host::fens::bounded_lines(BufReader::new(file)).enumerate() {
        let line = line.map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = t.split_whitespace().take(4).collect();
        let bad = |m: String| {
            let t = host::excerpt::excerpt(t, host::excerpt::EXCERPT_CHARS);
            format!("{}:{}: invalid EPD line '{t}': {m}", path.display(), i + 1)
        };
        if fields.len() < 4 {
            return Err(bad("expected board, side, castling and en passant".into()));
        }
        let fen: Fen = format!("{} 0 1", fields.join(" "))
            .parse()
            .map_err(|e| bad(format!("{e}")))?;
        let pos: Chess = fen
            .into_position(CastlingMode::Standard)
            .or_else(shakmaty::PositionError::ignore_invalid_ep_square)
            .map_err(|e| bad(format!("{e}")))?;
        out.push(pos);
    }
    if out.is_empty() {
        return Err(format!("book {} has no positions", path.display()));
    }
    Ok(out)
}

/// One finished game: its samples (results set) in ply order.
struct GameRecord {
    samples: Vec<Sample>,
    searches: u64,
    nodes: u64,
    search_time: Duration,
}

/// A search outcome.
struct Searched {
    best: Move,
    score: i32,
    nodes: u64,
}

/// The host's search of `pos` (after the positions hashed in `history`) on the calling thread;
/// an evaluation error met on the way fails it, so no sample carries a fallback score.
fn host_search(
    engine: &mut Engine,
    pos: &Chess,
    history: &[u64],
    limits: &Limits,
) -> Result<Searched, String> {
    let result = engine.search(pos, history, limits, &|_, _, _| {});
    if let Some(e) = result.errors.first() {
        return Err(e.clone());
    }
    let best = result
        .best
        .ok_or_else(|| "the search found no move in a position with legal moves".to_string())?;
    Ok(Searched {
        best,
        score: result.last.score,
        nodes: result.nodes,
    })
}

/// An external UCI engine for one worker.
struct UciSearch {
    engine: arena::uci::Engine,
    nodes: u64,
}

impl UciSearch {
    fn start(spec: &str, nodes: u64) -> Result<Self, String> {
        let spec = arena::uci::EngineSpec::parse(spec).map_err(|e| format!("labeler: {e}"))?;
        let engine = arena::uci::Engine::start(&spec).map_err(|e| format!("labeler: {e}"))?;
        Ok(UciSearch { engine, nodes })
    }

    fn new_game(&mut self) -> Result<(), String> {
        self.engine.new_game().map_err(|e| format!("labeler: {e}"))
    }

    fn search(&mut self, start: &str, moves: &[String], pos: &Chess) -> Result<Searched, String> {
        let limit = arena::uci::SearchLimit::Nodes(self.nodes);
        let r = self
            .engine
            .search(Some(start), moves, &limit, Duration::from_secs(120))
            .map_err(|e| format!("labeler: {e}"))?;
        let best = r
            .best_move
            .parse::<UciMove>()
            .ok()
            .and_then(|m| m.to_move(pos).ok())
            .ok_or_else(|| {
                format!(
                    "labeler: illegal best move '{}' in {}",
                    r.best_move,
                    Fen::from_position(pos, EnPassantMode::Legal)
                )
            })?;
        let score = match r.score {
            Some(arena::uci::Score::Cp(cp)) => cp,
            Some(arena::uci::Score::Mate(n)) if n > 0 => MATE - (2 * n - 1),
            Some(arena::uci::Score::Mate(n)) => -MATE + 2 * n.abs(),
            None => 0,
        };
        Ok(Searched {
            best,
            score,
            nodes: r.nodes.unwrap_or(0),
        })
    }
}

/// Everything a worker needs for its games.
struct Player<'a> {
    config: &'a GensfenConfig,
    book: &'a [Chess],
    /// The host's engine, with one search thread.
    host: Engine,
    uci: Option<UciSearch>,
}

fn white_result(turn: shakmaty::Color, stm_result: i8) -> i8 {
    if turn == shakmaty::Color::White {
        stm_result
    } else {
        -stm_result
    }
}

impl<'a> Player<'a> {
    fn new(
        config: &'a GensfenConfig,
        book: &'a [Chess],
        eval: &'a EvalSource,
    ) -> Result<Self, String> {
        let uci = match &config.labeler {
            Labeler::Uci { spec, nodes } => Some(UciSearch::start(spec, *nodes)?),
            Labeler::Host => None,
        };
        Ok(Player {
            config,
            book,
            host: Engine::new(config.hash_mb, 1, eval.clone())?,
            uci,
        })
    }

    /// Plays game `g` (global number).
    fn play(&mut self, g: u64) -> Result<GameRecord, String> {
        let c = self.config;
        let mut rng = ChaCha8Rng::seed_from_u64(c.seed);
        rng.set_stream(g);
        let start = if self.book.is_empty() {
            Chess::default()
        } else {
            self.book[rng.random_range(0..self.book.len())].clone()
        };
        let start_fen = Fen::from_position(&start, EnPassantMode::Legal).to_string();
        // The random plies.
        let mut random_plies = Vec::new();
        if c.random_minply < 0 {
            random_plies.extend(0..c.random_moves);
        } else {
            let mut window: Vec<u32> = (c.random_minply as u32..=c.random_maxply).collect();
            for _ in 0..c.random_moves.min(window.len() as u32) {
                let k = rng.random_range(0..window.len());
                random_plies.push(window.swap_remove(k));
            }
        }
        self.host.new_game();
        if let Some(u) = &mut self.uci {
            u.new_game()?;
        }
        let mut pos = start;
        let mut hashes = vec![zobrist::hash(&pos)];
        let mut moves: Vec<String> = Vec::new();
        let mut kept: Vec<(Chess, i32, Move)> = Vec::new();
        let mut rec = GameRecord {
            samples: Vec::new(),
            searches: 0,
            nodes: 0,
            search_time: Duration::ZERO,
        };
        let depths = c.depths();
        let white: i8;
        let mut ply: u32 = 0;
        loop {
            if pos.is_checkmate() {
                white = white_result(pos.turn(), -1);
                break;
            }
            let current = *hashes.last().expect("the start position");
            let repetitions = hashes.iter().filter(|&&h| h == current).count();
            if pos.is_stalemate()
                || pos.is_insufficient_material()
                || pos.halfmoves() >= 100
                || repetitions >= 3
                || ply >= c.max_ply
            {
                white = 0;
                break;
            }
            let random = random_plies.contains(&ply);
            let write = ply >= c.write_minply && ply <= c.write_maxply;
            let best = if random && !write {
                None
            } else {
                let started = Instant::now();
                let found = match &mut self.uci {
                    Some(u) => u.search(&start_fen, &moves, &pos)?,
                    None => {
                        let limits = Limits {
                            depth: depths.map(
                                |(a, b)| {
                                    if a == b { a } else { rng.random_range(a..=b) }
                                },
                            ),
                            nodes: c.nodes,
                            ..Limits::default()
                        };
                        host_search(&mut self.host, &pos, &hashes[..hashes.len() - 1], &limits)
                            .map_err(|e| format!("game {g}: {e}"))?
                    }
                };
                rec.search_time += started.elapsed();
                rec.searches += 1;
                rec.nodes += found.nodes;
                if found.score.abs() >= c.eval_limit {
                    white = white_result(pos.turn(), if found.score > 0 { 1 } else { -1 });
                    break;
                }
                if write {
                    kept.push((pos.clone(), found.score, found.best));
                }
                Some(found.best)
            };
            let played = match best {
                Some(b) if !random => b,
                _ => self.random_move(&pos, &hashes, &mut rng)?,
            };
            moves.push(played.to_uci(CastlingMode::Standard).to_string());
            pos.play_unchecked(played);
            hashes.push(zobrist::hash(&pos));
            ply += 1;
        }
        rec.samples = kept
            .into_iter()
            .map(|(p, score, best)| {
                let result = white_result(p.turn(), white);
                Sample::from_position(
                    &p,
                    score.clamp(i16::MIN as i32, i16::MAX as i32) as i16,
                    plugin_api::move_from_shakmaty(&best),
                    Some(result),
                )
            })
            .collect();
        Ok(rec)
    }

    /// A random move: uniform over the legal moves, or over the best `random_multipv` within
    /// the margin.
    fn random_move(
        &mut self,
        pos: &Chess,
        hashes: &[u64],
        rng: &mut ChaCha8Rng,
    ) -> Result<Move, String> {
        let legal = pos.legal_moves();
        let c = self.config;
        if c.random_multipv == 0 || legal.len() == 1 {
            return Ok(legal[rng.random_range(0..legal.len())]);
        }
        let limits = Limits {
            depth: Some(c.random_depth.saturating_sub(1).max(1)),
            ..Limits::default()
        };
        let mut scored = Vec::with_capacity(legal.len());
        for &m in &legal {
            let mut child = pos.clone();
            child.play_unchecked(m);
            let score = if child.is_checkmate() {
                MATE
            } else if child.legal_moves().is_empty() {
                0
            } else {
                -host_search(&mut self.host, &child, hashes, &limits)?.score
            };
            scored.push((score, m));
        }
        // Stable: equal scores keep the move generator's order.
        scored.sort_by_key(|&(s, _)| std::cmp::Reverse(s));
        let best = scored[0].0;
        let candidates: Vec<Move> = scored
            .iter()
            .take(c.random_multipv as usize)
            .filter(|(s, _)| *s >= best.saturating_sub(c.random_margin))
            .map(|&(_, m)| m)
            .collect();
        Ok(candidates[rng.random_range(0..candidates.len())])
    }
}

/// One batch of whole games, encoded in the output format.
enum BatchWriter {
    Text(Box<TextWriter<Vec<u8>>>),
    Bin(BinWriter<Vec<u8>>),
    Binpack(Box<BinpackWriter<Vec<u8>>>),
}

impl BatchWriter {
    fn new(format: Format, name: &str) -> Self {
        match format {
            Format::Text => {
                BatchWriter::Text(Box::new(TextWriter::new(name.into(), Vec::new(), false)))
            }
            Format::Compact => {
                BatchWriter::Text(Box::new(TextWriter::new(name.into(), Vec::new(), true)))
            }
            Format::Bin => BatchWriter::Bin(BinWriter::new(name.into(), Vec::new())),
            Format::Binpack => {
                BatchWriter::Binpack(Box::new(BinpackWriter::new(name.into(), Vec::new())))
            }
        }
    }

    fn writer(&mut self) -> &mut dyn SampleWriter {
        match self {
            BatchWriter::Text(w) => w.as_mut(),
            BatchWriter::Bin(w) => w,
            BatchWriter::Binpack(w) => w.as_mut(),
        }
    }

    /// Writes a sample; `false` when the format cannot hold it (skipped).
    fn write(&mut self, s: &Sample) -> Result<bool, String> {
        match self.writer().write(s) {
            Ok(()) => Ok(true),
            Err(e) if e.kind == ErrorKind::Unrepresentable => Ok(false),
            Err(e) => Err(e.to_string()),
        }
    }

    fn finish(mut self) -> Result<Vec<u8>, String> {
        self.writer().finish().map_err(|e| e.to_string())?;
        Ok(match self {
            BatchWriter::Text(w) => (*w).into_inner(),
            BatchWriter::Bin(w) => w.into_inner(),
            BatchWriter::Binpack(w) => (*w).into_inner().unwrap_or_default(),
        })
    }
}

/// The output file, its sidecar and the current batch.
struct Output<'a> {
    out: &'a Path,
    name: String,
    file: File,
    format: Format,
    hash: String,
    config: serde_json::Value,
    batch: Option<BatchWriter>,
    batch_positions: u64,
    /// Committed state.
    games: u64,
    positions: u64,
    bytes: u64,
    /// Pending (in the batch).
    pending_games: u64,
    pending_positions: u64,
    /// Commits made, and the test hook's [`ABORT_AFTER_COMMITS_ENV`].
    commits: u64,
    abort_after_commits: Option<u64>,
}

impl Output<'_> {
    fn add_game(&mut self, samples: &[Sample], limit: Option<u64>) -> Result<u64, String> {
        let batch = self
            .batch
            .get_or_insert_with(|| BatchWriter::new(self.format, &self.name));
        let mut written = 0;
        for s in samples {
            if let Some(l) = limit
                && self.positions + self.pending_positions >= l
            {
                break;
            }
            if batch.write(s)? {
                self.pending_positions += 1;
                self.batch_positions += 1;
                written += 1;
            }
        }
        self.pending_games += 1;
        Ok(written)
    }

    /// Appends the batch to the file and records the new state in the sidecar.
    fn commit(&mut self, complete: bool) -> Result<(), String> {
        if let Some(batch) = self.batch.take() {
            let bytes = batch.finish()?;
            self.file
                .write_all(&bytes)
                .and_then(|()| self.file.flush())
                .map_err(|e| format!("cannot write {}: {e}", self.out.display()))?;
            self.bytes += bytes.len() as u64;
        }
        if self.abort_after_commits == Some(self.commits) {
            std::process::abort();
        }
        self.commits += 1;
        self.games += self.pending_games;
        self.positions += self.pending_positions;
        self.pending_games = 0;
        self.pending_positions = 0;
        self.batch_positions = 0;
        let _ = self.file.sync_data();
        write_progress(
            self.out,
            &Progress {
                version: 1,
                config_hash: self.hash.clone(),
                games: self.games,
                positions: self.positions,
                bytes: self.bytes,
                complete,
                config: self.config.clone(),
            },
        )
    }
}

fn write_progress(out: &Path, p: &Progress) -> Result<(), String> {
    let path = progress_path(out);
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let text = serde_json::to_string_pretty(p).map_err(|e| e.to_string())?;
    std::fs::write(&tmp, text + "\n")
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn read_progress(out: &Path) -> Result<Option<Progress>, String> {
    let path = progress_path(out);
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text).map(Some).map_err(|e| {
            format!(
                "{}: unreadable progress record: {e} (use --force to start over)",
                path.display()
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
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
) -> Result<GensfenSummary, String> {
    config.check()?;
    let format = Format::resolve(config.format, out)?;
    let started = Instant::now();
    let book = match &config.book {
        Some(p) => read_book(p)?,
        None => Vec::new(),
    };
    let (hash, identity_json) = identity(config, format)?;
    let eval = match &config.net {
        Some(p) => EvalSource::load(p, config.plugin_dir.as_deref())
            .map_err(|e| format!("network {}: {e}", p.display()))?,
        None => EvalSource::Builtin,
    };
    // Fresh start or resume.
    let existing = if force { None } else { read_progress(out)? };
    let (games, positions, bytes) = match &existing {
        Some(p) => {
            if p.config_hash != hash {
                return Err(format!(
                    "{} was made by a different configuration (use --force to start over)",
                    progress_path(out).display()
                ));
            }
            let len = std::fs::metadata(out)
                .map_err(|e| format!("cannot open {}: {e}", out.display()))?
                .len();
            if len < p.bytes {
                return Err(format!(
                    "{} is shorter ({len} bytes) than its progress record says ({} bytes); use --force to start over",
                    out.display(),
                    p.bytes
                ));
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
                return Err(format!(
                    "{} exists and has no progress record (use --force to overwrite)",
                    out.display()
                ));
            }
            (0, 0, 0)
        }
    };
    let mut file = OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(existing.is_none())
        .open(out)
        .map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    file.set_len(bytes)
        .and_then(|()| file.seek(SeekFrom::Start(bytes)).map(|_| ()))
        .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    let mut output = Output {
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
    };
    // Record the start, so that a run interrupted before its first batch resumes too.
    output.commit(false)?;

    let game_limit = config.shard_games();
    let position_limit = config.shard_positions();
    let mut summary = GensfenSummary {
        resumed_games: games,
        ..GensfenSummary::default()
    };
    let finished = |o: &Output| {
        game_limit.is_some_and(|g| o.games + o.pending_games >= g)
            || position_limit.is_some_and(|p| o.positions + o.pending_positions >= p)
    };
    let pb = progress_bar(progress, game_limit, position_limit, games, positions);
    if !finished(&output) {
        run_workers(
            config,
            &book,
            &eval,
            &mut output,
            &mut summary,
            &pb,
            game_limit,
            position_limit,
        )?;
    }
    output.commit(true)?;
    pb.finish_and_clear();
    summary.games = output.games;
    summary.positions = output.positions;
    summary.bytes = output.bytes;
    summary.new_positions = output.positions - positions;
    summary.elapsed = started.elapsed();
    Ok(summary)
}

/// [`generate_with`] without `force`: a fresh run, or the continuation of an interrupted one.
pub fn generate(
    config: &GensfenConfig,
    out: &Path,
    progress: bool,
) -> Result<GensfenSummary, String> {
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

type WorkerResult = Result<(u64, GameRecord), String>;

#[allow(clippy::too_many_arguments)]
fn run_workers(
    config: &GensfenConfig,
    book: &[Chess],
    eval: &EvalSource,
    output: &mut Output<'_>,
    summary: &mut GensfenSummary,
    pb: &indicatif::ProgressBar,
    game_limit: Option<u64>,
    position_limit: Option<u64>,
) -> Result<(), String> {
    let threads = config.threads.max(1);
    let first = output.games;
    let next = Arc::new(AtomicU64::new(first));
    let needed = Arc::new(AtomicU64::new(first));
    let stop = Arc::new(AtomicBool::new(false));
    let window = 8 * threads as u64 + 8;
    let (shard_i, shard_n) = config.shard;
    let (tx, rx) = mpsc::channel::<WorkerResult>();
    let run_started = Instant::now();
    let new_start = output.positions;
    std::thread::scope(|s| -> Result<(), String> {
        for w in 0..threads {
            let tx = tx.clone();
            let (next, needed, halt) = (next.clone(), needed.clone(), stop.clone());
            let spawned = std::thread::Builder::new()
                .name(format!("gensfen-{w}"))
                .stack_size(Engine::SEARCH_STACK_BYTES)
                .spawn_scoped(s, move || {
                    let mut player = match Player::new(config, book, eval) {
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
                return Err(format!("cannot start worker thread: {e}"));
            }
        }
        drop(tx);
        let mut pending: BTreeMap<u64, GameRecord> = BTreeMap::new();
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
                if let Err(e) = output.add_game(&rec.samples, position_limit) {
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
                if output.batch_positions >= config.flush_every
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_targets_add_up() {
        for total in [1u64, 7, 100, 101] {
            for n in 1..5u64 {
                let sum_g: u64 = (0..n)
                    .map(|i| {
                        GensfenConfig {
                            target: Target::Games(total),
                            shard: (i, n),
                            ..GensfenConfig::default()
                        }
                        .shard_games()
                        .unwrap()
                    })
                    .sum();
                let sum_p: u64 = (0..n)
                    .map(|i| {
                        GensfenConfig {
                            target: Target::Positions(total),
                            shard: (i, n),
                            ..GensfenConfig::default()
                        }
                        .shard_positions()
                        .unwrap()
                    })
                    .sum();
                assert_eq!((sum_g, sum_p), (total, total), "{total} over {n}");
            }
        }
    }

    #[test]
    fn bad_values_are_named() {
        let c = GensfenConfig {
            shard: (3, 2),
            ..GensfenConfig::default()
        };
        assert!(c.check().unwrap_err().contains("shard 3/2"));
        let c = GensfenConfig {
            write_minply: 10,
            write_maxply: 5,
            ..GensfenConfig::default()
        };
        assert!(c.check().unwrap_err().contains("write ply"));
    }
}
