//! `host features --spec SPEC --fens FILE`: the feature indices of positions.
//!
//! Output, one line per FEN: `FEN<TAB>stm<TAB>white indices<TAB>black indices`, indices sorted,
//! unique and comma-separated (the layout of `shared/parity/*.features.tsv` minus its header).

use std::io::Write;
use std::path::Path;

use plugin_api::{Color, PluginRegistry};

use chess_text::fen_lines;
use plugin_api::board_from_setup;

/// Runs the subcommand; lines already written stay written if a later FEN is bad.
pub fn run(
    plugin_dir: Option<&Path>,
    spec: &str,
    fens: &Path,
    out: &mut impl Write,
) -> Result<(), String> {
    let registry = PluginRegistry::discover(plugin_dir).map_err(|e| e.to_string())?;
    let set = registry.feature_set(spec).map_err(|e| e.to_string())?;
    let io = |e: std::io::Error| format!("cannot write output: {e}");
    for item in fen_lines(fens).map_err(|e| e.to_string())? {
        let fen = item.map_err(|e| e.to_string())?;
        let board = board_from_setup(&fen.setup);
        let stm = if board.turn == Color::White { 'w' } else { 'b' };
        let mut cols = Vec::with_capacity(2);
        for p in Color::ALL {
            let set = set
                .active_set(&board, p)
                .map_err(|e| format!("{}:{}: {e}", fens.display(), fen.line))?;
            cols.push(set.iter().map(u32::to_string).collect::<Vec<_>>().join(","));
        }
        writeln!(out, "{}\t{stm}\t{}\t{}", fen.text, cols[0], cols[1]).map_err(io)?;
    }
    Ok(())
}
