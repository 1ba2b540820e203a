//! Training diagnostics: what would show a network that does not learn.
//!
//! Both layers of clipped ReLUs pass a gradient only where `0 < x < 1`. A unit whose input is
//! below 0 on every position is *dead* (it outputs 0 and never learns again), one above 1 on
//! every position is *saturated* (a constant 1); a network whose hidden units are all dead or
//! saturated outputs a constant, and its loss stays at the constant predictor's. Per epoch the
//! trainer measures both shares on the validation positions ([`UnitHealth`]) and the gradient
//! norm of every parameter, averaged over the epoch's steps ([`GradientNorms`]), into
//! `metrics.csv`/`metrics.jsonl` and the plot `units.svg`.

use serde::{Deserialize, Serialize};
use tch::{Kind, Tensor};

use super::objective::MethodBatch;
use crate::model::{Model, w1_columns};

/// Shares (0..=1) of dead and saturated units of both clipped layers on a set of positions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UnitHealth {
    /// First-layer units (of L1, both perspectives together; PSQT columns aside) at 0 on every
    /// position.
    pub l1_dead: f64,
    /// First-layer units at 1 on every position.
    pub l1_saturated: f64,
    /// Units of the first hidden layer (all stacks together) at 0 on every position.
    pub hidden_dead: f64,
    /// Hidden units at 1 on every position.
    pub hidden_saturated: f64,
}

impl UnitHealth {
    /// The shares of `model`'s units that are dead or saturated on all the positions of
    /// `batches`.
    pub fn measure(model: &Model, batches: &[MethodBatch]) -> UnitHealth {
        let (l1, cols) = (model.shape.l1 as i64, w1_columns(&model.shape) as i64);
        let arch = model.arch();
        let l2 = arch.hidden[0].width as i64 * arch.hidden[0].activation.fan_out() as i64;
        tch::no_grad(|| {
            let device = model.device();
            let none = |n: i64| Tensor::zeros([n], (Kind::Bool, device));
            let (mut l1_above0, mut l1_below1) = (none(l1), none(l1));
            let (mut h_above0, mut h_below1) = (none(l2), none(l2));
            for b in batches {
                let input = b.input();
                let x = model.activations(input);
                let halves = x.view([-1, cols]).narrow(1, 0, l1);
                l1_above0 = l1_above0.logical_or(&halves.gt(0.0).any_dim(0, false));
                l1_below1 = l1_below1.logical_or(&halves.lt(1.0).any_dim(0, false));
                let h = model.hidden(&x, input);
                h_above0 = h_above0.logical_or(&h.gt(0.0).any_dim(0, false));
                h_below1 = h_below1.logical_or(&h.lt(1.0).any_dim(0, false));
            }
            let share_not =
                |t: &Tensor| 1.0 - t.to_kind(Kind::Double).mean(Kind::Double).double_value(&[]);
            UnitHealth {
                l1_dead: share_not(&l1_above0),
                l1_saturated: share_not(&l1_below1),
                hidden_dead: share_not(&h_above0),
                hidden_saturated: share_not(&h_below1),
            }
        })
    }

    /// True when no hidden unit passes a gradient: the network's output is a constant.
    pub fn hidden_all_stuck(&self) -> bool {
        self.hidden_dead + self.hidden_saturated >= 1.0
    }
}

/// The L2 norms of six groups of the parameters' gradients, averaged over an epoch's steps:
/// W1, b1, the first hidden layer's weights and biases, the later layers' weights and biases
/// (the thesis's W1 b1 W2 b2 W3 b3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GradientNorms(pub [f64; 6]);

/// Sums the gradient norms of the steps of an epoch on the device (no synchronisation per
/// step), for their mean at the end.
pub struct GradientNormSum {
    sum: Tensor,
    steps: u64,
}

impl GradientNormSum {
    /// An empty sum on `device`.
    pub fn new(device: tch::Device) -> Self {
        GradientNormSum {
            sum: Tensor::zeros([6], (Kind::Double, device)),
            steps: 0,
        }
    }

    /// Adds the norms of one step's gradients (in the order of [`crate::model::param_names`]).
    pub fn add(&mut self, grads: &[Tensor]) {
        let later = |parity: usize| {
            let group: Vec<&Tensor> = grads[4..].iter().skip(parity).step_by(2).collect();
            if let [g] = group[..] {
                return g.norm().to_kind(Kind::Double);
            }
            let squares: Vec<Tensor> = group.iter().map(|g| g.square().sum(Kind::Double)).collect();
            Tensor::stack(&squares, 0).sum(Kind::Double).sqrt()
        };
        let mut norms: Vec<Tensor> = grads[..4]
            .iter()
            .map(|g| g.norm().to_kind(Kind::Double))
            .collect();
        norms.push(later(0));
        norms.push(later(1));
        self.sum += Tensor::stack(&norms, 0);
        self.steps += 1;
    }

    /// The mean norms.
    pub fn mean(&self) -> GradientNorms {
        let sum: Vec<f64> = Vec::<f64>::try_from(self.sum.to_device(tch::Device::Cpu))
            .unwrap_or_else(|_| vec![0.0; 6]);
        let n = self.steps.max(1) as f64;
        let mut out = [0.0; 6];
        for (o, s) in out.iter_mut().zip(sum) {
            *o = s / n;
        }
        GradientNorms(out)
    }
}

/// The CSV header of the gradient norms (`grad_w1,...`).
pub fn gradient_columns() -> String {
    ["w1", "b1", "w2", "b2", "w3", "b3"]
        .iter()
        .map(|p| format!("grad_{p}"))
        .collect::<Vec<_>>()
        .join(",")
}
