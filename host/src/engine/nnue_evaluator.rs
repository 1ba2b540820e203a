//! The NNUE as an [`Evaluator`]: the accumulator stack of [`crate::nnue`] driven by the search.
//!
//! Moves are forwarded, lazily (when a position is evaluated), to
//! [`AccumulatorStack::push`]/[`pop`](AccumulatorStack::pop). A null move
//! changes no feature but the side to move, which the stack's boards carry, so each nesting level
//! of null moves gets its own stack, refreshed from the position after the null move (null moves
//! are a few percent of the nodes; the stacks are allocated once per search and reused).
//!
//! Should a feature plugin fail during the search, the error is kept for
//! [`take_error`](Evaluator::take_error) and the subtree (or, if the root itself fails, the whole
//! search) is evaluated with the built-in evaluation instead, so the engine keeps playing legal,
//! sensible moves.

use plugin_api::{board_from_position, move_from_shakmaty};
use shakmaty::{Chess, Move};

use super::evaluator::{Builtin, EVAL_LIMIT, Evaluator};
use crate::nnue::units::ScoreUnits;
use crate::nnue::{AccumulatorStack, Kernels, Nnue};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    /// A move for the current stack.
    Move(plugin_api::Move),
    /// A null move: the next stack, reset to this board, becomes current.
    Null(plugin_api::Board),
    /// A push not forwarded (inside a failed subtree).
    Skipped,
}

/// NNUE evaluation of one search thread. Updates are lazy: a push is only recorded, and the
/// recorded moves are played on the accumulators when a position is evaluated, so subtrees that
/// are never evaluated (transposition table cut-offs, draws, positions in check) cost nothing.
pub struct NnueEval<'a> {
    nnue: &'a Nnue,
    kernels: Kernels,
    /// The network's units, converted to centipawns in [`evaluate`](Evaluator::evaluate).
    units: ScoreUnits,
    stacks: Vec<AccumulatorStack<'a>>,
    /// Stack in use after each applied event (`levels[0]` is the root's, 0).
    levels: Vec<usize>,
    events: Vec<Event>,
    /// `events[..applied]` have been played on the stacks.
    applied: usize,
    /// Events that are `Skipped`, plus one if the root could not be set up.
    skipping: usize,
    error: Option<String>,
}

impl<'a> NnueEval<'a> {
    /// An evaluator for `nnue` using `kernels`, whose raw output is in `units`.
    pub fn new(nnue: &'a Nnue, kernels: Kernels, units: ScoreUnits) -> Self {
        let mut levels = Vec::with_capacity(512);
        levels.push(0);
        NnueEval {
            nnue,
            kernels,
            units,
            stacks: vec![AccumulatorStack::new(nnue, kernels)],
            levels,
            events: Vec::with_capacity(512),
            applied: 0,
            skipping: 0,
            error: None,
        }
    }

    fn fail(&mut self, message: String) {
        if self.error.is_none() {
            self.error = Some(format!(
                "NNUE evaluation failed, using the built-in one: {message}"
            ));
        }
    }

    #[inline(always)]
    fn level(&self) -> usize {
        *self.levels.last().expect("the root level is always there")
    }

    /// Plays the recorded events on the stacks. On a failure, the failed event and every later
    /// one become `Skipped`.
    fn apply_pending(&mut self) {
        while self.applied < self.events.len() {
            let level = self.level();
            let ok = match self.events[self.applied] {
                Event::Move(m) => match self.stacks[level].push(&m) {
                    Ok(()) => {
                        self.levels.push(level);
                        true
                    }
                    Err(e) => {
                        self.fail(e.to_string());
                        false
                    }
                },
                Event::Null(board) => {
                    let next = level + 1;
                    if self.stacks.len() <= next {
                        self.stacks
                            .push(AccumulatorStack::new(self.nnue, self.kernels));
                    }
                    match self.stacks[next].reset(&board) {
                        Ok(()) => {
                            self.levels.push(next);
                            true
                        }
                        Err(e) => {
                            self.fail(e.to_string());
                            false
                        }
                    }
                }
                Event::Skipped => false,
            };
            if !ok {
                for e in &mut self.events[self.applied..] {
                    if *e != Event::Skipped {
                        *e = Event::Skipped;
                        self.skipping += 1;
                    }
                }
                return;
            }
            self.applied += 1;
        }
    }
}

impl Evaluator for NnueEval<'_> {
    fn set_root(&mut self, pos: &Chess) {
        self.levels.truncate(1);
        self.events.clear();
        self.applied = 0;
        self.skipping = 0;
        if let Err(e) = self.stacks[0].reset(&board_from_position(pos)) {
            self.fail(e.to_string());
            self.skipping = 1;
        }
    }

    #[inline]
    fn push(&mut self, _before: &Chess, m: &Move) {
        let event = match move_from_shakmaty(m) {
            Some(abi) if self.skipping == 0 => Event::Move(abi),
            _ => Event::Skipped,
        };
        if event == Event::Skipped {
            self.skipping += 1;
        }
        self.events.push(event);
    }

    fn push_null(&mut self, after: &Chess) {
        let event = if self.skipping == 0 {
            Event::Null(board_from_position(after))
        } else {
            self.skipping += 1;
            Event::Skipped
        };
        self.events.push(event);
    }

    #[inline]
    fn pop(&mut self) {
        let Some(event) = self.events.pop() else {
            debug_assert!(false, "pop without push");
            return;
        };
        if self.events.len() < self.applied {
            // The event had been applied.
            self.applied -= 1;
            let level = self.levels.pop().expect("an applied event has a level");
            if let Event::Move(_) = event {
                self.stacks[level].pop();
            }
        } else if event == Event::Skipped {
            self.skipping -= 1;
        }
    }

    #[inline]
    fn evaluate(&mut self, pos: &Chess) -> i32 {
        if self.skipping == 0 {
            self.apply_pending();
        }
        if self.skipping > 0 {
            return Builtin::score(pos);
        }
        let level = self.level();
        let raw = self.stacks[level].evaluate();
        self.units
            .centipawns(raw, pos)
            .clamp(-EVAL_LIMIT, EVAL_LIMIT)
    }

    fn take_error(&mut self) -> Option<String> {
        self.error.take()
    }
}
