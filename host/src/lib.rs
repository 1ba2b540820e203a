//! # host
//!
//! The engine side of the project: loading the feature plugins a network needs, NNUE inference,
//! and the command-line tools (`features`, ...). The `host` binary is a thin clap front end over
//! these modules.

pub mod engine;
pub mod games;
/// The network (shapes, file formats, kernels): the `nnue` crate, which the trainer shares.
pub use nnue;
