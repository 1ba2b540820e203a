//! Adam, written out so that its whole state (moments and step count) is plain tensors that a
//! checkpoint saves and restores exactly. Same update as PyTorch's `torch.optim.Adam` without
//! weight decay:
//!
//! ```text
//! m ← β1·m + (1 − β1)·g        v ← β2·v + (1 − β2)·g²
//! p ← p − lr / (1 − β1^t) · m / (√v / √(1 − β2^t) + ε)
//! ```

use tch::Tensor;

/// The learning-rate factor of each parameter (in the order of [`crate::model::PARAM_NAMES`])
/// of a network with first-layer width `l1`: 1, except for the hidden weights W2, which learn at
/// `min(1, width / l1)` (`width`: [`crate::train::settings::TrainSettings::hidden_lr_width`];
/// `None`, the rule of runs checkpointed before it existed: 1).
///
/// Why: Adam moves every weight by about `lr` per step whatever its gradient's size, and a
/// hidden unit's inputs (clipped first-layer activations, 2·L1 of them, about 0.5 each) are all
/// ≥ 0, so its weight gradients share one sign and a step shifts its pre-activation by up to
/// `lr · Σx ≈ lr · L1`: 0.25 at L1 = 512, 1.0 at L1 = 2048, the whole clipped range. The first
/// steps then push hidden units below 0 (dead) or above 1 (saturated) on every position, where
/// no gradient reaches them again; measured on Stockfish-labelled data (nnue-pytorch's
/// `small.binpack`, lr 5e-4, batches of 16384), after one epoch 59 % of the 32 hidden units were
/// dead at L1 = 512, 91 % at 1024, and at 2048 all 32 were dead (84 %) or saturated (16 %): a
/// constant network. Scaling W2's rate by 1/L1 (as µP does for Adam) keeps the shift per step
/// what it is at L1 = `width` for every wider network.
pub fn layer_rates(l1: usize, width: Option<u64>) -> [f64; 6] {
    let w2 = width.map_or(1.0, |w| (w as f64 / l1.max(1) as f64).min(1.0));
    [1.0, 1.0, w2, 1.0, 1.0, 1.0]
}

/// Adam's hyperparameters (PyTorch's defaults for β1, β2, ε).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AdamConfig {
    /// β1.
    pub beta1: f64,
    /// β2.
    pub beta2: f64,
    /// ε.
    pub eps: f64,
}

impl Default for AdamConfig {
    fn default() -> Self {
        AdamConfig {
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
        }
    }
}

/// Adam's state for a list of parameters.
#[derive(Debug)]
pub struct Adam {
    /// Hyperparameters.
    pub config: AdamConfig,
    /// Steps taken (t).
    pub step: u64,
    /// First moments, one per parameter.
    pub m: Vec<Tensor>,
    /// Second moments, one per parameter.
    pub v: Vec<Tensor>,
}

impl Adam {
    /// Fresh state (zero moments) for `params`.
    pub fn new(config: AdamConfig, params: &[&Tensor]) -> Adam {
        Adam {
            config,
            step: 0,
            m: params.iter().map(|p| p.zeros_like()).collect(),
            v: params.iter().map(|p| p.zeros_like()).collect(),
        }
    }

    /// One update of `params` with their gradients `grads` (same order) and learning rate `lr`.
    pub fn step(&mut self, params: &mut [&mut Tensor], grads: &[Tensor], lr: f64) {
        let scales = vec![1.0; grads.len()];
        self.step_scaled(params, grads, lr, &scales);
    }

    /// [`step`](Self::step) with parameter `i` at the learning rate `lr · scales[i]`.
    pub fn step_scaled(
        &mut self,
        params: &mut [&mut Tensor],
        grads: &[Tensor],
        lr: f64,
        scales: &[f64],
    ) {
        self.step += 1;
        let c = self.config;
        let t = self.step as i32;
        let bc1 = 1.0 - c.beta1.powi(t);
        let bc2 = 1.0 - c.beta2.powi(t);
        let step_size = lr / bc1;
        let bc2_sqrt = bc2.sqrt();
        tch::no_grad(|| {
            for ((((p, m), v), g), scale) in params
                .iter_mut()
                .zip(&mut self.m)
                .zip(&mut self.v)
                .zip(grads)
                .zip(scales)
            {
                let _ = m.g_mul_scalar_(c.beta1);
                let _ = m.g_add_(&(g * (1.0 - c.beta1)));
                let _ = v.g_mul_scalar_(c.beta2);
                let _ = v.addcmul_(&(g * (1.0 - c.beta2)), g);
                let denom = v.sqrt() / bc2_sqrt + c.eps;
                let _ = p.addcdiv_(&(&*m * (-step_size * scale)), &denom);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_wide_hidden_layers_learn_slower() {
        assert_eq!(
            layer_rates(2048, Some(128)),
            [1.0, 1.0, 0.0625, 1.0, 1.0, 1.0]
        );
        assert_eq!(layer_rates(128, Some(128)), [1.0; 6]);
        assert_eq!(layer_rates(64, Some(128)), [1.0; 6]);
        assert_eq!(
            layer_rates(2048, None),
            [1.0; 6],
            "checkpoints from before the rule"
        );
    }

    #[test]
    fn adam_follows_the_pytorch_update() {
        // One parameter x, loss (x − 3)²: the first step moves by exactly lr (m̂ / √v̂ = ±1).
        let mut x = Tensor::from_slice(&[0.0f32]).set_requires_grad(true);
        let mut adam = Adam::new(AdamConfig::default(), &[&x]);
        let loss = (&x - 3.0).square().sum(tch::Kind::Float);
        loss.backward();
        let g = x.grad().copy();
        x.zero_grad();
        adam.step(&mut [&mut x], &[g], 0.1);
        assert!((x.double_value(&[0]) - 0.1).abs() < 1e-6);
        // Many steps converge to the minimum.
        for _ in 0..500 {
            let loss = (&x - 3.0).square().sum(tch::Kind::Float);
            loss.backward();
            let g = x.grad().copy();
            x.zero_grad();
            adam.step(&mut [&mut x], &[g], 0.05);
        }
        assert!((x.double_value(&[0]) - 3.0).abs() < 0.05);
        assert_eq!(adam.step, 501);
    }
}
