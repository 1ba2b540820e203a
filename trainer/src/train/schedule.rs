//! What changes over a run, step by step: the learning rate and λ, the weight of the score in
//! the target. Both are functions of the optimizer step alone, so a resumed run continues them
//! exactly (the checkpoint holds the step).
//!
//! | schedule | learning rate at step t of T (the epoch cap's steps) | the field's |
//! | --- | --- | --- |
//! | `step` | `lr · γ^epoch`, constant within an epoch | nnue-pytorch's `StepLR(step_size=1, gamma)` per epoch (`model/optimizers/rangerlite_wrapper.py` at 9f72946), the thesis's |
//! | `cosine` | `floor + (lr − floor) · ½ (1 + cos(π t / T))` | bullet's `CosineDecayLR` (`lr.rs`: λ = 1 − ½(1 + cos(π·progress))) |
//! | `one-cycle` | from `lr / 25` up to `lr` over the warm-up, then a cosine down to `lr / 25 / 50` at T − 1 | PyTorch's `OneCycleLR` as nnue-pytorch sets it up (`one_cycle_start_div` 25, `one_cycle_final_div` 50, `one_cycle_warmup_pct` 0.2, `SafeOneCycleLR` holding the last value) |
//!
//! A linear warm-up of W steps multiplies the `step` and `cosine` rates by `(t + 1) / W` while
//! t < W (PyTorch's `LinearLR` from 1/W; bullet's `Warmup` rises as 1/(W − t) instead). For
//! `one-cycle` the warm-up is its rising phase (20% of T when not given).
//!
//! λ goes linearly from `lambda` at the first step to `lambda_end` at the last one, as
//! nnue-pytorch's `LambdaController` does with `start_lambda` and `end_lambda` over
//! `max_steps = max_epoch · batches per epoch` (`model/lambda_utils.py` at 9f72946:
//! `start + (end − start) · min(1, step / max_steps)`).

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

/// The shape of the learning rate over a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum LrSchedule {
    /// `lr · γ^epoch` (the thesis's and nnue-pytorch's default).
    #[default]
    Step,
    /// A half cosine from `lr` down to `lr_floor · lr` at the epoch cap (bullet's).
    Cosine,
    /// PyTorch's one-cycle as nnue-pytorch configures it: up from lr/25, down to lr/1250.
    OneCycle,
}

/// nnue-pytorch's `one_cycle_start_div`: the one-cycle schedule starts at `lr / 25`.
pub const ONE_CYCLE_START_DIV: f64 = 25.0;
/// nnue-pytorch's `one_cycle_final_div`: it ends at `lr / 25 / 50`.
pub const ONE_CYCLE_FINAL_DIV: f64 = 50.0;
/// nnue-pytorch's `one_cycle_warmup_pct`: the share of the steps spent rising, by default.
pub const ONE_CYCLE_WARMUP_SHARE: f64 = 0.2;

/// A run's learning rate and λ at every step, from its checked settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Schedule {
    /// The schedule's shape.
    pub kind: LrSchedule,
    /// The peak (first-epoch) learning rate.
    pub lr: f64,
    /// The `step` schedule's factor per epoch.
    pub gamma: f64,
    /// The cosine's end as a fraction of `lr`.
    pub floor: f64,
    /// Warm-up steps (0: none; for one-cycle, 0 means 20% of the steps).
    pub warmup: u64,
    /// Steps per epoch.
    pub steps_per_epoch: u64,
    /// Steps of the whole run at its epoch cap (T).
    pub total_steps: u64,
    /// λ at the first step.
    pub lambda_start: f64,
    /// λ at the last step.
    pub lambda_end: f64,
}

impl Schedule {
    /// The learning rate of step `t` (0-based, counted over the whole run).
    pub fn lr_at(&self, t: u64) -> f64 {
        let total = self.total_steps.max(1);
        match self.kind {
            LrSchedule::Step => {
                let epoch = t / self.steps_per_epoch.max(1);
                self.warm(
                    t,
                    self.lr * self.gamma.powi(epoch.min(i32::MAX as u64) as i32),
                )
            }
            LrSchedule::Cosine => {
                let progress = t.min(total) as f64 / total as f64;
                let floor = self.floor * self.lr;
                let lr = floor
                    + (self.lr - floor) * 0.5 * (1.0 + (std::f64::consts::PI * progress).cos());
                self.warm(t, lr)
            }
            LrSchedule::OneCycle => self.one_cycle(t),
        }
    }

    /// The linear warm-up's factor applied to `lr` at step `t`.
    fn warm(&self, t: u64, lr: f64) -> f64 {
        if t < self.warmup {
            lr * (t + 1) as f64 / self.warmup as f64
        } else {
            lr
        }
    }

    /// PyTorch's `OneCycleLR` (two phases, cosine annealing), held at its last value past the
    /// end as nnue-pytorch's `SafeOneCycleLR` is.
    fn one_cycle(&self, t: u64) -> f64 {
        let total = self.total_steps.max(2) as f64;
        let start = self.lr / ONE_CYCLE_START_DIV;
        let end = start / ONE_CYCLE_FINAL_DIV;
        let rise = if self.warmup > 0 {
            self.warmup as f64
        } else {
            ONE_CYCLE_WARMUP_SHARE * total
        };
        // PyTorch's phase ends: `pct_start · total − 1` and `total − 1`.
        let peak = (rise - 1.0).max(0.0);
        let last = total - 1.0;
        let t = (t as f64).min(last);
        let anneal = |from: f64, to: f64, pct: f64| {
            to + (from - to) / 2.0 * (1.0 + (std::f64::consts::PI * pct).cos())
        };
        if t <= peak {
            anneal(start, self.lr, if peak > 0.0 { t / peak } else { 1.0 })
        } else {
            anneal(self.lr, end, (t - peak) / (last - peak).max(1.0))
        }
    }

    /// λ at step `t`: linear from `lambda_start` to `lambda_end` over the run's steps.
    pub fn lambda_at(&self, t: u64) -> f64 {
        let ratio = if self.total_steps > 0 {
            (t as f64 / self.total_steps as f64).min(1.0)
        } else {
            1.0
        };
        self.lambda_start + (self.lambda_end - self.lambda_start) * ratio
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schedule(kind: LrSchedule) -> Schedule {
        Schedule {
            kind,
            lr: 1.0,
            gamma: 0.5,
            floor: 0.0,
            warmup: 0,
            steps_per_epoch: 10,
            total_steps: 100,
            lambda_start: 1.0,
            lambda_end: 1.0,
        }
    }

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-12, "{a} != {b}");
    }

    #[test]
    fn step_is_gamma_per_epoch_as_steplr() {
        let s = schedule(LrSchedule::Step);
        // StepLR(step_size=1) stepped once per epoch: epoch e has lr · γ^e.
        close(s.lr_at(0), 1.0);
        close(s.lr_at(9), 1.0);
        close(s.lr_at(10), 0.5);
        close(s.lr_at(35), 0.125);
    }

    #[test]
    fn cosine_follows_bullets_formula() {
        let s = Schedule {
            lr: 0.001,
            floor: 0.1,
            ..schedule(LrSchedule::Cosine)
        };
        // bullet: initial + (1 − ½(1 + cos(π p))) · (final − initial), final = 0.0001.
        close(s.lr_at(0), 0.001);
        close(s.lr_at(50), 0.00055);
        // p = 0.25: 1 − ½(1 + √½) = 0.146447; 0.001 − 0.146447 · 0.0009.
        close(
            s.lr_at(25),
            0.001 - (1.0 - 0.5 * (1.0 + 0.5f64.sqrt())) * 0.0009,
        );
        close(s.lr_at(100), 0.0001);
        close(s.lr_at(150), 0.0001);
    }

    #[test]
    fn warmup_rises_linearly_then_hands_over() {
        let s = Schedule {
            warmup: 4,
            ..schedule(LrSchedule::Step)
        };
        close(s.lr_at(0), 0.25);
        close(s.lr_at(3), 1.0);
        close(s.lr_at(4), 1.0);
    }

    #[test]
    fn one_cycle_matches_pytorchs_onecyclelr() {
        // OneCycleLR(max_lr=1, total_steps=100, pct_start=0.2, div_factor=25,
        // final_div_factor=50, anneal_strategy='cos'): phase ends at steps 19 and 99.
        let s = schedule(LrSchedule::OneCycle);
        close(s.lr_at(0), 0.04);
        close(s.lr_at(19), 1.0);
        // Step 9 of the rise (pct 9/19): 1 + (0.04 − 1)/2 · (1 + cos(9π/19)) = 0.480362.
        assert!((s.lr_at(9) - 0.480_362).abs() < 1e-6, "{}", s.lr_at(9));
        close(s.lr_at(59), 0.0008 + (1.0 - 0.0008) / 2.0);
        close(s.lr_at(99), 0.0008);
        // SafeOneCycleLR stops stepping: the rate stays at its end.
        close(s.lr_at(500), 0.0008);
    }

    #[test]
    fn lambda_moves_linearly_over_the_run_as_nnue_pytorchs_controller() {
        let s = Schedule {
            lambda_start: 1.0,
            lambda_end: 0.75,
            ..schedule(LrSchedule::Step)
        };
        // start + (end − start) · min(1, step / max_steps)
        close(s.lambda_at(0), 1.0);
        close(s.lambda_at(40), 0.9);
        close(s.lambda_at(100), 0.75);
        close(s.lambda_at(1000), 0.75);
    }
}
