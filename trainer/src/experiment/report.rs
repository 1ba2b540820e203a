//! Reports: per experiment, a Markdown table in the shape of the thesis's result tables
//! (feature set, N, validation loss, Elo against the reference ± error, puzzle accuracy,
//! training time) and plots (validation loss of every run, Elo with error bars).

use anyhow::{Context, Result};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::evaluate::{EvaluationResult, PuzzleScore, RatedPlayer};
use crate::analysis::plot::{self, Series, SeriesKind};
use crate::atomic_file::write_atomic;
use crate::train::settings::{MethodName, TrainSettings};

/// One training run's summary.
#[derive(Clone, Debug, Serialize)]
pub struct RunSummary {
    /// Run number, from 1.
    pub run: u64,
    /// Its final network.
    pub net: PathBuf,
    /// Lowest validation loss over the epochs.
    pub min_val_loss: f64,
    /// Validation loss after each epoch.
    pub val_losses: Vec<f64>,
    /// Training time, seconds.
    pub seconds: f64,
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
    /// Rating of its best run's network, if a tournament was played.
    pub elo: Option<RatedPlayer>,
    /// Puzzle accuracy of its best run's network, if puzzles were solved.
    pub puzzles: Option<PuzzleScore>,
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
    /// Its dataset's name.
    pub data: String,
    /// One row per feature set, in the manifest's order.
    pub rows: Vec<FeatureSetRow>,
    /// Tournament and puzzle results.
    pub evaluation: Option<EvaluationResult>,
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
    let _ = writeln!(
        out,
        "Networks (N → {}) × 2 → {} → 1, {} training, batch {}, lr {}, γ {}, {} epochs of {} positions, {} run(s) per feature set, data `{}`.\n",
        s.l1,
        s.l2,
        match s.method {
            MethodName::Score => "score-target",
            MethodName::Pqr => "PQR",
        },
        s.batch_size,
        s.lr,
        s.gamma,
        s.epochs,
        s.epoch_positions,
        s.runs,
        r.data
    );
    let reference = r
        .evaluation
        .as_ref()
        .and_then(|e| e.reference.clone())
        .unwrap_or_else(|| "—".into());
    let _ = writeln!(
        out,
        "| Feature set | N | Val. loss (min) | Val. loss (mean ± sd of runs) | Elo vs {reference} (95%) | Puzzles (move acc.) | Training time |"
    );
    let _ = writeln!(out, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for row in &r.rows {
        let losses: Vec<f64> = row.runs.iter().map(|r| r.min_val_loss).collect();
        let mean = losses.iter().sum::<f64>() / losses.len() as f64;
        let sd = if losses.len() > 1 {
            (losses.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (losses.len() - 1) as f64)
                .sqrt()
        } else {
            0.0
        };
        let elo = row.elo.as_ref().map_or("—".into(), |p| {
            if p.is_reference {
                "0 (reference)".to_string()
            } else {
                format!("{:+.1} ± {:.1}", p.elo, p.error95)
            }
        });
        let puzzles = row
            .puzzles
            .as_ref()
            .map_or("—".into(), |p| format!("{:.4}", p.accuracy));
        let _ = writeln!(
            out,
            "| {} | {} | {:.6} | {:.6} ± {:.6} | {} | {} | {} |",
            row.feature_set,
            row.features,
            row.best().min_val_loss,
            mean,
            sd,
            elo,
            puzzles,
            hms(row.runs.iter().map(|r| r.seconds).sum())
        );
    }
    if let Some(ev) = &r.evaluation {
        if let Some(t) = &ev.tournament_summary {
            let _ = writeln!(out, "\n{t}");
        }
        let extra: Vec<&RatedPlayer> = ev
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
    }
    out
}

/// Writes `report.md`, `report.json`, `val-loss.svg` and (with ratings) `elo.svg` into `dir`.
pub fn write(r: &ExperimentReport, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut md = markdown(r);
    md.push_str("\n![validation loss](val-loss.svg)\n");
    let rated = r.rows.iter().any(|row| row.elo.is_some());
    if rated {
        md.push_str("\n![Elo](elo.svg)\n");
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
    if rated {
        let points: Vec<(String, f64, f64)> = r
            .rows
            .iter()
            .filter_map(|row| {
                row.elo
                    .as_ref()
                    .map(|p| (row.feature_set.clone(), p.elo, p.error95))
            })
            .collect();
        plot::error_bars(
            &dir.join("elo.svg"),
            &format!("Elo with 95% intervals ({})", r.experiment),
            "Elo",
            &points,
        )?;
    }
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
