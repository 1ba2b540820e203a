//! [`SearchControl`]: what the front end and every search thread of one search share besides the
//! transposition table: the stop and ponder switches, the clock and the per-thread node counts.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// State shared by the [`Engine`](super::facade::Engine) and all search threads of one search;
/// the report of each iteration reads it too.
#[derive(Debug)]
pub struct SearchControl {
    stop: AtomicBool,
    pondering: AtomicBool,
    base: Instant,
    /// Nanoseconds from `base` to the moment the clock started (reset by `ponderhit`).
    start_ns: AtomicU64,
    nodes: Vec<PaddedCounter>,
}

#[derive(Debug, Default)]
#[repr(align(64))]
struct PaddedCounter(AtomicU64);

impl SearchControl {
    /// Control for a search with `threads` threads, started now; `ponder` for `go ponder`.
    pub(super) fn new(threads: usize, ponder: bool) -> Self {
        SearchControl {
            stop: AtomicBool::new(false),
            pondering: AtomicBool::new(ponder),
            base: Instant::now(),
            start_ns: AtomicU64::new(0),
            nodes: (0..threads.max(1))
                .map(|_| PaddedCounter::default())
                .collect(),
        }
    }

    /// Asks every thread to stop as soon as possible (UCI `stop`, or a limit reached).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Whether a stop was asked.
    pub fn is_stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// UCI `ponderhit`: the pondered move was played; the clock starts now.
    pub fn ponderhit(&self) {
        let now = self.base.elapsed().as_nanos() as u64;
        self.start_ns.store(now, Ordering::Relaxed);
        self.pondering.store(false, Ordering::Release);
    }

    /// Whether the search is still pondering.
    pub fn is_pondering(&self) -> bool {
        self.pondering.load(Ordering::Acquire)
    }

    /// Time since the clock started.
    pub fn elapsed(&self) -> Duration {
        let start = Duration::from_nanos(self.start_ns.load(Ordering::Relaxed));
        self.base.elapsed().saturating_sub(start)
    }

    /// Time since the search began (for `info time` and the speed).
    pub fn since_go(&self) -> Duration {
        self.base.elapsed()
    }

    /// Nodes searched by all threads (as last published).
    pub fn total_nodes(&self) -> u64 {
        self.nodes.iter().map(|c| c.0.load(Ordering::Relaxed)).sum()
    }

    /// Publishes the node count of search thread `thread` (read by [`total_nodes`](Self::total_nodes)).
    #[inline(always)]
    pub(super) fn publish_nodes(&self, thread: usize, nodes: u64) {
        self.nodes[thread].0.store(nodes, Ordering::Relaxed);
    }

    /// The number of search threads this control counts nodes for.
    #[inline(always)]
    pub(super) fn threads(&self) -> usize {
        self.nodes.len()
    }
}
