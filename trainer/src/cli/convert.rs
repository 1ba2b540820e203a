//! `trainer convert`: between any two formats, with filters, counting what was read, written
//! and skipped.

use anyhow::Result;
use std::path::PathBuf;

use clap::Args;

use trainer::data::filter::Filter;
use trainer::data::{self, ErrorKind, ErrorPolicy, Format, ReadOptions};

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
    let config = args.filter.config().map_err(anyhow::Error::msg)?;
    let policy = args.input.on_error;
    let options = ReadOptions {
        validate: !args.no_validate,
    };
    let mut filter = Filter::new(&config, 0);
    let mut writer = data::create_writer(&args.output, out_format)?;
    let pb = byte_progress(args.input.total_bytes());
    let (mut read, mut written, mut unwritable, mut bad) = (0u64, 0u64, 0u64, 0u64);
    let mut first_errors = Vec::new();
    let mut done_bytes = 0u64;
    let mut outcome = Ok(());
    'files: for input in &inputs {
        let mut reader = data::open_reader(&input.path, input.format, None, options)?;
        while let Some(item) = reader.next() {
            if read % 4096 == 0 {
                pb.set_position(done_bytes + reader.bytes_read());
                pb.set_message(format!("{written} written"));
            }
            let sample = match item {
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
            match writer.write(&sample) {
                Ok(()) => written += 1,
                Err(e) if e.kind == ErrorKind::Unrepresentable && policy == ErrorPolicy::Skip => {
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
    // Whatever happened, keep what was written.
    let finished = writer.finish().map_err(|e| e.to_string());
    pb.finish_and_clear();
    print_errors(&first_errors, bad + unwritable);
    println!(
        "read {read} positions from {} file(s); skipped {bad} bad records",
        inputs.len()
    );
    println!("{}", filter.counts());
    println!(
        "wrote {written} positions to {} ({out_format}); skipped {unwritable} the format cannot hold",
        args.output.display()
    );
    outcome.and(finished).map_err(anyhow::Error::msg)
}
