//! The `full_threats` block: one feature per (attacking piece on its square, attacked piece on
//! its square) pair that the layout keeps, updated incrementally.

use plugin_api::decompose::{NormalPieces, normal_pieces};
use plugin_api::{
    Board, Color, FeatureBlock, Grid, IndexList, Move, MoveDelta, MoveKind, Place, RefreshTrigger,
    Role, Square, decompose, pawn_captures,
};

use crate::attacks::{
    PAWN_RANKS, attacks, knight_attacks, pawn_attacks, pseudo_attacks, ray_through, slider_attacks,
};
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
/// `active` enumerates every threat of the board. `delta` plays the move one piece at a time
/// as Stockfish's `do_move` does, and lists what each piece change does to the threats on the
/// board that holds the piece (Stockfish's `Position::update_piece_threats`, `src/position.cpp`
/// at 762dd1da9): the piece's own threats, the threats against it, and for every slider that
/// sees its square the threat against the first piece beyond it, which the piece hides when put
/// and uncovers when taken. As there, a quiet move skips the threats beyond both of its squares
/// on one slider's line (uncovered and hidden again), and a capture's piece swap on the captured
/// piece's square skips every threat beyond it (its occupancy stays). A change that a later
/// piece takes back still cancels ([`IndexList::take`]), so the delta is the exact difference:
/// in a capture only the captured piece's removals can (a slider's threat that the mover
/// uncovered, against the captured piece or by it), and only they look; in en passant and
/// castling every change looks. A square's bishop and rook look-ups are made only for lines the
/// piece moves along or a slider stands on. Perspectives are refreshed only when their own king
/// changes side.
///
/// **Picture** ([`threat_place`](crate::layout::threat_place)): one sheet per (attacker kind,
/// victim kind) pair of the layout (80, "own knight → their rook"), an 8 × 8 grid of tiles (the
/// attacker's square) of 8 × 8 boards (the victim's square), both in the layout's oriented frame
/// (Black's view rank-mirrored, the own king always on files a–d). The slots of same-role pairs
/// that the de-duplication rule drops are not drawn.
pub struct FullThreats;

/// The squares of the victims an attacker of `role` may threaten on `board`: the roles of
/// [`VICTIM_ROLES`] (a test holds them equal), as Stockfish's `update_piece_threats` writes
/// them (pawns take knights and rooks, bishops and rooks every piece but queens and kings, the
/// others every piece but kings), from two or three sets instead of five.
#[inline(always)]
fn victims_of(board: &Board, role: Role) -> u64 {
    let by_role = |r: Role| board.by_role[r.index()];
    match role {
        Role::Pawn => by_role(Role::Knight) | by_role(Role::Rook),
        Role::Bishop | Role::Rook => {
            board.occupied() & !(by_role(Role::Queen) | by_role(Role::King))
        }
        _ => board.occupied() & !by_role(Role::King),
    }
}

/// For each attacker role, the squares of the victims it may threaten on `board`.
#[inline(always)]
fn victim_sets(board: &Board) -> [u64; 5] {
    ATTACKERS.map(|role| victims_of(board, role))
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
            f((board.color_on(to), role), to);
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
        // Pawns by their set shifted one capture direction at a time, not one pawn at a time
        // (Stockfish's `FullThreats::append_active_indices`).
        let pawns = attackers(board, color, Role::Pawn);
        for (shifted, step) in pawn_captures(color, pawns) {
            for_each_victim(
                board,
                shifted & victims[Role::Pawn.index()],
                |victim, to| f((color, Role::Pawn), to.wrapping_sub(step), victim, to),
            );
        }
        for role in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen] {
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
        let orient = orientations_after(board, mv, out);
        if orient == [None, None] {
            return;
        }
        // The move played one piece at a time on `w`, each change's threats listed on the board
        // that holds the piece, as Stockfish's `do_move` plays it (`src/position.cpp` and
        // `position.h` at 762dd1da9).
        let mut w = *board;
        if mv.kind == MoveKind::Normal {
            let (from, to) = (mv.from, mv.to);
            let NormalPieces {
                moved,
                captured,
                landed,
            } = normal_pieces(board, mv);
            let (moved, landed) = ((moved.color, moved.role), (landed.color, landed.role));
            match captured {
                // `move_piece` (and `remove_piece`, `put_piece` for a promotion): the threats of
                // a slider on the line through both squares, beyond them, are uncovered and
                // hidden again, so neither is listed; nothing else of the move takes another
                // back.
                None => {
                    let lists = &mut ChangedThreats::new(orient, out, false);
                    let line = (1u64 << from) | (1u64 << to);
                    piece_threats(&w, moved, from, false, line, lists);
                    w.remove(from, moved.0, moved.1);
                    w.put(to, landed.0, landed.1);
                    piece_threats(&w, landed, to, true, line, lists);
                }
                // `remove_piece` of the mover, then `swap_piece` on the captured piece's
                // square: its occupancy stays, so no slider's threat beyond it changes.
                // Only the captured piece's removals can take back an earlier change: a
                // slider's threat that the mover uncovered (an addition), against the captured
                // piece or by it. The mover's changes come first, and the landed piece's
                // additions are on its square, which no removal of another piece of its colour
                // lists.
                Some(victim) => {
                    let lists = &mut ChangedThreats::new(orient, out, false);
                    let victim = (victim.color, victim.role);
                    piece_threats(&w, moved, from, false, EVERY_RAY, lists);
                    w.remove(from, moved.0, moved.1);
                    lists.cancel = lists.out.added.iter().any(|l| !l.is_empty());
                    piece_threats(&w, victim, to, false, NO_RAY, lists);
                    lists.cancel = false;
                    w.remove(to, victim.0, victim.1);
                    w.put(to, landed.0, landed.1);
                    piece_threats(&w, landed, to, true, NO_RAY, lists);
                }
            }
            return;
        }
        // En passant and castling: their removals, then their additions.
        let lists = &mut ChangedThreats::new(orient, out, true);
        let changes = decompose(board, mv);
        for p in changes.removed() {
            piece_threats(&w, (p.color, p.role), p.square, false, EVERY_RAY, lists);
            w.remove(p.square, p.color, p.role);
        }
        for p in changes.added() {
            w.put(p.square, p.color, p.role);
            piece_threats(&w, (p.color, p.role), p.square, true, EVERY_RAY, lists);
        }
    }
}

/// `piece_threats`' `discovered_unless` that lists every slider's threat beyond the square.
const EVERY_RAY: u64 = u64::MAX;

/// `piece_threats`' `discovered_unless` that lists none (Stockfish's `ComputeRay = false`).
const NO_RAY: u64 = 0;

/// The colour and role of the piece on `sq` of `board` (which must hold a piece there; a king
/// reads as one): [`Board::piece_at`] for a square known to be occupied, without its `Option`
/// and its test of the other colour, as the delta asks it for every threat it lists.
#[inline(always)]
fn victim_on(board: &Board, sq: Square) -> Piece {
    let role = ATTACKERS
        .into_iter()
        .find(|r| board.by_role[r.index()] & (1u64 << sq) != 0)
        .unwrap_or(Role::King);
    (board.color_on(sq), role)
}

/// The colour and role of the slider on `sq` (which must hold a bishop, rook or queen): its
/// role read off two bit sets, without [`victim_on`]'s search through every role.
#[inline(always)]
fn slider_on(board: &Board, sq: Square) -> Piece {
    let on = |role: Role| (board.by_role[role.index()] >> (sq & 63) & 1) as usize;
    const SLIDERS: [Role; 4] = [Role::Bishop, Role::Rook, Role::Queen, Role::Queen];
    (
        board.color_on(sq),
        SLIDERS[on(Role::Rook) | on(Role::Queen) << 1],
    )
}

/// Whether an attacker of `attacker` role has `victim` role among the victims the layout keeps.
#[inline(always)]
fn keeps(attacker: Role, victim: Role) -> bool {
    victim != Role::King && VICTIM_ROLES[attacker.index()] & (1 << victim.index()) != 0
}

/// Lists the threats that change when `piece` is put on (`put`) or taken from `s` of `w`, which
/// holds it there: its own threats, the threats against it, and the threats of the sliders
/// that see `s` against the first piece beyond it, which the piece hides when put and uncovers
/// when taken (the discovered and blocked attacks), except those of a slider whose ray through
/// `s` holds all of `discovered_unless` (Stockfish's `noRaysContaining`: [`EVERY_RAY`] lists
/// all, [`NO_RAY`] none). Not inlined: one copy of this code instead of one per call site keeps
/// `delta` small in the instruction cache, which the accumulator's loop shares with the kernels
/// (1–2% of `host eval --games` at AVX-512 VNNI, in-process A/B).
#[inline(never)]
fn piece_threats(
    w: &Board,
    piece: Piece,
    s: Square,
    put: bool,
    discovered_unless: u64,
    lists: &mut ChangedThreats,
) {
    let occupied = w.occupied();
    let (color, role) = piece;
    let by_role = |r: Role| w.by_role[r.index()];
    let (bishops, rooks) = (
        by_role(Role::Bishop) | by_role(Role::Queen),
        by_role(Role::Rook) | by_role(Role::Queen),
    );
    // A line of `s` is looked at if the piece moves along it or a slider stands on it.
    let want = (
        matches!(role, Role::Bishop | Role::Queen)
            || pseudo_attacks(color, Role::Bishop, s) & bishops != 0,
        matches!(role, Role::Rook | Role::Queen)
            || pseudo_attacks(color, Role::Rook, s) & rooks != 0,
    );
    let (diagonal, straight) = slider_attacks(s, occupied, want);
    let sliders = (diagonal & bishops) | (straight & rooks);
    if role != Role::King {
        // Its own threats (pawns count from ranks 2–7 only, as the layout).
        let reach = match role {
            Role::Pawn if PAWN_RANKS & (1u64 << s) != 0 => pawn_attacks(color, s),
            Role::Pawn => 0,
            Role::Knight => knight_attacks(s),
            Role::Bishop => diagonal,
            Role::Rook => straight,
            _ => diagonal | straight,
        };
        let mut targets = reach & victims_of(w, role);
        while targets != 0 {
            let to = targets.trailing_zeros() as Square;
            targets &= targets - 1;
            lists.push(put, piece, s, victim_on(w, to), to);
        }
        // The threats of knights and pawns against it, their roles known by their sets.
        let pawns = by_role(Role::Pawn) & PAWN_RANKS;
        let knights = match keeps(Role::Knight, role) {
            true => knight_attacks(s) & by_role(Role::Knight),
            false => 0,
        };
        let mut attackers = knights;
        if keeps(Role::Pawn, role) {
            attackers |= (pawn_attacks(Color::Black, s) & pawns & w.by_color[0])
                | (pawn_attacks(Color::White, s) & pawns & w.by_color[1]);
        }
        while attackers != 0 {
            let from = attackers.trailing_zeros() as Square;
            attackers &= attackers - 1;
            let attacker_role = match knights & (1u64 << from) {
                0 => Role::Pawn,
                _ => Role::Knight,
            };
            lists.push(put, (w.color_on(from), attacker_role), from, piece, s);
        }
    }
    // The sliders that see `s`: each one's threat against the piece, and against the first
    // piece beyond `s`, which the piece hides or uncovers (Stockfish's `process_sliders`).
    let mut seeing = sliders;
    while seeing != 0 {
        let from = seeing.trailing_zeros() as Square;
        seeing &= seeing - 1;
        let slider = slider_on(w, from);
        if role != Role::King && keeps(slider.1, role) {
            lists.push(put, slider, from, piece, s);
        }
        let ray = ray_through(from, s);
        // The ray's first piece after `s` (the slider sees none before it).
        let beyond = ray & (diagonal | straight) & occupied;
        if beyond != 0 && ray & discovered_unless != discovered_unless {
            let to = beyond.trailing_zeros() as Square;
            let victim = victim_on(w, to);
            if keeps(slider.1, victim.1) {
                lists.push(!put, slider, from, victim, to);
            }
        }
    }
}

/// A move's changed threats as indices per perspective, written into the delta as they come.
struct ChangedThreats<'o, 'l> {
    orient: [Option<u8>; 2],
    out: &'o mut MoveDelta<'l>,
    /// Whether a change may take back an earlier one of the move (then it cancels with it).
    cancel: bool,
}

impl<'o, 'l> ChangedThreats<'o, 'l> {
    /// Lists for the perspectives with an orientation, into `out`.
    fn new(orient: [Option<u8>; 2], out: &'o mut MoveDelta<'l>, cancel: bool) -> Self {
        ChangedThreats {
            orient,
            out,
            cancel,
        }
    }

    /// The threat of `attacker` on `from` against `victim` on `to` appears (`add`) or goes.
    #[inline(always)]
    fn push(&mut self, add: bool, attacker: Piece, from: Square, victim: Piece, to: Square) {
        // The perspectives one after the other, not a loop: a two-turn loop at every call site
        // costs its exit's misprediction more than once in a while.
        self.push_for(Color::White, add, attacker, from, victim, to);
        self.push_for(Color::Black, add, attacker, from, victim, to);
    }

    /// [`push`](Self::push) for perspective `p`.
    #[inline(always)]
    fn push_for(
        &mut self,
        p: Color,
        add: bool,
        attacker: Piece,
        from: Square,
        victim: Piece,
        to: Square,
    ) {
        if let Some(o) = self.orient[p.index()]
            && let Some(ix) = threat_index(p, o, attacker, from, victim, to)
        {
            let (this, other) = match add {
                true => (&mut self.out.added, &mut self.out.removed),
                false => (&mut self.out.removed, &mut self.out.added),
            };
            // A change that an earlier piece's change takes back cancels with it.
            if !self.cancel || !other[p.index()].take(ix) {
                this[p.index()].push(ix);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `victims_of` takes exactly the roles of `VICTIM_ROLES`, for every attacker role.
    #[test]
    fn victims_are_the_layouts() {
        for attacker in ATTACKERS {
            let mut board = Board::empty(Color::White);
            // One piece of every colour and role, each on its own square.
            for (i, (color, role)) in Color::ALL
                .into_iter()
                .flat_map(|c| Role::ALL.map(|r| (c, r)))
                .enumerate()
            {
                board.put(i as Square * 5, color, role);
            }
            let expected = Role::ALL
                .into_iter()
                .filter(|v| {
                    *v != Role::King && VICTIM_ROLES[attacker.index()] >> v.index() & 1 != 0
                })
                .fold(0, |set, v| set | board.by_role[v.index()]);
            assert_eq!(victims_of(&board, attacker), expected, "{attacker:?}");
        }
    }
}
