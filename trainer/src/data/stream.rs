//! What the readers and writers of every format share: their errors (naming the file and the
//! place), what to do with a bad record, the read options, and the reader and writer traits.

use std::fmt;
use std::str::FromStr;

use super::sample::Sample;

/// Where in a file an error is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    /// 1-based line number (text read from the start of a file).
    pub line: Option<u64>,
    /// Byte offset of the line or record.
    pub byte: u64,
}

impl Location {
    /// A byte offset.
    pub fn byte(byte: u64) -> Location {
        Location { line: None, byte }
    }
}

/// What kind of problem a [`DataError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DataErrorKind {
    /// Reading or writing failed.
    Io,
    /// A text line that does not have the `FEN,score,move(,move,score,move)*` shape.
    Syntax,
    /// A FEN that does not parse or is not a legal position.
    BadFen,
    /// A score that is not an integer in −32768..=32767.
    BadScore,
    /// A move that does not parse or is not legal in its position.
    IllegalMove,
    /// A binary record that does not decode (bad code, impossible board, bad field).
    BadRecord,
    /// The data ends inside a record or chunk.
    Truncated,
    /// A binpack chunk that does not start with `BINP` (or has an impossible size).
    BadMagic,
    /// A sample the output format cannot hold (Chess960 castling, a clock out of range).
    Unrepresentable,
}

impl DataErrorKind {
    /// A short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            DataErrorKind::Io => "i/o error",
            DataErrorKind::Syntax => "syntax error",
            DataErrorKind::BadFen => "invalid FEN",
            DataErrorKind::BadScore => "invalid score",
            DataErrorKind::IllegalMove => "illegal move",
            DataErrorKind::BadRecord => "corrupt record",
            DataErrorKind::Truncated => "truncated data",
            DataErrorKind::BadMagic => "bad chunk header",
            DataErrorKind::Unrepresentable => "not representable",
        }
    }
}

/// A bad record or a failed read/write. `Display`: `FILE:LINE: KIND: MESSAGE` or
/// `FILE: byte OFFSET: KIND: MESSAGE`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataError {
    /// The file.
    pub file: String,
    /// Where in the file, if known.
    pub location: Option<Location>,
    /// What went wrong.
    pub kind: DataErrorKind,
    /// Details.
    pub message: String,
}

impl DataError {
    /// A new error.
    pub fn new(
        file: &str,
        location: Option<Location>,
        kind: DataErrorKind,
        message: String,
    ) -> Self {
        DataError {
            file: file.to_string(),
            location,
            kind,
            message,
        }
    }
}

impl fmt::Display for DataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.location {
            Some(Location {
                line: Some(line), ..
            }) => write!(f, "{}:{line}: ", self.file)?,
            Some(Location { line: None, byte }) => write!(f, "{}: byte {byte}: ", self.file)?,
            None => write!(f, "{}: ", self.file)?,
        }
        write!(f, "{}: {}", self.kind.name(), self.message)
    }
}

impl std::error::Error for DataError {}

/// What to do with a bad record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ErrorPolicy {
    /// Count it, report it, go on.
    #[default]
    Skip,
    /// Stop at the first one.
    Fail,
}

impl FromStr for ErrorPolicy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "skip" => Ok(ErrorPolicy::Skip),
            "fail" => Ok(ErrorPolicy::Fail),
            _ => Err(format!("unknown error policy '{s}' (skip, fail)")),
        }
    }
}

/// Options of the readers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    /// Check every binary record fully (legal position, legal move: shakmaty's move generator).
    /// Without it the binary readers still check the board's structure (one king per side, no
    /// pawn on the back ranks, the side not to move not in check) and that the move fits the
    /// board. The text reader always checks fully.
    pub validate: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions { validate: true }
    }
}

/// A stream of samples from one file (or a byte range of it).
pub trait SampleReader: Iterator<Item = Result<Sample, DataError>> + Send {
    /// The byte offset reached so far (for progress bars).
    fn bytes_read(&self) -> u64;
}

/// A sink of samples into one file.
pub trait SampleWriter {
    /// Writes one sample. A [`DataErrorKind::Unrepresentable`] error means the sample was not
    /// written and the writer can go on; any other error is fatal.
    fn write(&mut self, sample: &Sample) -> Result<(), DataError>;

    /// Writes what is buffered and flushes; call once at the end (dropping a writer without it
    /// may lose the tail).
    fn finish(&mut self) -> Result<(), DataError>;
}
