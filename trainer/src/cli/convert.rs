//! `trainer convert`: between any two formats, with filters, counting what was read, written
//! and skipped.

use anyhow::Result;
use std::path::PathBuf;

use clap::Args;

use nnue::units::ScoreUnits;
use trainer::data::filter::{Filter, FilterConfig};
use trainer::data::score_units;
use trainer::data::{self, DataErrorKind, ErrorPolicy, Format, ReadOptions};

use super::{FilterArgs, InputArgs, byte_progress, print_errors};

/// Arguments of `trainer convert`.
#[derive(Args, Debug)]
pub struct ConvertArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Output file (the format comes from the extension).
    #[arg(long = "out", value_name = "FILE")]
    pub output: PathBuf,
    /// Format of the output, overriding its extension.
    #[arg(long, value_name = "FORMAT")]
    pub out_format: Option<Format>,
    /// Pass over the first N positions read (bad records aside) before any is filtered or
    /// written: with `--limit`, a slice of the input.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub offset: u64,
    /// Stop after writing this many positions.
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,
    /// The units of the inputs' scores, overriding what their records or formats say
    /// (centipawns, stockfish, stockfish-wdl).
    #[arg(long, value_name = "UNITS")]
    pub in_units: Option<ScoreUnits>,
    /// Write the scores in these units (default: the inputs'): `stockfish` for Stockfish's
    /// tools and nnue-pytorch, which read their internal units. The output's units are
    /// recorded beside it (`OUT.units`).
    #[arg(long, value_name = "UNITS")]
    pub out_units: Option<ScoreUnits>,
    /// Check binary records structurally only (no move generator): faster, but an illegal move
    /// that fits the board passes.
    #[arg(long)]
    pub no_validate: bool,
    #[command(flatten)]
    pub filter: FilterArgs,
}

/// Runs the conversion; prints the counts.
pub fn run(args: &ConvertArgs) -> Result<()> {
    let inputs = args.input.inputs().map_err(anyhow::Error::msg)?;
    let out_format = Format::resolve(args.out_format, &args.output).map_err(anyhow::Error::msg)?;
    let policy = args.input.on_error;
    let options = ReadOptions {
        validate: !args.no_validate,
    };
    // Each input's units (declared, recorded or inferred), and the output's.
    let mut in_units = Vec::new();
    for input in &inputs {
        let units = match args.in_units {
            Some(u) => u,
            None => {
                score_units::units_of(&input.path, input.format)
                    .map_err(anyhow::Error::msg)?
                    .0
            }
        };
        in_units.push(units);
    }
    let out_units = match args.out_units {
        Some(u) => u,
        None if in_units.windows(2).all(|w| w[0] == w[1]) => in_units[0],
        None => anyhow::bail!(
            "the inputs' scores are in different units ({}): name the output's with --out-units",
            inputs
                .iter()
                .zip(&in_units)
                .map(|(i, u)| format!("{}: {u}", i.path.display()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let same_units = in_units.windows(2).all(|w| w[0] == w[1]);
    let filter_config = args.filter.config().map_err(anyhow::Error::msg)?;
    if filter_config.wdl_skip && !same_units {
        anyhow::bail!(
            "--wdl-skip reads the scores in one units, and the inputs' differ: convert them apart"
        );
    }
    // The WDL skip reads the inputs' scores in their units.
    let config = FilterConfig {
        score_units: in_units[0],
        ..filter_config
    };
    let mut filter = Filter::new(&config, 0);
    let mut writer = data::create_writer(&args.output, out_format)?;
    let pb = byte_progress(args.input.total_bytes());
    let (mut read, mut written, mut unwritable, mut bad) = (0u64, 0u64, 0u64, 0u64);
    let mut first_errors = Vec::new();
    let mut done_bytes = 0u64;
    let mut outcome = Ok(());
    'files: for (input, &from) in inputs.iter().zip(&in_units) {
        let mut reader = data::open_reader(&input.path, input.format, None, options)?;
        while let Some(item) = reader.next() {
            if read % 4096 == 0 {
                pb.set_position(done_bytes + reader.bytes_read());
                pb.set_message(format!("{written} written"));
            }
            let mut sample = match item {
                Ok(s) => s,
                Err(e) => {
                    if policy == ErrorPolicy::Fail {
                        outcome = Err(e.to_string());
                        break 'files;
                    }
                    bad += 1;
                    if first_errors.len() < 20 {
                        first_errors.push(e);
                    }
                    continue;
                }
            };
            read += 1;
            if read <= args.offset || !filter.keep(&sample) {
                continue;
            }
            sample.score = score_units::convert(&sample, from, out_units);
            match writer.write(&sample) {
                Ok(()) => written += 1,
                Err(e)
                    if e.kind == DataErrorKind::Unrepresentable && policy == ErrorPolicy::Skip =>
                {
                    unwritable += 1;
                    if first_errors.len() < 20 {
                        first_errors.push(e);
                    }
                }
                Err(e) => {
                    outcome = Err(e.to_string());
                    break 'files;
                }
            }
            if args.limit.is_some_and(|l| written >= l) {
                break 'files;
            }
        }
        done_bytes += std::fs::metadata(&input.path).map(|m| m.len()).unwrap_or(0);
    }
    // Whatever happened, keep what was written, with its units.
    let finished = writer
        .finish()
        .map_err(|e| e.to_string())
        .and_then(|()| score_units::record(&args.output, out_units).map_err(|e| e.to_string()));
    pb.finish_and_clear();
    print_errors(&first_errors, bad + unwritable);
    println!(
        "read {read} positions from {} file(s); skipped {bad} bad records",
        inputs.len()
    );
    println!("{}", filter.counts());
    println!(
        "wrote {written} positions to {} ({out_format}, scores in {}); skipped {unwritable} the format cannot hold",
        args.output.display(),
        out_units.describe()
    );
    outcome.and(finished).map_err(anyhow::Error::msg)
}
