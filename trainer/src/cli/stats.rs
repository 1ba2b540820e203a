//! `trainer stats` and `trainer wdl-fit`: dataset statistics and the win-rate model, as text and
//! SVG charts.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

use clap::Args;
use plugin_api::{FeatureSet, Role};

use nnue::units::ScoreUnits;
use trainer::analysis::plot::{self, Series, SeriesKind};
use trainer::analysis::scan::{ScanOptions, ScanSummary, scan};
use trainer::analysis::stats::{MAX_MOBILITY, SCORE_BIN, SCORE_RANGE, Stats, role_name};
use trainer::analysis::wdl::{self, WdlData};
use trainer::data::score_units;
use trainer::data::{ReadOptions, Sample};

use super::{FilterArgs, InputArgs, byte_progress, print_errors};

/// Arguments of `trainer stats`.
#[derive(Args, Debug)]
pub struct StatsArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Also count feature activations of this feature set (e.g. all+ph, k*p, halfka_v2_hm).
    #[arg(long)]
    pub spec: Option<String>,
    /// An index is rare when active in fewer than this share of the position views.
    #[arg(long, value_name = "FRACTION", default_value_t = 1e-4)]
    pub rare: f64,
    /// Write SVG charts into this directory (created if needed).
    #[arg(long, value_name = "DIR")]
    pub plots: Option<PathBuf>,
    /// Write the activation count of every feature index to this TSV file.
    #[arg(long, value_name = "FILE")]
    pub activations: Option<PathBuf>,
    /// Threads (0: one per core).
    #[arg(long, default_value_t = 0, value_parser = super::thread_count)]
    pub threads: usize,
    #[command(flatten)]
    pub filter: FilterArgs,
}

/// Arguments of `trainer wdl-fit`.
#[derive(Args, Debug)]
pub struct WdlArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Write an SVG chart of the observed win rate and the fitted curve.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    /// Threads (0: one per core).
    #[arg(long, default_value_t = 0, value_parser = super::thread_count)]
    pub threads: usize,
    #[command(flatten)]
    pub filter: FilterArgs,
}

fn options(input: &InputArgs, filter: &FilterArgs, threads: usize) -> Result<ScanOptions> {
    Ok(ScanOptions {
        filter: filter.config_for(input).map_err(anyhow::Error::msg)?,
        on_error: input.on_error,
        threads,
        read: ReadOptions { validate: true },
        ..ScanOptions::default()
    })
}

fn print_summary(summary: &ScanSummary, files: usize) {
    print_errors(&summary.first_errors, summary.errors);
    println!(
        "read {} positions from {files} file(s); skipped {} bad records; {}",
        summary.read, summary.errors, summary.filter
    );
}

/// Runs `trainer stats`.
pub fn run_stats(args: &StatsArgs, set: Option<&FeatureSet>) -> Result<()> {
    let inputs = args.input.inputs().map_err(anyhow::Error::msg)?;
    let opts = options(&args.input, &args.filter, args.threads)?;
    let pb = byte_progress(args.input.total_bytes());
    let result = scan(
        &inputs,
        &opts,
        || Stats::new(set),
        |acc, s| {
            let mut scratch = Vec::new();
            acc.add(s, set, &mut scratch).map_err(|e| e.to_string())
        },
        |a, b| a.merge(&b),
        |bytes| pb.inc(bytes),
    );
    pb.finish_and_clear();
    let (stats, summary) = result.map_err(anyhow::Error::msg)?;
    print_summary(&summary, inputs.len());
    println!();
    print!("{}", stats.report(set, args.rare));
    if let (Some(path), Some(set), Some(fc)) = (&args.activations, set, &stats.features) {
        let mut text = String::from("index\tblock\tblock_index\tcount\n");
        for term in set.terms() {
            for i in 0..term.size {
                let idx = (term.offset + i) as usize;
                text.push_str(&format!("{idx}\t{}\t{i}\t{}\n", term.name, fc.counts[idx]));
            }
        }
        std::fs::write(path, text).with_context(|| format!("{}", path.display()))?;
    }
    if let Some(dir) = &args.plots {
        write_stats_plots(dir, &stats, set)?;
        println!("\ncharts written to {}", dir.display());
    }
    Ok(())
}

fn write_stats_plots(dir: &Path, stats: &Stats, set: Option<&FeatureSet>) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("{}", dir.display()))?;
    let n = stats.positions.max(1) as f64;
    // Scores: the in-range bins only (the two open-ended bins are in the text report).
    let bins: Vec<(f64, f64, f64)> = (1..stats.score_hist.len() - 1)
        .map(|i| {
            let lo = f64::from(-SCORE_RANGE + (i as i32 - 1) * SCORE_BIN);
            (lo, lo + f64::from(SCORE_BIN), stats.score_hist[i] as f64)
        })
        .collect();
    plot::bars(
        &dir.join("score.svg"),
        "Score distribution",
        "score (side to move)",
        "positions",
        &bins,
    )?;
    let plies: Vec<(f64, f64, f64)> = stats
        .ply_hist
        .iter()
        .enumerate()
        .map(|(p, &c)| (p as f64, p as f64 + 1.0, c as f64))
        .collect();
    plot::bars(
        &dir.join("ply.svg"),
        "Ply distribution",
        "ply",
        "positions",
        &plies,
    )?;
    let pieces: Vec<(f64, f64, f64)> = stats
        .piece_hist
        .iter()
        .enumerate()
        .map(|(k, &c)| (k as f64 - 0.4, k as f64 + 0.4, c as f64))
        .collect();
    plot::bars(
        &dir.join("pieces.svg"),
        "Pieces on the board",
        "pieces",
        "positions",
        &pieces,
    )?;
    // Figure 13: mobility per role, leaving out 0 for knights, bishops, rooks and queens.
    let series: Vec<Series> = Role::ALL
        .into_iter()
        .map(|r| Series {
            name: role_name(r).to_string(),
            points: (0..=MAX_MOBILITY)
                .filter(|&v| v > 0 || matches!(r, Role::Pawn | Role::King))
                .map(|v| (v as f64, 50.0 * stats.mobility[r.index()][v] as f64 / n))
                .collect(),
            kind: SeriesKind::Line,
        })
        .collect();
    plot::lines(
        &dir.join("mobility.svg"),
        "Mobility |M| per role (0 left out for N, B, R, Q)",
        "mobility value",
        "% of (role, colour) pairs",
        &series,
    )?;
    if let (Some(set), Some(fc)) = (set, &stats.features) {
        let views = fc.views.max(1) as f64;
        let series: Vec<Series> = set
            .terms()
            .iter()
            .map(|term| Series {
                name: term.name.clone(),
                points: (0..term.size)
                    .map(|i| {
                        let idx = term.offset + i;
                        let c = fc.counts[idx as usize] as f64;
                        (f64::from(idx), (c / views).max(1e-9).log10())
                    })
                    .collect(),
                kind: SeriesKind::Points,
            })
            .collect();
        plot::lines(
            &dir.join("features.svg"),
            &format!(
                "Feature activation frequency ({}; dead indices at -9)",
                set.name()
            ),
            "feature index",
            "log10(share of position views)",
            &series,
        )?;
    }
    Ok(())
}

/// Runs `trainer wdl-fit`.
pub fn run_wdl(args: &WdlArgs) -> Result<()> {
    let inputs = args.input.inputs().map_err(anyhow::Error::msg)?;
    let opts = options(&args.input, &args.filter, args.threads)?;
    // Fitted in centipawns, whatever the files' units: the units of a training run's win-rate
    // settings.
    let units = opts.filter.score_units;
    let pb = byte_progress(args.input.total_bytes());
    let result = scan(
        &inputs,
        &opts,
        WdlData::default,
        |acc, s| {
            let score = score_units::convert(s, units, ScoreUnits::Centipawns);
            acc.add_sample(&Sample { score, ..*s });
            Ok(())
        },
        |a, b| a.merge(&b),
        |bytes| pb.inc(bytes),
    );
    pb.finish_and_clear();
    let (data, summary) = result.map_err(anyhow::Error::msg)?;
    print_summary(&summary, inputs.len());
    if data.without_result > 0 {
        println!(
            "{} positions have no game result (text formats) and are not used",
            data.without_result
        );
    }
    let fit = wdl::fit(&data)?;
    println!(
        "W(e) = sigmoid((e - a) / b), e in centipawns (the files' scores are in {}), fitted by maximum likelihood to {} positions ({} Newton steps):",
        units.describe(),
        fit.samples,
        fit.iterations
    );
    println!("a = {:.2} ± {:.2}", fit.a, fit.a_se);
    println!("b = {:.2} ± {:.2}", fit.b, fit.b_se);
    println!(
        "mean log-likelihood {:.5} (the thesis: a = 1.28, b = 297.21)",
        fit.mean_log_likelihood
    );
    if let Some(path) = &args.plot {
        let observed: Vec<(f64, f64)> = data
            .observed(25, 1500)
            .into_iter()
            .filter(|p| p.2 >= 10)
            .map(|p| (p.0, p.1))
            .collect();
        let curve: Vec<(f64, f64)> = (-1500..=1500)
            .step_by(10)
            .map(|e| (f64::from(e), fit.win_rate(f64::from(e))))
            .collect();
        plot::lines(
            path,
            &format!("WDL model: a = {:.2}, b = {:.2}", fit.a, fit.b),
            "score (side to move)",
            "expected score (win = 1, draw = 1/2)",
            &[
                Series {
                    name: "observed (bins of 25, n >= 10)".into(),
                    points: observed,
                    kind: SeriesKind::Points,
                },
                Series {
                    name: "fitted sigmoid".into(),
                    points: curve,
                    kind: SeriesKind::Line,
                },
            ],
        )?;
        println!("chart written to {}", path.display());
    }
    Ok(())
}
