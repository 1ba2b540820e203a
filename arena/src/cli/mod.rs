//! Subcommands of the `arena` binary, one module each.

pub mod elo;
pub mod puzzles;
pub mod sprt;
pub mod tournament;
