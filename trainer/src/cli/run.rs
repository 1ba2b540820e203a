//! `trainer run`: an experiment manifest end to end.

use anyhow::{Context, Result, anyhow};
use std::path::{Path, PathBuf};

use clap::Args;
use plugin_api::PluginRegistry;

use super::device::{DeviceArg, apply_threads};
use trainer::experiment::manifest::{DataSource, Manifest};
use trainer::experiment::runner::{RunOptions, default_out, run_manifest};

/// Arguments of `trainer run`.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// The manifest (e.g. experiments.toml).
    pub manifest: PathBuf,
    /// Run only this experiment (repeat for several; a name ending in `*` selects all that start
    /// with the rest, e.g. 'baseline-small-*'; default: all).
    #[arg(long, value_name = "NAME")]
    pub only: Vec<String>,
    /// Root folder of the stage outputs and reports (default: runs/ beside the manifest).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Check the manifest and the feature sets, print the plan, and stop.
    #[arg(long)]
    pub check: bool,
    /// Loader threads (0: one per core).
    #[arg(long, default_value_t = 0, value_parser = super::thread_count)]
    pub loader_threads: usize,
    /// No progress bars.
    #[arg(long)]
    pub no_progress: bool,
    /// Device and libtorch threads for training.
    #[command(flatten)]
    pub device: DeviceArg,
}

/// Runs `trainer run`.
pub fn run(args: &RunArgs, plugin_dir: Option<&Path>) -> Result<()> {
    let manifest = Manifest::load(&args.manifest)?;
    let registry = PluginRegistry::discover(plugin_dir)?;
    if args.check {
        for e in manifest.select(&args.only)? {
            for (fs, place) in e.feature_sets.iter().zip(&e.feature_set_places) {
                registry
                    .feature_set(fs)
                    .with_context(|| format!("{place}: feature_sets"))?;
            }
            e.settings.check_i8_blocks(&registry).map_err(|err| {
                anyhow!(
                    "{}: experiment '{}': {err}",
                    args.manifest.display(),
                    e.name
                )
            })?;
            for d in e.datasets() {
                if let DataSource::Generate(g) = &d.source {
                    g.check_inputs().map_err(|err| {
                        anyhow!(
                            "{}: data.{}.generate.{err:#}",
                            args.manifest.display(),
                            d.name
                        )
                    })?;
                }
            }
            println!(
                "{}: {} feature set(s) x {} run(s), {}, {} epochs of {} positions, data '{}', evaluation '{}'",
                e.name,
                e.feature_sets.len(),
                e.settings.runs,
                match e.archs.is_empty() {
                    true => e.settings.layers_label(),
                    false => format!(
                        "{} in shapes {}",
                        e.settings.l1,
                        e.archs
                            .iter()
                            .map(|(l, _)| l.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                },
                e.settings.epochs,
                e.settings.epoch_positions,
                e.data
                    .iter()
                    .map(|d| d.name.as_str())
                    .collect::<Vec<_>>()
                    .join("', '")
                    + &e.val_data
                        .iter()
                        .map(|v| format!("', validated on '{}", v.name))
                        .collect::<String>(),
                match e.evaluations.is_empty() {
                    true => "none".to_string(),
                    false => e
                        .evaluations
                        .iter()
                        .map(|v| v.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                }
            );
        }
        return Ok(());
    }
    trainer::train::tune_allocator();
    apply_threads(args.device.threads);
    let options = RunOptions {
        out: args
            .out
            .clone()
            .unwrap_or_else(|| default_out(&args.manifest)),
        only: args.only.clone(),
        plugin_dir: plugin_dir.map(Path::to_path_buf),
        device: args.device.device().map_err(anyhow::Error::msg)?,
        loader_threads: args.loader_threads,
        progress: !args.no_progress,
    };
    run_manifest(&manifest, &registry, &options)?;
    Ok(())
}
