//! The thesis's win-rate model W(e) = σ((e − a) / b) (§5.2.1), fitted to scores and game
//! results by maximum likelihood.
//!
//! Each sample contributes `y log W(e) + (1 − y) log(1 − W(e))` with `y` = 1 for a win, ½ for a
//! draw and 0 for a loss of the side to move (so W is the expected score). The likelihood only
//! depends on how many wins, draws and losses each score has, so the data is kept as one
//! counter triple per score (65536 of them, whatever the input size) and the fit is a Newton
//! iteration on `σ(α + β·e)` (a logistic regression, whose log-likelihood is concave), with
//! `b = 1/β`, `a = −α/β`. The thesis found a = 1.28, b = 297.21 on 100 million positions of its
//! data.

use crate::data::Sample;

/// Win, draw and loss counts per score.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WdlData {
    counts: Vec<[u64; 3]>,
    /// Samples counted.
    pub samples: u64,
    /// Samples without a result (not counted).
    pub without_result: u64,
}

impl Default for WdlData {
    fn default() -> Self {
        WdlData {
            counts: vec![[0; 3]; 1 << 16],
            samples: 0,
            without_result: 0,
        }
    }
}

impl WdlData {
    /// Counts one (score, result) pair; `result` is −1, 0 or 1 for the side to move.
    pub fn add(&mut self, score: i16, result: i8) {
        let slot = &mut self.counts[(i32::from(score) + 32768) as usize];
        slot[(result.clamp(-1, 1) + 1) as usize] += 1;
        self.samples += 1;
    }

    /// Counts a sample (those without a result are only counted as such).
    pub fn add_sample(&mut self, s: &Sample) {
        match s.result {
            Some(r) => self.add(s.score, r),
            None => self.without_result += 1,
        }
    }

    /// Adds other counts.
    pub fn merge(&mut self, o: &WdlData) {
        for (a, b) in self.counts.iter_mut().zip(&o.counts) {
            for k in 0..3 {
                a[k] += b[k];
            }
        }
        self.samples += o.samples;
        self.without_result += o.without_result;
    }

    /// The scores seen with their (loss, draw, win) counts.
    pub fn by_score(&self) -> impl Iterator<Item = (i16, [u64; 3])> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, c)| c.iter().any(|&x| x > 0))
            .map(|(i, c)| ((i as i32 - 32768) as i16, *c))
    }

    /// Observed expected score (win + ½ draw) per score bin of `width`, for scores in
    /// `-range..range`: (bin centre, observed, samples).
    pub fn observed(&self, width: i32, range: i32) -> Vec<(f64, f64, u64)> {
        let mut out = Vec::new();
        let mut lo = -range;
        while lo < range {
            let (mut y, mut n) = (0.0, 0u64);
            for s in lo..lo + width {
                let c = self.counts[(s + 32768) as usize];
                y += c[2] as f64 + 0.5 * c[1] as f64;
                n += c.iter().sum::<u64>();
            }
            if n > 0 {
                out.push((f64::from(lo) + f64::from(width) / 2.0, y / n as f64, n));
            }
            lo += width;
        }
        out
    }
}

/// The fitted model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WdlFit {
    /// The score of a 50% expected score.
    pub a: f64,
    /// The scale: how fast the expected score changes with the score.
    pub b: f64,
    /// Approximate standard error of `a` (from the curvature of the likelihood).
    pub a_se: f64,
    /// Approximate standard error of `b`.
    pub b_se: f64,
    /// Mean log-likelihood per sample at the optimum.
    pub mean_log_likelihood: f64,
    /// Samples used.
    pub samples: u64,
    /// Newton iterations.
    pub iterations: u32,
}

impl WdlFit {
    /// W(e), the model's expected score at score `e`.
    pub fn win_rate(&self, e: f64) -> f64 {
        win_rate(e, self.a, self.b)
    }
}

/// The win-rate model W(e) = σ((e − a) / b), the expected score of a position of score `e`: the
/// one formula of the fit, the score-target loss's baseline and held-out scoring (the loss's
/// tensors apply the same map).
pub fn win_rate(e: f64, a: f64, b: f64) -> f64 {
    sigmoid((e - a) / b)
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// log σ(x), stable for large |x|.
fn log_sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        -(-x).exp().ln_1p()
    } else {
        x - x.exp().ln_1p()
    }
}

/// Scores are divided by this inside the iteration (conditioning).
const SCALE: f64 = 400.0;

/// Why the win-rate model cannot be fitted to the data.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum WdlFitError {
    /// No sample has a game result.
    #[error("no samples with a game result")]
    NoResults,
    /// Every game ended the same way.
    #[error("every game has the same result: the model cannot be fitted")]
    OneResult,
    /// The likelihood's curvature vanished.
    #[error("singular likelihood (too few distinct scores?)")]
    Singular,
    /// The fitted win rate does not grow with the score (its slope).
    #[error("no increasing win-rate curve fits the data (slope {0})")]
    NotIncreasing(f64),
}

/// Fits a and b by maximum likelihood. Fails without data, when every result is the same or
/// the win rate does not grow with the score.
pub fn fit(data: &WdlData) -> Result<WdlFit, WdlFitError> {
    // (x, y = wins + draws/2, n)
    let points: Vec<(f64, f64, f64)> = data
        .by_score()
        .map(|(s, c)| {
            let n = (c[0] + c[1] + c[2]) as f64;
            (f64::from(s) / SCALE, c[2] as f64 + 0.5 * c[1] as f64, n)
        })
        .collect();
    let total: f64 = points.iter().map(|p| p.2).sum();
    let wins: f64 = points.iter().map(|p| p.1).sum();
    if total == 0.0 {
        return Err(WdlFitError::NoResults);
    }
    if wins <= 0.0 || wins >= total {
        return Err(WdlFitError::OneResult);
    }
    let loglik = |al: f64, be: f64| -> f64 {
        points
            .iter()
            .map(|&(x, y, n)| {
                let z = al + be * x;
                y * log_sigmoid(z) + (n - y) * log_sigmoid(-z)
            })
            .sum()
    };
    let (mut al, mut be) = (0.0f64, 1.0f64);
    let mut ll = loglik(al, be);
    let mut iterations = 0;
    let mut hessian = [0.0f64; 3];
    for it in 1..=200 {
        iterations = it;
        // Gradient and (negated) Hessian.
        let (mut g0, mut g1, mut h00, mut h01, mut h11) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for &(x, y, n) in &points {
            let p = sigmoid(al + be * x);
            let r = y - n * p;
            let w = n * p * (1.0 - p);
            g0 += r;
            g1 += r * x;
            h00 += w;
            h01 += w * x;
            h11 += w * x * x;
        }
        hessian = [h00, h01, h11];
        let det = h00 * h11 - h01 * h01;
        if det.is_nan() || det.abs() <= f64::MIN_POSITIVE {
            return Err(WdlFitError::Singular);
        }
        let d0 = (h11 * g0 - h01 * g1) / det;
        let d1 = (h00 * g1 - h01 * g0) / det;
        // Damped step: halve until the likelihood does not drop.
        let mut step = 1.0;
        loop {
            let (na, nb) = (al + step * d0, be + step * d1);
            let nll = loglik(na, nb);
            if nll >= ll - 1e-12 * ll.abs() || step < 1e-6 {
                al = na;
                be = nb;
                ll = nll;
                break;
            }
            step /= 2.0;
        }
        if (d0 * step).abs() < 1e-12 && (d1 * step).abs() < 1e-12 {
            break;
        }
    }
    if !(be.is_finite() && al.is_finite()) || be <= 0.0 {
        return Err(WdlFitError::NotIncreasing(be));
    }
    let beta = be / SCALE;
    let a = -al / beta;
    let b = 1.0 / beta;
    // Covariance of (α, β) in scaled units = inverse of the negated Hessian.
    let [h00, h01, h11] = hessian;
    let det = h00 * h11 - h01 * h01;
    let (v00, v01, v11) = (h11 / det, -h01 / det, h00 / det);
    // a = −α·SCALE/β', b = SCALE/β' (β' the scaled slope): the delta method.
    let da = [-SCALE / be, al * SCALE / (be * be)];
    let db = [0.0, -SCALE / (be * be)];
    let var = |g: [f64; 2]| g[0] * g[0] * v00 + 2.0 * g[0] * g[1] * v01 + g[1] * g[1] * v11;
    Ok(WdlFit {
        a,
        b,
        a_se: var(da).max(0.0).sqrt(),
        b_se: var(db).max(0.0).sqrt(),
        mean_log_likelihood: ll / total,
        samples: total as u64,
        iterations,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn synthetic(a: f64, b: f64, n: usize, draws: bool, seed: u64) -> WdlData {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut d = WdlData::default();
        for _ in 0..n {
            let e: i16 = rng.random_range(-1500..=1500);
            let p = win_rate(f64::from(e), a, b);
            // With draws: a draw with probability d = min(p, 1 − p), a win with p − d/2, so that
            // E[y] = p still.
            let result = if draws {
                let d = p.min(1.0 - p);
                let u: f64 = rng.random();
                if u < d {
                    0
                } else if u < d + p - d / 2.0 {
                    1
                } else {
                    -1
                }
            } else if rng.random::<f64>() < p {
                1
            } else {
                -1
            };
            d.add(e, result);
        }
        d
    }

    #[test]
    fn recovers_the_thesis_parameters() {
        let data = synthetic(1.28, 297.21, 1_000_000, false, 1);
        let f = fit(&data).unwrap();
        assert!((f.a - 1.28).abs() < 4.0 * f.a_se.max(0.5), "{f:?}");
        assert!((f.b - 297.21).abs() < 4.0 * f.b_se.max(0.5), "{f:?}");
        assert!(f.a_se < 2.0 && f.b_se < 2.0, "{f:?}");
        assert!((f.win_rate(f.a) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn recovers_shifted_parameters_with_draws() {
        let data = synthetic(-60.0, 150.0, 1_000_000, true, 2);
        let f = fit(&data).unwrap();
        assert!((f.a + 60.0).abs() < 4.0 * f.a_se.max(0.5), "{f:?}");
        assert!((f.b - 150.0).abs() < 4.0 * f.b_se.max(0.5), "{f:?}");
    }

    #[test]
    fn refuses_degenerate_data() {
        assert!(fit(&WdlData::default()).is_err());
        let mut d = WdlData::default();
        for s in -100..100 {
            d.add(s, 1);
        }
        assert_eq!(fit(&d).unwrap_err(), WdlFitError::OneResult);
        let mut d = WdlData::default();
        for s in -100..100i16 {
            d.add(s, if s < 0 { 1 } else { -1 });
        }
        assert!(fit(&d).is_err());
    }

    #[test]
    fn observed_bins() {
        let mut d = WdlData::default();
        d.add(10, 1);
        d.add(20, 0);
        d.add(-30, -1);
        let o = d.observed(50, 100);
        assert_eq!(o, vec![(-25.0, 0.0, 1), (25.0, 0.75, 2)]);
    }
}
