//! Compact move encoding (for the transposition table, killers and principal variations) and
//! the move picker: moves with ordering scores, handed out best first by selection.

use arrayvec::ArrayVec;
use shakmaty::attacks::{
    self, bishop_attacks, king_attacks, knight_attacks, pawn_attacks, queen_attacks, rook_attacks,
};
use shakmaty::{Bitboard, Chess, Color, Move, MoveList, Position, Rank, Role, Square};

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
enum PickStage {
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
    stage: PickStage,
    tt_move: Option<Move>,
    killers: [Option<Move>; 2],
    moves: MoveList,
    preset: bool,
    /// Scores of `moves[..scores.len()]` (filled stage by stage).
    scores: ArrayVec<i32, 256>,
    /// `moves[..captures_end]` are captures and promotions, the rest quiet.
    captures_end: usize,
    cur: usize,
    bad: ArrayVec<Move, 32>,
    bad_cur: usize,
    killer_i: usize,
    quiescence: bool,
    all_evasions: bool,
    see_threshold: i32,
}

impl MovePicker {
    fn with(
        tt_move: Option<Move>,
        killers: [Option<Move>; 2],
        quiescence: bool,
        all_evasions: bool,
    ) -> Self {
        MovePicker {
            stage: PickStage::TtMove,
            tt_move,
            killers,
            moves: MoveList::new(),
            preset: false,
            scores: ArrayVec::new(),
            captures_end: 0,
            cur: 0,
            bad: ArrayVec::new(),
            bad_cur: 0,
            killer_i: 0,
            quiescence,
            all_evasions,
            see_threshold: -20,
        }
    }

    /// A picker for the main search; `tt_move` must be legal (see [`from_packed`]).
    pub fn main(tt_move: Option<Move>, killers: [Option<Move>; 2]) -> Self {
        Self::with(tt_move, killers, false, true)
    }

    /// A picker for the main search over a given list of legal moves (the root's).
    pub fn with_moves(moves: MoveList, tt_move: Option<Move>) -> Self {
        let tt_move = tt_move.filter(|t| moves.contains(t));
        let mut p = Self::with(tt_move, [None; 2], false, true);
        p.moves = moves;
        p.preset = true;
        p
    }

    /// A picker for the quiescence search: captures and queen promotions, or every evasion when
    /// `in_check`. A transposition table move that is quiet is ignored unless `in_check`.
    pub fn quiescence(tt_move: Option<Move>, in_check: bool) -> Self {
        let tt_move = tt_move.filter(|m| in_check || is_tactical(m));
        Self::with(tt_move, [None; 2], true, in_check)
    }

    /// Hands out no more quiet moves (killers included): what is left are the bad captures.
    pub fn skip_quiets(&mut self) {
        if self.stage > PickStage::Captures && self.stage < PickStage::BadCaptures {
            self.stage = PickStage::BadCaptures;
        }
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
        let scores = &self.scores[self.cur..end];
        let mut best = 0;
        let mut best_score = scores[0];
        for (i, &s) in scores.iter().enumerate().skip(1) {
            if s > best_score {
                best = i;
                best_score = s;
            }
        }
        let best = self.cur + best;
        self.moves.swap(self.cur, best);
        self.scores.swap(self.cur, best);
        self.cur += 1;
        Some(self.cur - 1)
    }

    /// The next move, its kind and its ordering score, or `None` when all were handed out.
    pub fn next(&mut self, pos: &Chess, scorer: &impl Scorer) -> Option<(Move, Kind, i32)> {
        loop {
            match self.stage {
                PickStage::TtMove => {
                    self.stage = PickStage::Generate;
                    if let Some(m) = self.tt_move {
                        return Some((m, Kind::Tt, 0));
                    }
                }
                PickStage::Generate => {
                    if !self.preset {
                        if self.quiescence && !self.all_evasions {
                            tactical_moves(pos, &mut self.moves);
                        } else {
                            self.moves = pos.legal_moves();
                        }
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
                    self.scores.clear();
                    for i in 0..split {
                        self.scores.push(scorer.capture_score(&self.moves[i]));
                    }
                    self.cur = 0;
                    self.stage = PickStage::Captures;
                }
                PickStage::Captures => {
                    let Some(i) = self.select(self.captures_end) else {
                        self.stage = if self.quiescence {
                            PickStage::ScoreQuiets
                        } else {
                            PickStage::Killers
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
                        if self.bad.try_push(m).is_ok() {
                            continue;
                        }
                        return Some((m, Kind::BadCapture, self.scores[i]));
                    }
                    return Some((m, Kind::GoodCapture, self.scores[i]));
                }
                PickStage::Killers => {
                    if self.killer_i >= 2 {
                        self.stage = PickStage::ScoreQuiets;
                        continue;
                    }
                    let k = self.killers[self.killer_i];
                    self.killer_i += 1;
                    let Some(k) = k else { continue };
                    if self.tt_move == Some(k) {
                        continue;
                    }
                    let n = self.moves.len();
                    if let Some(i) = (self.cur..n).find(|&i| self.moves[i] == k) {
                        self.moves.swap(self.cur, i);
                        self.cur += 1;
                        return Some((self.moves[self.cur - 1], Kind::Killer, 0));
                    }
                }
                PickStage::ScoreQuiets => {
                    let n = self.moves.len();
                    // Killers handed out sit between the captures and `cur`.
                    while self.scores.len() < self.cur {
                        self.scores.push(0);
                    }
                    self.scores.truncate(self.cur);
                    for i in self.cur..n {
                        self.scores.push(scorer.quiet_score(&self.moves[i]));
                    }
                    self.stage = PickStage::Quiets;
                }
                PickStage::Quiets => {
                    // Selection, not a full sort: most nodes stop after a few quiet moves, or
                    // skip the rest (late move pruning, `skip_quiets`).
                    let Some(i) = self.select(self.moves.len()) else {
                        self.stage = PickStage::BadCaptures;
                        continue;
                    };
                    let m = self.moves[i];
                    if self.is_tt(&m) {
                        continue;
                    }
                    return Some((m, Kind::Quiet, self.scores[i]));
                }
                PickStage::BadCaptures => {
                    if self.bad_cur < self.bad.len() {
                        self.bad_cur += 1;
                        return Some((self.bad[self.bad_cur - 1], Kind::BadCapture, 0));
                    }
                    self.stage = PickStage::Done;
                }
                PickStage::Done => return None,
            }
        }
    }
}

/// Our pieces pinned to our king (their only legal moves stay on the line to the king).
#[inline]
fn pinned(pos: &Chess, king: Square) -> Bitboard {
    let board = pos.board();
    let snipers = ((rook_attacks(king, Bitboard(0)) & board.rooks_and_queens())
        | (bishop_attacks(king, Bitboard(0)) & board.bishops_and_queens()))
        & pos.them();
    let mut pinned = Bitboard(0);
    for sniper in snipers {
        let between = attacks::between(king, sniper) & board.occupied();
        if !between.more_than_one() {
            pinned |= between;
        }
    }
    pinned & pos.us()
}

/// The legal captures and queen promotions (captures included; no underpromotion) of a position
/// whose side to move is not in check, generated into `out` (cleared first) without the quiet
/// moves: the quiescence search's moves. Panics in debug builds when the side to move is in
/// check.
pub fn tactical_moves(pos: &Chess, out: &mut MoveList) {
    debug_assert!(!pos.is_check());
    out.clear();
    let board = pos.board();
    let us = pos.turn();
    let occupied = board.occupied();
    let Some(king) = board.king_of(us) else {
        return;
    };
    let pinned = pinned(pos, king);
    let targets = pos.them() & !board.kings();
    let legal =
        |from: Square, to: Square| !pinned.contains(from) || attacks::aligned(from, to, king);
    let last_rank = match us {
        Color::White => Bitboard::from_rank(Rank::Eighth),
        Color::Black => Bitboard::from_rank(Rank::First),
    };
    let forward = match us {
        Color::White => 8,
        Color::Black => -8,
    };
    for from in pos.our(Role::Pawn) {
        for to in pawn_attacks(us, from) & targets {
            if legal(from, to) {
                out.push(Move::Normal {
                    role: Role::Pawn,
                    from,
                    capture: board.role_at(to),
                    to,
                    promotion: last_rank.contains(to).then_some(Role::Queen),
                });
            }
        }
        if let Some(to) = from.offset(forward)
            && last_rank.contains(to)
            && !occupied.contains(to)
            && legal(from, to)
        {
            out.push(Move::Normal {
                role: Role::Pawn,
                from,
                capture: None,
                to,
                promotion: Some(Role::Queen),
            });
        }
    }
    for role in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen] {
        for from in pos.our(role) {
            let reach = match role {
                Role::Knight => knight_attacks(from),
                Role::Bishop => bishop_attacks(from, occupied),
                Role::Rook => rook_attacks(from, occupied),
                _ => queen_attacks(from, occupied),
            };
            for to in reach & targets {
                if legal(from, to) {
                    out.push(Move::Normal {
                        role,
                        from,
                        capture: board.role_at(to),
                        to,
                        promotion: None,
                    });
                }
            }
        }
    }
    let without_king = occupied ^ Bitboard::from(king);
    for to in king_attacks(king) & targets {
        if board.attacks_to(to, !us, without_king).is_empty() {
            out.push(Move::Normal {
                role: Role::King,
                from: king,
                capture: board.role_at(to),
                to,
                promotion: None,
            });
        }
    }
    if pos.maybe_ep_square().is_some() {
        for m in pos.en_passant_moves() {
            out.push(m);
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
        chess_text::fen::parse_position(fen).unwrap()
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
            let mut picker = MovePicker::main(Some(tt), [Some(killer), None]);
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
            let mut q = MovePicker::quiescence(None, p.is_check());
            while let Some((m, _, _)) = q.next(&p, &Plain) {
                assert!(p.is_check() || is_tactical(&m));
            }
        }
    }

    #[test]
    fn tactical_moves_are_the_legal_captures_and_queen_promotions() {
        use rand::SeedableRng;
        use rand::seq::IndexedRandom;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let starts = [
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        ];
        let mut checked = 0;
        for start in starts {
            for _ in 0..30 {
                let mut p = pos(start);
                for _ in 0..80 {
                    let legal = p.legal_moves();
                    if legal.is_empty() {
                        break;
                    }
                    if !p.is_check() {
                        let mut want: Vec<u16> = legal
                            .iter()
                            .filter(|m| m.promotion().map_or(m.is_capture(), |r| r == Role::Queen))
                            .map(pack)
                            .collect();
                        let mut list = MoveList::new();
                        tactical_moves(&p, &mut list);
                        let mut got: Vec<u16> = list.iter().map(pack).collect();
                        want.sort_unstable();
                        got.sort_unstable();
                        assert_eq!(
                            got,
                            want,
                            "{}",
                            Fen::from_position(&p, shakmaty::EnPassantMode::Legal)
                        );
                        checked += 1;
                    }
                    // Prefer captures so the positions stay tactical.
                    let captures: Vec<Move> =
                        legal.iter().filter(|m| m.is_capture()).copied().collect();
                    let m = if !captures.is_empty() && rand::Rng::random_bool(&mut rng, 0.5) {
                        *captures.choose(&mut rng).unwrap()
                    } else {
                        *legal.choose(&mut rng).unwrap()
                    };
                    p.play_unchecked(m);
                }
            }
        }
        assert!(checked > 5_000, "{checked}");
    }

    #[test]
    fn positions_without_moves_are_recognised() {
        let mated = pos("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1");
        let mut picker = MovePicker::main(None, [None; 2]);
        assert!(picker.next(&mated, &Plain).is_none());
        assert!(picker.no_legal_move());
    }
}
