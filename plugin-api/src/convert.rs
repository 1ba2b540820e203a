//! Conversions between shakmaty's types (the host's chess rules) and the ABI types.

use shakmaty::{Position, Role as SRole};

use crate::types::{Board, Color, Move, MoveKind, Role, NO_ROLE, NO_SQUARE};

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

/// The ABI board of a shakmaty position.
pub fn board_from_position(pos: &impl Position) -> Board {
    let b = pos.board();
    let mut by_role = [0u64; 6];
    for role in SRole::ALL {
        by_role[role_from_shakmaty(role).index()] = b.by_role(role).0;
    }
    Board {
        by_color: [
            b.by_color(shakmaty::Color::White).0,
            b.by_color(shakmaty::Color::Black).0,
        ],
        by_role,
        castling: pos.castles().castling_rights().0,
        turn: if pos.turn() == shakmaty::Color::White {
            Color::White
        } else {
            Color::Black
        },
        ep_square: pos
            .legal_ep_square()
            .map_or(NO_SQUARE, |sq| u32::from(sq) as u8),
    }
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
