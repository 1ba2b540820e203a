//! The conformance kit must catch broken blocks, not only pass good ones.

use plugin_api::conformance::{check_blocks, ConformanceError, Settings};
use plugin_api::{
    decompose, piece_block_active, piece_block_delta, BlockDescriptor, Board, Color, FeatureBlock,
    IndexList, Move, MoveDelta, PieceOnSquare, RefreshTrigger, RelativePiece, Role,
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

/// Counts right, but its delta adds and removes one index (the own king's) on every move: the
/// work of a change that a later one takes back, left uncancelled.
struct AddsAndRemovesOneIndex;
impl FeatureBlock for AddsAndRemovesOneIndex {
    const NAME: &'static str = "adds_and_removes";
    const DESCRIPTION: &'static str = "broken: a delta that is not the exact difference";
    const SIZE: u32 = 768;
    const MAX_ACTIVE: u32 = 32;
    const MAX_DELTA: u32 = 6;
    fn active(board: &Board, perspective: Color, out: &mut IndexList<'_>) {
        piece_block_active(board, perspective, out, square_index);
    }
    fn delta(board: &Board, mv: &Move, out: &mut MoveDelta<'_>) {
        piece_block_delta(board, mv, out, square_index);
        for p in Color::ALL {
            // Active before the move and after it: the king of the side not moving.
            let waiting = board.turn.other();
            let king = square_index(RelativePiece::new(
                p,
                PieceOnSquare {
                    square: board.king(waiting).expect("a king"),
                    color: waiting,
                    role: Role::King,
                },
            ));
            out.added[p.index()].push(king);
            out.removed[p.index()].push(king);
        }
    }
}

/// A correct piece-square block, but it promises that only pawn moves change it (knights,
/// bishops and the rest change it too).
struct PawnsOnlyPromise;
impl FeatureBlock for PawnsOnlyPromise {
    const NAME: &'static str = "pawns_only_promise";
    const DESCRIPTION: &'static str = "broken: changed by every role, promises pawns only";
    const SIZE: u32 = 768;
    const MAX_ACTIVE: u32 = 32;
    const MAX_DELTA: u32 = 4;
    const CHANGED_BY: u8 = Role::Pawn.bit();
    fn active(board: &Board, perspective: Color, out: &mut IndexList<'_>) {
        piece_block_active(board, perspective, out, square_index);
    }
    fn delta(board: &Board, mv: &Move, out: &mut MoveDelta<'_>) {
        piece_block_delta(board, mv, out, square_index);
    }
}

/// Own and enemy pawns by square (Black's view rank-mirrored), mirrored horizontally when the
/// own king stands on files e–h: only pawn moves change it, but for a king changing side, which
/// its trigger names.
fn pawns_by_king_side(board: &Board, perspective: Color, out: &mut IndexList<'_>) {
    let Some(king) = board.king(perspective) else {
        return;
    };
    let vertical = if perspective == Color::Black { 56 } else { 0 };
    let flip = vertical ^ if king & 7 >= 4 { 7 } else { 0 };
    let pawns = board.by_role[Role::Pawn.index()];
    for c in Color::ALL {
        let mut bb = pawns & board.by_color[c.index()];
        while bb != 0 {
            let sq = bb.trailing_zeros();
            bb &= bb - 1;
            out.push(u32::from(c != perspective) * 64 + (sq ^ flip));
        }
    }
}

/// [`pawns_by_king_side`] with the promise that makes it right: pawn moves ask it, king moves
/// changing side refresh it by its trigger without asking.
struct PawnsKingSide;
impl FeatureBlock for PawnsKingSide {
    const NAME: &'static str = "pawns_king_side";
    const DESCRIPTION: &'static str = "pawns mirrored by the own king's side";
    const SIZE: u32 = 128;
    const MAX_ACTIVE: u32 = 16;
    const MAX_DELTA: u32 = 16;
    const REFRESH_TRIGGER: RefreshTrigger = RefreshTrigger::OwnKingSide;
    const CHANGED_BY: u8 = Role::Pawn.bit();
    fn active(board: &Board, perspective: Color, out: &mut IndexList<'_>) {
        pawns_by_king_side(board, perspective, out);
    }
}

/// [`PawnsKingSide`] without its trigger: a king changing side changes it unasked.
struct PawnsKingSideNoTrigger;
impl FeatureBlock for PawnsKingSideNoTrigger {
    const NAME: &'static str = "pawns_king_side_no_trigger";
    const DESCRIPTION: &'static str = "broken: king moves change it, promises pawns only";
    const SIZE: u32 = 128;
    const MAX_ACTIVE: u32 = 16;
    const MAX_DELTA: u32 = 16;
    const CHANGED_BY: u8 = Role::Pawn.bit();
    fn active(board: &Board, perspective: Color, out: &mut IndexList<'_>) {
        pawns_by_king_side(board, perspective, out);
    }
}

/// Emits an index beyond its size.
struct OutOfRangeBlock;
impl FeatureBlock for OutOfRangeBlock {
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

/// Promises never to refresh, but refreshes the mover's perspective after every capture.
struct RefreshesDespitePromise;
impl FeatureBlock for RefreshesDespitePromise {
    const NAME: &'static str = "refreshes_despite_promise";
    const DESCRIPTION: &'static str = "broken: refreshes although it promises Never";
    const SIZE: u32 = 768;
    const MAX_ACTIVE: u32 = 32;
    const MAX_DELTA: u32 = 4;
    const REFRESH_TRIGGER: RefreshTrigger = RefreshTrigger::Never;
    fn active(board: &Board, perspective: Color, out: &mut IndexList<'_>) {
        piece_block_active(board, perspective, out, square_index);
    }
    fn delta(board: &Board, mv: &Move, out: &mut MoveDelta<'_>) {
        if mv.captured().is_some() {
            out.refresh = [true; 2];
        } else {
            piece_block_delta(board, mv, out, square_index);
        }
    }
}

/// Promises binary counts, but emits one index per piece role and colour (repeats for pawns).
struct NotBinary;
impl FeatureBlock for NotBinary {
    const NAME: &'static str = "not_binary";
    const DESCRIPTION: &'static str = "broken: repeats indices although it promises binary";
    const SIZE: u32 = 12;
    const MAX_ACTIVE: u32 = 32;
    const MAX_DELTA: u32 = 4;
    const BINARY: bool = true;
    fn active(board: &Board, perspective: Color, out: &mut IndexList<'_>) {
        piece_block_active(board, perspective, out, |p| {
            p.role as u32 * 2 + u32::from(!p.own)
        });
    }
}

/// Promises to be a sum over pieces, but emits one index for the number of pieces on the board.
struct NotPiecewise;
impl FeatureBlock for NotPiecewise {
    const NAME: &'static str = "not_piecewise";
    const DESCRIPTION: &'static str = "broken: a piece count is not a sum over pieces";
    const SIZE: u32 = 33;
    const MAX_ACTIVE: u32 = 1;
    const MAX_DELTA: u32 = 1;
    const PIECEWISE: bool = true;
    fn active(board: &Board, _perspective: Color, out: &mut IndexList<'_>) {
        out.push(board.occupied().count_ones());
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
    assert!(
        matches!(&err, ConformanceError::Violation { kind: "block", set, .. }
            if set == "forgets_captures"),
        "{err:?}"
    );
    let err = err.to_string();
    assert!(err.contains("block 'forgets_captures'"), "{err}");
    assert!(err.contains("after ") && err.contains("has extra"), "{err}");
}

#[test]
fn a_block_changed_by_moves_it_promised_to_ignore_fails() {
    let err = check_blocks(&[BlockDescriptor::of::<PawnsOnlyPromise>()], quick())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("block 'pawns_only_promise'")
            && err.contains("pawns_only_promise not asked: promised no change"),
        "{err}"
    );
}

#[test]
fn a_refresh_its_trigger_names_needs_no_call_and_without_the_trigger_is_missed() {
    let report = check_blocks(&[BlockDescriptor::of::<PawnsKingSide>()], quick()).unwrap();
    assert!(report.refreshes > 10, "{report:?}");
    let err = check_blocks(&[BlockDescriptor::of::<PawnsKingSideNoTrigger>()], quick())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("pawns_king_side_no_trigger not asked: promised no change"),
        "{err}"
    );
}

#[test]
fn a_move_names_the_roles_it_moves_takes_and_promotes_to() {
    use plugin_api::{MoveKind, NO_ROLE};
    let mv = |role: Role, captured: u8, promotion: u8, kind: MoveKind| Move {
        from: 0,
        to: 1,
        role,
        captured,
        promotion,
        kind,
    };
    let quiet = mv(Role::Knight, NO_ROLE, NO_ROLE, MoveKind::Normal);
    assert_eq!(quiet.roles(), Role::Knight.bit());
    let promotion = mv(
        Role::Pawn,
        Role::Rook as u8,
        Role::Queen as u8,
        MoveKind::Normal,
    );
    let taken = Role::Pawn.bit() | Role::Rook.bit() | Role::Queen.bit();
    assert_eq!(promotion.roles(), taken);
    let castle = mv(Role::King, NO_ROLE, NO_ROLE, MoveKind::Castle);
    assert_eq!(castle.roles(), Role::King.bit() | Role::Rook.bit());
    let en_passant = mv(Role::Pawn, Role::Pawn as u8, NO_ROLE, MoveKind::EnPassant);
    assert_eq!(en_passant.roles(), Role::Pawn.bit());
    // A byte past the roles names none.
    assert_eq!(
        mv(Role::Bishop, 200, 7, MoveKind::Normal).roles(),
        Role::Bishop.bit()
    );
}

#[test]
fn an_index_beyond_the_size_fails() {
    let err = check_blocks(&[BlockDescriptor::of::<OutOfRangeBlock>()], quick())
        .unwrap_err()
        .to_string();
    assert!(err.contains("index 7") && err.contains("size 700"), "{err}");
}

#[test]
fn a_delta_that_adds_and_removes_one_index_fails() {
    // Its counts agree with `active` after every move: only the exactness check can catch it.
    let err = check_blocks(&[BlockDescriptor::of::<AddsAndRemovesOneIndex>()], quick())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("block 'adds_and_removes'") && err.contains("both added and removed index"),
        "{err}"
    );
}

#[test]
fn a_broken_symmetry_promise_fails() {
    let err = check_blocks(&[BlockDescriptor::of::<NotSymmetric>()], quick())
        .unwrap_err()
        .to_string();
    assert!(err.contains("mirror symmetry"), "{err}");
}

#[test]
fn broken_refresh_binary_and_piecewise_promises_fail() {
    let err = check_blocks(&[BlockDescriptor::of::<RefreshesDespitePromise>()], quick())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("asked for a refresh but promises never to"),
        "{err}"
    );
    let err = check_blocks(&[BlockDescriptor::of::<NotBinary>()], quick())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("emitted twice by a block that promises binary"),
        "{err}"
    );
    let err = check_blocks(&[BlockDescriptor::of::<NotPiecewise>()], quick())
        .unwrap_err()
        .to_string();
    assert!(err.contains("piecewise promise broken"), "{err}");
}
