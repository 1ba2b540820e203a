//! `host eval --net FILE --fens FILE`: the raw network output of positions.
//!
//! Output, one line per FEN: `FEN<TAB>raw network output for the side to move` (the layout of
//! `shared/parity/*.eval.tsv` minus its header), each from a fresh accumulator refresh.

use std::io::Write;
use std::path::Path;

use plugin_api::PluginRegistry;

use host::fens::{board_from_setup, fen_lines};
use host::nnue::{AccumulatorStack, Kernels, Nnue, SimdLevel};

/// The kernels asked for: `--simd` if given, else `$NNUE_SIMD`, else the best of this CPU.
pub fn kernels(simd: Option<&str>) -> Result<Kernels, String> {
    let level = match simd {
        Some(name) => name.parse::<SimdLevel>()?.check()?,
        None => SimdLevel::from_env()?,
    };
    Kernels::new(level)
}

/// Runs the subcommand; lines already written stay written if a later FEN is bad.
pub fn run(
    plugin_dir: Option<&Path>,
    net: &Path,
    fens: &Path,
    simd: Option<&str>,
    out: &mut impl Write,
) -> Result<(), String> {
    let kernels = kernels(simd)?;
    let registry = PluginRegistry::discover(plugin_dir).map_err(|e| e.to_string())?;
    let nnue = Nnue::load(net, &registry).map_err(|e| e.to_string())?;
    let mut stack = AccumulatorStack::with_max_ply(&nnue, kernels, 0);
    let io = |e: std::io::Error| format!("cannot write output: {e}");
    for item in fen_lines(fens).map_err(|e| e.to_string())? {
        let fen = item.map_err(|e| e.to_string())?;
        let board = board_from_setup(&fen.setup);
        stack
            .reset(&board)
            .map_err(|e| format!("{}:{}: {e}", fens.display(), fen.line))?;
        writeln!(out, "{}\t{}", fen.text, stack.evaluate()).map_err(io)?;
    }
    Ok(())
}
