//! Joint maximum-likelihood ratings of all players of a set of games, in Ordo's model.
//!
//! # Model
//!
//! Each player `i` has a rating `r_i`. The expected score of `i` against `j` is the logistic
//! curve `E_ij = 1 / (1 + exp(-β (r_i - r_j)))`. By default ([`FitOptions::default`], as in the
//! CLI, the tournament table and `trainer run`) `β` is set so that a difference of
//! [`ORDO_Z76`] = 202 points gives 76% (Ordo's `-z` and its default); [`FitOptions::elo_curve`]
//! gives `β = ln(10)/400`, the Elo formula `E = 1 / (1 + 10^((r_j - r_i)/400))`, which gives 76%
//! at 200.24, so the two scales differ by 0.9%. There is no white advantage (Ordo
//! without `-w`/`-W`) and a draw counts as half a win and half a loss. The ratings maximise the
//! log-likelihood over all games `g` (white `w`, black `b`, white's score `s_g`)
//!
//! `L(r) = Σ_g s_g ln E_wb + (1 - s_g) ln(1 - E_wb)`,
//!
//! whose stationary point is Ordo's fitting condition: every player's expected points
//! `Σ_g E` equal the points actually scored. `L` is concave; it is maximised by Newton's method
//! with step halving. Only differences are determined: either one player (the anchor, Ordo's
//! `-A name -a value`) is fixed at a given value, or the average of the rated players is set to
//! a given value (Ordo's default, with `-a`).
//!
//! # Perfect scores and disconnected pools
//!
//! A player who won (or lost) every game has no finite maximum-likelihood rating. As Ordo does,
//! such players are removed before the fit (repeatedly, since removing one can make another
//! perfect) and put back afterwards with a one-sided bound: the rating they would have had if
//! one of their wins (losses) had been a draw, with the other ratings fixed, shown as `>` (`<`).
//! The remaining games must connect every remaining player in both directions (every group of
//! players scored at least a draw against the rest, Ford's condition for a finite maximum);
//! otherwise [`fit`] returns an error naming a group, as Ordo does without `-G`.
//!
//! # Error bars
//!
//! All errors are 95% intervals (`±1.96·SE`) of a player's rating *relative to the reference*:
//! the anchor (whose error is 0), or the pool average (errors of `r_i - mean(r)`), as Ordo
//! reports them.
//!
//! - Default: asymptotic standard errors from the observed Fisher information, the negative
//!   Hessian `I` of `L` with the reference fixed: `I_ii = β² Σ_j n_ij E_ij (1 - E_ij)`,
//!   `I_ij = -β² n_ij E_ij (1 - E_ij)`, `Var(r) = I⁻¹`.
//! - [`Bootstrap`] (Ordo's `-s N`): a parametric bootstrap. Each simulation replays every game
//!   between rated players with outcome probabilities from the fitted ratings (win/draw/loss
//!   from Ordo's draw model `D² = (2 D_eq/(1 - D_eq))² · W · L` with `W + D/2 = E`, where the
//!   draw rate between equal players `D_eq` is fitted so the expected number of draws equals
//!   the observed one, Ordo's `-D`), refits, and the error is 1.96 times the standard deviation
//!   of each rating over the simulations. Seeded, hence reproducible. Simulations whose games
//!   do not allow a fit (possible with very few games) are skipped and counted.
//!
//! # Pairwise statistics
//!
//! For two players' direct games ([`pairwise`]): `W`/`D`/`L`, score `s = (W + D/2)/N`, Elo
//! difference `-400 log10(1/s - 1)`, its 95% interval from the trinomial variance per game
//! `σ² = (W(1-s)² + D(1/2-s)² + L s²)/N` mapped through the Elo curve at `s ± 1.96 σ/√N` (half
//! the width, as fastchess and cutechess report it), and the likelihood of superiority
//! `LOS = Φ((W - L)/√(W + L))`, the usual normal approximation that ignores draws.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::pgn::PgnGame;

/// Ordo's default scale: a difference of 202 rating points gives a 76% expected score (Ordo's
/// `-z`). [`FitOptions::default`] rates with it, so that the numbers of the CLI, the tournament
/// table and `trainer run` are Ordo's on the same games; [`FitOptions::elo_curve`] gives the
/// plain Elo curve.
pub const ORDO_Z76: f64 = 202.0;

/// The 97.5% quantile of the standard normal distribution: 95% intervals are `±Z95·SE`.
pub const Z95: f64 = 1.959_963_984_540_054;

/// One game's result between two named players.
#[derive(Clone, Debug, PartialEq)]
pub struct GameResult {
    /// White's name.
    pub white: String,
    /// Black's name.
    pub black: String,
    /// White's score: 1, ½ or 0.
    pub white_score: f64,
}

/// The reference that fixes the ratings' offset.
#[derive(Clone, Debug, PartialEq)]
pub enum Anchor {
    /// The average of the rated players is this value (Ordo's default, `-a value`).
    PoolAverage(f64),
    /// This player is fixed at this rating (Ordo's `-A name -a value`).
    Player {
        /// The anchor's name as in the games.
        name: String,
        /// Its fixed rating.
        rating: f64,
    },
}

/// Settings of a parametric bootstrap (Ordo's `-s`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bootstrap {
    /// Number of simulated tournaments (Ordo suggests at least 100).
    pub simulations: usize,
    /// Seed of the random generator.
    pub seed: u64,
}

/// Options of [`fit`]. The default is Ordo's scale ([`ORDO_Z76`]) with errors from the Hessian.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FitOptions {
    /// Rating difference that gives a 76% expected score (Ordo's `-z`, 202 there); `None`: the
    /// Elo curve, `β = ln(10)/400`.
    pub z76: Option<f64>,
    /// Errors by parametric bootstrap instead of the Hessian.
    pub bootstrap: Option<Bootstrap>,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            z76: Some(ORDO_Z76),
            bootstrap: None,
        }
    }
}

impl FitOptions {
    /// The plain Elo curve, `β = ln(10)/400`, errors from the Hessian.
    pub fn elo_curve() -> Self {
        FitOptions {
            z76: None,
            bootstrap: None,
        }
    }

    /// The slope `β` of the logistic curve, per rating point.
    pub fn beta(&self) -> f64 {
        match self.z76 {
            Some(z) => (0.76f64 / 0.24).ln() / z,
            None => std::f64::consts::LN_10 / 400.0,
        }
    }
}

/// Whether a rating is a maximum-likelihood estimate or a bound for a perfect score. Shown and
/// stored as the sign before the number: nothing, `>` or `<`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum RatingBound {
    /// The maximum-likelihood estimate.
    #[default]
    #[serde(rename = "")]
    Exact,
    /// A floor: the player won every game against the rated players (shown `>`).
    #[serde(rename = ">")]
    AtLeast,
    /// A ceiling: the player lost every game against the rated players (shown `<`).
    #[serde(rename = "<")]
    AtMost,
}

impl RatingBound {
    /// Whether the rating is the estimate itself.
    pub fn is_exact(self) -> bool {
        self == RatingBound::Exact
    }
}

/// The sign written before a rating: nothing, `>` or `<`.
impl std::fmt::Display for RatingBound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RatingBound::Exact => "",
            RatingBound::AtLeast => ">",
            RatingBound::AtMost => "<",
        })
    }
}

/// One player's line of the rating list.
#[derive(Clone, Debug, PartialEq)]
pub struct PlayerRating {
    /// Name as in the games.
    pub name: String,
    /// Rating; `None` when it cannot be bounded (a perfect score against unrated players only).
    pub rating: Option<f64>,
    /// Whether `rating` is an estimate or a bound.
    pub bound: RatingBound,
    /// 95% error (`±`) against the reference from the Hessian; 0 for the anchor.
    pub error_hessian: Option<f64>,
    /// 95% error (`±`) against the reference from the bootstrap, when one was run.
    pub error_bootstrap: Option<f64>,
    /// Games played.
    pub games: u32,
    /// Wins.
    pub wins: u32,
    /// Draws.
    pub draws: u32,
    /// Losses.
    pub losses: u32,
}

impl PlayerRating {
    /// Points scored (wins + draws / 2).
    pub fn points(&self) -> f64 {
        self.wins as f64 + 0.5 * self.draws as f64
    }

    /// Score in percent of the games played.
    pub fn score_percent(&self) -> f64 {
        if self.games == 0 {
            0.0
        } else {
            100.0 * self.points() / self.games as f64
        }
    }

    /// The reported 95% error: the bootstrap's when run, else the Hessian's.
    pub fn error(&self) -> Option<f64> {
        self.error_bootstrap.or(self.error_hessian)
    }
}

/// The result of [`fit`]: players sorted by rating, best first (unrated last).
#[derive(Clone, Debug, PartialEq)]
pub struct Ratings {
    /// The players.
    pub players: Vec<PlayerRating>,
    /// The reference used.
    pub anchor: Anchor,
    /// The options used.
    pub options: FitOptions,
    /// Games used (games with an unknown result are not passed in).
    pub games: usize,
    /// Bootstrap: the fitted draw rate between equal players `D_eq`.
    pub draw_rate_equal: Option<f64>,
    /// Bootstrap: simulations that could not be fitted and were skipped.
    pub failed_simulations: usize,
}

impl Ratings {
    /// A player's line by name.
    pub fn player(&self, name: &str) -> Option<&PlayerRating> {
        self.players.iter().find(|p| p.name == name)
    }

    /// The model's expected score of `a` against `b`, if both are rated.
    pub fn expected(&self, a: &str, b: &str) -> Option<f64> {
        let ra = self.player(a)?.rating?;
        let rb = self.player(b)?.rating?;
        Some(sigmoid(self.options.beta() * (ra - rb)))
    }
}

/// The results of the games with a known result; also the number of games skipped (unknown
/// result, or a missing `White`/`Black` tag).
pub fn results_from_pgn(games: &[PgnGame]) -> (Vec<GameResult>, usize) {
    let mut out = Vec::with_capacity(games.len());
    let mut skipped = 0;
    for game in games {
        let score = game.outcome.and_then(|o| o.white_score());
        match (game.tag("White"), game.tag("Black"), score) {
            (Some(w), Some(b), Some(s)) => out.push(GameResult {
                white: w.to_string(),
                black: b.to_string(),
                white_score: s,
            }),
            _ => skipped += 1,
        }
    }
    (out, skipped)
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// `ln σ(x)`, stable for large `|x|`.
fn ln_sigmoid(x: f64) -> f64 {
    if x > 0.0 {
        -(-x).exp().ln_1p()
    } else {
        x - x.exp().ln_1p()
    }
}

/// Games between two players, aggregated: `n` games, `s` points of `i`.
#[derive(Clone, Copy, Debug)]
struct Pair {
    i: usize,
    j: usize,
    n: f64,
    s: f64,
}

/// What the core fit determines, in natural units (`x = β r`), before the offset is applied.
struct Core {
    /// `x` for every player; `None` for players without a bound.
    x: Vec<Option<f64>>,
    bound: Vec<RatingBound>,
    /// Covariance of the fitted players' `x` relative to the reference (`None` if not wanted).
    var: Option<Vec<f64>>,
    /// Players fitted exactly.
    fitted: Vec<bool>,
}

/// Purges perfect players, fits the rest, bounds the purged ones.
/// `anchor`: index fixed at `x = 0`; `None`: mean of the fitted players is 0.
fn fit_core(
    n_players: usize,
    pairs: &[Pair],
    anchor: Option<usize>,
    names: &[String],
    want_var: bool,
    start: Option<&[f64]>,
) -> Result<Core, String> {
    // Purge players with perfect scores (or no games) against the active ones, repeatedly.
    let mut active = vec![true; n_players];
    let mut purge_order: Vec<(usize, RatingBound)> = Vec::new();
    loop {
        let mut games = vec![0.0; n_players];
        let mut points = vec![0.0; n_players];
        for p in pairs {
            if active[p.i] && active[p.j] {
                games[p.i] += p.n;
                games[p.j] += p.n;
                points[p.i] += p.s;
                points[p.j] += p.n - p.s;
            }
        }
        let mut purged = Vec::new();
        for k in 0..n_players {
            if !active[k] {
                continue;
            }
            if games[k] == 0.0 {
                purged.push((k, RatingBound::Exact));
            } else if points[k] >= games[k] {
                purged.push((k, RatingBound::AtLeast));
            } else if points[k] <= 0.0 {
                purged.push((k, RatingBound::AtMost));
            }
        }
        if purged.is_empty() {
            break;
        }
        for &(k, b) in &purged {
            active[k] = false;
            purge_order.push((k, b));
        }
    }
    if let Some(a) = anchor
        && !active[a]
    {
        return Err(format!(
            "the anchor `{}` {}; ratings relative to it are unbounded",
            names[a],
            match purge_order.iter().find(|(k, _)| *k == a).map(|x| x.1) {
                Some(RatingBound::AtLeast) => "won all its games against the rated players",
                Some(RatingBound::AtMost) => "lost all its games against the rated players",
                _ => "played no games against the rated players",
            }
        ));
    }
    let fitted_idx: Vec<usize> = (0..n_players).filter(|&k| active[k]).collect();
    let mut x = vec![None; n_players];
    let mut bound = vec![RatingBound::Exact; n_players];
    let mut var = None;
    if !fitted_idx.is_empty() {
        check_connected(&fitted_idx, pairs, &active, names)?;
        let fixed = anchor.unwrap_or(fitted_idx[0]);
        let mut xs: Vec<f64> = match start {
            Some(s) => s.to_vec(),
            None => vec![0.0; n_players],
        };
        for (k, v) in xs.iter_mut().enumerate() {
            if !active[k] {
                *v = 0.0;
            }
        }
        let sub: Vec<Pair> = pairs
            .iter()
            .copied()
            .filter(|p| active[p.i] && active[p.j])
            .collect();
        let shift = xs[fixed];
        for v in xs.iter_mut() {
            *v -= shift;
        }
        newton(&fitted_idx, &sub, fixed, &mut xs)?;
        let m = fitted_idx.len();
        let mean = fitted_idx.iter().map(|&k| xs[k]).sum::<f64>() / m as f64;
        if anchor.is_none() {
            for &k in &fitted_idx {
                xs[k] -= mean;
            }
        }
        if want_var {
            var = Some(variances(&fitted_idx, &sub, fixed, &xs, anchor.is_none())?);
        }
        for &k in &fitted_idx {
            x[k] = Some(xs[k]);
        }
    }
    // Bounds for purged players, latest purged first, against players with a value.
    for &(k, b) in purge_order.iter().rev() {
        bound[k] = b;
        if b == RatingBound::Exact {
            continue; // no games against active players: unrated
        }
        let mut opp: Vec<(f64, f64)> = Vec::new();
        for p in pairs {
            let (q, n) = if p.i == k {
                (p.j, p.n)
            } else if p.j == k {
                (p.i, p.n)
            } else {
                continue;
            };
            if let Some(xq) = x[q] {
                opp.push((xq, n));
            }
        }
        let total: f64 = opp.iter().map(|o| o.1).sum();
        if total == 0.0 {
            continue;
        }
        let target = if b == RatingBound::AtLeast {
            total - 0.5
        } else {
            0.5
        };
        let f = |xk: f64| opp.iter().map(|&(xq, n)| n * sigmoid(xk - xq)).sum::<f64>() - target;
        let lo0 = opp.iter().map(|o| o.0).fold(f64::INFINITY, f64::min) - 60.0;
        let hi0 = opp.iter().map(|o| o.0).fold(f64::NEG_INFINITY, f64::max) + 60.0;
        let (mut lo, mut hi) = (lo0, hi0);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if f(mid) < 0.0 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        x[k] = Some(0.5 * (lo + hi));
    }
    Ok(Core {
        x,
        bound,
        var,
        fitted: active,
    })
}

/// Fails unless the fitted players' games let every group score against the rest (the
/// directed graph "i scored against j" is strongly connected).
fn check_connected(
    fitted: &[usize],
    pairs: &[Pair],
    active: &[bool],
    names: &[String],
) -> Result<(), String> {
    let n = active.len();
    let mut fwd = vec![Vec::new(); n];
    let mut back = vec![Vec::new(); n];
    for p in pairs {
        if !(active[p.i] && active[p.j]) {
            continue;
        }
        if p.s > 0.0 {
            fwd[p.i].push(p.j);
            back[p.j].push(p.i);
        }
        if p.s < p.n {
            fwd[p.j].push(p.i);
            back[p.i].push(p.j);
        }
    }
    let reach = |adj: &Vec<Vec<usize>>| {
        let mut seen = vec![false; n];
        let mut stack = vec![fitted[0]];
        seen[fitted[0]] = true;
        while let Some(u) = stack.pop() {
            for &v in &adj[u] {
                if !seen[v] {
                    seen[v] = true;
                    stack.push(v);
                }
            }
        }
        seen
    };
    let name_list = |set: Vec<usize>| {
        let mut v: Vec<&str> = set.iter().map(|&k| names[k].as_str()).collect();
        v.sort();
        if v.len() > 6 {
            let more = v.len() - 6;
            v.truncate(6);
            format!("{} and {more} more", v.join(", "))
        } else {
            v.join(", ")
        }
    };
    // Edge u -> v: u scored against v. Everyone must be reachable both ways from fitted[0].
    let f = reach(&fwd);
    let missing: Vec<usize> = fitted.iter().copied().filter(|&k| !f[k]).collect();
    if !missing.is_empty() {
        let group: Vec<usize> = fitted.iter().copied().filter(|&k| f[k]).collect();
        return Err(format!(
            "ratings are not determined: {} scored nothing against {} (connect the pools with \
             more games)",
            name_list(group),
            name_list(missing)
        ));
    }
    let b = reach(&back);
    let missing: Vec<usize> = fitted.iter().copied().filter(|&k| !b[k]).collect();
    if !missing.is_empty() {
        let group: Vec<usize> = fitted.iter().copied().filter(|&k| b[k]).collect();
        return Err(format!(
            "ratings are not determined: {} scored nothing against {} (connect the pools with \
             more games)",
            name_list(missing),
            name_list(group)
        ));
    }
    Ok(())
}

fn log_likelihood(pairs: &[Pair], x: &[f64]) -> f64 {
    pairs
        .iter()
        .map(|p| {
            let d = x[p.i] - x[p.j];
            p.s * ln_sigmoid(d) + (p.n - p.s) * ln_sigmoid(-d)
        })
        .sum()
}

/// The observed information `-∇²L` over the players in `vars` (index map `pos`), in natural
/// units; and the gradient.
fn info_and_gradient(
    m: usize,
    pos: &[Option<usize>],
    pairs: &[Pair],
    x: &[f64],
) -> (Vec<f64>, Vec<f64>) {
    let mut info = vec![0.0; m * m];
    let mut grad = vec![0.0; m];
    for p in pairs {
        let e = sigmoid(x[p.i] - x[p.j]);
        let g = p.s - p.n * e;
        let w = p.n * e * (1.0 - e);
        if let Some(a) = pos[p.i] {
            grad[a] += g;
            info[a * m + a] += w;
        }
        if let Some(b) = pos[p.j] {
            grad[b] -= g;
            info[b * m + b] += w;
        }
        if let (Some(a), Some(b)) = (pos[p.i], pos[p.j]) {
            info[a * m + b] -= w;
            info[b * m + a] -= w;
        }
    }
    (info, grad)
}

/// Cholesky factor (lower) of a symmetric positive definite `m×m` matrix.
fn cholesky(a: &[f64], m: usize) -> Option<Vec<f64>> {
    let mut l = vec![0.0; m * m];
    for i in 0..m {
        for j in 0..=i {
            let mut sum = a[i * m + j];
            for k in 0..j {
                sum -= l[i * m + k] * l[j * m + k];
            }
            if i == j {
                if sum <= 0.0 || !sum.is_finite() {
                    return None;
                }
                l[i * m + i] = sum.sqrt();
            } else {
                l[i * m + j] = sum / l[j * m + j];
            }
        }
    }
    Some(l)
}

fn cholesky_solve(l: &[f64], m: usize, b: &[f64]) -> Vec<f64> {
    let mut y = b.to_vec();
    for i in 0..m {
        for k in 0..i {
            y[i] -= l[i * m + k] * y[k];
        }
        y[i] /= l[i * m + i];
    }
    for i in (0..m).rev() {
        for k in i + 1..m {
            y[i] -= l[k * m + i] * y[k];
        }
        y[i] /= l[i * m + i];
    }
    y
}

fn positions(fitted: &[usize], fixed: usize, n: usize) -> (usize, Vec<Option<usize>>) {
    let mut pos = vec![None; n];
    let mut m = 0;
    for &k in fitted {
        if k != fixed {
            pos[k] = Some(m);
            m += 1;
        }
    }
    (m, pos)
}

/// Newton's method with step halving on the concave log-likelihood, `x[fixed]` held.
fn newton(fitted: &[usize], pairs: &[Pair], fixed: usize, x: &mut [f64]) -> Result<(), String> {
    let (m, pos) = positions(fitted, fixed, x.len());
    if m == 0 {
        return Ok(());
    }
    let mut ll = log_likelihood(pairs, x);
    for _ in 0..500 {
        let (info, grad) = info_and_gradient(m, &pos, pairs, x);
        let l = cholesky(&info, m)
            .ok_or_else(|| "rating fit failed: singular information matrix".to_string())?;
        let step = cholesky_solve(&l, m, &grad);
        let max_step = step.iter().fold(0.0f64, |a, s| a.max(s.abs()));
        let mut t = 1.0;
        // Keep steps moderate (at most ~3 natural units ≈ 520 Elo per iteration).
        if max_step > 3.0 {
            t = 3.0 / max_step;
        }
        let old: Vec<f64> = x.to_vec();
        loop {
            for &k in fitted {
                if let Some(a) = pos[k] {
                    x[k] = old[k] + t * step[a];
                }
            }
            let new_ll = log_likelihood(pairs, x);
            if new_ll >= ll - 1e-12 * ll.abs().max(1.0) || t < 1e-10 {
                ll = new_ll;
                break;
            }
            t *= 0.5;
        }
        if max_step * t < 1e-11 {
            return Ok(());
        }
    }
    Ok(())
}

/// Variances of the fitted players' `x` relative to the reference: `x_fixed` (anchor), or the
/// mean of the fitted players when `pool` is set.
fn variances(
    fitted: &[usize],
    pairs: &[Pair],
    fixed: usize,
    x: &[f64],
    pool: bool,
) -> Result<Vec<f64>, String> {
    let n = x.len();
    let (m, pos) = positions(fitted, fixed, n);
    let mut out = vec![0.0; n];
    if m == 0 {
        return Ok(out);
    }
    let (info, _) = info_and_gradient(m, &pos, pairs, x);
    let l = cholesky(&info, m).ok_or("rating errors: singular information matrix")?;
    // Covariance C = I^-1 (reduced), column by column.
    let mut cov = vec![0.0; m * m];
    for c in 0..m {
        let mut e = vec![0.0; m];
        e[c] = 1.0;
        let col = cholesky_solve(&l, m, &e);
        for r in 0..m {
            cov[r * m + c] = col[r];
        }
    }
    let c = |a: Option<usize>, b: Option<usize>| match (a, b) {
        (Some(a), Some(b)) => cov[a * m + b],
        _ => 0.0,
    };
    if !pool {
        for &k in fitted {
            out[k] = c(pos[k], pos[k]);
        }
        return Ok(out);
    }
    // Var(x_k - mean) = C_kk - 2/N Σ_j C_kj + 1/N² Σ_ij C_ij.
    let nf = fitted.len() as f64;
    let row_sums: Vec<f64> = fitted
        .iter()
        .map(|&k| fitted.iter().map(|&j| c(pos[k], pos[j])).sum())
        .collect();
    let total: f64 = row_sums.iter().sum();
    for (idx, &k) in fitted.iter().enumerate() {
        out[k] = c(pos[k], pos[k]) - 2.0 * row_sums[idx] / nf + total / (nf * nf);
    }
    Ok(out)
}

/// Ordo's draw probability for a game with expected score `p` and draw rate `deq` between
/// equal players: the root of `(4φ² - 1) D² + 2 D + 4 (p² - p) = 0`, `φ = (1 - deq)/(2 deq)`.
pub fn draw_probability(p: f64, deq: f64) -> f64 {
    let phi = (1.0 - deq) / (2.0 * deq);
    let a = 4.0 * phi * phi - 1.0;
    let pq = p * (1.0 - p);
    let d = if a.abs() < 1e-9 {
        2.0 * pq
    } else {
        (-1.0 + (1.0 + 4.0 * a * pq).max(0.0).sqrt()) / a
    };
    d.clamp(0.0, 2.0 * p.min(1.0 - p))
}

/// Fits the ratings of all players of `games`; see the module docs.
///
/// Errors: no games, an unknown anchor, an anchor with a perfect score, a pool whose games do
/// not determine the ratings, a score other than 0, ½ or 1.
pub fn fit(games: &[GameResult], anchor: Anchor, options: FitOptions) -> Result<Ratings, FitError> {
    fit_games(games, anchor, options).map_err(|reason| match games.is_empty() {
        true => FitError::NoGames,
        false => FitError::Ratings(reason),
    })
}

/// Why ratings cannot be fitted. `Display`: one line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FitError {
    /// No game with a result.
    #[error("no games with a result")]
    NoGames,
    /// The games do not make ratings: a bad score, a game against itself, an unknown or
    /// unbounded anchor, pools the games do not connect.
    #[error("{0}")]
    Ratings(String),
}

/// The bootstrap's 95% errors of the fitted players (see the module docs), the draw rate of
/// equal players it simulates with, and how many of its simulations failed to fit.
fn bootstrap(
    core: &Core,
    agg: &BTreeMap<(usize, usize), (f64, f64, f64)>,
    (anchor_idx, names): (Option<usize>, &[String]),
    beta: f64,
    boot: Bootstrap,
) -> (Vec<Option<f64>>, f64, usize) {
    let n = names.len();
    let mut error_boot: Vec<Option<f64>> = vec![None; n];
    let mut failed = 0;
    let xs: Vec<f64> = core.x.iter().map(|v| v.unwrap_or(0.0)).collect();
    let sim_pairs: Vec<(Pair, f64)> = agg
        .iter()
        .filter(|((i, j), _)| core.fitted[*i] && core.fitted[*j])
        .map(|(&(i, j), &(n, s, d))| (Pair { i, j, n, s }, d))
        .collect();
    let observed_draws: f64 = sim_pairs.iter().map(|p| p.1).sum();
    let total_games: f64 = sim_pairs.iter().map(|p| p.0.n).sum();
    let expected_draws = |deq: f64| -> f64 {
        sim_pairs
            .iter()
            .map(|(p, _)| p.n * draw_probability(sigmoid(xs[p.i] - xs[p.j]), deq))
            .sum()
    };
    let deq = if observed_draws <= 0.0 {
        1e-6
    } else if observed_draws >= total_games {
        1.0 - 1e-6
    } else {
        let (mut lo, mut hi) = (1e-6, 1.0 - 1e-6);
        for _ in 0..100 {
            let mid = 0.5 * (lo + hi);
            if expected_draws(mid) < observed_draws {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    };
    let probs: Vec<(f64, f64)> = sim_pairs
        .iter()
        .map(|(p, _)| {
            let e = sigmoid(xs[p.i] - xs[p.j]);
            let d = draw_probability(e, deq);
            (e - d / 2.0, d)
        })
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(boot.seed);
    let mut sum = vec![0.0; n];
    let mut sum2 = vec![0.0; n];
    let mut count = 0usize;
    for _ in 0..boot.simulations {
        let sim: Vec<Pair> = sim_pairs
            .iter()
            .zip(&probs)
            .map(|((p, _), &(w, d))| {
                let mut s = 0.0;
                for _ in 0..p.n as u64 {
                    let u: f64 = rng.random();
                    if u < w {
                        s += 1.0;
                    } else if u < w + d {
                        s += 0.5;
                    }
                }
                Pair { s, ..*p }
            })
            .collect();
        match fit_core(n, &sim, anchor_idx, names, false, Some(&xs)) {
            Ok(c) if (0..n).all(|k| !core.fitted[k] || c.x[k].is_some()) => {
                count += 1;
                for k in 0..n {
                    if core.fitted[k] {
                        let v = c.x[k].unwrap_or(0.0) / beta;
                        sum[k] += v;
                        sum2[k] += v * v;
                    }
                }
            }
            _ => failed += 1,
        }
    }
    if count >= 2 {
        for k in 0..n {
            if core.fitted[k] {
                let mean = sum[k] / count as f64;
                let var = ((sum2[k] - count as f64 * mean * mean) / (count as f64 - 1.0)).max(0.0);
                error_boot[k] = Some(Z95 * var.sqrt());
            }
        }
    }
    (error_boot, deq, failed)
}

/// [`fit`], its reason as a clause.
fn fit_games(games: &[GameResult], anchor: Anchor, options: FitOptions) -> Result<Ratings, String> {
    if games.is_empty() {
        return Err("no games with a result".to_string());
    }
    let beta = options.beta();
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut names: Vec<String> = Vec::new();
    let mut wdl: Vec<[u32; 3]> = Vec::new();
    let mut agg: BTreeMap<(usize, usize), (f64, f64, f64)> = BTreeMap::new(); // n, s_i, draws
    for g in games {
        if ![0.0, 0.5, 1.0].contains(&g.white_score) {
            return Err(format!(
                "game {} - {}: score {} is not 0, 1/2 or 1",
                g.white, g.black, g.white_score
            ));
        }
        if g.white == g.black {
            return Err(format!("game of `{}` against itself", g.white));
        }
        let w = match index.get(g.white.as_str()) {
            Some(&i) => i,
            None => {
                names.push(g.white.clone());
                wdl.push([0; 3]);
                index.insert(g.white.as_str(), names.len() - 1);
                names.len() - 1
            }
        };
        let b = match index.get(g.black.as_str()) {
            Some(&i) => i,
            None => {
                names.push(g.black.clone());
                wdl.push([0; 3]);
                index.insert(g.black.as_str(), names.len() - 1);
                names.len() - 1
            }
        };
        let outcome = if g.white_score == 1.0 {
            0
        } else if g.white_score == 0.5 {
            1
        } else {
            2
        };
        wdl[w][outcome] += 1;
        wdl[b][2 - outcome] += 1;
        let (i, j, s) = if w < b {
            (w, b, g.white_score)
        } else {
            (b, w, 1.0 - g.white_score)
        };
        let e = agg.entry((i, j)).or_insert((0.0, 0.0, 0.0));
        e.0 += 1.0;
        e.1 += s;
        if g.white_score == 0.5 {
            e.2 += 1.0;
        }
    }
    let n = names.len();
    let pairs: Vec<Pair> = agg
        .iter()
        .map(|(&(i, j), &(n, s, _))| Pair { i, j, n, s })
        .collect();
    let (anchor_idx, offset) = match &anchor {
        Anchor::PoolAverage(avg) => (None, *avg),
        Anchor::Player { name, rating } => {
            let idx = names
                .iter()
                .position(|p| p == name)
                .ok_or_else(|| format!("anchor `{name}` plays in none of the games"))?;
            (Some(idx), *rating)
        }
    };
    let core = fit_core(n, &pairs, anchor_idx, &names, true, None)?;
    let var = core.var.clone().unwrap_or_default();

    let (error_boot, draw_rate_equal, failed) = match options.bootstrap {
        Some(boot) => {
            let (errors, deq, failed) = bootstrap(&core, &agg, (anchor_idx, &names), beta, boot);
            (errors, Some(deq), failed)
        }
        None => (vec![None; n], None, 0),
    };

    let mut players: Vec<PlayerRating> = (0..n)
        .map(|k| PlayerRating {
            name: names[k].clone(),
            rating: core.x[k].map(|x| x / beta + offset),
            bound: core.bound[k],
            error_hessian: core
                .fitted
                .get(k)
                .copied()
                .unwrap_or(false)
                .then(|| Z95 * var.get(k).copied().unwrap_or(0.0).max(0.0).sqrt() / beta),
            error_bootstrap: error_boot[k],
            games: wdl[k].iter().sum(),
            wins: wdl[k][0],
            draws: wdl[k][1],
            losses: wdl[k][2],
        })
        .collect();
    players.sort_by(|a, b| {
        let ka = a.rating.unwrap_or(f64::NEG_INFINITY);
        let kb = b.rating.unwrap_or(f64::NEG_INFINITY);
        kb.total_cmp(&ka).then_with(|| a.name.cmp(&b.name))
    });
    Ok(Ratings {
        players,
        anchor,
        options,
        games: games.len(),
        draw_rate_equal,
        failed_simulations: failed,
    })
}

/// Statistics of two players' direct games, from `a`'s side; see the module docs.
#[derive(Clone, Debug, PartialEq)]
pub struct Pairwise {
    /// First player.
    pub a: String,
    /// Second player.
    pub b: String,
    /// `a`'s wins.
    pub wins: u32,
    /// Draws.
    pub draws: u32,
    /// `a`'s losses.
    pub losses: u32,
    /// `a`'s score, 0..1.
    pub score: f64,
    /// Elo difference `a - b`, `-400 log10(1/s - 1)`; infinite for a perfect score.
    pub elo: f64,
    /// 95% error (`±`) of `elo` from the trinomial variance; NaN when undefined.
    pub error: f64,
    /// Likelihood of superiority of `a`, `Φ((W - L)/√(W + L))`; 0.5 without decisive games.
    pub los: f64,
}

/// Elo difference of a score `s` (0..1): `-400 log10(1/s - 1)`.
pub fn elo_from_score(s: f64) -> f64 {
    -400.0 * (1.0 / s - 1.0).log10() + 0.0 // + 0.0: no "-0.0"
}

/// The standard normal distribution function `Φ(x)`.
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * (1.0 + erf(x / std::f64::consts::SQRT_2))
}

/// The error function, to about 1e-14: its Maclaurin series below 2.5, the continued fraction
/// of `erfc` above.
pub fn erf(x: f64) -> f64 {
    if x < 0.0 {
        return -erf(-x);
    }
    if x < 2.5 {
        // Maclaurin series: erf x = 2/√π Σ (-1)^n x^(2n+1) / (n! (2n+1)).
        let mut term = x;
        let mut sum = x;
        let x2 = x * x;
        for n in 1..200 {
            let n = n as f64;
            term *= -x2 / n;
            let add = term / (2.0 * n + 1.0);
            sum += add;
            if add.abs() <= 1e-17 * sum.abs() {
                break;
            }
        }
        sum * 2.0 / std::f64::consts::PI.sqrt()
    } else {
        // Continued fraction for erfc: erfc x = e^{-x²}/√π · 1/(x + 1/2/(x + 1/(x + 3/2/(x + ...)))).
        let mut f = 0.0;
        for k in (1..60).rev() {
            f = (k as f64 / 2.0) / (x + f);
        }
        1.0 - (-x * x).exp() / std::f64::consts::PI.sqrt() / (x + f)
    }
}

/// Statistics of the direct games between `a` and `b` (either colour), from `a`'s side;
/// `None` when they did not meet.
pub fn pairwise(games: &[GameResult], a: &str, b: &str) -> Option<Pairwise> {
    let (mut w, mut d, mut l) = (0u32, 0u32, 0u32);
    for g in games {
        let s = if g.white == a && g.black == b {
            g.white_score
        } else if g.white == b && g.black == a {
            1.0 - g.white_score
        } else {
            continue;
        };
        if s == 1.0 {
            w += 1;
        } else if s == 0.5 {
            d += 1;
        } else {
            l += 1;
        }
    }
    let n = (w + d + l) as f64;
    if n == 0.0 {
        return None;
    }
    let (wf, df, lf) = (w as f64 / n, d as f64 / n, l as f64 / n);
    let score = wf + 0.5 * df;
    let var = wf * (1.0 - score).powi(2) + df * (0.5 - score).powi(2) + lf * score.powi(2);
    let se = (var / n).sqrt();
    let error = if score <= 0.0 || score >= 1.0 {
        f64::NAN
    } else {
        let hi = (score + Z95 * se).min(1.0);
        let lo = (score - Z95 * se).max(0.0);
        (elo_from_score(hi) - elo_from_score(lo)) / 2.0
    };
    let los = if w + l == 0 {
        0.5
    } else {
        normal_cdf((w as f64 - l as f64) / ((w + l) as f64).sqrt())
    };
    Some(Pairwise {
        a: a.to_string(),
        b: b.to_string(),
        wins: w,
        draws: d,
        losses: l,
        score,
        elo: elo_from_score(score),
        error,
        los,
    })
}

fn rating_cell(p: &PlayerRating) -> String {
    match (p.rating, p.bound) {
        (None, _) => "?".to_string(),
        (Some(r), bound) => format!("{bound}{r:.1}"),
    }
}

fn error_cell(p: &PlayerRating) -> String {
    match p.error() {
        Some(e) if p.bound == RatingBound::Exact => format!("{e:.1}"),
        _ => "----".to_string(),
    }
}

fn describe(r: &Ratings) -> String {
    let reference = match &r.anchor {
        Anchor::PoolAverage(v) => format!("pool average = {v}"),
        Anchor::Player { name, rating } => format!("{name} = {rating}"),
    };
    let scale = match r.options.z76 {
        Some(z) => format!("76% at {z} points"),
        None => "Elo (400·log10)".to_string(),
    };
    let errors = match r.options.bootstrap {
        Some(b) => format!(
            "bootstrap, {} simulations (seed {}){}",
            b.simulations,
            b.seed,
            if r.failed_simulations > 0 {
                format!(", {} skipped", r.failed_simulations)
            } else {
                String::new()
            }
        ),
        None => "Hessian".to_string(),
    };
    format!(
        "{} games; reference {reference}; scale {scale}; errors 95%, {errors}",
        r.games
    )
}

/// Renders the rating list as plain text, like Ordo's (`>`/`<`: bounds for perfect scores).
pub fn render_text(r: &Ratings) -> String {
    let width = r
        .players
        .iter()
        .map(|p| p.name.chars().count())
        .max()
        .unwrap_or(6)
        .max(6);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:>4} {:<width$} : {:>9} {:>7} {:>8} {:>7} {:>6}",
        "#", "PLAYER", "RATING", "ERROR", "POINTS", "PLAYED", "(%)"
    );
    for (k, p) in r.players.iter().enumerate() {
        let _ = writeln!(
            s,
            "{:>4} {:<width$} : {:>9} {:>7} {:>8.1} {:>7} {:>6.1}",
            k + 1,
            p.name,
            rating_cell(p),
            error_cell(p),
            p.points(),
            p.games,
            p.score_percent()
        );
    }
    let _ = writeln!(s, "\n{}", describe(r));
    s
}

/// Renders the rating list as a Markdown table.
pub fn render_markdown(r: &Ratings) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| # | Player | Rating | ±95% | Points | Games | Score % | W | D | L |"
    );
    let _ = writeln!(s, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (k, p) in r.players.iter().enumerate() {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {:.1} | {} | {:.1} | {} | {} | {} |",
            k + 1,
            p.name.replace('|', "\\|"),
            rating_cell(p),
            error_cell(p),
            p.points(),
            p.games,
            p.score_percent(),
            p.wins,
            p.draws,
            p.losses
        );
    }
    let _ = writeln!(s, "\n{}", describe(r));
    s
}

/// Renders pairwise statistics as one line of text.
pub fn render_pairwise(p: &Pairwise) -> String {
    format!(
        "{} vs {}: +{} ={} -{} ({} games), score {:.1}%, Elo {:+.1} ± {:.1}, LOS {:.1}%",
        p.a,
        p.b,
        p.wins,
        p.draws,
        p.losses,
        p.wins + p.draws + p.losses,
        100.0 * p.score,
        p.elo,
        p.error,
        100.0 * p.los
    )
}
