//! Stockfish's HalfKAv2_hm, index for index.

use plugin_api::{
    Axis, Board, Color, FeatureBlock, Grid, IndexList, Move, MoveDelta, PIECE_SHEETS,
    PieceOnSquare, Place, RefreshTrigger, Square, file_of, rank_of,
};

use crate::relative::KingRelative;

/// HalfKAv2_hm (32 king buckets × 704 = 22,528 indices), as Stockfish defines it in
/// `src/nnue/features/half_ka_v2_hm.{h,cpp}` (official-stockfish/Stockfish, unchanged from
/// Stockfish 14 through the 2025 sources at commit 04c16723; the layout of Stockfish 15's and
/// 15.1's networks):
///
/// ```text
/// index = (s ^ orient) + piece_index + 704 · bucket
/// orient = (56 if the perspective is Black) ^ (7 if its king is on files a–d)
/// piece_index = (role · 2 + (1 if the piece is the opponent's)) · 64, but 640 for both kings
/// bucket = KingBuckets[perspective][king] = (7 − rank(o)) · 4 + (7 − file(o)), o = king ^ orient
/// ```
///
/// Squares are Stockfish's (a1 = 0, h1 = 7, a8 = 56): Black's view is mirrored vertically, and
/// the board is mirrored horizontally whenever the own king stands on files a–d, so the king is
/// always on files e–h ("hm", half-mirrored); both kings share one plane (index 640 + square).
///
/// Worked examples, start position, White's view (king e1: orient 0, bucket 31, base 21,824):
/// rook a1 is 0 + 6·64 + 21,824 = 22,208 and king e1 is 4 + 640 + 21,824 = 22,468; Black's view
/// is the same by symmetry. With White's king on c1 (orient 7, o = f1, bucket 30, base 21,120) a
/// white pawn on a2 is (8 ^ 7) + 0 + 21,120 = 21,135.
///
/// **Factor** (`halfka_v2_hm^`): nnue-pytorch's `HalfKAv2_hm^` (`model/features/halfka_v2_hm.py`,
/// official-stockfish/nnue-pytorch 2025): each index shares the weights of its piece-square
/// plane without the bucket, 768 virtual features, with the kings' shared plane split in two:
/// `index % 704`, plus 64 when it is the king plane and the king is not the own one (its square's
/// bucket differs from the index's).
///
/// **Picture** ([`halfka_v2_hm_place`]): one sheet per piece plane (Stockfish's order: own and
/// their pawn, knight, bishop, rook, queen, then the kings' shared plane), each a grid of 4 × 8
/// tiles, one per king bucket, and each tile an 8 × 8 board of the piece's square. Everything is
/// drawn in the index's own (oriented) frame: the tile is the oriented own king square `o`,
/// which always lies on files e–h, so tile column `j` is file e + `j`, labelled 0–3 (a file
/// axis would wrongly label them a–d), and the tile row is `o`'s rank (rank 1 at the bottom); the
/// cell is the oriented piece square `s ^ orient` (for a real king on files a–d the board is
/// mirrored, so cell file a holds the real h-file).
pub struct HalfKav2Hm;

/// The sheets of [`HalfKav2Hm`]: its 11 piece planes.
const HALFKA_SHEETS: [&str; 11] = [
    PIECE_SHEETS[0],
    PIECE_SHEETS[1],
    PIECE_SHEETS[2],
    PIECE_SHEETS[3],
    PIECE_SHEETS[4],
    PIECE_SHEETS[5],
    PIECE_SHEETS[6],
    PIECE_SHEETS[7],
    PIECE_SHEETS[8],
    PIECE_SHEETS[9],
    "both kings",
];

/// Where HalfKAv2_hm index `index = s' + plane · 64 + 704 · bucket` is drawn (see
/// [`HalfKav2Hm`]): sheet `plane`; tile (file(o) − 4, rank(o)) of the oriented king square `o`
/// of the bucket, which inverts `bucket = (7 − rank(o)) · 4 + (7 − file(o))` as
/// (3 − bucket % 4, 7 − bucket / 4); cell (file, rank) of the oriented piece square `s'`.
/// Example: White's rook a1 with its king on e1 (22,208: bucket 31, plane 6, square 0) is sheet 6
/// "own rook", tile [0, 0] (king e1), cell [0, 0].
#[inline]
pub fn halfka_v2_hm_place(index: u32) -> Place {
    let (bucket, plane_square) = (index / 704, index % 704);
    let square = plane_square % 64;
    Place {
        sheet: plane_square / 64,
        tile: [(3 - bucket % 4) as u8, (7 - bucket / 4) as u8],
        cell: [(square % 8) as u8, (square / 8) as u8],
    }
}

/// The virtual feature of HalfKAv2_hm index `index` (see [`HalfKav2Hm`]).
#[inline]
pub fn halfka_v2_hm_factor(index: u32) -> u32 {
    let plane_square = index % 704;
    let bucket = index / 704;
    if plane_square / 64 == 10 {
        let o = (plane_square % 64) as u8;
        let own = file_of(o) >= 4 && u32::from((7 - rank_of(o)) * 4 + (7 - file_of(o))) == bucket;
        if !own {
            return plane_square + 64;
        }
    }
    plane_square
}

/// The index of `piece` for `perspective`, whose king stands on `king` (board squares).
#[inline(always)]
pub fn halfka_v2_hm_index(perspective: Color, king: Square, piece: PieceOnSquare) -> u32 {
    halfka_v2_hm_index_in(perspective, halfka_v2_hm_frame(perspective, king), piece)
}

/// What an index needs of the perspective's king: the squares' orientation (low byte) plus
/// the king bucket's first index (`704 · bucket`, above it).
#[inline(always)]
fn halfka_v2_hm_frame(perspective: Color, king: Square) -> u32 {
    let vertical = if perspective == Color::Black { 56 } else { 0 };
    let horizontal = if file_of(king) < 4 { 7 } else { 0 };
    let orient = vertical ^ horizontal;
    let o = king ^ orient;
    let bucket = u32::from((7 - rank_of(o)) * 4 + (7 - file_of(o)));
    u32::from(orient) | (704 * bucket) << 8
}

/// The index of `piece` for `perspective` from its king's [`halfka_v2_hm_frame`].
#[inline(always)]
fn halfka_v2_hm_index_in(perspective: Color, frame: u32, piece: PieceOnSquare) -> u32 {
    let orient = frame as u8;
    // The piece's plane × 64 (own pawn 0, their pawn 64, ... their queen 576), kings of both
    // colours on one plane (640): the minimum, where a king's own number would be 640 or 704,
    // instead of a branch on kings.
    let plane = ((piece.role as u32 * 2 + u32::from(piece.color != perspective)) * 64).min(640);
    u32::from(piece.square ^ orient) + plane + (frame >> 8)
}

impl KingRelative for HalfKav2Hm {
    #[inline(always)]
    fn index(perspective: Color, king: Square, piece: PieceOnSquare) -> Option<u32> {
        Some(halfka_v2_hm_index(perspective, king, piece))
    }

    #[inline(always)]
    fn frame(perspective: Color, king: Square) -> u32 {
        halfka_v2_hm_frame(perspective, king)
    }

    #[inline(always)]
    fn index_in(perspective: Color, frame: u32, piece: PieceOnSquare) -> Option<u32> {
        Some(halfka_v2_hm_index_in(perspective, frame, piece))
    }
}

impl FeatureBlock for HalfKav2Hm {
    const NAME: &'static str = "halfka_v2_hm";
    const DESCRIPTION: &'static str =
        "HalfKAv2_hm: Stockfish's 32 mirrored king buckets x 704 piece-squares (22528)";
    const SIZE: u32 = 22_528;
    const MAX_ACTIVE: u32 = 32;
    const MAX_DELTA: u32 = 2;
    const REFRESH_TRIGGER: RefreshTrigger = RefreshTrigger::OwnKingMove;
    const BINARY: bool = true;
    const PIECEWISE: bool = true;
    const FACTOR_SIZE: u32 = 768;
    /// 11 piece planes of 32 king buckets (4 × 8, files e–h) of boards.
    const GEOMETRY: Grid = Grid::boards(11, "piece square").with_tiles(
        [4, 8],
        [Axis::Index, Axis::Rank],
        "own king square (mirrored to files e–h; column 0 = e)",
    );

    const SHEET_NAMES: &'static [&'static str] = &HALFKA_SHEETS;

    fn place(index: u32) -> Place {
        halfka_v2_hm_place(index)
    }

    fn factor(index: u32) -> u32 {
        halfka_v2_hm_factor(index)
    }

    fn active(board: &Board, perspective: Color, out: &mut IndexList<'_>) {
        <HalfKav2Hm as KingRelative>::active(board, perspective, out);
    }

    /// Inlined into the plugin's shim, which the host calls: one call and one frame fewer per move.
    #[inline]
    fn delta(board: &Board, mv: &Move, out: &mut MoveDelta<'_>) {
        <HalfKav2Hm as KingRelative>::delta(board, mv, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plugin_api::{Role, square};

    fn piece(file: u8, rank: u8, color: Color, role: Role) -> PieceOnSquare {
        PieceOnSquare {
            square: square(file, rank),
            color,
            role,
        }
    }

    #[test]
    fn worked_examples() {
        let e1 = square(4, 0);
        let rook = piece(0, 0, Color::White, Role::Rook);
        let king = piece(4, 0, Color::White, Role::King);
        assert_eq!(halfka_v2_hm_index(Color::White, e1, rook), 22_208);
        assert_eq!(halfka_v2_hm_index(Color::White, e1, king), 22_468);
        let black_rook = piece(0, 7, Color::Black, Role::Rook);
        assert_eq!(
            halfka_v2_hm_index(Color::Black, square(4, 7), black_rook),
            22_208
        );
        let pawn = piece(0, 1, Color::White, Role::Pawn);
        assert_eq!(halfka_v2_hm_index(Color::White, square(2, 0), pawn), 21_135);
    }

    #[test]
    fn geometry_worked_examples() {
        // White's rook a1, king e1: "own rook", tile of the king e1 (column 0 = e), cell a1.
        let rook = halfka_v2_hm_place(22_208);
        assert_eq!(rook.sheet, 6);
        assert_eq!(rook.tile, [0, 0]);
        assert_eq!(rook.cell, [0, 0]);
        assert_eq!(HalfKav2Hm::sheet_name(6), "own rook");
        // King e1 on the kings' plane.
        let king = HalfKav2Hm::place(22_468);
        assert_eq!((king.sheet, king.tile, king.cell), (10, [0, 0], [4, 0]));
        assert_eq!(HalfKav2Hm::sheet_name(10), "both kings");
        // White's king on c1 is mirrored to f1 (tile column 1); the pawn a2 is drawn on h2.
        let pawn = HalfKav2Hm::place(21_135);
        assert_eq!((pawn.sheet, pawn.tile, pawn.cell), (0, [1, 0], [7, 1]));
        // Black's king g8 is seen on g1 (tile [2, 0]); White's queen d1 is an enemy queen on d8.
        let queen = halfka_v2_hm_index(
            Color::Black,
            square(6, 7),
            piece(3, 0, Color::White, Role::Queen),
        );
        let q = HalfKav2Hm::place(queen);
        assert_eq!((q.sheet, q.tile, q.cell), (9, [2, 0], [3, 7]));
    }

    #[test]
    fn places_invert_the_indices() {
        for p in Color::ALL {
            for king in 0..64 {
                let orient = (if p == Color::Black { 56 } else { 0 })
                    ^ (if file_of(king) < 4 { 7 } else { 0 });
                let o = king ^ orient;
                for sq in 0..64 {
                    for color in Color::ALL {
                        for role in Role::ALL {
                            let pc = PieceOnSquare {
                                square: sq,
                                color,
                                role,
                            };
                            let plane = if role == Role::King {
                                10
                            } else {
                                role as u32 * 2 + u32::from(color != p)
                            };
                            let s = sq ^ orient;
                            let want = Place {
                                sheet: plane,
                                tile: [file_of(o) - 4, rank_of(o)],
                                cell: [file_of(s), rank_of(s)],
                            };
                            assert_eq!(halfka_v2_hm_place(halfka_v2_hm_index(p, king, pc)), want);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn factors_split_the_king_plane_into_own_and_enemy() {
        let e1 = square(4, 0);
        let own_king = halfka_v2_hm_index(Color::White, e1, piece(4, 0, Color::White, Role::King));
        let enemy_king =
            halfka_v2_hm_index(Color::White, e1, piece(4, 7, Color::Black, Role::King));
        let rook = halfka_v2_hm_index(Color::White, e1, piece(0, 0, Color::White, Role::Rook));
        assert_eq!(halfka_v2_hm_factor(own_king), 640 + 4);
        assert_eq!(halfka_v2_hm_factor(enemy_king), 704 + 60);
        assert_eq!(halfka_v2_hm_factor(rook), 384);
        // The same piece-square under another bucket shares the factor.
        let rook_c1 = halfka_v2_hm_index(
            Color::White,
            square(2, 0),
            piece(7, 0, Color::White, Role::Rook),
        );
        assert_eq!(halfka_v2_hm_factor(rook_c1), 384);
    }

    #[test]
    fn buckets_follow_stockfish_table() {
        // KingBuckets[WHITE] of half_ka_v2_hm.h, rank 1 first (a1..h1), then rank 8 (a8..h8).
        let rank1 = [28, 29, 30, 31, 31, 30, 29, 28];
        let rank8 = [0, 1, 2, 3, 3, 2, 1, 0];
        let own_pawn_a2 = |k: Square| {
            let p = piece(0, 1, Color::White, Role::Pawn);
            let orient = if file_of(k) < 4 { 7 } else { 0 };
            (halfka_v2_hm_index(Color::White, k, p) - u32::from(p.square ^ orient)) / 704
        };
        for f in 0..8 {
            assert_eq!(own_pawn_a2(square(f, 0)), rank1[f as usize]);
            assert_eq!(own_pawn_a2(square(f, 7)), rank8[f as usize]);
        }
    }
}
