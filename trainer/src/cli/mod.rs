//! Subcommands of the `trainer` binary and the arguments they share.

pub mod bench;
pub mod convert;
pub mod device;
pub mod gensfen;
pub mod load;
pub mod run;
pub mod score;
pub mod stats;
pub mod train;
pub mod viz;

use std::path::PathBuf;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use trainer::data::filter::FilterConfig;
use trainer::data::score_units;
use trainer::data::{DataError, ErrorPolicy, Format};
use trainer::loader::Input;

/// The command line, parsed; a mistake in it (a missing option, a value its type refuses, such
/// as `--l1 100`) ends the program with clap's message on one line, as every other error of
/// this program is. `--help` and `--version` print as usual.
pub fn parse_args<T: clap::Parser>() -> T {
    use clap::error::ErrorKind;
    match T::try_parse() {
        Ok(args) => args,
        Err(e)
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) =>
        {
            e.exit()
        }
        Err(e) => {
            eprintln!("{}", one_line(&e.render().to_string()));
            std::process::exit(2)
        }
    }
}

/// clap's message without its usage block and help hint, its lines joined.
fn one_line(message: &str) -> String {
    message
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A `--threads` value: a whole number up to [`trainer::loader::MAX_THREADS`], so that a typo
/// cannot spawn a hundred thousand threads.
pub fn thread_count(text: &str) -> Result<usize, String> {
    let n: usize = text
        .parse()
        .map_err(|_| format!("'{text}' is not a whole number"))?;
    if n > trainer::loader::MAX_THREADS {
        return Err(format!(
            "{n} threads is more than the {} this program starts",
            trainer::loader::MAX_THREADS
        ));
    }
    Ok(n)
}

/// Input files and how to read them.
#[derive(Args, Debug, Clone)]
pub struct InputArgs {
    /// Input file (repeat for several; the format comes from the extension: .txt/.csv,
    /// .compact, .bin, .binpack).
    #[arg(long = "in", value_name = "FILE", required = true)]
    pub inputs: Vec<PathBuf>,
    /// Format of the inputs, overriding their extensions.
    #[arg(long, value_name = "FORMAT")]
    pub in_format: Option<Format>,
    /// What to do with a bad record: `skip` it (counted and reported) or `fail` (stop at the
    /// first one).
    #[arg(long, value_name = "POLICY", default_value = "skip")]
    pub on_error: ErrorPolicy,
}

impl InputArgs {
    /// The inputs with their formats.
    pub fn inputs(&self) -> anyhow::Result<Vec<Input>> {
        self.inputs
            .iter()
            .map(|p| Input::new(p.clone(), self.in_format))
            .collect()
    }

    /// Total size in bytes (for progress bars).
    pub fn total_bytes(&self) -> u64 {
        self.inputs
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .map(|m| m.len())
            .sum()
    }
}

/// Position filters, applied in the order listed (each reports what it dropped).
#[derive(Args, Debug, Clone, Default)]
pub struct FilterArgs {
    /// Drop positions in check and positions whose best move captures (the thesis's rule).
    #[arg(long)]
    pub quiet: bool,
    /// Drop positions whose side to move is in check.
    #[arg(long)]
    pub skip_in_check: bool,
    /// Drop positions whose best move is a capture.
    #[arg(long)]
    pub skip_capture: bool,
    /// Drop positions before this ply.
    #[arg(long, value_name = "PLY")]
    pub min_ply: Option<u16>,
    /// Drop positions after this ply.
    #[arg(long, value_name = "PLY")]
    pub max_ply: Option<u16>,
    /// Drop positions whose |score| is above this.
    #[arg(long, value_name = "SCORE")]
    pub max_score: Option<i32>,
    /// Drop each remaining position with this probability (0..1; nnue-pytorch's random skip N
    /// is N/(N+1)).
    #[arg(long, value_name = "P", default_value_t = 0.0)]
    pub skip_rate: f64,
    /// nnue-pytorch's WDL skip: keep a position with the probability that its score (in
    /// Stockfish's internal units) gives its game's result.
    #[arg(long)]
    pub wdl_skip: bool,
    /// nnue-pytorch's soft early-ply skip up to this ply (its default 20): early positions kept
    /// with probabilities from 0.1 at ply 0 to 1.
    #[arg(long, value_name = "PLY")]
    pub early_skip_ply: Option<u16>,
    /// nnue-pytorch's piece-count ("smart") skip: steer the positions' piece counts toward its
    /// target distribution (few with under 8 pieces).
    #[arg(long)]
    pub piece_count_skip: bool,
    /// Seed of the random skipping (and of the loader's shuffling).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

impl FilterArgs {
    /// The filter configuration for the files of `input`, whose scores' units (their records'
    /// or formats', which must agree) the WDL skip reads them in.
    pub fn config_for(&self, input: &InputArgs) -> Result<FilterConfig, String> {
        Ok(FilterConfig {
            score_units: score_units::units_of_files(&input.inputs, input.in_format)?,
            ..self.config()?
        })
    }

    /// The filter configuration, the WDL skip reading centipawns.
    pub fn config(&self) -> Result<FilterConfig, String> {
        let c = FilterConfig {
            skip_in_check: self.quiet || self.skip_in_check,
            skip_capture: self.quiet || self.skip_capture,
            min_ply: self.min_ply,
            max_ply: self.max_ply,
            max_score: self.max_score,
            skip_rate: self.skip_rate,
            wdl_skip: self.wdl_skip,
            early_skip_ply: self.early_skip_ply,
            piece_count_skip: self.piece_count_skip,
            score_units: nnue::units::ScoreUnits::Centipawns,
            seed: self.seed,
        };
        c.check().map_err(|e| e.0)?;
        Ok(c)
    }
}

/// The kernels of host's quantized evaluation: the level named (scalar, avx2, avx512,
/// avx512vnni), else `NNUE_SIMD`'s or the best the CPU runs.
pub fn kernels(simd: Option<&str>) -> anyhow::Result<nnue::Kernels> {
    let level = match simd {
        Some(name) => name
            .parse::<nnue::SimdLevel>()
            .map_err(anyhow::Error::msg)?
            .check()
            .map_err(anyhow::Error::msg)?,
        None => nnue::SimdLevel::from_env().map_err(anyhow::Error::msg)?,
    };
    nnue::Kernels::new(level).map_err(anyhow::Error::msg)
}

/// A progress bar over bytes, with rate and ETA, drawn on standard error when it is a terminal.
pub fn byte_progress(total: u64) -> ProgressBar {
    let pb = ProgressBar::new(total);
    pb.set_style(
        ProgressStyle::with_template(
            "{elapsed_precise} [{bar:32}] {bytes}/{total_bytes} {bytes_per_sec} ETA {eta} {msg}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    pb
}

/// Prints the first bad records to standard error, and how many more there were.
pub fn print_errors(first: &[DataError], total: u64) {
    for e in first {
        eprintln!("warning: skipped: {e}");
    }
    if total > first.len() as u64 {
        eprintln!(
            "warning: ... and {} more bad records",
            total - first.len() as u64
        );
    }
}
