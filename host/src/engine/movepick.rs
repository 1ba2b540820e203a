//! Compact move encoding (for the transposition table, killers and principal variations) and
//! the move picker: moves with ordering scores, handed out best first by selection.

use shakmaty::{Chess, Move, MoveList, Position, Role, Square};

/// A move packed into 16 bits: origin (6 bits), destination (6 bits; the rook's square for
/// castling, as in shakmaty), promotion role (3 bits, 0 for none). Never 0 for a real move.
pub type PackedMove = u16;

/// The packed form of "no move".
pub const NO_MOVE: PackedMove = 0;

/// Packs a move.
#[inline(always)]
pub fn pack(m: &Move) -> PackedMove {
    let from = m.from().map_or(0, |s| s as u16);
    let to = m.to() as u16;
    let promotion = m.promotion().map_or(0, |r| r as u16);
    from | (to << 6) | (promotion << 12)
}

/// The legal move of `pos` whose packed form is `packed`, if any.
pub fn unpack(pos: &Chess, packed: PackedMove) -> Option<Move> {
    if packed == NO_MOVE {
        return None;
    }
    pos.legal_moves().into_iter().find(|m| pack(m) == packed)
}

/// Whether a move is quiet: neither a capture nor a promotion.
#[inline(always)]
pub fn is_quiet(m: &Move) -> bool {
    !m.is_capture() && m.promotion().is_none()
}

/// Whether a move is an underpromotion (to a knight, bishop or rook).
#[inline(always)]
pub fn is_underpromotion(m: &Move) -> bool {
    matches!(m.promotion(), Some(r) if r != Role::Queen)
}

/// The legal move of `pos` whose packed form is `packed`, found without generating every move
/// (for trying the transposition table's move first).
pub fn from_packed(pos: &Chess, packed: PackedMove) -> Option<Move> {
    if packed == NO_MOVE {
        return None;
    }
    let from = Square::new(u32::from(packed & 63));
    let to = Square::new(u32::from((packed >> 6) & 63));
    let promotion = match (packed >> 12) & 7 {
        0 => None,
        r => Some(Role::try_from(r as u8).ok()?),
    };
    let board = pos.board();
    let piece = board.piece_at(from)?;
    if piece.color != pos.turn() {
        return None;
    }
    let role = piece.role;
    let m = if role == Role::King && (pos.castles().castling_rights() & pos.us()).contains(to) {
        Move::Castle {
            king: from,
            rook: to,
        }
    } else if role == Role::Pawn
        && from.file() != to.file()
        && !board.occupied().contains(to)
        && promotion.is_none()
    {
        Move::EnPassant { from, to }
    } else {
        if pos.us().contains(to) {
            return None;
        }
        Move::Normal {
            role,
            from,
            capture: board.role_at(to),
            to,
            promotion,
        }
    };
    pos.is_legal(m).then_some(m)
}

/// How the picker classified a move it hands out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The transposition table's move.
    Tt,
    /// A capture or queen promotion whose exchange does not lose (quiescence: every capture).
    GoodCapture,
    /// A killer move.
    Killer,
    /// Another quiet move (or an evasion in the quiescence search).
    Quiet,
    /// A capture that loses material by static exchange, or an underpromotion.
    BadCapture,
}

/// What the picker asks of the search: ordering scores and exchange evaluation.
pub trait Scorer {
    /// Ordering score of a capture or promotion (larger first).
    fn capture_score(&self, m: &Move) -> i32;
    /// Ordering score of a quiet move (larger first).
    fn quiet_score(&self, m: &Move) -> i32;
    /// Whether the exchange started by `m` wins at least `threshold`.
    fn see_ge(&self, m: &Move, threshold: i32) -> bool;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Stage {
    TtMove,
    Generate,
    Captures,
    Killers,
    ScoreQuiets,
    Quiets,
    BadCaptures,
    Done,
}

/// Staged move ordering: the transposition table's move first, before any move is generated
/// (it often refutes the position on its own); then captures by score (those losing material
/// by static exchange are put off to the end); then the killers; then the quiet moves by
/// history, scored only when reached. In the quiescence search only captures and queen
/// promotions are generated, unless the side to move is in check.
pub struct MovePicker {
    stage: Stage,
    tt_move: Option<Move>,
    killers: [PackedMove; 2],
    moves: MoveList,
    preset: bool,
    scores: [i32; 256],
    /// `moves[..captures_end]` are captures and promotions, the rest quiet.
    captures_end: usize,
    cur: usize,
    bad: [Option<Move>; 32],
    bad_len: usize,
    bad_cur: usize,
    killer_i: usize,
    quiescence: bool,
    all_evasions: bool,
    see_threshold: i32,
}

impl MovePicker {
    fn with(
        tt_move: Option<Move>,
        killers: [PackedMove; 2],
        quiescence: bool,
        all_evasions: bool,
    ) -> Self {
        MovePicker {
            stage: Stage::TtMove,
            tt_move,
            killers,
            moves: MoveList::new(),
            preset: false,
            scores: [0; 256],
            captures_end: 0,
            cur: 0,
            bad: [None; 32],
            bad_len: 0,
            bad_cur: 0,
            killer_i: 0,
            quiescence,
            all_evasions,
            see_threshold: -20,
        }
    }

    /// A picker for the main search; `tt_move` must be legal (see [`from_packed`]).
    pub fn main(tt_move: Option<Move>, killers: [PackedMove; 2]) -> Self {
        Self::with(tt_move, killers, false, true)
    }

    /// A picker for the main search over a given list of legal moves (the root's).
    pub fn with_moves(moves: MoveList, tt_move: Option<Move>) -> Self {
        let tt_move = tt_move.filter(|t| moves.contains(t));
        let mut p = Self::with(tt_move, [NO_MOVE; 2], false, true);
        p.moves = moves;
        p.preset = true;
        p
    }

    /// A picker for the quiescence search: captures and queen promotions, or every evasion when
    /// `in_check`. A transposition table move that is quiet is ignored unless `in_check`.
    pub fn quiescence(tt_move: Option<Move>, in_check: bool) -> Self {
        let tt_move = tt_move.filter(|m| in_check || is_tactical(m));
        Self::with(tt_move, [NO_MOVE; 2], true, in_check)
    }

    /// Whether the position has no legal move at all. Only meaningful once the picker returned
    /// `None`.
    pub fn no_legal_move(&self) -> bool {
        self.tt_move.is_none() && self.moves.is_empty()
    }

    fn is_tt(&self, m: &Move) -> bool {
        self.tt_move.as_ref() == Some(m)
    }

    fn select(&mut self, end: usize) -> Option<usize> {
        if self.cur >= end {
            return None;
        }
        let mut best = self.cur;
        for i in self.cur + 1..end {
            if self.scores[i] > self.scores[best] {
                best = i;
            }
        }
        self.moves.swap(self.cur, best);
        self.scores.swap(self.cur, best);
        self.cur += 1;
        Some(self.cur - 1)
    }

    /// The next move, its kind and its ordering score, or `None` when all were handed out.
    pub fn next(&mut self, pos: &Chess, scorer: &impl Scorer) -> Option<(Move, Kind, i32)> {
        loop {
            match self.stage {
                Stage::TtMove => {
                    self.stage = Stage::Generate;
                    if let Some(m) = self.tt_move {
                        return Some((m, Kind::Tt, 0));
                    }
                }
                Stage::Generate => {
                    if !self.preset {
                        self.moves = pos.legal_moves();
                    }
                    // Partition: captures and promotions first.
                    let n = self.moves.len();
                    let mut split = 0;
                    for i in 0..n {
                        if is_tactical(&self.moves[i]) {
                            self.moves.swap(i, split);
                            split += 1;
                        }
                    }
                    if self.quiescence && !self.all_evasions {
                        self.moves.truncate(split);
                    }
                    self.captures_end = split;
                    for i in 0..split {
                        self.scores[i] = scorer.capture_score(&self.moves[i]);
                    }
                    self.cur = 0;
                    self.stage = Stage::Captures;
                }
                Stage::Captures => {
                    let Some(i) = self.select(self.captures_end) else {
                        self.stage = if self.quiescence {
                            Stage::ScoreQuiets
                        } else {
                            Stage::Killers
                        };
                        continue;
                    };
                    let m = self.moves[i];
                    if self.is_tt(&m) {
                        continue;
                    }
                    if self.quiescence {
                        return Some((m, Kind::GoodCapture, self.scores[i]));
                    }
                    if is_underpromotion(&m) || !scorer.see_ge(&m, self.see_threshold) {
                        if self.bad_len < self.bad.len() {
                            self.bad[self.bad_len] = Some(m);
                            self.bad_len += 1;
                            continue;
                        }
                        return Some((m, Kind::BadCapture, self.scores[i]));
                    }
                    return Some((m, Kind::GoodCapture, self.scores[i]));
                }
                Stage::Killers => {
                    if self.killer_i >= 2 {
                        self.stage = Stage::ScoreQuiets;
                        continue;
                    }
                    let k = self.killers[self.killer_i];
                    self.killer_i += 1;
                    if k == NO_MOVE || self.tt_move.is_some_and(|t| pack(&t) == k) {
                        continue;
                    }
                    let n = self.moves.len();
                    if let Some(i) = (self.cur..n).find(|&i| pack(&self.moves[i]) == k) {
                        self.moves.swap(self.cur, i);
                        self.cur += 1;
                        return Some((self.moves[self.cur - 1], Kind::Killer, 0));
                    }
                }
                Stage::ScoreQuiets => {
                    let n = self.moves.len();
                    for i in self.cur..n {
                        self.scores[i] = scorer.quiet_score(&self.moves[i]);
                    }
                    // Insertion sort, best first: most quiet moves of a node get searched.
                    for i in self.cur + 1..n {
                        let (m, s) = (self.moves[i], self.scores[i]);
                        let mut j = i;
                        while j > self.cur && self.scores[j - 1] < s {
                            self.moves[j] = self.moves[j - 1];
                            self.scores[j] = self.scores[j - 1];
                            j -= 1;
                        }
                        self.moves[j] = m;
                        self.scores[j] = s;
                    }
                    self.stage = Stage::Quiets;
                }
                Stage::Quiets => {
                    if self.cur >= self.moves.len() {
                        self.stage = Stage::BadCaptures;
                        continue;
                    }
                    let i = self.cur;
                    self.cur += 1;
                    let m = self.moves[i];
                    if self.is_tt(&m) {
                        continue;
                    }
                    return Some((m, Kind::Quiet, self.scores[i]));
                }
                Stage::BadCaptures => {
                    if self.bad_cur < self.bad_len {
                        self.bad_cur += 1;
                        if let Some(m) = self.bad[self.bad_cur - 1] {
                            return Some((m, Kind::BadCapture, 0));
                        }
                        continue;
                    }
                    self.stage = Stage::Done;
                }
                Stage::Done => return None,
            }
        }
    }
}

/// Captures and promotions: what the capture stage and the quiescence search handle.
#[inline(always)]
fn is_tactical(m: &Move) -> bool {
    m.is_capture() || m.promotion().is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::CastlingMode;
    use shakmaty::fen::Fen;

    #[test]
    fn packing_is_unique_and_round_trips_over_all_legal_moves() {
        let fens = [
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
        ];
        for fen in fens {
            let pos: Chess = fen
                .parse::<Fen>()
                .unwrap()
                .into_position(CastlingMode::Standard)
                .unwrap();
            let moves = pos.legal_moves();
            let mut packed: Vec<u16> = moves.iter().map(pack).collect();
            for (m, &p) in moves.iter().zip(&packed) {
                assert_ne!(p, NO_MOVE);
                assert_eq!(unpack(&pos, p), Some(*m));
            }
            packed.sort_unstable();
            packed.dedup();
            assert_eq!(packed.len(), moves.len(), "collision in {fen}");
        }
    }

    struct Plain;
    impl Scorer for Plain {
        fn capture_score(&self, m: &Move) -> i32 {
            m.capture().map_or(0, |r| r as i32)
        }
        fn quiet_score(&self, m: &Move) -> i32 {
            m.to() as i32
        }
        fn see_ge(&self, _m: &Move, _threshold: i32) -> bool {
            true
        }
    }

    fn pos(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap()
    }

    #[test]
    fn packed_moves_are_found_without_generation() {
        let p = pos("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1");
        for m in p.legal_moves() {
            assert_eq!(from_packed(&p, pack(&m)), Some(m));
        }
        // Not legal here: moves of the other side, off-board garbage, a pinned piece.
        assert_eq!(from_packed(&p, 0x3fff), None);
        let black_pawn = pack(&Move::Normal {
            role: Role::Pawn,
            from: Square::A7,
            capture: None,
            to: Square::A6,
            promotion: None,
        });
        assert_eq!(from_packed(&p, black_pawn), None);
    }

    #[test]
    fn picker_hands_out_every_legal_move_once_tt_move_first() {
        for fen in [
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
        ] {
            let p = pos(fen);
            let legal = p.legal_moves();
            let tt = legal[legal.len() / 2];
            let killer = legal
                .iter()
                .find(|m| is_quiet(m) && **m != tt)
                .copied()
                .unwrap();
            let mut picker = MovePicker::main(Some(tt), [pack(&killer), NO_MOVE]);
            let mut seen = Vec::new();
            while let Some((m, kind, _)) = picker.next(&p, &Plain) {
                if seen.is_empty() {
                    assert_eq!((m, kind), (tt, Kind::Tt));
                }
                if m == killer {
                    assert_eq!(kind, Kind::Killer);
                }
                seen.push(m);
            }
            assert_eq!(seen.len(), legal.len());
            seen.sort_by_key(pack);
            seen.dedup();
            assert_eq!(seen.len(), legal.len());
            // Quiescence: only captures and promotions.
            let mut q = MovePicker::quiescence(None, false);
            while let Some((m, _, _)) = q.next(&p, &Plain) {
                assert!(is_tactical(&m));
            }
        }
    }

    #[test]
    fn positions_without_moves_are_recognised() {
        let mated = pos("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1");
        let mut picker = MovePicker::main(None, [NO_MOVE; 2]);
        assert!(picker.next(&mated, &Plain).is_none());
        assert!(picker.no_legal_move());
    }
}
