//! Board and move types that cross the plugin boundary.
//!
//! They are plain `#[repr(C)]` data with a checked layout (`StableAbi`), independent of any chess
//! library, so a plugin built with another Rust compiler or another version of shakmaty still
//! reads them correctly. Squares are numbered like shakmaty and Stockfish: a1 = 0, b1 = 1, ...,
//! h8 = 63 (`rank * 8 + file`).

use abi_stable::StableAbi;

/// A square index 0..64 (`rank * 8 + file`).
pub type Square = u8;

/// Marker for "no square" (no en-passant square).
pub const NO_SQUARE: Square = 64;

/// File (0 = a .. 7 = h) of a square.
#[inline(always)]
pub const fn file_of(sq: Square) -> u8 {
    sq & 7
}

/// Rank (0 = first .. 7 = eighth) of a square.
#[inline(always)]
pub const fn rank_of(sq: Square) -> u8 {
    sq >> 3
}

/// The square at `file`, `rank`.
#[inline(always)]
pub const fn square(file: u8, rank: u8) -> Square {
    rank * 8 + file
}

/// The squares of the a-file.
pub const FILE_A: u64 = 0x0101_0101_0101_0101;

/// The squares of the h-file.
pub const FILE_H: u64 = FILE_A << 7;

/// The squares `color`'s `pawns` capture on, set-wise, in each of their two directions (towards
/// the a-file, then the h-file), each with the step from a pawn to its capture square as a
/// square difference (wrapping for Black's).
#[inline(always)]
pub const fn pawn_captures(color: Color, pawns: u64) -> [(u64, u8); 2] {
    match color {
        Color::White => [((pawns & !FILE_A) << 7, 7), ((pawns & !FILE_H) << 9, 9)],
        Color::Black => [
            ((pawns & !FILE_A) >> 9, 9u8.wrapping_neg()),
            ((pawns & !FILE_H) >> 7, 7u8.wrapping_neg()),
        ],
    }
}

/// The square mirrored vertically (rank r becomes 7 − r, file unchanged).
#[inline(always)]
pub const fn flip_rank(sq: Square) -> Square {
    sq ^ 56
}

/// A side: White or Black. Also names a perspective.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Color {
    /// White, index 0.
    White = 0,
    /// Black, index 1.
    Black = 1,
}

impl Color {
    /// Both colours in index order.
    pub const ALL: [Color; 2] = [Color::White, Color::Black];

    /// The other colour.
    #[inline(always)]
    pub const fn other(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }

    /// 0 for White, 1 for Black.
    #[inline(always)]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The colour with this index (0 or 1); `None` otherwise.
    pub const fn from_index(i: u8) -> Option<Color> {
        match i {
            0 => Some(Color::White),
            1 => Some(Color::Black),
            _ => None,
        }
    }

    /// A square as seen from this perspective: unchanged for White, mirrored vertically for Black.
    #[inline(always)]
    pub const fn relative(self, sq: Square) -> Square {
        match self {
            Color::White => sq,
            Color::Black => flip_rank(sq),
        }
    }
}

/// A piece kind. The numbering (pawn 0 .. king 5) is the one of the thesis's index layouts.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Role {
    /// Pawn, 0.
    Pawn = 0,
    /// Knight, 1.
    Knight = 1,
    /// Bishop, 2.
    Bishop = 2,
    /// Rook, 3.
    Rook = 3,
    /// Queen, 4.
    Queen = 4,
    /// King, 5.
    King = 5,
}

impl Role {
    /// All roles in index order.
    pub const ALL: [Role; 6] = [
        Role::Pawn,
        Role::Knight,
        Role::Bishop,
        Role::Rook,
        Role::Queen,
        Role::King,
    ];

    /// Every role's [`bit`](Self::bit).
    pub const ALL_BITS: u8 = 0b11_1111;

    /// The role's bit in a set of roles (bit `r` for role `r`; see
    /// [`crate::FeatureBlock::CHANGED_BY`]).
    #[inline(always)]
    pub const fn bit(self) -> u8 {
        1 << self as u8
    }

    /// 0 (pawn) .. 5 (king).
    #[inline(always)]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The role with this index; `None` for 6 and above (used as "no role" in [`Move`]).
    #[inline(always)]
    pub const fn from_index(i: u8) -> Option<Role> {
        match i {
            0 => Some(Role::Pawn),
            1 => Some(Role::Knight),
            2 => Some(Role::Bishop),
            3 => Some(Role::Rook),
            4 => Some(Role::Queen),
            5 => Some(Role::King),
            _ => None,
        }
    }
}

/// "No role" in the optional role fields of [`Move`].
pub const NO_ROLE: u8 = 6;

/// A position as the feature blocks see it: bitboards by colour and by role, plus the state that
/// future blocks may want (side to move, castling rooks, en-passant square).
#[repr(C)]
#[derive(StableAbi, Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Board {
    /// Occupied squares of each colour, indexed by [`Color::index`].
    pub by_color: [u64; 2],
    /// Occupied squares of each role, indexed by [`Role::index`].
    pub by_role: [u64; 6],
    /// Squares of rooks that still have castling rights (shakmaty's convention, Chess960-ready).
    pub castling: u64,
    /// Side to move.
    pub turn: Color,
    /// En-passant target square, or [`NO_SQUARE`].
    pub ep_square: u8,
}

impl Board {
    /// A board without pieces, castling rights or en-passant square, `turn` to move.
    pub const fn empty(turn: Color) -> Board {
        Board {
            by_color: [0; 2],
            by_role: [0; 6],
            castling: 0,
            turn,
            ep_square: NO_SQUARE,
        }
    }

    /// Calls `f` with every piece's square, colour and role, by role, then square: six sets
    /// walked, each piece's colour read off its square, instead of twelve colour-and-role sets
    /// (the refresh cache's boards of the pieces that came and went hold only a few).
    #[inline(always)]
    pub fn for_each_piece(&self, mut f: impl FnMut(Square, Color, Role)) {
        for role in Role::ALL {
            let mut bb = self.by_role[role as usize];
            while bb != 0 {
                let square = bb.trailing_zeros() as Square;
                bb &= bb - 1;
                f(square, self.color_on(square), role);
            }
        }
    }

    /// The colour of the piece on `sq`, which must hold one: Black's if one of Black's pieces
    /// stands there, else White's (one bit test, without [`piece_at`](Self::piece_at)'s role
    /// search).
    #[inline(always)]
    pub const fn color_on(&self, sq: Square) -> Color {
        match self.by_color[1] & (1u64 << sq) {
            0 => Color::White,
            _ => Color::Black,
        }
    }

    /// All occupied squares.
    #[inline(always)]
    pub const fn occupied(&self) -> u64 {
        self.by_color[0] | self.by_color[1]
    }

    /// Pieces of one colour and role.
    #[inline(always)]
    pub const fn pieces(&self, color: Color, role: Role) -> u64 {
        self.by_color[color as usize] & self.by_role[role as usize]
    }

    /// The colour and role on `sq`, if any.
    #[inline]
    pub fn piece_at(&self, sq: Square) -> Option<(Color, Role)> {
        let bit = 1u64 << sq;
        let color = if self.by_color[0] & bit != 0 {
            Color::White
        } else if self.by_color[1] & bit != 0 {
            Color::Black
        } else {
            return None;
        };
        let role = Role::ALL
            .into_iter()
            .find(|r| self.by_role[r.index()] & bit != 0)?;
        Some((color, role))
    }

    /// The king square of `color` (the lowest one if a malformed board has several).
    #[inline]
    pub fn king(&self, color: Color) -> Option<Square> {
        let k = self.pieces(color, Role::King);
        (k != 0).then(|| k.trailing_zeros() as Square)
    }

    /// Puts a piece on an empty square.
    #[inline(always)]
    pub fn put(&mut self, sq: Square, color: Color, role: Role) {
        let bit = 1u64 << sq;
        self.by_color[color as usize] |= bit;
        self.by_role[role as usize] |= bit;
    }

    /// Removes a piece from its square.
    #[inline(always)]
    pub fn remove(&mut self, sq: Square, color: Color, role: Role) {
        let bit = !(1u64 << sq);
        self.by_color[color as usize] &= bit;
        self.by_role[role as usize] &= bit;
    }

    /// The colour-flipped mirror: ranks mirrored, colours swapped, side to move swapped. Blocks
    /// that promise mirror symmetry give the same Black-perspective indices for a board as
    /// White-perspective indices for its mirror.
    pub fn mirrored(&self) -> Board {
        Board {
            by_color: [self.by_color[1].swap_bytes(), self.by_color[0].swap_bytes()],
            by_role: self.by_role.map(u64::swap_bytes),
            castling: self.castling.swap_bytes(),
            turn: self.turn.other(),
            ep_square: if self.ep_square == NO_SQUARE {
                NO_SQUARE
            } else {
                flip_rank(self.ep_square)
            },
        }
    }
}

/// What kind of move a [`Move`] is.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum MoveKind {
    /// Any move that is not en passant or castling (captures and promotions included).
    Normal = 0,
    /// An en-passant capture: the captured pawn stands beside `from`, on `to`'s file.
    EnPassant = 1,
    /// Castling: `from` is the king's square and `to` the castling rook's square (Chess960-ready,
    /// as in shakmaty). The king ends on the g or c file, the rook on the f or d file.
    Castle = 2,
}

/// A move with everything a feature block needs to update its indices without looking at the
/// board: the moved role, the captured role and the promotion.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Move {
    /// Origin square (the king's square for castling).
    pub from: Square,
    /// Destination square (the rook's square for castling).
    pub to: Square,
    /// The moved piece's role (a pawn for promotions).
    pub role: Role,
    /// Role index of the captured piece, or [`NO_ROLE`] (a pawn for en passant).
    pub captured: u8,
    /// Role index of the promotion piece, or [`NO_ROLE`].
    pub promotion: u8,
    /// Normal, en passant or castle.
    pub kind: MoveKind,
}

impl Move {
    /// The captured role, if any.
    #[inline(always)]
    pub const fn captured(&self) -> Option<Role> {
        Role::from_index(self.captured)
    }

    /// The promotion role, if any.
    #[inline(always)]
    pub const fn promotion(&self) -> Option<Role> {
        Role::from_index(self.promotion)
    }

    /// The roles the move moves, takes and promotes to, as [`Role::bit`]s (castling moves a
    /// king and a rook).
    #[inline(always)]
    pub const fn roles(&self) -> u8 {
        // NO_ROLE (6), or any other byte past the roles, lands past the six role bits, which
        // the mask drops.
        const fn bit(role: u8) -> u32 {
            1 << if role < 8 { role } else { 8 }
        }
        let bits = bit(self.role as u8) | bit(self.captured) | bit(self.promotion);
        let castle = match self.kind {
            MoveKind::Castle => Role::Rook.bit() as u32,
            _ => 0,
        };
        ((bits | castle) & Role::ALL_BITS as u32) as u8
    }

    /// The king's and the rook's destination squares of a castling move.
    #[inline]
    pub const fn castle_destinations(&self) -> (Square, Square) {
        let rank = rank_of(self.from);
        if file_of(self.to) > file_of(self.from) {
            (square(6, rank), square(5, rank))
        } else {
            (square(2, rank), square(3, rank))
        }
    }
}
