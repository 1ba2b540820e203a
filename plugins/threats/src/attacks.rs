//! Attack sets: on the board's occupancy (shakmaty's magic bitboards) for enumerating threats,
//! and on an empty board (`const` tables) for the layout's offsets and ranks.

use plugin_api::{Color, Role, Square};
use shakmaty::{Bitboard, Square as SSquare, attacks};

#[inline(always)]
fn ssq(sq: Square) -> SSquare {
    // Every caller passes a board square (below 64).
    SSquare::new(u32::from(sq))
}

/// Ranks 2–7, where pawns stand in legal positions (the layouts know no pawn elsewhere).
pub const PAWN_RANKS: u64 = 0x00ff_ffff_ffff_ff00;

/// The squares a `role` of `color` on `sq` attacks with `occupied` as blockers (a pawn's two
/// capture squares; never called for kings, which are no attackers in these layouts).
#[inline(always)]
pub fn attacks(color: Color, role: Role, sq: Square, occupied: u64) -> u64 {
    let s = ssq(sq);
    match role {
        Role::Pawn => PAWN_ATTACKS[color.index()][sq as usize],
        Role::Knight => attacks::knight_attacks(s).0,
        Role::Bishop => attacks::bishop_attacks(s, Bitboard(occupied)).0,
        Role::Rook => attacks::rook_attacks(s, Bitboard(occupied)).0,
        Role::Queen => attacks::queen_attacks(s, Bitboard(occupied)).0,
        Role::King => attacks::king_attacks(s).0,
    }
}

/// The squares a `role` of `color` on `sq` attacks on an empty board (a pawn's capture squares,
/// which nnue-pytorch counts for pawns on ranks 2–7 only; see [`crate::layout`]).
#[inline(always)]
pub const fn pseudo_attacks(color: Color, role: Role, sq: Square) -> u64 {
    match role {
        Role::Pawn => PAWN_ATTACKS[color as usize][sq as usize],
        _ => PSEUDO[role as usize][sq as usize],
    }
}

/// The squares from which a `role` of `color` attacks some square of `targets` on an empty
/// board: the union of the targets' own empty-board attacks (the relation is symmetric; for a
/// pawn, with the colours swapped). A few table lookups instead of one test per attacker.
#[inline(always)]
pub fn attacked_from(color: Color, role: Role, mut targets: u64) -> u64 {
    let by = if role == Role::Pawn {
        color.other()
    } else {
        color
    };
    let mut set = 0;
    while targets != 0 {
        let x = targets.trailing_zeros() as Square;
        targets &= targets - 1;
        set |= pseudo_attacks(by, role, x);
    }
    set
}

const fn step_set(sq: usize, steps: &[(i8, i8)], slide: bool) -> u64 {
    let (f0, r0) = ((sq % 8) as i8, (sq / 8) as i8);
    let mut set = 0u64;
    let mut i = 0;
    while i < steps.len() {
        let (df, dr) = steps[i];
        let (mut f, mut r) = (f0 + df, r0 + dr);
        while f >= 0 && f < 8 && r >= 0 && r < 8 {
            set |= 1u64 << (r * 8 + f);
            if !slide {
                break;
            }
            f += df;
            r += dr;
        }
        i += 1;
    }
    set
}

const KNIGHT_STEPS: [(i8, i8); 8] = [
    (1, 2),
    (2, 1),
    (2, -1),
    (1, -2),
    (-1, -2),
    (-2, -1),
    (-2, 1),
    (-1, 2),
];
const DIAGONALS: [(i8, i8); 4] = [(1, 1), (1, -1), (-1, -1), (-1, 1)];
const LINES: [(i8, i8); 4] = [(1, 0), (0, 1), (-1, 0), (0, -1)];
const KING_STEPS: [(i8, i8); 8] = [
    (1, 0),
    (1, 1),
    (0, 1),
    (-1, 1),
    (-1, 0),
    (-1, -1),
    (0, -1),
    (1, -1),
];

/// Empty-board attacks by role (the pawn row is unused) and square.
static PSEUDO: [[u64; 64]; 6] = {
    let mut t = [[0u64; 64]; 6];
    let mut sq = 0;
    while sq < 64 {
        t[Role::Knight as usize][sq] = step_set(sq, &KNIGHT_STEPS, false);
        t[Role::Bishop as usize][sq] = step_set(sq, &DIAGONALS, true);
        t[Role::Rook as usize][sq] = step_set(sq, &LINES, true);
        t[Role::Queen as usize][sq] = step_set(sq, &DIAGONALS, true) | step_set(sq, &LINES, true);
        t[Role::King as usize][sq] = step_set(sq, &KING_STEPS, false);
        sq += 1;
    }
    t
};

/// Pawn capture squares by colour and square (also defined on ranks 1 and 8).
static PAWN_ATTACKS: [[u64; 64]; 2] = {
    let mut t = [[0u64; 64]; 2];
    let mut sq = 0;
    while sq < 64 {
        t[0][sq] = step_set(sq, &[(-1, 1), (1, 1)], false);
        t[1][sq] = step_set(sq, &[(-1, -1), (1, -1)], false);
        sq += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attacked_from_is_the_inverse_of_the_empty_board_attacks() {
        for color in Color::ALL {
            for role in [
                Role::Pawn,
                Role::Knight,
                Role::Bishop,
                Role::Rook,
                Role::Queen,
            ] {
                for x in 0..64u8 {
                    let expected = (0..64u8)
                        .filter(|&from| pseudo_attacks(color, role, from) & (1 << x) != 0)
                        .fold(0u64, |s, from| s | 1 << from);
                    assert_eq!(
                        attacked_from(color, role, 1 << x),
                        expected,
                        "{color:?} {role:?} {x}"
                    );
                }
            }
        }
    }

    #[test]
    fn empty_board_tables_equal_shakmaty() {
        for sq in 0..64u8 {
            for role in [
                Role::Knight,
                Role::Bishop,
                Role::Rook,
                Role::Queen,
                Role::King,
            ] {
                assert_eq!(
                    pseudo_attacks(Color::White, role, sq),
                    attacks(Color::White, role, sq, 0),
                    "{role:?} on {sq}"
                );
            }
            for color in Color::ALL {
                let c = if color == Color::White {
                    shakmaty::Color::White
                } else {
                    shakmaty::Color::Black
                };
                assert_eq!(
                    pseudo_attacks(color, Role::Pawn, sq),
                    attacks::pawn_attacks(c, ssq(sq)).0
                );
            }
        }
    }
}
