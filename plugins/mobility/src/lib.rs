//! The thesis's mobility blocks, updated incrementally.
//!
//! - `mb` ([`Mb`], 768 indices): for each (role, colour) the union M of the kept destination
//!   squares of all such pieces; one index `(r*8 + f)*12 + role*2 + c` per square of M (rank-major
//!   square, mirrored vertically for Black's perspective, c = 0 own / 1 opponent).
//! - `mc` ([`Mc`], 206 indices): for each of the 12 (role, colour) types exactly one index
//!   `2*OFF[role] + 2*min(|M|, CAP[role]) + c` ([`CAP`], [`OFF`]).
//!
//! # The mobility rules (`shared/reference/thesis-layouts.md`)
//!
//! Candidates of a pawn: its diagonal capture squares holding an enemy piece, plus the single push
//! square if empty (no double push, no en passant). Candidates of any other piece: its attack set
//! on the current occupancy minus squares of its own colour (castling never). A candidate is kept
//! if, after moving the piece there and removing whatever stood there, the king of the piece's
//! colour is attacked by no enemy piece; without a king nothing is kept. The side to move is
//! ignored. [`rules`] computes this the way move generators do, and a test checks it against a
//! literal implementation (move the piece, look for attackers) on thousands of positions:
//!
//! - a king keeps the adjacent non-own squares that no enemy piece attacks on the board without
//!   the king (a slider's ray through the king's square continues);
//! - any other piece keeps `candidates ∩ check_mask ∩ pin_line`, where `check_mask` is everything
//!   without a check, the checker plus the squares between it and the king with one checker,
//!   nothing with two; and `pin_line` is the king's line through the piece if the piece is the only
//!   blocker between its king and an aligned enemy slider, everything otherwise. (Moving a piece
//!   can only expose its king along a line through its origin, and a square on that line is
//!   either the pinner or between it and the king; a double check cannot be answered by one
//!   non-king move.)
//!
//! Both blocks emit M exactly (no duplicates): `active` lists M of every type, `delta` lists per
//! type `M_after \ M_before` as added and `M_before \ M_after` as removed (for `mb`), or the old
//! and new count index when they differ (for `mc`). Every emitted index is therefore a real 0 ↔ 1
//! transition of the network input, and the host's per-index counts stay 0 or 1.
//!
//! # What `delta` recomputes, and why that is exact
//!
//! [`rules::move_unions`] plays the move on the piece bitboards ([`plugin_api::decompose()`]: the
//! mover, a captured piece, the castling rook, a promotion) and decides which of the 12 unions
//! can change. Let X be the changed squares (the only squares whose content differs) and `occ`
//! the union of the occupancies before and after. A piece on a square outside X is the same
//! piece on both boards. Its kept squares are a function of (a) its candidates, (b) for a
//! non-king piece, its colour's `check_mask`, whether it is pinned and the king's line through
//! it, (c) for a king, its own pieces around it and the enemy attacks on its candidates. One fact
//! is used throughout, the **nearest-change lemma**: if on either board a ray from s reaches a
//! square of X, then on `occ` it reaches the square of X nearest to s along it (the squares
//! before that one are outside X, hence identical and empty on both boards, hence empty in
//! `occ`).
//!
//! **Non-king pieces.** A piece is *hot* if it stands on:
//!
//! 1. X itself (pieces that appear, disappear or change);
//! 2. (candidates) `rook_attacks(x, occ)` for some x in X if it is a rook or queen, likewise
//!    `bishop_attacks` for bishops and queens (slider attacks are symmetric: x is in the attack
//!    set of q iff q is in that of x on the same occupancy); a knight's move from X if it is a
//!    knight; a square from which it captures onto or pushes to X if it is a pawn. A slider
//!    whose attack set on neither board meets X has the same ray ends on both boards, hence the
//!    same attack set, and its candidates only read the colour of attacked squares, which
//!    changed only on X; if its attack set on some board meets X, the lemma puts it on a ray
//!    from X on `occ`. Knights and pawns read fixed squares;
//! 3. (legality) any square of its colour if that colour is in check before or after the move
//!    (or its king count changes). Otherwise `check_mask` is "everything" on both boards and
//!    the restriction of an unpinned piece is "none": the pieces pinned on exactly one board are
//!    hot (on both boards if the king moved; a piece pinned on both boards with the same king
//!    square keeps its pin line).
//!
//! A type none of whose pieces (before or after) is hot keeps its M. For the others the union
//! of the kept squares of its hot pieces is computed on both boards; if the two agree, M is
//! unchanged (the rest of M comes from the same non-hot pieces); otherwise the kept squares of
//! the non-hot pieces are computed once and M is formed on both boards. Pawns are cheap
//! set-wise, so a hot pawn type is simply recomputed on both boards. A colour's pins and checks
//! after the move are taken from before the move unless its king moved or a changed square lies
//! on a queen line or a knight's move from its king (nothing else enters them).
//!
//! **Kings.** The *zone* of colour c collects, for every x in X, the knight and king steps from
//! x, `rook_attacks(x, occ)` if an enemy rook or queen (on either board) stands on x or on a
//! rank or file through x, and `bishop_attacks(x, occ)` likewise for diagonals. A king that
//! moved (or several kings) is recomputed on both boards; so is a king whose candidates (the
//! adjacent squares without an own piece) changed or whose square is in the zone. Otherwise only
//! candidates in the zone can change their verdict: they are tested on both boards, and only if
//! the verdicts differ are the other candidates tested (once). Why: the verdict on a candidate y
//! reads the enemy attacks on y with the king lifted. It changes only if (i) a piece that
//! appeared, vanished or changed at some x attacks y on one board: a pawn, knight or king from
//! a step away, so y is in the zone; a slider on a ray from x; or (ii) an enemy slider on a
//! square outside X sees y on one board but not on the other, so some x in X lies between them.
//! In both slider cases take the square x' of X on that ray nearest y: an enemy slider stands on
//! x' or on a line through x', and by the lemma `rook_attacks(x', occ)` (or `bishop_attacks`)
//! reaches y, or reaches the king's square first if the ray crosses it, which `occ` holds;
//! either way y or k is in the zone. Pawn attacks are king steps.
//!
//! Nothing else enters the rules, so every union outside the recomputed ones is unchanged. The
//! conformance kit (incremental == full recomputation after every ply of thousands of random
//! plies, both perspectives) and a test that compares [`rules::move_unions`] with
//! [`rules::unions`] on every type after each of 50,000 plies (games from the kit's start
//! positions and from random legal placements) check it.
//!
//! No allocation: all sets are `u64` bitboards on the stack.
//!
//! # Pictures
//!
//! Both blocks are drawn per (role, colour) type, one sheet per piece kind `role * 2 + c`
//! ("own pawn", "their pawn", ...): `mb` as a board of the union's squares ([`mb_place`]), `mc`
//! as a bar of the capped counts 0..=`CAP[role]` ([`mc_place`]; the bars are as long as the
//! largest cap, and the roles with smaller caps leave their right-hand cells unused).

pub mod rules;

use plugin_api::{
    Axis, Board, Color, FeatureBlock, Grid, IndexList, Move, MoveDelta, PIECE_SHEETS, Place,
    RefreshTrigger,
};

use rules::{Placement, TYPES, move_unions, squares, type_parts, unions};

/// Largest count of `mc` per role (pawn .. king); larger mobility counts as this.
pub const CAP: [u32; 6] = [8, 15, 16, 25, 25, 8];

/// Offset of each role's counts in `mc`, in pairs of indices (own, opponent).
pub const OFF: [u32; 6] = [0, 9, 25, 42, 68, 94];

/// The largest count cap: `mc`'s bars have `MAX_CAP + 1` cells.
pub const MAX_CAP: u32 = {
    let (mut max, mut r) = (0, 0);
    while r < CAP.len() {
        if CAP[r] > max {
            max = CAP[r];
        }
        r += 1;
    }
    max
};

/// The colour bit of `color` seen from `perspective`: 0 own, 1 opponent.
#[inline(always)]
fn colour_bit(perspective: Color, color: Color) -> u32 {
    u32::from(perspective != color)
}

/// `mb` index of square `sq` (a1 = 0, rank-major) in the union of (`color`, `role`), as
/// `perspective` sees it.
#[inline(always)]
pub fn mb_index(perspective: Color, color: Color, role: usize, sq: u32) -> u32 {
    u32::from(perspective.relative(sq as u8)) * 12
        + role as u32 * 2
        + colour_bit(perspective, color)
}

/// `mc` index of a union of `count` squares of (`color`, `role`), as `perspective` sees it.
#[inline(always)]
pub fn mc_index(perspective: Color, color: Color, role: usize, count: u32) -> u32 {
    2 * OFF[role] + 2 * count.min(CAP[role]) + colour_bit(perspective, color)
}

/// Where `mb` index `index` is drawn: sheet `index % 12` (the type `role * 2 + c`), cell (file,
/// rank) of the perspective-relative square `index / 12 = rank * 8 + file`. Example: White's
/// knight reaching a3, seen by White (16 · 12 + 2 = 194), is sheet 2 "own knight", cell [0, 2].
#[inline]
pub fn mb_place(index: u32) -> Place {
    Place::square(index % 12, (index / 12) as u8)
}

/// Where `mc` index `index` is drawn: sheet `role * 2 + c` and cell (count, 0) of its bar, from
/// `index = 2 * (OFF[role] + count) + c` (the role is the last one whose offset is at most
/// `index / 2`). Example: White's knights with 4 kept squares, seen by White
/// (2 · 9 + 2 · 4 = 26), are sheet 2 "own knight", cell [4, 0].
#[inline]
pub fn mc_place(index: u32) -> Place {
    let (pair, c) = (index / 2, index % 2);
    let role = OFF.partition_point(|&off| off <= pair) - 1;
    Place::cell(role as u32 * 2 + c, [(pair - OFF[role]) as u8, 0])
}

/// The MB block: mobility bitset (768 indices).
pub struct Mb;

impl FeatureBlock for Mb {
    const NAME: &'static str = "mb";
    const DESCRIPTION: &'static str = "MB: mobility bitset, union of kept squares per (role, colour), (r*8+f)*12 + role*2 + c (768)";
    const SIZE: u32 = 768;
    /// At most every square of every type's union, each once.
    const MAX_ACTIVE: u32 = 768;
    /// A list holds at most one change per square per type: never overflows.
    const MAX_DELTA: u32 = 768;
    const REFRESH_TRIGGER: RefreshTrigger = RefreshTrigger::Never;
    /// One board per (role, colour) type.
    const GEOMETRY: Grid = Grid::boards(12, "square");

    const SHEET_NAMES: &'static [&'static str] = &PIECE_SHEETS;

    fn place(index: u32) -> Place {
        mb_place(index)
    }

    fn active(board: &Board, perspective: Color, out: &mut IndexList<'_>) {
        let u = unions(&Placement::of(board));
        for (t, &m) in u.iter().enumerate() {
            let (color, role) = type_parts(t);
            for sq in squares(m) {
                out.push(mb_index(perspective, color, role, sq));
            }
        }
    }

    fn delta(board: &Board, mv: &Move, out: &mut MoveDelta<'_>) {
        let mu = move_unions(board, mv);
        for t in squares(u64::from(mu.dirty)) {
            let t = t as usize;
            let (color, role) = type_parts(t);
            let (before, after) = (mu.before[t], mu.after[t]);
            for sq in squares(before & !after) {
                for p in Color::ALL {
                    out.removed[p.index()].push(mb_index(p, color, role, sq));
                }
            }
            for sq in squares(after & !before) {
                for p in Color::ALL {
                    out.added[p.index()].push(mb_index(p, color, role, sq));
                }
            }
        }
    }
}

/// The MC block: mobility counts (206 indices, exactly one per (role, colour)).
pub struct Mc;

impl FeatureBlock for Mc {
    const NAME: &'static str = "mc";
    const DESCRIPTION: &'static str =
        "MC: mobility counts, 2*OFF[role] + 2*min(|M|, CAP[role]) + c per (role, colour) (206)";
    const SIZE: u32 = 206;
    /// Exactly one index per type.
    const MAX_ACTIVE: u32 = TYPES as u32;
    /// At most one change per type.
    const MAX_DELTA: u32 = TYPES as u32;
    const REFRESH_TRIGGER: RefreshTrigger = RefreshTrigger::Never;
    /// One bar of the counts 0..=`MAX_CAP` per (role, colour) type.
    const GEOMETRY: Grid = Grid::cells(
        12,
        [MAX_CAP as u8 + 1, 1],
        [Axis::Index, Axis::Index],
        "mobility count",
    );

    const SHEET_NAMES: &'static [&'static str] = &PIECE_SHEETS;

    fn place(index: u32) -> Place {
        mc_place(index)
    }

    fn active(board: &Board, perspective: Color, out: &mut IndexList<'_>) {
        let u = unions(&Placement::of(board));
        for (t, &m) in u.iter().enumerate() {
            let (color, role) = type_parts(t);
            out.push(mc_index(perspective, color, role, m.count_ones()));
        }
    }

    fn delta(board: &Board, mv: &Move, out: &mut MoveDelta<'_>) {
        let mu = move_unions(board, mv);
        for t in squares(u64::from(mu.dirty)) {
            let t = t as usize;
            let (color, role) = type_parts(t);
            let cap = CAP[role];
            let (nb, na) = (
                mu.before[t].count_ones().min(cap),
                mu.after[t].count_ones().min(cap),
            );
            if nb != na {
                for p in Color::ALL {
                    out.removed[p.index()].push(mc_index(p, color, role, nb));
                    out.added[p.index()].push(mc_index(p, color, role, na));
                }
            }
        }
    }
}

plugin_api::export_plugin!(Mb, Mc);

#[cfg(test)]
mod tests;
