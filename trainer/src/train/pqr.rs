//! PQR triplets (thesis §5.3) from training files, for method 2.
//!
//! For two records p → q that follow each other in a file and belong to one game (q's ply is
//! p's plus one and one legal move of p leads to q's board), a random legal move of p other than
//! the played one gives r. The triplet's three positions are encoded through the feature plugins
//! like any batch; scores and results are not used.
//!
//! The loader works like [`crate::loader::BatchLoader`]: files are cut into units
//! ([`data::units`]), `streams` units are read at a time on a rayon pool (each unit keeps its
//! previous record, so pairs are formed inside a unit), the triplets pass through a shuffle buffer
//! and leave in batches encoded on all threads, through a bounded queue. The unit order, the
//! shuffle and each unit's random moves come from seeded generators in a fixed order, so a seed
//! gives the same batches whatever the number of threads.

use std::collections::VecDeque;
use std::sync::MutexGuard;

use plugin_api::{Board, FeatureSet};
use rand::seq::{IndexedRandom, SliceRandom};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use shakmaty::{Chess, Position};

use crate::batch::SparseBatch;
use crate::data::{self, ErrorPolicy, ReadOptions, Sample, SampleReader, Unit};
use crate::filter::{Filter, FilterConfig};
use crate::loader::{Background, Input, LoaderError, Outbox, Stop, units_of, worker_pool};

/// One triplet: the position p, the next position q of its game, and r, p after a random legal
/// move other than the played one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Triplet {
    /// The position.
    pub p: Board,
    /// The position after the move played in the game.
    pub q: Board,
    /// The position after a random other legal move.
    pub r: Board,
}

/// The triplet of two consecutive records, if q follows p in one game and p has another legal
/// move; `rng` picks r's move.
pub fn triplet(p: &Sample, q: &Sample, rng: &mut impl Rng) -> Option<Triplet> {
    if u32::from(q.ply) != u32::from(p.ply) + 1 || q.board.turn == p.board.turn {
        return None;
    }
    let pos = p.to_chess().ok()?;
    let moves = pos.legal_moves();
    if moves.len() < 2 {
        return None;
    }
    let same = |a: &Board, b: &Board| {
        a.by_color == b.by_color && a.by_role == b.by_role && a.turn == b.turn
    };
    let after = |m: &shakmaty::Move| -> Board {
        let mut next: Chess = pos.clone();
        next.play_unchecked(*m);
        plugin_api::board_from_position(&next)
    };
    // The record's move first (the played move in chained formats), then every other.
    let hint = p.best_move.map(|m| data::sample::move_to_shakmaty(&m));
    let played = hint
        .filter(|m| moves.contains(m) && same(&after(m), &q.board))
        .or_else(|| moves.iter().copied().find(|m| same(&after(m), &q.board)))?;
    let others: Vec<&shakmaty::Move> = moves.iter().filter(|&&m| m != played).collect();
    let r = after(others.choose(rng)?);
    Some(Triplet {
        p: p.board,
        q: q.board,
        r,
    })
}

/// How the triplet loader reads, shuffles and batches.
#[derive(Clone, Debug)]
pub struct TripletConfig {
    /// The files.
    pub inputs: Vec<Input>,
    /// Triplets per batch.
    pub batch_size: usize,
    /// Threads of the loader's pool (0: one per core).
    pub threads: usize,
    /// Units read at the same time.
    pub streams: usize,
    /// Records each stream reads per round.
    pub read_ahead: usize,
    /// Batches ready ahead of the consumer.
    pub queue: usize,
    /// Triplets in the shuffle buffer (0: keep the order of the data, units in file order).
    pub shuffle_buffer: usize,
    /// Seed of the unit order, the shuffle buffer and the random moves.
    pub seed: u64,
    /// Which p positions to drop.
    pub filter: FilterConfig,
    /// Passes over the data (`None`: cycle forever).
    pub epochs: Option<u64>,
    /// Target size of a unit in bytes.
    pub unit_bytes: u64,
    /// Skip bad records or stop at the first.
    pub on_error: ErrorPolicy,
    /// Send the last, smaller batch at the end of the data.
    pub keep_last: bool,
}

impl Default for TripletConfig {
    fn default() -> Self {
        TripletConfig {
            inputs: Vec::new(),
            batch_size: 16384,
            threads: 0,
            streams: 8,
            read_ahead: 1024,
            queue: 4,
            shuffle_buffer: 131_072,
            seed: 0,
            filter: FilterConfig::default(),
            epochs: Some(1),
            unit_bytes: 1 << 18,
            on_error: ErrorPolicy::Skip,
            keep_last: true,
        }
    }
}

/// A batch of triplets: `positions` holds the p of every triplet, then every q, then every r
/// (3·`len` positions, without labels).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TripletBatch {
    /// Number of triplets.
    pub len: usize,
    /// The encoded positions: p's, q's, r's.
    pub positions: SparseBatch,
}

/// What the triplet loader did so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TripletReport {
    /// Records decoded.
    pub read: u64,
    /// Triplets formed.
    pub triplets: u64,
    /// Bad records skipped.
    pub errors: u64,
    /// Epochs started.
    pub epoch: u64,
}

/// Triplet batches from files, produced on a background thread. Dropping it stops the producer.
pub struct TripletLoader {
    queue: Background<TripletBatch, TripletReport>,
}

impl TripletLoader {
    /// Starts loading; fails at once for a bad configuration or an input that cannot be opened.
    pub fn new(config: TripletConfig, set: FeatureSet) -> Result<TripletLoader, String> {
        if config.inputs.is_empty() {
            return Err("no input files".into());
        }
        if config.batch_size == 0 || config.streams == 0 || config.read_ahead == 0 {
            return Err("batch size, streams and read-ahead must be positive".into());
        }
        config.filter.check()?;
        let (units, _) = units_of(&config.inputs, config.unit_bytes)?;
        let pool = worker_pool("pqr-loader", config.threads)?;
        let queue = Background::spawn("pqr-loader", config.queue, move |out| {
            let producer = Producer {
                config,
                set,
                units,
                pool,
                out,
            };
            let _ = producer.produce();
        })?;
        Ok(TripletLoader { queue })
    }

    /// A snapshot of the counts.
    pub fn report(&self) -> TripletReport {
        self.queue.report()
    }
}

impl Iterator for TripletLoader {
    type Item = Result<TripletBatch, LoaderError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.queue.next()
    }
}

/// An open unit: its reader, the previous record, its random moves and filter.
struct Stream {
    reader: Option<Box<dyn SampleReader>>,
    previous: Option<Sample>,
    rng: ChaCha8Rng,
    filter: Filter,
    out: Vec<Triplet>,
    errors: Vec<data::DataError>,
    read: u64,
}

impl Stream {
    fn round(&mut self, n: usize) {
        self.out.clear();
        self.errors.clear();
        self.read = 0;
        let Some(reader) = self.reader.as_mut() else {
            return;
        };
        for _ in 0..n {
            match reader.next() {
                None => {
                    self.reader = None;
                    return;
                }
                Some(Ok(s)) => {
                    self.read += 1;
                    if let Some(p) = self.previous.take()
                        && let Some(t) = triplet(&p, &s, &mut self.rng)
                        && self.filter.keep(&p)
                    {
                        self.out.push(t);
                    }
                    self.previous = Some(s);
                }
                Some(Err(e)) => {
                    self.previous = None;
                    self.errors.push(e);
                }
            }
        }
    }
}

struct Producer {
    config: TripletConfig,
    set: FeatureSet,
    units: Vec<Unit>,
    pool: rayon::ThreadPool,
    out: Outbox<TripletBatch, TripletReport>,
}

impl Producer {
    fn report(&self) -> MutexGuard<'_, TripletReport> {
        self.out.report()
    }

    fn encode(&self, triplets: &[Triplet]) -> Result<TripletBatch, LoaderError> {
        let parts = self.pool.current_num_threads().max(1);
        let per = triplets.len().div_ceil(parts).max(1);
        let set = &self.set;
        let encoded: Result<Vec<[SparseBatch; 3]>, LoaderError> = self.pool.install(|| {
            triplets
                .par_chunks(per)
                .map(|chunk| {
                    let mut out = [
                        SparseBatch::with_capacity(set, chunk.len()),
                        SparseBatch::with_capacity(set, chunk.len()),
                        SparseBatch::with_capacity(set, chunk.len()),
                    ];
                    let mut scratch = Vec::with_capacity(set.max_active());
                    for t in chunk {
                        for (batch, board) in out.iter_mut().zip([&t.p, &t.q, &t.r]) {
                            batch
                                .push(set, board, &mut scratch)
                                .map_err(|e| LoaderError::Encode(e.to_string()))?;
                        }
                    }
                    Ok(out)
                })
                .collect()
        });
        let encoded = encoded?;
        let mut positions = SparseBatch::with_capacity(set, 3 * triplets.len());
        for role in 0..3 {
            for part in &encoded {
                positions.append(&part[role]);
            }
        }
        Ok(TripletBatch {
            len: triplets.len(),
            positions,
        })
    }

    fn emit(&self, pending: &mut Vec<Triplet>, all: bool) -> Result<(), Stop> {
        let bs = self.config.batch_size;
        let mut done = 0;
        while pending.len() - done >= bs || (all && pending.len() > done) {
            let end = (done + bs).min(pending.len());
            let batch = self.encode(&pending[done..end]);
            done = end;
            self.out.send(batch)?;
        }
        pending.drain(..done);
        Ok(())
    }

    fn epoch_order(&self, epoch: u64) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.units.len()).collect();
        if self.config.shuffle_buffer > 0 {
            let mut rng = ChaCha8Rng::seed_from_u64(self.config.seed);
            rng.set_stream((epoch.wrapping_add(1) << 1) | 1);
            order.shuffle(&mut rng);
        }
        order
    }

    fn produce(&self) -> Result<(), Stop> {
        let cfg = &self.config;
        let n_units = self.units.len() as u64;
        let mut epoch = 0u64;
        let mut queue: VecDeque<(u64, usize)> = VecDeque::new();
        let mut streams: Vec<Option<Stream>> = (0..cfg.streams).map(|_| None).collect();
        let mut shuffle: Vec<Triplet> = Vec::with_capacity(cfg.shuffle_buffer.min(1 << 20));
        let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
        rng.set_stream(3);
        let mut pending: Vec<Triplet> = Vec::with_capacity(cfg.batch_size * 2);
        let (mut made, mut made_at_epoch) = (0u64, 0u64);
        loop {
            self.out.check()?;
            for slot in streams.iter_mut() {
                if slot.as_ref().is_some_and(|s| s.reader.is_some()) {
                    continue;
                }
                *slot = None;
                let productive = epoch == 0 || made > made_at_epoch;
                if queue.is_empty() && productive && cfg.epochs.is_none_or(|e| epoch < e) {
                    made_at_epoch = made;
                    queue.extend(self.epoch_order(epoch).into_iter().map(|u| (epoch, u)));
                    epoch += 1;
                    self.report().epoch = epoch;
                }
                let Some((ep, u)) = queue.pop_front() else {
                    continue;
                };
                let unit = &self.units[u];
                let stream_id = ep * n_units + u as u64;
                match data::open_reader(
                    &unit.path,
                    unit.format,
                    Some((unit.start, unit.end)),
                    ReadOptions { validate: false },
                ) {
                    Ok(reader) => {
                        let mut unit_rng = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0x0070_7172);
                        unit_rng.set_stream(stream_id);
                        *slot = Some(Stream {
                            reader: Some(reader),
                            previous: None,
                            rng: unit_rng,
                            filter: Filter::new(&cfg.filter, stream_id),
                            out: Vec::with_capacity(cfg.read_ahead),
                            errors: Vec::new(),
                            read: 0,
                        });
                    }
                    Err(e) => {
                        if cfg.on_error == ErrorPolicy::Fail {
                            return self.out.send(Err(LoaderError::Data(e)));
                        }
                        self.report().errors += 1;
                    }
                }
            }
            if streams.iter().all(Option::is_none) {
                break;
            }
            let n = cfg.read_ahead;
            self.pool.install(|| {
                streams.par_iter_mut().flatten().for_each(|s| s.round(n));
            });
            for s in streams.iter_mut().flatten() {
                {
                    let mut r = self.report();
                    r.read += s.read;
                    r.triplets += s.out.len() as u64;
                    r.errors += s.errors.len() as u64;
                }
                if cfg.on_error == ErrorPolicy::Fail
                    && let Some(e) = s.errors.drain(..).next()
                {
                    return self.out.send(Err(LoaderError::Data(e)));
                }
                made += s.out.len() as u64;
                for t in s.out.drain(..) {
                    if cfg.shuffle_buffer == 0 {
                        pending.push(t);
                    } else if shuffle.len() < cfg.shuffle_buffer {
                        shuffle.push(t);
                    } else {
                        let j = rng.random_range(0..shuffle.len());
                        pending.push(std::mem::replace(&mut shuffle[j], t));
                    }
                }
            }
            self.emit(&mut pending, false)?;
        }
        shuffle.shuffle(&mut rng);
        pending.append(&mut shuffle);
        self.emit(&mut pending, cfg.keep_last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::synthetic::random_games;

    #[test]
    fn triplets_follow_games_and_r_differs_from_q() {
        let samples: Vec<Sample> = random_games(3).take(3000).collect();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut formed = 0;
        let mut boundaries = 0;
        for w in samples.windows(2) {
            let t = triplet(&w[0], &w[1], &mut rng);
            if w[1].ply != w[0].ply + 1 {
                boundaries += 1;
                assert!(t.is_none());
                continue;
            }
            if let Some(t) = t {
                formed += 1;
                assert_eq!(t.p, w[0].board);
                assert_eq!(t.q, w[1].board);
                assert_ne!(
                    (t.r.by_color, t.r.by_role),
                    (t.q.by_color, t.q.by_role),
                    "r must come from another move"
                );
                assert_eq!(t.r.turn, t.q.turn);
            }
        }
        assert!(boundaries > 5);
        assert!(formed > 2500, "{formed}");
    }

    #[test]
    fn records_of_different_games_make_no_triplet() {
        let a: Vec<Sample> = random_games(4).take(50).collect();
        let b: Vec<Sample> = random_games(5).skip(10).take(50).collect();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        // Same ply step but unrelated boards.
        let p = a[10];
        let mut q = b[20];
        q.ply = p.ply + 1;
        q.board.turn = p.board.turn.other();
        assert!(triplet(&p, &q, &mut rng).is_none());
    }
}
