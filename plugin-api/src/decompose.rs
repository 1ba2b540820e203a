//! Decomposing a move into piece removals and additions.
//!
//! Every move is at most two removals and two additions: a capture removes the captured piece,
//! en passant removes a pawn beside the origin, castling moves two pieces, a promotion adds a
//! piece of another role. A block whose indices depend on single pieces only describes what one
//! piece contributes; [`piece_block_delta`](crate::piece_block_delta) does the rest.

use crate::types::{file_of, rank_of, square, Board, Color, Move, MoveKind, Role, Square};

/// A piece standing on a square.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct PieceOnSquare {
    /// Where it stands.
    pub square: Square,
    /// Its colour.
    pub color: Color,
    /// Its role.
    pub role: Role,
}

/// The piece removals and additions of one move (at most two of each).
#[derive(Clone, Copy, Debug)]
pub struct PieceChanges {
    removed: [PieceOnSquare; 2],
    added: [PieceOnSquare; 2],
    n_removed: u8,
    n_added: u8,
}

impl PieceChanges {
    /// Pieces taken off the board (the mover on its origin, a captured piece).
    #[inline(always)]
    pub fn removed(&self) -> &[PieceOnSquare] {
        &self.removed[..self.n_removed as usize]
    }

    /// Pieces put on the board (the mover or its promotion on the destination).
    #[inline(always)]
    pub fn added(&self) -> &[PieceOnSquare] {
        &self.added[..self.n_added as usize]
    }

    /// Squares whose content changes (union of removal and addition squares) as a bitboard.
    #[inline]
    pub fn changed_squares(&self) -> u64 {
        self.removed()
            .iter()
            .chain(self.added())
            .fold(0, |acc, p| acc | (1u64 << p.square))
    }
}

/// Splits `mv`, played on `board`, into removals and additions. The mover's colour is the colour
/// of the piece on `mv.from` (the side to move for a consistent board).
#[inline]
pub fn decompose(board: &Board, mv: &Move) -> PieceChanges {
    let us = if board.by_color[1] & (1u64 << mv.from) != 0 {
        Color::Black
    } else {
        Color::White
    };
    let them = us.other();
    let filler = PieceOnSquare {
        square: 0,
        color: us,
        role: Role::Pawn,
    };
    let mut c = PieceChanges {
        removed: [filler; 2],
        added: [filler; 2],
        n_removed: 0,
        n_added: 0,
    };
    let piece = |square, color, role| PieceOnSquare {
        square,
        color,
        role,
    };
    match mv.kind {
        MoveKind::Normal => {
            c.removed[0] = piece(mv.from, us, mv.role);
            c.n_removed = 1;
            if let Some(captured) = mv.captured() {
                c.removed[1] = piece(mv.to, them, captured);
                c.n_removed = 2;
            }
            c.added[0] = piece(mv.to, us, mv.promotion().unwrap_or(mv.role));
            c.n_added = 1;
        }
        MoveKind::EnPassant => {
            c.removed[0] = piece(mv.from, us, Role::Pawn);
            c.removed[1] = piece(square(file_of(mv.to), rank_of(mv.from)), them, Role::Pawn);
            c.added[0] = piece(mv.to, us, Role::Pawn);
            c.n_removed = 2;
            c.n_added = 1;
        }
        MoveKind::Castle => {
            let (king_to, rook_to) = mv.castle_destinations();
            c.removed[0] = piece(mv.from, us, Role::King);
            c.removed[1] = piece(mv.to, us, Role::Rook);
            c.added[0] = piece(king_to, us, Role::King);
            c.added[1] = piece(rook_to, us, Role::Rook);
            c.n_removed = 2;
            c.n_added = 2;
        }
    }
    c
}
