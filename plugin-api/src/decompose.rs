//! Decomposing a move into piece removals and additions.
//!
//! Every move is at most two removals and two additions: a capture removes the captured piece,
//! en passant removes a pawn beside the origin, castling moves two pieces, a promotion adds a
//! piece of another role. A block whose indices depend on single pieces only describes what one
//! piece contributes; [`piece_block_delta`](crate::piece_block_delta) does the rest.

use crate::types::{
    file_of, rank_of, square, Board, Color, Move, MoveKind, Role, Square, NO_SQUARE,
};

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
    let us = board.color_on(mv.from);
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
            let normal = normal_pieces(board, mv);
            c.removed[0] = normal.moved;
            c.n_removed = 1;
            if let Some(captured) = normal.captured {
                c.removed[1] = captured;
                c.n_removed = 2;
            }
            c.added[0] = normal.landed;
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

/// The pieces of a normal move ([`normal_pieces`]).
#[derive(Clone, Copy, Debug)]
pub struct NormalPieces {
    /// The mover, on its square.
    pub moved: PieceOnSquare,
    /// The captured piece, on the target square.
    pub captured: Option<PieceOnSquare>,
    /// What lands on the target square: the promotion, else the mover.
    pub landed: PieceOnSquare,
}

/// The pieces of `mv` (legal on `board`), which must be a normal move: [`decompose`]'s changes of
/// it, for a block that reads them without [`PieceChanges`]' lists (the king-relative blocks'
/// deltas).
#[inline(always)]
pub fn normal_pieces(board: &Board, mv: &Move) -> NormalPieces {
    let us = board.color_on(mv.from);
    let piece = |square, color, role| PieceOnSquare {
        square,
        color,
        role,
    };
    NormalPieces {
        moved: piece(mv.from, us, mv.role),
        captured: mv.captured().map(|role| piece(mv.to, us.other(), role)),
        landed: piece(mv.to, us, mv.promotion().unwrap_or(mv.role)),
    }
}

impl Board {
    /// The board after `mv` (which must be legal here). Updates pieces, side to move, castling
    /// rights and the en-passant square.
    pub fn play(&self, mv: &Move) -> Board {
        let mut next = *self;
        if mv.kind == MoveKind::Normal {
            // A normal move's pieces ([`normal_pieces`]) without listing them: the captured
            // piece and the mover taken off, what lands put on.
            let NormalPieces {
                moved,
                captured,
                landed,
            } = normal_pieces(self, mv);
            if let Some(c) = captured {
                next.remove(c.square, c.color, c.role);
            }
            next.remove(moved.square, moved.color, moved.role);
            next.put(landed.square, landed.color, landed.role);
        } else {
            let changes = decompose(self, mv);
            for p in changes.removed() {
                next.remove(p.square, p.color, p.role);
            }
            for p in changes.added() {
                next.put(p.square, p.color, p.role);
            }
        }
        let us = self.turn;
        next.turn = us.other();
        next.ep_square = NO_SQUARE;
        if mv.role == Role::Pawn && (mv.from as i16 - mv.to as i16).abs() == 16 {
            next.ep_square = (mv.from + mv.to) / 2;
        }
        if mv.role == Role::King {
            next.castling &= !(0xffu64 << (if us == Color::White { 0 } else { 56 }));
        }
        next.castling &= !((1u64 << mv.from) | (1u64 << mv.to));
        next
    }

    /// Whether `mv` (legal here) moves `color`'s king, castling included: the move's role and
    /// the colour of its origin, without looking up the piece there.
    #[inline(always)]
    pub fn moves_king_of(&self, mv: &Move, color: Color) -> bool {
        mv.role == Role::King && self.by_color[color.index()] & (1u64 << mv.from) != 0
    }

    /// The square of `color`'s king after `mv` (legal here; `None` without one), without
    /// playing the move: only the mover's king moves.
    #[inline(always)]
    pub fn king_after(&self, mv: &Move, color: Color) -> Option<Square> {
        if !self.moves_king_of(mv, color) {
            return self.king(color);
        }
        Some(match mv.kind {
            MoveKind::Castle => mv.castle_destinations().0,
            _ => mv.to,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{MoveKind, NO_ROLE};

    fn board_with(pieces: &[(Square, Color, Role)]) -> Board {
        let mut b = Board {
            by_color: [0; 2],
            by_role: [0; 6],
            castling: 0,
            turn: Color::White,
            ep_square: crate::NO_SQUARE,
        };
        for &(sq, c, r) in pieces {
            b.put(sq, c, r);
        }
        b
    }

    fn mv(
        from: Square,
        to: Square,
        role: Role,
        captured: u8,
        promotion: u8,
        kind: MoveKind,
    ) -> Move {
        Move {
            from,
            to,
            role,
            captured,
            promotion,
            kind,
        }
    }

    #[test]
    fn capture_promotion_removes_two_and_adds_the_new_piece() {
        // b7xa8=Q: pawn b7 (49), rook a8 (56).
        let b = board_with(&[
            (49, Color::White, Role::Pawn),
            (56, Color::Black, Role::Rook),
        ]);
        let c = decompose(
            &b,
            &mv(
                49,
                56,
                Role::Pawn,
                Role::Rook as u8,
                Role::Queen as u8,
                MoveKind::Normal,
            ),
        );
        assert_eq!(
            c.removed(),
            &[
                PieceOnSquare {
                    square: 49,
                    color: Color::White,
                    role: Role::Pawn
                },
                PieceOnSquare {
                    square: 56,
                    color: Color::Black,
                    role: Role::Rook
                },
            ]
        );
        assert_eq!(
            c.added(),
            &[PieceOnSquare {
                square: 56,
                color: Color::White,
                role: Role::Queen
            }]
        );
    }

    #[test]
    fn en_passant_removes_the_pawn_beside_the_origin() {
        // Black e4xd3 e.p.: pawn e4 (28), white pawn d4 (27), target d3 (19).
        let b = board_with(&[
            (28, Color::Black, Role::Pawn),
            (27, Color::White, Role::Pawn),
        ]);
        let c = decompose(
            &b,
            &mv(
                28,
                19,
                Role::Pawn,
                Role::Pawn as u8,
                NO_ROLE,
                MoveKind::EnPassant,
            ),
        );
        assert_eq!(
            c.removed()[1],
            PieceOnSquare {
                square: 27,
                color: Color::White,
                role: Role::Pawn
            }
        );
        assert_eq!(
            c.added(),
            &[PieceOnSquare {
                square: 19,
                color: Color::Black,
                role: Role::Pawn
            }]
        );
    }

    #[test]
    fn castling_moves_king_and_rook() {
        // Black O-O-O: king e8 (60), rook a8 (56) -> king c8 (58), rook d8 (59).
        let b = board_with(&[
            (60, Color::Black, Role::King),
            (56, Color::Black, Role::Rook),
        ]);
        let c = decompose(
            &b,
            &mv(60, 56, Role::King, NO_ROLE, NO_ROLE, MoveKind::Castle),
        );
        assert_eq!(
            c.added(),
            &[
                PieceOnSquare {
                    square: 58,
                    color: Color::Black,
                    role: Role::King
                },
                PieceOnSquare {
                    square: 59,
                    color: Color::Black,
                    role: Role::Rook
                },
            ]
        );
        assert_eq!(
            c.changed_squares(),
            (1 << 56) | (1 << 58) | (1 << 59) | (1 << 60)
        );
    }

    #[test]
    fn king_after_follows_the_movers_king_alone_castling_included() {
        // White: king e1 (4), rook h1 (7), knight b1 (1); Black: king e8 (60).
        let b = board_with(&[
            (4, Color::White, Role::King),
            (7, Color::White, Role::Rook),
            (1, Color::White, Role::Knight),
            (60, Color::Black, Role::King),
        ]);
        let castle = mv(4, 7, Role::King, NO_ROLE, NO_ROLE, MoveKind::Castle);
        let step = mv(4, 12, Role::King, NO_ROLE, NO_ROLE, MoveKind::Normal);
        let knight = mv(1, 18, Role::Knight, NO_ROLE, NO_ROLE, MoveKind::Normal);
        for (m, white, moves) in [(castle, 6, true), (step, 12, true), (knight, 4, false)] {
            assert_eq!(b.moves_king_of(&m, Color::White), moves);
            assert!(!b.moves_king_of(&m, Color::Black));
            assert_eq!(b.king_after(&m, Color::White), Some(white));
            assert_eq!(b.king_after(&m, Color::Black), Some(60));
            // What playing the move gives.
            assert_eq!(b.play(&m).king(Color::White), Some(white));
        }
        let kingless = board_with(&[(1, Color::White, Role::Knight)]);
        assert_eq!(kingless.king_after(&knight, Color::White), None);
    }
}
