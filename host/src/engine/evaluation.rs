//! Which evaluation a search uses, and loading networks for it.
//!
//! [`EvalSource`] is either the built-in evaluation or a loaded NNUE; the
//! [`Engine`](super::facade::Engine) gives every search thread the matching
//! [`super::eval::Evaluator`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use plugin_api::PluginRegistry;

use crate::nnue::{Kernels, Nnue, SimdLevel};

/// The evaluation of a search.
#[derive(Clone, Debug)]
pub enum EvalSource {
    /// Material and piece-square tables, no network.
    Builtin,
    /// A network loaded from `path`.
    Nnue {
        /// The network, bound to the loaded feature plugins.
        nnue: Arc<Nnue>,
        /// The file it came from.
        path: PathBuf,
        /// The kernels used.
        kernels: Kernels,
    },
}

impl EvalSource {
    /// Loads the network `path`, with the plugins of `plugin_dir` (else the default plugin
    /// directories): the blocks its feature set names are bound automatically. `NNUE_SIMD` may
    /// force a kernel version.
    pub fn load(path: &Path, plugin_dir: Option<&Path>) -> Result<EvalSource, String> {
        let registry = PluginRegistry::discover(plugin_dir).map_err(|e| e.to_string())?;
        Self::load_with(path, &registry)
    }

    /// Loads the network `path` with the blocks of `registry`.
    pub fn load_with(path: &Path, registry: &PluginRegistry) -> Result<EvalSource, String> {
        let nnue = Nnue::load(path, registry).map_err(|e| e.to_string())?;
        let kernels = SimdLevel::from_env().and_then(Kernels::new)?;
        Ok(EvalSource::Nnue {
            nnue: Arc::new(nnue),
            path: path.to_path_buf(),
            kernels,
        })
    }

    /// One line describing the evaluation (for `info string`).
    pub fn describe(&self) -> String {
        match self {
            EvalSource::Builtin => "built-in material and piece-square evaluation".to_string(),
            EvalSource::Nnue {
                nnue,
                path,
                kernels,
            } => {
                let net = nnue.arranged().network();
                let shape = if net.arch().is_thesis() {
                    format!("{}x2 -> {} -> 1", net.l1(), net.l2())
                } else {
                    format!("{}x2, {}", net.l1(), net.arch())
                };
                format!(
                    "NNUE {} ({} -> {shape}, {} kernels)",
                    path.display(),
                    nnue.features().name(),
                    kernels.level().name()
                )
            }
        }
    }
}
