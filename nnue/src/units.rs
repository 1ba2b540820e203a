//! The units of a network's raw output, which the network holds (this project's format records
//! them from version 5 on; Stockfish's formats imply theirs), and their conversion to
//! centipawns, which every evaluator applies at its boundary so that the search, UCI's `cp` and
//! the training data's scores speak centipawns whatever the network.

use shakmaty::{Chess, Position, Role};

use crate::names::UnknownName;
use crate::wire_code::{UNITS_VERSION, WireCode};

/// Stockfish 15.1's internal units per pawn as its UCI reports scores: `cp = v · 100 / 361`
/// (`uci.h:38` `NormalizeToPawnValue`, `uci.cpp:319`, tag `sf_15.1`).
pub const STOCKFISH_UNITS_PER_PAWN: i32 = 361;

/// The units a network's raw output is in. The evaluator converts it to centipawns at its
/// boundary ([`ScoreUnits::centipawns`]), so that the search, whose margins (futility,
/// razoring, null move, aspiration) are tuned in centipawns, UCI's `cp` and the training data's
/// scores all speak centipawns whatever the network.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScoreUnits {
    /// Centipawns already: the built-in evaluation, the thesis's networks and the trainer's,
    /// whatever their shape (they learn the centipawns of their data).
    #[default]
    Centipawns,
    /// Stockfish 15.1's internal units, [`STOCKFISH_UNITS_PER_PAWN`] to a pawn: the units of a
    /// Stockfish file of SFNNv5's format, as Stockfish 15.1 reports its scores.
    Stockfish,
    /// The internal units of Stockfish's networks of today, whose pawn depends on the material:
    /// the units of a Stockfish file of SFNNv16's format, converted as Stockfish
    /// 762dd1da9's `UCIEngine::to_cp` does (`uci.cpp:537-593`: `round(100 · v / a)` with `a` its
    /// win-rate model's cubic in the material count).
    StockfishWdl,
}

impl WireCode for ScoreUnits {
    const FIELD: &'static str = "score units";
    const ALL: &'static [Self] = &[
        ScoreUnits::Centipawns,
        ScoreUnits::Stockfish,
        ScoreUnits::StockfishWdl,
    ];

    fn wire(self) -> (u8, u32) {
        match self {
            ScoreUnits::Centipawns => (0, UNITS_VERSION),
            ScoreUnits::Stockfish => (1, UNITS_VERSION),
            ScoreUnits::StockfishWdl => (2, UNITS_VERSION),
        }
    }
}

impl std::fmt::Display for ScoreUnits {
    /// Its name: `centipawns`, `stockfish`, `stockfish-wdl` (as a setting writes it).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ScoreUnits::Centipawns => "centipawns",
            ScoreUnits::Stockfish => "stockfish",
            ScoreUnits::StockfishWdl => "stockfish-wdl",
        })
    }
}

impl std::str::FromStr for ScoreUnits {
    type Err = UnknownName;

    /// A name [`Display`](std::fmt::Display) writes.
    fn from_str(text: &str) -> Result<Self, UnknownName> {
        Self::ALL
            .iter()
            .copied()
            .find(|u| u.to_string() == text.trim())
            .ok_or_else(|| UnknownName {
                what: "score units",
                text: text.to_string(),
                expected: "centipawns, stockfish or stockfish-wdl",
            })
    }
}

impl ScoreUnits {
    /// What the units are, for people: `centipawns`, `Stockfish 15.1's internal units (361 to
    /// a pawn)`, ...
    pub fn describe(self) -> &'static str {
        match self {
            ScoreUnits::Centipawns => "centipawns",
            ScoreUnits::Stockfish => "Stockfish 15.1's internal units (361 to a pawn)",
            ScoreUnits::StockfishWdl => {
                "the internal units of Stockfish's networks of today (about 380 to a pawn, by the material)"
            }
        }
    }

    /// The raw score `v` of `pos` (side to move's) in centipawns: `v` itself, `v · 100 / 361`
    /// truncating (Stockfish 15.1's `UCI::value`), or `round(100 · v / a(material))`.
    pub fn centipawns(self, v: i32, pos: &Chess) -> i32 {
        self.centipawns_at(v, material(pos))
    }

    /// The raw score `v` in centipawns in a position of `material` ([`material_of`]): what
    /// [`centipawns`](Self::centipawns) computes, for callers without a shakmaty position.
    pub fn centipawns_at(self, v: i32, material: i32) -> i32 {
        match self {
            ScoreUnits::Centipawns => v,
            ScoreUnits::Stockfish => v * 100 / STOCKFISH_UNITS_PER_PAWN,
            ScoreUnits::StockfishWdl => {
                (100.0 * f64::from(v) / self.per_pawn(material)).round() as i32
            }
        }
    }

    /// Centipawns `cp` in these units in a position of `material`, rounded: the inverse of
    /// [`centipawns_at`](Self::centipawns_at) (to its rounding), for data written in the units
    /// another tool reads.
    pub fn from_centipawns_at(self, cp: i32, material: i32) -> i32 {
        match self {
            ScoreUnits::Centipawns => cp,
            _ => (f64::from(cp) * self.per_pawn(material) / 100.0).round() as i32,
        }
    }

    /// These units' pawn in a position of `material`: 100, 361, or today's win-rate model's
    /// `a(material)`.
    pub fn per_pawn(self, material: i32) -> f64 {
        match self {
            ScoreUnits::Centipawns => 100.0,
            ScoreUnits::Stockfish => f64::from(STOCKFISH_UNITS_PER_PAWN),
            ScoreUnits::StockfishWdl => win_rate_a_at(material),
        }
    }
}

/// The material count of the win-rate model, `P + 3N + 3B + 5R + 9Q` of both colours, from the
/// number of pawns, knights, bishops, rooks and queens on the board.
pub fn material_of(pawns: u32, knights: u32, bishops: u32, rooks: u32, queens: u32) -> i32 {
    (pawns + 3 * knights + 3 * bishops + 5 * rooks + 9 * queens) as i32
}

fn material(pos: &Chess) -> i32 {
    let board = pos.board();
    let count = |r: Role| board.by_role(r).count() as u32;
    material_of(
        count(Role::Pawn),
        count(Role::Knight),
        count(Role::Bishop),
        count(Role::Rook),
        count(Role::Queen),
    )
}

/// Stockfish's win-rate model's `a` for `pos`: internal units at which the side to move wins
/// half of its games (`win_rate_params`, `uci.cpp:537-553` at 762dd1da9), a cubic in the
/// material count `P + 3N + 3B + 5R + 9Q` clamped to 17..=78, over 58.
pub fn win_rate_a(pos: &Chess) -> f64 {
    win_rate_a_at(material(pos))
}

/// [`win_rate_a`] for a material count.
pub fn win_rate_a_at(material: i32) -> f64 {
    let m = f64::from(material.clamp(17, 78)) / 58.0;
    let a = [-72.32565836, 185.93832038, -144.58862193, 416.44950446];
    ((a[0] * m + a[1]) * m + a[2]) * m + a[3]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(fen: &str) -> Chess {
        let fen: shakmaty::fen::Fen = fen.parse().unwrap();
        fen.into_position(shakmaty::CastlingMode::Standard).unwrap()
    }

    #[test]
    fn each_networks_units_become_centipawns_as_stockfish_reports_them() {
        let start = Chess::default();
        // Stockfish 15.1's `UCI::value`: v · 100 / 361, truncating toward zero.
        let sf = ScoreUnits::Stockfish;
        assert_eq!(sf.centipawns(361, &start), 100);
        assert_eq!(sf.centipawns(-722, &start), -200);
        assert_eq!(sf.centipawns(360, &start), 99);
        assert_eq!(sf.centipawns(-3, &start), 0);
        assert_eq!(ScoreUnits::Centipawns.centipawns(361, &start), 361);
        // Today's `UCIEngine::to_cp`: round(100 · v / a), a of the material (78 at the start,
        // a = 382.37; clamped to 17 in a bare ending, a = 388.22).
        let wdl = ScoreUnits::StockfishWdl;
        assert!((win_rate_a(&start) - 382.3729).abs() < 1e-3);
        assert_eq!(wdl.centipawns(1000, &start), 262);
        let bare = pos("8/8/3k4/8/4K3/8/8/8 w - - 0 1");
        assert_eq!(wdl.centipawns(1000, &bare), 258);
        assert_eq!(wdl.centipawns(-1000, &bare), -258);
        // And back: centipawns in each network's units (the start position's material is 78).
        assert_eq!(sf.from_centipawns_at(100, 78), 361);
        assert_eq!(sf.from_centipawns_at(-250, 0), -903);
        assert_eq!(wdl.from_centipawns_at(262, 78), 1002);
        assert_eq!(ScoreUnits::Centipawns.from_centipawns_at(42, 78), 42);
        assert_eq!(material_of(16, 4, 4, 4, 2), 78);
    }
}
