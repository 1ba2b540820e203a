//! Time controls, written as `SECONDS[+INCREMENT]` (cutechess-cli's and fastchess's `tc=`
//! without their moves-per-session form): `10+0.1`, `60`, `1:30+1`, a base of minutes and
//! seconds as `M:SS`. The one reading of a time control for `arena tournament --tc` and an
//! experiment's `tc` alike. A game needs time on the clock at its start: the base is above zero
//! (`0+1` is refused, as it would lose on time before the first increment).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::uci::SearchLimit;

/// A clock for both sides: the base time and the increment after each move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeControl {
    /// Time on each clock at the start (above zero).
    pub base: Duration,
    /// Time added to a clock after each of its side's moves.
    pub increment: Duration,
}

/// A time control that cannot be read. `Display`: `'TEXT' is not a time control ...`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("'{text}' is not a time control SECONDS[+INCREMENT] (e.g. 10+0.1 or 1:30+1): {reason}")]
pub struct TimeControlError {
    /// The text as given.
    pub text: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl FromStr for TimeControl {
    type Err = TimeControlError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = |reason| TimeControlError {
            text: text.to_string(),
            reason,
        };
        let (base, inc) = text.split_once('+').unwrap_or((text, "0"));
        let secs = |s: &str| -> Option<f64> {
            let v = match s.split_once(':') {
                Some((m, s)) => {
                    let (m, s) = (m.trim().parse::<u32>().ok()?, s.trim().parse::<f64>().ok()?);
                    (s < 60.0).then_some(f64::from(m) * 60.0 + s)?
                }
                None => s.trim().parse::<f64>().ok()?,
            };
            (0.0..1e9).contains(&v).then_some(v)
        };
        let base = secs(base).ok_or_else(|| bad("the base is not a time in seconds or M:SS"))?;
        let inc = secs(inc).ok_or_else(|| bad("the increment is not a time in seconds"))?;
        if base <= 0.0 {
            return Err(bad("the base must be above zero"));
        }
        Ok(TimeControl {
            base: Duration::from_secs_f64(base),
            increment: Duration::from_secs_f64(inc),
        })
    }
}

impl fmt::Display for TimeControl {
    /// `10+0.1`: seconds, as the PGN `TimeControl` tag writes them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}+{}",
            self.base.as_secs_f64(),
            self.increment.as_secs_f64()
        )
    }
}

impl TimeControl {
    /// The clock limit of a game at this time control (both sides alike).
    pub fn limit(&self) -> SearchLimit {
        SearchLimit::Clock {
            white: self.base,
            black: self.base,
            white_inc: self.increment,
            black_inc: self.increment,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tc(text: &str) -> Result<TimeControl, TimeControlError> {
        text.parse()
    }

    #[test]
    fn seconds_increments_and_minutes() {
        let t = tc("10+0.1").unwrap();
        assert_eq!(
            (t.base, t.increment),
            (Duration::from_secs(10), Duration::from_millis(100))
        );
        assert_eq!(tc("60").unwrap().increment, Duration::ZERO);
        assert_eq!(tc("1:30").unwrap().base, Duration::from_secs(90));
        assert_eq!(tc("1:30+1").unwrap().increment, Duration::from_secs(1));
        assert_eq!(tc("10+0.1").unwrap().to_string(), "10+0.1");
        assert!(matches!(
            tc("10+0.1").unwrap().limit(),
            SearchLimit::Clock { .. }
        ));
    }

    #[test]
    fn the_inputs_the_two_old_readers_disagreed_on_have_one_answer() {
        // `arena --tc` took `1:30` and refused `0+1`; the manifest's `tc` did the opposite.
        assert!(tc("1:30").is_ok());
        let e = tc("0+1").unwrap_err().to_string();
        assert!(e.contains("above zero"), "{e}");
        for bad in [
            "", "abc", "10+", "0", "-5+1", "40/60", "1:75", "1e300", "10+x",
        ] {
            let e = tc(bad).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("'{bad}' is not a time control")),
                "{e}"
            );
        }
    }
}
