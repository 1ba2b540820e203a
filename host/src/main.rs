//! The `host` command line. See `ARCHITECTURE.md` and `shared/DESIGN.md` for the contracts.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cli;

/// NNUE feature-set research engine: feature inspection, network evaluation, UCI engine.
#[derive(Parser, Debug)]
#[command(name = "host", version, about)]
struct Args {
    /// Directory holding the feature plugins (default: $NNUE_PLUGIN_DIR, else next to this program).
    #[arg(long, global = true, value_name = "DIR")]
    plugin_dir: Option<PathBuf>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print the feature indices of positions: FEN, stm, White's and Black's sorted unique indices.
    Features {
        /// Feature set, blocks joined by '+' (e.g. all+ph+pv; 'hv' means 'all').
        #[arg(long)]
        spec: String,
        /// File with one FEN per line ('-' for standard input).
        #[arg(long)]
        fens: PathBuf,
    },
    /// List the feature blocks of the loaded plugins.
    Plugins,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let result = match &args.command {
        Command::Features { spec, fens } => {
            cli::features::run(args.plugin_dir.as_deref(), spec, fens, &mut out)
        }
        Command::Plugins => cli::plugins::run(args.plugin_dir.as_deref(), &mut out),
    };
    // Whatever was computed before an error is kept: flush first, then report.
    let flushed = out.flush();
    match result.and_then(|()| flushed.map_err(|e| format!("cannot write output: {e}"))) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
