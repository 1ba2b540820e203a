//! Training throughput: optimizer steps per second on batches already encoded, in positions per
//! second (`trainer bench`). The data loader's own speed is measured by `trainer load`.

use anyhow::{Result, bail};
use std::time::Instant;

use plugin_api::FeatureSet;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tch::Device;

use super::loss::{PqrLoss, ScoreLoss};
use super::objective::{Method, MethodBatch, PqrBatch, ScoreBatch, train_step};
use super::optim::{Adam, AdamConfig};
use crate::data::Sample;
use crate::data::synthetic::random_games;
use crate::loader::batch::SparseBatch;
use crate::loader::{Triplet, TripletBatch};
use crate::model::Model;
use nnue::Shape;

/// What to measure.
#[derive(Clone, Debug)]
pub struct TrainBenchConfig {
    /// First-layer width.
    pub l1: usize,
    /// The shape after the first layer.
    pub arch: nnue::Arch,
    /// Positions (or triplets) per batch.
    pub batch_size: usize,
    /// Distinct batches cycled through.
    pub batches: usize,
    /// Steps before timing.
    pub warmup: usize,
    /// Timed steps.
    pub steps: usize,
    /// `score` or `pqr`.
    pub pqr: bool,
    /// Where to train.
    pub device: Device,
    /// Seed of the data and the weights.
    pub seed: u64,
    /// Only positions with at least this many pieces (random games shed material quickly;
    /// real training data holds about 20 to 32 pieces per position).
    pub min_pieces: u32,
    /// Adam's settings (plain or sparse).
    pub adam: AdamConfig,
}

/// The measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchResult {
    /// Timed steps.
    pub steps: usize,
    /// Seconds they took.
    pub seconds: f64,
    /// Training examples per second (positions; triplets for PQR).
    pub per_second: f64,
    /// Mean active indices per position and perspective in the batches.
    pub active: f64,
    /// The loss of the last timed step: what the steps computed, the same on every run of one
    /// configuration on the CPU, and different for another optimizer.
    pub last_loss: f64,
}

fn pieces(s: &Sample) -> u32 {
    (s.board.by_color[0] | s.board.by_color[1]).count_ones()
}

/// Encodes `config.batches` batches of random-game positions (or triplets) through `set`.
pub fn make_batches(set: &FeatureSet, config: &TrainBenchConfig) -> Result<Vec<MethodBatch>> {
    let mut games = random_games(config.seed);
    let mut scratch = Vec::new();
    let mut out = Vec::new();
    let loss = ScoreLoss::default();
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    while out.len() < config.batches {
        if config.pqr {
            let mut triplets: Vec<Triplet> = Vec::with_capacity(config.batch_size);
            let mut previous: Option<Sample> = None;
            while triplets.len() < config.batch_size {
                let s = games
                    .next()
                    .ok_or("no samples")
                    .map_err(anyhow::Error::msg)?;
                if let Some(p) = previous
                    && pieces(&p) >= config.min_pieces
                    && let Some(t) = crate::loader::triplet(&p, &s, &mut rng)
                {
                    triplets.push(t);
                }
                previous = Some(s);
            }
            let mut positions = SparseBatch::with_capacity(set, 3 * triplets.len());
            for role in 0..3 {
                for t in &triplets {
                    let board = [&t.p, &t.q, &t.r][role];
                    positions.push(set, board, &mut scratch)?;
                }
            }
            out.push(MethodBatch::Pqr(PqrBatch::new(&TripletBatch {
                len: triplets.len(),
                positions,
            })));
        } else {
            let mut b = SparseBatch::with_capacity(set, config.batch_size);
            for s in games
                .by_ref()
                .filter(|s| pieces(s) >= config.min_pieces)
                .take(config.batch_size)
            {
                b.push_sample(set, &s, &mut scratch)?;
            }
            out.push(MethodBatch::Score(ScoreBatch::new(&b, &loss)));
        }
    }
    Ok(out)
}

/// Measures training steps of a network of N (from `set`), L1 and `config.arch` on `config.device`:
/// each step moves a prepared CPU batch to the device, runs forward, backward, Adam and the
/// weight clipping.
pub fn bench(set: &FeatureSet, config: &TrainBenchConfig) -> Result<BenchResult> {
    let batches = make_batches(set, config)?;
    let active = match &batches[0] {
        MethodBatch::Score(b) => b.input.indices.numel() as f64 / (2 * b.len) as f64,
        MethodBatch::Pqr(b) => b.input.indices.numel() as f64 / (6 * b.len) as f64,
    };
    let shape = Shape::new(set.training_size() as usize, config.l1, config.arch.clone());
    nnue::check_sizes(shape.n as u64, shape.l1 as u64, shape.l2() as u64)
        .map_err(|e| anyhow::anyhow!("the network of '{}' is too large: {e}", set.name()))?;
    config
        .arch
        .check(config.l1)
        .map_err(|e| anyhow::anyhow!("the shape cannot be trained: {e}"))?;
    let mut model = Model::new(shape, config.seed, config.device);
    let mut adam = Adam::new(config.adam, &model.params());
    let method = if config.pqr {
        Method::Pqr(PqrLoss::default())
    } else {
        Method::Score(ScoreLoss::default())
    };
    let lr = super::settings::TrainSettings::default().lr();
    let mut run = |steps: usize| -> f64 {
        let mut last = None;
        for i in 0..steps {
            let b = batches[i % batches.len()].to_device(config.device);
            last = Some(train_step(&mut model, &mut adam, &method, &b, lr));
        }
        // Reading the last loss waits for the device.
        last.map_or(0.0, |l| l.double_value(&[]))
    };
    run(config.warmup);
    let start = Instant::now();
    let loss = run(config.steps);
    let seconds = start.elapsed().as_secs_f64();
    if !loss.is_finite() {
        bail!("the loss became {loss}");
    }
    Ok(BenchResult {
        steps: config.steps,
        seconds,
        per_second: (config.steps * config.batch_size) as f64 / seconds,
        active,
        last_loss: loss,
    })
}
