//! `host bench [--depth N] [--net FILE] [--threads N] [--hash MB]`: the fixed-depth search
//! benchmark. One line per position, then `N nodes M nps` (deterministic N with one thread).
//! `host bench --list` prints the positions instead.

use std::io::Write;
use std::path::Path;

use host::engine::bench::{self, BenchConfig};
use host::engine::eval_source::EvalSource;

/// Runs the benchmark with the built-in evaluation, or the network `net` (its plugins from
/// `plugin_dir`, else the default plugin directories).
pub fn run(
    plugin_dir: Option<&Path>,
    depth: u32,
    net: Option<&Path>,
    threads: usize,
    hash_mb: usize,
    out: &mut impl Write,
) -> Result<(), String> {
    if threads == 0 {
        return Err("--threads must be at least 1".into());
    }
    let eval = match net {
        Some(path) => EvalSource::load(path, plugin_dir).map_err(|e| e.to_string())?,
        None => EvalSource::Builtin,
    };
    let config = BenchConfig {
        depth,
        threads,
        hash_mb,
        eval,
    };
    bench::run(&config, out)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Writes the benchmark's positions, one FEN per line.
pub fn list(out: &mut impl Write) -> Result<(), String> {
    for fen in bench::POSITIONS {
        writeln!(out, "{fen}").map_err(|e| format!("cannot write output: {e}"))?;
    }
    Ok(())
}
