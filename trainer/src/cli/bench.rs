//! `trainer bench`: training throughput in positions per second.

use anyhow::Result;
use clap::Args;
use plugin_api::FeatureSet;

use super::device::DeviceArg;
use trainer::train::bench::{TrainBenchConfig, bench};
use trainer::train::settings::OptimizerName;
use trainer::train::settings::TrainSettings;

/// Arguments of `trainer bench`.
#[derive(Args, Debug, Clone)]
pub struct BenchArgs {
    /// Feature set: blocks joined by '+' (sum) and '*' (product), e.g. all+ph, k*all, halfka_v2_hm^.
    #[arg(long, default_value = "all")]
    pub spec: String,
    /// First-layer widths to measure (comma-separated).
    #[arg(long, value_delimiter = ',', default_values_t = [256usize, 512])]
    pub l1: Vec<usize>,
    /// Hidden width (of the thesis's shape).
    #[arg(long, default_value_t = TrainSettings::default().l2.get() as usize)]
    pub l2: usize,
    /// Shapes to measure at each L1 (comma-separated presets: thesis, sfnnv5, sfnnv16).
    #[arg(long, value_delimiter = ',', default_values_t = [nnue::Preset::Thesis])]
    pub arch: Vec<nnue::Preset>,
    /// Positions per batch.
    #[arg(long, default_value_t = TrainSettings::default().batch_size.get() as usize)]
    pub batch_size: usize,
    /// Timed steps per measurement.
    #[arg(long, default_value_t = 30)]
    pub steps: usize,
    /// Untimed steps first.
    #[arg(long, default_value_t = 5)]
    pub warmup: usize,
    /// Only positions with at least this many pieces (as in real data; random games shed
    /// material quickly).
    #[arg(long, default_value_t = 20)]
    pub min_pieces: u32,
    /// Measure the PQR method (a step sees 3 positions per triplet) instead of score targets.
    #[arg(long)]
    pub pqr: bool,
    /// Optimizer.
    #[arg(long, value_enum, default_value_t = TrainSettings::default().optimizer)]
    pub optimizer: OptimizerName,
    /// Device and threads.
    #[command(flatten)]
    pub device: DeviceArg,
}

/// Runs the benchmark and prints one line per L1.
pub fn run(args: &BenchArgs, set: &FeatureSet) -> Result<()> {
    let device = args.device.start()?;
    println!(
        "training throughput, feature set {} (N = {}), batch {}, optimizer {}, {} on {}, {} torch threads",
        set.name(),
        set.size(),
        args.batch_size,
        clap::ValueEnum::to_possible_value(&args.optimizer)
            .map_or_else(String::new, |v| v.get_name().to_string()),
        if args.pqr { "PQR" } else { "score target" },
        args.device.device_name(),
        tch::get_num_threads()
    );
    let mut archs = Vec::new();
    for &preset in &args.arch {
        let arch = preset.arch(args.l2);
        println!("{preset}: {arch}");
        archs.push((preset.name(), arch));
    }
    for &l1 in &args.l1 {
        for (name, arch) in &archs {
            measure(args, set, device, l1, name, arch.clone())?;
        }
    }
    Ok(())
}

/// Measures one L1 and shape and prints its line.
fn measure(
    args: &BenchArgs,
    set: &FeatureSet,
    device: tch::Device,
    l1: usize,
    name: &str,
    arch: nnue::Arch,
) -> Result<()> {
    {
        let config = TrainBenchConfig {
            l1,
            arch: arch.clone(),
            batch_size: args.batch_size,
            batches: 4,
            warmup: args.warmup,
            steps: args.steps,
            pqr: args.pqr,
            device,
            seed: 1,
            min_pieces: args.min_pieces,
            // The optimizer as a training run of this recipe steps it.
            adam: TrainSettings {
                optimizer: args.optimizer,
                ..TrainSettings::default()
            }
            .adam(),
        };
        let r = bench(set, &config)?;
        println!(
            "{} -> {}, {name}: {:.0} {}/s ({} steps in {:.2} s, {:.1} active indices per perspective, last loss {:.9})",
            set.size(),
            l1,
            r.per_second,
            if args.pqr { "triplets" } else { "positions" },
            r.steps,
            r.seconds,
            r.active,
            r.last_loss
        );
    }
    Ok(())
}
