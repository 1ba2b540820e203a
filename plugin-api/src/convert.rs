//! Conversions between shakmaty's types (the host's chess rules) and the ABI types, both ways:
//! the one place that knows both (the engine, the tools, the trainer's data and the
//! conformance kit all convert here).

use std::num::NonZeroU32;

use shakmaty::{Bitboard, ByColor, ByRole, Position, Role as SRole, Setup};

use crate::types::{Board, Color, Move, MoveKind, Role, Square, NO_ROLE, NO_SQUARE};

/// The ABI role of a shakmaty role.
#[inline]
pub fn role_from_shakmaty(role: SRole) -> Role {
    match role {
        SRole::Pawn => Role::Pawn,
        SRole::Knight => Role::Knight,
        SRole::Bishop => Role::Bishop,
        SRole::Rook => Role::Rook,
        SRole::Queen => Role::Queen,
        SRole::King => Role::King,
    }
}

/// The ABI colour of a shakmaty colour.
#[inline]
fn color_from_shakmaty(color: shakmaty::Color) -> Color {
    match color {
        shakmaty::Color::White => Color::White,
        shakmaty::Color::Black => Color::Black,
    }
}

/// The ABI board of shakmaty's pieces, castling rights, side to move and en-passant square.
fn board_of(
    pieces: &shakmaty::Board,
    castling: Bitboard,
    turn: shakmaty::Color,
    ep: Option<shakmaty::Square>,
) -> Board {
    let mut by_role = [0u64; 6];
    for role in SRole::ALL {
        by_role[role_from_shakmaty(role).index()] = pieces.by_role(role).0;
    }
    Board {
        by_color: [
            pieces.by_color(shakmaty::Color::White).0,
            pieces.by_color(shakmaty::Color::Black).0,
        ],
        by_role,
        castling: castling.0,
        turn: color_from_shakmaty(turn),
        ep_square: ep.map_or(NO_SQUARE, |sq| u32::from(sq) as u8),
    }
}

/// The ABI board of a shakmaty position (its en-passant square only when a capture is legal).
pub fn board_from_position(pos: &impl Position) -> Board {
    board_of(
        pos.board(),
        pos.castles().castling_rights(),
        pos.turn(),
        pos.legal_ep_square(),
    )
}

/// The ABI move of a shakmaty move; `None` for piece drops (not chess).
pub fn move_from_shakmaty(m: &shakmaty::Move) -> Option<Move> {
    let role_byte = |r: Option<SRole>| r.map_or(NO_ROLE, |r| role_from_shakmaty(r) as u8);
    Some(match *m {
        shakmaty::Move::Normal {
            role,
            from,
            capture,
            to,
            promotion,
        } => Move {
            from: u32::from(from) as u8,
            to: u32::from(to) as u8,
            role: role_from_shakmaty(role),
            captured: role_byte(capture),
            promotion: role_byte(promotion),
            kind: MoveKind::Normal,
        },
        shakmaty::Move::EnPassant { from, to } => Move {
            from: u32::from(from) as u8,
            to: u32::from(to) as u8,
            role: Role::Pawn,
            captured: Role::Pawn as u8,
            promotion: NO_ROLE,
            kind: MoveKind::EnPassant,
        },
        shakmaty::Move::Castle { king, rook } => Move {
            from: u32::from(king) as u8,
            to: u32::from(rook) as u8,
            role: Role::King,
            captured: NO_ROLE,
            promotion: NO_ROLE,
            kind: MoveKind::Castle,
        },
        shakmaty::Move::Put { .. } => return None,
    })
}

/// The ABI board of a shakmaty setup, its en-passant square as written (no legality check:
/// feature blocks accept any placement).
pub fn board_from_setup(setup: &Setup) -> Board {
    board_of(
        &setup.board,
        setup.castling_rights,
        setup.turn,
        setup.ep_square,
    )
}

/// The shakmaty setup of an ABI board with these clocks (not checked for legality; a board
/// whose bitboards contradict each other becomes the empty board, which no legality check
/// passes).
pub fn setup_from_board(board: &Board, halfmoves: u32, fullmoves: u32) -> Setup {
    let bb = |i: usize| Bitboard(board.by_role[i]);
    let by_role = ByRole {
        pawn: bb(0),
        knight: bb(1),
        bishop: bb(2),
        rook: bb(3),
        queen: bb(4),
        king: bb(5),
    };
    let by_color = ByColor {
        white: Bitboard(board.by_color[0]),
        black: Bitboard(board.by_color[1]),
    };
    let pieces = shakmaty::Board::try_from_bitboards(by_role, by_color)
        .unwrap_or_else(|_| shakmaty::Board::empty());
    Setup {
        board: pieces,
        promoted: Bitboard::EMPTY,
        pockets: None,
        turn: match board.turn {
            Color::White => shakmaty::Color::White,
            Color::Black => shakmaty::Color::Black,
        },
        castling_rights: Bitboard(board.castling),
        ep_square: (board.ep_square < 64)
            .then(|| shakmaty::Square::new(u32::from(board.ep_square))),
        remaining_checks: None,
        halfmoves,
        fullmoves: NonZeroU32::new(fullmoves).unwrap_or(NonZeroU32::MIN),
    }
}

/// The shakmaty move of an ABI move.
pub fn move_to_shakmaty(mv: &Move) -> shakmaty::Move {
    let sq = |s: Square| shakmaty::Square::new(u32::from(s & 63));
    let role = |r: Role| SRole::ALL[r.index()];
    match mv.kind {
        MoveKind::Normal => shakmaty::Move::Normal {
            role: role(mv.role),
            from: sq(mv.from),
            capture: mv.captured().map(role),
            to: sq(mv.to),
            promotion: mv.promotion().map(role),
        },
        MoveKind::EnPassant => shakmaty::Move::EnPassant {
            from: sq(mv.from),
            to: sq(mv.to),
        },
        MoveKind::Castle => shakmaty::Move::Castle {
            king: sq(mv.from),
            rook: sq(mv.to),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;
    use shakmaty::{CastlingMode, Chess, EnPassantMode};

    #[test]
    fn boards_and_moves_go_both_ways() {
        for fen in [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r3k2r/pPp2ppp/8/3pP3/8/8/PPP2PPP/R3K2R w KQkq d6 3 17",
        ] {
            let setup = fen.parse::<Fen>().unwrap().into_setup();
            let board = board_from_setup(&setup);
            let back = setup_from_board(&board, setup.halfmoves, setup.fullmoves.get());
            assert_eq!(back, setup, "{fen}");
            let pos: Chess = setup.position(CastlingMode::Standard).unwrap();
            assert_eq!(board_from_position(&pos), board, "{fen}");
            for m in pos.legal_moves() {
                let abi = move_from_shakmaty(&m).unwrap();
                assert_eq!(move_to_shakmaty(&abi), m, "{fen} {m}");
            }
            assert_eq!(
                Fen::from_position(&pos, EnPassantMode::Always).to_string(),
                fen
            );
        }
    }
}
