//! Engine-vs-engine evaluation: UCI engine processes, games with adjudication, tournaments in
//! parallel with PGN output, joint maximum-likelihood ratings (Ordo's model), SPRT with
//! pentanomial statistics, and puzzle accuracy. Used by `trainer run` and by the `arena` binary.

pub mod game;
pub mod move_limit;
pub mod openings;
pub mod pgn;
pub mod puzzles;
pub mod rating;
pub mod sprt;
pub mod time_control;
pub mod tournament;
pub mod uci;
pub mod workers;
