//! Which evaluation a search uses, and loading networks for it.
//!
//! [`EvalSource`] is either the built-in evaluation or a loaded NNUE; the
//! [`Engine`](super::facade::Engine) gives every search thread the matching
//! [`super::evaluator::Evaluator`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use plugin_api::PluginRegistry;

use shakmaty::{Chess, Move};

use super::evaluator::{Builtin, Evaluator};
use super::nnue_evaluator::NnueEval;
use crate::nnue::units::ScoreUnits;
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

/// A network evaluation that cannot be set up. `Display`: the cause's one line.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The plugins cannot be loaded.
    #[error(transparent)]
    Plugins(#[from] plugin_api::LoadError),
    /// The network cannot be loaded.
    #[error(transparent)]
    Network(#[from] crate::nnue::NetError),
    /// The kernels `NNUE_SIMD` asks for cannot run here.
    #[error(transparent)]
    Kernels(#[from] crate::nnue::SimdError),
}

impl EvalSource {
    /// Loads the network `path`, with the plugins of `plugin_dir` (else the default plugin
    /// directories): the blocks its feature set names are bound automatically. `NNUE_SIMD` may
    /// force a kernel version.
    pub fn load(path: &Path, plugin_dir: Option<&Path>) -> Result<EvalSource, SourceError> {
        let registry = PluginRegistry::discover(plugin_dir)?;
        Self::load_with(path, &registry)
    }

    /// Loads the network `path` with the blocks of `registry`.
    pub fn load_with(path: &Path, registry: &PluginRegistry) -> Result<EvalSource, SourceError> {
        let nnue = Nnue::load(path, registry)?;
        let kernels = SimdLevel::from_env().and_then(Kernels::new)?;
        Ok(EvalSource::Nnue {
            nnue: Arc::new(nnue),
            path: path.to_path_buf(),
            kernels,
        })
    }

    /// The units of this evaluation's raw output, which its evaluator converts to centipawns:
    /// those its network holds, whatever file it came from.
    pub fn units(&self) -> ScoreUnits {
        match self {
            EvalSource::Nnue { nnue, .. } => nnue.arranged().network().units(),
            EvalSource::Builtin => ScoreUnits::Centipawns,
        }
    }

    /// An evaluator of this evaluation for one search thread, to lend to many searches
    /// ([`Engine::search_with`](super::facade::Engine::search_with)): its buffers are allocated
    /// here, once.
    pub fn evaluator(&self) -> SourceEvaluator<'_> {
        match self {
            EvalSource::Builtin => SourceEvaluator::Builtin(Builtin),
            EvalSource::Nnue { nnue, kernels, .. } => {
                SourceEvaluator::Nnue(Box::new(NnueEval::new(nnue, *kernels, self.units())))
            }
        }
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
                format!(
                    "NNUE {} ({}: {}, {} kernels)",
                    path.display(),
                    nnue.features().name(),
                    net.shape(),
                    kernels.level().name()
                )
            }
        }
    }
}

/// The evaluator of an [`EvalSource`]: the built-in evaluation or the NNUE's accumulators.
pub enum SourceEvaluator<'a> {
    /// The built-in evaluation.
    Builtin(Builtin),
    /// A network's evaluator.
    Nnue(Box<NnueEval<'a>>),
}

impl Evaluator for SourceEvaluator<'_> {
    fn set_root(&mut self, pos: &Chess) {
        match self {
            SourceEvaluator::Builtin(e) => e.set_root(pos),
            SourceEvaluator::Nnue(e) => e.set_root(pos),
        }
    }

    #[inline(always)]
    fn push(&mut self, before: &Chess, m: &Move) {
        match self {
            SourceEvaluator::Builtin(e) => e.push(before, m),
            SourceEvaluator::Nnue(e) => e.push(before, m),
        }
    }

    fn push_null(&mut self, after: &Chess) {
        match self {
            SourceEvaluator::Builtin(e) => e.push_null(after),
            SourceEvaluator::Nnue(e) => e.push_null(after),
        }
    }

    #[inline(always)]
    fn pop(&mut self) {
        match self {
            SourceEvaluator::Builtin(e) => e.pop(),
            SourceEvaluator::Nnue(e) => e.pop(),
        }
    }

    #[inline(always)]
    fn evaluate(&mut self, pos: &Chess) -> i32 {
        match self {
            SourceEvaluator::Builtin(e) => e.evaluate(pos),
            SourceEvaluator::Nnue(e) => e.evaluate(pos),
        }
    }

    fn take_error(&mut self) -> Option<String> {
        match self {
            SourceEvaluator::Builtin(e) => e.take_error(),
            SourceEvaluator::Nnue(e) => e.take_error(),
        }
    }
}
