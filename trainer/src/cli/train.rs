//! `trainer train`, `trainer export` and `trainer quant-report`.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use host::nnue::{Kernels, Nnue};
use plugin_api::{FeatureSet, PluginRegistry};

use super::FilterArgs;
use super::device::{DeviceArg, apply_threads};
use trainer::data::{self, Format, ReadOptions, Sample};
use trainer::model::Shape;
use trainer::train::checkpoint;
use trainer::train::export::{calibration_activations, export, quantize_calibrated};
use trainer::train::objective::{Method, MethodSettings};
use trainer::train::quant::{compare, plot_histogram};
use trainer::train::run::{
    DataFile, FilterSpec, Runtime, TrainConfig, TrainError, TrainState, train,
};

/// The training method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum MethodArg {
    /// Method 1: the data's scores as targets, loss |W(target) - W(output)|^p in WDL space.
    Score,
    /// Method 2: PQR triplets (position, next position of the game, random move).
    Pqr,
}

/// Arguments of `trainer train`.
#[derive(Args, Debug, Clone)]
pub struct TrainArgs {
    /// Feature set, blocks joined by '+' (its size is N).
    #[arg(long)]
    pub spec: String,
    /// First-layer width per perspective (a multiple of 32).
    #[arg(long, default_value_t = 512)]
    pub l1: usize,
    /// Hidden width.
    #[arg(long, default_value_t = 32)]
    pub l2: usize,
    /// Training method.
    #[arg(long, value_enum, default_value = "score")]
    pub method: MethodArg,
    /// Training file (repeat for several; format from the extension or --format).
    #[arg(long = "in", value_name = "FILE", required = true)]
    pub inputs: Vec<PathBuf>,
    /// Validation file, held out from training (repeat for several).
    #[arg(long = "val", value_name = "FILE", required = true)]
    pub val: Vec<PathBuf>,
    /// Format of all data files, overriding their extensions.
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<Format>,
    /// Validation positions (triplets for PQR) taken from the start of the validation files.
    #[arg(long, default_value_t = 1_000_000)]
    pub val_size: u64,
    /// Epochs to train.
    #[arg(long, default_value_t = 256)]
    pub epochs: u64,
    /// Positions (triplets) per epoch.
    #[arg(long, default_value_t = 100_000_000)]
    pub epoch_size: u64,
    /// Positions (triplets) per optimizer step.
    #[arg(long, default_value_t = 16384)]
    pub batch_size: usize,
    /// Adam's learning rate in the first epoch.
    #[arg(long, default_value_t = 5e-4)]
    pub lr: f64,
    /// Learning-rate factor per epoch.
    #[arg(long, default_value_t = 0.99)]
    pub gamma: f64,
    /// Scale of the target's win rate sigma(score / S) (the reference code's 410).
    #[arg(long, default_value_t = 410.0, conflicts_with = "wdl")]
    pub target_scale: f64,
    /// Scale of the output's win rate sigma(output / S) (the reference code's 361; also PQR's).
    #[arg(long, default_value_t = 361.0, conflicts_with = "wdl")]
    pub output_scale: f64,
    /// A fitted win-rate model sigma((e - A) / B) for target and output alike (the thesis text:
    /// 1.28,297.21; `trainer wdl-fit` fits one).
    #[arg(long, value_name = "A,B", value_parser = parse_pair)]
    pub wdl: Option<(f64, f64)>,
    /// Exponent of the score loss.
    #[arg(long, default_value_t = 2.6)]
    pub power: f64,
    /// Weight of the score in the target lambda*W(score) + (1 - lambda)*result (1: scores only).
    #[arg(long, default_value_t = 1.0)]
    pub lambda: f64,
    /// Shuffle buffer of the loader, in positions (triplets).
    #[arg(long, default_value_t = 262_144)]
    pub shuffle: usize,
    /// Start from this checkpoint or network file (weights only) instead of random weights.
    #[arg(long, value_name = "FILE")]
    pub init: Option<PathBuf>,
    /// Export the network every K epochs (the last epoch is always exported).
    #[arg(long, value_name = "K", default_value_t = 0)]
    pub export_every: u64,
    /// Also export at these epochs (comma-separated).
    #[arg(long, value_name = "EPOCHS", value_delimiter = ',')]
    pub export_at: Vec<u64>,
    /// Output folder: checkpoint, metrics, plots, networks.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Continue from the output folder's checkpoint if there is one.
    #[arg(long)]
    pub resume: bool,
    /// Loader threads (0: one per core).
    #[arg(long, default_value_t = 0, value_parser = super::thread_count)]
    pub loader_threads: usize,
    /// No progress bar.
    #[arg(long)]
    pub no_progress: bool,
    /// Device and libtorch threads.
    #[command(flatten)]
    pub device: DeviceArg,
    /// Position filters (--quiet is the thesis's rule) and the seed.
    #[command(flatten)]
    pub filter: FilterArgs,
    /// For tests: abort the process (no clean-up, as a kill would) after this many optimizer
    /// steps.
    #[arg(long, hide = true)]
    pub abort_after_steps: Option<u64>,
}

/// Parses `A,B` into two numbers.
fn parse_pair(s: &str) -> Result<(f64, f64), String> {
    let (a, b) = s
        .split_once(',')
        .ok_or_else(|| format!("'{s}' is not two numbers A,B"))?;
    let num = |x: &str| {
        x.trim()
            .parse::<f64>()
            .map_err(|e| format!("'{x}' in '{s}': {e}"))
    };
    Ok((num(a)?, num(b)?))
}

fn data_files(paths: &[PathBuf], format: Option<Format>) -> Result<Vec<DataFile>, String> {
    paths
        .iter()
        .map(|p| {
            Ok(DataFile {
                path: p.clone(),
                format: Format::resolve(format, p)?.name().to_string(),
            })
        })
        .collect()
}

impl TrainArgs {
    /// The run's configuration for a feature set of `n` features.
    pub fn config(&self, n: usize) -> Result<TrainConfig, String> {
        let method = Method::from_settings(&MethodSettings {
            pqr: self.method == MethodArg::Pqr,
            wdl: self.wdl,
            target_scale: self.target_scale,
            output_scale: self.output_scale,
            power: self.power,
            lambda: self.lambda,
        });
        let filter = self.filter.config()?;
        Ok(TrainConfig {
            feature_set: self.spec.clone(),
            shape: Shape {
                n,
                l1: self.l1,
                l2: self.l2,
            },
            method,
            train: data_files(&self.inputs, self.format)?,
            val: data_files(&self.val, self.format)?,
            val_size: self.val_size,
            filter: FilterSpec::from_config(&filter),
            epochs: self.epochs,
            epoch_size: self.epoch_size,
            batch_size: self.batch_size,
            lr: self.lr,
            gamma: self.gamma,
            adam: Default::default(),
            seed: self.filter.seed,
            shuffle_buffer: self.shuffle,
            init: self.init.clone(),
            export_every: self.export_every,
            export_epochs: self.export_at.clone(),
        })
    }
}

/// Runs `trainer train`.
pub fn run_train(args: &TrainArgs, set: &FeatureSet) -> Result<(), String> {
    trainer::train::tune_allocator();
    apply_threads(args.device.threads);
    let config = args.config(set.size() as usize)?;
    let rt = Runtime {
        device: args.device.device()?,
        loader_threads: args.loader_threads,
        out: args.out.clone(),
        resume: args.resume,
        progress: !args.no_progress,
        log: true,
        stop_after_steps: args.abort_after_steps,
    };
    match train(config, set, &rt) {
        Ok(outcome) => {
            let last = outcome.state.history.last();
            println!(
                "trained {} epochs ({} positions{}); validation loss {} (constant predictor {}); network {}",
                outcome.state.epoch,
                last.map_or(0, |m| m.positions),
                if args.method == MethodArg::Pqr {
                    " as triplets"
                } else {
                    ""
                },
                last.map_or("-".into(), |m| format!("{:.6}", m.val_loss)),
                last.map_or("-".into(), |m| format!("{:.6}", m.val_constant)),
                outcome.net.display()
            );
            Ok(())
        }
        Err(TrainError::Interrupted { step }) => {
            eprintln!("aborting after step {step} (--abort-after-steps)");
            std::process::abort()
        }
        Err(e) => Err(e.to_string()),
    }
}

/// Arguments of `trainer export`.
#[derive(Args, Debug, Clone)]
pub struct ExportArgs {
    /// A training checkpoint.
    #[arg(long, value_name = "FILE")]
    pub checkpoint: PathBuf,
    /// The network file to write (the project's format, `host::nnue`).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Calibration positions for the rounding of the hidden and output layers: the first ones
    /// of this data file (without it, every weight is rounded to nearest; the quantization error
    /// is then several times larger).
    #[arg(long, value_name = "FILE")]
    pub data: Option<PathBuf>,
    /// Format of the data file, overriding its extension.
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<Format>,
    /// Number of calibration positions.
    #[arg(long, default_value_t = trainer::train::export::CALIBRATION_POSITIONS)]
    pub calibration: usize,
}

/// The first `n` readable samples of a data file.
fn read_samples(path: &Path, format: Option<Format>, n: usize) -> Result<Vec<Sample>, String> {
    let format = Format::resolve(format, path)?;
    let reader =
        data::open_reader(path, format, None, ReadOptions::default()).map_err(|e| e.to_string())?;
    Ok(reader.filter_map(Result::ok).take(n).collect())
}

/// The calibration activations of `model` on `samples` (encoded through `set`).
fn calibration(
    model: &trainer::model::Model,
    set: &FeatureSet,
    samples: &[Sample],
) -> Result<tch::Tensor, String> {
    let mut batch = trainer::batch::SparseBatch::with_capacity(set, samples.len());
    let mut scratch = Vec::new();
    for s in samples {
        batch
            .push(set, &s.board, &mut scratch)
            .map_err(|e| e.to_string())?;
    }
    let input = trainer::model::SparseInput::from_batch(&batch);
    Ok(calibration_activations(model, &[&input], samples.len()))
}

/// Reads a checkpoint and its model (CPU).
fn read_checkpoint(path: &Path) -> Result<(TrainState, trainer::model::Model), String> {
    let loaded = checkpoint::read::<TrainState>(path)?;
    let model = loaded.model(loaded.state.config.shape, tch::Device::Cpu)?;
    Ok((loaded.state, model))
}

/// Runs `trainer export` (plugins are needed only to encode calibration positions).
pub fn run_export(args: &ExportArgs, plugin_dir: Option<&Path>) -> Result<(), String> {
    let (state, model) = read_checkpoint(&args.checkpoint)?;
    let x = match &args.data {
        Some(path) if args.calibration > 0 => {
            let registry = PluginRegistry::discover(plugin_dir).map_err(|e| e.to_string())?;
            let set = registry
                .feature_set(&state.config.feature_set)
                .map_err(|e| e.to_string())?;
            let samples = read_samples(path, args.format, args.calibration)?;
            calibration(&model, &set, &samples)?
        }
        _ => {
            eprintln!("note: no calibration data (--data): rounding every weight to nearest");
            calibration_activations(&model, &[], 0)
        }
    };
    let net = export(
        &model,
        &state.config.feature_set,
        state.block_infos()?,
        &x,
        &args.out,
    )?;
    println!(
        "wrote {} ({} -> {} -> {} -> 1, feature set {}, epoch {})",
        args.out.display(),
        net.n(),
        net.l1(),
        net.l2(),
        net.feature_set(),
        state.epoch
    );
    Ok(())
}

/// Arguments of `trainer quant-report`.
#[derive(Args, Debug, Clone)]
pub struct QuantArgs {
    /// A training checkpoint (the float model).
    #[arg(long, value_name = "FILE")]
    pub checkpoint: PathBuf,
    /// Compare with this exported network file instead of quantizing the checkpoint in memory.
    #[arg(long, value_name = "FILE")]
    pub net: Option<PathBuf>,
    /// Positions: the first ones of this data file.
    #[arg(long, value_name = "FILE")]
    pub data: PathBuf,
    /// Format of the data file, overriding its extension.
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<Format>,
    /// Number of positions compared (after the calibration positions).
    #[arg(long, default_value_t = 50_000)]
    pub positions: usize,
    /// Calibration positions for quantizing the checkpoint (the first ones of the data file;
    /// the comparison uses the positions after them). 0: round every weight to nearest.
    #[arg(long, default_value_t = trainer::train::export::CALIBRATION_POSITIONS)]
    pub calibration: usize,
    /// Folder for the histogram (quant-error.svg) and the report (quant-report.json).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Kernels of the quantized evaluation (scalar, avx2, avx512, avx512vnni; default: the best).
    #[arg(long)]
    pub simd: Option<String>,
}

/// Runs `trainer quant-report`.
pub fn run_quant(args: &QuantArgs, registry: &PluginRegistry) -> Result<(), String> {
    let (state, model) = read_checkpoint(&args.checkpoint)?;
    let cal = if args.net.is_some() {
        0
    } else {
        args.calibration
    };
    let mut samples = read_samples(&args.data, args.format, cal + args.positions)?;
    if samples.len() <= cal {
        return Err(format!(
            "{}: only {} positions, not more than the {cal} calibration positions",
            args.data.display(),
            samples.len()
        ));
    }
    let samples = samples.split_off(cal.min(samples.len()));
    let nnue = match &args.net {
        Some(path) => Nnue::load(path, registry).map_err(|e| e.to_string())?,
        None => {
            let set = registry
                .feature_set(&state.config.feature_set)
                .map_err(|e| e.to_string())?;
            let cal_samples = read_samples(&args.data, args.format, cal)?;
            let x = calibration(&model, &set, &cal_samples)?;
            let net =
                quantize_calibrated(&model, &state.config.feature_set, state.block_infos()?, &x)?;
            Nnue::bind(net, "(quantized checkpoint)", registry).map_err(|e| e.to_string())?
        }
    };
    let kernels = match &args.simd {
        Some(name) => Kernels::new(name.parse::<host::nnue::SimdLevel>()?.check()?)?,
        None => Kernels::new(host::nnue::SimdLevel::from_env()?)?,
    };
    let report = compare(&model, &nnue, kernels, &samples)?;
    println!("{report}");
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        plot_histogram(&report, &dir.join("quant-error.svg"))?;
        let json = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
        trainer::atomic_file::write_atomic(&dir.join("quant-report.json"), json.as_bytes())?;
        println!(
            "wrote {} and {}",
            dir.join("quant-error.svg").display(),
            dir.join("quant-report.json").display()
        );
    }
    Ok(())
}
