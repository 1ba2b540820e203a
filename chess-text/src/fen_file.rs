//! Files of FENs: one position per line. To accept the project's own TSV outputs and the parity
//! files as input, only the text before the first TAB is taken; blank lines, `#` comments and a
//! header line whose first field is `fen` are skipped. FENs without the clock fields (EPD style)
//! get the defaults. A line may be at most [`MAX_LINE_BYTES`](crate::MAX_LINE_BYTES) long; a
//! longer one is reported as soon as the limit is passed and ends the stream, so that a file
//! without line breaks (`/dev/zero`) costs bounded memory and time.

use std::io::BufRead;
use std::path::Path;

use shakmaty::Setup;

use crate::fen::parse_fen;
use crate::lines::bounded_lines;

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

/// A line of a FEN file that is not a FEN, or a file that cannot be read. `Display`:
/// `FILE:LINE: invalid FEN 'TEXT': REASON`, `FILE:LINE: REASON` for a line that could not be
/// read, `FILE: REASON` for the file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render())]
pub struct FenFileError {
    /// The file (or `-`).
    pub file: String,
    /// 1-based line number (0 when the file itself could not be read).
    pub line: usize,
    /// What is wrong (a [`FenError`](crate::FenError)'s text, or a read error).
    pub reason: String,
}

impl FenFileError {
    fn render(&self) -> String {
        match self.line {
            0 => format!("{}: {}", self.file, self.reason),
            line => format!("{}:{line}: {}", self.file, self.reason),
        }
    }
}

/// Streams the FEN lines of `path` (`-` for standard input), one item per position; a bad line
/// is an `Err` item naming file and line, after which the caller decides whether to go on.
pub fn fen_lines(
    path: &Path,
) -> Result<impl Iterator<Item = Result<FenLine, FenFileError>>, FenFileError> {
    let file_name = path.display().to_string();
    let reader: Box<dyn BufRead> = if path.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        let f = std::fs::File::open(path).map_err(|e| FenFileError {
            file: file_name.clone(),
            line: 0,
            reason: format!("cannot open: {e}"),
        })?;
        Box::new(std::io::BufReader::new(f))
    };
    let mut seen_position = false;
    Ok(bounded_lines(reader)
        .enumerate()
        .filter_map(move |(i, line)| {
            let err = |reason: String| FenFileError {
                file: file_name.clone(),
                line: i + 1,
                reason,
            };
            let line = match line {
                Ok(line) => line,
                Err(reason) => return Some(Err(err(reason.to_string()))),
            };
            let text = line.split('\t').next().unwrap_or("").trim();
            let header = !seen_position && text.eq_ignore_ascii_case("fen");
            if text.is_empty() || text.starts_with('#') || header {
                return None;
            }
            seen_position = true;
            Some(match parse_fen(text) {
                Ok(setup) => Ok(FenLine {
                    line: i + 1,
                    text: text.to_string(),
                    setup,
                }),
                Err(e) => Err(err(e.to_string())),
            })
        }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsv_columns_comments_and_headers_are_skipped_and_errors_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.tsv");
        std::fs::write(
            &path,
            "fen\tscore\n# c\n\n4k3/8/8/8/8/8/8/4K3 w - - 0 1\t12\n4k3/8/44/8/8/8/8/4K3 w - -\n",
        )
        .unwrap();
        let items: Vec<_> = fen_lines(&path).unwrap().collect();
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].as_ref().unwrap().line, 4);
        let e = items[1].as_ref().unwrap_err().to_string();
        assert!(e.ends_with("f.tsv:5: invalid FEN '4k3/8/44/8/8/8/8/4K3 w - -': rank 6 '44' has two digits in a row (write their sum)"), "{e}");
        let missing = fen_lines(&dir.path().join("none"))
            .err()
            .unwrap()
            .to_string();
        assert!(missing.contains("none: cannot open"), "{missing}");
    }
}
