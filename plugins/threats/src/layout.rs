//! nnue-pytorch's `Full_Threats` layout: the attacker/victim map, the offset tables and the
//! index of one threat from one perspective.
//!
//! Source: `data_loader/cpp/training_data_loader.cpp`, struct `FullThreats`, of
//! official-stockfish/nnue-pytorch at commit 9f72946 (2026-07-26; the file as of 02141a4,
//! 2026-07-24, "Add Pawn Pair features (#502)"), the layout of Stockfish's threat networks of
//! mid-2026. A later revision of that layout becomes a new [`crate::FullThreats`] layout version.
//!
//! **Orientation.** From perspective `p` with its own king on `k`, a square `s` is seen as
//! `s ^ orient`, `orient` = (56 if `p` is Black) ^ (7 if `k` is on files e–h): the opposite of
//! HalfKAv2_hm's mirror, which moves the king to files e–h; here it ends on files a–d. Colours are
//! relative: 0 is `p`'s own, 1 the opponent's.
//!
//! **Attackers and victims.** Kings neither attack nor are attacked; a slider's ray stops at the
//! first piece (kings included), which it attacks whatever its colour. The valid (attacker,
//! victim) role pairs, each with a *slot*, are
//!
//! ```text
//! pawn   → knight 0, rook 1                       (2 roles × 2 colours = 4 targets)
//! knight → pawn 0, knight 1, bishop 2, rook 3, queen 4                  (10 targets)
//! bishop → pawn 0, knight 1, bishop 2, rook 3                           ( 8 targets)
//! rook   → pawn 0, knight 1, bishop 2, rook 3                           ( 8 targets)
//! queen  → pawn 0, knight 1, bishop 2, rook 3, queen 4                  (10 targets)
//! ```
//!
//! and a pair of the same role (knight–knight, bishop–bishop, rook–rook, queen–queen, own or
//! enemy) counts only from the piece on the higher oriented square, since the reverse threat is
//! then also present: the *pair de-duplication rule*.
//!
//! **Index.** Attacker classes are `colour · 5 + role` (0–9). For each class `a` in order,
//! `SQUARES[a]` is the number of (from, to) empty-board attacks over all from-squares (pawns:
//! from ranks 2–7 only), `FROM[a][s]` the count before square `s`, and `BASE[a]` the sum of
//! `targets(a) · SQUARES[a']` over the classes before it. Then
//!
//! ```text
//! index = BASE[a] + (victim colour · targets(a)/2 + slot) · SQUARES[a] + FROM[a][from]
//!       + |pseudo_attacks(a, from) ∩ squares below to|
//! ```
//!
//! with oriented squares and relative colours throughout: 59,808 indices.
//!
//! **Worked example.** After 1. Nf3, from White's view (king e1: orient 7). The knight on f3
//! (oriented c3 = 18) attacks g1, e1, d2, h2, d4, e5, g5 and h4, of which d2 and h2 hold own
//! pawns (the king on e1 is no victim). d2 is oriented e2 = 12: class 1 (own knight), slot 0,
//! own victim, so the index is `BASE[1] + 0 · SQUARES[1] + FROM[1][18] + rank` with `BASE[1]` =
//! 4 · 84 = 336 (84 pawn attacks from ranks 2–7), `FROM[1][18]` = 74 (the knight moves from
//! a1 … b3) and rank 3 (e2 comes after b1, d1 and a2 among c3's knight squares):
//! index 413. The test `worked_example` checks it.

use plugin_api::{Color, Role, Square};

use crate::attacks::pseudo_attacks;

/// Number of `Full_Threats` indices.
pub const THREAT_FEATURES: u32 = 59_808;

/// Per attacker role (pawn..queen): victim slots, or -1 for pairs left out.
const SLOT: [[i8; 5]; 5] = [
    [-1, 0, -1, 1, -1],
    [0, 1, 2, 3, 4],
    [0, 1, 2, 3, -1],
    [0, 1, 2, 3, -1],
    [0, 1, 2, 3, 4],
];

/// Per attacker role: number of victim (colour, role) targets.
const TARGETS: [u32; 5] = [4, 10, 8, 8, 10];

/// The victim roles a role attacks in this layout, as a role mask (bit r = role r).
pub const VICTIM_ROLES: [u8; 5] = [0b01010, 0b11111, 0b01111, 0b01111, 0b11111];

/// The offset tables of the layout (see the module docs).
struct Offsets {
    base: [u32; 10],
    squares: [u32; 10],
    from: [[u32; 64]; 10],
    total: u32,
}

const fn class_parts(class: usize) -> (Color, Role) {
    let color = if class < 5 {
        Color::White
    } else {
        Color::Black
    };
    let role = match class % 5 {
        0 => Role::Pawn,
        1 => Role::Knight,
        2 => Role::Bishop,
        3 => Role::Rook,
        _ => Role::Queen,
    };
    (color, role)
}

static OFFSETS: Offsets = {
    let mut o = Offsets {
        base: [0; 10],
        squares: [0; 10],
        from: [[0; 64]; 10],
        total: 0,
    };
    let mut class = 0;
    while class < 10 {
        let (color, role) = class_parts(class);
        o.base[class] = o.total;
        let mut count = 0u32;
        let mut sq = 0;
        while sq < 64 {
            o.from[class][sq] = count;
            let pawn_edge = sq < 8 || sq >= 56;
            if !(role as usize == 0 && pawn_edge) {
                count += pseudo_attacks(color, role, sq as Square).count_ones();
            }
            sq += 1;
        }
        o.squares[class] = count;
        o.total += TARGETS[role as usize] * count;
        class += 1;
    }
    o
};

const _: () = assert!(OFFSETS.total == THREAT_FEATURES);

/// The square orientation of `perspective` whose king stands on `king` (see the module docs).
#[inline(always)]
pub const fn orientation(perspective: Color, king: Square) -> u8 {
    let vertical = if matches!(perspective, Color::Black) {
        56
    } else {
        0
    };
    let horizontal = if king & 7 >= 4 { 7 } else { 0 };
    vertical ^ horizontal
}

/// A piece as a threat sees it: colour and role.
pub type Piece = (Color, Role);

/// The index of the threat of `attacker` on `from` against `victim` on `to` (board squares)
/// from `perspective` with square orientation `orient`, or `None` if the layout leaves the pair
/// out. Kings must not be passed.
#[inline(always)]
pub fn threat_index(
    perspective: Color,
    orient: u8,
    attacker: Piece,
    from: Square,
    victim: Piece,
    to: Square,
) -> Option<u32> {
    let (ar, vr) = (attacker.1 as usize, victim.1 as usize);
    let slot = SLOT[ar][vr];
    if slot < 0 {
        return None;
    }
    let (from, to) = (from ^ orient, to ^ orient);
    if ar == vr && from < to {
        return None;
    }
    let a_color = (attacker.0 != perspective) as usize;
    let v_color = (victim.0 != perspective) as u32;
    let relative = if a_color == 0 {
        Color::White
    } else {
        Color::Black
    };
    let class = a_color * 5 + ar;
    let below = (1u64 << to) - 1;
    let rank = (pseudo_attacks(relative, attacker.1, from) & below).count_ones();
    Some(
        OFFSETS.base[class]
            + (v_color * (TARGETS[ar] / 2) + slot as u32) * OFFSETS.squares[class]
            + OFFSETS.from[class][from as usize]
            + rank,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use plugin_api::square;

    #[test]
    fn worked_example() {
        let f3 = square(5, 2);
        let d2 = square(3, 1);
        let orient = orientation(Color::White, square(4, 0));
        assert_eq!(orient, 7);
        assert_eq!(OFFSETS.squares[0], 84);
        assert_eq!(OFFSETS.base[1], 336);
        assert_eq!(OFFSETS.from[1][18], 74);
        let ix = threat_index(
            Color::White,
            orient,
            (Color::White, Role::Knight),
            f3,
            (Color::White, Role::Pawn),
            d2,
        );
        assert_eq!(ix, Some(413));
    }

    #[test]
    fn left_out_pairs_and_deduplication() {
        let o = orientation(Color::White, square(4, 0));
        let w = |r| (Color::White, r);
        let b = |r| (Color::Black, r);
        // A pawn's threat on a bishop is left out; on a knight it counts.
        assert_eq!(
            threat_index(Color::White, o, w(Role::Pawn), 12, b(Role::Bishop), 21),
            None
        );
        assert!(threat_index(Color::White, o, w(Role::Pawn), 12, b(Role::Knight), 21).is_some());
        // Two rooks facing each other: only the one on the higher oriented square counts.
        let a = threat_index(Color::White, o, w(Role::Rook), 0, b(Role::Rook), 56);
        let c = threat_index(Color::White, o, b(Role::Rook), 56, w(Role::Rook), 0);
        assert!(a.is_none() && c.is_some());
    }

    #[test]
    fn indices_fill_the_layout_exactly() {
        // Every kept (class, from, victim, to) reaches its own index below the size. The only
        // indices never reached are the same-role pairs the de-duplication rule drops (the
        // layout keeps their slots, as nnue-pytorch's does).
        let mut seen = vec![false; THREAT_FEATURES as usize];
        let (mut kept, mut dropped) = (0u32, 0u32);
        for class in 0..10 {
            let (color, role) = class_parts(class);
            for from in 0..64u8 {
                if role == Role::Pawn && !(8..56).contains(&from) {
                    continue;
                }
                let mut to_set = pseudo_attacks(color, role, from);
                while to_set != 0 {
                    let to = to_set.trailing_zeros() as u8;
                    to_set &= to_set - 1;
                    for vc in Color::ALL {
                        for vr in [
                            Role::Pawn,
                            Role::Knight,
                            Role::Bishop,
                            Role::Rook,
                            Role::Queen,
                        ] {
                            if SLOT[role as usize][vr as usize] < 0 {
                                continue;
                            }
                            // Orientation 0 from White: squares and colours as given.
                            match threat_index(Color::White, 0, (color, role), from, (vc, vr), to) {
                                Some(ix) => {
                                    assert!(!seen[ix as usize], "index {ix} reached twice");
                                    seen[ix as usize] = true;
                                    kept += 1;
                                }
                                None => {
                                    assert!(role == vr && from < to);
                                    dropped += 1;
                                }
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(kept + dropped, THREAT_FEATURES);
        assert_eq!(seen.iter().filter(|&&s| s).count() as u32, kept);
    }
}
