//! Reports: per experiment, a Markdown table in the shape of the thesis's result tables
//! (feature set, N, validation loss, Elo against the reference ± error under each evaluation,
//! puzzle accuracy, search speed, training time), the pairs each evaluation compared head to
//! head side by side with the speed cost, and plots (validation loss of every run, Elo with
//! error bars).

use anyhow::{Context, Result};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::evaluate::{EvaluationResult, PuzzleScore};
use crate::analysis::plot::{self, Series, SeriesKind};
use crate::analysis::spread::mean_sd_label;
use crate::atomic_file::write_atomic;
use crate::train::settings::{MethodName, TrainSettings};

/// One training run's summary.
#[derive(Clone, Debug, Serialize)]
pub struct RunSummary {
    /// Run number, from 1.
    pub run: u64,
    /// The network it hands over: its best epoch's.
    pub net: PathBuf,
    /// That epoch (1-based; `val_losses` has one entry per epoch trained).
    pub best_epoch: u64,
    /// Lowest validation loss over the epochs (the best epoch's).
    pub min_val_loss: f64,
    /// Validation loss after each epoch.
    pub val_losses: Vec<f64>,
    /// Training time, seconds.
    pub seconds: f64,
    /// Its network's loss on the experiment's `test_data` (`trainer score`'s yardstick,
    /// [`crate::train::held_out`]), when it names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_loss: Option<f64>,
}

/// One feature set's line of the table.
#[derive(Clone, Debug, Serialize)]
pub struct FeatureSetRow {
    /// The feature set.
    pub feature_set: String,
    /// Its number of features N.
    pub features: u64,
    /// Its runs.
    pub runs: Vec<RunSummary>,
    /// Rating of its best run's network under each evaluation (in the report's order), where
    /// a tournament was played and rated.
    pub elo: Vec<Option<super::evaluate::RatedPlayer>>,
    /// Puzzle accuracy of its best run's network, if puzzles were solved.
    pub puzzles: Option<PuzzleScore>,
    /// Search speed (nodes per second) of its best run's network, if measured.
    pub nps: Option<f64>,
    /// The Markdown section of its best network's pictures and attribution
    /// ([`crate::insight::write`]), image links relative to the report's folder.
    #[serde(skip)]
    pub insight: Option<String>,
    /// Its best network's block attribution, if measured.
    pub attribution: Option<crate::insight::attribution::Attribution>,
}

impl FeatureSetRow {
    /// The run with the lowest validation loss (the one that is evaluated).
    pub fn best(&self) -> &RunSummary {
        self.runs
            .iter()
            .min_by(|a, b| a.min_val_loss.total_cmp(&b.min_val_loss))
            .expect("every feature set has a run")
    }
}

/// Everything one experiment produced.
#[derive(Clone, Debug, Serialize)]
pub struct ExperimentReport {
    /// The experiment's name.
    pub experiment: String,
    /// Its training settings.
    pub settings: TrainSettings,
    /// Runs of each network.
    pub runs: u64,
    /// Its dataset's name (names, comma-separated, when it trains on several).
    pub data: String,
    /// Each dataset's size and generation time, when the experiment trains on several or
    /// validates on a dataset of its own (`val_data`): what each network's data cost.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub datasets: Vec<DataSummary>,
    /// One row per feature set, in the manifest's order.
    pub rows: Vec<FeatureSetRow>,
    /// Tournament, puzzle and speed results, one per evaluation.
    pub evaluations: Vec<EvaluationResult>,
    /// The shapes every feature set was trained in (label, description), when the experiment
    /// lists several (`archs`); the rows are then named `FS@LABEL`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shapes: Vec<(String, String)>,
}

/// One dataset of an experiment that reads several.
#[derive(Clone, Debug, Serialize)]
pub struct DataSummary {
    /// Its name in the manifest.
    pub name: String,
    /// What the experiment reads it for.
    pub role: DataRole,
    /// Positions generated (0 for files named in the manifest).
    pub positions: u64,
    /// Seconds its generation took (0 for files).
    pub seconds: f64,
}

/// What an experiment reads a dataset for (written `train`, `val` or `train, val`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum DataRole {
    /// Networks train on it.
    #[serde(rename = "train")]
    Train,
    /// Its validation files score every network.
    #[serde(rename = "val")]
    Val,
    /// Both.
    #[serde(rename = "train, val")]
    TrainAndVal,
    /// Its validation files are the test set alone (`test_data`).
    #[serde(rename = "test")]
    Test,
}

impl DataRole {
    /// The role of a dataset the networks train on (`trains`), validate on (`validates`) or
    /// are tested on alone.
    pub fn of(trains: bool, validates: bool) -> DataRole {
        match (trains, validates) {
            (true, true) => DataRole::TrainAndVal,
            (true, false) => DataRole::Train,
            (false, true) => DataRole::Val,
            (false, false) => DataRole::Test,
        }
    }

    /// Whether its validation files choose every run's best epoch.
    pub fn validates(self) -> bool {
        matches!(self, DataRole::Val | DataRole::TrainAndVal)
    }
}

/// A short label of an evaluation: its name and move limit (`threats-time, go movetime 40`).
fn label(ev: &EvaluationResult) -> String {
    match &ev.limit {
        Some(limit) => format!("{}, {limit}", ev.name),
        None => ev.name.clone(),
    }
}

/// `h:mm:ss`, as the thesis's tables write training time.
fn hms(seconds: f64) -> String {
    let s = seconds.round() as u64;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// The report as Markdown.
pub fn markdown(r: &ExperimentReport) -> String {
    let s = &r.settings;
    let mut out = String::new();
    let _ = writeln!(out, "## Experiment `{}`\n", r.experiment);
    // The thesis's shape as the reports have always written it.
    let layers = match (s.arch().preset(), r.shapes.is_empty()) {
        (Some(nnue::Preset::Thesis), true) => format!("(N → {}) × 2 → {} → 1", s.l1, s.l2),
        (_, true) => format!("N → {}", s.layers_label()),
        (_, false) => format!("N → {}, in each shape below", s.l1),
    };
    let _ = writeln!(
        out,
        "Networks {layers}, {} training, batch {}, {}, {}, {} run(s) per feature set, data `{}`.\n",
        match s.method {
            MethodName::Score => "score-target",
            MethodName::Pqr => "PQR",
        },
        s.batch_size,
        s.recipe_label(),
        s.length_label(),
        r.runs,
        r.data
    );
    for d in &r.datasets {
        let _ = match (d.role, d.positions) {
            (DataRole::Val, _) => writeln!(
                out,
                "- `{}`: its validation set scores every network",
                d.name
            ),
            (DataRole::Test, _) => writeln!(
                out,
                "- `{}`: its validation set tests every run's network (test loss: mean (W(eval) − W(score))², W(cp) = σ(cp / 410), host's quantized evaluation; no epoch was chosen on it)",
                d.name
            ),
            (_, 0) => writeln!(out, "- `{}`: files", d.name),
            (role, _) => writeln!(
                out,
                "- `{}`: {} positions generated in {:.0} s{}",
                d.name,
                d.positions,
                d.seconds,
                match role.validates() {
                    true => "; its validation set scores every network",
                    false => "",
                }
            ),
        };
    }
    if !r.datasets.is_empty() {
        out.push('\n');
    }
    for (label, shape) in &r.shapes {
        let _ = writeln!(out, "- `{label}`: {shape}");
    }
    if !r.shapes.is_empty() {
        out.push('\n');
    }
    let rated: Vec<&EvaluationResult> = r
        .evaluations
        .iter()
        .filter(|ev| ev.ratings.is_some())
        .collect();
    let mut header =
        String::from("| Feature set | N | Val. loss (min) | Val. loss (mean ± sd of runs) |");
    let mut rule = String::from("| --- | ---: | ---: | ---: |");
    // One Elo column per rated evaluation, named after its condition when there are several;
    // the speed column only where speed was measured.
    for ev in &rated {
        let reference = ev.reference.as_deref().unwrap_or("—");
        match rated.len() {
            1 => {
                let _ = write!(header, " Elo vs {reference} (95%) |");
            }
            _ => {
                let _ = write!(header, " Elo vs {reference} (95%, {}) |", label(ev));
            }
        }
        rule.push_str(" ---: |");
    }
    let timed = r.rows.iter().any(|row| row.nps.is_some());
    let tested = r
        .rows
        .iter()
        .any(|row| row.runs.iter().any(|run| run.test_loss.is_some()));
    if tested {
        header.push_str(" Test loss (mean ± sd of runs) |");
        rule.push_str(" ---: |");
    }
    header.push_str(" Puzzles (move acc.) |");
    rule.push_str(" ---: |");
    if timed {
        header.push_str(" nps |");
        rule.push_str(" ---: |");
    }
    header.push_str(" Training time |");
    rule.push_str(" ---: |");
    let _ = writeln!(out, "{header}\n{rule}");
    for row in &r.rows {
        let losses: Vec<f64> = row.runs.iter().map(|r| r.min_val_loss).collect();
        let mut cells = String::new();
        for (ev, elo) in r.evaluations.iter().zip(&row.elo) {
            if ev.ratings.is_none() {
                continue;
            }
            let cell = elo.as_ref().map_or("—".into(), |p| {
                if p.is_reference {
                    "0 (reference)".to_string()
                } else if p.elo.is_finite() {
                    format!("{}{:+.1} ± {:.1}", p.bound, p.elo, p.error95)
                } else {
                    "—".to_string()
                }
            });
            let _ = write!(cells, " {cell} |");
        }
        let puzzles = row
            .puzzles
            .as_ref()
            .map_or("—".into(), |p| format!("{:.4}", p.accuracy));
        if tested {
            let tests: Vec<f64> = row.runs.iter().filter_map(|r| r.test_loss).collect();
            let _ = write!(cells, " {} |", mean_sd_label(&tests));
        }
        let nps = match (timed, row.nps) {
            (false, _) => String::new(),
            (true, Some(v)) => format!(" {v:.0} |"),
            (true, None) => " — |".into(),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {:.6} | {} |{cells} {} |{nps} {} |",
            row.feature_set,
            row.features,
            row.best().min_val_loss,
            mean_sd_label(&losses),
            puzzles,
            hms(row.runs.iter().map(|r| r.seconds).sum())
        );
    }
    let _ = write!(out, "{}", pairs_markdown(r));
    out.push_str(&evaluations_markdown(r));
    out
}

/// Each evaluation's own section: its tournament's summary, the players beside the
/// experiment's networks, and the speed measurements.
fn evaluations_markdown(r: &ExperimentReport) -> String {
    let mut out = String::new();
    for ev in &r.evaluations {
        let _ = writeln!(out, "\n### Evaluation `{}`\n", label(ev));
        if let Some(t) = &ev.tournament_summary {
            let _ = writeln!(out, "{t}");
        }
        let extra: Vec<_> = ev
            .ratings
            .iter()
            .flatten()
            .filter(|p| !r.rows.iter().any(|row| row.feature_set == p.name))
            .collect();
        if !extra.is_empty() {
            let _ = writeln!(out, "\nOther players: ");
            for p in extra {
                let _ = writeln!(out, "- {}: {:+.1} ± {:.1}", p.name, p.elo, p.error95);
            }
        }
        if !ev.speed.is_empty() {
            let _ = writeln!(
                out,
                "\nSpeed (`host bench`, one thread; median of {} runs):\n",
                ev.speed[0].samples.len()
            );
            let _ = writeln!(
                out,
                "| Network | Nodes | nps (median) | runs |\n| --- | ---: | ---: | --- |"
            );
            for s in &ev.speed {
                let runs: Vec<String> = s.samples.iter().map(|v| format!("{v:.0}")).collect();
                let _ = writeln!(
                    out,
                    "| {} | {} | {:.0} | {} |",
                    s.name,
                    s.nodes,
                    s.nps,
                    runs.join(", ")
                );
            }
        }
    }
    out
}

/// The pairs the evaluations compared head to head, side by side: per pair (b against its
/// baseline a), b's Elo under each evaluation that played it and b's speed relative to a.
fn pairs_markdown(r: &ExperimentReport) -> String {
    let with_pairs: Vec<&EvaluationResult> = r
        .evaluations
        .iter()
        .filter(|ev| !ev.pairs.is_empty())
        .collect();
    let Some(first) = with_pairs.first() else {
        return String::new();
    };
    let mut out = String::from(
        "\nPairs, head to head (Elo of the second against the first, 95% error, likelihood of superiority):\n\n| Pair |",
    );
    let mut rule = String::from("| --- |");
    for ev in &with_pairs {
        let _ = write!(out, " {} |", label(ev));
        rule.push_str(" ---: |");
    }
    out.push_str(" nps of the second / the first |\n");
    rule.push_str(" ---: |\n");
    out.push_str(&rule);
    let nps = |name: &str| {
        r.rows
            .iter()
            .find(|row| row.feature_set == name)
            .and_then(|row| row.nps)
    };
    for pair in &first.pairs {
        let _ = write!(out, "| {} vs {} |", pair.b, pair.a);
        for ev in &with_pairs {
            let cell = ev
                .pairs
                .iter()
                .find(|p| p.a == pair.a && p.b == pair.b)
                .map_or("—".into(), |p| {
                    format!(
                        "{:+.1} ± {:.1} (+{} ={} −{}, LOS {:.0}%)",
                        p.elo,
                        p.error95,
                        p.wins,
                        p.draws,
                        p.losses,
                        100.0 * p.los
                    )
                });
            let _ = write!(out, " {cell} |");
        }
        let ratio = match (nps(&pair.b), nps(&pair.a)) {
            (Some(b), Some(a)) if a > 0.0 => format!("{:.2}", b / a),
            _ => "—".into(),
        };
        let _ = writeln!(out, " {ratio} |");
    }
    out
}

/// Writes `report.md`, `report.json`, `val-loss.svg`, (with ratings) `elo.svg` and
/// `report.html` (the Markdown with every image inlined: one file to open) into `dir`.
pub fn write(r: &ExperimentReport, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut md = markdown(r);
    md.push_str("\n![validation loss](val-loss.svg)\n");
    // The first rated evaluation's ratings, and every evaluation's pairs.
    let rated = r.evaluations.iter().position(|ev| ev.ratings.is_some());
    let paired = r.evaluations.iter().any(|ev| !ev.pairs.is_empty());
    if rated.is_some() {
        md.push_str("\n![Elo](elo.svg)\n");
    }
    if paired {
        md.push_str("\n![pairs](pairs.svg)\n");
    }
    let inside: Vec<&FeatureSetRow> = r.rows.iter().filter(|row| row.insight.is_some()).collect();
    if !inside.is_empty() {
        md.push_str("\n## Inside the networks\n\nFor each feature set's best network: how much it takes from each block (the loss and the evaluation with the block's inputs removed, its share of the accumulators, its dead and never-trained features), its activations and weights, every feature's weight size, and its strongest first-layer neurons drawn in each block's geometry.\n");
        for row in inside {
            let _ = write!(
                md,
                "\n### {}\n\n{}",
                row.feature_set,
                row.insight.as_deref().unwrap_or_default()
            );
        }
    }
    write_atomic(&dir.join("report.md"), md.as_bytes())?;
    let json = serde_json::to_vec_pretty(r)?;
    write_atomic(&dir.join("report.json"), &json)?;

    let mut series = Vec::new();
    for row in &r.rows {
        for run in &row.runs {
            series.push(Series {
                name: if row.runs.len() > 1 {
                    format!("{} run {}", row.feature_set, run.run)
                } else {
                    row.feature_set.clone()
                },
                points: run
                    .val_losses
                    .iter()
                    .enumerate()
                    .map(|(i, &l)| ((i + 1) as f64, l))
                    .collect(),
                kind: SeriesKind::Line,
            });
        }
    }
    plot::lines(
        &dir.join("val-loss.svg"),
        &format!("Validation loss per epoch ({})", r.experiment),
        "epoch",
        "validation loss",
        &series,
    )?;
    if let Some(k) = rated {
        let points: Vec<(String, f64, f64)> = r
            .rows
            .iter()
            .filter_map(|row| {
                row.elo[k]
                    .as_ref()
                    .filter(|p| p.elo.is_finite())
                    .map(|p| (row.feature_set.clone(), p.elo, p.error95))
            })
            .collect();
        plot::error_bars(
            &dir.join("elo.svg"),
            &format!(
                "Elo with 95% intervals ({}, {})",
                r.experiment,
                label(&r.evaluations[k])
            ),
            "Elo",
            &points,
        )?;
    }
    if paired {
        let points: Vec<(String, f64, f64)> = r
            .evaluations
            .iter()
            .flat_map(|ev| {
                ev.pairs.iter().map(move |p| {
                    (
                        format!("{} vs {} ({})", p.b, p.a, ev.name),
                        p.elo,
                        p.error95,
                    )
                })
            })
            .filter(|(_, elo, _)| elo.is_finite())
            .collect();
        plot::error_bars(
            &dir.join("pairs.svg"),
            &format!(
                "Pairs head to head, Elo with 95% intervals ({})",
                r.experiment
            ),
            "Elo",
            &points,
        )?;
    }
    // Last, once every image exists: the whole report as one self-contained page.
    let page = crate::insight::html::page(&format!("Experiment {}", r.experiment), &md, dir)?;
    write_atomic(&dir.join("report.html"), page.as_bytes())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::hms;

    #[test]
    fn hours_minutes_seconds() {
        assert_eq!(hms(0.4), "0:00:00");
        assert_eq!(hms(3725.0), "1:02:05");
    }
}
