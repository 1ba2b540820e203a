//! The `pp_3wide` block: pairs of pawns (either colour) on the same or adjacent files, as
//! nnue-pytorch's `PP_3Wide`.

use plugin_api::{
    Axis, Board, Color, FILE_A, FeatureBlock, Grid, IndexList, Move, MoveDelta, Place,
    RefreshTrigger, Role, Square, decompose,
};

use crate::attacks::PAWN_RANKS;
use crate::king_side::{orientation_on, orientations_after};

/// Number of `PP_3Wide` indices: unordered pairs of 96 pawn ids.
pub const PAWN_PAIR_FEATURES: u32 = 96 * 95 / 2;

/// The squares paired with a pawn on `sq`: its own and the adjacent files, ranks 2–7, `sq`
/// itself left out.
#[inline(always)]
pub const fn pair_mask(sq: Square) -> u64 {
    let f = sq & 7;
    let mut files = FILE_A << f;
    if f > 0 {
        files |= FILE_A << (f - 1);
    }
    if f < 7 {
        files |= FILE_A << (f + 1);
    }
    files & PAWN_RANKS & !(1u64 << sq)
}

/// [`pair_mask`] of every square, for the pair walks.
static PAIR_MASKS: [u64; 64] = {
    let mut masks = [0; 64];
    let mut sq = 0;
    while sq < 64 {
        masks[sq] = pair_mask(sq as Square);
        sq += 1;
    }
    masks
};

/// nnue-pytorch's `PP_3Wide` (`data_loader/cpp/training_data_loader.cpp`, struct `PP_3Wide`,
/// official-stockfish/nnue-pytorch at 9f72946, 2026-07-26): 4,560 indices.
///
/// A pawn's id from perspective `p` is `48 · c + (s ^ orient) − 8`, with `c` 0 for `p`'s own
/// pawns and 1 for the opponent's and the orientation of [`crate::layout`] (vertical for Black,
/// horizontal when `p`'s king is on files e–h). A pair of pawns `a`, `b` within each other's
/// [`pair_mask`] is the index `hi · (hi − 1) / 2 + lo` of their ids `hi > lo`; each pair counts
/// once. Worked example: the start position from White's view (king e1, orient 7) has the pair
/// of own pawns a2, b2, oriented h2 and g2, ids 7 and 6: index 7 · 6 / 2 + 6 = 27.
///
/// `delta` re-pairs only the pawns on the squares a move changes; perspectives are refreshed
/// only when their own king changes side. The host asks it only about moves that take, put or
/// move a pawn (`CHANGED_BY`) and makes the refreshes of other king moves itself; asked about
/// another move, it returns at once.
///
/// **Picture** ([`pawn_pair_place`]): three sheets by the pair's colours (own–own, own–their,
/// their–their), each an 8 × 8 grid of tiles, the square of the pair's lower id (the own pawn of
/// a mixed pair, else the lower square), and each tile an 8 × 8 board of the other pawn's square,
/// both oriented as the index (only ranks 2–7 and the same or adjacent files are used).
pub struct PawnPairs3Wide;

/// The sheets of [`PawnPairs3Wide`], by the colours of the lower and higher id.
const PAWN_PAIR_SHEETS: [&str; 3] = [
    "own pawn × own pawn",
    "own pawn × their pawn",
    "their pawn × their pawn",
];

/// Where `pp_3wide` index `index = hi · (hi − 1) / 2 + lo` is drawn: `hi` is the largest id with
/// `hi · (hi − 1) / 2 ≤ index`, `(1 + ⌊√(1 + 8 · index)⌋) / 2` rounded down (that is,
/// `⌊√(1 + 8 · index)⌋ / 2` rounded up), and `lo` the rest;
/// an id is `48 · c + s − 8`. Sheet `c_lo + c_hi`, tile (file, rank) of `lo`'s square, cell
/// (file, rank) of `hi`'s. Pairs that no position emits (not on the same or adjacent files, or
/// an own and an enemy pawn on one square) are [`Place::NONE`]. Example: the own pawns a2, b2
/// of the start position from White's view (27: ids 7 = h2 and 6 = g2, oriented) are sheet 0,
/// tile g2 [6, 1], cell h2 [7, 1].
#[inline]
pub fn pawn_pair_place(index: u32) -> Place {
    let hi = (1 + 8 * index).isqrt().div_ceil(2);
    let lo = index - hi * (hi - 1) / 2;
    let square = |id: u32| (id % 48 + 8) as Square;
    let (s_lo, s_hi) = (square(lo), square(hi));
    if hi >= 96 || pair_mask(s_lo) & (1u64 << s_hi) == 0 {
        return Place::NONE;
    }
    Place {
        sheet: lo / 48 + hi / 48,
        tile: [s_lo % 8, s_lo / 8],
        cell: [s_hi % 8, s_hi / 8],
    }
}

/// The index of the pair of pawns `a` and `b` (colour, board square) from `perspective`.
#[inline(always)]
pub fn pawn_pair_index(
    perspective: Color,
    orient: u8,
    a: (Color, Square),
    b: (Color, Square),
) -> u32 {
    let id = |(c, s): (Color, Square)| 48 * u32::from(c != perspective) + u32::from(s ^ orient) - 8;
    let (x, y) = (id(a), id(b));
    let (hi, lo) = (x.max(y), x.min(y));
    hi * (hi - 1) / 2 + lo
}

impl FeatureBlock for PawnPairs3Wide {
    const NAME: &'static str = "pp_3wide";
    const DESCRIPTION: &'static str =
        "PP_3Wide: pairs of pawns on the same or adjacent files, king-side mirrored (4560)";
    const SIZE: u32 = PAWN_PAIR_FEATURES;
    /// Every pair of 16 pawns.
    const MAX_ACTIVE: u32 = 120;
    /// A move changes at most two pawns, each paired with at most 15 others.
    const MAX_DELTA: u32 = 30;
    const REFRESH_TRIGGER: RefreshTrigger = RefreshTrigger::OwnKingSide;
    /// Pawns: a king move changes it only by the refresh of a king changing side, which its
    /// refresh trigger names.
    const CHANGED_BY: u8 = Role::Pawn.bit();
    const BINARY: bool = true;
    /// Colour pairs of first-pawn squares of second-pawn squares.
    const GEOMETRY: Grid = Grid::boards(3, "second pawn's square").with_tiles(
        [8, 8],
        [Axis::File, Axis::Rank],
        "first pawn's square (own, else lower)",
    );

    const SHEET_NAMES: &'static [&'static str] = &PAWN_PAIR_SHEETS;

    fn place(index: u32) -> Place {
        pawn_pair_place(index)
    }

    fn active(board: &Board, perspective: Color, out: &mut IndexList<'_>) {
        let Some(orient) = orientation_on(board, perspective) else {
            return;
        };
        let pawns = board.by_role[Role::Pawn.index()] & PAWN_RANKS;
        let pawns = [pawns & board.by_color[0], pawns & board.by_color[1]];
        for_each_pair(pawns, pawns, |a, b| {
            out.push(pawn_pair_index(perspective, orient, a, b));
        });
    }

    /// Inlined into the plugin's shim, which the host calls: one call and one frame fewer per
    /// pawn move.
    #[inline]
    fn delta(board: &Board, mv: &Move, out: &mut MoveDelta<'_>) {
        // A move takes, puts or moves a pawn when it moves one (promotions included) or takes
        // one (en passant included).
        let pawns_move = mv.role == Role::Pawn || mv.captured() == Some(Role::Pawn);
        // Most moves touch no pawn: only a king changing side (a refresh) changes anything.
        if !pawns_move && mv.role != Role::King {
            return;
        }
        let orient = orientations_after(board, mv, out);
        if !pawns_move || orient == [None, None] {
            return;
        }
        // Each colour's pawns before and after, from the move's changes alone (Stockfish's
        // `DirtyPawnPairs`, `PP_3Wide::append_changed_indices_both` at 762dd1da9).
        let pawns = board.by_role[Role::Pawn.index()] & PAWN_RANKS;
        let before = [pawns & board.by_color[0], pawns & board.by_color[1]];
        let mut after = before;
        let changes = decompose(board, mv);
        for piece in changes.removed().iter().filter(|p| p.role == Role::Pawn) {
            after[piece.color.index()] &= !(1u64 << piece.square);
        }
        for piece in changes.added().iter().filter(|p| p.role == Role::Pawn) {
            after[piece.color.index()] |= (1u64 << piece.square) & PAWN_RANKS;
        }
        let gone = [before[0] & !after[0], before[1] & !after[1]];
        let came = [after[0] & !before[0], after[1] & !before[1]];
        for_each_pair(before, gone, |a, b| {
            for (p, o) in Color::ALL.into_iter().zip(orient) {
                if let Some(o) = o {
                    out.removed[p.index()].push(pawn_pair_index(p, o, a, b));
                }
            }
        });
        for_each_pair(after, came, |a, b| {
            for (p, o) in Color::ALL.into_iter().zip(orient) {
                if let Some(o) = o {
                    out.added[p.index()].push(pawn_pair_index(p, o, a, b));
                }
            }
        });
    }
}

/// Calls `f` with every pair of the pawns `pawns` (White's, Black's) that has an end in `ends`
/// (White's, Black's), each pair once.
#[inline(always)]
fn for_each_pair(
    pawns: [u64; 2],
    ends: [u64; 2],
    mut f: impl FnMut((Color, Square), (Color, Square)),
) {
    let (all, all_ends) = (pawns[0] | pawns[1], ends[0] | ends[1]);
    let color = |sq: Square| match pawns[1] & (1u64 << sq) {
        0 => Color::White,
        _ => Color::Black,
    };
    let mut bb = all_ends;
    while bb != 0 {
        let s = bb.trailing_zeros() as Square;
        bb &= bb - 1;
        // A partner that is itself an end pairs from the higher square only.
        let above = if s == 63 { 0 } else { !0u64 << (s + 1) };
        let mut partners = PAIR_MASKS[s as usize & 63] & all & !(all_ends & above);
        while partners != 0 {
            let t = partners.trailing_zeros() as Square;
            partners &= partners - 1;
            f((color(s), s), (color(t), t));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::orientation;
    use plugin_api::square;

    #[test]
    fn worked_example() {
        let o = orientation(Color::White, square(4, 0));
        let a2 = (Color::White, square(0, 1));
        let b2 = (Color::White, square(1, 1));
        assert_eq!(pawn_pair_index(Color::White, o, a2, b2), 27);
        assert_eq!(pawn_pair_index(Color::White, o, b2, a2), 27);
    }

    #[test]
    fn geometry_worked_examples() {
        assert_eq!(
            pawn_pair_place(27),
            Place {
                sheet: 0,
                tile: [6, 1],
                cell: [7, 1],
            }
        );
        assert_eq!(PawnPairs3Wide::sheet_name(0), "own pawn × own pawn");
        // White's view, king g1 (orient 7): own pawn e4 (oriented d4) and enemy pawn d5
        // (oriented e5) are sheet 1, tile d4, cell e5.
        let o = orientation(Color::White, square(6, 0));
        let ix = pawn_pair_index(
            Color::White,
            o,
            (Color::White, square(4, 3)),
            (Color::Black, square(3, 4)),
        );
        assert_eq!(
            pawn_pair_place(ix),
            Place {
                sheet: 1,
                tile: [3, 3],
                cell: [4, 4],
            }
        );
        // Pawns a2 and c2 are never paired.
        let ix = pawn_pair_index(
            Color::White,
            0,
            (Color::White, square(0, 1)),
            (Color::White, square(2, 1)),
        );
        assert!(pawn_pair_place(ix).is_none());
    }

    #[test]
    fn places_invert_the_indices() {
        let mut placed = 0;
        let pawns = || {
            Color::ALL
                .into_iter()
                .flat_map(|c| (8..56u8).map(move |s| (c, s)))
        };
        for a in pawns() {
            for b in pawns() {
                if a >= b {
                    continue;
                }
                let ix = pawn_pair_index(Color::White, 0, a, b);
                let place = pawn_pair_place(ix);
                if pair_mask(a.1) & (1u64 << b.1) == 0 {
                    assert!(place.is_none());
                    continue;
                }
                placed += 1;
                // The lower id: the own pawn of a mixed pair, else the lower square.
                let (lo, hi) = (a.min(b), a.max(b));
                let sheet = u32::from(lo.0 == Color::Black) + u32::from(hi.0 == Color::Black);
                assert_eq!(
                    place,
                    Place {
                        sheet,
                        tile: [lo.1 % 8, lo.1 / 8],
                        cell: [hi.1 % 8, hi.1 / 8],
                    }
                );
            }
        }
        let all = (0..PAWN_PAIR_FEATURES)
            .filter(|&i| !pawn_pair_place(i).is_none())
            .count();
        assert_eq!(all, placed);
    }
}
