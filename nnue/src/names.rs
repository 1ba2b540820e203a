//! A name that is none of a kind's ([`UnknownName`]): the one error of the enums parsed from
//! their names (a network format, a weight type, score units), so that none returns a bare
//! `String`.

/// A name that is none of a kind's. `Display`: one line naming the kind, the text and the names
/// expected, as `unknown score units 'pawns' (expected centipawns, stockfish or
/// stockfish-wdl)`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} '{text}' (expected {expected})")]
pub struct UnknownName {
    /// The kind: `network format`, `weight type`, `score units`.
    pub what: &'static str,
    /// The text given.
    pub text: String,
    /// The names the kind has, for the message.
    pub expected: &'static str,
}

#[cfg(test)]
mod tests {
    use crate::first_layer::WeightType;
    use crate::format::NetFormat;
    use crate::units::ScoreUnits;

    /// Each kind's message names it, the text and its names (the words `host net convert`,
    /// `trainer train --i8-blocks` and `--score-units` have always printed).
    #[test]
    fn an_unknown_name_says_which_kind_and_what_it_expected() {
        let message = |e: super::UnknownName| e.to_string();
        assert_eq!(
            message(" Yaml ".parse::<NetFormat>().unwrap_err()),
            "unknown network format 'yaml' (expected own, thesis or stockfish)"
        );
        assert_eq!(
            message("i4".parse::<WeightType>().unwrap_err()),
            "unknown weight type 'i4' (expected i16 or i8)"
        );
        assert_eq!(
            message("pawns".parse::<ScoreUnits>().unwrap_err()),
            "unknown score units 'pawns' (expected centipawns, stockfish or stockfish-wdl)"
        );
        assert_eq!(" Stockfish".parse::<NetFormat>(), Ok(NetFormat::Stockfish));
    }
}
