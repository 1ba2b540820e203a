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
mod invalid;
pub mod sample;
pub mod score_units;
pub mod skip;
mod stream;
pub mod synthetic;
pub mod text;

use std::fmt;
use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};
use std::str::FromStr;

pub use invalid::InvalidSample;
pub use sample::Sample;
pub use stream::{
    DataError, DataErrorKind, ErrorPolicy, Location, ReadOptions, SampleReader, SampleWriter,
};

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
    pub fn resolve(given: Option<Format>, path: &Path) -> Result<Format, UnknownFormat> {
        given
            .or_else(|| Format::from_path(path))
            .ok_or_else(|| UnknownFormat(path.display().to_string()))
    }
}

/// A data file whose format its extension does not tell (and none was given): the file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{0}: cannot tell the format from the extension (use .txt, .compact, .bin, .binpack or a format flag)"
)]
pub struct UnknownFormat(pub String);

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

fn open_file(path: &Path) -> Result<File, DataError> {
    File::open(path).map_err(|e| {
        DataError::new(
            &path.display().to_string(),
            None,
            DataErrorKind::Io,
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
    let io_err = |e: std::io::Error| DataError::new(&name, None, DataErrorKind::Io, e.to_string());
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
    let format = Format::resolve(format, path)
        .map_err(|e| DataError::new(&name, None, DataErrorKind::Io, e.to_string()))?;
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
    let file = File::create(path).map_err(|e| {
        DataError::new(
            &name,
            None,
            DataErrorKind::Io,
            format!("cannot create: {e}"),
        )
    })?;
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
        .map_err(|e| DataError::new(&name, None, DataErrorKind::Io, format!("cannot open: {e}")))?
        .len();
    let target = target.max(1);
    Ok(match format {
        Format::Binpack => binpack::chunk_ranges(path, len, target)
            .map_err(|e| DataError::new(&name, None, DataErrorKind::Io, e.to_string()))?,
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
            DataErrorKind::BadFen,
            "x".into(),
        );
        assert_eq!(e.to_string(), "d.txt:3: invalid FEN: x");
        let e = DataError::new(
            "d.bin",
            Some(Location::byte(40)),
            DataErrorKind::Truncated,
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
