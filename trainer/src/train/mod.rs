//! Training: the thesis's two methods (§5.2 score target, §5.3 PQR triplets) on the float model
//! of [`crate::model`].
//!
//! - [`loss`]: the score-target loss in WDL space (with the game-result interpolation) and the
//!   PQR loss, and the losses of the best constant predictors;
//! - [`optim`]: Adam with a state that checkpoints exactly;
//! - [`pqr`]: PQR triplets from training files.

pub mod bench;
pub mod loss;
pub mod objective;
pub mod optim;
pub mod pqr;
