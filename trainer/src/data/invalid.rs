//! Why a sample or a record is not a valid training position.

/// Why a sample or a record is not a valid training position, in a clause ("pawn on the first
/// or last rank", "illegal move e2e5"). Readers put it after the file and the record
/// ([`super::DataError`]); writers after the sample.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidSample(pub String);

impl From<String> for InvalidSample {
    fn from(reason: String) -> Self {
        InvalidSample(reason)
    }
}

impl From<&str> for InvalidSample {
    fn from(reason: &str) -> Self {
        InvalidSample(reason.to_string())
    }
}
