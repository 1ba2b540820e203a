//! The `host` command line. See `ARCHITECTURE.md` and `shared/DESIGN.md` for the contracts.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cli;

/// NNUE feature-set research engine: feature inspection, network evaluation, UCI engine.
#[derive(Parser, Debug)]
#[command(
    name = "host",
    version,
    about,
    after_help = "Without a command, host is a UCI chess engine on standard input and output."
)]
struct HostArgs {
    /// Directory holding the feature plugins (default: $NNUE_PLUGIN_DIR, else next to this program).
    #[arg(long, global = true, value_name = "DIR")]
    plugin_dir: Option<PathBuf>,

    /// Without a subcommand, `host` is a UCI chess engine on standard input and output.
    #[command(subcommand)]
    command: Option<HostCommand>,
}

#[derive(Subcommand, Debug)]
enum HostCommand {
    /// Print the feature indices of positions: FEN, stm, White's and Black's sorted unique indices.
    Features {
        /// Feature set: blocks joined by '+' (sum) and '*' (product), e.g. all+ph+pv or k*all+h; 'hv' means 'all'.
        #[arg(long)]
        spec: String,
        /// File with one FEN per line ('-' for standard input).
        #[arg(long)]
        fens: PathBuf,
    },
    /// List the feature blocks of the loaded plugins.
    Plugins,
    /// Search fixed positions to a fixed depth; the last line is `N nodes M nps`.
    Bench {
        /// Search depth.
        #[arg(long, default_value_t = host::engine::bench::DEFAULT_DEPTH)]
        depth: u32,
        /// Network file (default: the built-in material and piece-square evaluation).
        #[arg(long)]
        net: Option<PathBuf>,
        /// Search threads (the node count is deterministic with 1).
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// Hash table size in MiB.
        #[arg(long, default_value_t = host::engine::bench::DEFAULT_HASH_MB)]
        hash: usize,
        /// Print the positions, one FEN per line, instead of searching them (to time another
        /// engine on the same positions).
        #[arg(long)]
        list: bool,
    },
    /// Print the raw network output for the side to move of positions: FEN, output (for a
    /// Stockfish network, Stockfish's `Eval::NNUE::evaluate(pos, false)`).
    Eval {
        /// Network file (this project's format, a thesis .nn file or a Stockfish .nnue).
        #[arg(long)]
        net: PathBuf,
        /// File with one FEN per line ('-' for standard input).
        #[arg(long, required_unless_present = "games", conflicts_with = "games")]
        fens: Option<PathBuf>,
        /// File with one game per line, `START_FEN<TAB>uci moves`: prints the evaluation after
        /// the start and after every move, updated incrementally as in a search.
        #[arg(long)]
        games: Option<PathBuf>,
        /// With --games: play the games this many times and print only the speed
        /// (`positions P evals_per_second X checksum C`).
        #[arg(long, requires = "games")]
        repeat: Option<u32>,
        /// With --games: refresh a perspective on each of its king's moves from all its rows,
        /// without the refresh cache, as Stockfish 15.1 does (for side-by-side speed).
        #[arg(long, requires = "games")]
        full_refresh: bool,
        /// With --games: after the evaluations, print on stderr what the accumulator stack did
        /// (perspectives updated and refreshed, rows applied, the refresh cache's hits), per
        /// move played.
        #[arg(long, requires = "games")]
        stats: bool,
        /// Kernels: scalar, avx2, avx512 or avx512vnni (default: $NNUE_SIMD, else the best).
        #[arg(long)]
        simd: Option<String>,
        /// Also print the stack the position uses and every layer stack's raw PSQT and
        /// positional sums (before the output rule's division; Stockfish's `eval` table × 16).
        #[arg(long)]
        stacks: bool,
    },
    /// Inspect or convert network files.
    Net {
        #[command(subcommand)]
        command: NetCommand,
    },
}

#[derive(Subcommand, Debug)]
enum NetCommand {
    /// Convert a network between this project's format, the thesis's .nn format and Stockfish's
    /// .nnue format (15.1's SFNNv5 or today's SFNNv16, whichever the network's shape is).
    Convert {
        /// Input network (either format).
        #[arg(long = "in", value_name = "FILE")]
        input: PathBuf,
        /// Output file.
        #[arg(long = "out", value_name = "FILE")]
        output: PathBuf,
        /// Output format: own, thesis or stockfish.
        #[arg(long, default_value = "own")]
        format: String,
    },
    /// Print a network's format, feature set, blocks, N, L1, shape and quantization.
    Info {
        /// Network file (either format).
        #[arg(long)]
        net: PathBuf,
    },
    /// Write a network of seeded random weights for a feature set: what the speed of a set
    /// (`host bench --net`) is measured with before any network of it is trained.
    Random {
        /// Feature set (as for `host features`).
        #[arg(long)]
        spec: String,
        /// First-layer width (a multiple of 32).
        #[arg(long, default_value_t = 256)]
        l1: usize,
        /// Hidden width (of the thesis's shape).
        #[arg(long, default_value_t = 32)]
        l2: usize,
        /// The shape after the first layer: a preset (thesis, sfnnv5, sfnnv16).
        #[arg(long, default_value_t = host::nnue::Preset::Thesis)]
        arch: host::nnue::Preset,
        /// Seed of the weights.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Blocks whose first-layer rows are stored as i8 (with --arch sfnnv16 Stockfish's,
        /// full_threats,pp_3wide, unless given; `none` for none).
        #[arg(long = "i8-blocks", value_name = "BLOCK,...", value_delimiter = ',')]
        i8_blocks: Vec<String>,
        /// Output file (this project's format).
        #[arg(long = "out", value_name = "FILE")]
        output: PathBuf,
    },
    /// Write one of the seeded random networks of Stockfish's format of today on which
    /// Stockfish's own code computed host's reference vectors, byte for byte (SHA-256 in
    /// host/tests/data/stockfish-sfnnv16/networks.tsv): the speed comparison's networks.
    Reference {
        /// Seed of the parameters (the vectors use 1, 2 and 3).
        #[arg(long)]
        seed: u64,
        /// The first layer's scale, in quarters (the vectors use 4, 8 and 2).
        #[arg(long, value_parser = clap::value_parser!(i32).range(1..=64))]
        scale: i32,
        /// Keep only these blocks' rows (some of halfka_v2_hm, full_threats, pp_3wide, in that
        /// order): the network of a subset, as nnue-pytorch writes one, which evaluates as the
        /// whole network with the other blocks' rows zeroed.
        #[arg(long, value_name = "BLOCK,...", value_delimiter = ',')]
        blocks: Vec<String>,
        /// Output file (Stockfish's format).
        #[arg(long = "out", value_name = "FILE")]
        output: PathBuf,
    },
}

fn main() -> ExitCode {
    if let Some(message) = host::nnue::missing_build_feature() {
        eprintln!("error: {message}");
        return ExitCode::FAILURE;
    }
    let args = HostArgs::parse();
    let Some(command) = &args.command else {
        // No subcommand: speak UCI on standard input and output.
        return match host::engine::uci::run_stdio(args.plugin_dir.clone()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("error: {message}");
                ExitCode::FAILURE
            }
        };
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let result = match command {
        HostCommand::Features { spec, fens } => {
            cli::features::run(args.plugin_dir.as_deref(), spec, fens, &mut out)
        }
        HostCommand::Plugins => cli::plugins::run(args.plugin_dir.as_deref(), &mut out),
        HostCommand::Bench { list: true, .. } => cli::bench::list(&mut out),
        HostCommand::Bench {
            depth,
            net,
            threads,
            hash,
            list: false,
        } => cli::bench::run(
            args.plugin_dir.as_deref(),
            *depth,
            net.as_deref(),
            *threads,
            *hash,
            &mut out,
        ),
        HostCommand::Eval {
            net,
            fens,
            games,
            repeat,
            full_refresh,
            stats,
            simd,
            stacks,
        } => match (fens, games) {
            (Some(fens), _) => cli::eval::run(
                args.plugin_dir.as_deref(),
                net,
                fens,
                (simd.as_deref(), *stacks),
                &mut out,
            ),
            (None, Some(games)) => cli::eval::games(
                args.plugin_dir.as_deref(),
                net,
                games,
                (simd.as_deref(), *repeat, *full_refresh, *stats),
                &mut out,
            ),
            (None, None) => unreachable!("clap requires --fens or --games"),
        },
        HostCommand::Net { command } => match command {
            NetCommand::Convert {
                input,
                output,
                format,
            } => cli::net::convert(args.plugin_dir.as_deref(), input, output, format).map(|note| {
                if let Some(note) = note {
                    eprintln!("{note}");
                }
            }),
            NetCommand::Info { net } => cli::net::info(args.plugin_dir.as_deref(), net, &mut out),
            NetCommand::Random {
                spec,
                l1,
                l2,
                arch,
                seed,
                i8_blocks,
                output,
            } => cli::net::random(
                args.plugin_dir.as_deref(),
                (spec, *arch),
                [*l1, *l2],
                *seed,
                i8_blocks,
                output,
            ),
            NetCommand::Reference {
                seed,
                scale,
                blocks,
                output,
            } => cli::net::reference(args.plugin_dir.as_deref(), (*seed, *scale), blocks, output),
        },
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
