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
//!
//! **Picture.** [`threat_of_index`] inverts [`threat_index`]; `full_threats` is drawn as one
//! sheet per (attacker kind, victim kind) pair of the layout, in index order (80 sheets, see
//! [`threat_sheet`]), each an 8 × 8 grid of tiles, the attacker's oriented square, and each tile
//! an 8 × 8 board of the victim's oriented square.

use std::sync::LazyLock;

use plugin_api::{Color, PIECE_SHEETS, Place, Role, Square};

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

/// A pair the layout leaves out, in [`PAIR_BASE`]: at or past the layout's end, so that any
/// index built on it is too.
const NO_PAIR: u32 = THREAT_FEATURES;

/// Per attacker class (relative colour and role), victim's relative colour, victim role and
/// whether the oriented from-square is below the to-square: the first index of the pair's
/// block, `base + (victim colour · targets / 2 + slot) · squares`, or [`NO_PAIR`] for a pair the
/// layout leaves out, the pair de-duplication rule's included. One look-up instead of the
/// slot's, the sizes' and the rule's (Stockfish's `index_lut1`, `full_threats.cpp` at
/// 762dd1da9).
static PAIR_BASE: [[[[u32; 2]; 5]; 2]; 10] = {
    let mut t = [[[[NO_PAIR; 2]; 5]; 2]; 10];
    let mut class = 0;
    while class < 10 {
        let ar = class % 5;
        let mut v_color = 0;
        while v_color < 2 {
            let mut vr = 0;
            while vr < 5 {
                let slot = SLOT[ar][vr];
                if slot >= 0 {
                    let base = OFFSETS.base[class]
                        + (v_color as u32 * (TARGETS[ar] / 2) + slot as u32)
                            * OFFSETS.squares[class];
                    t[class][v_color][vr] = [base, if ar == vr { NO_PAIR } else { base }];
                }
                vr += 1;
            }
            v_color += 1;
        }
        class += 1;
    }
    t
};

/// Per attacker class, the empty-board attacks from each square ([`pseudo_attacks`] of the
/// class's relative colour and role): one look-up for the rank of a threat's to-square.
static CLASS_REACH: [[u64; 64]; 10] = {
    let mut t = [[0; 64]; 10];
    let mut class = 0;
    while class < 10 {
        let (color, role) = class_parts(class);
        let mut sq = 0;
        while sq < 64 {
            t[class][sq] = pseudo_attacks(color, role, sq as Square);
            sq += 1;
        }
        class += 1;
    }
    t
};

/// The roles that attack, in class order.
const ROLES: [Role; 5] = [
    Role::Pawn,
    Role::Knight,
    Role::Bishop,
    Role::Rook,
    Role::Queen,
];

/// Number of sheets of the picture: one per (attacker class, victim target), in index order.
pub const THREAT_SHEETS: u32 = 2 * (TARGETS[0] + TARGETS[1] + TARGETS[2] + TARGETS[3] + TARGETS[4]);

/// A threat as its index names it: relative colours (0 = the perspective's own piece), roles
/// and oriented squares.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Threat {
    /// The attacker's relative colour (0 own, 1 the opponent's).
    pub attacker_colour: u32,
    /// The attacker's role.
    pub attacker_role: Role,
    /// The attacker's oriented square.
    pub from: Square,
    /// The victim's relative colour (0 own, 1 the opponent's).
    pub victim_colour: u32,
    /// The victim's role.
    pub victim_role: Role,
    /// The victim's oriented square.
    pub to: Square,
}

/// The attacker class of an index: the last class whose base is at most the index.
#[inline]
fn class_of(index: u32) -> usize {
    OFFSETS.base.partition_point(|&b| b <= index) - 1
}

/// The picture sheet of `index` (below [`THREAT_FEATURES`]): the classes' targets counted in
/// index order, `Σ targets(a') over the classes a' before a` plus the target
/// `victim colour · targets(a)/2 + slot`.
#[inline]
pub fn threat_sheet(index: u32) -> u32 {
    let class = class_of(index);
    let before: u32 = (0..class).map(|a| TARGETS[a % 5]).sum();
    before + (index - OFFSETS.base[class]) / OFFSETS.squares[class]
}

/// The threat index `index` stands for, inverting [`threat_index`]: the class by the bases, the
/// victim target and the offset within the class by `SQUARES[a]`, the from-square as the last
/// square whose `FROM[a]` is at most that offset, and the to-square as the `rank`-th square of
/// the attacker's empty-board attacks from there. `None` past the layout and for the slots of the
/// same-role pairs that the de-duplication rule drops (from below to), which are never active.
/// Example: 413 (the module docs) is the own knight on c3 against an own pawn on e2.
pub fn threat_of_index(index: u32) -> Option<Threat> {
    if index >= THREAT_FEATURES {
        return None;
    }
    let class = class_of(index);
    let (relative, attacker_role) = class_parts(class);
    let offset = index - OFFSETS.base[class];
    let (target, within) = (
        offset / OFFSETS.squares[class],
        offset % OFFSETS.squares[class],
    );
    let half = TARGETS[attacker_role as usize] / 2;
    let (victim_colour, slot) = (target / half, target % half);
    let victim_role = ROLES
        .into_iter()
        .find(|&v| SLOT[attacker_role as usize][v as usize] == slot as i8)?;
    let from = OFFSETS.from[class].partition_point(|&f| f <= within) - 1;
    let rank = within - OFFSETS.from[class][from];
    let mut reach = pseudo_attacks(relative, attacker_role, from as Square);
    for _ in 0..rank {
        reach &= reach - 1;
    }
    let to = reach.trailing_zeros() as Square;
    if attacker_role == victim_role && (from as Square) < to {
        return None;
    }
    Some(Threat {
        attacker_colour: (class / 5) as u32,
        attacker_role,
        from: from as Square,
        victim_colour,
        victim_role,
        to,
    })
}

/// Where `full_threats` index `index` is drawn: its [`threat_sheet`], the tile of the attacker's
/// oriented square and the cell of the victim's ([`Place::NONE`] where [`threat_of_index`] has
/// no threat). Example: 413 is sheet 4 ("own knight → own pawn"), tile c3 [2, 2], cell e2
/// [4, 1].
pub fn threat_place(index: u32) -> Place {
    match threat_of_index(index) {
        Some(t) => Place {
            sheet: threat_sheet(index),
            tile: [t.from % 8, t.from / 8],
            cell: [t.to % 8, t.to / 8],
        },
        None => Place::NONE,
    }
}

/// The names of the [`THREAT_SHEETS`] sheets, "own knight → their rook".
static SHEET_NAMES: LazyLock<Vec<String>> = LazyLock::new(|| {
    let mut names = Vec::new();
    for class in 0..10 {
        let attacker = class_parts(class).1;
        let a = PIECE_SHEETS[attacker as usize * 2 + class / 5];
        for colour in 0..2 {
            for victim in ROLES {
                if SLOT[attacker as usize][victim as usize] >= 0 {
                    let v = PIECE_SHEETS[victim as usize * 2 + colour];
                    names.push(format!("{a} → {v}"));
                }
            }
        }
    }
    names
});

/// The name of picture sheet `sheet` ("own knight → their rook"), empty past the last.
pub fn threat_sheet_name(sheet: u32) -> &'static str {
    SHEET_NAMES.get(sheet as usize).map_or("", String::as_str)
}

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
    let a_color = (attacker.0 != perspective) as usize;
    let v_color = (victim.0 != perspective) as usize;
    let class = a_color * 5 + ar;
    let (from, to) = ((from ^ orient) as usize & 63, (to ^ orient) as usize & 63);
    let below = (1u64 << to) - 1;
    let rank = (CLASS_REACH[class][from] & below).count_ones();
    let index =
        PAIR_BASE[class][v_color][vr][usize::from(from < to)] + OFFSETS.from[class][from] + rank;
    (index < THREAT_FEATURES).then_some(index)
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
    fn geometry_worked_example() {
        let t = threat_of_index(413).unwrap();
        assert_eq!(
            t,
            Threat {
                attacker_colour: 0,
                attacker_role: Role::Knight,
                from: 18,
                victim_colour: 0,
                victim_role: Role::Pawn,
                to: 12,
            }
        );
        // Sheets 0-3 are the own pawn's (knight, rook) x (own, their); the own knight's start
        // at 4 with own victims pawn .. queen, then their victims (sheet 9 .. 13).
        assert_eq!(threat_sheet(413), 4);
        assert_eq!(
            threat_place(413),
            Place {
                sheet: 4,
                tile: [2, 2],
                cell: [4, 1],
            }
        );
        assert_eq!(threat_sheet_name(4), "own knight → own pawn");
        assert_eq!(threat_sheet_name(0), "own pawn → own knight");
        assert_eq!(threat_sheet_name(3), "own pawn → their rook");
        assert_eq!(threat_sheet_name(13), "own knight → their queen");
        assert_eq!(threat_sheet_name(79), "their queen → their queen");
        assert_eq!(threat_sheet_name(80), "");
        assert_eq!(THREAT_SHEETS, 80);
        assert_eq!(threat_sheet(THREAT_FEATURES - 1), 79);
        // Two rooks facing on the a-file: only the one on a8 counts; the other slot is unused.
        let o = 0;
        let kept = threat_index(
            Color::White,
            o,
            (Color::Black, Role::Rook),
            56,
            (Color::White, Role::Rook),
            0,
        )
        .unwrap();
        let t = threat_of_index(kept).unwrap();
        assert_eq!(
            (t.from, t.to, t.attacker_colour, t.victim_colour),
            (56, 0, 1, 0)
        );
        assert_eq!(
            threat_sheet_name(threat_sheet(kept)),
            "their rook → own rook"
        );
        assert_eq!(threat_place(kept).tile, [0, 7]);
    }

    #[test]
    fn threat_of_index_inverts_threat_index() {
        let mut dropped = 0;
        for index in 0..THREAT_FEATURES {
            match threat_of_index(index) {
                Some(t) => {
                    let colour = |c: u32| if c == 0 { Color::White } else { Color::Black };
                    let back = threat_index(
                        Color::White,
                        0,
                        (colour(t.attacker_colour), t.attacker_role),
                        t.from,
                        (colour(t.victim_colour), t.victim_role),
                        t.to,
                    );
                    assert_eq!(back, Some(index), "{t:?}");
                    let sheet = threat_sheet(index);
                    let name = threat_sheet_name(sheet);
                    let a = PIECE_SHEETS[t.attacker_role as usize * 2 + t.attacker_colour as usize];
                    let v = PIECE_SHEETS[t.victim_role as usize * 2 + t.victim_colour as usize];
                    assert_eq!(name, format!("{a} → {v}"));
                }
                None => dropped += 1,
            }
        }
        // The dropped slots: exactly the same-role pairs of `indices_fill_the_layout_exactly`.
        let same_role_pairs: u32 = (0..10)
            .map(|class| {
                let (color, role) = class_parts(class);
                if role == Role::Pawn {
                    return 0;
                }
                (0..64u8)
                    .map(|from| {
                        let below = (1u64 << from) - 1;
                        2 * (pseudo_attacks(color, role, from) & !below).count_ones()
                    })
                    .sum::<u32>()
            })
            .sum();
        assert_eq!(dropped, same_role_pairs);
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
