//! Who searches a position: the host's engine in process, or an external UCI engine.

use anyhow::{Context, Result, anyhow, bail};
use std::time::Duration;

use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{Chess, EnPassantMode, Move};

use host::engine::Engine;
use host::engine::eval_source::SourceEvaluator;
use host::engine::limits::Limits;
use host::engine::search::MATE;

/// A search outcome.
pub(super) struct Searched {
    pub(super) best: Move,
    pub(super) score: i32,
    pub(super) nodes: u64,
}

/// The host's search of `pos` (after the positions hashed in `history`) on the calling thread,
/// with the worker's evaluator lent to it; an evaluation error met on the way fails it, so no
/// sample carries a fallback score.
pub(super) fn host_search(
    engine: &mut Engine,
    eval: &mut SourceEvaluator<'_>,
    pos: &Chess,
    history: &[u64],
    limits: &Limits,
) -> Result<Searched> {
    let result = engine.search_with(eval, pos, history, limits);
    if let Some(e) = result.errors.first() {
        bail!("{e}");
    }
    let best = result
        .best
        .context("the search found no move in a position with legal moves")?;
    Ok(Searched {
        best,
        score: result.last.score,
        nodes: result.nodes,
    })
}

/// An external UCI engine for one worker.
pub(super) struct UciSearch {
    pub(super) engine: arena::uci::EngineProcess,
    pub(super) nodes: u64,
}

impl UciSearch {
    pub(super) fn start(spec: &str, nodes: u64) -> Result<Self> {
        let spec = arena::uci::EngineSpec::parse(spec)
            .map_err(anyhow::Error::msg)
            .context("labeler")?;
        let engine = arena::uci::EngineProcess::start(&spec).context("labeler")?;
        Ok(UciSearch { engine, nodes })
    }

    pub(super) fn new_game(&mut self) -> Result<()> {
        self.engine.new_game().context("labeler")
    }

    pub(super) fn search(
        &mut self,
        start: &str,
        moves: &[String],
        pos: &Chess,
    ) -> Result<Searched> {
        let limit = arena::uci::SearchLimit::Nodes(self.nodes);
        let r = self
            .engine
            .search(Some(start), moves, &limit, Duration::from_secs(120))
            .context("labeler")?;
        let best = r
            .best_move
            .parse::<UciMove>()
            .ok()
            .and_then(|m| m.to_move(pos).ok())
            .ok_or_else(|| {
                anyhow!(
                    "labeler: illegal best move '{}' in {}",
                    r.best_move,
                    Fen::from_position(pos, EnPassantMode::Legal)
                )
            })?;
        let score = match r.score {
            Some(arena::uci::Score::Cp(cp)) => cp,
            Some(arena::uci::Score::Mate(n)) if n > 0 => MATE - (2 * n - 1),
            Some(arena::uci::Score::Mate(n)) => -MATE + 2 * n.abs(),
            None => 0,
        };
        Ok(Searched {
            best,
            score,
            nodes: r.nodes.unwrap_or(0),
        })
    }
}
