//! The UCI chess engine: search, evaluation interface, time management and protocol.
//!
//! [`Engine`] is the way in: it owns the transposition table, the histories of every search
//! thread and the evaluation, and runs a search on the calling thread or in the background.
//!
//! - [`position`]: the position during search (shakmaty's `Chess`, copy-make) with Zobrist
//!   hashes ([`zobrist`]) and draw detection;
//! - [`evaluator`]: the [`evaluator::Evaluator`] interface and the built-in material +
//!   piece-square evaluation; [`nnue_evaluator`]: the NNUE of [`crate::nnue`] behind that
//!   interface; [`eval_source`]: choosing between them, loading networks, each evaluator converting its
//!   network's units ([`crate::nnue::units`]) to the centipawns every evaluator speaks;
//! - [`see`], [`movepick`]: static exchange evaluation, move encoding and ordering;
//! - [`tt`]: the lock-free transposition table shared by the threads;
//! - [`search`]: one thread's iterative deepening, alpha-beta with PVS, quiescence, and the
//!   score constants; `history`: its move-ordering memory (butterfly, continuation and capture
//!   histories, killers); `lazy_smp`: the same search on several threads (Lazy SMP);
//! - [`limits`]: what bounds a search (depth, nodes, mate, time, the [`limits::Ablation`]
//!   switches); [`control`]: stop, ponder, clock and node counts shared during one search;
//! - [`facade`]: the [`Engine`]; [`label`]: scoring positions for training data under a budget
//!   (static, quiescence, nodes, depth);
//! - [`time`]: how long to think;
//! - [`uci`]: the protocol (`host` without a subcommand); [`uci_format`]: scores, moves and
//!   `info` lines as UCI writes them;
//! - [`bench`](mod@bench): the fixed-depth benchmark (`host bench`).

pub mod bench;
pub mod control;
pub mod eval_source;
pub mod evaluator;
pub mod facade;
mod history;
pub mod label;
mod lazy_smp;
pub mod limits;
pub mod movepick;
pub mod nnue_evaluator;
pub mod parameters;
pub mod position;
pub mod search;
pub mod see;
pub mod time;
pub mod tt;
pub mod uci;
pub mod uci_format;
pub mod zobrist;

pub use facade::Engine;
