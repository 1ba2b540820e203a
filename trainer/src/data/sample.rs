//! The common training sample and the chess helpers every format shares.

use std::fmt::Write as _;

use plugin_api::{Board, Color, Move, MoveKind, NO_ROLE, NO_SQUARE, Role, Square};
use shakmaty::fen::Fen;
use shakmaty::{Bitboard, CastlingMode, Chess, FromSetup, Position, PositionError, Setup, attacks};

use super::invalid::InvalidSample;

/// One training position with its labels, in whatever format it was stored.
///
/// The position is the ABI [`Board`] the feature plugins read (so a batch needs no conversion),
/// plus the two clocks. Conventions:
/// - `board.ep_square` is set only when an en-passant capture is legal (shakmaty's and
///   Stockfish's convention), so equal positions compare equal whatever the source;
/// - `board.castling` holds the squares of rooks with castling rights (standard chess only: the
///   binary formats can store corner rooks only);
/// - `score` and `result` are from the side to move's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    /// Pieces, side to move, castling rights, en-passant square.
    pub board: Board,
    /// Half-moves since the last capture or pawn move (FEN's halfmove clock).
    pub rule50: u16,
    /// Plies played since the game's start position (FEN: `2 * (fullmove - 1) + (black to move)`).
    pub ply: u16,
    /// Search score for the side to move, as the file's producer wrote it: Stockfish's own
    /// tools write its internal units, `trainer gensfen` centipawns (of UCI engines, and
    /// Stockfish `.nnue` labels converted as Stockfish's UCI does).
    pub score: i16,
    /// The best move found by the search, if the record has one (`0000` / Stockfish's
    /// `MOVE_NONE` otherwise).
    pub best_move: Option<Move>,
    /// Game result for the side to move: 1 win, 0 draw, -1 loss; `None` where the format has no
    /// result (the text formats).
    pub result: Option<i8>,
}

impl Sample {
    /// The sample of a legal FEN (score 0, no best move, no result), for the unit tests.
    #[cfg(test)]
    pub(crate) fn from_fen(fen: &str) -> Sample {
        let setup = chess_text::parse_fen(fen).unwrap();
        Sample::from_position(&chess_from_setup(setup).unwrap(), 0, None, None)
    }

    /// The sample of a legal shakmaty position.
    pub fn from_position(
        pos: &Chess,
        score: i16,
        best_move: Option<Move>,
        result: Option<i8>,
    ) -> Sample {
        let black_to_move = u32::from(pos.turn() == shakmaty::Color::Black);
        let ply = 2 * (pos.fullmoves().get().saturating_sub(1)) + black_to_move;
        Sample {
            board: plugin_api::board_from_position(pos),
            rule50: pos.halfmoves().min(u32::from(u16::MAX)) as u16,
            ply: ply.min(u32::from(u16::MAX)) as u16,
            score,
            best_move,
            result,
        }
    }

    /// The full-move number of the FEN (`1 + ply / 2`).
    pub fn fullmoves(&self) -> u32 {
        1 + u32::from(self.ply) / 2
    }

    /// The position as a shakmaty setup (not checked for legality).
    pub fn setup(&self) -> Setup {
        plugin_api::setup_from_board(&self.board, u32::from(self.rule50), self.fullmoves())
    }

    /// The position as a legal shakmaty position, or why it is not one.
    pub fn to_chess(&self) -> Result<Chess, InvalidSample> {
        check_structure(&self.board)?;
        chess_from_setup(self.setup())
    }

    /// The FEN (six fields; the en-passant square only when a capture is legal).
    pub fn fen(&self) -> String {
        Fen::try_from_setup(self.setup())
            .unwrap_or_else(shakmaty::fen::LossyFenError::ignore)
            .to_string()
    }

    /// Whether the side to move is in check.
    pub fn in_check(&self) -> bool {
        in_check(&self.board)
    }

    /// Whether the best move captures (en passant included; castling never does).
    pub fn best_move_is_capture(&self) -> bool {
        self.best_move.is_some_and(|m| m.captured != NO_ROLE)
    }

    /// Checks everything a reader may not have: a legal position, and a best move that is legal
    /// in it and agrees with the board (moved and captured roles, kind).
    pub fn validate(&self) -> Result<(), InvalidSample> {
        let pos = self.to_chess()?;
        if let Some(mv) = self.best_move {
            let m = plugin_api::move_to_shakmaty(&mv);
            if !pos.is_legal(m) {
                return Err(format!("illegal move {}", uci(&mv)).into());
            }
        }
        Ok(())
    }
}

/// A legal shakmaty position from a setup; an en-passant square without a legal capture is
/// dropped silently (older data writes it after every double push).
pub fn chess_from_setup(setup: Setup) -> Result<Chess, InvalidSample> {
    Chess::from_setup(setup, CastlingMode::Standard)
        .or_else(PositionError::ignore_invalid_ep_square)
        .map_err(|e| InvalidSample(e.to_string()))
}

/// The name of a square (`e4`).
pub fn square_name(sq: Square) -> [u8; 2] {
    [b'a' + (sq & 7), b'1' + ((sq >> 3) & 7)]
}

/// A move in UCI notation as Stockfish's tools write it: castling as the king's two-square
/// step (`e1g1`), promotions with a lower-case letter (`e7e8q`).
pub fn uci(mv: &Move) -> String {
    let mut s = String::with_capacity(5);
    write_uci(&mut s, Some(mv));
    s
}

/// Appends the UCI text of a move, or `0000` for none.
pub fn write_uci(out: &mut String, mv: Option<&Move>) {
    let Some(mv) = mv else {
        out.push_str("0000");
        return;
    };
    let to = if mv.kind == MoveKind::Castle {
        mv.castle_destinations().0
    } else {
        mv.to
    };
    for sq in [mv.from, to] {
        for c in square_name(sq) {
            out.push(c as char);
        }
    }
    if let Some(p) = mv.promotion() {
        let _ = write!(out, "{}", ['p', 'n', 'b', 'r', 'q', 'k'][p.index()]);
    }
}

/// The ABI move `from → to` on `board` with everything a [`Move`] carries, derived from the
/// board: `kind` as given, castling written king → own rook. Errors when the move does not fit
/// the board (no own piece on `from`, capture of an own piece, a king on `to`, ...).
pub fn move_on_board(
    board: &Board,
    from: Square,
    to: Square,
    kind: MoveKind,
    promotion: Option<Role>,
) -> Result<Move, InvalidSample> {
    let name = |sq: Square| String::from_utf8_lossy(&square_name(sq)).into_owned();
    if from >= 64 || to >= 64 || from == to {
        return Err(format!("move with squares {from}, {to}").into());
    }
    let us = board.turn;
    let (color, role) = board
        .piece_at(from)
        .ok_or_else(|| format!("move from empty square {}", name(from)))?;
    if color != us {
        return Err(format!("move of the opponent's piece on {}", name(from)).into());
    }
    let target = board.piece_at(to);
    let mut captured = NO_ROLE;
    match kind {
        MoveKind::Castle => {
            if role != Role::King || target != Some((us, Role::Rook)) {
                return Err(format!(
                    "castling {}{} is not king to own rook",
                    name(from),
                    name(to)
                )
                .into());
            }
        }
        MoveKind::EnPassant => {
            if role != Role::Pawn || to != board.ep_square || target.is_some() {
                return Err(format!(
                    "en passant {}{} without an en-passant square there",
                    name(from),
                    name(to)
                )
                .into());
            }
            captured = Role::Pawn as u8;
        }
        MoveKind::Normal => match target {
            Some((c, _)) if c == us => {
                return Err(format!("move {}{} onto an own piece", name(from), name(to)).into());
            }
            Some((_, Role::King)) => {
                return Err(format!("move {}{} captures a king", name(from), name(to)).into());
            }
            Some((_, r)) => captured = r as u8,
            None => {}
        },
    }
    if let Some(p) = promotion {
        let last_rank = if us == Color::White { 7 } else { 0 };
        if role != Role::Pawn || (to >> 3) != last_rank || matches!(p, Role::Pawn | Role::King) {
            return Err(format!("bad promotion {}{}", name(from), name(to)).into());
        }
    }
    Ok(Move {
        from,
        to,
        role,
        captured,
        promotion: promotion.map_or(NO_ROLE, |r| r as u8),
        kind,
    })
}

fn sq(s: u32) -> shakmaty::Square {
    shakmaty::Square::new(s)
}

/// Pieces of `color` attacking `target` given the occupancy `occ` (the board's pieces, masked by
/// `occ` so removed pieces do not attack).
pub fn attackers(board: &Board, target: u32, color: Color, occ: u64) -> u64 {
    let them = board.by_color[color.index()] & occ;
    let r = |role: Role| board.by_role[role.index()] & them;
    let occ_bb = Bitboard(occ);
    let t = sq(target);
    let pawn_color = if color == Color::White {
        shakmaty::Color::Black
    } else {
        shakmaty::Color::White
    };
    (attacks::pawn_attacks(pawn_color, t).0 & r(Role::Pawn))
        | (attacks::knight_attacks(t).0 & r(Role::Knight))
        | (attacks::king_attacks(t).0 & r(Role::King))
        | (attacks::bishop_attacks(t, occ_bb).0 & (r(Role::Bishop) | r(Role::Queen)))
        | (attacks::rook_attacks(t, occ_bb).0 & (r(Role::Rook) | r(Role::Queen)))
}

/// Whether the side to move's king is attacked (false without a king).
pub fn in_check(board: &Board) -> bool {
    match board.king(board.turn) {
        Some(k) => attackers(board, u32::from(k), board.turn.other(), board.occupied()) != 0,
        None => false,
    }
}

/// Clears `board.ep_square` unless an en-passant capture is legal there (the pushed pawn is
/// behind it, both squares it crossed are empty, and a capturing pawn does not leave its own
/// king attacked).
pub fn normalize_ep(board: &mut Board) {
    let ep = board.ep_square;
    if ep == NO_SQUARE {
        return;
    }
    board.ep_square = NO_SQUARE;
    if ep >= 64 {
        return;
    }
    let us = board.turn;
    let them = us.other();
    let (ep_rank, pushed) = if us == Color::White {
        (5, ep.wrapping_sub(8))
    } else {
        (2, ep + 8)
    };
    if ep >> 3 != ep_rank {
        return;
    }
    let origin = if us == Color::White { ep + 8 } else { ep - 8 };
    let occ = board.occupied();
    if board.pieces(them, Role::Pawn) & (1u64 << pushed) == 0
        || occ & ((1u64 << ep) | (1u64 << origin)) != 0
    {
        return;
    }
    let pawn_color = if us == Color::White {
        shakmaty::Color::Black
    } else {
        shakmaty::Color::White
    };
    let mut candidates =
        attacks::pawn_attacks(pawn_color, sq(u32::from(ep))).0 & board.pieces(us, Role::Pawn);
    let Some(king) = board.king(us) else {
        return;
    };
    while candidates != 0 {
        let from = candidates.trailing_zeros();
        candidates &= candidates - 1;
        let after = (occ & !(1u64 << from) & !(1u64 << pushed)) | (1u64 << ep);
        if attackers(board, u32::from(king), them, after) == 0 {
            board.ep_square = ep;
            return;
        }
    }
}

/// The structural checks every binary reader applies (cheap, no move generation): colour and
/// role bitboards consistent, one king per side, at most 16 pieces per side, no pawn on the
/// first or last rank, castling rights only with king and rook at home. Castling rights of
/// rooks off the corners (Chess960) are left to the writers; legality (the side not to move in
/// check, impossible checks) to [`Sample::validate`].
pub fn check_structure(board: &Board) -> Result<(), InvalidSample> {
    let occ = board.occupied();
    if board.by_color[0] & board.by_color[1] != 0 {
        return Err("a square holds pieces of both colours".into());
    }
    let mut roles = 0u64;
    for r in board.by_role {
        if roles & r != 0 {
            return Err("a square holds two roles".into());
        }
        roles |= r;
    }
    if roles != occ {
        return Err("colour and role bitboards disagree".into());
    }
    for c in Color::ALL {
        if board.pieces(c, Role::King).count_ones() != 1 {
            return Err(format!(
                "{c:?} has {} kings",
                board.pieces(c, Role::King).count_ones()
            )
            .into());
        }
        if board.by_color[c.index()].count_ones() > 16 {
            return Err(format!("{c:?} has more than 16 pieces").into());
        }
    }
    if board.by_role[Role::Pawn.index()] & 0xff00_0000_0000_00ff != 0 {
        return Err("pawn on the first or last rank".into());
    }
    // Castling rights need the king on e1/e8 and the rook on its corner (standard chess).
    for (rook, color, home) in [
        (7u8, Color::White, 4u8),
        (0, Color::White, 4),
        (63, Color::Black, 60),
        (56, Color::Black, 60),
    ] {
        if board.castling & (1u64 << rook) != 0
            && (board.piece_at(rook) != Some((color, Role::Rook))
                || board.piece_at(home) != Some((color, Role::King)))
        {
            return Err("castling right without king and rook at home".into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(fen: &str) -> Sample {
        Sample::from_fen(fen)
    }

    #[test]
    fn fen_round_trip_and_ply() {
        let fen = "r3k2r/8/8/3pP3/8/8/8/R3K2R w KQkq d6 0 12";
        let s = sample(fen);
        assert_eq!(s.fen(), fen);
        assert_eq!(s.ply, 22);
        assert_eq!(s.board.ep_square, 43);
        let s = sample("4k3/8/8/8/8/8/8/4K3 b - - 7 40");
        assert_eq!(s.ply, 79);
        assert_eq!(s.rule50, 7);
        assert_eq!(s.fen(), "4k3/8/8/8/8/8/8/4K3 b - - 7 40");
    }

    #[test]
    fn ep_square_kept_only_when_capture_is_legal() {
        // No white pawn next to d5: shakmaty drops the square, and so does normalize_ep.
        let s = sample("4k3/8/8/3p4/8/8/8/4K3 w - d6 0 1");
        assert_eq!(s.board.ep_square, NO_SQUARE);
        let mut b = s.board;
        b.ep_square = 43;
        normalize_ep(&mut b);
        assert_eq!(b.ep_square, NO_SQUARE);
        // The capture would expose the king on the fifth rank: not legal.
        let s = sample("8/8/8/K2pP2r/8/8/8/4k3 w - d6 0 1");
        assert_eq!(s.board.ep_square, NO_SQUARE);
        let mut b = s.board;
        b.ep_square = 43;
        normalize_ep(&mut b);
        assert_eq!(b.ep_square, NO_SQUARE);
        // Legal capture: kept.
        let s = sample("8/8/8/K2pP3/8/8/8/4k3 w - d6 0 1");
        let mut b = s.board;
        assert_eq!(b.ep_square, 43);
        normalize_ep(&mut b);
        assert_eq!(b.ep_square, 43);
    }

    #[test]
    fn check_capture_and_uci() {
        let s = sample("4k3/8/8/8/8/8/4r3/4K3 w - - 0 1");
        assert!(s.in_check());
        let mv = move_on_board(&s.board, 4, 12, MoveKind::Normal, None).unwrap();
        assert_eq!(mv.captured, Role::Rook as u8);
        assert_eq!(uci(&mv), "e1e2");
        let s = sample("r3k3/8/8/8/8/8/8/4K2R w K - 0 1");
        assert!(!s.in_check());
        let castle = move_on_board(&s.board, 4, 7, MoveKind::Castle, None).unwrap();
        assert_eq!(uci(&castle), "e1g1");
        assert!(
            Sample {
                best_move: Some(castle),
                ..s
            }
            .validate()
            .is_ok()
        );
        assert!(move_on_board(&s.board, 4, 7, MoveKind::Normal, None).is_err());
        assert!(move_on_board(&s.board, 60, 52, MoveKind::Normal, None).is_err());
        let promo = sample("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1");
        let mv = move_on_board(&promo.board, 49, 57, MoveKind::Normal, Some(Role::Queen)).unwrap();
        assert_eq!(uci(&mv), "b7b8q");
    }

    #[test]
    fn structure_errors() {
        let mut b = sample("4k3/8/8/8/8/8/8/4K3 w - - 0 1").board;
        assert!(check_structure(&b).is_ok());
        b.put(0, Color::White, Role::Pawn);
        assert!(check_structure(&b).unwrap_err().0.contains("pawn"));
        let b = sample("4k3/8/8/8/8/8/8/4K3 w - - 0 1").board;
        let mut no_king = b;
        no_king.remove(4, Color::White, Role::King);
        assert!(check_structure(&no_king).unwrap_err().0.contains("kings"));
        // Black (not to move) in check from the rook on e5: structurally fine, not legal.
        let b = sample("4k3/8/8/8/8/8/8/R3K3 w - - 0 1").board;
        let mut b2 = b;
        b2.remove(0, Color::White, Role::Rook);
        b2.put(36, Color::White, Role::Rook);
        assert!(check_structure(&b2).is_ok());
        let s = Sample {
            board: b2,
            rule50: 0,
            ply: 0,
            score: 0,
            best_move: None,
            result: None,
        };
        assert!(s.validate().is_err());
    }
}
