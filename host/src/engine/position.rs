//! The position during a search: shakmaty's [`Chess`] with copy-make (a stack of positions, so
//! undoing a move is a pop), an incrementally updated Zobrist hash, and the hashes of the game's
//! earlier positions for repetition detection.

use shakmaty::{
    Bitboard, CastlingMode, Chess, EnPassantMode, FromSetup, Move, Position, PositionError,
};

use super::zobrist;

/// A searchable position with its history.
#[derive(Clone, Debug)]
pub struct PositionStack {
    /// Positions from the search root (index 0) to the current one.
    states: Vec<Chess>,
    /// Hashes of every position of the game up to the current one, oldest first: the game's
    /// positions before the root, then one per entry of `states`.
    hashes: Vec<u64>,
    /// Index in `hashes` of the root.
    root: usize,
}

impl PositionStack {
    /// A stack whose root is `root`; `history` holds the hashes of the game's positions before
    /// it (oldest first), used to detect repetitions of positions played before the root.
    pub fn new(root: Chess, history: &[u64]) -> Self {
        let mut hashes = Vec::with_capacity(history.len() + 512);
        hashes.extend_from_slice(history);
        hashes.push(zobrist::hash(&root));
        let mut states = Vec::with_capacity(512);
        states.push(root);
        PositionStack {
            states,
            hashes,
            root: history.len(),
        }
    }

    /// The current position.
    #[inline(always)]
    pub fn current(&self) -> &Chess {
        self.states.last().expect("the stack always holds the root")
    }

    /// The position before the current one (the current one at the root).
    #[inline(always)]
    pub fn parent(&self) -> &Chess {
        let n = self.states.len();
        &self.states[n.saturating_sub(2)]
    }

    /// The root position.
    pub fn root(&self) -> &Chess {
        &self.states[0]
    }

    /// The current position's hash.
    #[inline(always)]
    pub fn hash(&self) -> u64 {
        *self.hashes.last().expect("the stack always holds the root")
    }

    /// Plies from the root to the current position.
    #[inline(always)]
    pub fn ply(&self) -> usize {
        self.states.len() - 1
    }

    /// Plays `m`, which must be legal in the current position.
    #[inline]
    pub fn make(&mut self, m: &Move) {
        let key = zobrist::key_after(self.current(), self.hash(), m);
        self.make_keyed(m, key);
    }

    /// [`make`](Self::make) given `key = zobrist::key_after(current, hash, m)`, already computed
    /// by the caller. Returns the new position's hash.
    #[inline]
    pub fn make_keyed(&mut self, m: &Move, key: u64) -> u64 {
        debug_assert_eq!(key, zobrist::key_after(self.current(), self.hash(), m));
        // The copy goes straight into the stack and the move is played there.
        self.states.push(self.current().clone());
        let n = self.states.len();
        let (before, after) = self.states.split_at_mut(n - 1);
        let (before, after) = (&before[n - 2], &mut after[0]);
        after.play_unchecked(*m);
        let h = zobrist::complete_key(key, before, after);
        self.hashes.push(h);
        h
    }

    /// Passes the turn (a null move). Returns `false`, changing nothing, when the result would
    /// not be a valid position (the side to move is in check).
    pub fn make_null(&mut self) -> bool {
        let before = self.current();
        let Some(after) = null_move(before) else {
            return false;
        };
        let h = zobrist::update_null(before, self.hash(), &after);
        self.states.push(after);
        self.hashes.push(h);
        true
    }

    /// Undoes the last [`make`](Self::make) or [`make_null`](Self::make_null).
    #[inline]
    pub fn unmake(&mut self) {
        debug_assert!(self.states.len() > 1, "unmake at the root");
        self.states.pop();
        self.hashes.pop();
    }

    /// Whether the current position is a draw by the fifty-move rule, by repetition or by
    /// insufficient material. A position that repeats one reached after the root is a draw
    /// (the side that could avoid it would have); one that only repeats positions before the
    /// root needs two earlier occurrences (a threefold repetition). Checkmate takes precedence
    /// over the fifty-move rule, which the caller must check when the side to move is in check.
    pub fn is_draw(&self) -> bool {
        let pos = self.current();
        let halfmoves = pos.halfmoves() as usize;
        if halfmoves >= 100 && (!pos.is_check() || !pos.legal_moves().is_empty()) {
            return true;
        }
        self.is_repetition(halfmoves) || insufficient_material(pos)
    }

    fn is_repetition(&self, halfmoves: usize) -> bool {
        let last = self.hashes.len() - 1;
        let h = self.hashes[last];
        let window = halfmoves.min(last);
        let mut seen_before_root = false;
        let mut back = 4;
        while back <= window {
            let i = last - back;
            if self.hashes[i] == h {
                if i >= self.root || seen_before_root {
                    return true;
                }
                seen_before_root = true;
            }
            back += 2;
        }
        false
    }
}

/// The position after passing the turn, or `None` if the side to move is in check (a null move
/// would leave its king capturable). The en-passant square is dropped, the clocks kept.
pub fn null_move(pos: &Chess) -> Option<Chess> {
    if pos.is_check() {
        return None;
    }
    let mut setup = pos.to_setup(EnPassantMode::Legal);
    setup.ep_square = None;
    setup.swap_turn();
    accept(Chess::from_setup(setup, CastlingMode::Standard)).ok()
}

/// A position shakmaty validated, accepting what the engine can play anyway: castling rights
/// without their rook or king (dropped), an impossible en-passant square (dropped) and more
/// material than a game can have. Anything else (no king, the side not to move in check, pawns
/// on the back rank, ...) is refused with shakmaty's reason (boxed: it carries the position).
pub fn accept(
    result: Result<Chess, PositionError<Chess>>,
) -> Result<Chess, Box<PositionError<Chess>>> {
    let e = match result {
        Ok(pos) => return Ok(pos),
        Err(e) => e,
    };
    let e = match e.ignore_invalid_castling_rights() {
        Ok(pos) => return Ok(pos),
        Err(e) => e,
    };
    let e = match e.ignore_invalid_ep_square() {
        Ok(pos) => return Ok(pos),
        Err(e) => e,
    };
    e.ignore_too_much_material().map_err(Box::new)
}

/// Whether neither side can ever checkmate: bare kings, or a lone minor piece against a bare king.
#[inline]
pub fn insufficient_material(pos: &Chess) -> bool {
    let b = pos.board();
    let occupied = b.occupied();
    if occupied.count() > 3 {
        return false;
    }
    let heavy: Bitboard = b.pawns() | b.rooks() | b.queens();
    heavy.is_empty()
}

/// Whether the side to move has a piece other than pawns and the king (null-move pruning is
/// unsafe in pawn endings because of zugzwang).
#[inline]
pub fn has_non_pawn_material(pos: &Chess) -> bool {
    let b = pos.board();
    (pos.us() & !(b.pawns() | b.kings())).any()
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::uci::UciMove;

    fn pos(fen: &str) -> Chess {
        chess_text::fen::parse_position(fen).unwrap()
    }

    fn play(stack: &mut PositionStack, uci: &str) {
        let m = uci
            .parse::<UciMove>()
            .unwrap()
            .to_move(stack.current())
            .unwrap();
        stack.make(&m);
    }

    #[test]
    fn repetition_after_the_root_is_a_draw() {
        let mut s = PositionStack::new(Chess::default(), &[]);
        for m in ["g1f3", "g8f6", "f3g1"] {
            play(&mut s, m);
            assert!(!s.is_draw());
        }
        play(&mut s, "f6g8");
        assert!(s.is_draw(), "the start position repeated");
        s.unmake();
        assert!(!s.is_draw());
    }

    #[test]
    fn repetition_before_the_root_needs_two_occurrences() {
        // Game: start, Nf3, Nf6, Ng1, Ng8 (start again): root is that position.
        let mut game = PositionStack::new(Chess::default(), &[]);
        for m in ["g1f3", "g8f6", "f3g1", "f6g8"] {
            play(&mut game, m);
        }
        let history: Vec<u64> = game.hashes[..game.hashes.len() - 1].to_vec();
        let mut s = PositionStack::new(game.current().clone(), &history);
        // One more Nf3 repeats the position after the game's first move once: not yet a draw.
        play(&mut s, "g1f3");
        assert!(!s.is_draw());
        play(&mut s, "g8f6");
        assert!(!s.is_draw());
        play(&mut s, "f3g1");
        play(&mut s, "f6g8");
        assert!(s.is_draw(), "the root position repeated inside the search");
    }

    #[test]
    fn fifty_move_rule_and_its_checkmate_exception() {
        let s = PositionStack::new(pos("8/8/8/8/8/5k2/8/R5K1 w - - 100 80"), &[]);
        assert!(s.is_draw());
        let s = PositionStack::new(pos("8/8/8/8/8/5k2/8/R5K1 w - - 99 80"), &[]);
        assert!(!s.is_draw());
        // Mated on the hundredth half-move: the mate stands.
        let s = PositionStack::new(pos("7k/6Q1/6K1/8/8/8/8/8 b - - 100 80"), &[]);
        assert!(!s.is_draw());
    }

    #[test]
    fn insufficient_material_cases() {
        assert!(insufficient_material(&pos("8/8/4k3/8/8/3K4/8/8 w - - 0 1")));
        assert!(insufficient_material(&pos(
            "8/8/4k3/8/8/3KN3/8/8 w - - 0 1"
        )));
        assert!(insufficient_material(&pos(
            "8/8/4kb2/8/8/3K4/8/8 w - - 0 1"
        )));
        assert!(!insufficient_material(&pos(
            "8/8/4k3/8/8/3KP3/8/8 w - - 0 1"
        )));
        assert!(!insufficient_material(&pos(
            "8/8/4kn2/8/8/3KN3/8/8 w - - 0 1"
        )));
    }

    #[test]
    fn null_move_passes_the_turn_and_restores_on_unmake() {
        let mut s = PositionStack::new(
            pos("rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3"),
            &[],
        );
        let h = s.hash();
        assert!(s.make_null());
        assert_eq!(s.current().turn(), shakmaty::Color::White);
        assert_eq!(s.hash(), zobrist::hash(s.current()));
        s.unmake();
        assert_eq!(s.hash(), h);
        let mut in_check = PositionStack::new(pos("4k3/8/8/8/8/8/8/4R1K1 b - - 0 1"), &[]);
        assert!(!in_check.make_null());
        assert_eq!(in_check.ply(), 0);
    }
}
