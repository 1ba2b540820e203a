//! The conformance kit must catch broken blocks, not only pass good ones.

use plugin_api::conformance::{check_blocks, Settings};
use plugin_api::{
    decompose, piece_block_active, piece_block_delta, BlockDescriptor, Board, Color, FeatureBlock,
    IndexList, Move, MoveDelta, RelativePiece,
};

fn square_index(p: RelativePiece) -> u32 {
    p.square as u32 * 12 + p.role as u32 * 2 + u32::from(!p.own)
}

/// A correct piece-square block relying on the default (full-diff) delta.
struct DefaultDelta;
impl FeatureBlock for DefaultDelta {
    const NAME: &'static str = "default_delta";
    const DESCRIPTION: &'static str = "piece-square with the default delta";
    const SIZE: u32 = 768;
    const MAX_ACTIVE: u32 = 32;
    const MAX_DELTA: u32 = 4;
    fn active(board: &Board, perspective: Color, out: &mut IndexList<'_>) {
        piece_block_active(board, perspective, out, square_index);
    }
}

/// Forgets captured pieces in its delta.
struct ForgetsCaptures;
impl FeatureBlock for ForgetsCaptures {
    const NAME: &'static str = "forgets_captures";
    const DESCRIPTION: &'static str = "broken: ignores captures";
    const SIZE: u32 = 768;
    const MAX_ACTIVE: u32 = 32;
    const MAX_DELTA: u32 = 4;
    fn active(board: &Board, perspective: Color, out: &mut IndexList<'_>) {
        piece_block_active(board, perspective, out, square_index);
    }
    fn delta(board: &Board, mv: &Move, out: &mut MoveDelta<'_>) {
        let changes = decompose(board, mv);
        for p in Color::ALL {
            let mover = changes.removed()[0];
            out.removed[p.index()].push(square_index(RelativePiece::new(p, mover)));
            for &a in changes.added() {
                out.added[p.index()].push(square_index(RelativePiece::new(p, a)));
            }
        }
    }
}

/// Emits an index beyond its size.
struct OutOfRange;
impl FeatureBlock for OutOfRange {
    const NAME: &'static str = "out_of_range";
    const DESCRIPTION: &'static str = "broken: size too small";
    const SIZE: u32 = 700;
    const MAX_ACTIVE: u32 = 32;
    const MAX_DELTA: u32 = 4;
    fn active(board: &Board, perspective: Color, out: &mut IndexList<'_>) {
        piece_block_active(board, perspective, out, square_index);
    }
    fn delta(board: &Board, mv: &Move, out: &mut MoveDelta<'_>) {
        piece_block_delta(board, mv, out, square_index);
    }
}

/// Promises mirror symmetry but does not mirror Black's squares.
struct NotSymmetric;
impl FeatureBlock for NotSymmetric {
    const NAME: &'static str = "not_symmetric";
    const DESCRIPTION: &'static str = "broken: no mirror for Black";
    const SIZE: u32 = 768;
    const MAX_ACTIVE: u32 = 32;
    const MAX_DELTA: u32 = 4;
    fn active(board: &Board, perspective: Color, out: &mut IndexList<'_>) {
        piece_block_active(board, perspective, out, |p| {
            let sq = if perspective == Color::Black {
                p.square ^ 56
            } else {
                p.square
            };
            sq as u32 * 12 + p.role as u32 * 2 + u32::from(!p.own)
        });
    }
}

fn quick() -> Settings {
    Settings {
        plies: 1500,
        ..Settings::default()
    }
}

#[test]
fn a_correct_block_with_the_default_delta_passes() {
    let report = check_blocks(&[BlockDescriptor::of::<DefaultDelta>()], quick()).unwrap();
    assert_eq!(report.plies, 1500);
    assert!(report.games > 5 && report.mirror_checks > 1000);
}

#[test]
fn a_delta_that_forgets_captures_fails_and_names_block_and_move() {
    let err = check_blocks(&[BlockDescriptor::of::<ForgetsCaptures>()], quick()).unwrap_err();
    assert!(err.contains("block 'forgets_captures'"), "{err}");
    assert!(err.contains("after ") && err.contains("has extra"), "{err}");
}

#[test]
fn an_index_beyond_the_size_fails() {
    let err = check_blocks(&[BlockDescriptor::of::<OutOfRange>()], quick()).unwrap_err();
    assert!(err.contains(">= size 700"), "{err}");
}

#[test]
fn a_broken_symmetry_promise_fails() {
    let err = check_blocks(&[BlockDescriptor::of::<NotSymmetric>()], quick()).unwrap_err();
    assert!(err.contains("mirror symmetry"), "{err}");
}
