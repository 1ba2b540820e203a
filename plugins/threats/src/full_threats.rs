//! The `full_threats` block: one feature per (attacking piece on its square, attacked piece on
//! its square) pair that the layout keeps, updated incrementally.

use plugin_api::{
    Board, Color, FeatureBlock, Grid, IndexList, Move, MoveDelta, Place, RefreshTrigger, Role,
    Square, decompose,
};

use crate::attacks::{PAWN_RANKS, attacked_from, attacks};
use crate::king_side::{orientation_on, orientations_after};
use crate::layout::{
    Piece, THREAT_FEATURES, THREAT_SHEETS, VICTIM_ROLES, threat_index, threat_place,
    threat_sheet_name,
};

/// The roles that attack in this layout (kings do not).
const ATTACKERS: [Role; 5] = [
    Role::Pawn,
    Role::Knight,
    Role::Bishop,
    Role::Rook,
    Role::Queen,
];

/// nnue-pytorch's `Full_Threats` (59,808 indices; layout in [`crate::layout`]).
///
/// `active` enumerates every threat of the board. `delta` looks only at what a move can change:
/// with X the squares whose content differs between the two boards, a threat changes only if its
/// attacker or its victim stands on X, or if its attacker's empty-board reach crosses X (a
/// slider's ray that the move opens or closes, the discovered and blocked attacks). Attackers off
/// X whose reach misses X are skipped without a lookup; for the others the victims on both
/// boards are compared, and attackers on X lose all their threats and gain their new ones.
/// Perspectives are refreshed only when their own king changes side.
///
/// **Picture** ([`threat_place`](crate::layout::threat_place)): one sheet per (attacker kind,
/// victim kind) pair of the layout (80, "own knight → their rook"), an 8 × 8 grid of tiles (the
/// attacker's square) of 8 × 8 boards (the victim's square), both in the layout's oriented frame
/// (Black's view rank-mirrored, the own king always on files a–d). The slots of same-role pairs
/// that the de-duplication rule drops are not drawn.
pub struct FullThreats;

/// For each attacker role, the squares of the victims it may threaten on `board`.
#[inline(always)]
fn victim_sets(board: &Board) -> [u64; 5] {
    let mut sets = [0u64; 5];
    for (role, set) in sets.iter_mut().enumerate() {
        for victim in 0..5 {
            if VICTIM_ROLES[role] & (1 << victim) != 0 {
                *set |= board.by_role[victim];
            }
        }
    }
    sets
}

/// Calls `f(victim, to)` for every square of `squares` (which must hold victims on `board`).
#[inline(always)]
fn for_each_victim(board: &Board, squares: u64, mut f: impl FnMut(Piece, Square)) {
    if squares == 0 {
        return;
    }
    for role in ATTACKERS {
        let mut bb = squares & board.by_role[role.index()];
        while bb != 0 {
            let to = bb.trailing_zeros() as Square;
            bb &= bb - 1;
            let color = if board.by_color[0] & (1u64 << to) != 0 {
                Color::White
            } else {
                Color::Black
            };
            f((color, role), to);
        }
    }
}

/// Attackers of `color` and `role` on `board` that the layout knows (no pawns on ranks 1 and 8,
/// which legal positions never have and whose captures the offsets leave out).
#[inline(always)]
fn attackers(board: &Board, color: Color, role: Role) -> u64 {
    let pieces = board.pieces(color, role);
    if role == Role::Pawn {
        pieces & PAWN_RANKS
    } else {
        pieces
    }
}

/// Calls `f(attacker, from, victim, to)` for every threat of `board`.
#[inline(always)]
pub fn for_each_threat(board: &Board, mut f: impl FnMut(Piece, Square, Piece, Square)) {
    let occupied = board.occupied();
    let victims = victim_sets(board);
    for color in Color::ALL {
        for role in ATTACKERS {
            let mut bb = attackers(board, color, role);
            while bb != 0 {
                let from = bb.trailing_zeros() as Square;
                bb &= bb - 1;
                let targets = attacks(color, role, from, occupied) & victims[role.index()];
                for_each_victim(board, targets, |victim, to| {
                    f((color, role), from, victim, to)
                });
            }
        }
    }
}

impl FeatureBlock for FullThreats {
    const NAME: &'static str = "full_threats";
    const DESCRIPTION: &'static str = "Full_Threats: Stockfish's threat inputs, (attacker, square, victim, square) pairs, king-side mirrored (59808)";
    const SIZE: u32 = THREAT_FEATURES;
    /// At most 30 non-king attackers, each with at most 8 victims (the first piece in each of a
    /// queen's 8 directions, 8 knight squares, 2 pawn captures).
    const MAX_ACTIVE: u32 = 240;
    /// Per changed square (at most 4): at most 8 threats from it, 16 against it (8 knight squares
    /// and the first piece in 8 directions) and 8 rays through it.
    const MAX_DELTA: u32 = 128;
    const REFRESH_TRIGGER: RefreshTrigger = RefreshTrigger::OwnKingSide;
    const BINARY: bool = true;
    /// (attacker, victim) kind pairs of attacker squares of victim squares.
    const GEOMETRY: Grid = Grid::boards(THREAT_SHEETS, "attacked square").with_tiles(
        [8, 8],
        [plugin_api::Axis::File, plugin_api::Axis::Rank],
        "attacker square",
    );

    fn sheet_name(sheet: u32) -> &'static str {
        threat_sheet_name(sheet)
    }

    fn place(index: u32) -> Place {
        threat_place(index)
    }

    fn active(board: &Board, perspective: Color, out: &mut IndexList<'_>) {
        let Some(orient) = orientation_on(board, perspective) else {
            return;
        };
        for_each_threat(board, |attacker, from, victim, to| {
            if let Some(ix) = threat_index(perspective, orient, attacker, from, victim, to) {
                out.push(ix);
            }
        });
    }

    fn delta(board: &Board, mv: &Move, out: &mut MoveDelta<'_>) {
        let after = board.play(mv);
        let orient = orientations_after(board, &after, out);
        if orient == [None, None] {
            return;
        }
        let changed = decompose(board, mv).changed_squares();
        let MoveDelta { added, removed, .. } = out;
        let emit = |lists: &mut [IndexList<'_>; 2], a: Piece, from, v: Piece, to| {
            for p in Color::ALL {
                if let Some(o) = orient[p.index()]
                    && let Some(ix) = threat_index(p, o, a, from, v, to)
                {
                    lists[p.index()].push(ix);
                }
            }
        };
        let (occupied0, occupied1) = (board.occupied(), after.occupied());
        let (victims0, victims1) = (victim_sets(board), victim_sets(&after));
        for color in Color::ALL {
            for role in ATTACKERS {
                let r = role.index();
                let before = attackers(board, color, role);
                let now = attackers(&after, color, role);
                // Attackers on unchanged squares (the same piece on both boards) whose reach
                // crosses a changed square.
                let mut bb = before & !changed & attacked_from(color, role, changed);
                while bb != 0 {
                    let from = bb.trailing_zeros() as Square;
                    bb &= bb - 1;
                    let t0 = attacks(color, role, from, occupied0) & victims0[r];
                    let t1 = attacks(color, role, from, occupied1) & victims1[r];
                    let a = (color, role);
                    for_each_victim(board, t0 & (!t1 | changed), |v, to| {
                        emit(removed, a, from, v, to)
                    });
                    for_each_victim(&after, t1 & (!t0 | changed), |v, to| {
                        emit(added, a, from, v, to)
                    });
                }
                // Attackers that leave, arrive or change on X.
                let mut bb = before & changed;
                while bb != 0 {
                    let from = bb.trailing_zeros() as Square;
                    bb &= bb - 1;
                    let t0 = attacks(color, role, from, occupied0) & victims0[r];
                    for_each_victim(board, t0, |v, to| emit(removed, (color, role), from, v, to));
                }
                let mut bb = now & changed;
                while bb != 0 {
                    let from = bb.trailing_zeros() as Square;
                    bb &= bb - 1;
                    let t1 = attacks(color, role, from, occupied1) & victims1[r];
                    for_each_victim(&after, t1, |v, to| emit(added, (color, role), from, v, to));
                }
            }
        }
    }
}
