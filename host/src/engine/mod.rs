//! The UCI chess engine: search, evaluation interface, time management and protocol.
//!
//! - [`position`]: the position during search (shakmaty's `Chess`, copy-make) with Zobrist
//!   hashes ([`zobrist`]) and draw detection;
//! - [`eval`]: the [`eval::Evaluator`] interface and the built-in material + piece-square
//!   evaluation; [`nnue_eval`]: the NNUE of [`crate::nnue`] behind that interface;
//!   [`evaluation`]: choosing between them, loading networks;
//! - [`see`], [`movepick`]: static exchange evaluation, move encoding and ordering;
//! - [`tt`]: the lock-free transposition table shared by the threads;
//! - [`search`]: iterative deepening, alpha-beta with PVS, quiescence, Lazy SMP;
//! - [`time`]: how long to think;
//! - [`uci`]: the protocol (`host` without a subcommand);
//! - [`bench`](mod@bench): the fixed-depth benchmark (`host bench`).

pub mod bench;
pub mod control;
pub mod eval;
pub mod evaluation;
pub mod facade;
mod history;
pub mod limits;
pub mod movepick;
pub mod nnue_eval;
pub mod position;
mod runner;
pub mod search;
pub mod see;
pub mod time;
pub mod tt;
pub mod uci;
pub mod uci_format;
pub mod zobrist;

pub use facade::Engine;
