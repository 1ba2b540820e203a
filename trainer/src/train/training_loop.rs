//! The training loop: epochs of optimizer steps on the [schedule](super::schedule), weight
//! clipping, a validation loss per epoch, atomic checkpoints, resuming, metrics, plots and
//! exports, until the epoch cap or the [stop rule](super::stop); the best epoch's network is
//! the run's result.
//!
//! ## Output folder
//!
//! | file | what |
//! | --- | --- |
//! | `checkpoint.ckpt` | the state after the last finished epoch ([`super::checkpoint`]) |
//! | `metrics.csv`, `metrics.jsonl` | one row per finished epoch ([`EpochMetrics`]: losses, dead and saturated units, gradient norms) |
//! | `loss.svg` | training and validation loss per epoch, and the constant predictor's |
//! | `units.svg` | dead and saturated units of both clipped layers per epoch ([`super::diagnostics`]) |
//! | `nets/epoch-NNNN.nnue` | the quantized network of the best epoch so far, of the last one, and of those asked for (`nnue` format); a best epoch superseded leaves only if asked for |
//!
//! Everything is rewritten atomically after each epoch, the checkpoint first: a run killed at
//! any moment loses at most the epoch in progress, and `--resume` continues from the
//! checkpoint.
//!
//! ## Reproducibility
//!
//! The weights are initialized from the seed by a portable generator, and the data of epoch e
//! comes from a loader seeded with (seed, e) alone (unit order, shuffle, random skips; see
//! [`crate::loader`]), whose batches do not depend on thread counts. The CPU step is
//! deterministic (libtorch's matrix products on a fixed thread count, and this crate's first
//! layer, whose sums have a fixed order), so a CPU run repeats exactly, and a resumed run
//! continues exactly as an uninterrupted one: epoch e is the same whether it follows epoch e−1
//! in the same process or in a resumed one. The learning rate and λ are functions of the step
//! and the stop rule one of the validation losses, so they continue exactly too.

use anyhow::{Context, Result, bail};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use nnue::{BlockInfo, WeightType};
use plugin_api::FeatureSet;
use serde::{Deserialize, Serialize};
use tch::{Device, Kind, Tensor};

use super::checkpoint::{self, CheckpointError};
use super::config::{DataFile, TrainConfig};
use super::diagnostics::{GradientNormSum, GradientNorms, UnitHealth, gradient_columns};
use super::export::{
    CALIBRATION_POSITIONS, calibration_activations, dequantize, export, narrow_rows, network_blocks,
};
use super::loss::ScoreLoss;
use super::objective::{Method, MethodBatch, PqrBatch, ScoreBatch, evaluate, train_step_with};
use super::optim::{Adam, layer_rates};
use super::psqt_init::psqt_piece_values;
use super::schedule::Schedule;
use crate::analysis::plot::{self, Series, SeriesKind};
use crate::atomic_file::{write_atomic, write_atomic_with};
use crate::data::ErrorPolicy;
use crate::data::filter::{FilterConfig, FilterCounts};
use crate::loader::{Background, BatchLoader, Examples, Loader, LoaderConfig, TripletLoader};
use crate::model::{Model, SparseInput, tensor_to_vec};
use nnue::Shape;

/// The metrics of one finished epoch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EpochMetrics {
    /// The epoch (1-based).
    pub epoch: u64,
    /// Positions (triplets) trained on so far.
    pub positions: u64,
    /// Mean training loss over the epoch's steps.
    pub train_loss: f64,
    /// Validation loss after the epoch.
    pub val_loss: f64,
    /// Validation loss of the best constant predictor.
    pub val_constant: f64,
    /// Learning rate of the epoch.
    pub lr: f64,
    /// Seconds the epoch's steps took.
    pub seconds: f64,
    /// Training throughput of the epoch (positions or triplets per second, data loading
    /// included).
    pub per_second: f64,
    /// Dead and saturated units on the validation positions after the epoch.
    #[serde(default)]
    pub units: UnitHealth,
    /// Mean gradient norm of each parameter over the epoch's steps.
    #[serde(default)]
    pub gradients: GradientNorms,
}

/// The training state stored in a checkpoint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainState {
    /// The run's configuration.
    pub config: TrainConfig,
    /// Block identities of the feature set trained with (for exports without plugins).
    pub blocks: Vec<BlockRecord>,
    /// Epochs finished.
    pub epoch: u64,
    /// Optimizer steps taken.
    pub step: u64,
    /// Metrics of the finished epochs.
    pub history: Vec<EpochMetrics>,
}

/// A feature block's identity as stored in a checkpoint.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockRecord {
    /// Canonical block name.
    pub name: String,
    /// Number of indices.
    pub size: u32,
    /// Layout version.
    pub layout_version: u32,
    /// Layout identity (as a string: JSON numbers lose 64-bit precision in many readers).
    pub layout_id: String,
    /// The weight type its first-layer rows are exported in (`i16` or `i8`).
    #[serde(default)]
    pub weight_type: String,
}

impl BlockRecord {
    /// The record of a block.
    pub fn from_info(b: &BlockInfo) -> BlockRecord {
        BlockRecord {
            name: b.name.clone(),
            size: b.size,
            layout_version: b.layout_version,
            layout_id: format!("{:016x}", b.layout_id),
            weight_type: b.weight_type.name().to_string(),
        }
    }

    /// The block's identity.
    pub fn info(&self) -> Result<BlockInfo> {
        Ok(BlockInfo {
            name: self.name.clone(),
            size: self.size,
            layout_version: self.layout_version,
            layout_id: u64::from_str_radix(&self.layout_id, 16)
                .with_context(|| format!("bad layout id '{}'", self.layout_id))?,
            weight_type: match self.weight_type.as_str() {
                "" => WeightType::I16,
                name => name.parse().map_err(anyhow::Error::msg)?,
            },
        })
    }
}

impl TrainState {
    /// The blocks' identities.
    pub fn block_infos(&self) -> Result<Vec<BlockInfo>> {
        self.blocks.iter().map(BlockRecord::info).collect()
    }
}

/// How a run is executed (nothing here changes its result).
#[derive(Clone, Debug)]
pub struct Runtime {
    /// Where the tensors live.
    pub device: Device,
    /// Threads of the data loader's pool (0: one per core).
    pub loader_threads: usize,
    /// The output folder.
    pub out: PathBuf,
    /// Continue from the folder's checkpoint if there is one (else refuse to overwrite it).
    pub resume: bool,
    /// Draw a progress bar (on standard error, when it is a terminal).
    pub progress: bool,
    /// Print one line per epoch on standard error.
    pub log: bool,
    /// Stop after this many optimizer steps in this process, without saving anything (as if
    /// killed): for tests of resuming.
    pub stop_after_steps: Option<u64>,
}

impl Runtime {
    /// CPU, default threads, progress and log on, no resume.
    pub fn new(out: impl Into<PathBuf>) -> Runtime {
        Runtime {
            device: Device::Cpu,
            loader_threads: 0,
            out: out.into(),
            resume: false,
            progress: true,
            log: true,
            stop_after_steps: None,
        }
    }

    /// The checkpoint's path.
    pub fn checkpoint_path(&self) -> PathBuf {
        self.out.join("checkpoint.ckpt")
    }

    /// The path of the network exported after `epoch`.
    pub fn net_path(&self, epoch: u64) -> PathBuf {
        net_path(&self.out, epoch)
    }
}

/// The path of the network exported after `epoch` in the output folder `out`.
pub fn net_path(out: &Path, epoch: u64) -> PathBuf {
    out.join("nets").join(format!("epoch-{epoch:04}.nnue"))
}

/// Why training stopped early.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TrainError {
    /// A bad configuration, bad data, a file that cannot be written...
    Failed(String),
    /// [`Runtime::stop_after_steps`] was reached.
    Interrupted {
        /// Optimizer steps taken in total.
        step: u64,
    },
}

impl fmt::Display for TrainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrainError::Failed(e) => f.write_str(e),
            TrainError::Interrupted { step } => write!(f, "stopped after step {step} (as asked)"),
        }
    }
}

impl std::error::Error for TrainError {}

impl From<String> for TrainError {
    fn from(e: String) -> Self {
        TrainError::Failed(e)
    }
}

impl From<CheckpointError> for TrainError {
    fn from(e: CheckpointError) -> Self {
        TrainError::Failed(e.to_string())
    }
}

impl From<anyhow::Error> for TrainError {
    /// The whole chain of context on one line.
    fn from(e: anyhow::Error) -> Self {
        TrainError::Failed(format!("{e:#}"))
    }
}

/// What a finished run leaves.
#[derive(Clone, Debug)]
pub struct TrainOutcome {
    /// The final state (as in the checkpoint).
    pub state: TrainState,
    /// The epoch handed over (1-based): the one of lowest validation loss ([`super::stop::StopRule::best`]).
    pub best_epoch: u64,
    /// The network of the best epoch: the run's result.
    pub net: PathBuf,
    /// The network of the last epoch (the same file when the last is the best).
    pub last: PathBuf,
}

/// The initial weights of a run: a checkpoint's or a network file's (own format), on `device`.
pub fn load_init(path: &Path, shape: &Shape, device: Device) -> Result<Model> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    if checkpoint::is_checkpoint(&bytes) {
        let loaded = checkpoint::decode::<serde_json::Value>(&bytes)
            .map_err(anyhow::Error::msg)
            .with_context(|| format!("cannot read checkpoint {}", path.display()))?;
        return loaded.model(shape, device).map_err(anyhow::Error::msg);
    }
    let net = nnue::read_own(path)?;
    let (net_shape, tensors) = dequantize(&net);
    if net_shape != *shape {
        bail!(
            "{}: the network is N {} -> L1 {}, {}; the run needs N {} -> L1 {}, {}",
            path.display(),
            net.n(),
            net.l1(),
            net.arch(),
            shape.n,
            shape.l1,
            shape.arch
        );
    }
    Ok(Model::from_tensors(net_shape, tensors, device))
}

/// Batches of one epoch (or the validation set) as tensors, converted on a helper thread
/// (`batches`) two ahead of the step, with what the loader's filters had dropped by the time
/// the latest batch was sent (read ahead included).
type Prefetch = Background<MethodBatch, String, FilterCounts>;

/// The loader's batches converted by `convert` (called in order, once per batch) on a helper
/// thread, at most `limit` examples.
fn prefetch<K: Examples>(
    loader: Loader<K>,
    limit: Option<u64>,
    mut convert: impl FnMut(K::Batch) -> MethodBatch + Send + 'static,
) -> Result<Prefetch> {
    Background::spawn("batches", 2, move |out| {
        let mut sent = 0u64;
        let mut loader = loader;
        while let Some(item) = loader.next() {
            if limit.is_some_and(|l| sent >= l) {
                break;
            }
            *out.report() = loader.report().filter;
            let batch = item.map(&mut convert).map_err(|e| e.to_string());
            sent += batch.as_ref().map_or(0, |b| b.len() as u64);
            if out.send(batch).is_err() {
                break;
            }
        }
    })
}

/// A 64-bit mix of the run's seed and a stream number (SplitMix64).
pub fn mix_seed(seed: u64, stream: u64) -> u64 {
    let mut z = seed ^ stream.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The batches of training epoch `epoch` (cycling over the files as often as needed) or, with
/// `epoch = None`, of the validation set (one pass, in file order).
fn batches(
    config: &TrainConfig,
    set: &FeatureSet,
    epoch: Option<u64>,
    loader_threads: usize,
) -> Result<Prefetch> {
    let (files, seed, shuffle, epochs, limit) = match epoch {
        Some(e) => (
            &config.train,
            mix_seed(config.seed(), e),
            config.recipe.shuffle,
            None,
            Some(config.steps_per_epoch() * config.batch_size() as u64),
        ),
        None => (
            &config.val,
            mix_seed(config.seed(), u64::MAX),
            0,
            Some(1),
            Some(config.val_size()),
        ),
    };
    let inputs = files
        .iter()
        .map(DataFile::input)
        .collect::<Result<Vec<_>, _>>()?;
    // nnue-pytorch's skips shape what is trained on; the validation set is scored whole (the
    // rules that define a usable position, quiet and ply window, apply to both).
    let filter = match epoch {
        Some(_) => FilterConfig {
            seed,
            ..config.filter()
        },
        None => FilterConfig {
            seed,
            ..config.filter().without_skips()
        },
    };
    let batch_size = match epoch {
        Some(_) => config.batch_size(),
        None => config.batch_size().min(config.val_size() as usize).max(1),
    };
    let loader = LoaderConfig {
        inputs,
        batch_size,
        threads: loader_threads,
        shuffle_buffer: shuffle,
        seed,
        filter,
        epochs,
        on_error: ErrorPolicy::Skip,
        keep_last: epoch.is_none(),
        ..LoaderConfig::default()
    };
    // λ of each training step from the schedule; the validation targets use the last one, so
    // that every epoch's validation loss measures the same target.
    let schedule = config.schedule();
    let first_step = epoch.map(|e| e.saturating_mul(config.steps_per_epoch()));
    let mut k = 0u64;
    match config.method() {
        Method::Score(loss) => prefetch(BatchLoader::new(loader, set.clone())?, limit, move |b| {
            let lambda = match first_step {
                Some(first) => schedule.lambda_at(first + k),
                None => schedule.lambda_end,
            };
            k += 1;
            MethodBatch::Score(ScoreBatch::new(&b, &ScoreLoss { lambda, ..loss }))
        }),
        Method::Pqr(_) => {
            let loader = LoaderConfig {
                shuffle_buffer: shuffle.min(1 << 20),
                ..loader
            };
            prefetch(TripletLoader::new(loader, set.clone())?, limit, |t| {
                MethodBatch::Pqr(PqrBatch::new(&t))
            })
        }
    }
}

/// The validation batches on `device` (at most `val_size` examples, the last batch cut to
/// size) and the loss of the best constant predictor on them.
fn validation_set(
    config: &TrainConfig,
    set: &FeatureSet,
    rt: &Runtime,
) -> Result<(Vec<MethodBatch>, f64)> {
    let mut out = Vec::new();
    let mut targets: Vec<f32> = Vec::new();
    let mut n = 0u64;
    for b in batches(config, set, None, rt.loader_threads)? {
        let b = b.map_err(anyhow::Error::msg)?;
        if let MethodBatch::Score(s) = &b {
            targets.extend(tensor_to_vec(&s.targets));
        }
        n += b.len() as u64;
        out.push(b.to_device(rt.device));
    }
    if n == 0 {
        bail!("the validation files hold no usable position");
    }
    // The loader sends whole batches: cut the surplus of the last one.
    if n > config.val_size() {
        let last = out.pop().expect("a batch");
        let keep = last.len() - (n - config.val_size()) as usize;
        out.push(truncate(last, keep));
        targets.truncate(config.val_size() as usize);
    }
    let constant = match &config.method() {
        Method::Score(l) => l.constant_baseline(&targets),
        Method::Pqr(l) => l.constant_baseline(),
    };
    Ok((out, constant))
}

/// The first `keep` examples of a batch.
fn truncate(batch: MethodBatch, keep: usize) -> MethodBatch {
    let cut = |input: &SparseInput, from: usize, count: usize| -> (Tensor, Tensor) {
        // Bags of positions from..from+count (two per position).
        let offsets = input.offsets.to_device(Device::Cpu);
        let total = input.indices.size()[0];
        let bag = |i: usize| -> i64 {
            if i < offsets.size()[0] as usize {
                offsets.int64_value(&[i as i64])
            } else {
                total
            }
        };
        let (a, b) = (bag(2 * from), bag(2 * (from + count)));
        let idx = input.indices.narrow(0, a, b - a);
        let off = offsets.narrow(0, 2 * from as i64, 2 * count as i64) - a;
        (idx, off.to_device(input.offsets.device()))
    };
    match batch {
        MethodBatch::Score(s) => {
            let (indices, offsets) = cut(&s.input, 0, keep);
            MethodBatch::Score(ScoreBatch {
                len: keep,
                input: SparseInput {
                    len: keep,
                    indices,
                    offsets,
                    pieces: s.input.pieces[..keep].to_vec(),
                },
                targets: s.targets.narrow(0, 0, keep as i64),
            })
        }
        MethodBatch::Pqr(p) => {
            // p's, q's and r's of the first `keep` triplets.
            let parts: Vec<(Tensor, Tensor)> =
                (0..3).map(|k| cut(&p.input, k * p.len, keep)).collect();
            let mut indices = Vec::new();
            let mut offsets = Vec::new();
            let mut base = 0i64;
            for (idx, off) in &parts {
                offsets.push(off + base);
                base += idx.size()[0];
                indices.push(idx.shallow_clone());
            }
            MethodBatch::Pqr(PqrBatch {
                len: keep,
                input: SparseInput {
                    len: 3 * keep,
                    indices: Tensor::cat(&indices, 0),
                    offsets: Tensor::cat(&offsets, 0),
                    pieces: (0..3)
                        .flat_map(|k| &p.input.pieces[k * p.len..k * p.len + keep])
                        .copied()
                        .collect(),
                },
            })
        }
    }
}

fn progress_bar(rt: &Runtime, total: u64) -> ProgressBar {
    let pb = ProgressBar::with_draw_target(
        Some(total),
        if rt.progress {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    pb.set_style(
        ProgressStyle::with_template(
            "{prefix} [{bar:30}] {human_pos}/{human_len} {per_sec} ETA {eta} {msg}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    pb
}

/// Writes `metrics.csv`, `metrics.jsonl` and `loss.svg` from the history.
pub fn write_metrics(out: &Path, history: &[EpochMetrics]) -> Result<()> {
    let mut csv = format!(
        "epoch,positions,train_loss,val_loss,val_constant,lr,seconds,per_second,l1_dead,l1_saturated,hidden_dead,hidden_saturated,{}\n",
        gradient_columns()
    );
    let mut jsonl = String::new();
    for m in history {
        let u = &m.units;
        let grads: Vec<String> = m.gradients.0.iter().map(|g| format!("{g:.6e}")).collect();
        csv.push_str(&format!(
            "{},{},{},{},{},{},{:.3},{:.1},{:.4},{:.4},{:.4},{:.4},{}\n",
            m.epoch,
            m.positions,
            m.train_loss,
            m.val_loss,
            m.val_constant,
            m.lr,
            m.seconds,
            m.per_second,
            u.l1_dead,
            u.l1_saturated,
            u.hidden_dead,
            u.hidden_saturated,
            grads.join(",")
        ));
        jsonl.push_str(&serde_json::to_string(m)?);
        jsonl.push('\n');
    }
    write_atomic(&out.join("metrics.csv"), csv.as_bytes())?;
    write_atomic(&out.join("metrics.jsonl"), jsonl.as_bytes())?;
    let series = |name: &str, f: &dyn Fn(&EpochMetrics) -> f64, kind| Series {
        name: name.to_string(),
        points: history.iter().map(|m| (m.epoch as f64, f(m))).collect(),
        kind,
    };
    write_atomic_with(&out.join("loss.svg"), |tmp| {
        plot::lines(
            tmp,
            "Loss per epoch",
            "epoch",
            "loss",
            &[
                series("training", &|m| m.train_loss, SeriesKind::Line),
                series("validation", &|m| m.val_loss, SeriesKind::Line),
                series(
                    "constant predictor (validation)",
                    &|m| m.val_constant,
                    SeriesKind::Line,
                ),
            ],
        )
        .map_err(std::io::Error::other)
    })?;
    // The loss plot's companion: units that pass no gradient.
    write_atomic_with(&out.join("units.svg"), |tmp| {
        plot::lines(
            tmp,
            "Dead and saturated units (validation positions)",
            "epoch",
            "share of units",
            &[
                series("first layer dead", &|m| m.units.l1_dead, SeriesKind::Line),
                series(
                    "first layer saturated",
                    &|m| m.units.l1_saturated,
                    SeriesKind::Line,
                ),
                series("hidden dead", &|m| m.units.hidden_dead, SeriesKind::Line),
                series(
                    "hidden saturated",
                    &|m| m.units.hidden_saturated,
                    SeriesKind::Line,
                ),
            ],
        )
        .map_err(std::io::Error::other)
    })
}

/// Trains (or continues training) a network as `config` says, with `set` the feature set built
/// from the plugins (its size must be `config.shape.n`): epochs until the cap or the stop rule,
/// then the best epoch's network handed over.
pub fn train(
    config: TrainConfig,
    set: &FeatureSet,
    rt: &Runtime,
) -> Result<TrainOutcome, TrainError> {
    let mut run = TrainingLoop::start_or_resume(config, set, rt)?;
    while !run.finished() {
        run.epoch()?;
    }
    run.finish()
}

/// A run in progress: its model, optimizer and state, and what every epoch needs. Its three
/// steps each hold their part: [`start_or_resume`](Self::start_or_resume) (a fresh model or
/// the checkpoint's, under the same [identity](TrainConfig::identity)), [`epoch`](Self::epoch)
/// (train, validate, checkpoint, export) and [`finish`](Self::finish) (the best and the last
/// epoch's networks).
struct TrainingLoop<'a> {
    config: TrainConfig,
    set: &'a FeatureSet,
    rt: &'a Runtime,
    model: Model,
    adam: Adam,
    state: TrainState,
    /// The exported networks' blocks (with their weight types).
    blocks: Vec<BlockInfo>,
    /// The validation batches, on the device.
    val: Vec<MethodBatch>,
    /// The validation loss of the best constant predictor.
    val_constant: f64,
    schedule: Schedule,
    /// Each parameter's factor of the learning rate.
    rates: Vec<f64>,
    /// Optimizer steps taken in this process (for [`Runtime::stop_after_steps`]).
    steps_here: u64,
}

impl<'a> TrainingLoop<'a> {
    /// A fresh run, or the output folder's checkpoint continued (with `rt.resume`).
    fn start_or_resume(
        config: TrainConfig,
        set: &'a FeatureSet,
        rt: &'a Runtime,
    ) -> Result<TrainingLoop<'a>, TrainError> {
        config.check()?;
        if set.training_size() as usize != config.features || set.name() != config.feature_set {
            return Err(TrainError::Failed(format!(
                "the feature set '{}' has {} features; the configuration says '{}' with N = {}",
                set.name(),
                set.training_size(),
                config.feature_set,
                config.features
            )));
        }
        let io = |what: &Path, e: std::io::Error| format!("cannot create {}: {e}", what.display());
        std::fs::create_dir_all(rt.out.join("nets")).map_err(|e| io(&rt.out, e))?;
        let ckpt_path = rt.checkpoint_path();
        let blocks = network_blocks(set, &config.i8_blocks())?;
        let narrow = narrow_rows(set.plain_name(), &blocks)?;
        let records: Vec<BlockRecord> = blocks.iter().map(BlockRecord::from_info).collect();

        let (mut model, adam, state) = if ckpt_path.exists() {
            if !rt.resume {
                return Err(TrainError::Failed(format!(
                    "{} already holds a checkpoint: pass --resume to continue it, or choose another output folder",
                    rt.out.display()
                )));
            }
            let loaded = checkpoint::read::<TrainState>(&ckpt_path)?;
            if let Some(why) = config.resume_mismatch(&loaded.state.config) {
                return Err(TrainError::Failed(format!(
                    "cannot resume {}: the configuration differs from the checkpoint's: {why}",
                    ckpt_path.display()
                )));
            }
            if loaded.state.blocks != records {
                return Err(TrainError::Failed(format!(
                    "cannot resume {}: the feature blocks' identities differ from the loaded plugins'",
                    ckpt_path.display()
                )));
            }
            let model = loaded.model(&config.shape(), rt.device)?;
            let adam = loaded.adam(config.adam(), loaded.state.step, rt.device);
            let mut state = loaded.state;
            state.config = config.clone();
            (model, adam, state)
        } else {
            let model = match &config.init {
                Some(path) => load_init(path, &config.shape(), rt.device)?,
                None => {
                    let terms: Vec<u32> = set.terms().iter().map(|t| t.size).collect();
                    let mut model = Model::with_init(
                        config.shape(),
                        config.first_layer_init,
                        &terms,
                        config.seed(),
                        rt.device,
                    );
                    model.init_psqt(&psqt_piece_values(set));
                    // Virtual features start at zero: the factorized network starts as the
                    // plain one.
                    model.zero_first_layer_rows(set.size() as usize);
                    model
                }
            };
            let adam = Adam::new(config.adam(), &model.params());
            let state = TrainState {
                config: config.clone(),
                blocks: records,
                epoch: 0,
                step: 0,
                history: Vec::new(),
            };
            (model, adam, state)
        };
        model.narrow_rows = narrow;
        let (val, val_constant) = validation_set(&config, set, rt)?;
        let rates = layer_rates(
            model.params().len(),
            config.shape().l1,
            Some(config.recipe.hidden_lr_width.get()),
        );
        let mut run = TrainingLoop {
            schedule: config.schedule(),
            config,
            set,
            rt,
            model,
            adam,
            state,
            blocks,
            val,
            val_constant,
            rates,
            steps_here: 0,
        };
        // A kill between the checkpoint and the exports of its epoch leaves them missing: the
        // model is still that epoch's.
        run.export_epoch()?;
        Ok(run)
    }

    /// Whether the run is over: the epoch cap reached, or the stop rule met.
    fn finished(&self) -> bool {
        self.config
            .finished_after(self.state.epoch, &self.val_losses())
    }

    /// The validation loss of every finished epoch.
    fn val_losses(&self) -> Vec<f64> {
        self.state.history.iter().map(|m| m.val_loss).collect()
    }

    /// The best epoch so far (1-based; 0 before the first).
    fn best_epoch(&self) -> u64 {
        self.config
            .stop()
            .best(&self.val_losses())
            .map_or(0, |k| k as u64 + 1)
    }

    /// Trains the next epoch, validates, saves the checkpoint and the metrics, and exports what
    /// this epoch must leave.
    fn epoch(&mut self) -> Result<(), TrainError> {
        let (config, rt) = (&self.config, self.rt);
        let epoch = self.state.epoch;
        let steps = config.steps_per_epoch();
        let first_step = epoch * steps;
        let lr = self.schedule.lr_at(first_step);
        let pb = progress_bar(rt, steps * config.batch_size() as u64);
        pb.set_prefix(format!("epoch {}/{}", epoch + 1, config.epochs()));
        let start = Instant::now();
        let mut loss_sum = Tensor::zeros([], (Kind::Double, rt.device));
        let mut grad_norms = GradientNormSum::new(rt.device);
        let mut seen = 0u64;
        let mut step = 0u64;
        let method = config.method();
        let mut loaded = batches(config, self.set, Some(epoch), rt.loader_threads)?;
        for batch in loaded.by_ref() {
            if step == steps {
                break;
            }
            let batch = batch?.to_device(rt.device);
            let loss = train_step_with(
                &mut self.model,
                &mut self.adam,
                &method,
                &batch,
                self.schedule.lr_at(first_step + step),
                &self.rates,
                |g| grad_norms.add(g),
            );
            loss_sum += loss.to_kind(Kind::Double) * batch.len() as f64;
            seen += batch.len() as u64;
            step += 1;
            self.steps_here += 1;
            pb.inc(batch.len() as u64);
            if step.is_multiple_of(16) && rt.progress {
                pb.set_message(format!("loss {:.6}", loss.double_value(&[])));
            }
            if rt.stop_after_steps.is_some_and(|s| self.steps_here >= s) {
                pb.abandon();
                return Err(TrainError::Interrupted {
                    step: self.adam.step,
                });
            }
        }
        pb.finish_and_clear();
        let filtered = loaded.report();
        drop(loaded);
        if step < steps {
            return Err(TrainError::Failed(format!(
                "the training data ran out after {seen} positions in epoch {} (no position passes the filters?)",
                epoch + 1
            )));
        }
        let seconds = start.elapsed().as_secs_f64();
        let train_loss = loss_sum.double_value(&[]) / seen.max(1) as f64;
        // From `swa_from` on, the epoch's weights join the average that it hands over.
        if let Some(before) = config.swa_before(epoch + 1) {
            self.adam.swap_slow(&mut self.model.params_mut());
            self.adam.average_in(&self.model.params(), before);
            self.adam.swap_slow(&mut self.model.params_mut());
        }
        let (val_loss, units) = self.on_handed_over(|run| {
            (
                evaluate(&run.model, &method, &run.val),
                UnitHealth::measure(&run.model, &run.val),
            )
        });
        let positions = self.state.history.last().map_or(0, |m| m.positions) + seen;
        let metrics = EpochMetrics {
            epoch: epoch + 1,
            positions,
            train_loss,
            val_loss,
            val_constant: self.val_constant,
            lr,
            seconds,
            per_second: seen as f64 / seconds.max(1e-9),
            units,
            gradients: grad_norms.mean(),
        };
        self.log(&metrics, &filtered);
        let previous_best = self.best_epoch();
        self.state.history.push(metrics);
        self.state.epoch = epoch + 1;
        self.state.step = self.adam.step;
        write_atomic(
            &rt.checkpoint_path(),
            &checkpoint::encode(&self.state, &self.model, &self.adam)?,
        )?;
        write_metrics(&rt.out, &self.state.history)?;
        self.export_epoch()?;
        // A best epoch superseded leaves its network only where it was asked for.
        if previous_best > 0
            && previous_best != self.best_epoch()
            && !self.config.exports_at(previous_best)
        {
            let _ = std::fs::remove_file(rt.net_path(previous_best));
        }
        Ok(())
    }

    /// The epoch's line on standard error (with the shares of the positions the loader's
    /// filters dropped, read ahead included), and a warning after a first epoch that learnt
    /// nothing.
    fn log(&self, m: &EpochMetrics, filtered: &FilterCounts) {
        let config = &self.config;
        if self.rt.log {
            eprintln!(
                "epoch {}/{}: train loss {:.6}, validation loss {:.6} (constant predictor {:.6}), lr {:.3e}, {:.0} {}/s{}",
                m.epoch,
                config.epochs(),
                m.train_loss,
                m.val_loss,
                m.val_constant,
                m.lr,
                m.per_second,
                if matches!(config.method(), Method::Pqr(_)) {
                    "triplets"
                } else {
                    "positions"
                },
                if filtered.dropped() > 0 {
                    format!("; loader {}", filtered.shares())
                } else {
                    String::new()
                }
            );
        }
        if m.epoch == 1 && m.val_loss.partial_cmp(&m.val_constant) != Some(std::cmp::Ordering::Less)
        {
            let u = &m.units;
            eprintln!(
                "warning: after its first epoch the network does not beat the constant predictor (validation loss {:.6} against {:.6}): it is not learning. Hidden units dead {:.0}%, saturated {:.0}%; first-layer units dead {:.0}%, saturated {:.0}% (see metrics.csv)",
                m.val_loss,
                m.val_constant,
                100.0 * u.hidden_dead,
                100.0 * u.hidden_saturated,
                100.0 * u.l1_dead,
                100.0 * u.l1_saturated
            );
        }
    }

    /// Exports the current epoch's network if it is the best so far, asked for, or the last,
    /// and not yet written.
    fn export_epoch(&mut self) -> Result<(), TrainError> {
        let epoch = self.state.epoch;
        let wanted = self.config.exports_at(epoch) || epoch == self.best_epoch() || self.finished();
        if epoch > 0 && wanted && !self.rt.net_path(epoch).exists() {
            self.on_handed_over(|run| {
                let inputs: Vec<&SparseInput> = run.val.iter().map(MethodBatch::input).collect();
                let x = calibration_activations(&run.model, &inputs, CALIBRATION_POSITIONS);
                export(
                    &run.model,
                    run.set,
                    (run.blocks.clone(), run.config.score_units),
                    &x,
                    &run.rt.net_path(epoch),
                )
            })?;
        }
        Ok(())
    }

    /// `f` on the network the current epoch hands over, swapped into the model: RangerLite's
    /// slow weights (nnue-pytorch validates and saves them), and from `swa_from` on the
    /// stochastic weight average; the training weights are swapped back after.
    fn on_handed_over<R>(&mut self, f: impl FnOnce(&Self) -> R) -> R {
        self.adam.swap_slow(&mut self.model.params_mut());
        self.adam.swap_average(&mut self.model.params_mut());
        let result = f(self);
        self.adam.swap_average(&mut self.model.params_mut());
        self.adam.swap_slow(&mut self.model.params_mut());
        result
    }

    /// The run's result: the best epoch's network, and the last one's.
    fn finish(mut self) -> Result<TrainOutcome, TrainError> {
        write_metrics(&self.rt.out, &self.state.history)?;
        self.export_epoch()?;
        let last = self.rt.net_path(self.state.epoch);
        let mut best_epoch = self.best_epoch();
        let mut net = self.rt.net_path(best_epoch);
        if !net.exists() {
            // A checkpoint of a run from before the best epoch was kept.
            eprintln!(
                "warning: the network of epoch {best_epoch}, the best, was not kept; handing over the last epoch's, {}",
                last.display()
            );
            net = last.clone();
            best_epoch = self.state.epoch;
        }
        Ok(TrainOutcome {
            state: self.state,
            best_epoch,
            net,
            last,
        })
    }
}
