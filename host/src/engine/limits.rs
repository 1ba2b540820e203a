//! What bounds a search besides `stop`: [`Limits`] (depth, nodes, mate, time, `infinite`, root
//! moves) and the [`Ablation`] switches that turn single search techniques off to measure them.

use shakmaty::Move;

use super::time::TimeBudget;

/// What limits a search besides `stop`.
#[derive(Clone, Debug, Default)]
pub struct Limits {
    /// Deepest iteration (`go depth`).
    pub depth: Option<u32>,
    /// Node budget over all threads (`go nodes`).
    pub nodes: Option<u64>,
    /// Stop once a mate in at most this many moves is found (`go mate`).
    pub mate: Option<u32>,
    /// Time budget (`go movetime` or the clock).
    pub time: Option<TimeBudget>,
    /// Search until `stop` (`go infinite`): the result waits for it.
    pub infinite: bool,
    /// Only these root moves (`go searchmoves`); empty for all.
    pub search_moves: Vec<Move>,
    /// Techniques switched off (UCI option `Ablation`), to measure what each one gains.
    pub ablation: Ablation,
}

impl Limits {
    /// A fixed-depth search (`go depth d`), nothing else limited.
    pub fn at_depth(d: u32) -> Limits {
        Limits {
            depth: Some(d),
            ..Limits::default()
        }
    }
}

/// A set of search techniques switched off, to measure what each gains in games against the
/// full search (`setoption name Ablation value rfp,lmr`). Empty by default: everything on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ablation(u32);

/// A name that is none of [`Ablation::TECHNIQUES`]. `Display`: one line listing them.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown search technique '{name}' (known: {known})", name = self.0, known = Ablation::known())]
pub struct AblationError(pub String);

impl Ablation {
    /// Aspiration windows.
    pub const ASPIRATION: Ablation = Ablation(1 << 0);
    /// Reverse futility pruning.
    pub const RFP: Ablation = Ablation(1 << 1);
    /// Null-move pruning.
    pub const NMP: Ablation = Ablation(1 << 2);
    /// Internal iterative reduction.
    pub const IIR: Ablation = Ablation(1 << 3);
    /// Late move pruning.
    pub const LMP: Ablation = Ablation(1 << 4);
    /// Futility pruning of quiet moves.
    pub const FUTILITY: Ablation = Ablation(1 << 5);
    /// SEE pruning of quiet moves and bad captures.
    pub const SEE: Ablation = Ablation(1 << 6);
    /// Late move reductions.
    pub const LMR: Ablation = Ablation(1 << 7);
    /// Check extensions.
    pub const CHECK_EXTENSION: Ablation = Ablation(1 << 8);
    /// Transposition table cut-offs (the table still orders moves and caches evaluations).
    pub const TT_CUTOFF: Ablation = Ablation(1 << 9);

    /// Every technique that can be switched off, by its name in the option.
    pub const TECHNIQUES: [(&'static str, Ablation); 10] = [
        ("aspiration", Self::ASPIRATION),
        ("rfp", Self::RFP),
        ("nmp", Self::NMP),
        ("iir", Self::IIR),
        ("lmp", Self::LMP),
        ("futility", Self::FUTILITY),
        ("see", Self::SEE),
        ("lmr", Self::LMR),
        ("check-ext", Self::CHECK_EXTENSION),
        ("tt-cut", Self::TT_CUTOFF),
    ];

    /// The names of the techniques, comma-separated.
    fn known() -> String {
        let names: Vec<&str> = Self::TECHNIQUES.iter().map(|(n, _)| *n).collect();
        names.join(", ")
    }

    /// Parses a comma- or space-separated list of [`TECHNIQUES`](Self::TECHNIQUES) names;
    /// empty, `none` or `<empty>` switch nothing off.
    pub fn parse(list: &str) -> Result<Ablation, AblationError> {
        let mut set = Ablation::default();
        for name in list
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|n| !n.is_empty() && *n != "none" && *n != "<empty>")
        {
            let name = name.to_ascii_lowercase();
            match Self::TECHNIQUES.iter().find(|(n, _)| *n == name) {
                Some((_, technique)) => set.0 |= technique.0,
                None => return Err(AblationError(name)),
            }
        }
        Ok(set)
    }

    /// Whether `technique` is switched off.
    #[inline(always)]
    pub fn off(self, technique: Ablation) -> bool {
        self.0 & technique.0 != 0
    }

    /// Whether `technique` is in use.
    #[inline(always)]
    pub fn on(self, technique: Ablation) -> bool {
        !self.off(technique)
    }

    /// The names switched off, comma-separated (empty when everything is on).
    pub fn names(self) -> String {
        let names: Vec<&str> = Self::TECHNIQUES
            .iter()
            .filter(|(_, technique)| self.off(*technique))
            .map(|(n, _)| *n)
            .collect();
        names.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_technique_has_a_bit_and_a_name_of_its_own() {
        let mut seen = Ablation::default();
        for &(name, technique) in &Ablation::TECHNIQUES {
            assert_eq!(technique.0.count_ones(), 1, "{name}");
            assert!(seen.on(technique), "{name} shares a bit");
            seen.0 |= technique.0;
            let ablation = Ablation::parse(name).unwrap();
            assert_eq!(ablation, technique);
            assert_eq!(ablation.names(), *name);
        }
    }

    #[test]
    fn ablation_lists_parse_and_refuse_unknown_names() {
        let set = Ablation::parse("rfp, LMR nmp").unwrap();
        assert!(set.off(Ablation::RFP) && set.off(Ablation::LMR) && set.off(Ablation::NMP));
        assert!(set.on(Ablation::LMP));
        assert_eq!(set.names(), "rfp,nmp,lmr");
        assert_eq!(Ablation::parse("").unwrap(), Ablation::default());
        assert_eq!(Ablation::parse("<empty>").unwrap(), Ablation::default());
        let e = Ablation::parse("rfp,warp-drive").unwrap_err().to_string();
        assert!(e.contains("'warp-drive'") && e.contains("lmr"), "{e}");
    }
}
