//! What king-relative blocks share: indices that depend on the own king's square, so that a
//! move of that king refreshes the perspective and any other move is a piece-by-piece delta.

use plugin_api::decompose::{NormalPieces, normal_pieces};
use plugin_api::{
    Board, Color, IndexList, Move, MoveDelta, MoveKind, PieceOnSquare, Square, decompose,
};

/// A block whose index of a piece depends on the piece and on the perspective's own king square
/// only; `index` returns `None` for pieces the block leaves out.
pub trait KingRelative {
    /// The index of `piece` from `perspective` whose king stands on `king` (board squares).
    fn index(perspective: Color, king: Square, piece: PieceOnSquare) -> Option<u32>;

    /// What [`index_in`](Self::index_in) needs of `perspective` and its king, worked out once
    /// for all the pieces of a board or a move (by default the king's square).
    #[inline(always)]
    fn frame(_perspective: Color, king: Square) -> u32 {
        u32::from(king)
    }

    /// [`index`](Self::index) from a [`frame`](Self::frame) of the perspective and its king.
    #[inline(always)]
    fn index_in(perspective: Color, frame: u32, piece: PieceOnSquare) -> Option<u32> {
        Self::index(perspective, frame as Square, piece)
    }

    /// Every piece's index, for a board with the perspective's king (none without it).
    #[inline]
    fn active(board: &Board, perspective: Color, out: &mut IndexList<'_>) {
        let Some(king) = board.king(perspective) else {
            return;
        };
        let frame = Self::frame(perspective, king);
        board.for_each_piece(|square, color, role| {
            let piece = PieceOnSquare {
                square,
                color,
                role,
            };
            if let Some(ix) = Self::index_in(perspective, frame, piece) {
                out.push(ix);
            }
        });
    }

    /// A refresh for the perspective whose king moves; the moved pieces' indices for the other.
    /// A normal move's pieces are read off the move ([`normal_pieces`]: the mover, its capture,
    /// what lands), the others' from [`decompose()`].
    #[inline]
    fn delta(board: &Board, mv: &Move, out: &mut MoveDelta<'_>) {
        if mv.kind != MoveKind::Normal {
            let changes = decompose(board, mv);
            return Self::delta_of(board, mv, (changes.removed(), changes.added()), out);
        }
        let NormalPieces {
            moved,
            captured,
            landed,
        } = normal_pieces(board, mv);
        match captured {
            Some(captured) => Self::delta_of(board, mv, (&[moved, captured], &[landed]), out),
            None => Self::delta_of(board, mv, (&[moved], &[landed]), out),
        }
    }

    /// [`delta`](Self::delta) of a move that takes the pieces `removed` and puts `added`.
    #[inline(always)]
    fn delta_of(
        board: &Board,
        mv: &Move,
        (removed, added): (&[PieceOnSquare], &[PieceOnSquare]),
        out: &mut MoveDelta<'_>,
    ) {
        for p in Color::ALL {
            let pi = p.index();
            let king = match board.king(p) {
                Some(king) if !board.moves_king_of(mv, p) => king,
                _ => {
                    out.refresh[pi] = true;
                    continue;
                }
            };
            let frame = Self::frame(p, king);
            for &piece in removed {
                if let Some(ix) = Self::index_in(p, frame, piece) {
                    out.removed[pi].push(ix);
                }
            }
            for &piece in added {
                if let Some(ix) = Self::index_in(p, frame, piece) {
                    out.added[pi].push(ix);
                }
            }
        }
    }
}
