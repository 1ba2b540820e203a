//! Attack sets: on the board's occupancy for enumerating threats (sliders from
//! `sliders`' small tables, the others from the empty-board tables), and on an empty
//! board (`const` tables) for the layout's offsets and ranks.

use plugin_api::{Color, Role, Square};

use crate::sliders::{bishop_attacks, rook_attacks};

/// Ranks 2–7, where pawns stand in legal positions (the layouts know no pawn elsewhere).
pub const PAWN_RANKS: u64 = 0x00ff_ffff_ffff_ff00;

/// The squares a `role` of `color` on `sq` attacks with `occupied` as blockers (a pawn's two
/// capture squares; never called for kings, which are no attackers in these layouts).
#[inline(always)]
pub fn attacks(color: Color, role: Role, sq: Square, occupied: u64) -> u64 {
    match role {
        Role::Pawn => PAWN_ATTACKS[color.index()][sq as usize],
        Role::Bishop => bishop_attacks(sq, occupied),
        Role::Rook => rook_attacks(sq, occupied),
        Role::Queen => bishop_attacks(sq, occupied) | rook_attacks(sq, occupied),
        Role::Knight | Role::King => PSEUDO[role as usize][sq as usize],
    }
}

/// The squares a bishop and a rook on `sq` attack with `occupied` as blockers (every slider's
/// attacks from `sq`, and the sliders that see `sq`: the relation is symmetric), each computed
/// only if asked (`want`: most squares have no slider on some of their lines).
#[inline(always)]
pub fn slider_attacks(sq: Square, occupied: u64, want: (bool, bool)) -> (u64, u64) {
    (
        if want.0 {
            bishop_attacks(sq, occupied)
        } else {
            0
        },
        if want.1 {
            rook_attacks(sq, occupied)
        } else {
            0
        },
    )
}

/// The squares of the ray from `from` through `through` up to the board's edge, `from` left out
/// (empty if the two squares share no line or are one square): Stockfish's `ray_pass_bb`. A
/// slider on `from` that sees `through` sees no piece before it, so on a board the ray's first
/// piece after `through` is the one beyond it. From two tables of 4.7 KiB in all (one of 32 KiB
/// by square pair missed the cache inside the accumulator's loop).
#[inline(always)]
pub fn ray_through(from: Square, through: Square) -> u64 {
    // The squares' difference on a 16-file board (0x88), which names the direction whatever
    // the squares: one look-up instead of comparing files and ranks.
    let wide = |sq: Square| usize::from(sq & 63) + usize::from(sq & 56);
    let direction = DIRECTIONS[wide(through) + 119 - wide(from)];
    RAYS[usize::from(direction)][usize::from(from & 63)]
}

/// The capture squares of a pawn of `color` on `sq`.
#[inline(always)]
pub fn pawn_attacks(color: Color, sq: Square) -> u64 {
    PAWN_ATTACKS[color.index()][sq as usize]
}

/// Knight moves by square.
#[inline(always)]
pub fn knight_attacks(sq: Square) -> u64 {
    PSEUDO[Role::Knight as usize][sq as usize]
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

/// The ray from a square to the board's edge (the square left out), by direction
/// `(sign Δfile + 1) · 3 + sign Δrank + 1` (4, no direction, is empty) and square.
static RAYS: [[u64; 64]; 9] = {
    let mut t = [[0u64; 64]; 9];
    let mut d = 0;
    while d < 9 {
        let (sf, sr) = ((d / 3) as i8 - 1, (d % 3) as i8 - 1);
        let mut sq = 0;
        while d != 4 && sq < 64 {
            let (mut f, mut r) = ((sq % 8) as i8 + sf, (sq / 8) as i8 + sr);
            while f >= 0 && f < 8 && r >= 0 && r < 8 {
                t[d][sq] |= 1u64 << (r * 8 + f);
                f += sf;
                r += sr;
            }
            sq += 1;
        }
        d += 1;
    }
    t
};

/// The direction (RAYS' first index: (file step + 1) × 3 + rank step + 1) from one square to
/// another, by their difference on a 16-file board plus 119: 4, the empty row, where they share
/// no line or are one square.
static DIRECTIONS: [u8; 239] = {
    let mut t = [4u8; 239];
    let mut dr = -7i32;
    while dr <= 7 {
        let mut df = -7i32;
        while df <= 7 {
            if (df != 0 || dr != 0) && (df == 0 || dr == 0 || df == dr || df == -dr) {
                t[(dr * 16 + df + 119) as usize] = ((df.signum() + 1) * 3 + dr.signum() + 1) as u8;
            }
            df += 1;
        }
        dr += 1;
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
    use shakmaty::{Square as SSquare, attacks};

    fn ssq(sq: Square) -> SSquare {
        SSquare::new(u32::from(sq))
    }

    #[test]
    fn the_ray_through_a_square_is_what_a_queen_sees_on_its_line() {
        for from in 0..64u8 {
            for through in 0..64u8 {
                let ray = ray_through(from, through);
                // shakmaty's line through both squares, less `from` and the squares on its
                // far side (those with `from` between them and `through`).
                let (f, t) = (ssq(from), ssq(through));
                let line = if from == through {
                    shakmaty::Bitboard(0)
                } else {
                    attacks::ray(f, t)
                };
                let expected = line
                    .into_iter()
                    .filter(|&x| x != f && !attacks::between(x, t).contains(f))
                    .fold(0u64, |set, x| set | 1 << u32::from(x));
                assert_eq!(ray, expected, "{from} through {through}");
            }
        }
    }

    #[test]
    fn empty_board_tables_equal_shakmaty() {
        for sq in 0..64u8 {
            let s = ssq(sq);
            let empty = shakmaty::Bitboard(0);
            for (role, theirs) in [
                (Role::Knight, attacks::knight_attacks(s)),
                (Role::Bishop, attacks::bishop_attacks(s, empty)),
                (Role::Rook, attacks::rook_attacks(s, empty)),
                (Role::Queen, attacks::queen_attacks(s, empty)),
                (Role::King, attacks::king_attacks(s)),
            ] {
                assert_eq!(
                    pseudo_attacks(Color::White, role, sq),
                    theirs.0,
                    "{role:?} on {sq}"
                );
                assert_eq!(
                    attacks(Color::White, role, sq, 0),
                    theirs.0,
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
