//! The conformance kit: checks that any block keeps its promises.
//!
//! A plugin crate runs it from its own tests with one line,
//! `plugin_api::conformance_test!(MyBlock, MyOtherBlock);`, and the host runs it on every block
//! of every loaded plugin. For every block it plays seeded random legal games from positions
//! rich in special moves (castling both ways, en passant, promotions with and without capture,
//! checks, near-empty boards) and verifies after every ply, for both perspectives:
//!
//! - every index emitted by `active` and `delta` is below the block's size;
//! - the counts maintained from `delta` (plus refreshes where asked) equal a full recomputation
//!   with `active` (as multisets: a block may emit an index several times);
//! - a `delta` never removes an index whose count is already zero;
//! - for blocks that promise it, Black's indices of a board equal White's indices of the
//!   colour-flipped mirror.

use abi_stable::std_types::RResult;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Position};

use crate::block::{BlockDescriptor, IndexList, MoveDelta};
use crate::convert::{board_from_position, move_from_shakmaty};
use crate::types::{Board, Color};

/// Start positions of the random games: the initial position plus positions chosen for castling,
/// en passant, promotions, pins and checks, and sparse boards.
pub const START_FENS: &[&str] = &[
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
    "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1",
    "1r2k3/P6P/8/8/8/8/p6p/1R2K3 w - - 0 1",
    "4k3/8/8/8/8/8/8/4K3 w - - 0 1",
    "8/8/3k4/8/2pP4/8/8/3K4 b - d3 0 1",
    "7k/8/8/8/8/8/8/K6Q b - - 0 1",
];

/// How much the kit plays.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// Total plies over all games.
    pub plies: usize,
    /// Longest game before restarting from the next start position.
    pub max_game_plies: usize,
    /// Seed of the random move choice.
    pub seed: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            plies: 4000,
            max_game_plies: 160,
            seed: 0x5eed_2026,
        }
    }
}

/// What a successful run checked.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Plies played (each checked for every block and perspective).
    pub plies: usize,
    /// Games played.
    pub games: usize,
    /// Perspective refreshes the blocks asked for (summed over blocks).
    pub refreshes: usize,
    /// Positions on which mirror symmetry was checked.
    pub mirror_checks: usize,
}

/// Runs [`check_blocks`] with default settings and panics with its message on failure.
pub fn assert_conformance(blocks: &[BlockDescriptor]) -> Report {
    match check_blocks(blocks, Settings::default()) {
        Ok(report) => report,
        Err(message) => panic!("conformance failure: {message}"),
    }
}

/// Declares a `#[test]` that runs the conformance kit on the listed block types.
#[macro_export]
macro_rules! conformance_test {
    ($($block:ty),+ $(,)?) => {
        #[test]
        fn plugin_conformance() {
            let report = $crate::conformance::assert_conformance(&[
                $($crate::BlockDescriptor::of::<$block>()),+
            ]);
            eprintln!("conformance: {report:?}");
            assert!(report.plies > 0);
        }
    };
}

struct Tracker<'d> {
    desc: &'d BlockDescriptor,
    counts: [Vec<u32>; 2],
    scratch: Vec<u32>,
    added: [Vec<u32>; 2],
    removed: [Vec<u32>; 2],
    refreshes: usize,
}

fn active_counts(
    desc: &BlockDescriptor,
    board: &Board,
    p: Color,
    scratch: &mut Vec<u32>,
) -> Result<Vec<u32>, String> {
    scratch.clear();
    scratch.resize(desc.max_active as usize, 0);
    let mut list = IndexList::new(scratch);
    if let RResult::RErr(e) = (desc.active)(board, p, &mut list) {
        return Err(format!("active() failed: {}", e.message));
    }
    let mut counts = vec![0u32; desc.size as usize];
    for &ix in list.as_slice() {
        if ix >= desc.size {
            return Err(format!("active() emitted index {ix} >= size {}", desc.size));
        }
        counts[ix as usize] += 1;
    }
    Ok(counts)
}

fn diff_counts(expected: &[u32], got: &[u32]) -> String {
    let mut missing = Vec::new();
    let mut extra = Vec::new();
    for (ix, (&e, &g)) in expected.iter().zip(got).enumerate() {
        if g < e {
            missing.push(format!("{ix}x{}", e - g));
        } else if g > e {
            extra.push(format!("{ix}x{}", g - e));
        }
    }
    format!(
        "incremental lacks [{}], has extra [{}]",
        missing.join(","),
        extra.join(",")
    )
}

impl<'d> Tracker<'d> {
    fn new(desc: &'d BlockDescriptor, board: &Board) -> Result<Self, String> {
        let mut scratch = Vec::new();
        let counts = [
            active_counts(desc, board, Color::White, &mut scratch)?,
            active_counts(desc, board, Color::Black, &mut scratch)?,
        ];
        let cap = desc.max_delta as usize;
        Ok(Tracker {
            desc,
            counts,
            scratch,
            added: [vec![0; cap], vec![0; cap]],
            removed: [vec![0; cap], vec![0; cap]],
            refreshes: 0,
        })
    }

    fn step(&mut self, before: &Board, mv: &crate::Move, after: &Board) -> Result<(), String> {
        let desc = self.desc;
        let [a0, a1] = &mut self.added;
        let [r0, r1] = &mut self.removed;
        let mut md = MoveDelta {
            added: [IndexList::new(a0), IndexList::new(a1)],
            removed: [IndexList::new(r0), IndexList::new(r1)],
            refresh: [false; 2],
        };
        if let RResult::RErr(e) = (desc.delta)(before, mv, &mut md) {
            return Err(format!("delta() failed: {}", e.message));
        }
        for p in Color::ALL {
            let pi = p.index();
            let expected = active_counts(desc, after, p, &mut self.scratch)?;
            if md.refresh[pi] {
                self.refreshes += 1;
                self.counts[pi] = expected;
                continue;
            }
            let counts = &mut self.counts[pi];
            for &ix in md.added[pi].as_slice() {
                if ix >= desc.size {
                    return Err(format!(
                        "{p:?}: delta() added index {ix} >= size {}",
                        desc.size
                    ));
                }
                counts[ix as usize] += 1;
            }
            for &ix in md.removed[pi].as_slice() {
                if ix >= desc.size {
                    return Err(format!(
                        "{p:?}: delta() removed index {ix} >= size {}",
                        desc.size
                    ));
                }
                if counts[ix as usize] == 0 {
                    return Err(format!(
                        "{p:?}: delta() removed index {ix}, which was not active"
                    ));
                }
                counts[ix as usize] -= 1;
            }
            if *counts != expected {
                return Err(format!("{p:?}: {}", diff_counts(&expected, counts)));
            }
        }
        Ok(())
    }
}

fn pick_move(pos: &Chess, rng: &mut ChaCha8Rng) -> Option<shakmaty::Move> {
    let moves = pos.legal_moves();
    if moves.is_empty() {
        return None;
    }
    let special: Vec<&shakmaty::Move> = moves
        .iter()
        .filter(|m| {
            m.is_capture()
                || m.is_castle()
                || m.is_promotion()
                || m.is_en_passant()
                || pos.clone().play(**m).is_ok_and(|p| p.is_check())
        })
        .collect();
    if !special.is_empty() && rng.random_bool(0.5) {
        special.choose(rng).map(|m| **m)
    } else {
        moves.choose(rng).copied()
    }
}

fn check_mirror(
    desc: &BlockDescriptor,
    board: &Board,
    scratch: &mut Vec<u32>,
) -> Result<(), String> {
    let black = active_counts(desc, board, Color::Black, scratch)?;
    let mirrored = active_counts(desc, &board.mirrored(), Color::White, scratch)?;
    if black != mirrored {
        return Err(format!(
            "mirror symmetry: Black's indices differ from White's of the mirrored board ({})",
            diff_counts(&mirrored, &black)
        ));
    }
    Ok(())
}

/// Plays the random games and checks every block; on failure returns one paragraph naming the
/// block, the position (FEN), the move (UCI) and what differs.
pub fn check_blocks(blocks: &[BlockDescriptor], settings: Settings) -> Result<Report, String> {
    let mut rng = ChaCha8Rng::seed_from_u64(settings.seed);
    let mut report = Report::default();
    let mut scratch = Vec::new();
    let mut start = 0usize;
    let fail = |desc: &BlockDescriptor, pos: &Chess, what: String| {
        format!(
            "block '{}' at {}: {what}",
            desc.name,
            Fen::from_position(pos, EnPassantMode::Legal)
        )
    };
    while report.plies < settings.plies {
        let fen: Fen = START_FENS[start % START_FENS.len()]
            .parse()
            .map_err(|e| format!("bad start FEN: {e}"))?;
        start += 1;
        let mut pos: Chess = fen
            .into_position(CastlingMode::Standard)
            .map_err(|e| format!("bad start position: {e}"))?;
        report.games += 1;
        let mut board = board_from_position(&pos);
        let mut trackers = Vec::with_capacity(blocks.len());
        for desc in blocks {
            trackers.push(Tracker::new(desc, &board).map_err(|e| fail(desc, &pos, e))?);
        }
        for _ in 0..settings.max_game_plies {
            if report.plies >= settings.plies {
                break;
            }
            for desc in blocks.iter().filter(|d| d.mirror_symmetric) {
                check_mirror(desc, &board, &mut scratch).map_err(|e| fail(desc, &pos, e))?;
                report.mirror_checks += 1;
            }
            let Some(m) = pick_move(&pos, &mut rng) else {
                break;
            };
            let mv = move_from_shakmaty(&m).ok_or("drop move in standard chess")?;
            let next = pos.clone().play(m).map_err(|e| e.to_string())?;
            let next_board = board_from_position(&next);
            let played = board.play(&mv);
            if (
                played.by_color,
                played.by_role,
                played.turn,
                played.castling,
            ) != (
                next_board.by_color,
                next_board.by_role,
                next_board.turn,
                next_board.castling,
            ) {
                return Err(format!(
                    "plugin-api Board::play disagrees with shakmaty on {} at {}",
                    UciMove::from_move(m, CastlingMode::Standard),
                    Fen::from_position(&pos, EnPassantMode::Legal)
                ));
            }
            for t in &mut trackers {
                t.step(&board, &mv, &next_board).map_err(|e| {
                    fail(
                        t.desc,
                        &pos,
                        format!(
                            "after {}: {e}",
                            UciMove::from_move(m, CastlingMode::Standard)
                        ),
                    )
                })?;
            }
            pos = next;
            board = next_board;
            report.plies += 1;
        }
        report.refreshes += trackers.iter().map(|t| t.refreshes).sum::<usize>();
    }
    Ok(report)
}
