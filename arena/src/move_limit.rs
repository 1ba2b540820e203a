//! How long an engine searches each move, as a user sets it: exactly one of `nodes`, `depth`,
//! `movetime` (milliseconds) and `tc` (a clock, for games). The one reading of these four keys,
//! for `arena tournament` and `arena puzzles` ([`LimitArgs`]) and for a manifest's
//! `tournament` and `puzzles` tables ([`MoveLimit`]'s serde form, flattened into the table),
//! so they take the same values with the same rule.

use std::fmt;
use std::num::{NonZeroU32, NonZeroU64};
use std::time::Duration;

use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::time_control::TimeControl;
use crate::uci::SearchLimit;

/// A move limit: one of the four kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MoveLimit {
    /// `go nodes N`.
    Nodes(NonZeroU64),
    /// `go depth N`.
    Depth(NonZeroU32),
    /// `go movetime MS`.
    MoveTime(NonZeroU64),
    /// A clock for each side (games only).
    Clock(TimeControl),
}

/// A clock where one search must be limited on its own (puzzles).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("tc is for games; use nodes, depth or movetime")]
pub struct ClockIsForGames;

/// The keys, in the order they are listed in messages.
const KEYS: [&str; 4] = ["nodes", "depth", "movetime", "tc"];

/// The rule every reading of the keys enforces.
const EXACTLY_ONE: &str = "give exactly one of nodes, depth, movetime, tc";

impl MoveLimit {
    /// The limit of a game's first move (a clock as it stands at the start) or of any search
    /// at fixed nodes, depth or time.
    pub fn search_limit(&self) -> SearchLimit {
        match *self {
            MoveLimit::Nodes(n) => SearchLimit::Nodes(n.get()),
            MoveLimit::Depth(d) => SearchLimit::Depth(d.get()),
            MoveLimit::MoveTime(ms) => SearchLimit::MoveTime(Duration::from_millis(ms.get())),
            MoveLimit::Clock(tc) => tc.limit(),
        }
    }

    /// The limit if it can limit one search on its own, as puzzles need (a clock cannot).
    pub fn for_one_search(self) -> Result<MoveLimit, ClockIsForGames> {
        match self {
            MoveLimit::Clock(_) => Err(ClockIsForGames),
            other => Ok(other),
        }
    }

    /// Its key and value as written (`nodes`, `300`).
    fn key_value(&self) -> (&'static str, String) {
        match self {
            MoveLimit::Nodes(n) => ("nodes", n.to_string()),
            MoveLimit::Depth(d) => ("depth", d.to_string()),
            MoveLimit::MoveTime(ms) => ("movetime", ms.to_string()),
            MoveLimit::Clock(tc) => ("tc", tc.to_string()),
        }
    }
}

impl fmt::Display for MoveLimit {
    /// `nodes 300`, `tc 10+0.1`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (key, value) = self.key_value();
        write!(f, "{key} {value}")
    }
}

impl Serialize for MoveLimit {
    /// One key: `{"nodes": 300}`, `{"tc": "10+0.1"}`.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        match self {
            MoveLimit::Nodes(n) => map.serialize_entry("nodes", n)?,
            MoveLimit::Depth(d) => map.serialize_entry("depth", d)?,
            MoveLimit::MoveTime(ms) => map.serialize_entry("movetime", ms)?,
            MoveLimit::Clock(tc) => map.serialize_entry("tc", &tc.to_string())?,
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for MoveLimit {
    /// From a table holding exactly one of the keys. Flattened into a table of other settings,
    /// it receives every key the table does not declare, so a key that is none of the four is
    /// refused here, naming it.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MoveLimitVisitor;
        impl<'de> Visitor<'de> for MoveLimitVisitor {
            type Value = MoveLimit;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "a table with one of {}", KEYS.join(", "))
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MoveLimit, A::Error> {
                let mut found = None;
                while let Some(key) = map.next_key::<String>()? {
                    let limit = match key.as_str() {
                        "nodes" => MoveLimit::Nodes(map.next_value()?),
                        "depth" => MoveLimit::Depth(map.next_value()?),
                        "movetime" => MoveLimit::MoveTime(map.next_value()?),
                        "tc" => MoveLimit::Clock(
                            map.next_value::<String>()?
                                .parse()
                                .map_err(|e| de::Error::custom(format!("tc: {e}")))?,
                        ),
                        other => return Err(de::Error::custom(format!("unknown key `{other}`"))),
                    };
                    if found.replace(limit).is_some() {
                        return Err(de::Error::custom(EXACTLY_ONE));
                    }
                }
                found.ok_or_else(|| de::Error::custom(EXACTLY_ONE))
            }
        }
        deserializer.deserialize_map(MoveLimitVisitor)
    }
}

/// The four keys as command-line options (`--nodes`, `--depth`, `--movetime`, `--tc`), at most
/// one of them.
#[derive(clap::Args, Clone, Debug, Default, PartialEq)]
#[group(multiple = false)]
pub struct LimitArgs {
    /// Fixed nodes per move.
    #[arg(long)]
    pub nodes: Option<NonZeroU64>,
    /// Fixed depth per move.
    #[arg(long)]
    pub depth: Option<NonZeroU32>,
    /// Fixed time per move in milliseconds.
    #[arg(long, value_name = "MS")]
    pub movetime: Option<NonZeroU64>,
    /// Clock: SECONDS[+INCREMENT], e.g. 10+0.1 or 60 (games only).
    #[arg(long, value_name = "TC")]
    pub tc: Option<TimeControl>,
}

impl LimitArgs {
    /// The limit given, if any (clap has already refused two).
    pub fn limit(&self) -> Option<MoveLimit> {
        let given = [
            self.nodes.map(MoveLimit::Nodes),
            self.depth.map(MoveLimit::Depth),
            self.movetime.map(MoveLimit::MoveTime),
            self.tc.map(MoveLimit::Clock),
        ];
        given.into_iter().flatten().next()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize, Serialize, PartialEq)]
    struct Table {
        rounds: u32,
        #[serde(flatten)]
        limit: MoveLimit,
    }

    fn table(text: &str) -> Result<Table, String> {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }

    #[test]
    fn one_key_of_four_flattened_into_a_table() {
        let t = table(r#"{"rounds": 2, "nodes": 300}"#).unwrap();
        assert_eq!(t.limit, MoveLimit::Nodes(NonZeroU64::new(300).unwrap()));
        assert_eq!(t.limit.search_limit(), SearchLimit::Nodes(300));
        assert_eq!(
            serde_json::to_string(&t).unwrap(),
            r#"{"rounds":2,"nodes":300}"#
        );
        let clock = table(r#"{"rounds": 2, "tc": "1:30+1"}"#).unwrap().limit;
        assert_eq!(clock.to_string(), "tc 90+1");
        assert_eq!(
            clock.search_limit(),
            SearchLimit::Clock {
                white: Duration::from_secs(90),
                black: Duration::from_secs(90),
                white_inc: Duration::from_secs(1),
                black_inc: Duration::from_secs(1),
            }
        );
        assert_eq!(
            clock.for_one_search().unwrap_err().to_string(),
            "tc is for games; use nodes, depth or movetime"
        );
        let ms = table(r#"{"rounds": 2, "movetime": 50}"#).unwrap().limit;
        assert_eq!(ms.for_one_search(), Ok(ms));
        assert_eq!(
            ms.search_limit(),
            SearchLimit::MoveTime(Duration::from_millis(50))
        );
        for (bad, says) in [
            (r#"{"rounds": 2}"#, EXACTLY_ONE),
            (r#"{"rounds": 2, "nodes": 3, "depth": 4}"#, EXACTLY_ONE),
            (r#"{"rounds": 2, "nodes": 0}"#, "nonzero"),
            (r#"{"rounds": 2, "depth": -1}"#, "invalid value"),
            (
                r#"{"rounds": 2, "tc": "0+1"}"#,
                "tc: '0+1' is not a time control",
            ),
            (
                r#"{"rounds": 2, "nodes": 3, "round": 1}"#,
                "unknown key `round`",
            ),
        ] {
            let err = table(bad).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }

    #[derive(clap::Parser, Debug)]
    struct Cli {
        #[command(flatten)]
        limit: LimitArgs,
    }

    fn cli(args: &[&str]) -> Result<Option<MoveLimit>, String> {
        use clap::Parser;
        Cli::try_parse_from(std::iter::once("x").chain(args.iter().copied()))
            .map(|c| c.limit.limit())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn the_same_keys_on_the_command_line() {
        assert_eq!(cli(&[]).unwrap(), None);
        assert_eq!(
            cli(&["--depth", "7"]).unwrap(),
            Some(MoveLimit::Depth(NonZeroU32::new(7).unwrap()))
        );
        assert_eq!(
            cli(&["--tc", "10+0.1"]).unwrap().unwrap().to_string(),
            "tc 10+0.1"
        );
        assert!(
            cli(&["--nodes", "5", "--movetime", "5"])
                .unwrap_err()
                .contains("cannot be used with")
        );
        assert!(cli(&["--nodes", "0"]).is_err());
        assert!(
            cli(&["--tc", "fast"])
                .unwrap_err()
                .contains("not a time control")
        );
    }
}
