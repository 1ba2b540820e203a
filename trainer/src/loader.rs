//! The parallel batch loader: training files in, [`SparseBatch`]es out, while training runs.
//!
//! ```text
//!  files ──units──▶ streams (rayon: read, decode, filter) ──▶ shuffle buffer ──▶ batches
//!                                                    (rayon: encode through the plugins)
//!                                                          ──▶ bounded queue ──▶ consumer
//! ```
//!
//! - Every input file is cut into *units* (about `unit_bytes`, on record boundaries: whole
//!   binpack chunks, whole 40-byte records, whole lines; see [`data::units`]). Units of all files
//!   are read in an order that mixes the files: shuffled per epoch with the seed when shuffling,
//!   else interleaved in proportion to the files' sizes.
//! - `streams` units are open at a time. In each round every open stream reads up to
//!   `read_ahead` records on the rayon pool (decoding and filtering in parallel), while the
//!   batches completed in the previous round are encoded on the same pool; then the new samples
//!   go into the shuffle buffer in stream order.
//! - The shuffle buffer holds `shuffle_buffer` samples; each new sample replaces a random one,
//!   which goes out. Samples leave in batches of `batch_size`, each encoded (both perspectives,
//!   through the feature plugins) by all pool threads at once, then sent into a queue of `queue`
//!   batches. The producer blocks when the queue is full: loading runs ahead of training by at
//!   most that much.
//!
//! Everything is decided in one producer thread in a fixed order and each unit's random skips
//! have their own seeded stream, so with one seed the batches are identical from run to run
//! whatever the number of threads.
//!
//! Memory is bounded whatever the input size: `streams` × (a binpack chunk, ~1 MiB, or the
//! read buffers) + `streams × read_ahead + shuffle_buffer` samples (about 100 bytes each) +
//! encoded batches (`batch_size` × (8 × active indices + 14) bytes each): the `queue`, one
//! waiting to go in, and those of one round (`streams × read_ahead / batch_size + 1`). With the
//! defaults and `all+ph+pv` that is about 70 MB (measured: a 1 GB `.bin` and a 200 MB one need
//! the same).

use std::collections::VecDeque;
use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use plugin_api::FeatureSet;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::batch::SparseBatch;
use crate::data::{self, DataError, ErrorPolicy, Format, ReadOptions, Sample, SampleReader, Unit};
use crate::filter::{Filter, FilterConfig, FilterCounts};

/// One input file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input {
    /// The file.
    pub path: PathBuf,
    /// Its format.
    pub format: Format,
}

impl Input {
    /// An input whose format is given or else told by its extension.
    pub fn new(path: impl Into<PathBuf>, format: Option<Format>) -> Result<Input, String> {
        let path = path.into();
        let format = Format::resolve(format, &path)?;
        Ok(Input { path, format })
    }
}

/// How the loader reads, filters, shuffles and batches.
#[derive(Clone, Debug)]
pub struct LoaderConfig {
    /// The files, mixed.
    pub inputs: Vec<Input>,
    /// Positions per batch.
    pub batch_size: usize,
    /// Threads of the loader's rayon pool (0: one per core).
    pub threads: usize,
    /// Units read at the same time.
    pub streams: usize,
    /// Records each stream reads per round.
    pub read_ahead: usize,
    /// Batches ready ahead of the consumer.
    pub queue: usize,
    /// Samples in the shuffle buffer (0: keep the order of the data).
    pub shuffle_buffer: usize,
    /// Seed of the unit order, the shuffle buffer and the random skips.
    pub seed: u64,
    /// Which positions to drop.
    pub filter: FilterConfig,
    /// Passes over the data (`None`: cycle forever).
    pub epochs: Option<u64>,
    /// Target size of a unit in bytes.
    pub unit_bytes: u64,
    /// Reader options (by default binary records are checked structurally, not with a move
    /// generator: the loader's hot path).
    pub read: ReadOptions,
    /// Skip bad records (counted, the first few kept in the report) or stop at the first.
    pub on_error: ErrorPolicy,
    /// Send the last, smaller batch at the end of the data.
    pub keep_last: bool,
}

impl Default for LoaderConfig {
    fn default() -> Self {
        LoaderConfig {
            inputs: Vec::new(),
            batch_size: 16384,
            threads: 0,
            streams: 8,
            read_ahead: 2048,
            queue: 4,
            shuffle_buffer: 262_144,
            seed: 0,
            filter: FilterConfig::quiet(),
            epochs: Some(1),
            unit_bytes: 1 << 20,
            read: ReadOptions { validate: false },
            on_error: ErrorPolicy::Skip,
            keep_last: true,
        }
    }
}

/// Why the loader stopped early.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoaderError {
    /// A bad record under [`ErrorPolicy::Fail`], or a file that cannot be read.
    Data(DataError),
    /// A feature block failed.
    Encode(String),
}

impl fmt::Display for LoaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoaderError::Data(e) => write!(f, "{e}"),
            LoaderError::Encode(e) => write!(f, "encoding failed: {e}"),
        }
    }
}

impl std::error::Error for LoaderError {}

/// What the loader did so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoaderReport {
    /// Records decoded.
    pub read: u64,
    /// Positions sent in batches.
    pub sent: u64,
    /// Batches sent.
    pub batches: u64,
    /// What the filters dropped.
    pub filter: FilterCounts,
    /// Bad records skipped.
    pub errors: u64,
    /// The first bad records (at most [`LoaderReport::KEPT_ERRORS`]).
    pub first_errors: Vec<DataError>,
    /// Epochs started.
    pub epoch: u64,
    /// Units finished.
    pub units_done: u64,
}

impl LoaderReport {
    /// How many bad records are kept with their messages.
    pub const KEPT_ERRORS: usize = 20;

    fn add_error(&mut self, e: DataError) {
        self.errors += 1;
        if self.first_errors.len() < Self::KEPT_ERRORS {
            self.first_errors.push(e);
        }
    }
}

/// Batches from files, produced on a background thread. Iterate it; dropping it stops the
/// producer.
pub struct BatchLoader {
    queue: Background<SparseBatch, LoaderReport>,
}

impl BatchLoader {
    /// Starts loading. Fails at once for a bad configuration or an input that cannot be opened.
    pub fn new(config: LoaderConfig, set: FeatureSet) -> Result<BatchLoader, String> {
        if config.inputs.is_empty() {
            return Err("no input files".into());
        }
        if config.batch_size == 0 || config.streams == 0 || config.read_ahead == 0 {
            return Err("batch size, streams and read-ahead must be positive".into());
        }
        config.filter.check()?;
        let (units, sizes) = units_of(&config.inputs, config.unit_bytes)?;
        let pool = worker_pool("loader", config.threads)?;
        let queue = Background::spawn("loader", config.queue, move |out| {
            let producer = Producer {
                config,
                set,
                units,
                sizes,
                pool,
                out,
            };
            let _ = producer.produce();
        })?;
        Ok(BatchLoader { queue })
    }

    /// A snapshot of the counts.
    pub fn report(&self) -> LoaderReport {
        self.queue.report()
    }
}

impl Iterator for BatchLoader {
    type Item = Result<SparseBatch, LoaderError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.queue.next()
    }
}

/// The units of `inputs` (byte ranges of about `unit_bytes`, in file order) and each file's
/// size in bytes (at least 1).
pub(crate) fn units_of(inputs: &[Input], unit_bytes: u64) -> Result<(Vec<Unit>, Vec<u64>), String> {
    let mut units = Vec::new();
    let mut sizes = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        let ranges =
            data::units(&input.path, input.format, unit_bytes).map_err(|e| e.to_string())?;
        sizes.push(ranges.last().map_or(0, |r| r.1).max(1));
        units.extend(ranges.into_iter().map(|(start, end)| Unit {
            file: i,
            path: input.path.clone(),
            format: input.format,
            start,
            end,
        }));
    }
    Ok((units, sizes))
}

/// The rayon pool of a loader's decoding and encoding, threads named `name-i` (0 threads:
/// one per core).
pub(crate) fn worker_pool(name: &str, threads: usize) -> Result<rayon::ThreadPool, String> {
    if threads > MAX_THREADS {
        return Err(format!(
            "{threads} {name} threads is more than the {MAX_THREADS} this program starts"
        ));
    }
    let name = name.to_string();
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(move |i| format!("{name}-{i}"))
        .build()
        .map_err(|e| e.to_string())
}

/// The most worker threads a loader (or any `--threads` option) starts.
pub const MAX_THREADS: usize = 1024;

/// Why a producer stopped: its consumer went away, or it sent an error.
pub(crate) struct Stop;

/// The producer's end of a [`Background`] queue: the bounded channel, the stop flag the
/// consumer raises, and the counts both ends see.
pub(crate) struct Outbox<T, R> {
    tx: SyncSender<Result<T, LoaderError>>,
    stop: Arc<AtomicBool>,
    report: Arc<Mutex<R>>,
}

impl<T, R> Outbox<T, R> {
    /// Sends an item; stops after an error, or when the consumer is gone or asked to stop.
    pub(crate) fn send(&self, item: Result<T, LoaderError>) -> Result<(), Stop> {
        let failed = item.is_err();
        if self.stop.load(Ordering::Relaxed) || self.tx.send(item).is_err() || failed {
            return Err(Stop);
        }
        Ok(())
    }

    /// `Err(Stop)` once the consumer asked to stop.
    pub(crate) fn check(&self) -> Result<(), Stop> {
        if self.stop.load(Ordering::Relaxed) {
            Err(Stop)
        } else {
            Ok(())
        }
    }

    /// The shared counts (a poisoned lock still gives them: they are plain numbers).
    pub(crate) fn report(&self) -> MutexGuard<'_, R> {
        self.report.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Items made on a named producer thread and received in order through a bounded queue, so
/// that loading overlaps their use; the counts `R` are shared with the producer. Dropping it
/// stops the producer and joins its thread.
pub(crate) struct Background<T, R> {
    rx: Option<Receiver<Result<T, LoaderError>>>,
    stop: Arc<AtomicBool>,
    report: Arc<Mutex<R>>,
    handle: Option<JoinHandle<()>>,
}

impl<T: Send + 'static, R: Clone + Default + Send + 'static> Background<T, R> {
    /// Starts `produce` on a thread named `name` with a queue of `queue` items (at least one).
    pub(crate) fn spawn(
        name: &str,
        queue: usize,
        produce: impl FnOnce(Outbox<T, R>) + Send + 'static,
    ) -> Result<Self, String> {
        let (tx, rx) = sync_channel(queue.max(1));
        let stop = Arc::new(AtomicBool::new(false));
        let report = Arc::new(Mutex::new(R::default()));
        let out = Outbox {
            tx,
            stop: stop.clone(),
            report: report.clone(),
        };
        let handle = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || produce(out))
            .map_err(|e| e.to_string())?;
        Ok(Background {
            rx: Some(rx),
            stop,
            report,
            handle: Some(handle),
        })
    }

    /// A snapshot of the counts.
    pub(crate) fn report(&self) -> R {
        self.report
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl<T, R> Iterator for Background<T, R> {
    type Item = Result<T, LoaderError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.rx.as_ref()?.recv().ok()
    }
}

impl<T, R> Drop for Background<T, R> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Dropping the receiver makes a blocked send fail, so the producer wakes up and ends.
        self.rx.take();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// An open unit and its filter.
struct Stream {
    reader: Option<Box<dyn SampleReader>>,
    filter: Filter,
    out: Vec<Sample>,
    errors: Vec<DataError>,
    read: u64,
    finished: bool,
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
                    self.finished = true;
                    return;
                }
                Some(Ok(s)) => {
                    self.read += 1;
                    if self.filter.keep(&s) {
                        self.out.push(s);
                    }
                }
                Some(Err(e)) => self.errors.push(e),
            }
        }
    }
}

struct Producer {
    config: LoaderConfig,
    set: FeatureSet,
    units: Vec<Unit>,
    sizes: Vec<u64>,
    pool: rayon::ThreadPool,
    out: Outbox<SparseBatch, LoaderReport>,
}

impl Producer {
    fn report(&self) -> MutexGuard<'_, LoaderReport> {
        self.out.report()
    }

    /// The unit order of one epoch (indices into `units`).
    fn epoch_order(&self, epoch: u64) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.units.len()).collect();
        if self.config.shuffle_buffer > 0 {
            let mut rng = ChaCha8Rng::seed_from_u64(self.config.seed);
            rng.set_stream(epoch.wrapping_add(1) << 1);
            order.shuffle(&mut rng);
        } else {
            // Interleave the files in proportion to their sizes.
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

    /// Encodes `samples` into one batch on all pool threads.
    fn encode(&self, samples: &[Sample]) -> Result<SparseBatch, LoaderError> {
        let parts = self.pool.current_num_threads().max(1);
        let per = samples.len().div_ceil(parts).max(1);
        let set = &self.set;
        let encoded: Result<Vec<SparseBatch>, LoaderError> = self.pool.install(|| {
            samples
                .par_chunks(per)
                .map(|chunk| {
                    let mut b = SparseBatch::with_capacity(set, chunk.len());
                    let mut scratch = Vec::with_capacity(set.max_active());
                    for s in chunk {
                        b.push_sample(set, s, &mut scratch)
                            .map_err(|e| LoaderError::Encode(e.to_string()))?;
                    }
                    Ok(b)
                })
                .collect()
        });
        Ok(SparseBatch::concat(&encoded?))
    }

    /// Splits the full batches off the front of `pending`.
    fn take_ready(&self, pending: &mut Vec<Sample>) -> Vec<Vec<Sample>> {
        let bs = self.config.batch_size;
        let mut ready = Vec::new();
        let mut done = 0;
        while pending.len() - done >= bs {
            let end = (done + bs).min(pending.len());
            ready.push(pending[done..end].to_vec());
            done = end;
        }
        pending.drain(..done);
        ready
    }

    /// Encodes the ready batches (all threads) and sends them in order.
    fn encode_all(&self, ready: &[Vec<Sample>]) -> Vec<Result<SparseBatch, LoaderError>> {
        ready.iter().map(|samples| self.encode(samples)).collect()
    }

    fn send_all(&self, encoded: Vec<Result<SparseBatch, LoaderError>>) -> Result<(), Stop> {
        for batch in encoded {
            if let Ok(b) = &batch {
                let mut r = self.report();
                r.sent += b.len as u64;
                r.batches += 1;
            }
            self.out.send(batch)?;
        }
        Ok(())
    }

    fn produce(&self) -> Result<(), Stop> {
        let cfg = &self.config;
        let n_units = self.units.len() as u64;
        let mut epoch = 0u64;
        let mut queue: VecDeque<(u64, usize)> = VecDeque::new();
        let mut streams: Vec<Option<Stream>> = (0..cfg.streams).map(|_| None).collect();
        let mut shuffle: Vec<Sample> = Vec::with_capacity(cfg.shuffle_buffer.min(1 << 20));
        let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
        rng.set_stream(1);
        let mut pending: Vec<Sample> = Vec::with_capacity(cfg.batch_size * 2);
        // Kept samples so far, and at the start of the current epoch: an epoch that keeps
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
                let Some((ep, u)) = queue.pop_front() else {
                    continue;
                };
                let unit = &self.units[u];
                match data::open_reader(
                    &unit.path,
                    unit.format,
                    Some((unit.start, unit.end)),
                    cfg.read,
                ) {
                    Ok(reader) => {
                        *slot = Some(Stream {
                            reader: Some(reader),
                            filter: Filter::new(&cfg.filter, ep * n_units + u as u64),
                            out: Vec::with_capacity(cfg.read_ahead),
                            errors: Vec::new(),
                            read: 0,
                            finished: false,
                        })
                    }
                    Err(e) => {
                        if cfg.on_error == ErrorPolicy::Fail {
                            return self.out.send(Err(LoaderError::Data(e)));
                        }
                        self.report().add_error(e);
                    }
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
                    if cfg.on_error == ErrorPolicy::Fail {
                        return self.out.send(Err(LoaderError::Data(e)));
                    }
                    self.report().add_error(e);
                }
                kept += s.out.len() as u64;
                for sample in s.out.drain(..) {
                    if cfg.shuffle_buffer == 0 {
                        pending.push(sample);
                    } else if shuffle.len() < cfg.shuffle_buffer {
                        shuffle.push(sample);
                    } else {
                        let j = rng.random_range(0..shuffle.len());
                        pending.push(std::mem::replace(&mut shuffle[j], sample));
                    }
                }
            }
        }
        // The end of the data: empty the shuffle buffer in random order, one batch at a time
        // (no second copy of the buffer, no pile of encoded batches beyond the queue).
        shuffle.shuffle(&mut rng);
        let mut batch = Vec::with_capacity(cfg.batch_size);
        for sample in pending.drain(..).chain(shuffle.drain(..)) {
            batch.push(sample);
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
