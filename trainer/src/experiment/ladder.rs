//! The report of a data ladder: the cells of a `sweep = { train_positions = [...] }`, each a
//! rung trained on the first N positions of one dataset, drawn as curves against N on a
//! logarithmic axis, one per feature set — the validation loss (mean ± one standard deviation
//! over the runs) and the Elo of each rung's best network against the evaluation's reference
//! (± its 95% interval) — with each curve's gain per doubling of the data, the fitted line's
//! value at ten times the largest rung (an extrapolation, and labelled so), and every crossover
//! of two curves between two rungs.

use anyhow::Result;
use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use arena::rating::RatingBound;

use super::report::ExperimentReport;
use crate::analysis::plot::{self, Curve};
use crate::analysis::spread::{self, mean_sd};
use crate::atomic_file::write_atomic;

/// One feature set at one rung.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Point {
    /// Training positions.
    pub positions: u64,
    /// Mean over the runs of each run's test loss (the ladder's [`Ladder::tested`]), else of
    /// its lowest validation loss.
    pub loss: f64,
    /// Their standard deviation (NaN with one run).
    pub loss_sd: f64,
    /// The runs.
    pub runs: usize,
    /// The best run's Elo against the reference (NaN if unrated; a bound when `bound` is set).
    pub elo: f64,
    /// Its 95% error (NaN if unknown).
    pub elo_error95: f64,
    /// Whether its Elo is a bound (a perfect or zero score).
    pub bound: RatingBound,
}

/// One feature set's curve with its fitted slopes.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Line {
    /// The feature set (its name in the cells).
    pub name: String,
    /// One point per rung, smallest first.
    pub points: Vec<Point>,
    /// Change of the validation loss per doubling of the data (least squares on log2 N).
    pub loss_per_doubling: f64,
    /// Elo gained per doubling of the data (least squares on log2 N over the rated rungs).
    pub elo_per_doubling: f64,
    /// The Elo line's value at ten times the largest rung: an extrapolation.
    pub elo_at_10x: f64,
}

/// What two curves are compared by (written `loss` or `Elo`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Measure {
    /// The validation loss: lower is ahead.
    #[serde(rename = "loss")]
    Loss,
    /// The Elo against the reference: higher is ahead.
    Elo,
}

impl std::fmt::Display for Measure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Measure::Loss => "loss",
            Measure::Elo => "Elo",
        })
    }
}

/// Two curves crossing between two rungs.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Crossover {
    /// What they are compared by.
    pub measure: Measure,
    /// The one behind at the smaller rung and ahead at the larger.
    pub rising: String,
    /// The other.
    pub falling: String,
    /// The rungs it lies between.
    pub between: (u64, u64),
    /// Where the straight lines between the two rungs cross, on the log axis.
    pub at: f64,
    /// Whether the difference at both rungs exceeds its error (loss: both sets' standard
    /// deviations; Elo: both 95% errors, combined as independent).
    pub beyond_noise: bool,
}

/// A whole ladder.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Ladder {
    /// The sweep's name.
    pub group: String,
    /// The datasets the rungs are cut from.
    pub data: String,
    /// The rated evaluation and its reference, if any.
    pub evaluation: Option<(String, String)>,
    /// Whether the losses are test losses (every run's network scored on the experiment's
    /// `test_data`, on which no epoch was chosen) rather than the lowest validation losses.
    pub tested: bool,
    /// One line per feature set.
    pub lines: Vec<Line>,
    /// The crossovers found.
    pub crossovers: Vec<Crossover>,
}

/// The ladder of `group` cut from the datasets `data` (their names), from its rungs' reports,
/// each with its training positions, smallest first.
pub fn ladder(group: &str, data: &str, rungs: &[(u64, &ExperimentReport)]) -> Ladder {
    let first = rungs.first().map(|r| r.1);
    // The first evaluation that rated players, as every cell has the same evaluations.
    let rated = first.and_then(|r| r.evaluations.iter().position(|e| e.ratings.is_some()));
    let evaluation = rated.and_then(|k| {
        let ev = &first?.evaluations[k];
        Some((ev.name.clone(), ev.reference.clone().unwrap_or_default()))
    });
    let names: Vec<String> = first
        .map(|r| r.rows.iter().map(|row| row.feature_set.clone()).collect())
        .unwrap_or_default();
    let tested = !rungs.is_empty()
        && rungs
            .iter()
            .flat_map(|(_, r)| &r.rows)
            .flat_map(|row| &row.runs)
            .all(|run| run.test_loss.is_some());
    let mut lines = Vec::new();
    for name in &names {
        let mut points = Vec::new();
        for &(positions, report) in rungs {
            let Some(row) = report.rows.iter().find(|r| &r.feature_set == name) else {
                continue;
            };
            let losses: Vec<f64> = row
                .runs
                .iter()
                .map(|r| match tested {
                    true => r.test_loss.unwrap_or(f64::NAN),
                    false => r.min_val_loss,
                })
                .collect();
            let (loss, loss_sd) = mean_sd(&losses);
            let loss_sd = loss_sd.unwrap_or(f64::NAN);
            let rating = rated.and_then(|k| row.elo.get(k)?.clone());
            points.push(Point {
                positions,
                loss,
                loss_sd,
                runs: losses.len(),
                elo: rating.as_ref().map_or(f64::NAN, |p| p.elo),
                elo_error95: rating.as_ref().map_or(f64::NAN, |p| p.error95),
                bound: rating.map(|p| p.bound).unwrap_or_default(),
            });
        }
        let fit = |y: &dyn Fn(&Point) -> f64| {
            let xy: Vec<(f64, f64)> = points
                .iter()
                .filter(|p| p.bound.is_exact() && y(p).is_finite())
                .map(|p| ((p.positions as f64).log2(), y(p)))
                .collect();
            least_squares(&xy)
        };
        let (loss_per_doubling, _) = fit(&|p| p.loss);
        let (elo_per_doubling, elo_intercept) = fit(&|p| p.elo);
        let largest = points.last().map_or(f64::NAN, |p| p.positions as f64);
        lines.push(Line {
            name: name.clone(),
            loss_per_doubling,
            elo_per_doubling,
            elo_at_10x: elo_intercept + elo_per_doubling * (10.0 * largest).log2(),
            points,
        });
    }
    let mut crossovers = Vec::new();
    for (i, a) in lines.iter().enumerate() {
        for b in &lines[i + 1..] {
            // Loss: lower is ahead; Elo: higher is ahead.
            let loss = |p: &Point| (-p.loss, p.loss_sd);
            let elo = |p: &Point| (p.elo, p.elo_error95);
            crossovers.extend(crossings(Measure::Loss, a, b, &loss));
            crossovers.extend(crossings(Measure::Elo, a, b, &elo));
        }
    }
    Ladder {
        group: group.to_string(),
        data: data.to_string(),
        evaluation,
        tested,
        lines,
        crossovers,
    }
}

/// Where `a` and `b` change places by `measure` (`value` of a point: how far ahead, and its
/// error), between consecutive rungs both have.
fn crossings(
    measure: Measure,
    a: &Line,
    b: &Line,
    value: &dyn Fn(&Point) -> (f64, f64),
) -> Vec<Crossover> {
    let pairs: Vec<(u64, f64, f64)> = a
        .points
        .iter()
        .zip(&b.points)
        .filter(|(p, q)| p.positions == q.positions && p.bound.is_exact() && q.bound.is_exact())
        .map(|(p, q)| {
            let ((va, ea), (vb, eb)) = (value(p), value(q));
            let error = (ea.powi(2) + eb.powi(2)).sqrt();
            (p.positions, va - vb, error)
        })
        .filter(|(_, d, _)| d.is_finite())
        .collect();
    let mut out = Vec::new();
    for w in pairs.windows(2) {
        let ((n0, d0, e0), (n1, d1, e1)) = (w[0], w[1]);
        if d0 == 0.0 || d0.signum() == d1.signum() {
            continue;
        }
        let (x0, x1) = ((n0 as f64).ln(), (n1 as f64).ln());
        let at = (x0 + (x1 - x0) * d0 / (d0 - d1)).exp();
        let (rising, falling) = match d1 > 0.0 {
            true => (&a.name, &b.name),
            false => (&b.name, &a.name),
        };
        out.push(Crossover {
            measure,
            rising: rising.clone(),
            falling: falling.clone(),
            between: (n0, n1),
            at,
            beyond_noise: d0.abs() > e0 && d1.abs() > e1,
        });
    }
    out
}

/// The least-squares line y = slope·x + intercept through `xy`: (slope, intercept); NaN for
/// fewer than two distinct x.
fn least_squares(xy: &[(f64, f64)]) -> (f64, f64) {
    let n = xy.len() as f64;
    let (sx, sy) = xy.iter().fold((0.0, 0.0), |(a, b), &(x, y)| (a + x, b + y));
    let (mx, my) = (sx / n, sy / n);
    let sxx: f64 = xy.iter().map(|&(x, _)| (x - mx).powi(2)).sum();
    let sxy: f64 = xy.iter().map(|&(x, y)| (x - mx) * (y - my)).sum();
    if xy.len() < 2 || sxx == 0.0 {
        return (f64::NAN, f64::NAN);
    }
    let slope = sxy / sxx;
    (slope, my - slope * mx)
}

/// The ladder as Markdown.
pub fn markdown(l: &Ladder) -> String {
    let mut md = String::new();
    let Some(first) = l.lines.first() else {
        return format!("# Data ladder `{}`\n\nNo rung has a network.\n", l.group);
    };
    let rungs: Vec<u64> = first.points.iter().map(|p| p.positions).collect();
    let runs = first.points.first().map_or(0, |p| p.runs);
    let _ = writeln!(md, "# Data ladder `{}`\n", l.group);
    let _ = writeln!(
        md,
        "Each rung trains every feature set on the first N positions of {} (N = {}), {runs} run(s) each with different seeds.\n",
        l.data,
        rungs
            .iter()
            .map(|&n| plot::count_label(n as f64))
            .collect::<Vec<_>>()
            .join(", ")
    );
    // A table with a column per rung and a row per feature set, `cell` writing one point.
    let table = |md: &mut String, cell: &dyn Fn(&Point) -> String| {
        md.push_str("| feature set |");
        for &n in &rungs {
            let _ = write!(md, " {} |", plot::count_label(n as f64));
        }
        md.push_str("\n| --- |");
        md.push_str(&" ---: |".repeat(rungs.len()));
        md.push('\n');
        for line in &l.lines {
            let _ = write!(md, "| {} |", line.name);
            for p in &line.points {
                let _ = write!(md, " {} |", cell(p));
            }
            md.push('\n');
        }
    };
    let _ = match l.tested {
        true => writeln!(
            md,
            "## Test loss\n\nEach run's network (its best epoch by the validation loss) scored on the test set, on which no epoch was chosen, mean ± one standard deviation over the runs.\n"
        ),
        false => writeln!(
            md,
            "## Validation loss\n\nEach run's lowest validation loss over its epochs, mean ± one standard deviation over the runs.\n"
        ),
    };
    table(&mut md, &|p| {
        spread::label(p.loss, p.loss_sd.is_finite().then_some(p.loss_sd))
    });
    if let Some((ev, reference)) = &l.evaluation {
        let _ = writeln!(
            md,
            "\n## Elo against {reference}\n\nEach rung's best network (lowest validation loss) in evaluation `{ev}`, with its 95% interval.\n"
        );
        table(
            &mut md,
            &|p| match (p.bound.is_exact(), p.elo.is_finite()) {
                (false, _) => format!("{}{:+.0}", p.bound, p.elo),
                (true, true) => format!("{:+.1} ± {:.1}", p.elo, p.elo_error95),
                (true, false) => "—".to_string(),
            },
        );
    }
    let largest = *rungs.last().expect("a line has points");
    match l.evaluation {
        Some(_) => {
            let _ = writeln!(
                md,
                "\n## Per doubling of the data\n\nLeast-squares lines on log2 N through every rung. The last column is that line's value at {} positions, ten times the largest rung: **an extrapolation**, which assumes the gain per doubling stays what it was on this ladder.\n",
                plot::count_label(10.0 * largest as f64)
            );
            md.push_str("| feature set | loss per doubling | Elo per doubling | Elo at 10× (extrapolated) |\n| --- | ---: | ---: | ---: |\n");
            for line in &l.lines {
                let _ = writeln!(
                    md,
                    "| {} | {:+.6} | {:+.1} | {:+.0} |",
                    line.name, line.loss_per_doubling, line.elo_per_doubling, line.elo_at_10x
                );
            }
        }
        // No games: the loss's slope alone.
        None => {
            let _ = writeln!(
                md,
                "\n## Per doubling of the data\n\nLeast-squares lines on log2 N through every rung.\n\n| feature set | loss per doubling |\n| --- | ---: |"
            );
            for line in &l.lines {
                let _ = writeln!(md, "| {} | {:+.6} |", line.name, line.loss_per_doubling);
            }
        }
    }
    let _ = writeln!(md, "\n## Crossovers\n");
    if l.crossovers.is_empty() {
        let _ = writeln!(
            md,
            "None within the ladder's range ({} to {} positions): no two curves change places between two rungs.",
            plot::count_label(rungs[0] as f64),
            plot::count_label(largest as f64)
        );
    }
    for c in &l.crossovers {
        let _ = writeln!(
            md,
            "- **{}**: {} overtakes {} between {} and {} positions (the lines cross near {}); {}.",
            c.measure,
            c.rising,
            c.falling,
            plot::count_label(c.between.0 as f64),
            plot::count_label(c.between.1 as f64),
            plot::count_label(c.at),
            match c.beyond_noise {
                true => "the difference exceeds its error at both rungs",
                false => "within the noise at one rung or both",
            }
        );
    }
    let _ = writeln!(
        md,
        "\n![{}](ladder-loss.svg)",
        match l.tested {
            true => "test loss",
            false => "validation loss",
        }
    );
    if l.evaluation.is_some() {
        md.push_str("\n![Elo](ladder-elo.svg)\n");
    }
    md
}

/// Writes `ladder.md`, `ladder.json` and the pictures `ladder-loss.svg` and `ladder-elo.svg`
/// into `dir`.
pub fn write(l: &Ladder, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    let curves = |y: &dyn Fn(&Point) -> (f64, f64)| -> Vec<Curve> {
        l.lines
            .iter()
            .map(|line| Curve {
                name: line.name.clone(),
                points: line
                    .points
                    .iter()
                    .filter(|p| p.bound.is_exact())
                    .map(|p| {
                        let (v, e) = y(p);
                        (p.positions as f64, v, e)
                    })
                    .filter(|p| p.1.is_finite())
                    .collect(),
            })
            .collect()
    };
    let (title, loss) = match l.tested {
        true => ("Test loss", "test loss"),
        false => ("Validation loss", "validation loss"),
    };
    plot::log_x_curves(
        &dir.join("ladder-loss.svg"),
        &format!("{title} against training positions ({})", l.group),
        "training positions (log scale)",
        &format!("{loss} (mean ± sd over runs)"),
        &curves(&|p| (p.loss, p.loss_sd)),
    )?;
    if let Some((_, reference)) = &l.evaluation {
        plot::log_x_curves(
            &dir.join("ladder-elo.svg"),
            &format!("Elo against {reference} ({})", l.group),
            "training positions (log scale)",
            "Elo (95% interval)",
            &curves(&|p| (p.elo, p.elo_error95)),
        )?;
    }
    write_atomic(&dir.join("ladder.json"), &serde_json::to_vec_pretty(l)?)?;
    write_atomic(&dir.join("ladder.md"), markdown(l).as_bytes())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::evaluate::{EvaluationResult, RatedPlayer};
    use crate::experiment::report::{FeatureSetRow, RunSummary};
    use crate::train::settings::TrainSettings;

    /// A rung's report: each feature set's run losses and its Elo ± error.
    fn rung(n: u64, rows: &[(&str, &[f64], f64, f64)]) -> (u64, ExperimentReport) {
        let rated = |name: &str, elo: f64, error95: f64| RatedPlayer {
            name: name.to_string(),
            elo,
            error95,
            bound: RatingBound::Exact,
            games: 64,
            score_percent: 50.0,
            is_reference: false,
        };
        let report = ExperimentReport {
            experiment: format!("ladder-{n}"),
            settings: TrainSettings::default(),
            runs: 2,
            data: format!("the first {n} positions of d"),
            datasets: Vec::new(),
            rows: rows
                .iter()
                .map(|&(name, losses, elo, error)| FeatureSetRow {
                    feature_set: name.to_string(),
                    features: 768,
                    runs: losses
                        .iter()
                        .enumerate()
                        .map(|(k, &l)| RunSummary {
                            run: k as u64 + 1,
                            net: format!("{name}-{k}.nn").into(),
                            best_epoch: 1,
                            min_val_loss: l,
                            val_losses: vec![l],
                            seconds: 1.0,
                            test_loss: None,
                        })
                        .collect(),
                    elo: vec![Some(rated(name, elo, error))],
                    puzzles: None,
                    nps: None,
                    insight: None,
                    attribution: None,
                })
                .collect(),
            evaluations: vec![EvaluationResult {
                name: "ladder".into(),
                limit: Some("go nodes 1000".into()),
                reference: Some("ref".into()),
                ratings: Some(Vec::new()),
                tournament_summary: None,
                pairs: Vec::new(),
                puzzles: Vec::new(),
                speed: Vec::new(),
            }],
            shapes: Vec::new(),
        };
        (n, report)
    }

    #[test]
    fn curves_slopes_crossovers_and_pictures() {
        // `small` leads at 100k, `big` overtakes it between 200k and 400k, in loss and Elo.
        let rungs = [
            rung(
                100_000,
                &[
                    ("small", &[0.010, 0.012], -100.0, 20.0),
                    ("big", &[0.020, 0.022], -300.0, 20.0),
                ],
            ),
            rung(
                200_000,
                &[
                    ("small", &[0.009, 0.009], -50.0, 20.0),
                    ("big", &[0.011, 0.011], -90.0, 20.0),
                ],
            ),
            rung(
                400_000,
                &[
                    ("small", &[0.008, 0.008], 0.0, 20.0),
                    ("big", &[0.006, 0.006], 110.0, 20.0),
                ],
            ),
        ];
        let refs: Vec<(u64, &ExperimentReport)> = rungs.iter().map(|(n, r)| (*n, r)).collect();
        let l = ladder("ladder", "d", &refs);
        assert_eq!(l.evaluation, Some(("ladder".into(), "ref".into())));
        let small = &l.lines[0];
        assert_eq!(small.points[0].loss, 0.011);
        assert!((small.points[0].loss_sd - (2.0f64 * 0.001f64.powi(2)).sqrt()).abs() < 1e-12);
        // Elo -100, -50, 0 at log2 N steps of 1: +50 per doubling, and +50·log2(10) more at 10×.
        assert!((small.elo_per_doubling - 50.0).abs() < 1e-9);
        assert!((small.elo_at_10x - 50.0 * 10f64.log2()).abs() < 1e-6);
        assert_eq!(l.crossovers.len(), 2, "{:?}", l.crossovers);
        for c in &l.crossovers {
            assert_eq!((c.rising.as_str(), c.falling.as_str()), ("big", "small"));
            assert_eq!(c.between, (200_000, 400_000));
            assert!(c.at > 200_000.0 && c.at < 400_000.0, "{}", c.at);
            assert!(c.beyond_noise, "{c:?}");
        }
        // Elo: -40 at 200k, +110 at 400k: the lines cross at 2^(log2 200k + 40/150).
        let elo = l
            .crossovers
            .iter()
            .find(|c| c.measure == Measure::Elo)
            .unwrap();
        assert!((elo.at - 200_000.0 * 2f64.powf(40.0 / 150.0)).abs() < 1e-6);
        let dir = tempfile::tempdir().unwrap();
        write(&l, dir.path()).unwrap();
        let md = std::fs::read_to_string(dir.path().join("ladder.md")).unwrap();
        assert!(
            md.contains(
                "| small | 0.011000 ± 0.001414 | 0.009000 ± 0.000000 | 0.008000 ± 0.000000 |"
            ),
            "{md}"
        );
        assert!(
            md.contains("| big | -300.0 ± 20.0 | -90.0 ± 20.0 | +110.0 ± 20.0 |"),
            "{md}"
        );
        assert!(
            md.contains("**Elo**: big overtakes small between 200k and 400k positions"),
            "{md}"
        );
        assert!(md.contains("an extrapolation"), "{md}");
        for svg in ["ladder-loss.svg", "ladder-elo.svg"] {
            let text = std::fs::read_to_string(dir.path().join(svg)).unwrap();
            assert!(text.contains("small") && text.contains("big"), "{svg}");
        }
        // No crossing: said so.
        let l = ladder("ladder", "d", &refs[..2]);
        assert!(l.crossovers.is_empty());
        assert!(markdown(&l).contains("None within the ladder's range (100k to 200k positions)"));
        assert!(!l.tested && markdown(&l).contains("## Validation loss"));
    }

    #[test]
    fn test_losses_draw_the_curves_when_every_run_has_one() {
        let mut rungs = [
            rung(100_000, &[("a", &[0.010, 0.012], 0.0, 20.0)]),
            rung(200_000, &[("a", &[0.009, 0.009], 0.0, 20.0)]),
        ];
        // Test losses that fall where the validation losses do not tell.
        for (k, (_, report)) in rungs.iter_mut().enumerate() {
            for (j, run) in report.rows[0].runs.iter_mut().enumerate() {
                run.test_loss = Some(0.02 - 0.005 * k as f64 + 0.001 * j as f64);
            }
        }
        let refs: Vec<(u64, &ExperimentReport)> = rungs.iter().map(|(n, r)| (*n, r)).collect();
        let l = ladder("ladder", "d", &refs);
        assert!(l.tested);
        let points = &l.lines[0].points;
        assert!((points[0].loss - 0.0205).abs() < 1e-12, "{points:?}");
        assert!((points[1].loss - 0.0155).abs() < 1e-12, "{points:?}");
        assert!((l.lines[0].loss_per_doubling + 0.005).abs() < 1e-12);
        let md = markdown(&l);
        assert!(
            md.contains("## Test loss") && !md.contains("## Validation loss"),
            "{md}"
        );
        // One run without a test loss: the validation losses, for every rung alike.
        rungs[1].1.rows[0].runs[1].test_loss = None;
        let refs: Vec<(u64, &ExperimentReport)> = rungs.iter().map(|(n, r)| (*n, r)).collect();
        let l = ladder("ladder", "d", &refs);
        assert!(!l.tested);
        assert_eq!(l.lines[0].points[0].loss, 0.011);
        // No games played: no Elo columns.
        for (_, report) in rungs.iter_mut() {
            report.evaluations.clear();
        }
        let refs: Vec<(u64, &ExperimentReport)> = rungs.iter().map(|(n, r)| (*n, r)).collect();
        let md = markdown(&ladder("ladder", "d", &refs));
        assert!(!md.contains("Elo") && md.contains("| a | "), "{md}");
    }
}
