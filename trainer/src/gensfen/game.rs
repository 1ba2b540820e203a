//! One self-play game: searches, random moves, adjudication, the written positions.

use anyhow::{Context, Result};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Move, Position};

use host::engine::Engine;
use host::engine::eval_source::{EvalSource, SourceEvaluator};
use host::engine::limits::Limits;
use host::engine::search::MATE;
use host::engine::zobrist;

use super::config::{GensfenConfig, Labeler};
use super::labelers::{UciSearch, host_search};
use crate::data::Sample;

/// The evaluations of a run: the player's search and the labeller's.
#[derive(Clone, Copy)]
pub(super) struct Evals<'a> {
    pub(super) player: &'a EvalSource,
    pub(super) labeller: &'a EvalSource,
}

/// One finished game: its samples (results set) in ply order, each sample's position key
/// ([`zobrist::hash`], for dropping duplicates), and what its searches and labels cost.
pub(super) struct SelfPlayRecord {
    pub(super) samples: Vec<Sample>,
    pub(super) keys: Vec<u64>,
    pub(super) searches: u64,
    pub(super) nodes: u64,
    pub(super) search_time: Duration,
    pub(super) labels: u64,
    pub(super) label_nodes: u64,
    pub(super) label_time: Duration,
}

/// Everything a worker needs for its games.
pub(super) struct GameWorker<'a> {
    pub(super) config: &'a GensfenConfig,
    pub(super) book: &'a [Chess],
    /// The host's engine, with one search thread, and the evaluator its searches borrow.
    pub(super) host: Engine,
    pub(super) player_eval: SourceEvaluator<'a>,
    pub(super) uci: Option<UciSearch>,
    /// The labeller's engine (one search thread) and evaluator, when a label budget is set.
    pub(super) labeller: Option<(Engine, SourceEvaluator<'a>)>,
}

pub(super) fn white_result(turn: shakmaty::Color, stm_result: i8) -> i8 {
    if turn == shakmaty::Color::White {
        stm_result
    } else {
        -stm_result
    }
}

impl<'a> GameWorker<'a> {
    pub(super) fn new(
        config: &'a GensfenConfig,
        book: &'a [Chess],
        evals: Evals<'a>,
    ) -> Result<Self> {
        let uci = match config.player.engine() {
            Labeler::Uci { spec, nodes } => Some(UciSearch::start(&spec, nodes)?),
            Labeler::Host => None,
        };
        let engine = |eval: &EvalSource| {
            Engine::new(config.game.hash_mb, 1, eval.clone()).map_err(anyhow::Error::msg)
        };
        let labeller = match config.label.budget {
            Some(_) => Some((engine(evals.labeller)?, evals.labeller.evaluator())),
            None => None,
        };
        Ok(GameWorker {
            config,
            book,
            host: engine(evals.player)?,
            player_eval: evals.player.evaluator(),
            uci,
            labeller,
        })
    }

    /// Plays game `g` (global number).
    pub(super) fn play(&mut self, g: u64) -> Result<SelfPlayRecord> {
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
        if c.game.random_minply < 0 {
            random_plies.extend(0..c.game.random_moves);
        } else {
            let mut window: Vec<u32> =
                (c.game.random_minply as u32..=c.game.random_maxply).collect();
            for _ in 0..c.game.random_moves.min(window.len() as u32) {
                let k = rng.random_range(0..window.len());
                random_plies.push(window.swap_remove(k));
            }
        }
        self.host.new_game();
        if let Some(u) = &mut self.uci {
            u.new_game()?;
        }
        if let Some((l, _)) = &mut self.labeller {
            l.new_game();
        }
        let mut pos = start;
        let mut hashes = vec![zobrist::hash(&pos)];
        let mut moves: Vec<String> = Vec::new();
        // Kept positions: the position, the player's score (centipawns), its best move, and
        // how many positions of the game came before it (for the labeller's repetitions).
        let mut kept: Vec<(Chess, i32, Move, usize)> = Vec::new();
        let mut rec = SelfPlayRecord {
            samples: Vec::new(),
            keys: Vec::new(),
            searches: 0,
            nodes: 0,
            search_time: Duration::ZERO,
            labels: 0,
            label_nodes: 0,
            label_time: Duration::ZERO,
        };
        let depths = c.player.depths();
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
                || ply >= c.game.max_ply
            {
                white = 0;
                break;
            }
            let random = random_plies.contains(&ply);
            let write = ply >= c.game.write_minply && ply <= c.game.write_maxply;
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
                            nodes: c.player.nodes.map(|n| n.get()),
                            ..Limits::default()
                        };
                        let history = &hashes[..hashes.len() - 1];
                        host_search(
                            &mut self.host,
                            &mut self.player_eval,
                            &pos,
                            history,
                            &limits,
                        )
                        .with_context(|| format!("game {g}"))?
                    }
                };
                rec.search_time += started.elapsed();
                rec.searches += 1;
                rec.nodes += found.nodes;
                let score = found.score;
                if score.abs() >= c.game.eval_limit {
                    white = white_result(pos.turn(), if score > 0 { 1 } else { -1 });
                    break;
                }
                let noisy = c.game.skip_noisy && (pos.is_check() || found.best.is_capture());
                if write && !noisy {
                    kept.push((pos.clone(), score, found.best, hashes.len() - 1));
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
        for (p, mut score, best, before) in kept {
            if let (Some((labeller, eval)), Some(budget)) = (&mut self.labeller, c.label.budget) {
                let started = Instant::now();
                let label = labeller
                    .label_with(eval, &p, &hashes[..before], budget)
                    .map_err(anyhow::Error::msg)
                    .with_context(|| format!("game {g}: label"))?;
                rec.label_time += started.elapsed();
                rec.labels += 1;
                rec.label_nodes += label.nodes;
                score = label.score;
            }
            let result = white_result(p.turn(), white);
            rec.keys.push(hashes[before]);
            rec.samples.push(Sample::from_position(
                &p,
                score.clamp(i16::MIN as i32, i16::MAX as i32) as i16,
                plugin_api::move_from_shakmaty(&best),
                Some(result),
            ));
        }
        Ok(rec)
    }

    /// A random move: uniform over the legal moves, or over the best `random_multipv` within
    /// the margin.
    pub(super) fn random_move(
        &mut self,
        pos: &Chess,
        hashes: &[u64],
        rng: &mut ChaCha8Rng,
    ) -> Result<Move> {
        let legal = pos.legal_moves();
        let c = self.config;
        if c.game.random_multipv == 0 || legal.len() == 1 {
            return Ok(legal[rng.random_range(0..legal.len())]);
        }
        let limits = Limits {
            depth: Some(c.game.random_depth.saturating_sub(1).max(1)),
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
                -host_search(
                    &mut self.host,
                    &mut self.player_eval,
                    &child,
                    hashes,
                    &limits,
                )?
                .score
            };
            scored.push((score, m));
        }
        // Stable: equal scores keep the move generator's order.
        scored.sort_by_key(|&(s, _)| std::cmp::Reverse(s));
        let best = scored[0].0;
        let candidates: Vec<Move> = scored
            .iter()
            .take(c.game.random_multipv as usize)
            .filter(|(s, _)| *s >= best.saturating_sub(c.game.random_margin))
            .map(|&(_, m)| m)
            .collect();
        Ok(candidates[rng.random_range(0..candidates.len())])
    }
}
