//! [`Engine`]: one object that runs searches. It owns what lives longer than one search — the
//! transposition table, the histories of every Lazy SMP thread, the evaluation — so that callers
//! (the UCI loop, `host bench`, the trainer's data generation, tests) only say what to search
//! and how far, and never assemble tables, thread data and controls by hand.
//!
//! A search runs either on the calling thread ([`Engine::search`], which then needs a stack of
//! [`Engine::SEARCH_STACK_BYTES`]) or on a thread of its own ([`Engine::start_search`]) that
//! [`Engine::stop`] and [`Engine::ponderhit`] reach while it runs, as UCI needs.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::thread::JoinHandle;

use shakmaty::Chess;

use super::control::SearchControl;
use super::eval_source::EvalSource;
use super::evaluator::{Builtin, Evaluator};
use super::history::ThreadData;
use super::label::{EvalFailure, Label, LabelBudget};
use super::lazy_smp::{self, SEARCH_STACK_BYTES, SearchJob};
use super::limits::Limits;
use super::nnue_evaluator::NnueEval;
use super::search::{Iteration, IterationReport, SearchResult};
use super::tt::{HashError, TranspositionTable};
use crate::nnue::Nnue;

/// A chess engine: the transposition table, the histories of each search thread and the
/// evaluation, kept from one search to the next (as within a game), and at most one search
/// running in the background.
pub struct Engine {
    /// Shared with the background search while one runs.
    tt: Arc<TranspositionTable>,
    /// One per search thread, the main thread's first; empty while a background search has them.
    threads: Vec<ThreadData>,
    /// The number of search threads (`threads.len()` whenever no search runs).
    thread_count: usize,
    /// Shared with the background search while one runs.
    eval: Arc<EvalSource>,
    background: Option<BackgroundSearch>,
}

/// A search running on its own thread: its control, and the thread, which gives the histories
/// back when it ends.
struct BackgroundSearch {
    control: Arc<SearchControl>,
    handle: JoinHandle<Vec<ThreadData>>,
}

impl Engine {
    /// Stack size a thread needs to call [`search`](Self::search): the main search thread is
    /// the caller's, and the recursion keeps a move list per ply.
    pub const SEARCH_STACK_BYTES: usize = SEARCH_STACK_BYTES;

    /// An engine with a cleared table of `hash_mb` MiB, `threads` search threads (at least one)
    /// with empty histories, and the evaluation `eval`. Fails if the table cannot be allocated.
    pub fn new(hash_mb: usize, threads: usize, eval: EvalSource) -> Result<Self, HashError> {
        let thread_count = threads.max(1);
        Ok(Engine {
            tt: Arc::new(TranspositionTable::new(hash_mb)?),
            threads: fresh_threads(thread_count),
            thread_count,
            eval: Arc::new(eval),
            background: None,
        })
    }

    /// The size of the transposition table in MiB.
    pub fn hash_mb(&self) -> usize {
        self.tt.size_mb()
    }

    /// The number of search threads.
    pub fn threads(&self) -> usize {
        self.thread_count
    }

    /// The evaluation the searches use.
    pub fn eval(&self) -> &EvalSource {
        &self.eval
    }

    /// Makes `eval` the evaluation of the next searches (a background search is finished first).
    pub fn set_eval(&mut self, eval: EvalSource) {
        self.finish();
        self.eval = Arc::new(eval);
    }

    /// Forgets the previous game (UCI `ucinewgame`): clears the table and every thread's
    /// histories, so that the next search depends on nothing searched before. A background
    /// search is finished first.
    pub fn new_game(&mut self) {
        self.finish();
        self.tt.clear();
        for t in &mut self.threads {
            t.clear();
        }
    }

    /// Clears the transposition table only (UCI `Clear Hash`); the histories stay. A background
    /// search is finished first.
    pub fn clear_hash(&mut self) {
        self.finish();
        self.tt.clear();
    }

    /// Replaces the table by a cleared one of `mb` MiB (nothing happens if it has that size).
    /// The old table is freed first, so the two need not fit in memory at once; if the new one
    /// cannot be had, the error comes back and the table has its old size again (or, should
    /// even that fail, 1 MiB). A background search is finished first.
    pub fn resize_hash(&mut self, mb: usize) -> Result<(), HashError> {
        self.finish();
        let old_mb = self.hash_mb();
        if mb == old_mb {
            return Ok(());
        }
        self.tt = Arc::new(TranspositionTable::new(1)?);
        let error = match TranspositionTable::new(mb) {
            Ok(tt) => {
                self.tt = Arc::new(tt);
                return Ok(());
            }
            Err(e) => e,
        };
        match TranspositionTable::new(old_mb) {
            Ok(tt) => {
                self.tt = Arc::new(tt);
                Err(error)
            }
            Err(again) => Err(HashError::Fallback(Box::new(error), Box::new(again))),
        }
    }

    /// Sets the number of search threads (at least one): new threads start with empty
    /// histories, those kept keep theirs. A background search is finished first.
    pub fn set_threads(&mut self, threads: usize) {
        self.finish();
        self.thread_count = threads.max(1);
        self.threads.resize_with(self.thread_count, ThreadData::new);
    }

    /// Searches `root` on the calling thread (with helper threads when there are several),
    /// `history` being the hashes of the game's positions before it
    /// ([`super::zobrist::hash`], oldest first, for repetitions). `report` is called after
    /// each iteration. A background search is finished first.
    pub fn search(
        &mut self,
        root: &Chess,
        history: &[u64],
        limits: &Limits,
        report: &IterationReport<'_>,
    ) -> SearchResult {
        self.finish();
        let control = SearchControl::new(self.thread_count, false);
        let job = SearchJob {
            root,
            history,
            limits,
            tt: &self.tt,
            control: &control,
        };
        run_with(&self.eval, &job, &mut self.threads, report)
    }

    /// [`search`](Self::search) on the calling thread alone, with `eval` (made for this
    /// engine's evaluation, [`EvalSource::evaluator`]) lent to it: many short searches (data
    /// generation) then share one evaluator's buffers instead of allocating them each time.
    /// Histories and table as in any search; the engine's other threads stay idle.
    pub fn search_with<E: Evaluator>(
        &mut self,
        eval: &mut E,
        root: &Chess,
        history: &[u64],
        limits: &Limits,
    ) -> SearchResult {
        self.on_calling_thread(root, history, limits, |job, data| {
            lazy_smp::run(
                job,
                std::slice::from_mut(data),
                eval,
                || Builtin,
                &|_, _, _| {},
            )
        })
    }

    /// Scores `root` (after the positions hashed in `history`) under `budget` on the calling
    /// thread alone: see [`super::label`]. An evaluation error met on the way fails it.
    pub fn label(
        &mut self,
        root: &Chess,
        history: &[u64],
        budget: LabelBudget,
    ) -> Result<Label, EvalFailure> {
        let source = Arc::clone(&self.eval);
        self.label_with(&mut source.evaluator(), root, history, budget)
    }

    /// [`label`](Self::label) with `eval` lent to it, as [`search_with`](Self::search_with).
    pub fn label_with<E: Evaluator>(
        &mut self,
        eval: &mut E,
        root: &Chess,
        history: &[u64],
        budget: LabelBudget,
    ) -> Result<Label, EvalFailure> {
        let limits = match budget {
            LabelBudget::Nodes(n) => Limits {
                nodes: Some(n),
                ..Limits::default()
            },
            LabelBudget::Depth(d) => Limits::at_depth(d),
            LabelBudget::Static | LabelBudget::Quiescence => {
                let quiescence = budget == LabelBudget::Quiescence;
                let (score, nodes, error) =
                    self.on_calling_thread(root, history, &Limits::default(), |job, data| {
                        lazy_smp::root_label(job, data, eval, quiescence)
                    });
                return match error {
                    Some(e) => Err(EvalFailure(e)),
                    None => Ok(Label { score, nodes }),
                };
            }
        };
        let result = self.search_with(eval, root, history, &limits);
        match result.errors.into_iter().next() {
            Some(e) => Err(EvalFailure(e)),
            None => Ok(Label {
                score: result.last.score,
                nodes: result.nodes,
            }),
        }
    }

    /// Runs `work` on the calling thread with the job of one search thread (this engine's
    /// table, its first thread's histories), a background search finished first.
    fn on_calling_thread<R>(
        &mut self,
        root: &Chess,
        history: &[u64],
        limits: &Limits,
        work: impl FnOnce(&SearchJob<'_>, &mut ThreadData) -> R,
    ) -> R {
        self.finish();
        let control = SearchControl::new(1, false);
        let job = SearchJob {
            root,
            history,
            limits,
            tt: &self.tt,
            control: &control,
        };
        work(&job, &mut self.threads[0])
    }

    /// Starts searching `root` (after the positions hashed in `history`) on a thread of its own
    /// and returns at once; `ponder` starts it in ponder mode (`go ponder`). `report` is called
    /// after each iteration, `finished` with the result once the search ends (after
    /// [`stop`](Self::stop) in `infinite` and ponder mode), or with `None` if the search failed
    /// (panicked; the histories are then cleared). Fails if the thread cannot be started, which
    /// also clears the histories. A background search is finished first.
    pub fn start_search(
        &mut self,
        root: Chess,
        history: Vec<u64>,
        limits: Limits,
        ponder: bool,
        report: impl Fn(&Iteration, &SearchControl, &TranspositionTable) + Send + Sync + 'static,
        finished: impl FnOnce(Option<SearchResult>) + Send + 'static,
    ) -> Result<(), std::io::Error> {
        self.finish();
        let control = Arc::new(SearchControl::new(self.thread_count, ponder));
        let mut threads = std::mem::take(&mut self.threads);
        let tt = Arc::clone(&self.tt);
        let eval = Arc::clone(&self.eval);
        let ctl = Arc::clone(&control);
        let spawned = std::thread::Builder::new()
            .name("search".into())
            .stack_size(SEARCH_STACK_BYTES)
            .spawn(move || {
                let outcome = catch_unwind(AssertUnwindSafe(|| {
                    let job = SearchJob {
                        root: &root,
                        history: &history,
                        limits: &limits,
                        tt: &tt,
                        control: &ctl,
                    };
                    run_with(&eval, &job, &mut threads, &report)
                }));
                let searched = outcome.is_ok();
                finished(outcome.ok());
                if searched { threads } else { Vec::new() }
            });
        match spawned {
            Ok(handle) => {
                self.background = Some(BackgroundSearch { control, handle });
                Ok(())
            }
            Err(e) => {
                self.threads = fresh_threads(self.thread_count);
                Err(e)
            }
        }
    }

    /// Asks the background search, if any, to stop as soon as possible (UCI `stop`).
    pub fn stop(&self) {
        if let Some(b) = &self.background {
            b.control.stop();
        }
    }

    /// Tells the background search, if any, that the pondered move was played (UCI
    /// `ponderhit`): its clock starts now.
    pub fn ponderhit(&self) {
        if let Some(b) = &self.background {
            b.control.ponderhit();
        }
    }

    /// Stops the background search, if any, and waits until it has ended (its `finished` has
    /// run by then) and given the histories back.
    pub fn finish(&mut self) {
        let Some(background) = self.background.take() else {
            return;
        };
        background.control.stop();
        // A search that failed gives nothing back: its threads start again with empty histories.
        self.threads = background.handle.join().unwrap_or_default();
        self.threads.resize_with(self.thread_count, ThreadData::new);
    }
}

impl Drop for Engine {
    /// A background search does not outlive its engine: it is stopped and waited for.
    fn drop(&mut self) {
        self.finish();
    }
}

fn fresh_threads(count: usize) -> Vec<ThreadData> {
    (0..count).map(|_| ThreadData::new()).collect()
}

/// Runs `job` with an evaluator of `source` in every thread (built each search: the NNUE's
/// accumulators belong to one search).
fn run_with(
    source: &EvalSource,
    job: &SearchJob<'_>,
    threads: &mut [ThreadData],
    report: &IterationReport<'_>,
) -> SearchResult {
    match source {
        EvalSource::Builtin => lazy_smp::run(job, threads, Builtin, || Builtin, report),
        EvalSource::Nnue { nnue, kernels, .. } => {
            let nnue: &Nnue = nnue;
            let (kernels, units) = (*kernels, source.units());
            let make = || NnueEval::new(nnue, kernels, units);
            lazy_smp::run(job, threads, make(), make, report)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use shakmaty::Position;

    use super::*;

    const ITALIAN: &str = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3";

    fn pos(fen: &str) -> Chess {
        chess_text::fen::parse_position(fen).unwrap()
    }

    #[test]
    fn a_new_game_forgets_what_earlier_searches_learned() {
        let mut engine = Engine::new(4, 1, EvalSource::Builtin).unwrap();
        let first = engine.search(&pos(ITALIAN), &[], &Limits::at_depth(7), &|_, _, _| {});
        engine.search(&Chess::default(), &[], &Limits::at_depth(7), &|_, _, _| {});
        engine.new_game();
        let again = engine.search(&pos(ITALIAN), &[], &Limits::at_depth(7), &|_, _, _| {});
        assert_eq!(first.nodes, again.nodes);
        assert_eq!(first.best, again.best);
        assert!(again.errors.is_empty(), "{:?}", again.errors);
    }

    #[test]
    fn hash_and_threads_can_change() {
        let mut engine = Engine::new(4, 1, EvalSource::Builtin).unwrap();
        engine.resize_hash(2).unwrap();
        assert_eq!(engine.hash_mb(), 2);
        engine.set_threads(3);
        assert_eq!(engine.threads(), 3);
        let r = engine.search(&pos(ITALIAN), &[], &Limits::at_depth(6), &|_, _, _| {});
        assert!(r.best.is_some() && r.errors.is_empty(), "{r:?}");
        engine.set_threads(0);
        assert_eq!(engine.threads(), 1);
    }

    #[test]
    fn a_background_search_runs_until_stopped_and_then_reports_its_result() {
        let mut engine = Engine::new(4, 2, EvalSource::Builtin).unwrap();
        let (iterations, reported) = mpsc::channel();
        let (results, finished) = mpsc::channel();
        let infinite = Limits {
            infinite: true,
            ..Limits::default()
        };
        engine
            .start_search(
                pos(ITALIAN),
                Vec::new(),
                infinite,
                false,
                move |it, _, _| {
                    let _ = iterations.send(it.depth);
                },
                move |result| results.send(result).unwrap(),
            )
            .unwrap();
        // It searches on: at least one iteration comes, no result until the stop.
        reported.recv_timeout(Duration::from_secs(30)).unwrap();
        assert!(finished.try_recv().is_err());
        engine.stop();
        let result = finished
            .recv_timeout(Duration::from_secs(30))
            .unwrap()
            .expect("the search ran");
        assert!(pos(ITALIAN).is_legal(result.best.unwrap()));
        engine.finish();
        assert_eq!(engine.threads(), 2);
        // The engine searches again on the calling thread afterwards.
        let r = engine.search(&pos(ITALIAN), &[], &Limits::at_depth(4), &|_, _, _| {});
        assert_eq!(r.last.depth, 4);
    }
}
