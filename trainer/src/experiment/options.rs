//! How `trainer run` runs ([`RunOptions`]): where the stages' outputs go, on what device, and
//! whether stages are computed or only probed.

use std::path::PathBuf;

use tch::Device;

use super::lookup::Lookup;
use super::records::Handover;

/// How `trainer run` runs: where outputs go and on what.
#[derive(Debug)]
pub struct RunOptions {
    /// Root of all stage folders and reports.
    pub out: PathBuf,
    /// Run only these experiments (all when empty).
    pub only: Vec<String>,
    /// Where the feature plugins are (default: the usual plugin directories); passed on to
    /// data generation and to the `host` engines of tournaments and puzzles.
    pub plugin_dir: Option<PathBuf>,
    /// Tensors' device for training.
    pub device: Device,
    /// Loader threads (0: one per core).
    pub loader_threads: usize,
    /// Progress bars.
    pub progress: bool,
    /// How stages are looked up: computed when missing (the default), or only probed.
    pub lookup: Lookup,
    /// The records of the stages this run has met, which the stages that need them read.
    pub handover: Handover,
}

impl RunOptions {
    /// The same run, probing its stages instead of computing them (see [`Lookup`]).
    pub fn probing(&self) -> RunOptions {
        RunOptions {
            out: self.out.clone(),
            only: self.only.clone(),
            plugin_dir: self.plugin_dir.clone(),
            device: self.device,
            loader_threads: self.loader_threads,
            progress: false,
            lookup: Lookup::probe(),
            handover: Handover::default(),
        }
    }
}
