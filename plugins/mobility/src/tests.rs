use super::*;
use plugin_api::conformance::START_FENS;
use plugin_api::testing::active_sorted;
use plugin_api::{Role, board_from_position, move_from_shakmaty};
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rules::{kept_squares, type_of};
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Position};

plugin_api::conformance_test!(Mb, Mc);

fn board(fen: &str) -> Board {
    let pos: Chess = fen
        .parse::<Fen>()
        .unwrap()
        .into_position(CastlingMode::Standard)
        .unwrap();
    board_from_position(&pos)
}

/// A bitboard from square names ("a3", "c3", ...).
fn bb(names: &[&str]) -> u64 {
    names
        .iter()
        .map(|n| {
            let b = n.as_bytes();
            1u64 << ((b[1] - b'1') * 8 + (b[0] - b'a'))
        })
        .fold(0, |acc, b| acc | b)
}

fn sq(name: &str) -> u8 {
    bb(&[name]).trailing_zeros() as u8
}

// ---------------------------------------------------------------------------------------------
// A literal implementation of the rules: move the piece, remove what stood there, look for an
// enemy piece attacking the king. Slow and obviously faithful; the fast rules must agree.

fn attack_set(p: &Placement, color: Color, role: Role, s: u32) -> u64 {
    let s = shakmaty::Square::new(s);
    let occ = shakmaty::Bitboard(p.occupied());
    let c = if color == Color::White {
        shakmaty::Color::White
    } else {
        shakmaty::Color::Black
    };
    use shakmaty::attacks as a;
    match role {
        Role::Pawn => a::pawn_attacks(c, s).0,
        Role::Knight => a::knight_attacks(s).0,
        Role::Bishop => a::bishop_attacks(s, occ).0,
        Role::Rook => a::rook_attacks(s, occ).0,
        Role::Queen => a::queen_attacks(s, occ).0,
        Role::King => a::king_attacks(s).0,
    }
}

fn pieces_of(p: &Placement) -> Vec<(u32, Color, Role)> {
    let mut v = Vec::new();
    for color in Color::ALL {
        for role in Role::ALL {
            for s in squares(p.pieces(color, role)) {
                v.push((s, color, role));
            }
        }
    }
    v
}

fn naive_unions(p: &Placement) -> [u64; TYPES] {
    let mut u = [0; TYPES];
    for (s, color, role) in pieces_of(p) {
        let own = p.by_color[color.index()];
        let enemy = p.by_color[color.other().index()];
        let cand = if role == Role::Pawn {
            let push = if color == Color::White {
                (1u64 << s) << 8
            } else {
                (1u64 << s) >> 8
            };
            (attack_set(p, color, role, s) & enemy) | (push & !p.occupied())
        } else {
            attack_set(p, color, role, s) & !own
        };
        for t in squares(cand) {
            let mut n = *p;
            let (sb, tb) = (1u64 << s, 1u64 << t);
            for x in n.by_color.iter_mut().chain(n.by_role.iter_mut()) {
                *x &= !(sb | tb);
            }
            n.by_color[color.index()] |= tb;
            n.by_role[role.index()] |= tb;
            let kings = n.pieces(color, Role::King);
            if kings == 0 {
                continue;
            }
            let k = kings.trailing_zeros();
            let attacked = pieces_of(&n)
                .into_iter()
                .any(|(z, c, r)| c != color && attack_set(&n, c, r, z) & (1u64 << k) != 0);
            if !attacked {
                u[type_of(color, role)] |= tb;
            }
        }
    }
    u
}

/// Positions of random games from the conformance kit's start positions.
fn random_game_boards(seed: u64, plies: usize) -> Vec<(Board, Option<Move>, Board)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    let mut start = 0;
    while out.len() < plies {
        let fen: Fen = START_FENS[start % START_FENS.len()].parse().unwrap();
        start += 1;
        let mut pos: Chess = fen.into_position(CastlingMode::Standard).unwrap();
        for _ in 0..120 {
            let moves = pos.legal_moves();
            // Prefer captures and checks half of the time: they exercise pins and checks.
            let forcing: Vec<_> = moves
                .iter()
                .filter(|m| m.is_capture() || pos.clone().play(**m).is_ok_and(|p| p.is_check()))
                .collect();
            let m = if !forcing.is_empty() && rng.random_bool(0.5) {
                **forcing.choose(&mut rng).unwrap()
            } else {
                match moves.choose(&mut rng) {
                    Some(m) => *m,
                    None => break,
                }
            };
            let before = board_from_position(&pos);
            pos = pos.play(m).unwrap();
            out.push((before, move_from_shakmaty(&m), board_from_position(&pos)));
            if out.len() >= plies {
                break;
            }
        }
    }
    out
}

/// Random placements, legal or not: both kings in check, double checks, missing kings, pieces in
/// every alignment with the kings.
fn random_placements(seed: u64, n: usize) -> Vec<Placement> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let mut p = Placement {
                by_color: [0; 2],
                by_role: [0; 6],
            };
            let pieces = rng.random_range(2..26);
            for i in 0..pieces {
                let color = if rng.random_bool(0.5) {
                    Color::White
                } else {
                    Color::Black
                };
                let role = match i {
                    0 if rng.random_bool(0.95) => Role::King,
                    1 if rng.random_bool(0.95) => Role::King,
                    _ => Role::ALL[rng.random_range(0..5)],
                };
                let color = match i {
                    0 => Color::White,
                    1 => Color::Black,
                    _ => color,
                };
                let s: u32 = if role == Role::Pawn {
                    rng.random_range(8..56)
                } else {
                    rng.random_range(0..64)
                };
                if p.occupied() & (1u64 << s) == 0 {
                    p.by_color[color.index()] |= 1u64 << s;
                    p.by_role[role.index()] |= 1u64 << s;
                }
            }
            p
        })
        .collect()
}

#[test]
fn fast_rules_match_literal_rules_on_random_placements() {
    for p in random_placements(7, 4000) {
        assert_eq!(unions(&p), naive_unions(&p), "placement {p:?}");
    }
}

#[test]
fn fast_rules_match_literal_rules_on_game_positions() {
    for (b, _, _) in random_game_boards(11, 3000) {
        let p = Placement::of(&b);
        assert_eq!(unions(&p), naive_unions(&p), "board {b:?}");
    }
}

/// The FEN of a placement with `turn` to move and no castling rights.
fn placement_fen(p: &Placement, turn: char) -> String {
    let mut fen = String::new();
    for rank in (0..8).rev() {
        let mut empty = 0;
        for file in 0..8 {
            let s = rank * 8 + file;
            let role = Role::ALL
                .into_iter()
                .find(|r| p.by_role[r.index()] & (1u64 << s) != 0);
            match role {
                None => empty += 1,
                Some(r) => {
                    if empty > 0 {
                        fen.push(char::from(b'0' + empty));
                        empty = 0;
                    }
                    let c = b"pnbrqk"[r.index()] as char;
                    fen.push(if p.by_color[0] & (1u64 << s) != 0 {
                        c.to_ascii_uppercase()
                    } else {
                        c
                    });
                }
            }
        }
        if empty > 0 {
            fen.push(char::from(b'0' + empty));
        }
        if rank > 0 {
            fen.push('/');
        }
    }
    format!("{fen} {turn} - - 0 1")
}

/// Short random games from random legal placements: far more pins, checks and odd material
/// than games from the usual start positions.
fn random_placement_games(seed: u64, plies: usize) -> Vec<(Board, Option<Move>, Board)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    for p in random_placements(seed, 100_000) {
        if out.len() >= plies {
            break;
        }
        let pos = ['w', 'b'].into_iter().find_map(|turn| {
            placement_fen(&p, turn)
                .parse::<Fen>()
                .ok()?
                .into_position::<Chess>(CastlingMode::Standard)
                .ok()
        });
        let Some(mut pos) = pos else { continue };
        for _ in 0..8 {
            let moves = pos.legal_moves();
            let Some(&m) = moves.choose(&mut rng) else {
                break;
            };
            let before = board_from_position(&pos);
            pos = pos.play(m).unwrap();
            out.push((before, move_from_shakmaty(&m), board_from_position(&pos)));
        }
    }
    assert!(out.len() >= plies / 2, "too few legal random placements");
    out
}

#[test]
fn move_unions_agree_with_full_recomputation() {
    let mut dirty_types = 0u64;
    let mut plies = 0u64;
    let games = random_game_boards(0xface, 30_000);
    let odd = random_placement_games(0xbeef, 20_000);
    for (before, mv, after) in games.into_iter().chain(odd) {
        let mv = mv.unwrap();
        let (ub, ua) = (
            unions(&Placement::of(&before)),
            unions(&Placement::of(&after)),
        );
        let mu = move_unions(&before, &mv);
        for t in 0..TYPES {
            if mu.dirty & (1 << t) != 0 {
                assert_eq!(mu.before[t], ub[t], "type {t} before {mv:?} on {before:?}");
                assert_eq!(mu.after[t], ua[t], "type {t} after {mv:?} on {before:?}");
                assert_ne!(
                    ub[t], ua[t],
                    "type {t} reported changed by {mv:?} on {before:?}"
                );
            } else {
                assert_eq!(
                    ub[t], ua[t],
                    "clean type {t} changed by {mv:?} on {before:?}"
                );
            }
        }
        dirty_types += u64::from(mu.dirty.count_ones());
        plies += 1;
    }
    // Far fewer than all 12 types change per move.
    eprintln!(
        "average changed types per move: {:.2}",
        dirty_types as f64 / plies as f64
    );
}

// ---------------------------------------------------------------------------------------------
// Hand-checked positions.

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

#[test]
fn start_position() {
    let b = board(START);
    let u = unions(&Placement::of(&b));
    // Knights: a3, c3, f3, h3; pawns: single pushes only (rank 3); nothing else moves.
    assert_eq!(
        u[type_of(Color::White, Role::Knight)],
        bb(&["a3", "c3", "f3", "h3"])
    );
    assert_eq!(u[type_of(Color::White, Role::Pawn)], 0xff << 16);
    assert_eq!(
        u[type_of(Color::Black, Role::Knight)],
        bb(&["a6", "c6", "f6", "h6"])
    );
    assert_eq!(u[type_of(Color::Black, Role::Pawn)], 0xff << 40);
    for role in [Role::Bishop, Role::Rook, Role::Queen, Role::King] {
        assert_eq!(u[type_of(Color::White, role)], 0);
        assert_eq!(u[type_of(Color::Black, role)], 0);
    }
    assert_eq!(kept_squares(&b, sq("b1")), bb(&["a3", "c3"]));
    assert_eq!(kept_squares(&b, sq("e2")), bb(&["e3"]));

    // MB, White's perspective: (r*8+f)*12 + role*2 + c. Knight on a3 = 16*12 + 2 = 194.
    let mut expected: Vec<u32> = Vec::new();
    expected.extend((16..24).map(|s| s * 12)); // own pawns on rank 3
    expected.extend([16, 18, 21, 23].map(|s| s * 12 + 2)); // own knights
    expected.extend((40..48).map(|s| s * 12 + 1)); // enemy pawns on rank 6
    expected.extend([40, 42, 45, 47].map(|s| s * 12 + 3)); // enemy knights
    expected.sort_unstable();
    assert_eq!(active_sorted::<Mb>(&b, Color::White), expected);
    assert!(expected.contains(&194) && expected.contains(&218));
    // Symmetric position: Black sees the same.
    assert_eq!(active_sorted::<Mb>(&b, Color::Black), expected);

    // MC: pawns 8 -> 16, knights 4 -> 2*9 + 8 = 26, bishops 0 -> 50, rooks 84, queens 136,
    // kings 188; the opponent's are one higher.
    let mc = [16, 26, 50, 84, 136, 188];
    let mut expected: Vec<u32> = mc.iter().flat_map(|&i| [i, i + 1]).collect();
    expected.sort_unstable();
    assert_eq!(active_sorted::<Mc>(&b, Color::White), expected);
    assert_eq!(active_sorted::<Mc>(&b, Color::Black), expected);
}

#[test]
fn geometry_worked_examples() {
    // mb: White's knight reaching a3, seen by White (194): "own knight", a3.
    assert_eq!(Mb::place(194), Place::cell(2, [0, 2]));
    assert_eq!(Mb::sheet_name(2), "own knight");
    // Black's knight reaching a6 seen by Black is its own knight on a3: the same place.
    assert_eq!(
        Mb::place(mb_index(Color::Black, Color::Black, 1, sq("a6").into())),
        Place::cell(2, [0, 2])
    );
    // ... and seen by White an enemy knight on a6.
    assert_eq!(
        Mb::place(mb_index(Color::White, Color::Black, 1, sq("a6").into())),
        Place::cell(3, [0, 5])
    );
    // mc, start position: own knights 4 squares (26), enemy knights (27), enemy pawns 8 (17),
    // own kings 0 (188); an own queen at the cap (2*68 + 2*25 = 186), the last index (205).
    assert_eq!(Mc::place(26), Place::cell(2, [4, 0]));
    assert_eq!(Mc::place(27), Place::cell(3, [4, 0]));
    assert_eq!(Mc::place(17), Place::cell(1, [8, 0]));
    assert_eq!(Mc::place(188), Place::cell(10, [0, 0]));
    assert_eq!(Mc::place(186), Place::cell(8, [25, 0]));
    assert_eq!(Mc::place(205), Place::cell(11, [8, 0]));
    assert_eq!(Mc::sheet_name(11), "their king");
    assert_eq!(<Mc as FeatureBlock>::GEOMETRY.cells, [26, 1]);
}

#[test]
fn places_invert_the_indices() {
    for p in Color::ALL {
        for color in Color::ALL {
            for (role, &cap) in CAP.iter().enumerate() {
                let kind = role as u32 * 2 + u32::from(p != color);
                for s in 0..64u32 {
                    let rel = p.relative(s as u8);
                    assert_eq!(
                        mb_place(mb_index(p, color, role, s)),
                        Place::square(kind, rel)
                    );
                }
                for count in 0..=64 {
                    let shown = count.min(cap) as u8;
                    assert_eq!(
                        mc_place(mc_index(p, color, role, count)),
                        Place::cell(kind, [shown, 0])
                    );
                }
            }
        }
    }
}

#[test]
fn pinned_pieces_move_only_along_the_pin() {
    // White rook e2 pinned by the rook e7, and vice versa; the knight d2 is free.
    let b = board("4k3/4r3/8/8/8/8/3NR3/4K3 w - - 0 1");
    assert_eq!(
        kept_squares(&b, sq("e2")),
        bb(&["e3", "e4", "e5", "e6", "e7"])
    );
    assert_eq!(
        kept_squares(&b, sq("e7")),
        bb(&["e6", "e5", "e4", "e3", "e2"])
    );
    assert_eq!(
        kept_squares(&b, sq("d2")),
        bb(&["b1", "b3", "c4", "e4", "f3", "f1"])
    );
    // A pinned knight keeps nothing.
    let b = board("4k3/4r3/8/8/8/8/4N3/4K3 w - - 0 1");
    assert_eq!(kept_squares(&b, sq("e2")), 0);
    // A pawn pinned on a diagonal may only capture the pinner.
    let b = board("4k3/8/8/8/8/2b5/3P4/4K3 w - - 0 1");
    assert_eq!(kept_squares(&b, sq("d2")), bb(&["c3"]));
    // A pawn pinned on its file may push, but not capture off the file.
    let b = board("4k3/4r3/8/8/3n4/4P3/8/4K3 w - - 0 1");
    assert_eq!(kept_squares(&b, sq("e3")), bb(&["e4"]));
}

#[test]
fn king_in_check() {
    // The rook a1 checks the king e1 along the first rank.
    let b = board("4k3/8/8/8/8/2N5/3PPP2/r3K3 w - - 0 1");
    // The knight blocks on b1 or d1; the pawns cannot help.
    assert_eq!(kept_squares(&b, sq("c3")), bb(&["b1", "d1"]));
    assert_eq!(kept_squares(&b, sq("e2")), 0);
    // d1 is on the rook's ray, and so is f1 once the king has left e1.
    assert_eq!(kept_squares(&b, sq("e1")), 0);
    // The side to move is ignored: Black's rook may "capture" the king (a1..a8 and b1..e1).
    assert_eq!(kept_squares(&b, sq("a1")).count_ones(), 11);
    assert_eq!(
        kept_squares(&b, sq("e8")),
        bb(&["d8", "f8", "d7", "e7", "f7"])
    );
    // Double check (rook a1, knight d3): only the king moves; a capture of one checker is not
    // enough.
    let b = board("4k3/8/8/8/8/3n4/2Q5/r3K3 w - - 0 1");
    assert_eq!(kept_squares(&b, sq("c2")), 0);
    // The king: d1 and f1 are on the rook's ray, f2 is the knight's; d2 and e2 are free.
    assert_eq!(kept_squares(&b, sq("e1")), bb(&["d2", "e2"]));
}

#[test]
fn no_king_keeps_nothing() {
    let mut b = board("4k3/8/8/8/8/8/3Q4/4K3 w - - 0 1");
    b.remove(sq("e1"), Color::White, Role::King);
    let u = unions(&Placement::of(&b));
    assert_eq!(u[type_of(Color::White, Role::Queen)], 0);
    assert_ne!(u[type_of(Color::Black, Role::King)], 0);
}

#[test]
fn counts_are_capped() {
    // Nine white queens are impossible, but two queens on an open board exceed 25 together.
    let b = board("7k/8/8/3Q4/8/8/8/K5Q1 w - - 0 1");
    let u = unions(&Placement::of(&b));
    assert!(u[type_of(Color::White, Role::Queen)].count_ones() > 25);
    let mc = active_sorted::<Mc>(&b, Color::White);
    assert!(mc.contains(&(2 * 68 + 2 * 25)));
}

#[test]
fn delta_emits_exact_transitions() {
    // 1. e4 from the start: the e-pawn's push moves to e5, the bishop f1 and queen d1 get out,
    // the king gets e2.
    let b = board(START);
    let mv = Move {
        from: sq("e2"),
        to: sq("e4"),
        role: Role::Pawn,
        captured: plugin_api::NO_ROLE,
        promotion: plugin_api::NO_ROLE,
        kind: plugin_api::MoveKind::Normal,
    };
    let mut bufs = [[0u32; 768]; 4];
    let mut md = MoveDelta::over(&mut bufs);
    Mb::delta(&b, &mv, &mut md);
    let idx = |name: &str, role: Role| {
        mb_index(Color::White, Color::White, role as usize, sq(name).into())
    };
    let mut added = md.added[0].as_slice().to_vec();
    added.sort_unstable();
    let mut expected = vec![
        idx("e5", Role::Pawn),
        idx("e2", Role::Bishop),
        idx("d3", Role::Bishop),
        idx("c4", Role::Bishop),
        idx("b5", Role::Bishop),
        idx("a6", Role::Bishop),
        idx("e2", Role::Queen),
        idx("f3", Role::Queen),
        idx("g4", Role::Queen),
        idx("h5", Role::Queen),
        idx("e2", Role::King),
        idx("e2", Role::Knight),
    ];
    expected.sort_unstable();
    assert_eq!(added, expected);
    // e3 leaves the pawn union: only the e-pawn pushed there. Nothing of Black's changes.
    assert_eq!(md.removed[0].as_slice(), &[idx("e3", Role::Pawn)]);
}
