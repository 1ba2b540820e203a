//! A king-relative piece-square block's indices as a table, so that a move's delta of it is a
//! few look-ups on the host's side of the plugin boundary.
//!
//! A block that is a sum over pieces ([`BlockDescriptor::piecewise`]), binary and refreshed only
//! when the perspective's own king moves ([`RefreshTrigger::OwnKingMove`]: `halfka_v2_hm`,
//! `halfkp`, the thesis's king-relative sets) has, for any move that leaves the own king where
//! it is, the delta its pieces' changes give one by one: what the piece adds to the own king
//! alone, taken where the piece leaves and given where it lands. [`PieceTable::of`] asks the
//! block's own `active` that once per perspective, king square and piece on a square, on boards
//! of the king alone and of the king with the piece (as the conformance kit checks the promise
//! and the refresh cache uses it), and keeps the answers when every piece adds at most one
//! index. A move's delta is then what Stockfish's `HalfKAv2_hm::append_changed_indices`
//! computes (`src/nnue/features/half_ka_v2_hm.cpp` at 762dd1da9): one index per changed piece
//! and perspective, without a call into the plugin, four fresh lists and the shim's checks
//! around it. The conformance kit compares the table's delta with the block's own on every move
//! it plays.

use std::mem::MaybeUninit;

use abi_stable::std_types::RResult;

use crate::block::{BlockDescriptor, IndexList, RefreshTrigger};
use crate::loader::RegisteredBlock;
use crate::types::{Board, Color, Move, MoveKind, Role, Square, NO_ROLE};

/// No index: the piece adds none to its king (`halfkp`'s kings).
const NONE: u32 = u32::MAX;

/// Entries per perspective and king square: a colour (× 8), a role (× 64) and a square, in a
/// power of two so that a masked key needs no bounds check.
const PER_KING: usize = 1024;

/// What each piece adds to the own king alone, per perspective and own king square.
#[derive(Debug)]
pub struct PieceTable {
    /// `[perspective · 64 + own king square][key]`: the index, or [`NONE`] (also for the keys
    /// no piece has).
    entries: Box<[[u32; PER_KING]; 128]>,
}

impl PieceTable {
    /// The table of `block`, if it is binary, piecewise and refreshed only by its own king's
    /// moves, and every piece adds at most one index to the own king alone (else `None`, and
    /// its deltas stay the block's own). Built from the block's `active` on boards of one or
    /// two pieces: 90,000 calls, a few milliseconds.
    pub fn of(block: &RegisteredBlock) -> Option<PieceTable> {
        let d = &block.descriptor;
        if !(d.binary && d.piecewise && d.refresh_trigger == RefreshTrigger::OwnKingMove) {
            return None;
        }
        // A block of at most one change a list would refresh where the table lists two.
        if d.max_delta < 2 {
            return None;
        }
        let mut entries: Box<[[u32; PER_KING]; 128]> = vec![[NONE; PER_KING]; 128]
            .into_boxed_slice()
            .try_into()
            .expect("128 rows");
        let (mut base, mut with) = (Vec::new(), Vec::new());
        for p in Color::ALL {
            for king in 0..64 {
                let mut alone = Board::empty(p);
                alone.put(king, p, Role::King);
                sorted_active(d, &alone, p, &mut base)?;
                for color in Color::ALL {
                    for role in Role::ALL {
                        if color == p && role == Role::King {
                            continue;
                        }
                        for square in (0..64).filter(|&s| s != king) {
                            let mut pair = alone;
                            pair.put(square, color, role);
                            sorted_active(d, &pair, p, &mut with)?;
                            let entry = &mut entries[row(p, king)][key(color, role as u8, square)];
                            *entry = added_index(&base, &with)?;
                        }
                    }
                }
            }
        }
        Some(PieceTable { entries })
    }

    /// The delta of `mv` (legal on `board`) into `rooms` (added White, added Black, removed
    /// White, removed Black; each of at least two entries, as the block's bound is), local to
    /// the block: as the block's own `delta` gives it, an addition that a removal holds
    /// cancelled with it. A perspective whose own king moves (or that has none) is refreshed.
    /// Returns the counts written and the perspectives to refresh.
    #[inline(always)]
    pub fn delta(
        &self,
        board: &Board,
        mv: &Move,
        rooms: [&mut [MaybeUninit<u32>]; 4],
    ) -> ([usize; 4], [bool; 2]) {
        let [added_white, added_black, removed_white, removed_black] = rooms;
        let mut lists = [(added_white, removed_white), (added_black, removed_black)];
        let us = match board.by_color[1] & (1u64 << (mv.from & 63)) {
            0 => Color::White,
            _ => Color::Black,
        };
        let them = us.other();
        // Two pieces taken and two given, the unused ones of a role past the six, whose
        // entries are `NONE` (as are those of no capture and no promotion).
        let unused = key(us, NO_ROLE, 0);
        let (taken, given) = match mv.kind {
            MoveKind::Normal => {
                let landed = match mv.promotion {
                    NO_ROLE => mv.role as u8,
                    promotion => promotion,
                };
                (
                    [
                        key(us, mv.role as u8, mv.from),
                        key(them, mv.captured, mv.to),
                    ],
                    [key(us, landed, mv.to), unused],
                )
            }
            MoveKind::EnPassant => (
                [
                    key(us, Role::Pawn as u8, mv.from),
                    key(them, Role::Pawn as u8, (mv.from & 0x38) | (mv.to & 7)),
                ],
                [key(us, Role::Pawn as u8, mv.to), unused],
            ),
            MoveKind::Castle => {
                let (king_to, rook_to) = mv.castle_destinations();
                (
                    [
                        key(us, Role::King as u8, mv.from),
                        key(us, Role::Rook as u8, mv.to),
                    ],
                    [
                        key(us, Role::King as u8, king_to),
                        key(us, Role::Rook as u8, rook_to),
                    ],
                )
            }
        };
        let king_moves = mv.role == Role::King;
        let mut counts = [0; 4];
        let mut refresh = [false; 2];
        for p in Color::ALL {
            let pi = p.index();
            let kings = board.by_role[Role::King.index()] & board.by_color[pi];
            if kings == 0 || (king_moves && p == us) {
                refresh[pi] = true;
                continue;
            }
            let row = &self.entries[row(p, kings.trailing_zeros() as Square)];
            let mut out = taken.map(|k| row[k]);
            let (added, removed) = &mut lists[pi];
            let (added, removed) = (&mut added[..2], &mut removed[..2]);
            let mut n_given = 0;
            for ix in given.map(|k| row[k]) {
                // A piece that adds what another took: no change (a count block's piece
                // moving along its line).
                if ix == NONE {
                    continue;
                }
                if let Some(t) = out.iter_mut().find(|t| **t == ix) {
                    *t = NONE;
                    continue;
                }
                added[n_given].write(ix);
                n_given += 1;
            }
            let mut n_taken = 0;
            for ix in out {
                removed[n_taken].write(ix);
                n_taken += usize::from(ix != NONE);
            }
            counts[pi] = n_given;
            counts[2 + pi] = n_taken;
        }
        (counts, refresh)
    }
}

/// The row of `p` with its own king on `king`.
#[inline(always)]
fn row(p: Color, king: Square) -> usize {
    (p.index() & 1) << 6 | usize::from(king & 63)
}

/// The key of a piece of `color` and role index `role` (any byte: past the six roles, a key
/// whose entries are all [`NONE`]) on `square` in a row.
#[inline(always)]
fn key(color: Color, role: u8, square: Square) -> usize {
    (color.index() << 9 | usize::from(role & 7) << 6 | usize::from(square & 63)) & (PER_KING - 1)
}

/// The one index `with` holds beyond `base` (both sorted), [`NONE`] for none, `None` when
/// `with` lacks one of `base`'s or holds two more.
fn added_index(base: &[u32], with: &[u32]) -> Option<u32> {
    let mut extra = NONE;
    let mut rest = base.iter().peekable();
    for &ix in with {
        if rest.peek() == Some(&&ix) {
            rest.next();
        } else if extra == NONE {
            extra = ix;
        } else {
            return None;
        }
    }
    rest.next().is_none().then_some(extra)
}

/// `d`'s active indices of `board` for `p`, sorted, into `out`; `None` if the block fails or
/// emits an index at or above its size.
fn sorted_active(d: &BlockDescriptor, board: &Board, p: Color, out: &mut Vec<u32>) -> Option<()> {
    out.clear();
    out.resize(d.max_active as usize, 0);
    let mut list = IndexList::new(out);
    let ok = matches!((d.active)(board, p, &mut list), RResult::ROk(()));
    let n = list.len();
    out.truncate(n);
    out.sort_unstable();
    (ok && out.iter().all(|&ix| ix < d.size)).then_some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::{FeatureBlock, MoveDelta};
    use crate::loader::PluginRegistry;
    use crate::testing::delta_bench_moves;

    /// Each piece but the own king on its square, by its colour from the perspective and its
    /// role, in the bucket of the own king's file: a king-relative piece-square block.
    struct FileBuckets;
    impl FileBuckets {
        fn index(p: Color, king: Square, piece: crate::PieceOnSquare) -> Option<u32> {
            let own_king = piece.role == Role::King && piece.color == p;
            let kind = u32::from(piece.color != p) * 6 + piece.role as u32;
            (!own_king).then(|| (u32::from(king & 7) * 12 + kind) * 64 + u32::from(piece.square))
        }
    }
    impl FeatureBlock for FileBuckets {
        const NAME: &'static str = "file_buckets";
        const DESCRIPTION: &'static str = "pieces by the own king's file";
        const SIZE: u32 = 8 * 12 * 64;
        const MAX_ACTIVE: u32 = 32;
        const MAX_DELTA: u32 = 3;
        const MIRROR_SYMMETRIC: bool = false;
        const REFRESH_TRIGGER: RefreshTrigger = RefreshTrigger::OwnKingMove;
        const BINARY: bool = true;
        const PIECEWISE: bool = true;
        fn active(board: &Board, p: Color, out: &mut IndexList<'_>) {
            let Some(king) = board.king(p) else { return };
            board.for_each_piece(|square, color, role| {
                let piece = crate::PieceOnSquare {
                    square,
                    color,
                    role,
                };
                if let Some(ix) = Self::index(p, king, piece) {
                    out.push(ix);
                }
            });
        }
        fn delta(board: &Board, mv: &Move, out: &mut MoveDelta<'_>) {
            for p in Color::ALL {
                if board.king(p).is_none() || board.moves_king_of(mv, p) {
                    out.refresh[p.index()] = true;
                }
            }
            let kings = Color::ALL.map(|p| board.king(p).unwrap_or(0));
            let changes = crate::decompose(board, mv);
            for p in Color::ALL {
                if out.refresh[p.index()] {
                    continue;
                }
                for &piece in changes.removed() {
                    if let Some(ix) = Self::index(p, kings[p.index()], piece) {
                        out.removed[p.index()].push(ix);
                    }
                }
                for &piece in changes.added() {
                    if let Some(ix) = Self::index(p, kings[p.index()], piece) {
                        out.added[p.index()].push(ix);
                    }
                }
            }
        }
    }

    /// [`FileBuckets`] with every index twice over (the second copy past the first): a piece
    /// adds two indices, which a table cannot hold.
    struct Doubled;
    impl FeatureBlock for Doubled {
        const NAME: &'static str = "doubled";
        const DESCRIPTION: &'static str = "two indices a piece";
        const SIZE: u32 = 2 * FileBuckets::SIZE;
        const MAX_ACTIVE: u32 = 64;
        const MAX_DELTA: u32 = 6;
        const MIRROR_SYMMETRIC: bool = false;
        const REFRESH_TRIGGER: RefreshTrigger = RefreshTrigger::OwnKingMove;
        const BINARY: bool = true;
        const PIECEWISE: bool = true;
        fn active(board: &Board, p: Color, out: &mut IndexList<'_>) {
            let mut buf = [0; 32];
            let mut once = IndexList::new(&mut buf);
            FileBuckets::active(board, p, &mut once);
            for &ix in once.as_slice() {
                out.push(ix);
                out.push(FileBuckets::SIZE + ix);
            }
        }
    }

    fn registered<B: FeatureBlock>() -> RegisteredBlock {
        let mut registry = PluginRegistry::new();
        registry
            .register(&[BlockDescriptor::of::<B>()], "linked", "test 0")
            .expect("registers");
        registry.feature_set(B::NAME).expect("a set").terms()[0].factors[0].clone()
    }

    #[test]
    fn a_table_gives_the_blocks_own_delta_on_every_move() {
        let table = PieceTable::of(&registered::<FileBuckets>()).expect("a table");
        let mut moves = 0;
        for (board, mv) in delta_bench_moves() {
            let mut own = [[0u32; 3]; 4];
            let mut md = MoveDelta::over(&mut own);
            FileBuckets::delta(&board, &mv, &mut md);
            let mut rooms = [[MaybeUninit::uninit(); 3]; 4];
            let [ra0, ra1, rr0, rr1] = &mut rooms;
            let (counts, refresh) = table.delta(&board, &mv, [ra0, ra1, rr0, rr1]);
            assert_eq!(refresh, md.refresh, "{mv:?}");
            let lists = [&md.added[0], &md.added[1], &md.removed[0], &md.removed[1]];
            for (k, list) in lists.into_iter().enumerate() {
                if refresh[k % 2] {
                    continue;
                }
                // SAFETY: the table wrote the first `counts[k]` entries of room k.
                let mut got: Vec<u32> = rooms[k][..counts[k]]
                    .iter()
                    .map(|v| unsafe { v.assume_init() })
                    .collect();
                let mut want = list.as_slice().to_vec();
                got.sort_unstable();
                want.sort_unstable();
                assert_eq!(got, want, "{mv:?}, list {k}");
            }
            moves += 1;
        }
        assert!(moves > 1000);
    }

    #[test]
    fn a_block_whose_piece_adds_two_indices_has_none() {
        assert!(PieceTable::of(&registered::<Doubled>()).is_none());
    }
}
