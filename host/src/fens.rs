//! Reading positions from FEN files.
//!
//! One position per line. To accept the project's own TSV outputs and the parity files as input,
//! only the text before the first TAB is taken; blank lines, `#` comments and a header line whose
//! first field is `fen` are skipped. FENs without the clock fields (EPD style) get the defaults.
//! A line may be at most [`MAX_LINE_BYTES`] long (room for the TSV columns after the FEN); a
//! longer one is reported as soon as the limit is passed and ends the stream, so that a file
//! without line breaks (`/dev/zero`) costs bounded memory and time.

use std::fmt;
use std::io::{BufRead, Read};
use std::path::Path;

use plugin_api::{Board, Color, NO_SQUARE};
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, FromSetup, Setup};

use crate::excerpt::{EXCERPT_CHARS, excerpt};

/// The longest line a FEN file may have, in bytes (a FEN is under 100; the rest is room for the
/// TSV columns of `host features` output fed back as input).
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// A position read from a file: the text as written and the parsed setup.
#[derive(Clone, Debug)]
pub struct FenLine {
    /// 1-based line number in the file.
    pub line: usize,
    /// The FEN as written (trimmed).
    pub text: String,
    /// The parsed position (not checked for legality).
    pub setup: Setup,
}

/// A line that is not a FEN. `Display`: `FILE:LINE: invalid FEN 'TEXT': REASON` (the text cut to
/// an excerpt), or `FILE:LINE: REASON` for a line that could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FenError {
    /// The file (or `-`).
    pub file: String,
    /// 1-based line number (0 when the file itself could not be read).
    pub line: usize,
    /// The offending text.
    pub text: String,
    /// Why it was refused.
    pub reason: String,
}

impl fmt::Display for FenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.reason)
        } else if self.text.is_empty() {
            write!(f, "{}:{}: {}", self.file, self.line, self.reason)
        } else {
            write!(
                f,
                "{}:{}: invalid FEN '{}': {}",
                self.file,
                self.line,
                excerpt(&self.text, EXCERPT_CHARS),
                self.reason
            )
        }
    }
}

impl std::error::Error for FenError {}

/// Parses one FEN (clock fields optional).
pub fn parse_fen(text: &str) -> Result<Setup, String> {
    let fen: Fen = text.trim().parse().map_err(|e| format!("{e}"))?;
    Ok(fen.into_setup())
}

/// The ABI board of a setup (no legality check: feature blocks accept any placement).
pub fn board_from_setup(setup: &Setup) -> Board {
    let pos_board = &setup.board;
    let mut by_role = [0u64; 6];
    for role in shakmaty::Role::ALL {
        by_role[plugin_api::convert::role_from_shakmaty(role).index()] = pos_board.by_role(role).0;
    }
    Board {
        by_color: [
            pos_board.by_color(shakmaty::Color::White).0,
            pos_board.by_color(shakmaty::Color::Black).0,
        ],
        by_role,
        castling: setup.castling_rights.0,
        turn: if setup.turn == shakmaty::Color::White {
            Color::White
        } else {
            Color::Black
        },
        ep_square: setup.ep_square.map_or(NO_SQUARE, |sq| u32::from(sq) as u8),
    }
}

/// A legal position from a setup, or the reason it is not one.
pub fn legal_position(setup: &Setup) -> Result<Chess, String> {
    Chess::from_setup(setup.clone(), CastlingMode::Standard).map_err(|e| e.to_string())
}

/// Streams the FEN lines of `path` (`-` for standard input), one item per position; a bad line
/// is an `Err` item naming file and line, after which the caller decides whether to go on.
pub fn fen_lines(path: &Path) -> Result<impl Iterator<Item = Result<FenLine, FenError>>, FenError> {
    let file_name = path.display().to_string();
    let reader: Box<dyn BufRead> = if path.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        let f = std::fs::File::open(path).map_err(|e| FenError {
            file: file_name.clone(),
            line: 0,
            text: String::new(),
            reason: format!("cannot open: {e}"),
        })?;
        Box::new(std::io::BufReader::new(f))
    };
    let mut seen_position = false;
    Ok(bounded_lines(reader)
        .enumerate()
        .filter_map(move |(i, line)| {
            let line_no = i + 1;
            let err = |text: &str, reason: String| FenError {
                file: file_name.clone(),
                line: line_no,
                text: text.to_string(),
                reason,
            };
            let line = match line {
                Ok(line) => line,
                Err(reason) => return Some(Err(err("", reason))),
            };
            let text = line.split('\t').next().unwrap_or("").trim();
            let header = !seen_position && text.eq_ignore_ascii_case("fen");
            if text.is_empty() || text.starts_with('#') || header {
                return None;
            }
            seen_position = true;
            Some(match parse_fen(text) {
                Ok(setup) => Ok(FenLine {
                    line: line_no,
                    text: text.to_string(),
                    setup,
                }),
                Err(reason) => Err(err(text, reason)),
            })
        }))
}

/// The lines of `reader` without their line ends, each at most [`MAX_LINE_BYTES`] long. A read
/// error or a longer line is an `Err` item that ends the stream (the rest of an over-long line is
/// never read); a line that is not UTF-8 is an `Err` item too.
pub fn bounded_lines(mut reader: impl BufRead) -> impl Iterator<Item = Result<String, String>> {
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        let mut buf = Vec::new();
        let limit = MAX_LINE_BYTES as u64 + 1;
        let item = match reader.by_ref().take(limit).read_until(b'\n', &mut buf) {
            Ok(0) => return None,
            Ok(_) if buf.last() != Some(&b'\n') && buf.len() > MAX_LINE_BYTES => {
                done = true;
                Err(format!("line longer than {MAX_LINE_BYTES} bytes"))
            }
            Ok(_) => {
                if buf.last() == Some(&b'\n') {
                    buf.pop();
                    if buf.last() == Some(&b'\r') {
                        buf.pop();
                    }
                }
                String::from_utf8(buf).map_err(|_| "line is not UTF-8 text".to_string())
            }
            Err(e) => {
                done = true;
                Err(format!("cannot read: {e}"))
            }
        };
        Some(item)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_bounded_and_an_endless_one_ends_the_stream() {
        let lines: Vec<_> = bounded_lines(&b"a\r\nb\n\nc"[..]).collect();
        assert_eq!(
            lines,
            [
                Ok("a".into()),
                Ok("b".into()),
                Ok("".into()),
                Ok("c".into())
            ]
        );
        let exact = vec![b'x'; MAX_LINE_BYTES];
        assert_eq!(bounded_lines(&exact[..]).count(), 1);
        let endless = std::io::BufReader::new(std::io::repeat(0));
        let lines: Vec<_> = bounded_lines(endless).collect();
        assert_eq!(
            lines,
            [Err(format!("line longer than {MAX_LINE_BYTES} bytes"))]
        );
    }
}
