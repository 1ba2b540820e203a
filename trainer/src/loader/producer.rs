//! The producer thread of a [`super::Loader`]: opens units in streams, reads a round of every
//! stream on the pool while the batches of the previous round are encoded, shuffles, batches
//! and sends. Generic over what the records become ([`Examples`]).

use std::collections::VecDeque;
use std::sync::MutexGuard;

use plugin_api::FeatureSet;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use super::background::{Outbox, Stop};
use super::{Examples, LoaderConfig, LoaderError, LoaderReport};
use crate::data::filter::Filter;
use crate::data::{self, DataError, ErrorPolicy, SampleReader, Unit};

/// An open unit: its reader, its filter, what it remembers, and what its last round gave.
struct Stream<K: Examples> {
    reader: Option<Box<dyn SampleReader>>,
    filter: Filter,
    state: K::UnitState,
    out: Vec<K::Example>,
    errors: Vec<DataError>,
    read: u64,
    finished: bool,
}

impl<K: Examples> Stream<K> {
    /// Reads up to `n` records.
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
                    self.finished = true;
                    return;
                }
                Some(Ok(s)) => {
                    self.read += 1;
                    if let Some(example) = K::take(&mut self.state, s, &mut self.filter) {
                        self.out.push(example);
                    }
                }
                Some(Err(e)) => {
                    K::skipped(&mut self.state);
                    self.errors.push(e);
                }
            }
        }
    }
}

/// Everything the producer thread owns.
pub(super) struct Producer<K: Examples> {
    pub(super) config: LoaderConfig,
    pub(super) set: FeatureSet,
    pub(super) units: Vec<Unit>,
    pub(super) sizes: Vec<u64>,
    pub(super) pool: rayon::ThreadPool,
    pub(super) out: Outbox<K::Batch, LoaderError, LoaderReport>,
}

impl<K: Examples> Producer<K> {
    fn report(&self) -> MutexGuard<'_, LoaderReport> {
        self.out.report()
    }

    /// The unit order of one epoch (indices into `units`): shuffled with the seed when
    /// shuffling, else the files interleaved in proportion to their sizes.
    fn epoch_order(&self, epoch: u64) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.units.len()).collect();
        if self.config.shuffle_buffer > 0 {
            let mut rng = ChaCha8Rng::seed_from_u64(self.config.seed);
            rng.set_stream(epoch.wrapping_add(1) << 1);
            order.shuffle(&mut rng);
        } else {
            let key = |&i: &usize| {
                let u = &self.units[i];
                (u.start as f64 / self.sizes[u.file] as f64, u.file)
            };
            order.sort_by(|a, b| {
                key(a)
                    .partial_cmp(&key(b))
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
        }
        order
    }

    /// Encodes `examples` into one batch on all pool threads.
    fn encode(&self, examples: &[K::Example]) -> Result<K::Batch, LoaderError> {
        let parts = self.pool.current_num_threads().max(1);
        let per = examples.len().div_ceil(parts).max(1);
        let set = &self.set;
        let encoded: Result<Vec<K::Part>, LoaderError> = self.pool.install(|| {
            examples
                .par_chunks(per)
                .map(|c| K::encode(set, c))
                .collect()
        });
        Ok(K::join(set, encoded?, examples.len()))
    }

    /// Splits the full batches off the front of `pending`.
    fn take_ready(&self, pending: &mut Vec<K::Example>) -> Vec<Vec<K::Example>> {
        let bs = self.config.batch_size;
        let mut ready = Vec::new();
        let mut done = 0;
        while pending.len() - done >= bs {
            ready.push(pending[done..done + bs].to_vec());
            done += bs;
        }
        pending.drain(..done);
        ready
    }

    /// Encodes the ready batches, one after the other, each on all threads.
    fn encode_all(&self, ready: &[Vec<K::Example>]) -> Vec<Result<K::Batch, LoaderError>> {
        ready.iter().map(|examples| self.encode(examples)).collect()
    }

    /// Sends batches in order, counting them.
    fn send_all(&self, encoded: Vec<Result<K::Batch, LoaderError>>) -> Result<(), Stop> {
        for batch in encoded {
            if let Ok(b) = &batch {
                let mut r = self.report();
                r.sent += K::len(b) as u64;
                r.batches += 1;
            }
            self.out.send(batch)?;
        }
        Ok(())
    }

    /// A bad record or unreadable unit: sent as the error under [`ErrorPolicy::Fail`] (which
    /// ends the producer), else counted.
    fn bad(&self, e: DataError) -> Result<(), Stop> {
        if self.config.on_error == ErrorPolicy::Fail {
            self.out.send(Err(LoaderError::Data(e)))?;
            return Err(Stop);
        }
        self.report().add_error(e);
        Ok(())
    }

    /// Opens unit `u` of epoch `epoch` (`None` for a unit that cannot be opened, counted).
    fn open(&self, epoch: u64, u: usize) -> Result<Option<Stream<K>>, Stop> {
        let cfg = &self.config;
        let unit = &self.units[u];
        let stream = epoch * self.units.len() as u64 + u as u64;
        let range = Some((unit.start, unit.end));
        match data::open_reader(&unit.path, unit.format, range, cfg.read) {
            Ok(reader) => Ok(Some(Stream {
                reader: Some(reader),
                filter: Filter::new(&cfg.filter, stream),
                state: K::open(cfg.seed, stream),
                out: Vec::with_capacity(cfg.read_ahead),
                errors: Vec::new(),
                read: 0,
                finished: false,
            })),
            Err(e) => self.bad(e).map(|()| None),
        }
    }

    /// Runs until the data ends, an error is sent, or the consumer stops it.
    pub(super) fn produce(&self) -> Result<(), Stop> {
        let cfg = &self.config;
        let mut epoch = 0u64;
        let mut queue: VecDeque<(u64, usize)> = VecDeque::new();
        let mut streams: Vec<Option<Stream<K>>> = (0..cfg.streams).map(|_| None).collect();
        let mut shuffle: Vec<K::Example> = Vec::with_capacity(cfg.shuffle_buffer.min(1 << 20));
        let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
        rng.set_stream(1);
        let mut pending: Vec<K::Example> = Vec::with_capacity(cfg.batch_size * 2);
        // Examples kept so far, and at the start of the current epoch: an epoch that keeps
        // nothing (all records bad or filtered) ends a cycling run instead of spinning.
        let (mut kept, mut kept_at_epoch) = (0u64, 0u64);
        loop {
            self.out.check()?;
            // Open units in the free streams.
            for slot in streams.iter_mut() {
                if slot.as_ref().is_some_and(|s| !s.finished) {
                    continue;
                }
                *slot = None;
                let productive = epoch == 0 || kept > kept_at_epoch;
                if queue.is_empty() && productive && cfg.epochs.is_none_or(|e| epoch < e) {
                    kept_at_epoch = kept;
                    let order = self.epoch_order(epoch);
                    queue.extend(order.into_iter().map(|u| (epoch, u)));
                    epoch += 1;
                    self.report().epoch = epoch;
                }
                if let Some((ep, u)) = queue.pop_front() {
                    *slot = self.open(ep, u)?;
                }
            }
            if streams.iter().all(Option::is_none) {
                break;
            }
            // Read a round while the batches completed in the last round are encoded: both on
            // the pool, so decoding and encoding overlap.
            let ready = self.take_ready(&mut pending);
            let n = cfg.read_ahead;
            let (_, encoded) = self.pool.install(|| {
                rayon::join(
                    || streams.par_iter_mut().flatten().for_each(|s| s.round(n)),
                    || self.encode_all(&ready),
                )
            });
            drop(ready);
            self.send_all(encoded)?;
            // Collect in stream order.
            for s in streams.iter_mut().flatten() {
                {
                    let mut r = self.report();
                    r.read += s.read;
                    r.filter.merge(&s.filter.take_counts());
                    if s.finished {
                        r.units_done += 1;
                    }
                }
                for e in s.errors.drain(..) {
                    self.bad(e)?;
                }
                kept += s.out.len() as u64;
                for example in s.out.drain(..) {
                    if cfg.shuffle_buffer == 0 {
                        pending.push(example);
                    } else if shuffle.len() < cfg.shuffle_buffer {
                        shuffle.push(example);
                    } else {
                        let j = rng.random_range(0..shuffle.len());
                        pending.push(std::mem::replace(&mut shuffle[j], example));
                    }
                }
            }
        }
        // The end of the data: empty the shuffle buffer in random order, one batch at a time
        // (no second copy of the buffer, no pile of encoded batches beyond the queue).
        shuffle.shuffle(&mut rng);
        let mut batch = Vec::with_capacity(cfg.batch_size);
        for example in pending.drain(..).chain(shuffle.drain(..)) {
            batch.push(example);
            if batch.len() == cfg.batch_size {
                let encoded = self.encode(&batch);
                self.send_all(vec![encoded])?;
                batch.clear();
            }
        }
        if cfg.keep_last && !batch.is_empty() {
            let encoded = self.encode(&batch);
            self.send_all(vec![encoded])?;
        }
        Ok(())
    }
}
