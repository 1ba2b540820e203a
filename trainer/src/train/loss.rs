//! The loss functions of the thesis's two training methods (§5.2, §5.3) and the loss of the best
//! constant predictor, the baseline a trained network must beat.

use crate::analysis::wdl::win_rate;
use crate::invalid_setting::InvalidSetting;
use serde::{Deserialize, Serialize};
use tch::{Kind, Tensor};

/// The win-rate model W(e) = σ((e − a) / b) on both sides of the score-target loss.
///
/// The thesis's reference code used two fixed scalings, σ(target / 410) and σ(output / 361)
/// (the defaults); its text describes one model fitted to the data (a = 1.28, b = 297.21), which
/// [`Wdl::fitted`] gives for both sides.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Wdl {
    /// Offset a of the target's win rate.
    pub target_a: f64,
    /// Scale b of the target's win rate.
    pub target_b: f64,
    /// Offset a of the output's win rate.
    pub output_a: f64,
    /// Scale b of the output's win rate.
    pub output_b: f64,
}

impl Default for Wdl {
    fn default() -> Self {
        Wdl {
            target_a: 0.0,
            target_b: 410.0,
            output_a: 0.0,
            output_b: 361.0,
        }
    }
}

impl Wdl {
    /// One fitted model σ((e − a) / b) for target and output alike.
    pub fn fitted(a: f64, b: f64) -> Wdl {
        Wdl {
            target_a: a,
            target_b: b,
            output_a: a,
            output_b: b,
        }
    }

    /// Checks that both scales are positive and finite.
    pub fn check(&self) -> Result<(), InvalidSetting> {
        for v in [self.target_a, self.output_a] {
            if !v.is_finite() {
                return Err(format!("win-rate offset {v} is not finite").into());
            }
        }
        for v in [self.target_b, self.output_b] {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("win-rate scale {v} is not positive").into());
            }
        }
        Ok(())
    }

    /// W(target) of a score, as `f64` (for the constant baseline).
    pub fn target(&self, score: f64) -> f64 {
        win_rate(score, self.target_a, self.target_b)
    }

    /// W(output) of a network output, as `f64`.
    pub fn output(&self, out: f64) -> f64 {
        win_rate(out, self.output_a, self.output_b)
    }
}

/// The settings of the score-target loss (method 1).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScoreLoss {
    /// The win-rate model.
    pub wdl: Wdl,
    /// The exponent p of `|W(target) − W(output)|^p` (2.6).
    pub power: f64,
    /// λ of the target `λ·W(score) + (1 − λ)·result` (1: scores only, the thesis's runs).
    /// Positions without a known result use λ = 1.
    pub lambda: f64,
}

impl Default for ScoreLoss {
    fn default() -> Self {
        ScoreLoss {
            wdl: Wdl::default(),
            power: 2.6,
            lambda: 1.0,
        }
    }
}

impl ScoreLoss {
    /// Checks the values.
    pub fn check(&self) -> Result<(), InvalidSetting> {
        self.wdl.check()?;
        if !(self.power.is_finite() && self.power >= 1.0) {
            return Err(format!("loss power {} is not at least 1", self.power).into());
        }
        if !(0.0..=1.0).contains(&self.lambda) {
            return Err(format!("lambda {} is not in 0..=1", self.lambda).into());
        }
        Ok(())
    }

    /// The WDL-space targets of a batch: `[B]` from scores, results (1, 0, −1) and a mask of the
    /// positions whose result is known (all on one device).
    pub fn targets(&self, score: &Tensor, result: &Tensor, known: &Tensor) -> Tensor {
        let w = ((score - self.wdl.target_a) / self.wdl.target_b).sigmoid();
        if self.lambda >= 1.0 {
            return w;
        }
        let r = (result + 1.0) * 0.5;
        let mixed = &w * self.lambda + r * (1.0 - self.lambda);
        mixed * known + w * (known.ones_like() - known)
    }

    /// The WDL-space target of one position (`f64`; [`targets`](Self::targets) for a batch).
    pub fn sample_target(&self, score: f64, result: Option<i8>) -> f64 {
        let w = self.wdl.target(score);
        match result {
            Some(r) if self.lambda < 1.0 => {
                self.lambda * w + (1.0 - self.lambda) * (f64::from(r) + 1.0) * 0.5
            }
            _ => w,
        }
    }

    /// The loss `|t − W(out)|^p` of one output (score units) against its WDL target (`f64`;
    /// [`loss`](Self::loss) for a batch).
    pub fn sample_loss(&self, out: f64, target: f64) -> f64 {
        (target - self.wdl.output(out)).abs().powf(self.power)
    }

    /// The mean loss `|t − W(out)|^p` of outputs `out` (score units) against WDL targets `t`.
    pub fn loss(&self, out: &Tensor, targets: &Tensor) -> Tensor {
        let w = ((out - self.wdl.output_a) / self.wdl.output_b).sigmoid();
        (targets - w)
            .abs()
            .pow_tensor_scalar(self.power)
            .mean(Kind::Float)
    }

    /// The loss of the best constant predictor on WDL targets `t`: `min_c mean |t − c|^p` over
    /// c in [0, 1] (a convex function of c; ternary search).
    pub fn constant_baseline(&self, targets: &[f32]) -> f64 {
        if targets.is_empty() {
            return 0.0;
        }
        let p = self.power;
        let f = |c: f64| {
            targets
                .iter()
                .map(|&t| (f64::from(t) - c).abs().powf(p))
                .sum::<f64>()
                / targets.len() as f64
        };
        let (mut lo, mut hi) = (0.0f64, 1.0f64);
        for _ in 0..100 {
            let m1 = lo + (hi - lo) / 3.0;
            let m2 = hi - (hi - lo) / 3.0;
            if f(m1) <= f(m2) {
                hi = m2;
            } else {
                lo = m1;
            }
        }
        f((lo + hi) / 2.0)
    }
}

/// The settings of the PQR loss (method 2).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PqrLoss {
    /// Offset a of the mapping of outputs to `2·σ((out − a) / b) − 1`.
    pub a: f64,
    /// Scale b of that mapping (361, the reference code's output scaling).
    pub b: f64,
}

impl Default for PqrLoss {
    fn default() -> Self {
        // The score loss's output scaling: the same network output means the same win rate.
        let wdl = Wdl::default();
        PqrLoss {
            a: wdl.output_a,
            b: wdl.output_b,
        }
    }
}

impl PqrLoss {
    /// The loss of a triplet batch, §5.3.1: with each output mapped to `v = 2·σ((f − a)/b) − 1`,
    /// `mean(−log σ(r − q) − log σ(p + q) − log σ(−p − q))`. `f(r) > f(q)`: the random move
    /// from p is worse for its mover than the played one, so better for the side to move in r
    /// and q; `f(p) = −f(q)`: the game is zero-sum.
    pub fn loss(&self, p: &Tensor, q: &Tensor, r: &Tensor) -> Tensor {
        let map = |t: &Tensor| ((t - self.a) / self.b).sigmoid() * 2.0 - 1.0;
        let (p, q, r) = (map(p), map(q), map(r));
        let pq = &p + &q;
        let l = -(&r - &q).log_sigmoid() - pq.log_sigmoid() - (-&pq).log_sigmoid();
        l.mean(Kind::Float)
    }

    /// The loss of any constant predictor (all three outputs equal, best at 0): 3·ln 2.
    pub fn constant_baseline(&self) -> f64 {
        3.0 * std::f64::consts::LN_2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(v: &[f32]) -> Tensor {
        Tensor::from_slice(v)
    }

    fn value(x: &Tensor) -> f64 {
        x.double_value(&[])
    }

    #[test]
    fn score_loss_matches_the_formula() {
        let l = ScoreLoss::default();
        let targets = l.targets(&t(&[100.0, -300.0]), &t(&[0.0, 0.0]), &t(&[0.0, 0.0]));
        let out = t(&[50.0, -250.0]);
        let got = value(&l.loss(&out, &targets));
        let w = Wdl::default();
        let e = |s: f64, o: f64| (w.target(s) - w.output(o)).abs().powf(2.6);
        let want = (e(100.0, 50.0) + e(-300.0, -250.0)) / 2.0;
        assert!((got - want).abs() < 1e-6, "{got} vs {want}");
    }

    #[test]
    fn one_position_loss_equals_the_batch_loss() {
        let l = ScoreLoss {
            lambda: 0.25,
            ..ScoreLoss::default()
        };
        let targets = l.targets(&t(&[120.0, 120.0]), &t(&[1.0, 1.0]), &t(&[1.0, 0.0]));
        for (k, result) in [(0, Some(1)), (1, None)] {
            let batch = value(&l.loss(&t(&[-40.0]), &targets.narrow(0, k, 1)));
            let one = l.sample_loss(-40.0, l.sample_target(120.0, result));
            assert!((batch - one).abs() < 1e-6, "{batch} vs {one}");
        }
    }

    #[test]
    fn lambda_mixes_in_known_results_only() {
        let l = ScoreLoss {
            lambda: 0.25,
            ..ScoreLoss::default()
        };
        let got = l.targets(
            &t(&[0.0, 0.0, 400.0]),
            &t(&[1.0, -1.0, 1.0]),
            &t(&[1.0, 1.0, 0.0]),
        );
        let got: Vec<f64> = (0..3).map(|i| got.double_value(&[i])).collect();
        assert!((got[0] - (0.25 * 0.5 + 0.75)).abs() < 1e-6);
        assert!((got[1] - 0.25 * 0.5).abs() < 1e-6);
        assert!((got[2] - Wdl::default().target(400.0)).abs() < 1e-6);
    }

    #[test]
    fn constant_baseline_is_the_minimum_over_constants() {
        let l = ScoreLoss::default();
        let targets = [0.1f32, 0.2, 0.9, 0.5, 0.45];
        let best = l.constant_baseline(&targets);
        for i in 0..=100 {
            let c = i as f64 / 100.0;
            let v = targets
                .iter()
                .map(|&x| (f64::from(x) - c).abs().powf(2.6))
                .sum::<f64>()
                / 5.0;
            assert!(best <= v + 1e-9);
        }
    }

    #[test]
    fn pqr_loss_prefers_consistent_triplets() {
        let l = PqrLoss::default();
        let zero = value(&l.loss(&t(&[0.0]), &t(&[0.0]), &t(&[0.0])));
        assert!((zero - l.constant_baseline()).abs() < 1e-6);
        // f(p) = −f(q) and f(r) > f(q): lower than any inconsistent triplet.
        let good = value(&l.loss(&t(&[200.0]), &t(&[-200.0]), &t(&[500.0])));
        let bad = value(&l.loss(&t(&[200.0]), &t(&[200.0]), &t(&[-500.0])));
        assert!(good < zero && zero < bad, "{good} {zero} {bad}");
    }
}
