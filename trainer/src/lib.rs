//! # trainer
//!
//! The training side of the project:
//!
//! - [`data`]: training samples and their formats (the thesis's text formats, Stockfish's `.bin`
//!   and `.binpack`), streaming readers and writers, conversion;
//! - [`gensfen`]: training data by self-play (host search or an external UCI engine), sharded
//!   and resumable;
//! - [`filter`]: composable, counted position filters (the thesis's quiet-position rule, ply
//!   window, score limit, random skipping);
//! - [`batch`]: sparse training batches encoded through the feature plugins;
//! - [`loader`]: the parallel batch loader (rayon workers over file chunks, shuffling, a bounded
//!   queue);
//! - [`stats`] and [`wdl`]: dataset statistics and the win-rate model fit, with [`plot`]s;
//! - [`model`]: the thesis's network as a tch float model (sparse first layer, the float ↔
//!   integer mapping of the quantized `host` network);
//! - [`train`]: the two training methods (score targets, PQR triplets), the training loop with
//!   checkpoints and resume, export to the `host` network format, the quantization-error report
//!   and the throughput benchmark.
//!
//! - [`experiment`]: `trainer run`, the experiment manifest and its cached stages;
//! - [`atomic_file`]: every result file is written whole or not at all.

pub mod atomic_file;
pub mod batch;
pub mod checked;
pub mod data;
pub mod experiment;
pub mod filter;
pub mod gensfen;
pub mod loader;
pub mod model;
pub mod plot;
pub mod scan;
pub mod stats;
pub mod train;
pub mod wdl;
