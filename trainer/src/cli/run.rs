//! `trainer run`: an experiment manifest end to end.

use anyhow::{Context, Result, anyhow, bail};
use std::path::{Path, PathBuf};

use clap::Args;
use plugin_api::PluginRegistry;

use super::device::RuntimeArgs;
use trainer::experiment::executor::{
    check_feature_sets, default_out, run_manifest, run_stage, stage_is_done,
};
use trainer::experiment::lookup::Lookup;
use trainer::experiment::manifest::{DataSource, JobResources, Manifest};
use trainer::experiment::options::RunOptions;
use trainer::experiment::prefix::is_cut;
use trainer::experiment::records::Handover;
use trainer::experiment::slurm::{self, SlurmOptions};
use trainer::experiment::stages::{StageId, planned_folders};

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
    /// Print every stage in the order it would run, whether it is done (with its folder where
    /// the manifest alone decides it), and stop without computing anything.
    #[arg(long, conflicts_with_all = ["check", "stage"])]
    pub dry_run: bool,
    /// Loader threads, progress bars, device and libtorch threads.
    #[command(flatten)]
    pub runtime: RuntimeArgs,
    /// Where the stages run: in this process, or as Slurm jobs (docs/cluster.md).
    #[arg(long, value_enum, default_value_t = Executor::Local)]
    pub executor: Executor,
    /// Run only this stage (data:DATASET, train:EXPERIMENT:NETWORK:RUN,
    /// eval:EXPERIMENT:EVALUATION or report:EXPERIMENT): what each Slurm job runs.
    #[arg(long, value_name = "ID", conflicts_with_all = ["check", "only"])]
    pub stage: Option<StageId>,
    /// Slurm: every job's partition (over the manifest's [cluster] table).
    #[arg(long, value_name = "P")]
    pub partition: Option<String>,
    /// Slurm: every job's account.
    #[arg(long, value_name = "A")]
    pub account: Option<String>,
    /// Slurm: every job's time limit (minutes, HH:MM:SS, D-HH:MM:SS).
    #[arg(long, value_name = "T")]
    pub time: Option<String>,
    /// Slurm: submit the jobs and return without waiting for them.
    #[arg(long)]
    pub detach: bool,
}

/// Where `trainer run`'s stages run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Executor {
    /// One stage after another in this process.
    Local,
    /// Each stage as a Slurm job (`sbatch`), after the jobs it needs.
    Slurm,
}

/// Runs `trainer run`.
pub fn run(args: &RunArgs, plugin_dir: Option<&Path>) -> Result<()> {
    let slurm_only = [
        ("--partition", args.partition.is_some()),
        ("--account", args.account.is_some()),
        ("--time", args.time.is_some()),
        ("--detach", args.detach),
    ];
    if let (Executor::Local, Some((flag, _))) =
        (args.executor, slurm_only.iter().find(|(_, given)| *given))
    {
        bail!("{flag} is for --executor slurm");
    }
    let manifest = Manifest::load(&args.manifest)?;
    let registry = PluginRegistry::discover(plugin_dir)?;
    if args.check {
        return check(args, &manifest, &registry);
    }
    let device = args.runtime.start()?;
    let options = RunOptions {
        out: args
            .out
            .clone()
            .unwrap_or_else(|| default_out(&args.manifest)),
        only: args.only.clone(),
        plugin_dir: plugin_dir.map(Path::to_path_buf),
        device,
        loader_threads: args.runtime.loader_threads,
        progress: !args.runtime.no_progress,
        lookup: Lookup::compute(),
        handover: Handover::default(),
    };
    if args.dry_run {
        print!("{}", dry_run(&manifest, &registry, &options)?);
        return Ok(());
    }
    if let Some(stage) = &args.stage {
        return run_stage(&manifest, &registry, &options, stage).map(|_| ());
    }
    match args.executor {
        Executor::Local => {
            run_manifest(&manifest, &registry, &options)?;
        }
        Executor::Slurm => {
            let slurm = SlurmOptions {
                overrides: JobResources {
                    partition: args.partition.clone(),
                    account: args.account.clone(),
                    time: args.time.clone(),
                    ..JobResources::default()
                },
                detach: args.detach,
                program: std::env::current_exe().context("cannot find this program's path")?,
                threads: tch::get_num_threads().max(1) as usize,
            };
            let submitted = slurm::run(&manifest, &registry, &options, &slurm)?;
            let verb = if args.detach { "submitted" } else { "ran" };
            eprintln!("==> slurm: {verb} {submitted} job(s)");
            if !args.detach {
                for e in manifest.select(&args.only)? {
                    let dir = options.out.join("reports").join(&e.name);
                    eprintln!(
                        "==> [{}] report: {}",
                        e.name,
                        dir.join("report.md").display()
                    );
                }
            }
        }
    }
    Ok(())
}

/// `trainer run --check`: the selected experiments' feature sets load, their generation inputs
/// exist, and a line per experiment and data ladder says what would run.
fn check(args: &RunArgs, manifest: &Manifest, registry: &PluginRegistry) -> Result<()> {
    let selected = manifest.select(&args.only)?;
    check_feature_sets(manifest, &selected, registry)?;
    for &e in &selected {
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
            "{}: {} feature set(s) x {} run(s), {}, {}, data {}, evaluation '{}', training {}",
            e.name,
            e.feature_sets.len(),
            e.runs,
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
            e.settings.length_label(),
            e.data_label()
                + &e.val_data
                    .iter()
                    .map(|v| format!(", validated on {}", v.name))
                    .collect::<String>()
                + &e.test_data
                    .iter()
                    .map(|t| format!(", tested on {}", t.name))
                    .collect::<String>(),
            match e.evaluations.is_empty() {
                true => "none".to_string(),
                false => e
                    .evaluations
                    .iter()
                    .map(|v| v.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            },
            e.settings.recipe_label()
        );
    }
    for group in manifest.selected_ladders(&selected) {
        let rungs = manifest.ladder_rungs(&group);
        let sizes: Vec<String> = rungs
            .iter()
            .filter_map(|r| r.train_positions)
            .map(|n| n.to_string())
            .collect();
        println!(
            "{group}: a data ladder of {} rungs ({} positions), drawn once every rung is done",
            rungs.len(),
            sizes.join(", ")
        );
    }
    Ok(())
}

/// `trainer run --dry-run`: a line per stage of the selected experiments in the order a run
/// takes them, `NAME  STATE  FOLDER`, then a count. The state is what the Slurm executor's
/// probe finds: `done`, or `to do` (a training run done with fewer epochs than now asked is
/// `to do`: it resumes). The folder is shown where the manifest alone decides it (data, rungs,
/// training runs); the others are keyed by networks not trained yet.
fn dry_run(manifest: &Manifest, registry: &PluginRegistry, options: &RunOptions) -> Result<String> {
    let selected = manifest.select(&options.only)?;
    let planned = planned_folders(manifest, registry, &selected, &options.out)?;
    let probe = options.probing();
    let mut lines: Vec<(String, &str, String)> = Vec::new();
    for stage in trainer::experiment::stages::graph(manifest, &selected)? {
        let name = stage.id.to_string();
        let rung_name = format!("{name} rung");
        for rung in planned.iter().filter(|p| p.name == rung_name) {
            let state = if is_cut(&rung.dir) { "done" } else { "to do" };
            lines.push((rung.name.clone(), state, rung.dir.display().to_string()));
        }
        let state = match stage_is_done(manifest, registry, &probe, &stage.id)? {
            true => "done",
            false => "to do",
        };
        let dir = planned
            .iter()
            .find(|p| p.name == name)
            .map_or(String::new(), |p| p.dir.display().to_string());
        lines.push((name, state, dir));
    }
    let width = lines.iter().map(|l| l.0.len()).max().unwrap_or(0);
    let mut text = String::new();
    for (name, state, dir) in &lines {
        let line = format!("{name:width$}  {state:5}  {dir}");
        text.push_str(line.trim_end());
        text.push('\n');
    }
    let done = lines.iter().filter(|l| l.1 == "done").count();
    text.push_str(&format!(
        "{} stages: {done} done, {} to do\n",
        lines.len(),
        lines.len() - done
    ));
    Ok(text)
}
