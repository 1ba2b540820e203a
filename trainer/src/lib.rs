//! # trainer
//!
//! The training side of the project:
//!
//! - [`data`]: training samples and their formats (the thesis's text formats, Stockfish's `.bin`
//!   and `.binpack`), streaming readers and writers, conversion;
//! - [`filter`]: composable, counted position filters (the thesis's quiet-position rule, ply
//!   window, score limit, random skipping);
//! - [`batch`]: sparse training batches encoded through the feature plugins;
//! - [`loader`]: the parallel batch loader (rayon workers over file chunks, shuffling, a bounded
//!   queue);
//! - [`stats`] and [`wdl`]: dataset statistics and the win-rate model fit, with [`plot`]s.
//!
//! The tch model, training, export and the experiment runner are the subjects of their own
//! issues.

pub mod batch;
pub mod data;
pub mod filter;
pub mod loader;
pub mod model;
pub mod plot;
pub mod scan;
pub mod stats;
pub mod train;
pub mod wdl;
