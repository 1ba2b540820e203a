//! `host bench`: a fixed list of positions searched to a fixed depth. With one thread the node
//! count is deterministic (a signature of the search: any change to it changes the count); the
//! last line is `N nodes M nps` (the OpenBench / fishtest convention).
//!
//! Every position starts from a cleared transposition table and cleared histories, so its count
//! does not depend on the others.

use std::io::Write;
use std::time::{Duration, Instant};

use shakmaty::Chess;

use super::eval_source::EvalSource;
use super::facade::Engine;
use super::limits::Limits;
use super::tt::HashError;
use super::uci_format::uci_move;

/// Default depth of `host bench`.
pub const DEFAULT_DEPTH: u32 = 14;
/// Default hash table size of `host bench`, in MiB.
pub const DEFAULT_HASH_MB: usize = 16;

/// The benchmark positions, chosen by this project from its own self-play (`trainer gensfen
/// --games 64 --depth 7 --seed 2026 --random-moves 4 --random-multipv 4 --random-margin 60
/// --random-maxply 16 --write-minply 1`, the built-in evaluation): the start position, then
/// one position from each game in turn, an opening (28 to 32 pieces, plies 12 to 24), a
/// middlegame (18 to 26 pieces), an endgame (9 to 14) or a late endgame (4 to 8), not in check;
/// three with the side to move in check; and two composed positions without a move.
pub const POSITIONS: &[&str] = &[
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    // Openings.
    "r1bqkb1r/1pp2ppp/p1n1pn2/8/3PN3/P2Q1N2/1PP2PPP/R1B1KB1R b KQkq - 0 7",
    "r1bq1rk1/pp3ppp/2pb1n2/P2p4/3NP3/2Nn4/1PPB1PPP/R2Q1RK1 w - - 0 12",
    "r4rk1/p1pq1ppp/3bpn2/1p1p4/3P3P/P1NPP3/1P1B1PP1/R2QK2R w KQ - 1 12",
    "r3kbnr/ppp1pppp/2nq4/8/2NP4/5N2/PP2PPPP/R1B1KB1R b KQkq - 0 7",
    "r1bqk2r/ppp1bppp/2n1pn2/3p4/3P4/2N1PN2/PPPB1PPP/R2QKB1R b KQkq - 4 7",
    "r1bqk2r/ppp2pp1/3bpn1p/6B1/3P4/3Q1N2/PPP1BPPP/R4RK1 w kq - 0 12",
    "r3kb1r/pp3ppp/nqp1pn2/3p1b2/3P1B2/N1P2N2/PP2PPPP/R1Q1KB1R b KQkq - 0 8",
    "1r2kb1r/2p1pppp/p1pqbn2/3pN3/3P4/2N1P3/PPPB1PPP/R1Q1K2R w KQk - 6 13",
    "r2qkb1r/ppp2ppp/2n1p3/3p1b2/3PN3/3BPN2/PPP2PPP/R1BQ1RK1 b kq - 0 7",
    "r2qkb1r/ppp1pppp/8/3p1b2/1n1P1Pn1/2N2N2/PPP1P1PP/2RQKBBR b Kkq - 8 7",
    "r1b1kbnr/p1pq1ppp/1p2p3/3pP3/8/P1NQ4/1PPBPPPP/R3KB1R w KQkq - 1 9",
    "r1bqkb1r/ppp3pp/2n1pp2/4P3/3P4/4BP2/PPP4P/R2QKBNR w KQkq - 0 9",
    // Middlegames.
    "5rk1/3b2p1/1pn1pp2/3pP1Pp/3P1P1P/2PB4/r1P1N3/q1BQ1RK1 b - - 0 18",
    "2r2kr1/3bb3/p3p3/4P2B/1P2p1Pp/4P3/1R1B4/6KR b - - 0 31",
    "1r2k2r/Q1pn3p/3bp3/3p1p1P/P2P2Nq/2NP1P2/1P6/R4RK1 b k - 0 20",
    "r4bkr/p3p1pp/2p5/1p1n1b2/3PN3/8/PPK2P1P/R1B2BR1 w - - 3 17",
    "5b1r/2knppp1/p1n5/1p2P2p/2pB1P2/2P1N3/P4P1P/3RK2R w K - 0 24",
    "r7/3kn3/3bp1p1/p1pp4/Rr1PpPBP/1P2P3/2P5/2BK3R w - - 0 26",
    "2rr2k1/8/Q2b2p1/5p1p/p2q1P1P/P3RRB1/6PK/8 b - - 4 39",
    "2k4r/2pb2p1/4p3/1pPn1p2/p2P1P1r/P1P2R1P/2RB4/1K3B2 w - - 0 33",
    "1r3rk1/5p2/6p1/p2P1p1p/P1Pp4/1P2p1P1/7P/R2R2K1 b - - 1 33",
    "3rr3/3b1k2/p2p3p/Pp1P2p1/1P4P1/2PR1B2/8/3K2R1 w - - 6 34",
    "4r3/r2b2k1/2p4p/p3p1p1/P1BbP1P1/1P1R1PP1/4K3/3R4 b - - 4 31",
    "r2qk2r/1ppbb1pp/p3p3/3nP3/2Q1N3/6B1/PP3PPP/R3KB1R b KQkq - 0 13",
    // Endgames.
    "8/6pk/3r4/Q2R1p2/5P1p/5P1P/5K2/2q5 b - - 0 47",
    "4r3/3Rp3/2k1P3/4KPp1/7p/7P/8/8 w - - 11 47",
    "8/4k3/6p1/Pp1r1p1p/1RpB3P/6r1/3R4/3K4 w - - 0 47",
    "4Q3/1bBp2k1/3P4/3P4/1P5p/2P4P/6P1/1B4K1 w - - 1 41",
    "1k6/p1nb4/2p5/1p2N3/2P5/PP6/4r3/R5K1 w - - 0 34",
    "5b2/1p2k1p1/8/p7/P3p3/7q/8/2R1K3 b - - 3 43",
    "6N1/R7/3P2k1/4B3/8/7p/1P5P/2K4R b - - 0 46",
    "8/2p2R2/2k5/p3pB2/Pn2K3/1PB3b1/8/8 w - - 34 50",
    "8/3b4/8/1p1pkp2/pP6/P2KP3/4B2r/4R3 b - - 1 47",
    "8/3k4/pp3P2/3nPr2/3P4/3K4/1PR2B2/8 b - - 8 56",
    // Late endgames.
    "8/8/8/7B/3k3K/8/2Qp1P2/8 b - - 4 85",
    "7R/6k1/8/8/8/2p5/1r2p3/2K5 w - - 18 87",
    "8/8/8/4QP2/3K4/k7/2B5/8 b - - 0 82",
    "5Q2/8/p1Q5/P1P3K1/2k5/6P1/8/8 b - - 0 64",
    "5Q2/3k4/2p5/4q3/1p2p3/4P3/8/1K6 w - - 0 54",
    "6k1/5p2/6p1/5p2/2K1nr1p/8/8/8 w - - 0 59",
    "8/8/8/3k4/2p1bK2/r7/8/8 b - - 1 119",
    "8/8/5kp1/1r6/3K4/1p6/1R6/8 b - - 1 53",
    // The side to move in check.
    "8/8/1k4p1/3p1pNp/3P3P/3BKP2/5P2/2b5 w - - 5 67",
    "8/4p3/4P3/3k1Ppr/2P4p/p2K3P/8/4R3 b - - 0 38",
    "4kbnr/pp1Bpppp/2p5/nN1P4/2p5/2P2P2/P3PP1P/R1B1K2R b KQk - 0 13",
    // Checkmated and stalemated: no move to search.
    "k7/1Q6/1K6/8/8/8/8/8 b - - 0 1",
    "k7/8/1Q6/8/8/8/8/2K5 b - - 0 1",
];

/// What to run.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    /// Search depth per position.
    pub depth: u32,
    /// Search threads (node counts are deterministic with one).
    pub threads: usize,
    /// Hash table size in MiB.
    pub hash_mb: usize,
    /// The evaluation.
    pub eval: EvalSource,
}

/// The totals of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BenchSummary {
    /// Nodes searched over all positions.
    pub nodes: u64,
    /// Search time over all positions (table clearing excluded).
    pub elapsed: Duration,
    /// Processor time of the process (all threads) during the searches: on a busy machine,
    /// nodes per processor-second is steadier than nodes per second.
    pub cpu: Duration,
}

impl BenchSummary {
    /// Nodes per second.
    pub fn nps(&self) -> u64 {
        (self.nodes as f64 / self.elapsed.as_secs_f64().max(1e-9)) as u64
    }
}

/// Why a benchmark did not finish. `Display`: one line.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The hash table cannot be had.
    #[error(transparent)]
    Hash(#[from] HashError),
    /// A position's search failed (an evaluation error), or the position is not one.
    #[error("bench position {index}: {reason}")]
    Position {
        /// 1-based.
        index: usize,
        /// Why.
        reason: String,
    },
    /// The output cannot be written.
    #[error("cannot write output: {0}")]
    Write(#[from] std::io::Error),
}

/// Searches every position of [`POSITIONS`], writing one line per position and then the
/// summary line `N nodes M nps` to `out`.
pub fn run(config: &BenchConfig, out: &mut dyn Write) -> Result<BenchSummary, BenchError> {
    let mut engine = Engine::new(config.hash_mb, config.threads, config.eval.clone())?;
    let limits = Limits {
        depth: Some(config.depth.max(1)),
        ..Limits::default()
    };
    let mut total = BenchSummary {
        nodes: 0,
        elapsed: Duration::ZERO,
        cpu: Duration::ZERO,
    };
    for (i, fen) in POSITIONS.iter().enumerate() {
        let at = |reason: String| BenchError::Position {
            index: i + 1,
            reason,
        };
        let root: Chess = chess_text::parse_position(fen).map_err(|e| at(e.to_string()))?;
        engine.new_game();
        let started = Instant::now();
        let cpu_started = process_cpu_time();
        let result = engine.search(&root, &[], &limits, &|_, _, _| {});
        total.elapsed += started.elapsed();
        total.cpu += process_cpu_time().saturating_sub(cpu_started);
        if let Some(e) = result.errors.first() {
            return Err(at(e.clone()));
        }
        total.nodes += result.nodes;
        writeln!(
            out,
            "position {:>2}/{}: {:>10} nodes  bestmove {:<5}  {}",
            i + 1,
            POSITIONS.len(),
            result.nodes,
            uci_move(result.best.as_ref()),
            fen
        )?;
    }
    writeln!(
        out,
        "search time {} ms, processor time {} ms ({} nodes per processor-second)",
        total.elapsed.as_millis(),
        total.cpu.as_millis(),
        (total.nodes as f64 / total.cpu.as_secs_f64().max(1e-9)) as u64
    )?;
    writeln!(out, "{} nodes {} nps", total.nodes, total.nps())?;
    Ok(total)
}

/// Processor time used by this process so far (zero where it cannot be read).
fn process_cpu_time() -> Duration {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes into the timespec we own.
        if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) } == 0 {
            return Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32);
        }
    }
    Duration::ZERO
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bench_position_is_legal() {
        for fen in POSITIONS {
            assert!(chess_text::parse_position(fen).is_ok(), "{fen}");
        }
    }

    #[test]
    fn single_thread_bench_is_deterministic_and_ends_with_the_summary() {
        let config = BenchConfig {
            depth: 4,
            threads: 1,
            hash_mb: 2,
            eval: EvalSource::Builtin,
        };
        let mut a = Vec::new();
        let mut b = Vec::new();
        let sa = run(&config, &mut a).unwrap();
        let sb = run(&config, &mut b).unwrap();
        assert_eq!(sa.nodes, sb.nodes);
        let text = String::from_utf8(a).unwrap();
        let last = text.lines().last().unwrap();
        let parts: Vec<&str> = last.split(' ').collect();
        assert_eq!(parts.len(), 4, "{last}");
        assert_eq!(parts[0].parse::<u64>().unwrap(), sa.nodes);
        assert_eq!((parts[1], parts[3]), ("nodes", "nps"));
        assert_eq!(text.lines().count(), POSITIONS.len() + 2);
    }
}
