//! How the engine writes scores, moves and progress in UCI: `cp N` / `mate N`, moves in
//! coordinate notation, and the `info` line of an iteration.

use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Move};

use super::control::SearchControl;
use super::search::{Iteration, MATE, MATE_BOUND};
use super::tt::TranspositionTable;

/// The score as UCI writes it: `cp N` or `mate N` (moves, negative when being mated).
pub fn uci_score(score: i32) -> String {
    if score >= MATE_BOUND {
        format!("mate {}", (MATE - score + 1) / 2)
    } else if score <= -MATE_BOUND {
        match (MATE + score) / 2 {
            0 => "mate 0".to_string(),
            n => format!("mate -{n}"),
        }
    } else {
        format!("cp {score}")
    }
}

/// A move in UCI notation (standard castling, `0000` for none).
pub fn uci_move(m: Option<&Move>) -> String {
    m.map_or_else(
        || "0000".to_string(),
        |m| m.to_uci(CastlingMode::Standard).to_string(),
    )
}

/// The UCI `info` line of an iteration (its score in centipawns, as every evaluator speaks).
pub fn info_line(it: &Iteration, control: &SearchControl, tt: &TranspositionTable) -> String {
    let nodes = control.total_nodes();
    let elapsed = control.since_go();
    let ms = elapsed.as_millis();
    let nps = (nodes as f64 / elapsed.as_secs_f64().max(1e-6)) as u64;
    let mut line = format!(
        "info depth {} seldepth {} multipv 1 score {} nodes {} nps {} hashfull {} time {} pv",
        it.depth,
        it.seldepth.max(it.depth),
        uci_score(it.score),
        nodes,
        nps,
        tt.hashfull(),
        ms
    );
    for m in &it.pv {
        line.push(' ');
        line.push_str(&UciMove::from_standard(*m).to_string());
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mate_scores_are_reported_in_moves() {
        assert_eq!(uci_score(MATE - 1), "mate 1");
        assert_eq!(uci_score(MATE - 3), "mate 2");
        assert_eq!(uci_score(-MATE + 2), "mate -1");
        assert_eq!(uci_score(-MATE), "mate 0");
        assert_eq!(uci_score(35), "cp 35");
    }
}
