//! Sequential probability ratio test (GSPRT) as fishtest and fastchess run it, written from the
//! published mathematics.
//!
//! # Observations
//!
//! Games are played in pairs: the same opening twice, colours reversed. A pair scores 0, ½, 1,
//! 1½ or 2 points for the tested engine; the five counts form the *pentanomial* distribution
//! (bins LL, LD, WL+DD, WD, WW), which keeps the correlation between the two games of a pair
//! and gives a smaller variance than counting games. When games are not paired the
//! *trinomial* L/D/W counts are used instead. Each bin's score is normalised to 0..1 (a pair's
//! score / 2).
//!
//! # The test
//!
//! H0: Elo = `elo0` against H1: Elo = `elo1`, with Wald's bounds `A = ln(β/(1-α))` and
//! `B = ln((1-β)/α)`: H1 is accepted when `LLR ≥ B`, H0 when `LLR ≤ A`; otherwise play on.
//!
//! The LLR is the *generalised* log-likelihood ratio of M. Van den Bergh's notes on fishtest's
//! statistics (`support_MLE_multinomial.pdf`, proposition 1.1, and
//! `normalized_elo_practical.pdf`, section 4.1, at `https://www.cantate.be/Fishtest/`), which
//! fishtest and fastchess compute. A hypothesis
//! does not fix a distribution, only one of its properties; each side of the ratio takes the
//! distribution on the bins' scores that explains the observations best among those with the
//! property:
//!
//! `LLR = N · Σ_i p̂_i (ln q⁽¹⁾_i − ln q⁽⁰⁾_i)`,
//!
//! with `N` the observations (pairs or games), `p̂` their shares per bin, and `q⁽ᵏ⁾` the most
//! likely distribution under hypothesis `k`.
//!
//! **A linear property** `Σ_i q_i g_i = 0`: maximising
//! `Σ p̂_i ln q_i` with a Lagrange multiplier gives `q_i = p̂_i / (1 + λ g_i)`, where `λ` makes
//! `Σ_i p̂_i g_i / (1 + λ g_i)` vanish. That sum falls strictly as `λ` rises on the interval
//! where every `1 + λ g_i` is positive, `(−1/max g, −1/min g)`, so the root is found by halving
//! that interval.
//!
//! - *Logistic Elo* fixes the mean score: `s = 1/(1 + 10^(−elo/400))`, `g_i = a_i − s`.
//! - *Normalized Elo* fixes the t-value `(μ − ½)/σ = t`, with `t = nelo / (800/ln 10)`, times √2
//!   for pairs (a pair's σ is √2 times a game's). That property is not linear in `q`; it is
//!   made linear at the current estimate and solved again until the estimate stands still: at
//!   `q` with mean `μ` and deviation `σ`, `g_i = a_i − ½ − tσ(1 + ((a_i − μ)/σ)²)/2`, the
//!   gradient of `μ − ½ − tσ` shifted so that `Σ q_i g_i` is its value.
//!
//! Empty bins get a weight of 1e-3 before the shares are taken (otherwise a distribution with a
//! zero could not be tilted towards the hypothesis).
//!
//! # Estimates
//!
//! Score `s̄ = Σ p̂_i a_i`, variance per observation `σ² = Σ p̂_i (a_i - s̄)²`, 95% interval
//! `s̄ ± 1.96 σ/√N`; logistic Elo `-400 log10(1/s̄ - 1)` with the half-width of the mapped
//! interval as error; normalized Elo `(s̄ - ½)/σ_game · 800/ln 10` with `σ_game = √2 σ` for
//! pairs (as fastchess's `elo_pentanomial.cpp` reports them); LOS `Φ((s̄ - ½)/(σ/√N))`.

use std::collections::HashMap;
use std::fmt;

use crate::pgn::PgnGame;
use crate::rating::{Z95, elo_from_score, normal_cdf};

/// `800 / ln 10`: normalized Elo per unit of `t`.
pub const NELO_PER_T: f64 = 800.0 / std::f64::consts::LN_10;

/// The weight an empty bin gets before the shares are taken.
const EMPTY_BIN_WEIGHT: f64 = 1e-3;

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

    /// The score of bin `i` of these counts, 0..1.
    fn score_of(&self, i: usize) -> f64 {
        i as f64 / (self.bins().len() - 1) as f64
    }

    /// A pair's standard deviation per game's: √2 for pairs, 1 for games.
    fn deviation_per_game(&self) -> f64 {
        match self {
            Counts::Trinomial(_) => 1.0,
            Counts::Pentanomial(_) => std::f64::consts::SQRT_2,
        }
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

/// Mean and variance of `scores` weighted by `probabilities` (which sum to 1).
fn moments(scores: &[f64], probabilities: &[f64]) -> (f64, f64) {
    let mean: f64 = scores.iter().zip(probabilities).map(|(a, p)| a * p).sum();
    let variance = scores
        .iter()
        .zip(probabilities)
        .map(|(a, p)| p * (a - mean) * (a - mean))
        .sum();
    (mean, variance)
}

/// What a hypothesis says of the true distribution of scores.
#[derive(Clone, Copy, Debug)]
enum Property {
    /// Its mean score.
    Mean(f64),
    /// Its t-value `(μ − ½)/σ`.
    TValue(f64),
}

impl Property {
    /// The property `model` gives `elo` for observations of `counts`' kind.
    fn of(model: EloModel, elo: f64, counts: &Counts) -> Property {
        match model {
            EloModel::Logistic => Property::Mean(score_from_elo(elo)),
            EloModel::Normalized => {
                Property::TValue(counts.deviation_per_game() * elo / NELO_PER_T)
            }
        }
    }
}

/// The observations as a distribution on the bins' scores.
struct Observed {
    /// Each bin's score, 0..1.
    scores: Vec<f64>,
    /// Each bin's share of the (weighted) observations.
    shares: Vec<f64>,
    /// The (weighted) number of observations.
    total: f64,
}

/// Rounds of making the t-value linear at most; the estimate stands still long before.
const MAX_LINEARISATIONS: usize = 100;

impl Observed {
    fn new(counts: &Counts) -> Self {
        let weights: Vec<f64> = counts
            .bins()
            .iter()
            .map(|&c| if c == 0 { EMPTY_BIN_WEIGHT } else { c as f64 })
            .collect();
        let total: f64 = weights.iter().sum();
        Observed {
            scores: (0..weights.len()).map(|i| counts.score_of(i)).collect(),
            shares: weights.iter().map(|w| w / total).collect(),
            total,
        }
    }

    /// The distribution most likely to have produced the observations among those with
    /// `Σ q_i g_i = 0` (module docs): `q_i = p̂_i / (1 + λ g_i)`.
    fn most_likely_with(&self, g: &[f64]) -> Vec<f64> {
        let lambda = self.multiplier(g);
        self.shares
            .iter()
            .zip(g)
            .map(|(p, gi)| p / (1.0 + lambda * gi))
            .collect()
    }

    /// The `λ` at which `Σ p̂_i g_i / (1 + λ g_i)` vanishes, by halving the interval on which
    /// every `1 + λ g_i` is positive (`g` must take both signs).
    fn multiplier(&self, g: &[f64]) -> f64 {
        let (low, high) = g
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
                (l.min(x), h.max(x))
            });
        let slope = |lambda: f64| -> f64 {
            self.shares
                .iter()
                .zip(g)
                .map(|(p, gi)| p * gi / (1.0 + lambda * gi))
                .sum()
        };
        let (mut below, mut above) = (-1.0 / high, -1.0 / low);
        loop {
            let middle = 0.5 * (below + above);
            if middle <= below || middle >= above {
                return middle;
            }
            if slope(middle) > 0.0 {
                below = middle;
            } else {
                above = middle;
            }
        }
    }

    /// The distribution most likely to have produced the observations among those with
    /// `property`.
    fn most_likely_under(&self, property: Property) -> Vec<f64> {
        match property {
            Property::Mean(s) => {
                let g: Vec<f64> = self.scores.iter().map(|a| a - s).collect();
                self.most_likely_with(&g)
            }
            Property::TValue(t) => {
                let n = self.scores.len();
                let mut q = vec![1.0 / n as f64; n];
                for _ in 0..MAX_LINEARISATIONS {
                    let (mean, variance) = moments(&self.scores, &q);
                    let sigma = variance.sqrt();
                    let g: Vec<f64> = self
                        .scores
                        .iter()
                        .map(|a| {
                            let z = (a - mean) / sigma;
                            a - 0.5 - t * sigma * (1.0 + z * z) / 2.0
                        })
                        .collect();
                    let next = self.most_likely_with(&g);
                    let moved = next
                        .iter()
                        .zip(&q)
                        .map(|(a, b)| (a - b).abs())
                        .fold(0.0, f64::max);
                    q = next;
                    if moved < 1e-12 {
                        break;
                    }
                }
                q
            }
        }
    }

    /// `N · Σ p̂_i ln(q1_i / q0_i)`.
    fn log_likelihood_ratio(&self, q0: &[f64], q1: &[f64]) -> f64 {
        self.total
            * self
                .shares
                .iter()
                .zip(q0.iter().zip(q1))
                .map(|(p, (a, b))| p * (b.ln() - a.ln()))
                .sum::<f64>()
    }
}

/// Logistic Elo to expected score: `1/(1 + 10^(-elo/400))`.
pub fn score_from_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// The log-likelihood ratio of H1 against H0 for these counts; see the module docs.
pub fn llr(counts: &Counts, elo0: f64, elo1: f64, model: EloModel) -> f64 {
    let observed = Observed::new(counts);
    let [q0, q1] =
        [elo0, elo1].map(|elo| observed.most_likely_under(Property::of(model, elo, counts)));
    observed.log_likelihood_ratio(&q0, &q1)
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
    // Estimates from the observed shares, empty bins left empty.
    let n = counts.observations() as f64;
    let scores: Vec<f64> = (0..counts.bins().len())
        .map(|i| counts.score_of(i))
        .collect();
    let shares: Vec<f64> = counts.bins().iter().map(|&c| c as f64 / n).collect();
    let (score, var) = moments(&scores, &shares);
    let se = (var / n).sqrt();
    let (hi, lo) = ((score + Z95 * se).min(1.0), (score - Z95 * se).max(0.0));
    let elo = elo_from_score(score);
    let elo_error = (elo_from_score(hi) - elo_from_score(lo)) / 2.0;
    let sigma_game = counts.deviation_per_game() * var.sqrt();
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
    type PairingKey = (String, String);
    let mut trinomial = [0u64; 3];
    let mut waiting: HashMap<PairingKey, (Vec<f64>, Vec<f64>)> = HashMap::new();
    let mut order: Vec<PairingKey> = Vec::new();
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
