//! A piecewise block's indices piece by piece, so that a move's changes of them can be made
//! without asking the block.
//!
//! A piecewise block (a plain or king-relative piece-square block, [`BlockDescriptor::piecewise`])
//! promises that its indices of a board are those of the own king alone plus, for every other
//! piece, what that piece adds to the king alone; the conformance kit holds it to that. When the
//! block also refreshes a perspective whenever that perspective's own king moves
//! ([`RefreshTrigger::OwnKingMove`]), every other move changes the perspective's indices by what
//! the pieces it takes off contribute (out) and what the pieces it puts on contribute (in), with
//! the king where it stands. A [`PieceTable`] holds those contributions for every perspective,
//! own king square, piece and square, made once from the block's own `active`; a host that keeps
//! it lists a move's changes with a few look-ups instead of a call into the plugin (Stockfish's
//! `HalfKAv2_hm::append_changed_indices` makes them in the evaluator the same way, piece by
//! piece, `src/nnue/features/half_ka_v2_hm.cpp` at 762dd1da9).
//!
//! [`BlockDescriptor::piecewise`]: crate::BlockDescriptor::piecewise

use std::fmt;

use crate::block::{BlockDescriptor, RefreshTrigger};
use crate::decompose::{decompose, normal_pieces, NormalPieces, PieceOnSquare};
use crate::types::{Board, Color, Move, MoveKind, Role, Square};

/// A piece of each colour and role on each square.
const PIECES: usize = 2 * 6 * 64;

/// Entries per perspective and own king square: one per piece ([`piece_place`]), then one
/// for no piece ([`NO_PIECE`]).
const ROW: usize = PIECES + 1;

/// The place of no piece in a king's row, whose entry is [`NONE`].
const NO_PIECE: PiecePlace = PiecePlace(PIECES as u16);

/// All entries: both perspectives, every own king square.
const ENTRIES: usize = 2 * 64 * ROW;

/// An entry for a piece that adds no index.
const NONE: u32 = u32::MAX;

/// The index each piece on each square adds to a piecewise block's indices, per perspective and
/// own king square (see the [module](self)): for blocks whose pieces add one index each at
/// most (the piece-square blocks, plain and king-relative).
pub struct PieceTable {
    /// Per perspective, own king square, piece and square ([`piece_place`]): the index the
    /// piece adds, local to the block, or [`NONE`].
    entries: Box<[u32]>,
    /// Per perspective and own king square: the index of the king alone, or [`NONE`].
    bases: Box<[u32]>,
}

impl fmt::Debug for PieceTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let some = self.entries.iter().filter(|&&e| e != NONE).count();
        f.debug_struct("PieceTable")
            .field("indices", &some)
            .finish()
    }
}

/// Where a piece (or no piece) is looked up in a king's row of a [`PieceTable`]: inside the
/// row whatever made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PiecePlace(u16);

/// The place of `piece` in a king's row: below [`PIECES`] whatever its square holds.
#[inline(always)]
fn piece_place(piece: PieceOnSquare) -> PiecePlace {
    let role = piece.color.index() * 6 + piece.role.index();
    PiecePlace((role * 64 + usize::from(piece.square & 63)) as u16)
}

/// Where the pieces a move puts on and takes off are looked up in a [`KingRow`], the same for
/// both perspectives (past every piece's place for none).
#[derive(Clone, Copy, Debug)]
pub struct MovePlaces {
    added: [PiecePlace; 2],
    removed: [PiecePlace; 2],
}

impl MovePlaces {
    /// The places of the pieces put on (two at most).
    #[inline(always)]
    pub fn added(&self) -> [PiecePlace; 2] {
        self.added
    }

    /// The places of the pieces taken off (two at most).
    #[inline(always)]
    pub fn removed(&self) -> [PiecePlace; 2] {
        self.removed
    }

    /// The places of the pieces `mv` (legal on `board`) puts on and takes off.
    #[inline(always)]
    fn of(board: &Board, mv: &Move) -> MovePlaces {
        let (mut added, mut removed) = ([NO_PIECE; 2], [NO_PIECE; 2]);
        if mv.kind == MoveKind::Normal {
            let NormalPieces {
                moved,
                captured,
                landed,
            } = normal_pieces(board, mv);
            added[0] = piece_place(landed);
            removed[0] = piece_place(moved);
            if let Some(captured) = captured {
                removed[1] = piece_place(captured);
            }
        } else {
            let changes = decompose(board, mv);
            for (places, pieces) in [
                (&mut added, changes.added()),
                (&mut removed, changes.removed()),
            ] {
                for (place, &piece) in places.iter_mut().zip(pieces) {
                    *place = piece_place(piece);
                }
            }
        }
        MovePlaces { added, removed }
    }
}

/// What every piece adds to one perspective's indices with its own king on one square.
#[derive(Clone, Copy)]
pub struct KingRow<'t>(&'t [u32; ROW]);

impl KingRow<'_> {
    /// The index a piece at `place` adds, local to the block: none for a piece on the king's
    /// square or another own king, or for no piece ([`MovePlaces`]).
    #[inline(always)]
    pub fn of(self, place: PiecePlace) -> Option<u32> {
        // SAFETY: every place is below ROW, the row's length.
        let e = unsafe { *self.0.get_unchecked(usize::from(place.0)) };
        (e != NONE).then_some(e)
    }
}

impl PieceTable {
    /// The table of the block `d`, whose `active` (`false` when it fails) lists a board's
    /// indices from a perspective: if the block is piecewise, refreshes a perspective when its
    /// own king moves, its king alone and every piece add one index at most, and its term's
    /// delta lists hold `max_delta` ≥ 2 indices (a move takes at most two pieces off and puts
    /// at most two on); else, or when `active` fails on a king with one piece, `None`. Calls
    /// `active` on 2 × 64 × 694 boards (the king alone, and with each piece but a second own
    /// king).
    pub fn of(
        d: &BlockDescriptor,
        max_delta: u32,
        mut active: impl FnMut(&Board, Color, &mut Vec<u32>) -> bool,
    ) -> Option<PieceTable> {
        if !d.piecewise || d.refresh_trigger != RefreshTrigger::OwnKingMove || max_delta < 2 {
            return None;
        }
        let mut entries = Vec::with_capacity(ENTRIES);
        let mut bases = Vec::with_capacity(2 * 64);
        let (mut base, mut with) = (Vec::new(), Vec::new());
        for p in Color::ALL {
            for king in 0..64u8 {
                let mut alone = Board::empty(p);
                alone.put(king, p, Role::King);
                base.clear();
                active(&alone, p, &mut base).then_some(())?;
                base.sort_unstable();
                bases.push(added_one(&[], &base)?);
                for color in Color::ALL {
                    for role in Role::ALL {
                        for square in 0..64u8 {
                            // A second own king is no legal board (and the own king's moves are
                            // refreshes, never changes from the table).
                            if square == king || (color, role) == (p, Role::King) {
                                entries.push(NONE);
                                continue;
                            }
                            let mut pair = alone;
                            pair.put(square, color, role);
                            with.clear();
                            active(&pair, p, &mut with).then_some(())?;
                            with.sort_unstable();
                            entries.push(added_one(&base, &with)?);
                        }
                    }
                }
                // NO_PIECE's entry.
                entries.push(NONE);
            }
        }
        Some(PieceTable {
            entries: entries.into_boxed_slice(),
            bases: bases.into_boxed_slice(),
        })
    }

    /// What every piece adds to perspective `p`'s indices with its own king on `king`.
    #[inline(always)]
    fn row(&self, p: Color, king: Square) -> KingRow<'_> {
        let start = (p.index() * 64 + usize::from(king & 63)) * ROW;
        // SAFETY: start + ROW <= ENTRIES, the entries' length.
        KingRow(unsafe { &*self.entries.as_ptr().add(start).cast::<[u32; ROW]>() })
    }

    /// Calls `out` with the term's indices of `board` from `p`, local to the block (its
    /// block's `active`, from the table); `false`, calling nothing, without `p`'s king.
    #[inline]
    pub fn active(&self, board: &Board, p: Color, mut out: impl FnMut(u32)) -> bool {
        let Some(king) = board.king(p) else {
            return false;
        };
        let base = self.bases[p.index() * 64 + usize::from(king & 63)];
        if base != NONE {
            out(base);
        }
        let row = self.row(p, king);
        board.for_each_piece(|square, color, role| {
            let piece = PieceOnSquare {
                square,
                color,
                role,
            };
            if let Some(ix) = row.of(piece_place(piece)) {
                out(ix);
            }
        });
        true
    }

    /// What `mv` (legal on `board`) changes of the term's indices: the places of its pieces
    /// and, per perspective, the row to look them up in with the king where it stands, or
    /// `None` for a perspective whose own king moves (or is missing), which is refreshed.
    #[inline(always)]
    pub fn changes(&self, board: &Board, mv: &Move) -> (MovePlaces, [Option<KingRow<'_>>; 2]) {
        let rows = Color::ALL.map(|p| {
            let king = board.king(p).filter(|_| !board.moves_king_of(mv, p))?;
            Some(self.row(p, king))
        });
        (MovePlaces::of(board, mv), rows)
    }
}

/// What the sorted `with` adds to the sorted `base`: [`NONE`] for nothing, the index for one;
/// `None` when it adds more, or lacks one of `base`'s (then the block is no sum of one index
/// per piece).
fn added_one(base: &[u32], with: &[u32]) -> Option<u32> {
    match with.len().checked_sub(base.len())? {
        0 => (with == base).then_some(NONE),
        1 => {
            // The first place where they differ holds the added index; the rest must agree.
            let at = base.iter().zip(with).take_while(|(b, w)| b == w).count();
            (base[at..] == with[at + 1..]).then_some(with[at])
        }
        _ => None,
    }
}
