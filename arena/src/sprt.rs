//! Sequential probability ratio test (GSPRT) as fishtest and fastchess run it.
//!
//! # Statistics
//!
//! Games are played in pairs: the same opening twice, colours reversed. A pair scores 0, ½, 1,
//! 1½ or 2 points for the tested engine; the five counts form the *pentanomial* distribution
//! (bins LL, LD, WL+DD, WD, WW), which captures the correlation between the two games of a pair
//! and gives a smaller variance than counting games. When games are not paired the
//! *trinomial* L/D/W counts are used instead. Scores are normalised to 0..1 (pair score / 2).
//!
//! # Log-likelihood ratio
//!
//! Hypotheses H0: Elo = `elo0`, H1: Elo = `elo1`. Bounds (Wald): `A = ln(β/(1-α))`,
//! `B = ln((1-β)/α)`; the test accepts H1 when `LLR ≥ B`, H0 when `LLR ≤ A`, and goes on
//! otherwise.
//!
//! The LLR is the *generalised* log-likelihood ratio of fishtest's `LLRcalc.py`
//! (M. Van den Bergh, "Comments on normalized Elo" / `support_MLE_multinomial.pdf`): with
//! `N` observations (pairs or games), empirical frequencies `p̂_i` of the scores `a_i`, and for
//! each hypothesis the maximum-likelihood distribution `p⁽ᵏ⁾` subject to that hypothesis,
//!
//! `LLR = N · Σ_i p̂_i (ln p⁽¹⁾_i - ln p⁽⁰⁾_i)`.
//!
//! - Logistic Elo (`model=logistic`): the hypothesis fixes the expected score
//!   `s_k = 1/(1 + 10^(-elo_k/400))`. The constrained maximum is `p_i = p̂_i / (1 + θ(a_i - s))`
//!   with `θ` the root of `Σ_i p̂_i (a_i - s)/(1 + θ(a_i - s)) = 0` (fishtest `MLE_expected`).
//! - Normalized Elo (`model=normalized`): the hypothesis fixes `t = (μ - ½)/σ` with
//!   `t_k = nelo_k / (800/ln 10)`, times √2 for pentanomial counts (σ per pair is √2 times σ
//!   per game). The maximum is found by fishtest's fixed-point iteration `MLE_t_value`.
//!
//! Zero counts are replaced by 1e-3 before anything is computed (fishtest `regularize`).
//!
//! # Estimates
//!
//! Score `s̄ = Σ p̂_i a_i`, variance per observation `σ² = Σ p̂_i (a_i - s̄)²`, 95% interval
//! `s̄ ± 1.96 σ/√N`; logistic Elo `-400 log10(1/s̄ - 1)` with the half-width of the mapped
//! interval as error; normalized Elo `(s̄ - ½)/σ_game · 800/ln 10` with `σ_game = √2 σ` for
//! pairs (fastchess `elo_pentanomial.cpp`); LOS `Φ((s̄ - ½)/(σ/√N))`.

use std::collections::HashMap;
use std::fmt;

use crate::pgn::PgnGame;
use crate::rating::{Z95, elo_from_score, normal_cdf};

/// `800 / ln 10`: normalized Elo per unit of `t`.
pub const NELO_PER_T: f64 = 800.0 / std::f64::consts::LN_10;

/// Result counts: 3 (L, D, W) or 5 (LL, LD, WL+DD, WD, WW) bins, from the tested engine's side.
#[derive(Clone, Debug, PartialEq)]
pub enum Counts {
    /// Game counts `[losses, draws, wins]`.
    Trinomial([u64; 3]),
    /// Pair counts by pair score 0, ½, 1, 1½, 2: `[LL, LD, WL+DD, WD, WW]`.
    Pentanomial([u64; 5]),
}

impl Counts {
    /// Observations: games (trinomial) or pairs (pentanomial).
    pub fn observations(&self) -> u64 {
        self.bins().iter().sum()
    }

    /// Games behind the counts.
    pub fn games(&self) -> u64 {
        match self {
            Counts::Trinomial(c) => c.iter().sum(),
            Counts::Pentanomial(c) => 2 * c.iter().sum::<u64>(),
        }
    }

    /// The counts as a slice.
    pub fn bins(&self) -> &[u64] {
        match self {
            Counts::Trinomial(c) => c,
            Counts::Pentanomial(c) => c,
        }
    }

    /// The regularised empirical distribution: `(score 0..1, frequency)` per bin, zero counts
    /// replaced by 1e-3; and the (regularised) number of observations.
    pub fn pdf(&self) -> (f64, Vec<(f64, f64)>) {
        let bins: Vec<f64> = self
            .bins()
            .iter()
            .map(|&c| if c == 0 { 1e-3 } else { c as f64 })
            .collect();
        let n: f64 = bins.iter().sum();
        let k = bins.len() as f64 - 1.0;
        (
            n,
            bins.iter()
                .enumerate()
                .map(|(i, &c)| (i as f64 / k, c / n))
                .collect(),
        )
    }
}

/// How `elo0`/`elo1` are measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum EloModel {
    /// Logistic Elo: expected score `1/(1 + 10^(-elo/400))`.
    #[default]
    Logistic,
    /// Normalized Elo (fishtest's default, fastchess `model=normalized`).
    Normalized,
}

/// The test's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SprtParams {
    /// Elo under H0.
    pub elo0: f64,
    /// Elo under H1 (greater than `elo0`).
    pub elo1: f64,
    /// Type I error (false H1).
    pub alpha: f64,
    /// Type II error (false H0).
    pub beta: f64,
    /// Elo model of the bounds.
    pub model: EloModel,
}

impl SprtParams {
    /// Checks the ranges (as fastchess does).
    pub fn validate(&self) -> Result<(), SprtError> {
        if self.elo0.is_nan() || self.elo1.is_nan() || self.elo0 >= self.elo1 {
            return Err(SprtError::Bounds(self.elo0, self.elo1));
        }
        let in_unit = |x: f64| x > 0.0 && x < 1.0;
        if !in_unit(self.alpha) || !in_unit(self.beta) {
            return Err(SprtError::Probabilities);
        }
        if self.alpha + self.beta >= 1.0 {
            return Err(SprtError::ProbabilitySum);
        }
        Ok(())
    }

    /// The lower bound `A = ln(β/(1-α))`.
    pub fn lower_bound(&self) -> f64 {
        (self.beta / (1.0 - self.alpha)).ln()
    }

    /// The upper bound `B = ln((1-β)/α)`.
    pub fn upper_bound(&self) -> f64 {
        ((1.0 - self.beta) / self.alpha).ln()
    }
}

/// The test's decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// `LLR ≥ B`: H1 accepted (the change passes).
    AcceptH1,
    /// `LLR ≤ A`: H0 accepted (the change fails).
    AcceptH0,
    /// Between the bounds: play more games.
    Continue,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::AcceptH1 => "H1 accepted (pass)",
            Verdict::AcceptH0 => "H0 accepted (fail)",
            Verdict::Continue => "continue",
        })
    }
}

/// Everything [`evaluate`] computes.
#[derive(Clone, Debug, PartialEq)]
pub struct SprtReport {
    /// The counts.
    pub counts: Counts,
    /// The parameters.
    pub params: SprtParams,
    /// The log-likelihood ratio.
    pub llr: f64,
    /// `A`.
    pub lower: f64,
    /// `B`.
    pub upper: f64,
    /// The decision.
    pub verdict: Verdict,
    /// Mean score per game, 0..1.
    pub score: f64,
    /// Logistic Elo estimate.
    pub elo: f64,
    /// Its 95% error (`±`).
    pub elo_error: f64,
    /// Normalized Elo estimate.
    pub nelo: f64,
    /// Its 95% error (`±`).
    pub nelo_error: f64,
    /// Likelihood of superiority.
    pub los: f64,
}

fn mean_var(pdf: &[(f64, f64)]) -> (f64, f64) {
    let mu: f64 = pdf.iter().map(|(a, p)| a * p).sum();
    let var: f64 = pdf.iter().map(|(a, p)| p * (a - mu) * (a - mu)).sum();
    (mu, var)
}

/// Root of the secular equation `Σ p_i v_i/(1 + x v_i) = 0` (needs `min v < 0 < max v`),
/// by bisection on `(-1/max v, -1/min v)`, where the left side decreases.
fn secular(pdf: &[(f64, f64)]) -> f64 {
    let vmin = pdf.iter().map(|x| x.0).fold(f64::INFINITY, f64::min);
    let vmax = pdf.iter().map(|x| x.0).fold(f64::NEG_INFINITY, f64::max);
    let f = |x: f64| pdf.iter().map(|&(v, p)| p * v / (1.0 + x * v)).sum::<f64>();
    let (mut lo, mut hi) = (-1.0 / vmax, -1.0 / vmin);
    for _ in 0..300 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if f(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// fishtest `MLE_expected`: the distribution on the scores of `pdf` closest in likelihood to
/// it with expectation `s`.
fn mle_expected(pdf: &[(f64, f64)], s: f64) -> Vec<f64> {
    let shifted: Vec<(f64, f64)> = pdf.iter().map(|&(a, p)| (a - s, p)).collect();
    let x = secular(&shifted);
    pdf.iter().map(|&(a, p)| p / (1.0 + x * (a - s))).collect()
}

/// fishtest `MLE_t_value`: the closest distribution with `(μ - ref)/σ = t`.
fn mle_t_value(pdf: &[(f64, f64)], reference: f64, t: f64) -> Vec<f64> {
    let n = pdf.len();
    let mut p: Vec<f64> = vec![1.0 / n as f64; n];
    for _ in 0..100 {
        let cur: Vec<(f64, f64)> = pdf.iter().zip(&p).map(|(&(a, _), &q)| (a, q)).collect();
        let (mu, var) = mean_var(&cur);
        let sigma = var.sqrt();
        let shifted: Vec<(f64, f64)> = pdf
            .iter()
            .map(|&(a, ph)| {
                (
                    a - reference - t * sigma * (1.0 + ((mu - a) / sigma).powi(2)) / 2.0,
                    ph,
                )
            })
            .collect();
        let x = secular(&shifted);
        let next: Vec<f64> = pdf
            .iter()
            .zip(&shifted)
            .map(|(&(_, ph), &(v, _))| ph / (1.0 + x * v))
            .collect();
        let diff = next
            .iter()
            .zip(&p)
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        p = next;
        if diff < 1e-12 {
            break;
        }
    }
    p
}

/// Logistic Elo to expected score: `1/(1 + 10^(-elo/400))`.
pub fn score_from_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// The log-likelihood ratio of H1 against H0 for these counts; see the module docs.
pub fn llr(counts: &Counts, elo0: f64, elo1: f64, model: EloModel) -> f64 {
    let (n, pdf) = counts.pdf();
    let (p0, p1) = match model {
        EloModel::Logistic => (
            mle_expected(&pdf, score_from_elo(elo0)),
            mle_expected(&pdf, score_from_elo(elo1)),
        ),
        EloModel::Normalized => {
            let scale = match counts {
                Counts::Trinomial(_) => 1.0,
                Counts::Pentanomial(_) => std::f64::consts::SQRT_2,
            };
            (
                mle_t_value(&pdf, 0.5, scale * elo0 / NELO_PER_T),
                mle_t_value(&pdf, 0.5, scale * elo1 / NELO_PER_T),
            )
        }
    };
    n * pdf
        .iter()
        .zip(p0.iter().zip(&p1))
        .map(|(&(_, ph), (&a, &b))| ph * (b.ln() - a.ln()))
        .sum::<f64>()
}

/// Why a test cannot run. `Display`: one line.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SprtError {
    /// The Elo bounds are not `elo0 < elo1`.
    #[error("elo0 ({0}) must be less than elo1 ({1})")]
    Bounds(f64, f64),
    /// α or β outside (0, 1).
    #[error("alpha and beta must lie strictly between 0 and 1")]
    Probabilities,
    /// α + β of 1 or more.
    #[error("alpha + beta must be less than 1")]
    ProbabilitySum,
    /// Nothing to test.
    #[error("no games")]
    NoGames,
}

/// Runs the test on the counts: LLR, bounds, verdict and estimates.
pub fn evaluate(counts: &Counts, params: SprtParams) -> Result<SprtReport, SprtError> {
    params.validate()?;
    if counts.observations() == 0 {
        return Err(SprtError::NoGames);
    }
    let llr = llr(counts, params.elo0, params.elo1, params.model);
    let (lower, upper) = (params.lower_bound(), params.upper_bound());
    let verdict = if llr >= upper {
        Verdict::AcceptH1
    } else if llr <= lower {
        Verdict::AcceptH0
    } else {
        Verdict::Continue
    };
    // Estimates from the raw (unregularised) frequencies.
    let bins = counts.bins();
    let n = counts.observations() as f64;
    let k = bins.len() as f64 - 1.0;
    let pdf: Vec<(f64, f64)> = bins
        .iter()
        .enumerate()
        .map(|(i, &c)| (i as f64 / k, c as f64 / n))
        .collect();
    let (score, var) = mean_var(&pdf);
    let se = (var / n).sqrt();
    let (hi, lo) = ((score + Z95 * se).min(1.0), (score - Z95 * se).max(0.0));
    let elo = elo_from_score(score);
    let elo_error = (elo_from_score(hi) - elo_from_score(lo)) / 2.0;
    let sigma_game = match counts {
        Counts::Trinomial(_) => var.sqrt(),
        Counts::Pentanomial(_) => (2.0 * var).sqrt(),
    };
    let nelo = (score - 0.5) / sigma_game * NELO_PER_T;
    let nelo_error = Z95 * se / sigma_game * NELO_PER_T;
    let los = if se > 0.0 {
        normal_cdf((score - 0.5) / se)
    } else if score > 0.5 {
        1.0
    } else if score < 0.5 {
        0.0
    } else {
        0.5
    };
    Ok(SprtReport {
        counts: counts.clone(),
        params,
        llr,
        lower,
        upper,
        verdict,
        score,
        elo,
        elo_error,
        nelo,
        nelo_error,
        los,
    })
}

impl fmt::Display for SprtReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let model = match self.params.model {
            EloModel::Logistic => "logistic",
            EloModel::Normalized => "normalized",
        };
        match &self.counts {
            Counts::Trinomial([l, d, w]) => {
                writeln!(f, "Games: {} (W {w}, D {d}, L {l}), trinomial", l + d + w)?
            }
            Counts::Pentanomial(c) => writeln!(
                f,
                "Pairs: {} ({} games), pentanomial [LL, LD, WL+DD, WD, WW] = {:?}",
                c.iter().sum::<u64>(),
                self.counts.games(),
                c
            )?,
        }
        writeln!(
            f,
            "SPRT ({model} Elo) [{}, {}], alpha {}, beta {}",
            self.params.elo0, self.params.elo1, self.params.alpha, self.params.beta
        )?;
        writeln!(
            f,
            "LLR {:.3}  bounds ({:.3}, {:.3})  -> {}",
            self.llr, self.lower, self.upper, self.verdict
        )?;
        writeln!(
            f,
            "Score {:.2}%  Elo {:+.2} ± {:.2}  nElo {:+.2} ± {:.2}  LOS {:.2}%",
            100.0 * self.score,
            self.elo,
            self.elo_error,
            self.nelo,
            self.nelo_error,
            100.0 * self.los
        )
    }
}

/// What [`counts_from_pgn`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct PgnCounts {
    /// Pentanomial counts of the complete pairs.
    pub pentanomial: [u64; 5],
    /// Trinomial counts of all games of the engine with a result.
    pub trinomial: [u64; 3],
    /// Games of the engine that found no partner (left out of the pentanomial counts).
    pub unpaired: usize,
    /// Opponents met, sorted.
    pub opponents: Vec<String>,
}

impl PgnCounts {
    /// The counts to test: pentanomial when any pair was found, else trinomial.
    pub fn counts(&self) -> Counts {
        if self.pentanomial.iter().sum::<u64>() > 0 {
            Counts::Pentanomial(self.pentanomial)
        } else {
            Counts::Trinomial(self.trinomial)
        }
    }
}

/// Counts `engine`'s results in `games` (against any opponent, or only `opponent`).
///
/// Pairing rule: two games form a pair when they have the same two players, with `engine`
/// white in one and black in the other, and the same *pairing key*: the part of the `Round`
/// tag before its last `.` when the tag has one (the tournament writes rounds `N.1`, `N.2`
/// for the two games of opening `N`); otherwise the `FEN` tag (empty for the standard start).
/// Within a key, games are matched in file order (first white game with first black game), so
/// the order in which parallel workers finished does not matter. Games that stay unmatched
/// count only in the trinomial counts. Games with an unknown result are ignored.
pub fn counts_from_pgn(games: &[PgnGame], engine: &str, opponent: Option<&str>) -> PgnCounts {
    type Key = (String, String);
    let mut trinomial = [0u64; 3];
    let mut waiting: HashMap<Key, (Vec<f64>, Vec<f64>)> = HashMap::new();
    let mut order: Vec<Key> = Vec::new();
    let mut opponents: Vec<String> = Vec::new();
    for g in games {
        let (Some(w), Some(b)) = (g.tag("White"), g.tag("Black")) else {
            continue;
        };
        let Some(white_score) = g.outcome.and_then(|o| o.white_score()) else {
            continue;
        };
        let (opp, score, engine_white) = if w == engine {
            (b, white_score, true)
        } else if b == engine {
            (w, 1.0 - white_score, false)
        } else {
            continue;
        };
        if opponent.is_some_and(|o| o != opp) {
            continue;
        }
        if !opponents.iter().any(|o| o == opp) {
            opponents.push(opp.to_string());
        }
        trinomial[(score * 2.0) as usize] += 1;
        let round_key = g
            .tag("Round")
            .and_then(|r| r.rfind('.').map(|i| format!("round:{}", &r[..i])));
        let key_tail = round_key.unwrap_or_else(|| format!("fen:{}", g.tag("FEN").unwrap_or("")));
        let key = (opp.to_string(), key_tail);
        let entry = waiting.entry(key.clone()).or_insert_with(|| {
            order.push(key.clone());
            (Vec::new(), Vec::new())
        });
        if engine_white {
            entry.0.push(score);
        } else {
            entry.1.push(score);
        }
    }
    let mut pentanomial = [0u64; 5];
    let mut unpaired = 0;
    for key in &order {
        let (ws, bs) = &waiting[key];
        let pairs = ws.len().min(bs.len());
        for k in 0..pairs {
            pentanomial[((ws[k] + bs[k]) * 2.0).round() as usize] += 1;
        }
        unpaired += ws.len() + bs.len() - 2 * pairs;
    }
    opponents.sort();
    PgnCounts {
        pentanomial,
        trinomial,
        unpaired,
        opponents,
    }
}
