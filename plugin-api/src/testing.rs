//! Helpers for the unit tests of plugin crates (worked index examples): the start position as
//! a board and a block's active indices, sorted. The conformance kit ([`crate::conformance`])
//! checks the rules; these make the examples short.

use shakmaty::Chess;

use crate::block::{FeatureBlock, IndexList};
use crate::convert::board_from_position;
use crate::types::{Board, Color};

/// The standard start position as an ABI board (White to move, all castling rights).
pub fn start_board() -> Board {
    board_from_position(&Chess::default())
}

/// The indices `B` emits for `board` from `perspective`'s point of view, sorted (repeated
/// indices stay repeated). Panics if the block overflows its own `MAX_ACTIVE`.
pub fn active_sorted<B: FeatureBlock>(board: &Board, perspective: Color) -> Vec<u32> {
    let mut buf = vec![0; B::MAX_ACTIVE as usize];
    let mut list = IndexList::new(&mut buf);
    B::active(board, perspective, &mut list);
    assert!(!list.overflowed(), "{} overflowed MAX_ACTIVE", B::NAME);
    let mut v = list.as_slice().to_vec();
    v.sort_unstable();
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{square, Role};

    #[test]
    fn the_start_board_has_the_start_pieces() {
        let b = start_board();
        assert_eq!(b.by_color[0].count_ones(), 16);
        assert_eq!(b.by_color[1].count_ones(), 16);
        assert_eq!(b.piece_at(square(4, 0)), Some((Color::White, Role::King)));
        assert_eq!(b.piece_at(square(3, 7)), Some((Color::Black, Role::Queen)));
        assert_eq!(b.turn, Color::White);
    }
}
