//! The two training methods as one interface: batches on a device, their loss, one optimizer
//! step.

use serde::{Deserialize, Serialize};
use tch::{Device, Kind, Tensor};

use super::loss::{PqrLoss, ScoreLoss};
use super::optim::Adam;
use crate::loader::TripletBatch;
use crate::loader::batch::{NO_RESULT, SparseBatch};
use crate::model::{Model, SparseInput};

/// The training method and its loss settings.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Method {
    /// Method 1 (§5.2): the data's scores as targets, in WDL space.
    Score(ScoreLoss),
    /// Method 2 (§5.3): PQR triplets, no scores.
    Pqr(PqrLoss),
}

impl Method {
    /// This method for scores in `units`: its win-rate scales, given in centipawns, multiplied
    /// by the units' pawn over 100 (at the win-rate model's mid material, 58, for units whose
    /// pawn depends on the material), so that a run on data in other units learns the same
    /// curve.
    pub fn in_units(self, units: nnue::units::ScoreUnits) -> Method {
        let k = units.per_pawn(58) / 100.0;
        match self {
            _ if k == 1.0 => self,
            Method::Score(mut loss) => {
                let w = &mut loss.wdl;
                (w.target_a, w.target_b, w.output_a, w.output_b) = (
                    w.target_a * k,
                    w.target_b * k,
                    w.output_a * k,
                    w.output_b * k,
                );
                Method::Score(loss)
            }
            Method::Pqr(loss) => Method::Pqr(PqrLoss {
                a: loss.a * k,
                b: loss.b * k,
            }),
        }
    }

    /// The short name (`score`, `pqr`).
    pub fn name(&self) -> &'static str {
        match self {
            Method::Score(_) => "score",
            Method::Pqr(_) => "pqr",
        }
    }

    /// The loss of a batch under the model (a scalar tensor with its graph).
    pub fn loss(&self, model: &Model, batch: &MethodBatch) -> Tensor {
        self.loss_of(&model.forward(batch.input()), batch)
    }

    /// The loss of a batch given the model's outputs for its positions.
    pub fn loss_of(&self, out: &Tensor, batch: &MethodBatch) -> Tensor {
        match (self, batch) {
            (Method::Score(l), MethodBatch::Score(b)) => l.loss(out, &b.targets),
            (Method::Pqr(l), MethodBatch::Pqr(b)) => {
                let n = b.len as i64;
                l.loss(
                    &out.narrow(0, 0, n),
                    &out.narrow(0, n, n),
                    &out.narrow(0, 2 * n, n),
                )
            }
            _ => panic!(
                "a {} batch given to the {} method",
                batch.kind(),
                self.name()
            ),
        }
    }
}

/// A batch of the score method on a device: the input and the WDL-space targets.
#[derive(Debug)]
pub struct ScoreBatch {
    /// Number of positions.
    pub len: usize,
    /// Both perspectives' indices.
    pub input: SparseInput,
    /// `[B]` targets in WDL space (λ-mixed with the results where known).
    pub targets: Tensor,
}

impl ScoreBatch {
    /// The batch of `batch`'s positions and labels (on the CPU).
    pub fn new(batch: &SparseBatch, loss: &ScoreLoss) -> ScoreBatch {
        let score: Vec<f32> = batch.score.iter().map(|&s| f32::from(s)).collect();
        let known: Vec<f32> = batch
            .result
            .iter()
            .map(|&r| if r == NO_RESULT { 0.0 } else { 1.0 })
            .collect();
        let result: Vec<f32> = batch
            .result
            .iter()
            .map(|&r| if r == NO_RESULT { 0.0 } else { f32::from(r) })
            .collect();
        let targets = loss.targets(
            &Tensor::from_slice(&score),
            &Tensor::from_slice(&result),
            &Tensor::from_slice(&known),
        );
        ScoreBatch {
            len: batch.len,
            input: SparseInput::from_batch(batch),
            targets,
        }
    }
}

/// A batch of the PQR method on a device.
#[derive(Debug)]
pub struct PqrBatch {
    /// Number of triplets.
    pub len: usize,
    /// The 3·len positions: p's, q's, r's.
    pub input: SparseInput,
}

impl PqrBatch {
    /// The batch of encoded triplets (on the CPU).
    pub fn new(batch: &TripletBatch) -> PqrBatch {
        PqrBatch {
            len: batch.len,
            input: SparseInput::from_batch(&batch.positions),
        }
    }
}

/// A batch of either method.
#[derive(Debug)]
pub enum MethodBatch {
    /// Positions with score targets.
    Score(ScoreBatch),
    /// Triplets.
    Pqr(PqrBatch),
}

impl MethodBatch {
    /// Training examples in the batch (positions, or triplets).
    pub fn len(&self) -> usize {
        match self {
            MethodBatch::Score(b) => b.len,
            MethodBatch::Pqr(b) => b.len,
        }
    }

    /// Whether the batch is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The positions to evaluate (for PQR the p's, q's and r's).
    pub fn input(&self) -> &SparseInput {
        match self {
            MethodBatch::Score(b) => &b.input,
            MethodBatch::Pqr(b) => &b.input,
        }
    }

    /// `score` or `pqr`.
    pub fn kind(&self) -> &'static str {
        match self {
            MethodBatch::Score(_) => "score",
            MethodBatch::Pqr(_) => "pqr",
        }
    }

    /// The same batch on `device`.
    pub fn to_device(&self, device: Device) -> MethodBatch {
        match self {
            MethodBatch::Score(b) => MethodBatch::Score(ScoreBatch {
                len: b.len,
                input: b.input.to_device(device),
                targets: b.targets.to_device(device),
            }),
            MethodBatch::Pqr(b) => MethodBatch::Pqr(PqrBatch {
                len: b.len,
                input: b.input.to_device(device),
            }),
        }
    }
}

/// One optimizer step on `batch`: loss, gradients, Adam with learning rate `lr`, clipping of the
/// weights to their quantization ranges. Returns the batch's loss (detached, on the device).
pub fn train_step(
    model: &mut Model,
    adam: &mut Adam,
    method: &Method,
    batch: &MethodBatch,
    lr: f64,
) -> Tensor {
    let scales = vec![1.0; model.params().len()];
    train_step_with(model, adam, method, batch, lr, &scales, |_| {})
}

/// [`train_step`] with parameter `i` (in the order of [`crate::model::param_names`]) at the
/// learning rate `lr · scales[i]` (see [`super::optim::layer_rates`]), showing the step's
/// gradients to `look` before the update (the training diagnostics).
pub fn train_step_with(
    model: &mut Model,
    adam: &mut Adam,
    method: &Method,
    batch: &MethodBatch,
    lr: f64,
    scales: &[f64],
    look: impl FnOnce(&[Tensor]),
) -> Tensor {
    let forward = model.forward_train(batch.input());
    let loss = method.loss_of(&forward.out, batch);
    loss.backward();
    let mut grads = model.gradients(&forward, batch.input());
    if adam.config.sparse_first_layer {
        grads.touch_rows(batch.input());
    }
    drop(forward);
    model.zero_grad();
    look(&grads.tensors);
    if let Some(max) = adam.config.max_grad_norm {
        grads.clip_norm(max);
    }
    adam.step_gradients(&mut model.params_mut(), &grads, lr, scales);
    model.clip();
    loss.detach()
}

/// The mean loss over batches, weighted by their sizes, without gradients.
pub fn evaluate(model: &Model, method: &Method, batches: &[MethodBatch]) -> f64 {
    tch::no_grad(|| {
        let mut total = Tensor::zeros([], (Kind::Double, model.device()));
        let mut n = 0usize;
        for b in batches {
            let l = method.loss(model, b).to_kind(Kind::Double) * b.len() as f64;
            total += l;
            n += b.len();
        }
        if n == 0 {
            return f64::NAN;
        }
        total.double_value(&[]) / n as f64
    })
}
