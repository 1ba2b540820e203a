//! Time management: how long to think for one move.
//!
//! A search gets a *soft* limit, the time it aims to use: scaled by how stable the best move is
//! ([`stability_percent`]), it stops the search when reached (checked every 1024 nodes, the best
//! root move of the unfinished iteration kept), and no new iteration starts after 60% of it. The
//! *hard* limit is the most a search may take: it alone applies while the root fails low.
//!
//! `Move Overhead` is the latency between the engine and the clock (pipes, scheduling, the
//! GUI): every move costs the clock its thinking time plus up to that much. So:
//!
//! - the even share of a move is `time / moves_to_go + inc / 2 - overhead` (`moves_to_go` as
//!   given, else 25): every future move pays the overhead too, and only half of the increment
//!   is counted on, so the clock settles well above zero instead of draining;
//! - the thesis engine spent the increment plus 2% of the remaining time on every move. That is
//!   the floor of the soft limit while the clock is comfortable (at least 40 × (increment +
//!   overhead)); below that, spending the whole increment every move would only drain the
//!   clock into a loss, and the share rules;
//! - the hard limit is at most four times the soft one and never more than half of what is left
//!   after the overhead (80% when the GUI says this is the last move before the time control).

use std::time::Duration;

/// What `go` said about the clock, from the side to move's point of view, in milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Clock {
    /// Time left on the clock (`wtime`/`btime`); may be negative when a GUI is late.
    pub time: i64,
    /// Increment per move (`winc`/`binc`).
    pub inc: i64,
    /// Moves until the next time control (`movestogo`), if any.
    pub moves_to_go: Option<u32>,
}

/// The limits of one search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeBudget {
    /// The time to aim for (before the stability scaling).
    pub soft: Duration,
    /// Abort the search at this point.
    pub hard: Duration,
    /// Whether time management applies: the soft limit scaled by the best move's stability,
    /// and no new iteration after 60% of it. True for a clock; false for `go movetime`, which
    /// searches the whole time (as Stockfish does) unless stopped, a mate is proven or the root
    /// has a single legal move.
    pub managed: bool,
}

/// Assumed number of moves still to play when the GUI does not say (`movestogo` absent).
const DEFAULT_MOVES_TO_GO: i64 = 25;
/// Smallest budget ever given; a search always completes its first iteration anyway.
const MIN_BUDGET_MS: i64 = 1;

/// The budget for a move with `clock`, `overhead_ms` of latency per move.
pub fn budget(clock: Clock, overhead_ms: u64) -> TimeBudget {
    let overhead = overhead_ms.min(1 << 40) as i64;
    let time = clock.time.max(0);
    let inc = clock.inc.clamp(0, 1 << 40);
    let moves_to_go = clock
        .moves_to_go
        .map_or(DEFAULT_MOVES_TO_GO, |m| i64::from(m.clamp(1, 50)));
    // What this move may take without the clock reaching zero, its latency included.
    let available = (time - overhead).max(0);
    let hard_cap = if moves_to_go == 1 {
        available * 4 / 5
    } else {
        available / 2
    };
    let share = time / moves_to_go + inc / 2 - overhead;
    let comfortable = time >= 40 * (inc + overhead);
    let thesis_floor = if comfortable { inc + time / 50 } else { 0 };
    let soft = share.max(thesis_floor).min(hard_cap);
    let hard = soft.saturating_mul(4).min(hard_cap);
    let ms = |v: i64| Duration::from_millis(v.max(MIN_BUDGET_MS) as u64);
    TimeBudget {
        soft: ms(soft),
        hard: ms(hard.max(soft)),
        managed: true,
    }
}

/// The budget for `go movetime T`: `T` less the overhead, but at least 90% of `T` (and 1 ms),
/// without time management (UCI: "search exactly T ms").
/// Stockfish searches the whole `T` and leaves latency to the GUI's margin; keeping most of `T`
/// matters for the short move times of engine tournaments (20 ms with a 20 ms overhead would
/// otherwise leave a 1 ms search), while long move times still keep the overhead's safety.
pub fn fixed(movetime_ms: i64, overhead_ms: u64) -> TimeBudget {
    let overhead = (overhead_ms.min(i64::MAX as u64) as i64).min(movetime_ms / 10);
    let t = (movetime_ms - overhead).max(MIN_BUDGET_MS);
    let d = Duration::from_millis(t as u64);
    TimeBudget {
        soft: d,
        hard: d,
        managed: false,
    }
}

/// How much of the soft limit to use given how many iterations in a row kept the same best
/// move (0 = it just changed): more when unstable, less when stable, in percent.
pub fn stability_percent(stable_iterations: u32) -> u32 {
    match stable_iterations {
        0 => 140,
        1 => 115,
        2 => 100,
        3 => 90,
        _ => 75,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(d: Duration) -> i64 {
        d.as_millis() as i64
    }

    fn clock(time: i64, inc: i64, moves_to_go: Option<u32>) -> Clock {
        Clock {
            time,
            inc,
            moves_to_go,
        }
    }

    #[test]
    fn thesis_rule_is_the_floor_while_comfortable() {
        for (time, inc) in [(60_000, 1_000), (10_000, 100), (300_000, 0), (5_000, 50)] {
            let b = budget(clock(time, inc, None), 20);
            assert!(ms(b.soft) >= inc + time / 50, "{time}+{inc}: {b:?}");
            assert!(ms(b.hard) >= ms(b.soft));
        }
    }

    #[test]
    fn never_more_than_half_of_what_is_left() {
        for time in [-50, 0, 1, 5, 10, 30, 100, 1_000, 10_000, 100_000] {
            for inc in [0, 10, 100, 1_000, 5_000] {
                for mtg in [None, Some(1), Some(2), Some(40)] {
                    for overhead in [0, 10, 50] {
                        let b = budget(clock(time, inc, mtg), overhead);
                        let usable = time - overhead as i64;
                        let cap = if mtg == Some(1) {
                            usable * 4 / 5
                        } else {
                            usable / 2
                        };
                        assert!(ms(b.hard) <= cap.max(1), "{time} {inc} {mtg:?} {b:?}");
                        assert!(ms(b.soft) <= ms(b.hard));
                        assert!(ms(b.soft) >= 1);
                    }
                }
            }
        }
    }

    #[test]
    fn fast_games_settle_instead_of_draining() {
        // 1 s + 10 ms with 20 ms overhead and a real latency of 3 ms: simulate 300 moves.
        let mut time = 1_000i64;
        for _ in 0..300 {
            let b = budget(clock(time, 10, None), 20);
            time -= ms(b.soft) + 3;
            assert!(time > 0, "lost on time");
            time += 10;
        }
        assert!(time > 100, "the clock drained to {time} ms");
    }

    #[test]
    fn moves_to_go_divides_the_time() {
        let few = budget(clock(10_000, 0, Some(2)), 0);
        let many = budget(clock(10_000, 0, Some(40)), 0);
        assert!(ms(few.soft) >= 4_000, "{few:?}");
        assert!(ms(many.soft) <= 400, "{many:?}");
        let last = budget(clock(10_000, 0, Some(1)), 100);
        assert!(ms(last.hard) <= 9_900 * 4 / 5);
        assert!(ms(last.soft) >= 7_000, "{last:?}");
    }

    #[test]
    fn overhead_is_subtracted() {
        let with = budget(clock(1_000, 0, Some(1)), 500);
        assert!(ms(with.hard) <= 400);
        assert_eq!(ms(fixed(1000, 10).hard), 990);
        assert_eq!(ms(fixed(100, 10).hard), 90);
        assert_eq!(ms(fixed(20, 20).hard), 18);
        assert_eq!(ms(fixed(5, 10).hard), 5);
        assert_eq!(ms(fixed(0, 10).hard), 1);
    }
}
