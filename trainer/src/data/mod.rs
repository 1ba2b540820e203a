//! Training data: one [`Sample`] type and streaming readers and writers for four formats.
//!
//! | format | extension | what a record holds |
//! | --- | --- | --- |
//! | [`Format::Text`] | `.txt`, `.csv` | one `FEN,score,move` line per position |
//! | [`Format::Compact`] | `.compact` | the text format with games on one line |
//! | [`Format::Bin`] | `.bin` | Stockfish's 40-byte `PackedSfenValue` records ([`bin`]) |
//! | [`Format::Binpack`] | `.binpack` | Stockfish's chained, compressed chunks ([`binpack`]) |
//!
//! ## The thesis's text format ([`text`])
//!
//! What the thesis's modified `emitPlainEntry` (its appendix A.4) writes: the FEN (six fields),
//! the score (side to move's view) and the move in UCI notation (castling as the king's step,
//! `e1g1`; `0000` for no move), joined by commas:
//!
//! ```text
//! rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1,31,e2e4
//! ```
//!
//! The compact form keeps the positions of one game on one line: after the first
//! `FEN,score,move`, each following position is written as `,played move,score,move`, where
//! the played move leads from the previous position to this one (it need not be the previous
//! best move). A plain line is a compact line without groups, so one reader reads both:
//!
//! ```text
//! rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1,31,e2e4,e2e4,-25,c7c5,c7c5,40,g1f3
//! ```
//!
//! The text formats hold no game result; the ply is the FEN's (`2 * (fullmove − 1) + (black to
//! move)`), which Stockfish's exporter derives from the record's ply. Blank lines and lines
//! starting with `#` are skipped.
//!
//! ## Errors
//!
//! Readers never panic on bad input: each bad record is an `Err` item ([`DataError`]) naming the
//! file and the place (line, or byte offset for the binary formats and for text read from the
//! middle of a file), after which reading goes on with the next record where the format allows
//! it (the next line; the next 40-byte record; the next `BINP` chunk). Callers count errors and
//! skip them or stop, following an [`ErrorPolicy`].
//!
//! ## Ranges
//!
//! Every reader can read a byte range of a file, so that workers can share one file: [`units`]
//! cuts a file into ranges that start on record boundaries (text: any offset, the reader starts
//! at the next line; `.bin`: multiples of 40; `.binpack`: chunk headers).

pub mod bin;
pub mod binpack;
pub mod filter;
mod guard;
pub mod sample;
pub mod synthetic;
pub mod text;

use std::fmt;
use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};
use std::str::FromStr;

pub use sample::Sample;

/// A training-data file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// The thesis's text format, one position per line (reads compact lines too).
    Text,
    /// The thesis's compact text format, one game per line.
    Compact,
    /// Stockfish's `.bin` (40-byte `PackedSfenValue` records).
    Bin,
    /// Stockfish's `.binpack`.
    Binpack,
}

impl Format {
    /// All formats.
    pub const ALL: [Format; 4] = [Format::Text, Format::Compact, Format::Bin, Format::Binpack];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Compact => "compact",
            Format::Bin => "bin",
            Format::Binpack => "binpack",
        }
    }

    /// The format a file name's extension stands for, if any.
    pub fn from_path(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "txt" | "csv" => Format::Text,
            "compact" => Format::Compact,
            "bin" => Format::Bin,
            "binpack" => Format::Binpack,
            _ => return None,
        })
    }

    /// The given format, else the one of `path`'s extension.
    pub fn resolve(given: Option<Format>, path: &Path) -> Result<Format, String> {
        given.or_else(|| Format::from_path(path)).ok_or_else(|| {
            format!(
                "{}: cannot tell the format from the extension (use .txt, .compact, .bin, .binpack or a format flag)",
                path.display()
            )
        })
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| format!("unknown format '{s}' (text, compact, bin, binpack)"))
    }
}

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
pub enum ErrorKind {
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

impl ErrorKind {
    /// A short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Io => "i/o error",
            ErrorKind::Syntax => "syntax error",
            ErrorKind::BadFen => "invalid FEN",
            ErrorKind::BadScore => "invalid score",
            ErrorKind::IllegalMove => "illegal move",
            ErrorKind::BadRecord => "corrupt record",
            ErrorKind::Truncated => "truncated data",
            ErrorKind::BadMagic => "bad chunk header",
            ErrorKind::Unrepresentable => "not representable",
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
    pub kind: ErrorKind,
    /// Details.
    pub message: String,
}

impl DataError {
    /// A new error.
    pub fn new(file: &str, location: Option<Location>, kind: ErrorKind, message: String) -> Self {
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
    /// Writes one sample. An [`ErrorKind::Unrepresentable`] error means the sample was not
    /// written and the writer can go on; any other error is fatal.
    fn write(&mut self, sample: &Sample) -> Result<(), DataError>;

    /// Writes what is buffered and flushes; call once at the end (dropping a writer without it
    /// may lose the tail).
    fn finish(&mut self) -> Result<(), DataError>;
}

fn open_file(path: &Path) -> Result<File, DataError> {
    File::open(path).map_err(|e| {
        DataError::new(
            &path.display().to_string(),
            None,
            ErrorKind::Io,
            format!("cannot open: {e}"),
        )
    })
}

/// Opens a reader over `range` (`start..end` byte offsets; the whole file for `None`).
pub fn open_reader(
    path: &Path,
    format: Format,
    range: Option<(u64, u64)>,
    options: ReadOptions,
) -> Result<Box<dyn SampleReader>, DataError> {
    let name = path.display().to_string();
    let file = open_file(path)?;
    let (start, end) = range.unwrap_or((0, u64::MAX));
    let io_err = |e: std::io::Error| DataError::new(&name, None, ErrorKind::Io, e.to_string());
    Ok(match format {
        Format::Text | Format::Compact => {
            Box::new(text::TextReader::new(name.clone(), file, start, end).map_err(io_err)?)
        }
        Format::Bin => Box::new(
            bin::BinReader::new(name.clone(), BufReader::new(file), start, end, options)
                .map_err(io_err)?,
        ),
        Format::Binpack => Box::new(
            binpack::BinpackReader::new(name.clone(), BufReader::new(file), start, end, options)
                .map_err(io_err)?,
        ),
    })
}

/// The first `n` samples of a data file (its format from `format` or its extension) that
/// `filter` keeps (every one without a filter); the first malformed record is an error.
pub fn first_samples(
    path: &Path,
    format: Option<Format>,
    n: usize,
    filter: Option<&filter::FilterConfig>,
) -> Result<Vec<Sample>, DataError> {
    let name = path.display().to_string();
    let format =
        Format::resolve(format, path).map_err(|e| DataError::new(&name, None, ErrorKind::Io, e))?;
    let mut keep = filter.map(|f| filter::Filter::new(f, 0));
    let mut out = Vec::with_capacity(n.min(1 << 20));
    for sample in open_reader(path, format, None, ReadOptions::default())? {
        if out.len() >= n {
            break;
        }
        let sample = sample?;
        if keep.as_mut().is_none_or(|f| f.keep(&sample)) {
            out.push(sample);
        }
    }
    Ok(out)
}

/// Creates (truncates) `path` and a writer of `format` into it.
pub fn create_writer(path: &Path, format: Format) -> Result<Box<dyn SampleWriter>, DataError> {
    let name = path.display().to_string();
    let file = File::create(path)
        .map_err(|e| DataError::new(&name, None, ErrorKind::Io, format!("cannot create: {e}")))?;
    let out = BufWriter::with_capacity(1 << 20, file);
    Ok(match format {
        Format::Text => Box::new(text::TextWriter::new(name, out, false)),
        Format::Compact => Box::new(text::TextWriter::new(name, out, true)),
        Format::Bin => Box::new(bin::BinWriter::new(name, out)),
        Format::Binpack => Box::new(binpack::BinpackWriter::new(name, out)),
    })
}

/// A byte range of one input file that one worker reads on its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unit {
    /// Index of the file among the inputs.
    pub file: usize,
    /// The file.
    pub path: PathBuf,
    /// Its format.
    pub format: Format,
    /// First byte.
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
}

/// Cuts a file into ranges of about `target` bytes that start on record boundaries (binpack:
/// whole chunks; a damaged chunk header ends the scan and the rest becomes one range, whose
/// reader then reports the damage).
pub fn units(path: &Path, format: Format, target: u64) -> Result<Vec<(u64, u64)>, DataError> {
    let name = path.display().to_string();
    let len = std::fs::metadata(path)
        .map_err(|e| DataError::new(&name, None, ErrorKind::Io, format!("cannot open: {e}")))?
        .len();
    let target = target.max(1);
    Ok(match format {
        Format::Binpack => binpack::chunk_ranges(path, len, target)
            .map_err(|e| DataError::new(&name, None, ErrorKind::Io, e.to_string()))?,
        Format::Bin => {
            let step = target.div_ceil(bin::RECORD_SIZE as u64).max(1) * bin::RECORD_SIZE as u64;
            split_even(len, step)
        }
        Format::Text | Format::Compact => split_even(len, target),
    })
}

fn split_even(len: u64, step: u64) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < len {
        let end = (start + step).min(len);
        out.push((start, end));
        start = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_from_names_and_extensions() {
        assert_eq!(
            Format::from_path(Path::new("a/b.binpack")),
            Some(Format::Binpack)
        );
        assert_eq!(Format::from_path(Path::new("x.BIN")), Some(Format::Bin));
        assert_eq!(Format::from_path(Path::new("x.txt")), Some(Format::Text));
        assert_eq!(
            Format::from_path(Path::new("x.compact")),
            Some(Format::Compact)
        );
        assert_eq!(Format::from_path(Path::new("x.gz")), None);
        assert!(Format::resolve(None, Path::new("x")).is_err());
        assert_eq!("BinPack".parse::<Format>(), Ok(Format::Binpack));
        assert!("zip".parse::<Format>().is_err());
    }

    #[test]
    fn error_display_names_file_and_place() {
        let e = DataError::new(
            "d.txt",
            Some(Location {
                line: Some(3),
                byte: 80,
            }),
            ErrorKind::BadFen,
            "x".into(),
        );
        assert_eq!(e.to_string(), "d.txt:3: invalid FEN: x");
        let e = DataError::new(
            "d.bin",
            Some(Location::byte(40)),
            ErrorKind::Truncated,
            "y".into(),
        );
        assert_eq!(e.to_string(), "d.bin: byte 40: truncated data: y");
    }

    #[test]
    fn even_split_covers_everything() {
        assert_eq!(split_even(10, 4), vec![(0, 4), (4, 8), (8, 10)]);
        assert!(split_even(0, 4).is_empty());
    }
}
