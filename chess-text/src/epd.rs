//! EPD lines and opening books. An EPD line is a FEN's first four fields (board, side to move,
//! castling, en passant) followed by operations (`id "x"; c0 "y";`), or by the two clocks of a
//! full FEN. A book is a file of them: one position per line, blank lines and `#` comments
//! skipped, every position checked strictly and for legality. The tournaments' openings
//! (`arena`) and self-play's start positions (`trainer gensfen`) are read here alike.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use shakmaty::Chess;

use crate::fen::{FenError, legal_position, parse_fen};
use crate::lines::{EXCERPT_CHARS, bounded_lines, excerpt};

/// One position of a book: the full FEN (six fields, clocks `0 1` where the line had
/// operations instead) and the position.
#[derive(Clone, Debug)]
pub struct BookPosition {
    /// Six fields, as the line wrote its first four (and its clocks, if it had them).
    pub fen: String,
    /// The legal position.
    pub position: Chess,
}

/// Parses one EPD (or FEN) line: strict FEN syntax for its first four fields, and a legal
/// position.
pub fn parse_epd(line: &str) -> Result<BookPosition, FenError> {
    let fields: Vec<&str> = line.split_ascii_whitespace().collect();
    let clocks =
        fields.len() >= 6 && fields[4].parse::<u32>().is_ok() && fields[5].parse::<u32>().is_ok();
    if fields.len() < 4 {
        return Err(FenError::Syntax {
            text: excerpt(line.trim(), EXCERPT_CHARS).into_owned(),
            reason: format!(
                "an EPD line has a board, the side to move, castling and en passant, not {} fields",
                fields.len()
            ),
        });
    }
    let fen = if clocks {
        fields[..6].join(" ")
    } else {
        format!("{} 0 1", fields[..4].join(" "))
    };
    let setup = parse_fen(&fen)?;
    let position = legal_position(&setup, &fen)?;
    Ok(BookPosition { fen, position })
}

/// A book that cannot be read. `Display`: `FILE:LINE: REASON`, or `FILE: REASON`.
#[derive(Debug, thiserror::Error)]
pub enum BookError {
    /// The file cannot be opened.
    #[error("cannot open book {}: {source}", path.display())]
    Open {
        /// The book.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line cannot be read (not UTF-8, too long).
    #[error("{}:{line}: {reason}", path.display())]
    Read {
        /// The book.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// Why.
        reason: String,
    },
    /// A line is not a legal position.
    #[error("{}:{line}: invalid EPD line '{text}': {reason}", path.display())]
    Position {
        /// The book.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The line (an excerpt).
        text: String,
        /// What is wrong with it ([`FenError::reason`]).
        reason: String,
    },
    /// The book holds no position.
    #[error("book {} has no positions", path.display())]
    Empty {
        /// The book.
        path: PathBuf,
    },
}

/// Reads every position of the book at `path`, in file order.
pub fn read_book(path: &Path) -> Result<Vec<BookPosition>, BookError> {
    let file = File::open(path).map_err(|source| BookError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    let mut out = Vec::new();
    for (i, line) in bounded_lines(BufReader::new(file)).enumerate() {
        let line_no = i + 1;
        let line = line.map_err(|reason| BookError::Read {
            path: path.to_path_buf(),
            line: line_no,
            reason: reason.to_string(),
        })?;
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        out.push(parse_epd(t).map_err(|e| BookError::Position {
            path: path.to_path_buf(),
            line: line_no,
            text: excerpt(t, EXCERPT_CHARS).into_owned(),
            reason: e.reason().to_string(),
        })?);
    }
    if out.is_empty() {
        return Err(BookError::Empty {
            path: path.to_path_buf(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epd_and_fen_lines_become_full_fens() {
        assert_eq!(
            parse_epd("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - id \"e4\";")
                .unwrap()
                .fen,
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
        );
        let fen = "r1bqkbnr/1ppp1ppp/p1n5/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 0 4";
        assert_eq!(parse_epd(fen).unwrap().fen, fen);
        assert!(parse_epd("8/8/8/8 w").is_err());
        assert!(parse_epd("8/8/8/8/8/8/8/8 w - -").is_err()); // no kings
    }

    #[test]
    fn a_bad_en_passant_square_is_refused_not_dropped() {
        // Where the tournaments refused the position and self-play dropped the square: both
        // refuse it now, on the wrong rank and on the right rank with no pawn behind it.
        for bad in [
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e4",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq e3",
        ] {
            assert!(parse_epd(bad).is_err(), "{bad}");
        }
        // A legal one, even without a pawn to take it.
        assert!(parse_epd("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3").is_ok());
    }

    #[test]
    fn book_errors_name_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("o.epd");
        std::fs::write(
            &path,
            "# comment\nrnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -\n\nnot a fen\n",
        )
        .unwrap();
        let error = read_book(&path).unwrap_err().to_string();
        assert!(
            error.ends_with(
                "o.epd:4: invalid EPD line 'not a fen': an EPD line has a board, the side to move, castling and en passant, not 3 fields"
            ),
            "{error}"
        );
        assert!(read_book(&dir.path().join("missing.epd")).is_err());
        std::fs::write(&path, "# nothing\n\n").unwrap();
        assert!(
            read_book(&path)
                .unwrap_err()
                .to_string()
                .contains("no positions")
        );
    }
}
