//! Labels for training data: how much search scores a position, from the cheapest to the
//! field's habit (Stockfish's `gensfen` at 5,000 nodes).
//!
//! [`Engine::label`](super::facade::Engine::label) scores a position under a [`LabelBudget`]:
//!
//! - `static`: the evaluation of the position itself, no search (one node);
//! - `qsearch`: the quiescence search from the position (captures, promotions and check
//!   evasions until the position is quiet), with a full window;
//! - `nodes=N`: the search with a node limit of N (at least its first iteration, as any search);
//! - `depth=D`: the search to depth D.
//!
//! Scores are the side to move's, in centipawns (every evaluator converts its network's units,
//! [`ScoreUnits`](crate::nnue::units::ScoreUnits)).

use std::fmt;
use std::str::FromStr;

use super::search::MAX_PLY;

/// How much search one label costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LabelBudget {
    /// The static evaluation.
    Static,
    /// The quiescence search.
    Quiescence,
    /// A search of this many nodes.
    Nodes(u64),
    /// A search to this depth.
    Depth(u32),
}

/// An evaluation that failed in a search or a label (a plugin's error): its one-line message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct EvalFailure(pub String);

/// What a label found: the score (side to move's) and the nodes it took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Label {
    /// The score, side to move's view, in centipawns.
    pub score: i32,
    /// Nodes visited (1 for a static label).
    pub nodes: u64,
}

impl FromStr for LabelBudget {
    type Err = String;

    /// `static`, `qsearch`, `nodes=N` (N ≥ 1) or `depth=D` (1 ≤ D < 128).
    fn from_str(text: &str) -> Result<Self, String> {
        let t = text.trim();
        let bad = |why: &str| {
            format!("label budget '{text}': {why} (static, qsearch, nodes=N or depth=D)")
        };
        match t {
            "static" => return Ok(LabelBudget::Static),
            "qsearch" => return Ok(LabelBudget::Quiescence),
            _ => {}
        }
        let (key, value) = t.split_once('=').ok_or_else(|| bad("unknown budget"))?;
        match key.trim() {
            "nodes" => match value.trim().parse::<u64>() {
                Ok(n) if n >= 1 => Ok(LabelBudget::Nodes(n)),
                _ => Err(bad("nodes must be a whole number of at least 1")),
            },
            "depth" => match value.trim().parse::<u32>() {
                Ok(d) if (1..MAX_PLY as u32).contains(&d) => Ok(LabelBudget::Depth(d)),
                _ => Err(bad(&format!("depth must be 1 to {}", MAX_PLY - 1))),
            },
            _ => Err(bad("unknown budget")),
        }
    }
}

impl fmt::Display for LabelBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LabelBudget::Static => write!(f, "static"),
            LabelBudget::Quiescence => write!(f, "qsearch"),
            LabelBudget::Nodes(n) => write!(f, "nodes={n}"),
            LabelBudget::Depth(d) => write!(f, "depth={d}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_parse_print_and_refuse_what_is_out_of_range() {
        for text in ["static", "qsearch", "nodes=5000", "depth=9"] {
            let b: LabelBudget = text.parse().unwrap();
            assert_eq!(b.to_string(), text);
        }
        assert_eq!(" nodes = 7 ".parse(), Ok(LabelBudget::Nodes(7)));
        for bad in [
            "",
            "quiet",
            "nodes=0",
            "nodes=-3",
            "depth=0",
            "depth=128",
            "depth=x",
            "nodes",
        ] {
            let e = bad.parse::<LabelBudget>().unwrap_err();
            assert!(e.starts_with(&format!("label budget '{bad}'")), "{e}");
        }
    }
}
