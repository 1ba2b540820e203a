//! `arena puzzles`: move accuracy of a UCI engine on Lichess puzzles.

use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;
use std::time::Duration;

use arena::puzzles;
use arena::uci::{EngineSpec, SearchLimit};

/// Arguments of `arena puzzles`.
#[derive(clap::Args, Debug)]
pub struct PuzzlesArgs {
    /// The engine: a spec `name=X,cmd=PATH,option.K=V`, an engine executable, or a network file
    /// (played by `host`).
    #[arg(long)]
    pub engine: String,
    /// Puzzle CSV `FEN,moves,rating,themes`.
    #[arg(long)]
    pub puzzles: PathBuf,
    /// Only the first N puzzles.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Search each answer for this many nodes.
    #[arg(long, conflicts_with_all = ["movetime", "depth"])]
    pub nodes: Option<u64>,
    /// Search each answer for this many milliseconds (default 100, the thesis's setting).
    #[arg(long, conflicts_with = "depth")]
    pub movetime: Option<u64>,
    /// Search each answer to this depth.
    #[arg(long)]
    pub depth: Option<u32>,
    /// Engine processes in parallel (0: one per core).
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Write per-puzzle results to this CSV file.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// Runs `arena puzzles`.
pub fn run(args: PuzzlesArgs) -> Result<(), String> {
    let spec = EngineSpec::parse(&args.engine).map_err(|e| e.to_string())?;
    let mut list = puzzles::read_puzzles(&args.puzzles).map_err(|e| e.to_string())?;
    if let Some(n) = args.limit {
        list.truncate(n);
    }
    if list.is_empty() {
        return Err(format!("{}: no puzzles", args.puzzles.display()));
    }
    let limit = match (args.nodes, args.movetime, args.depth) {
        (Some(n), _, _) => SearchLimit::Nodes(n),
        (_, _, Some(d)) => SearchLimit::Depth(d),
        (_, Some(ms), _) => SearchLimit::MoveTime(Duration::from_millis(ms)),
        _ => SearchLimit::MoveTime(Duration::from_millis(100)),
    };
    let report = puzzles::solve_all(&spec, &list, limit, args.threads, !args.quiet)
        .map_err(|e| e.to_string())?;
    print!("{report}");
    if let Some(path) = &args.csv {
        let file = File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
        report
            .write_csv(&mut BufWriter::new(file))
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}
