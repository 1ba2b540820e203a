//! The `trainer` command line.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use plugin_api::PluginRegistry;

use host::fens::{board_from_setup, fen_lines};
use trainer::batch::SparseBatch;

/// Training pipeline for NNUE feature-set research.
#[derive(Parser, Debug)]
#[command(name = "trainer", version, about)]
struct Args {
    /// Directory holding the feature plugins (default: $NNUE_PLUGIN_DIR, else next to this program).
    #[arg(long, global = true, value_name = "DIR")]
    plugin_dir: Option<PathBuf>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Encode positions into a sparse batch and print its size: positions, active indices per
    /// position (side to move / other side), and the feature set's N.
    Encode {
        /// Feature set, blocks joined by '+'.
        #[arg(long)]
        spec: String,
        /// File with one FEN per line.
        #[arg(long)]
        fens: PathBuf,
    },
}

fn run(args: Args) -> Result<(), String> {
    match args.command {
        Command::Encode { spec, fens } => {
            let registry =
                PluginRegistry::discover(args.plugin_dir.as_deref()).map_err(|e| e.to_string())?;
            let set = registry.feature_set(&spec).map_err(|e| e.to_string())?;
            let mut batch = SparseBatch::with_capacity(&set, 1024);
            let mut scratch = Vec::new();
            for item in fen_lines(&fens).map_err(|e| e.to_string())? {
                let fen = item.map_err(|e| e.to_string())?;
                batch
                    .push(&set, &board_from_setup(&fen.setup), &mut scratch)
                    .map_err(|e| format!("{}:{}: {e}", fens.display(), fen.line))?;
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
    }
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
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
        Args::command().debug_assert();
    }
}
