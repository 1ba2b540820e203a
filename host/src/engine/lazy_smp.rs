//! Running one search on several threads (Lazy SMP): every thread runs the same iterative
//! deepening ([`Searcher`]) on its own position and histories; they share only the
//! transposition table, through which they help each other. The calling thread is the main
//! thread (0): it decides when to stop, reports progress and gives the result.

use std::time::Duration;

use shakmaty::{Chess, Move, Position};

use super::control::SearchControl;
use super::evaluator::Evaluator;
use super::history::ThreadData;
use super::limits::Limits;
use super::movepick::unpack;
use super::search::{Iteration, IterationReport, MATE, SearchResult, Searcher};
use super::tt::TranspositionTable;

/// Stack size of search threads: the recursion keeps a move list per ply.
pub(super) const SEARCH_STACK_BYTES: usize = 16 << 20;

/// A search to run: the root, the game's earlier positions, the limits and shared tables.
pub(super) struct SearchJob<'a> {
    /// The root position.
    pub root: &'a Chess,
    /// Hashes of the game's positions before the root ([`super::zobrist::hash`]), oldest first.
    pub history: &'a [u64],
    /// The limits.
    pub limits: &'a Limits,
    /// The shared transposition table.
    pub tt: &'a TranspositionTable,
    /// The shared control (stop, ponder, node counts): one counter per thread.
    pub control: &'a SearchControl,
}

/// The static evaluation (`quiescence` false) or quiescence search of the job's root on the
/// calling thread, with the first thread's histories: the score, the nodes, and the
/// evaluator's error if it met one.
pub(super) fn root_label<E: Evaluator>(
    job: &SearchJob<'_>,
    data: &mut ThreadData,
    eval: E,
    quiescence: bool,
) -> (i32, u64, Option<String>) {
    job.tt.new_search();
    let shared = (job.tt, job.control, job.limits);
    let mut searcher = Searcher::new(0, job.root, job.history, eval, shared, data);
    let (score, nodes) = searcher.root_label(quiescence);
    (score, nodes, searcher.take_eval_error())
}

/// Runs a search with one thread per entry of `threads` (the first is the calling thread, with
/// `main_eval`), the helpers each with an evaluator from `make_eval`. `report` is called by the main thread after each
/// iteration. In `infinite` and ponder mode the result is held back until `stop`/`ponderhit`.
/// Evaluator errors ([`Evaluator::take_error`]) of all threads come back in the result.
pub(super) fn run<M, E, F>(
    job: &SearchJob<'_>,
    threads: &mut [ThreadData],
    main_eval: M,
    make_eval: F,
    report: &IterationReport<'_>,
) -> SearchResult
where
    M: Evaluator,
    E: Evaluator,
    F: Fn() -> E + Sync,
{
    let (main_data, helpers) = threads
        .split_first_mut()
        .expect("a search needs at least one thread");
    job.tt.new_search();
    let shared = (job.tt, job.control, job.limits);
    let mut main = Searcher::new(0, job.root, job.history, main_eval, shared, main_data);
    let has_moves = main.has_root_moves();
    let mut errors = Vec::new();
    let last = if has_moves {
        std::thread::scope(|s| {
            let mut handles = Vec::new();
            for (i, data) in helpers.iter_mut().enumerate() {
                let make_eval = &make_eval;
                let spawned = std::thread::Builder::new()
                    .name(format!("search-{}", i + 1))
                    .stack_size(SEARCH_STACK_BYTES)
                    .spawn_scoped(s, move || {
                        let mut helper =
                            Searcher::new(i + 1, job.root, job.history, make_eval(), shared, data);
                        helper.iterate(&|_, _, _| {});
                        helper.take_eval_error()
                    });
                match spawned {
                    Ok(h) => handles.push(h),
                    Err(e) => errors.push(format!("cannot start search thread {}: {e}", i + 1)),
                }
            }
            let last = main.iterate(report);
            wait_for_release(job.limits, job.control);
            job.control.stop();
            for h in handles {
                match h.join() {
                    Ok(Some(e)) => errors.push(e),
                    Ok(None) => {}
                    Err(_) => errors.push("a helper search thread failed".to_string()),
                }
            }
            last
        })
    } else {
        wait_for_release(job.limits, job.control);
        None
    };
    if let Some(e) = main.take_eval_error() {
        errors.insert(0, e);
    }
    errors.dedup();
    let best = last
        .as_ref()
        .and_then(|it| it.pv.first().copied())
        .or_else(|| main.first_root_move());
    let ponder = best.and_then(|b| {
        last.as_ref()
            .and_then(|it| it.pv.get(1).copied())
            .or_else(|| ponder_from_tt(job.root, &b, job.tt))
    });
    SearchResult {
        best,
        ponder,
        last: last.unwrap_or(Iteration {
            depth: 0,
            seldepth: 0,
            score: if job.root.is_check() && !has_moves {
                -MATE
            } else {
                0
            },
            pv: Vec::new(),
        }),
        nodes: job.control.total_nodes(),
        elapsed: job.control.since_go(),
        errors,
    }
}

/// In `go infinite` and while pondering, the answer must wait for `stop` (or `ponderhit`).
fn wait_for_release(limits: &Limits, control: &SearchControl) {
    while !control.is_stopped() && (limits.infinite || control.is_pondering()) {
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The reply to `best` stored in the table, for pondering when the variation has no second move.
fn ponder_from_tt(root: &Chess, best: &Move, tt: &TranspositionTable) -> Option<Move> {
    let mut pos = root.clone();
    pos.play_unchecked(*best);
    let key = super::zobrist::hash(&pos);
    let e = tt.probe(key)?;
    unpack(&pos, e.mv)
}
