//! The `trainer` command line.

mod cli;

use anyhow::{Context, Result};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use plugin_api::PluginRegistry;

use chess_text::fen_lines;
use plugin_api::board_from_setup;
use trainer::loader::batch::SparseBatch;

/// Training pipeline for NNUE feature-set research.
#[derive(Parser, Debug)]
#[command(name = "trainer", version, about)]
struct TrainerArgs {
    /// Directory holding the feature plugins (default: $NNUE_PLUGIN_DIR, else next to this program).
    #[arg(long, global = true, value_name = "DIR")]
    plugin_dir: Option<PathBuf>,

    #[command(subcommand)]
    command: TrainerCommand,
}

#[derive(Subcommand, Debug)]
enum TrainerCommand {
    /// Encode positions into a sparse batch and print its size: positions, active indices per
    /// position (side to move / other side), and the feature set's N.
    Encode {
        /// Feature set: blocks joined by '+' (sum) and '*' (product), e.g. all+ph, k*all.
        #[arg(long)]
        spec: String,
        /// File with one FEN per line.
        #[arg(long)]
        fens: PathBuf,
    },
    /// Convert training data between formats (text, compact, bin, binpack), with filters;
    /// prints what was read, filtered, written and skipped.
    Convert(cli::convert::ConvertArgs),
    /// Dataset statistics: positions, games, score and ply histograms, piece counts, mobility per
    /// role, feature activation per block; as text and SVG charts.
    Stats(cli::stats::StatsArgs),
    /// Fit the win-rate model sigmoid((score - a) / b) to scores and game results by maximum
    /// likelihood.
    WdlFit(cli::stats::WdlArgs),
    /// Run the batch loader over files and report positions per second.
    Load(cli::load::LoadArgs),
    /// Training throughput (positions per second) of networks (any L1, any shape preset) on encoded
    /// random-game batches.
    Bench(cli::bench::BenchArgs),
    /// Train a network (score targets or PQR triplets): checkpoints, metrics, loss plot and
    /// exported networks in the output folder; --resume continues a run.
    Train(Box<cli::train::TrainArgs>),
    /// Write a checkpoint's network in the project's format (loads in `host`).
    Export(cli::train::ExportArgs),
    /// Quantization error: a checkpoint's float model against its quantized network evaluated
    /// by host's inference, over positions (mean, percentiles, histogram).
    QuantReport(cli::train::QuantArgs),
    /// Networks of any trainer, shape or units held to one held-out set: host's quantized
    /// evaluation and the data's scores in centipawns through one win-rate mapping (loss,
    /// the constant predictor's, mean error, correlation).
    Score(cli::score::ScoreArgs),
    /// Training data by self-play (host search or an external UCI engine): seeded and
    /// reproducible for any thread count, sharded (--shard i/N), resumable.
    Gensfen(Box<cli::gensfen::GensfenArgs>),
    /// Pictures of a network's neurons in each block's geometry, weight histograms and, with
    /// --data, the block attribution (loss and evaluation without each block, contributions,
    /// dead and never-trained features) and activation histograms; writes insight.html.
    Viz(Box<cli::viz::VizArgs>),
    /// Run an experiment manifest end to end (data, training, export, tournament, puzzles,
    /// report); finished stages are cached, so a rerun resumes where it stopped.
    Run(cli::run::RunArgs),
}

fn run(args: TrainerArgs) -> Result<()> {
    let registry =
        || PluginRegistry::discover(args.plugin_dir.as_deref()).map_err(|e| e.to_string());
    match &args.command {
        TrainerCommand::Encode { spec, fens } => {
            let set = registry().map_err(anyhow::Error::msg)?.feature_set(spec)?;
            let mut batch = SparseBatch::with_capacity(&set, 1024);
            let mut scratch = Vec::new();
            for item in fen_lines(fens)? {
                let fen = item?;
                batch
                    .push(&set, &board_from_setup(&fen.setup), &mut scratch)
                    .with_context(|| format!("{}:{}", fens.display(), fen.line))?;
            }
            let n = batch.len.max(1) as f64;
            println!(
                "feature set {} (N = {}): {} positions, {:.2} active indices per position (side to move), {:.2} (other side)",
                set.name(),
                set.size(),
                batch.len,
                batch.indices[0].len() as f64 / n,
                batch.indices[1].len() as f64 / n
            );
            Ok(())
        }
        TrainerCommand::Convert(a) => cli::convert::run(a),
        TrainerCommand::Stats(a) => {
            let set = match &a.spec {
                Some(spec) => Some(registry().map_err(anyhow::Error::msg)?.feature_set(spec)?),
                None => None,
            };
            cli::stats::run_stats(a, set.as_ref())
        }
        TrainerCommand::WdlFit(a) => cli::stats::run_wdl(a),
        TrainerCommand::Load(a) => {
            let set = registry()
                .map_err(anyhow::Error::msg)?
                .feature_set(&a.spec)?;
            cli::load::run(a, set)
        }
        TrainerCommand::Bench(a) => {
            let set = registry()
                .map_err(anyhow::Error::msg)?
                .feature_set(&a.spec)?;
            cli::bench::run(a, &set)
        }
        TrainerCommand::Train(a) => {
            let registry = registry().map_err(anyhow::Error::msg)?;
            a.settings
                .check_i8_blocks(&registry)
                .map_err(anyhow::Error::msg)?;
            let set = registry.feature_set(&a.spec)?;
            cli::train::run_train(a, &set)
        }
        TrainerCommand::Export(a) => cli::train::run_export(a, args.plugin_dir.as_deref()),
        TrainerCommand::Viz(a) => cli::viz::run(a, &registry().map_err(anyhow::Error::msg)?),
        TrainerCommand::Score(a) => cli::score::run(a, &registry().map_err(anyhow::Error::msg)?),
        TrainerCommand::QuantReport(a) => {
            cli::train::run_quant(a, &registry().map_err(anyhow::Error::msg)?)
        }
        TrainerCommand::Gensfen(a) => cli::gensfen::run(a, args.plugin_dir.as_deref()),
        TrainerCommand::Run(a) => cli::run::run(a, args.plugin_dir.as_deref()),
    }
}

/// The environment libtorch reads when it is loaded or first used, set where the user has not
/// set it, by running the program again with it (the user's own settings are kept):
///
/// - `OMP_WAIT_POLICY=PASSIVE`: libtorch's OpenMP threads spin for a while after each parallel
///   region by default; on a machine with few cores (or shared with other work) they take the
///   CPU from the threads that have work, and training steps become several times slower.
///   libgomp reads it when it is loaded, before `main`.
/// - `MKL_CBWR=AVX2` and `ATEN_CPU_CAPABILITY=avx2` (on a CPU with AVX2): the same numbers on
///   every x86-64 machine. MKL, inside libtorch, picks its matrix kernels by CPU (vendor and
///   instruction set), and ATen its vector width; MKL's choice changes a run's rounding, so one
///   manifest gave other validation losses and ratings on an Intel machine than on an AMD one.
///   Pinned to their AVX2 versions (MKL's conditional numerical reproducibility, which
///   promises the same results on every CPU with the branch's instructions), a CPU run does not
///   depend on the CPU it runs on. Measured on the 2-core AMD EPYC (BENCHMARKS.md,
///   "Training"): MKL's own choice gave other networks than its
///   reproducible branches, whose AVX2 and AVX-512 versions gave the same bytes.
#[cfg(unix)]
fn pinned_environment() {
    use std::os::unix::process::CommandExt;
    let mut wanted = vec![("OMP_WAIT_POLICY", "PASSIVE")];
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        wanted.push(("MKL_CBWR", "AVX2"));
        wanted.push(("ATEN_CPU_CAPABILITY", "avx2"));
    }
    let missing: Vec<(&str, &str)> = wanted
        .into_iter()
        .filter(|(name, _)| std::env::var_os(name).is_none())
        .collect();
    if missing.is_empty() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    // `exec` returns only on failure; then go on without them.
    let _ = std::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .envs(missing)
        .exec();
}

fn main() -> ExitCode {
    if let Some(message) = nnue::missing_build_feature() {
        eprintln!("error: {message}");
        return ExitCode::FAILURE;
    }
    #[cfg(unix)]
    pinned_environment();
    match run(cli::parse_args::<TrainerArgs>()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // The whole chain of context on one line: "what was done: why it failed".
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn command_line_is_consistent() {
        TrainerArgs::command().debug_assert();
    }
}
