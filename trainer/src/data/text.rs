//! The thesis's text formats: `FEN,score,move` lines, and the compact form with a whole game on
//! one line (`FEN,score,move(,played move,score,move)*`). See the [module docs](super) for the
//! syntax.

use chess_text::{EXCERPT_CHARS, excerpt};
use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};

use shakmaty::uci::UciMove;
use shakmaty::{Chess, Position};

use super::sample::{Sample, chess_from_setup, write_uci};
use super::stream::{DataError, DataErrorKind, Location, SampleReader, SampleWriter};

/// Lines longer than this are reported as soon as the limit is passed and skipped without being
/// held in memory.
pub const MAX_LINE: usize = 1 << 20;

/// How far past [`MAX_LINE`] the reader looks for the end of an over-long line before it gives
/// the file up as not text (`/dev/zero` must end, not be skipped forever).
pub const MAX_SKIP: u64 = 16 * MAX_LINE as u64;

/// Streams the samples of the lines that start in a byte range of a text file.
pub struct TextReader<R> {
    file: String,
    reader: BufReader<R>,
    line_no: Option<u64>,
    pos: u64,
    end: u64,
    line: Vec<u8>,
    pending: VecDeque<Result<Sample, DataError>>,
    done: bool,
    /// The rest of an over-long line (already reported) is still to be skipped.
    skipping: bool,
}

impl<R: Read + Seek> TextReader<R> {
    /// A reader of the lines starting in `start..end` (a line starting before `start` belongs to
    /// the range before). Line numbers are known (and reported) only when `start` is 0.
    pub fn new(file: String, inner: R, start: u64, end: u64) -> io::Result<Self> {
        let mut reader = BufReader::with_capacity(1 << 16, inner);
        let mut me_pos = 0;
        if start > 0 {
            // The rest of the line that starts before `start` belongs to the range before.
            reader.seek(SeekFrom::Start(start - 1))?;
            me_pos = start - 1;
        }
        Ok(TextReader {
            file,
            reader,
            line_no: (start == 0).then_some(1),
            pos: me_pos,
            end,
            line: Vec::new(),
            pending: VecDeque::new(),
            done: false,
            skipping: start > 0,
        })
    }

    fn err(&self, at: Location, kind: DataErrorKind, message: String) -> DataError {
        DataError::new(&self.file, Some(at), kind, message)
    }
}

/// Reads up to and including the next `\n` into `out` (without it), unless the line has more
/// than `limit` bytes: then it stops right there, leaving the rest unread. Returns the bytes
/// consumed and whether the line was too long.
fn read_line_limited(
    reader: &mut impl BufRead,
    out: &mut Vec<u8>,
    limit: usize,
) -> io::Result<(usize, bool)> {
    out.clear();
    let mut consumed = 0;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok((consumed, false));
        }
        let (take, found) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        let content = if found { &buf[..take - 1] } else { buf };
        if out.len() + content.len() > limit {
            let keep = limit + 1 - out.len();
            reader.consume(keep);
            out.clear();
            return Ok((consumed + keep, true));
        }
        out.extend_from_slice(content);
        reader.consume(take);
        consumed += take;
        if found {
            return Ok((consumed, false));
        }
    }
}

/// Discards up to and including the next `\n`, reading at most `max` bytes. Returns the bytes
/// consumed and whether the line ended (a `\n` or the end of the input) within them.
fn skip_line(reader: &mut impl BufRead, max: u64) -> io::Result<(u64, bool)> {
    let mut consumed = 0u64;
    while consumed < max {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok((consumed, true));
        }
        let room = (max - consumed).min(buf.len() as u64) as usize;
        if let Some(i) = buf[..room].iter().position(|&b| b == b'\n') {
            reader.consume(i + 1);
            return Ok((consumed + i as u64 + 1, true));
        }
        reader.consume(room);
        consumed += room as u64;
    }
    Ok((consumed, false))
}

/// Parses a UCI move in `pos` (`0000` is no move).
fn parse_move(text: &str, pos: &Chess) -> Result<Option<shakmaty::Move>, String> {
    let text = text.trim();
    if text == "0000" {
        return Ok(None);
    }
    let quoted = || excerpt(text, EXCERPT_CHARS);
    let uci =
        UciMove::from_ascii(text.as_bytes()).map_err(|_| format!("bad move '{}'", quoted()))?;
    uci.to_move(pos)
        .map(Some)
        .map_err(|_| format!("illegal move '{}'", quoted()))
}

fn parse_score(text: &str) -> Result<i16, String> {
    text.trim()
        .parse::<i16>()
        .map_err(|_| format!("bad score '{}'", excerpt(text.trim(), EXCERPT_CHARS)))
}

fn abi_move(m: Option<shakmaty::Move>) -> Option<plugin_api::Move> {
    m.as_ref().and_then(plugin_api::move_from_shakmaty)
}

/// Parses one line into samples (pushed to `out`), stopping at the first error, which is
/// returned with its kind and the 1-based index of the position in the line.
fn parse_line(
    line: &str,
    out: &mut VecDeque<Result<Sample, DataError>>,
) -> Result<(), (DataErrorKind, String)> {
    let fields: Vec<&str> = line.split(',').collect();
    if fields.len() < 3 || !(fields.len() - 3).is_multiple_of(3) {
        return Err((
            DataErrorKind::Syntax,
            format!(
                "expected FEN,score,move followed by groups of played move,score,move; got {} fields",
                fields.len()
            ),
        ));
    }
    let fen = excerpt(fields[0].trim(), EXCERPT_CHARS);
    let setup = chess_text::parse_fen(fields[0])
        .map_err(|e| (DataErrorKind::BadFen, format!("'{fen}': {}", e.reason())))?;
    let mut pos =
        chess_from_setup(setup).map_err(|e| (DataErrorKind::BadFen, format!("'{fen}': {e}")))?;
    let score = parse_score(fields[1]).map_err(|m| (DataErrorKind::BadScore, m))?;
    let best = parse_move(fields[2], &pos).map_err(|m| (DataErrorKind::IllegalMove, m))?;
    let mut sample = Sample::from_position(&pos, score, abi_move(best), None);
    out.push_back(Ok(sample));
    for (i, group) in fields[3..].chunks(3).enumerate() {
        let at = |m: String| format!("position {} of the line: {m}", i + 2);
        let played = parse_move(group[0], &pos)
            .map_err(|m| (DataErrorKind::IllegalMove, at(m)))?
            .ok_or_else(|| (DataErrorKind::IllegalMove, at("played move 0000".into())))?;
        pos.play_unchecked(played);
        let score = parse_score(group[1]).map_err(|m| (DataErrorKind::BadScore, at(m)))?;
        let best = parse_move(group[2], &pos).map_err(|m| (DataErrorKind::IllegalMove, at(m)))?;
        let ply = sample.ply.wrapping_add(1);
        sample = Sample::from_position(&pos, score, abi_move(best), None);
        sample.ply = ply;
        out.push_back(Ok(sample));
    }
    Ok(())
}

impl<R: Read + Seek + Send> Iterator for TextReader<R> {
    type Item = Result<Sample, DataError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(item) = self.pending.pop_front() {
                return Some(item);
            }
            if self.skipping {
                self.skipping = false;
                let at = Location {
                    line: None,
                    byte: self.pos,
                };
                match skip_line(&mut self.reader, MAX_SKIP) {
                    Ok((n, true)) => self.pos += n,
                    Ok((_, false)) => {
                        self.done = true;
                        return Some(Err(self.err(
                            at,
                            DataErrorKind::Syntax,
                            format!("no line break within {MAX_SKIP} bytes: not a text file; the rest is not read"),
                        )));
                    }
                    Err(e) => {
                        self.done = true;
                        return Some(Err(self.err(at, DataErrorKind::Io, e.to_string())));
                    }
                }
                continue;
            }
            if self.done || self.pos >= self.end {
                return None;
            }
            let at = Location {
                line: self.line_no,
                byte: self.pos,
            };
            let mut line = std::mem::take(&mut self.line);
            let read = read_line_limited(&mut self.reader, &mut line, MAX_LINE);
            let (n, too_long) = match read {
                Ok(r) => r,
                Err(e) => {
                    self.done = true;
                    self.line = line;
                    return Some(Err(self.err(at, DataErrorKind::Io, e.to_string())));
                }
            };
            if n == 0 {
                self.done = true;
                self.line = line;
                return None;
            }
            self.pos += n as u64;
            self.line_no = self.line_no.map(|l| l + 1);
            if too_long {
                self.skipping = true;
                self.line = line;
                return Some(Err(self.err(
                    at,
                    DataErrorKind::Syntax,
                    format!("line longer than {MAX_LINE} bytes"),
                )));
            }
            let result = match std::str::from_utf8(&line) {
                Err(_) => Err((DataErrorKind::Syntax, "line is not UTF-8".to_string())),
                Ok(text) => {
                    let text = text.trim();
                    if text.is_empty() || text.starts_with('#') {
                        Ok(())
                    } else {
                        parse_line(text, &mut self.pending)
                    }
                }
            };
            self.line = line;
            if let Err((kind, message)) = result {
                self.pending.push_back(Err(self.err(at, kind, message)));
            }
        }
    }
}

impl<R: Read + Seek + Send> SampleReader for TextReader<R> {
    fn bytes_read(&self) -> u64 {
        self.pos
    }
}

/// Writes the text format, or with `compact` the compact form: a sample that follows the
/// previous one in a game (one ply later, reachable by one legal move, same halfmove clock
/// rule) continues the line.
pub struct TextWriter<W: Write> {
    file: String,
    out: W,
    compact: bool,
    prev: Option<(Sample, Chess)>,
    line_open: bool,
    buf: String,
}

impl<W: Write> TextWriter<W> {
    /// A writer into `out`; `file` names it in errors.
    pub fn new(file: String, out: W, compact: bool) -> Self {
        TextWriter {
            file,
            out,
            compact,
            prev: None,
            line_open: false,
            buf: String::with_capacity(256),
        }
    }

    /// The underlying writer (call [`SampleWriter::finish`] first).
    pub fn into_inner(self) -> W {
        self.out
    }

    fn io(&self, e: io::Error) -> DataError {
        DataError::new(&self.file, None, DataErrorKind::Io, e.to_string())
    }
}

/// The legal move of `prev_pos` that leads to `next`'s position, if any.
fn connecting_move(prev: &Sample, prev_pos: &Chess, next: &Sample) -> Option<shakmaty::Move> {
    if next.ply != prev.ply.wrapping_add(1) || next.board.turn == prev.board.turn {
        return None;
    }
    // A move changes at most four squares (castling).
    let changed = (0..2)
        .map(|c| prev.board.by_color[c] ^ next.board.by_color[c])
        .fold(0, |a, b| a | b);
    if changed.count_ones() > 4 {
        return None;
    }
    let leads_there = |m: shakmaty::Move| {
        let mut p = prev_pos.clone();
        p.play_unchecked(m);
        plugin_api::board_from_position(&p) == next.board && p.halfmoves() == u32::from(next.rule50)
    };
    if let Some(best) = prev.best_move.map(|m| plugin_api::move_to_shakmaty(&m))
        && prev_pos.is_legal(best)
        && leads_there(best)
    {
        return Some(best);
    }
    prev_pos.legal_moves().into_iter().find(|&m| leads_there(m))
}

impl<W: Write> SampleWriter for TextWriter<W> {
    fn write(&mut self, s: &Sample) -> Result<(), DataError> {
        self.buf.clear();
        let connecting = if self.compact {
            self.prev
                .as_ref()
                .and_then(|(p, pos)| connecting_move(p, pos, s).map(|m| (m, pos)))
        } else {
            None
        };
        if let Some((m, prev_pos)) = connecting {
            let mut pos = prev_pos.clone();
            pos.play_unchecked(m);
            self.buf.push(',');
            let played = plugin_api::move_from_shakmaty(&m);
            write_uci(&mut self.buf, played.as_ref());
            self.buf.push(',');
            self.buf.push_str(&s.score.to_string());
            self.buf.push(',');
            write_uci(&mut self.buf, s.best_move.as_ref());
            self.prev = Some((*s, pos));
        } else {
            if self.line_open {
                self.buf.push('\n');
            }
            self.buf.push_str(&s.fen());
            self.buf.push(',');
            self.buf.push_str(&s.score.to_string());
            self.buf.push(',');
            write_uci(&mut self.buf, s.best_move.as_ref());
            if self.compact {
                self.line_open = true;
                self.prev = s.to_chess().ok().map(|pos| (*s, pos));
            } else {
                self.buf.push('\n');
            }
        }
        let r = self.out.write_all(self.buf.as_bytes());
        r.map_err(|e| self.io(e))
    }

    fn finish(&mut self) -> Result<(), DataError> {
        if self.line_open {
            self.line_open = false;
            self.prev = None;
            let r = self.out.write_all(b"\n");
            r.map_err(|e| self.io(e))?;
        }
        let r = self.out.flush();
        r.map_err(|e| self.io(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn read_all(text: &str, start: u64, end: u64) -> Vec<Result<Sample, DataError>> {
        TextReader::new(
            "t.txt".into(),
            Cursor::new(text.as_bytes().to_vec()),
            start,
            end,
        )
        .unwrap()
        .collect()
    }

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

    #[test]
    fn reads_plain_and_compact_lines() {
        let text =
            format!("{START},31,e2e4\n\n# comment\n{START},31,e2e4,e2e4,-25,c7c5,c7c5,40,g1f3\r\n");
        let all: Vec<Sample> = read_all(&text, 0, u64::MAX)
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert_eq!(all.len(), 4);
        assert_eq!(all[0], all[1]);
        assert_eq!(all[0].score, 31);
        assert_eq!(all[0].ply, 0);
        assert_eq!(all[0].result, None);
        assert_eq!(
            all[2].fen(),
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
        );
        assert_eq!((all[2].score, all[2].ply), (-25, 1));
        assert_eq!(
            all[3].fen(),
            "rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"
        );
        assert_eq!(
            super::super::sample::uci(&all[3].best_move.unwrap()),
            "g1f3"
        );
    }

    #[test]
    fn bad_lines_are_reported_with_line_numbers_and_skipped() {
        let text = format!(
            "{START},31,e2e4\nnot a fen,1,e2e4\n{START},x,e2e4\n{START},3,e2e5\n{START},3\n{START},1,e2e4,e2e4,5,d7d5,h1h8,0,0000\n{START},2,0000\n"
        );
        let items = read_all(&text, 0, u64::MAX);
        let errors: Vec<String> = items
            .iter()
            .filter_map(|r| r.as_ref().err().map(|e| e.to_string()))
            .collect();
        assert_eq!(errors.len(), 5, "{errors:?}");
        assert!(
            errors[0].starts_with("t.txt:2: invalid FEN"),
            "{}",
            errors[0]
        );
        assert!(
            errors[1].starts_with("t.txt:3: invalid score"),
            "{}",
            errors[1]
        );
        assert!(
            errors[2].starts_with("t.txt:4: illegal move"),
            "{}",
            errors[2]
        );
        assert!(
            errors[3].starts_with("t.txt:5: syntax error"),
            "{}",
            errors[3]
        );
        assert!(errors[4].contains("t.txt:6: illegal move: position 3 of the line"));
        let ok: Vec<&Sample> = items.iter().filter_map(|r| r.as_ref().ok()).collect();
        // Line 1, the first two positions of line 6, line 7.
        assert_eq!(ok.len(), 4);
        assert_eq!(ok[3].best_move, None);
    }

    #[test]
    fn ranges_split_at_line_starts() {
        let text = format!("{START},1,e2e4\n{START},2,e2e4\n{START},3,e2e4\n");
        let len = text.len() as u64;
        for cut in 0..len {
            let a = read_all(&text, 0, cut);
            let b = read_all(&text, cut, len);
            let scores: Vec<i16> = a
                .iter()
                .chain(&b)
                .map(|r| r.as_ref().unwrap().score)
                .collect();
            assert_eq!(scores, vec![1, 2, 3], "cut at {cut}");
        }
        // Errors in a range read from the middle carry byte offsets.
        let bad = format!("{START},1,e2e4\nxx,1,e2e4\n");
        let items = read_all(&bad, 5, bad.len() as u64);
        let e = items[0].as_ref().unwrap_err();
        assert_eq!(
            e.location,
            Some(Location::byte(text.find('\n').unwrap() as u64 + 1))
        );
    }

    #[test]
    fn overlong_lines_are_skipped() {
        let mut text = "x".repeat(MAX_LINE + 10);
        text.push_str(&format!("\n{START},1,e2e4\n"));
        let items = read_all(&text, 0, u64::MAX);
        assert!(items[0].as_ref().unwrap_err().message.contains("longer"));
        assert_eq!(items[1].as_ref().unwrap().score, 1);
    }

    #[test]
    fn compact_writer_chains_games() {
        let text = format!("{START},31,e2e4,e2e4,-25,c7c5,e7e5,40,g1f3\n{START},7,d2d4\n");
        let samples: Vec<Sample> = read_all(&text, 0, u64::MAX)
            .into_iter()
            .map(Result::unwrap)
            .collect();
        // e2e4 played as the best move, then e7e5 played although c7c5 was the best move.
        let mut w = TextWriter::new("o".into(), Vec::new(), true);
        for s in &samples {
            w.write(s).unwrap();
        }
        w.finish().unwrap();
        let out = String::from_utf8(w.into_inner()).unwrap();
        assert_eq!(out, text);
        let mut w = TextWriter::new("o".into(), Vec::new(), false);
        for s in &samples {
            w.write(s).unwrap();
        }
        w.finish().unwrap();
        let plain = String::from_utf8(w.into_inner()).unwrap();
        assert_eq!(plain.lines().count(), 4);
        assert_eq!(plain.lines().next().unwrap(), format!("{START},31,e2e4"));
    }
}
