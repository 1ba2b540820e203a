//! Lines of text read in bounded memory, and short excerpts of bad input for error messages: an
//! error names the bad input, but a 10 MB line must not become a 10 MB message, nor a file
//! without line breaks (`/dev/zero`) an endless read.

use std::borrow::Cow;
use std::io::{BufRead, Read};

/// The longest line a text input may have, in bytes (a FEN is under 100; the rest is room for
/// the TSV columns of `host features` output fed back as input).
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// How many characters of a bad input an error message quotes by default.
pub const EXCERPT_CHARS: usize = 80;

/// `text` cut to at most `max_chars` characters, with `...` appended when something was cut.
///
/// ```
/// assert_eq!(chess_text::excerpt("e2e4", 10), "e2e4");
/// assert_eq!(chess_text::excerpt("abcdefgh", 3), "abc...");
/// ```
pub fn excerpt(text: &str, max_chars: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max_chars) {
        None => Cow::Borrowed(text),
        Some((cut, _)) => Cow::Owned(format!("{}...", &text[..cut])),
    }
}

/// Why a line of text could not be read. `Display`: one line, for the caller to prefix with the
/// file and line number.
#[derive(Debug, thiserror::Error)]
pub enum LineError {
    /// A line longer than [`MAX_LINE_BYTES`] (the rest of it is never read).
    #[error("line longer than {MAX_LINE_BYTES} bytes")]
    TooLong,
    /// A line that is not UTF-8.
    #[error("line is not UTF-8 text")]
    NotUtf8,
    /// The reader failed.
    #[error("cannot read: {0}")]
    Read(#[from] std::io::Error),
}

/// The lines of `reader` without their line ends, each at most [`MAX_LINE_BYTES`] long. A read
/// error or a longer line is an `Err` item that ends the stream (the rest of an over-long line is
/// never read); a line that is not UTF-8 is an `Err` item too.
pub fn bounded_lines(mut reader: impl BufRead) -> impl Iterator<Item = Result<String, LineError>> {
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
                Err(LineError::TooLong)
            }
            Ok(_) => {
                if buf.last() == Some(&b'\n') {
                    buf.pop();
                    if buf.last() == Some(&b'\r') {
                        buf.pop();
                    }
                }
                String::from_utf8(buf).map_err(|_| LineError::NotUtf8)
            }
            Err(e) => {
                done = true;
                Err(LineError::Read(e))
            }
        };
        Some(item)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_cut_on_character_boundaries() {
        assert_eq!(excerpt("", 3), "");
        assert_eq!(excerpt("abc", 3), "abc");
        assert_eq!(excerpt("abcd", 3), "abc...");
        assert_eq!(excerpt("ééééé", 2), "éé...");
        assert!(matches!(excerpt("short", 80), Cow::Borrowed(_)));
    }

    #[test]
    fn lines_are_bounded_and_an_endless_one_ends_the_stream() {
        let lines: Vec<_> = bounded_lines(&b"a\r\nb\n\nc"[..])
            .map(|l| l.map_err(|e| e.to_string()))
            .collect();
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
        assert!(matches!(lines[..], [Err(LineError::TooLong)]), "{lines:?}");
        assert_eq!(
            LineError::TooLong.to_string(),
            format!("line longer than {MAX_LINE_BYTES} bytes")
        );
        let not_text: Vec<_> = bounded_lines(&b"ok\n\xff\n"[..]).collect();
        assert!(
            matches!(not_text[1], Err(LineError::NotUtf8)),
            "{not_text:?}"
        );
    }
}
