//! `trainer load`: runs the batch loader over files and reports its speed (what the trainer's
//! data pipeline delivers).

use anyhow::Result;
use std::time::Instant;

use clap::Args;
use plugin_api::FeatureSet;

use trainer::loader::{BatchLoader, LoaderConfig};

use super::{FilterArgs, InputArgs, print_errors};

/// Arguments of `trainer load`.
#[derive(Args, Debug)]
pub struct LoadArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Feature set: blocks joined by '+' (sum) and '*' (product), e.g. all+ph, k*all, halfka_v2_hm^.
    #[arg(long)]
    pub spec: String,
    /// Positions per batch.
    #[arg(long, default_value_t = LoaderConfig::default().batch_size)]
    pub batch_size: usize,
    /// Loader threads (0: one per core).
    #[arg(long, default_value_t = 0, value_parser = super::thread_count)]
    pub threads: usize,
    /// Shuffle buffer in positions (0: keep the order of the data).
    #[arg(long, default_value_t = LoaderConfig::default().shuffle_buffer)]
    pub shuffle: usize,
    /// Passes over the data.
    #[arg(long, default_value_t = 1)]
    pub epochs: u64,
    /// Stop after this many batches.
    #[arg(long)]
    pub max_batches: Option<u64>,
    #[command(flatten)]
    pub filter: FilterArgs,
}

/// Runs the loader and prints positions per second.
pub fn run(args: &LoadArgs, set: FeatureSet) -> Result<()> {
    let config = LoaderConfig {
        inputs: args.input.inputs().map_err(anyhow::Error::msg)?,
        batch_size: args.batch_size,
        threads: args.threads,
        shuffle_buffer: args.shuffle,
        seed: args.filter.seed,
        filter: args
            .filter
            .config_for(&args.input)
            .map_err(anyhow::Error::msg)?,
        epochs: Some(args.epochs),
        on_error: args.input.on_error,
        ..LoaderConfig::default()
    };
    let threads = arena::workers::workers(args.threads);
    let start = Instant::now();
    let mut loader = BatchLoader::new(config, set)?;
    let (mut batches, mut positions, mut indices) = (0u64, 0u64, 0u64);
    let mut outcome = Ok(());
    for batch in loader.by_ref() {
        match batch {
            Ok(b) => {
                batches += 1;
                positions += b.len as u64;
                indices += (b.indices[0].len() + b.indices[1].len()) as u64;
            }
            Err(e) => {
                outcome = Err(e.to_string());
                break;
            }
        }
        if args.max_batches.is_some_and(|m| batches >= m) {
            break;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let report = loader.report();
    drop(loader);
    print_errors(&report.first_errors, report.errors);
    println!(
        "read {} positions; skipped {} bad records; {}",
        report.read, report.errors, report.filter
    );
    println!(
        "{batches} batches, {positions} positions, {:.1} active indices per position and perspective",
        indices as f64 / (2 * positions.max(1)) as f64
    );
    println!(
        "{:.0} positions/s with {threads} thread(s), {:.0} positions/s per thread",
        positions as f64 / secs,
        positions as f64 / secs / threads as f64
    );
    outcome.map_err(anyhow::Error::msg)
}
