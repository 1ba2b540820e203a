//! The one-byte codes by which this project's network format writes the kinds of a shape
//! (first-layer output, bucket rule, activation, skip, output rule): each kind's byte and the
//! oldest format version that holds it, declared once beside the kind ([`crate::shape`]) and
//! used to read, to write and to choose the version a network is written in
//! ([`crate::format`]). A new kind is one arm of its enum's [`WireCode::wire`].

/// The newest format version this code reads and writes (version 3: the shape after the first
/// layer; version 4: with activation shifts, the skip difference and the dense output of
/// Stockfish's shape of today; version 5: with the network's score units). A thesis-shaped
/// network in centipawns is still written as version 2 and another that version 3 or 4
/// expresses as that version, byte for byte as before.
pub const FORMAT_VERSION: u32 = 5;
/// The version that records a network's score units ([`crate::units::ScoreUnits`]); a file
/// of an older version is in centipawns.
pub const UNITS_VERSION: u32 = 5;
/// The version of Stockfish's shape of today's layer kinds (activation shifts, the skip
/// difference, the dense output).
pub const TODAY_VERSION: u32 = 4;
/// The version of shapes without the layer kinds of version 4.
pub const SHAPE_VERSION: u32 = 3;
/// The version a thesis-shaped network is written in.
pub const THESIS_SHAPE_VERSION: u32 = 2;

/// A kind of a shape written as one byte.
pub trait WireCode: Copy + PartialEq + 'static {
    /// What the byte is, in errors ("activation").
    const FIELD: &'static str;
    /// Every value, for decoding.
    const ALL: &'static [Self];

    /// Its byte, and the oldest format version that holds it.
    fn wire(self) -> (u8, u32);

    /// Its byte.
    fn code(self) -> u8 {
        self.wire().0
    }

    /// The oldest format version that holds it.
    fn since(self) -> u32 {
        self.wire().1
    }

    /// The value of a byte, if this build knows it.
    fn from_code(code: u8) -> Option<Self> {
        Self::ALL.iter().copied().find(|v| v.code() == code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::{Activation, BucketRule, FtOutput, OutputRule, Skip};

    /// Every value round-trips through its byte, and no two share one.
    fn round_trips<T: WireCode + std::fmt::Debug>() {
        for &v in T::ALL {
            assert_eq!(T::from_code(v.code()), Some(v), "{}", T::FIELD);
            assert!((SHAPE_VERSION..=FORMAT_VERSION).contains(&v.since()));
        }
        let mut codes: Vec<u8> = T::ALL.iter().map(|v| v.code()).collect();
        codes.sort();
        codes.dedup();
        assert_eq!(codes.len(), T::ALL.len(), "{}: a byte used twice", T::FIELD);
        let unused = (0..=u8::MAX).find(|c| !codes.contains(c)).unwrap();
        assert_eq!(T::from_code(unused), None);
    }

    #[test]
    fn every_kind_round_trips_through_its_byte() {
        round_trips::<FtOutput>();
        round_trips::<BucketRule>();
        round_trips::<Activation>();
        round_trips::<Skip>();
        round_trips::<OutputRule>();
        round_trips::<crate::units::ScoreUnits>();
        // The bytes files hold, unchanged.
        assert_eq!(
            [
                FtOutput::ClippedRelu.code(),
                FtOutput::Pairwise.code(),
                FtOutput::Pairwise255.code()
            ],
            [0, 1, 2]
        );
        assert_eq!(
            [
                Activation::ClippedRelu.code(),
                Activation::SqrClippedRelu.code()
            ],
            [0, 1]
        );
        assert_eq!(
            [
                Skip::None.code(),
                Skip::ExtraOutput.code(),
                Skip::Difference.code()
            ],
            [0, 1, 2]
        );
        assert_eq!(
            [
                OutputRule::Thesis.code(),
                OutputRule::Stockfish.code(),
                OutputRule::StockfishScaled.code()
            ],
            [0, 1, 2]
        );
        assert_eq!(BucketRule::PieceCount.code(), 0);
    }
}
