//! `arena puzzles`: move accuracy of a UCI engine on Lichess puzzles.

use std::fs::File;
use std::io::BufWriter;
use std::num::NonZeroU64;
use std::path::PathBuf;

use arena::move_limit::{LimitArgs, MoveLimit};
use arena::puzzles;
use arena::uci::EngineSpec;

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
    /// How long each answer is searched: one of --nodes, --depth, --movetime (default: 100
    /// milliseconds, the thesis's setting).
    #[command(flatten)]
    pub search: LimitArgs,
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
    let limit = match args.search.limit() {
        Some(limit) => limit.for_one_search().map_err(|e| format!("--{e}"))?,
        None => MoveLimit::MoveTime(NonZeroU64::new(100).expect("100 is not 0")),
    }
    .search_limit();
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
