//! Zobrist hashing of positions, computed from scratch ([`hash`]) or updated incrementally by
//! a move ([`key_after`], known before the move is played, then [`complete_key`]).
//!
//! The keys are generated at compile time by SplitMix64 from a fixed seed, so hashes are the same
//! in every build and run. The hash covers the pieces, the side to move, the castling rights
//! (one key per square of a rook that may castle) and the en-passant file, the latter only when a
//! pawn of the side to move stands ready to capture en passant (so positions that differ only by
//! an unusable en-passant square hash alike, as repetition detection requires).

use shakmaty::attacks::pawn_attacks;
use shakmaty::{Bitboard, Chess, Color, Move, Position, Role, Square};

const fn splitmix64(state: u64) -> (u64, u64) {
    let state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (state, z ^ (z >> 31))
}

/// All keys: 2 × 6 × 64 piece keys, 64 castling keys, 8 en-passant keys and the side key.
struct ZobristKeys {
    pieces: [[[u64; 64]; 6]; 2],
    castling: [u64; 64],
    en_passant: [u64; 8],
    black_to_move: u64,
}

const fn make_keys() -> ZobristKeys {
    let mut keys = ZobristKeys {
        pieces: [[[0; 64]; 6]; 2],
        castling: [0; 64],
        en_passant: [0; 8],
        black_to_move: 0,
    };
    let mut state = 0x6e6e_7565_2d66_6561; // "nnue-fea"
    let mut c = 0;
    while c < 2 {
        let mut r = 0;
        while r < 6 {
            let mut sq = 0;
            while sq < 64 {
                let (s, k) = splitmix64(state);
                state = s;
                keys.pieces[c][r][sq] = k;
                sq += 1;
            }
            r += 1;
        }
        c += 1;
    }
    let mut sq = 0;
    while sq < 64 {
        let (s, k) = splitmix64(state);
        state = s;
        keys.castling[sq] = k;
        sq += 1;
    }
    let mut f = 0;
    while f < 8 {
        let (s, k) = splitmix64(state);
        state = s;
        keys.en_passant[f] = k;
        f += 1;
    }
    let (_, k) = splitmix64(state);
    keys.black_to_move = k;
    keys
}

static KEYS: ZobristKeys = make_keys();

#[inline(always)]
fn piece_key(color: Color, role: Role, sq: Square) -> u64 {
    KEYS.pieces[color as usize][role as usize - 1][sq as usize]
}

#[inline(always)]
fn castling_keys(rights: Bitboard) -> u64 {
    let mut h = 0;
    for sq in rights {
        h ^= KEYS.castling[sq as usize];
    }
    h
}

/// The en-passant key of `pos`: non-zero only when a pawn of the side to move attacks the
/// en-passant square (pins are not considered).
#[inline(always)]
fn en_passant_key(pos: &Chess) -> u64 {
    match pos.maybe_ep_square() {
        Some(ep) if (pawn_attacks(!pos.turn(), ep) & pos.our(Role::Pawn)).any() => {
            KEYS.en_passant[ep.file() as usize]
        }
        _ => 0,
    }
}

/// The hash of `pos`, computed from scratch.
pub fn hash(pos: &Chess) -> u64 {
    let board = pos.board();
    let mut h = 0;
    for sq in board.occupied() {
        if let Some(piece) = board.piece_at(sq) {
            h ^= piece_key(piece.color, piece.role, sq);
        }
    }
    if pos.turn() == Color::Black {
        h ^= KEYS.black_to_move;
    }
    h ^ castling_keys(pos.castles().castling_rights()) ^ en_passant_key(pos)
}

/// The hash of `after`, the position reached from `before` by the move whose [`key_after`] is
/// `key`: adds the change of castling rights and the new en passant square. Equal to
/// `hash(after)`, at a fraction of the cost.
#[inline(always)]
pub fn complete_key(key: u64, before: &Chess, after: &Chess) -> u64 {
    key ^ castling_keys(before.castles().castling_rights() ^ after.castles().castling_rights())
        ^ en_passant_key(after)
}

/// The hash after `m` from `before` (hash `before_hash`) as far as it can be known without
/// playing the move: pieces, side to move and the en passant square that disappears, but not a
/// change of castling rights or a new en passant square (those need the position after). Exact
/// for most moves; the search uses it to prefetch the child's table entry early.
#[inline(always)]
pub fn key_after(before: &Chess, before_hash: u64, m: &Move) -> u64 {
    let us = before.turn();
    let mut h = before_hash ^ KEYS.black_to_move;
    match *m {
        Move::Normal {
            role,
            from,
            capture,
            to,
            promotion,
        } => {
            h ^= piece_key(us, role, from) ^ piece_key(us, promotion.unwrap_or(role), to);
            if let Some(captured) = capture {
                h ^= piece_key(!us, captured, to);
            }
        }
        Move::EnPassant { from, to } => {
            let captured = Square::from_coords(to.file(), from.rank());
            h ^= piece_key(us, Role::Pawn, from)
                ^ piece_key(us, Role::Pawn, to)
                ^ piece_key(!us, Role::Pawn, captured);
        }
        Move::Castle { king, rook } => {
            let (king_to, rook_to) = castle_destinations(king, rook);
            h ^= piece_key(us, Role::King, king)
                ^ piece_key(us, Role::King, king_to)
                ^ piece_key(us, Role::Rook, rook)
                ^ piece_key(us, Role::Rook, rook_to);
        }
        Move::Put { role, to } => h ^= piece_key(us, role, to),
    }
    h ^ en_passant_key(before)
}

/// The hash after a null move from `before` (hash `before_hash`) to `after`.
#[inline]
pub fn update_null(before: &Chess, before_hash: u64, after: &Chess) -> u64 {
    before_hash ^ KEYS.black_to_move ^ en_passant_key(before) ^ en_passant_key(after)
}

/// The king's and the rook's destination squares of castling with the king on `king` and the
/// rook on `rook` (standard chess and Chess960 alike).
#[inline]
pub fn castle_destinations(king: Square, rook: Square) -> (Square, Square) {
    let rank = king.rank();
    if rook > king {
        (
            Square::from_coords(shakmaty::File::G, rank),
            Square::from_coords(shakmaty::File::F, rank),
        )
    } else {
        (
            Square::from_coords(shakmaty::File::C, rank),
            Square::from_coords(shakmaty::File::D, rank),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::EnPassantMode;
    use shakmaty::fen::Fen;

    fn pos(fen: &str) -> Chess {
        chess_text::fen::parse_position(fen).unwrap()
    }

    #[test]
    fn incremental_hash_matches_scratch_hash_along_pseudo_random_games() {
        let starts = [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
        ];
        let mut seed = 12345u64;
        for start in starts {
            for _game in 0..20 {
                let mut p = pos(start);
                let mut h = hash(&p);
                for _ply in 0..120 {
                    let moves = p.legal_moves();
                    if moves.is_empty() {
                        break;
                    }
                    let (s, r) = splitmix64(seed);
                    seed = s;
                    let m = moves[(r % moves.len() as u64) as usize];
                    let mut next = p.clone();
                    next.play_unchecked(m);
                    let before = h;
                    h = complete_key(key_after(&p, h, &m), &p, &next);
                    assert_eq!(
                        h,
                        hash(&next),
                        "after {m} in {}",
                        Fen::from_position(&p, EnPassantMode::Legal)
                    );
                    // The key known before the move is exact unless the move changes castling
                    // rights or leaves a usable en passant square.
                    if p.castles().castling_rights() == next.castles().castling_rights()
                        && en_passant_key(&next) == 0
                    {
                        assert_eq!(key_after(&p, before, &m), h, "key_after of {m}");
                    }
                    p = next;
                }
            }
        }
    }

    #[test]
    fn unusable_en_passant_squares_do_not_change_the_hash() {
        // After 1. e4 no black pawn can take en passant: same hash as without the square.
        let with_ep = pos("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1");
        let without = pos("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
        assert_eq!(hash(&with_ep), hash(&without));
        // A usable one does.
        let usable = pos("rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1");
        let unusable = pos("rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
        assert_ne!(hash(&usable), hash(&unusable));
    }

    #[test]
    fn side_to_move_and_castling_rights_change_the_hash() {
        let a = pos("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
        let b = pos("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1");
        let c = pos("r3k2r/8/8/8/8/8/8/R3K2R w Kkq - 0 1");
        assert_ne!(hash(&a), hash(&b));
        assert_ne!(hash(&a), hash(&c));
    }
}
