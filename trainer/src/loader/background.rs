//! The queue between a producer thread and its consumer: bounded, ordered, stopped by dropping
//! the consumer's end. The loaders and the trainer's tensor prefetch all run on it.

use anyhow::{Context, Result, bail};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// The most worker threads a loader (or any `--threads` option) starts.
pub const MAX_THREADS: usize = 1024;

/// Why a producer stopped: its consumer went away, or it sent an error.
pub(crate) struct Stop;

/// The producer's end of a [`Background`] queue: the bounded channel, the stop flag the
/// consumer raises, and the counts both ends see.
pub(crate) struct Outbox<T, E, R> {
    tx: SyncSender<Result<T, E>>,
    stop: Arc<AtomicBool>,
    report: Arc<Mutex<R>>,
}

impl<T, E, R> Outbox<T, E, R> {
    /// Sends an item; stops after an error, or when the consumer is gone or asked to stop.
    pub(crate) fn send(&self, item: Result<T, E>) -> Result<(), Stop> {
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
/// that making them overlaps their use; the counts `R` are shared with the producer. The
/// producer stops at its first error. Dropping it stops the producer and joins its thread.
pub(crate) struct Background<T, E, R = ()> {
    rx: Option<Receiver<Result<T, E>>>,
    stop: Arc<AtomicBool>,
    report: Arc<Mutex<R>>,
    handle: Option<JoinHandle<()>>,
}

impl<T, E, R> Background<T, E, R>
where
    T: Send + 'static,
    E: Send + 'static,
    R: Clone + Default + Send + 'static,
{
    /// Starts `produce` on a thread named `name` with a queue of `queue` items (at least one).
    pub(crate) fn spawn(
        name: &str,
        queue: usize,
        produce: impl FnOnce(Outbox<T, E, R>) + Send + 'static,
    ) -> Result<Self> {
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
            .with_context(|| format!("cannot start the {name} thread"))?;
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

impl<T, E, R> Iterator for Background<T, E, R> {
    type Item = Result<T, E>;

    fn next(&mut self) -> Option<Self::Item> {
        self.rx.as_ref()?.recv().ok()
    }
}

impl<T, E, R> Drop for Background<T, E, R> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Dropping the receiver makes a blocked send fail, so the producer wakes up and ends.
        self.rx.take();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// The rayon pool of a loader's decoding and encoding, threads named `name-i` (0 threads:
/// one per core, as every worker count of the project, [`arena::workers`]).
pub(crate) fn worker_pool(name: &str, threads: usize) -> Result<rayon::ThreadPool> {
    if threads > MAX_THREADS {
        bail!("{threads} {name} threads is more than the {MAX_THREADS} this program starts");
    }
    let prefix = name.to_string();
    rayon::ThreadPoolBuilder::new()
        .num_threads(arena::workers::workers(threads))
        .thread_name(move |i| format!("{prefix}-{i}"))
        .build()
        .with_context(|| format!("cannot start the {name} threads"))
}
