//! # trainer
//!
//! The training side of the project, one folder per stage of the pipeline; a stage imports
//! only the stages before it (as the crates do: `plugin-api` ← `host` ← `trainer`):
//!
//! - [`data`]: training samples and their formats (the thesis's text formats, Stockfish's `.bin`
//!   and `.binpack`), streaming readers and writers, conversion, and the composable, counted
//!   position [`data::filter`]s;
//! - [`gensfen`]: training data by self-play (host search or an external UCI engine), sharded
//!   and resumable;
//! - [`loader`]: sparse training batches encoded through the feature plugins
//!   ([`loader::batch`]) and the parallel loader that streams them (rayon workers over file
//!   chunks, shuffling, a bounded queue), for positions and PQR triplets alike;
//! - [`analysis`]: dataset statistics and scans, the win-rate model fit, SVG plots;
//! - [`model`]: the thesis's network as a tch float model (sparse first layer, the float ↔
//!   integer mapping of the quantized `host` network);
//! - [`train`]: the training settings, the two training methods (score targets, PQR
//!   triplets), the training loop with checkpoints and resume, export to the `host` network
//!   format, the quantization-error report and the throughput benchmark;
//! - [`insight`]: what a trained network takes from each block: weight pictures in each
//!   block's geometry, block attribution, histograms, self-contained HTML;
//! - [`experiment`]: `trainer run`, the experiment manifest and its cached stages.
//!
//! Shared by all: [`atomic_file`] (every result file is written whole or not at all),
//! [`checked`] (setting values checked the same way from a manifest or a command line) and
//! [`digest`] (the one hashing scheme for identities).

pub mod analysis;
pub mod atomic_file;
pub mod checked;
pub mod data;
pub mod digest;
pub mod experiment;
pub mod file_names;
pub mod gensfen;
pub mod insight;
pub mod invalid_setting;
pub mod loader;
pub mod model;
pub mod train;
