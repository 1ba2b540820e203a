//! Static exchange evaluation: whether the sequence of captures on a move's destination square,
//! each side always recapturing with its least valuable piece and free to stop, gains at least a
//! threshold. Pins are ignored; x-ray attackers behind sliders are found as pieces leave.

use shakmaty::attacks::{bishop_attacks, king_attacks, knight_attacks, pawn_attacks, rook_attacks};
use shakmaty::{Bitboard, Chess, Color, Move, Position, Role, Square};

/// Exchange values by role index (pawn .. king); the king's is never traded.
pub const SEE_VALUE: [i32; 6] = [100, 320, 330, 500, 950, 0];

/// The exchange value of a role.
#[inline(always)]
pub fn value(role: Role) -> i32 {
    SEE_VALUE[role as usize - 1]
}

/// Pieces of both colours attacking `sq` given the occupancy `occupied`.
#[inline]
fn attackers_to(pos: &Chess, sq: Square, occupied: Bitboard) -> Bitboard {
    let b = pos.board();
    (pawn_attacks(Color::White, sq) & b.pawns() & b.black())
        | (pawn_attacks(Color::Black, sq) & b.pawns() & b.white())
        | (knight_attacks(sq) & b.knights())
        | (king_attacks(sq) & b.kings())
        | (bishop_attacks(sq, occupied) & b.bishops_and_queens())
        | (rook_attacks(sq, occupied) & b.rooks_and_queens())
}

/// Whether the exchange started by `m` (legal in `pos`) wins at least `threshold`.
pub fn see_ge(pos: &Chess, m: &Move, threshold: i32) -> bool {
    let (to, captured_value, mut occupied) = match *m {
        Move::Normal {
            from, to, capture, ..
        } => (
            to,
            capture.map_or(0, value),
            pos.board().occupied() ^ Bitboard::from(from),
        ),
        Move::EnPassant { from, to } => {
            let victim = Square::from_coords(to.file(), from.rank());
            (
                to,
                value(Role::Pawn),
                pos.board().occupied() ^ Bitboard::from(from) ^ Bitboard::from(victim),
            )
        }
        Move::Castle { .. } | Move::Put { .. } => return threshold <= 0,
    };
    let promotion_gain = m.promotion().map_or(0, |p| value(p) - value(Role::Pawn));
    let mut swap = captured_value + promotion_gain - threshold;
    if swap < 0 {
        return false;
    }
    let moved_value = value(m.promotion().unwrap_or(m.role()));
    swap = moved_value - swap;
    if swap <= 0 {
        return true;
    }
    let board = pos.board();
    occupied |= Bitboard::from(to);
    let mut stm = pos.turn();
    let mut attackers = attackers_to(pos, to, occupied);
    let bishops_queens = board.bishops_and_queens();
    let rooks_queens = board.rooks_and_queens();
    let mut res = true;
    loop {
        stm = !stm;
        attackers &= occupied;
        let ours = attackers & board.by_color(stm);
        if ours.is_empty() {
            break;
        }
        res = !res;
        let mut least = None;
        for role in [
            Role::Pawn,
            Role::Knight,
            Role::Bishop,
            Role::Rook,
            Role::Queen,
            Role::King,
        ] {
            let bb = ours & board.by_role(role);
            if let Some(sq) = bb.first() {
                least = Some((role, sq));
                break;
            }
        }
        let (role, sq) = least.expect("a non-empty attacker set has a least valuable piece");
        if role == Role::King {
            // The king may only take last: if the opponent still attacks, the capture is illegal.
            if (attackers & !board.by_color(stm)).any() {
                res = !res;
            }
            break;
        }
        swap = value(role) - swap;
        if swap < res as i32 {
            break;
        }
        occupied ^= Bitboard::from(sq);
        match role {
            Role::Pawn | Role::Bishop => attackers |= bishop_attacks(to, occupied) & bishops_queens,
            Role::Rook => attackers |= rook_attacks(to, occupied) & rooks_queens,
            Role::Queen => {
                attackers |= (bishop_attacks(to, occupied) & bishops_queens)
                    | (rook_attacks(to, occupied) & rooks_queens)
            }
            _ => {}
        }
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::CastlingMode;
    use shakmaty::fen::Fen;
    use shakmaty::uci::UciMove;

    fn check(fen: &str, uci: &str, threshold: i32) -> bool {
        let pos: Chess = fen
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        let m = uci.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
        see_ge(&pos, &m, threshold)
    }

    #[test]
    fn undefended_piece_wins_its_value() {
        let fen = "4k3/8/8/3p4/8/8/8/3RK3 w - - 0 1";
        assert!(check(fen, "d1d5", 100));
        assert!(!check(fen, "d1d5", 101));
    }

    #[test]
    fn defended_pawn_taken_by_a_rook_loses() {
        let fen = "4k3/8/4p3/3p4/8/8/8/3RK3 w - - 0 1";
        assert!(!check(fen, "d1d5", 0));
        assert!(check(fen, "d1d5", -400));
        assert!(!check(fen, "d1d5", -399));
    }

    #[test]
    fn x_ray_recaptures_count() {
        // Rooks doubled on the d-file against one defender: RxP, PxR, RxP = +100 - 500 + 100.
        let fen = "4k3/8/4p3/3p4/8/8/3R4/3RK3 w - - 0 1";
        assert!(!check(fen, "d2d5", 0));
        // Queen behind a bishop on the diagonal: BxN, NxB? no: knight defended by a pawn only.
        let fen = "4k3/8/2p5/3n4/8/5B2/6Q1/4K3 w - - 0 1";
        assert!(check(fen, "f3d5", 0)); // BxN PxB QxP: +320 - 330 + 100 = 90
        assert!(!check(fen, "f3d5", 91));
    }

    #[test]
    fn quiet_moves_to_attacked_squares() {
        // Knight to a square attacked by a pawn loses the knight.
        let fen = "4k3/8/8/2p5/8/8/2N5/4K3 w - - 0 1";
        assert!(!check(fen, "c2b4", -319));
        assert!(check(fen, "c2b4", -320));
        assert!(check(fen, "c2e3", 0));
    }

    #[test]
    fn promotions_and_en_passant() {
        assert!(check("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b7b8q", 800));
        assert!(check("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "e5d6", 100));
    }

    #[test]
    fn king_recaptures_only_undefended_squares() {
        // RxP next to the black king: with the queen behind the rook the king cannot take back.
        let with_queen = "4k3/3p4/8/8/8/8/3R4/3QK3 w - - 0 1";
        assert!(check(with_queen, "d2d7", 100));
        let alone = "4k3/3p4/8/8/8/8/3R4/4K3 w - - 0 1";
        assert!(!check(alone, "d2d7", 0));
        assert!(check(alone, "d2d7", -400));
        // QxP defended by a rook, the white king recaptures the rook: 100 - 950 + 500.
        let fen = "3rk3/8/8/8/8/8/3p4/3QK3 w - - 0 1";
        assert!(!check(fen, "d1d2", 0));
        assert!(check(fen, "d1d2", -350));
        assert!(!check(fen, "d1d2", -349));
    }
}
