//! PGN games: the record the tournament writes, and a reader for rating existing PGN files.
//!
//! Export format as in the PGN standard: the seven-tag roster first, then other tags, a blank
//! line, SAN movetext wrapped below 80 columns, the result token, and a blank line.
//!
//! The reader ([`read_games`]) streams games from any `BufRead`. It accepts what real PGN files
//! contain: `{...}` comments (also spanning lines), `;` rest-of-line comments, `%` escape lines,
//! NAGs (`$12`) and `!`/`?` suffixes, recursive variations `( ... )` (skipped), move numbers
//! (`12.`, `12...`, `12.e4`), escaped tag values (`\"`, `\\`), several tags on one line, CRLF
//! line ends and a byte-order mark. Moves are kept as SAN text; they are not checked against
//! the rules. The result is the `Result` tag when it is present and valid, otherwise the
//! movetext's termination token (`1-0`, `0-1`, `1/2-1/2`, `*`); a game cut off at the end of
//! the file keeps its tags and moves. Errors name the line; the iterator stops after one.

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::path::Path;

/// The result of a game as PGN writes it.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Outcome {
    /// `1-0`.
    WhiteWins,
    /// `0-1`.
    BlackWins,
    /// `1/2-1/2`.
    Draw,
    /// `*`: unfinished or unknown.
    #[default]
    Unknown,
}

impl Outcome {
    /// The PGN result token.
    pub fn token(self) -> &'static str {
        match self {
            Outcome::WhiteWins => "1-0",
            Outcome::BlackWins => "0-1",
            Outcome::Draw => "1/2-1/2",
            Outcome::Unknown => "*",
        }
    }

    /// Parses a PGN result token.
    pub fn from_token(token: &str) -> Option<Outcome> {
        match token {
            "1-0" => Some(Outcome::WhiteWins),
            "0-1" => Some(Outcome::BlackWins),
            "1/2-1/2" => Some(Outcome::Draw),
            "*" => Some(Outcome::Unknown),
            _ => None,
        }
    }

    /// White's score: 1, ½ or 0; `None` when unknown.
    pub fn white_score(self) -> Option<f64> {
        match self {
            Outcome::WhiteWins => Some(1.0),
            Outcome::BlackWins => Some(0.0),
            Outcome::Draw => Some(0.5),
            Outcome::Unknown => None,
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.token())
    }
}

/// One game: tags in order, SAN moves, optional per-move comments, result.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PgnGame {
    /// Tag pairs in the order they are written (`Event`, `Site`, `Date`, `Round`, `White`,
    /// `Black`, `Result` first by convention; `FEN`/`SetUp` for openings from a book).
    pub tags: Vec<(String, String)>,
    /// Moves in SAN, from the game's starting position.
    pub moves: Vec<String>,
    /// A comment after each move (empty for none), e.g. `+0.31/12 0.105s`; shorter than `moves`
    /// or empty when there are none.
    pub comments: Vec<String>,
    /// The result.
    pub outcome: Option<Outcome>,
}

impl PgnGame {
    /// The value of a tag, if present.
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Sets a tag, replacing an existing one of the same name.
    pub fn set_tag(&mut self, name: &str, value: impl Into<String>) {
        let value = value.into();
        match self.tags.iter_mut().find(|(k, _)| k == name) {
            Some(slot) => slot.1 = value,
            None => self.tags.push((name.to_string(), value)),
        }
    }
}

/// Escapes a tag value: backslash and double quote get a backslash.
fn escape(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Writes one game in PGN export format, followed by a blank line.
pub fn write_game(out: &mut impl Write, game: &PgnGame) -> io::Result<()> {
    let outcome = game.outcome.unwrap_or(Outcome::Unknown);
    for (name, value) in &game.tags {
        writeln!(out, "[{name} \"{}\"]", escape(value))?;
    }
    writeln!(out)?;
    let fullmove_start = game
        .tag("FEN")
        .and_then(|fen| fen.split_whitespace().nth(5)?.parse::<u32>().ok())
        .unwrap_or(1);
    let black_first = game
        .tag("FEN")
        .and_then(|fen| fen.split_whitespace().nth(1))
        .is_some_and(|stm| stm == "b");
    let mut tokens: Vec<String> = Vec::with_capacity(game.moves.len() * 2 + 1);
    for (i, san) in game.moves.iter().enumerate() {
        let ply = i + usize::from(black_first);
        let number = fullmove_start as usize + ply / 2;
        if ply % 2 == 0 {
            tokens.push(format!("{number}. {san}"));
        } else if i == 0 {
            tokens.push(format!("{number}... {san}"));
        } else {
            tokens.push(san.clone());
        }
        if let Some(comment) = game.comments.get(i).filter(|c| !c.is_empty()) {
            tokens.push(format!("{{{}}}", comment.replace('}', ")")));
        }
    }
    tokens.push(outcome.token().to_string());
    let mut line_len = 0;
    for token in tokens {
        if line_len > 0 && line_len + 1 + token.len() > 79 {
            writeln!(out)?;
            line_len = 0;
        }
        if line_len > 0 {
            write!(out, " ")?;
            line_len += 1;
        }
        write!(out, "{token}")?;
        line_len += token.len();
    }
    writeln!(out)?;
    writeln!(out)
}

/// A malformed PGN input: the 1-based line where it was found, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgnError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong, in one line.
    pub message: String,
}

impl fmt::Display for PgnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for PgnError {}

/// Streams the games of a PGN text; see the module docs for what is accepted.
///
/// Yields `Err` once for a malformed input and then stops.
pub fn read_games<R: BufRead>(reader: R) -> PgnReader<R> {
    PgnReader {
        input: reader,
        line_no: 0,
        pending: None,
        done: false,
        first_line: true,
    }
}

/// Reads all games of a PGN file.
pub fn read_file(path: &Path) -> Result<Vec<PgnGame>, PgnFileError> {
    let at = |line: usize, message: String| PgnFileError {
        path: path.to_path_buf(),
        line,
        message,
    };
    let file = File::open(path).map_err(|e| at(0, e.to_string()))?;
    read_games(BufReader::new(file))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| at(e.line, e.message))
}

/// A PGN file that cannot be read. `Display`: `PATH:LINE: MESSAGE` (`PATH: MESSAGE` for the
/// file itself).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", match line { 0 => format!("{}: {message}", path.display()), l => format!("{}:{l}: {message}", path.display()) })]
pub struct PgnFileError {
    /// The file.
    pub path: std::path::PathBuf,
    /// 1-based line (0: the file itself).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// The iterator returned by [`read_games`].
pub struct PgnReader<R> {
    input: R,
    line_no: usize,
    /// A line (or the rest of one) to process before reading more: (line number, text).
    pending: Option<(usize, String)>,
    done: bool,
    first_line: bool,
}

/// Where the movetext tokenizer stands inside one game.
#[derive(Default)]
struct GameState {
    game: PgnGame,
    /// Any tag or movetext seen.
    started: bool,
    /// Any movetext seen (a following tag line starts a new game).
    in_movetext: bool,
    /// Inside `{...}`: the line where it opened.
    comment_from: Option<usize>,
    comment_text: String,
    /// Nesting depth of `( ... )`, with the line of the outermost open parenthesis.
    depth: usize,
    depth_from: usize,
    /// The movetext's termination token, if seen.
    termination: Option<Outcome>,
}

impl GameState {
    fn finish(mut self) -> PgnGame {
        let from_tag = self.game.tag("Result").and_then(Outcome::from_token);
        self.game.outcome = from_tag.or(self.termination).or(Some(Outcome::Unknown));
        while self.game.comments.last().is_some_and(|c| c.is_empty()) {
            self.game.comments.pop();
        }
        self.game
    }

    fn add_comment(&mut self, text: &str) {
        let text = text.trim();
        if text.is_empty() || self.depth > 0 || self.game.moves.is_empty() {
            return;
        }
        let index = self.game.moves.len() - 1;
        if self.game.comments.len() <= index {
            self.game.comments.resize(index + 1, String::new());
        }
        let slot = &mut self.game.comments[index];
        if !slot.is_empty() {
            slot.push(' ');
        }
        slot.push_str(text);
    }
}

impl<R: BufRead> PgnReader<R> {
    fn next_line(&mut self) -> Result<Option<(usize, String)>, PgnError> {
        if let Some(p) = self.pending.take() {
            return Ok(Some(p));
        }
        let mut buf = Vec::new();
        let n = self
            .input
            .read_until(b'\n', &mut buf)
            .map_err(|e| PgnError {
                line: self.line_no + 1,
                message: format!("read error: {e}"),
            })?;
        if n == 0 {
            return Ok(None);
        }
        self.line_no += 1;
        let mut text = String::from_utf8_lossy(&buf).into_owned();
        if self.first_line {
            self.first_line = false;
            if let Some(rest) = text.strip_prefix('\u{feff}') {
                text = rest.to_string();
            }
        }
        while text.ends_with('\n') || text.ends_with('\r') {
            text.pop();
        }
        Ok(Some((self.line_no, text)))
    }

    fn read_game(&mut self) -> Result<Option<PgnGame>, PgnError> {
        let mut st = GameState::default();
        loop {
            let Some((line_no, line)) = self.next_line()? else {
                if let Some(from) = st.comment_from {
                    return Err(PgnError {
                        line: from,
                        message: "comment `{` is never closed".to_string(),
                    });
                }
                if st.depth > 0 {
                    return Err(PgnError {
                        line: st.depth_from,
                        message: "variation `(` is never closed".to_string(),
                    });
                }
                return Ok(st.started.then(|| st.finish()));
            };
            let plain = st.comment_from.is_none() && st.depth == 0;
            let trimmed = line.trim_start();
            if plain && line.starts_with('%') {
                continue;
            }
            if plain && trimmed.starts_with('[') {
                if st.in_movetext {
                    // A game without a termination token: the tag starts the next game.
                    self.pending = Some((line_no, line));
                    return Ok(Some(st.finish()));
                }
                parse_tags(trimmed, line_no, &mut st.game.tags)?;
                st.started = true;
                continue;
            }
            if let Some(rest) = self.movetext(&line, line_no, &mut st)? {
                if !rest.trim().is_empty() {
                    self.pending = Some((line_no, rest));
                }
                return Ok(Some(st.finish()));
            }
        }
    }

    /// Tokenizes one line of movetext; returns the rest of the line after a termination token.
    fn movetext(
        &mut self,
        line: &str,
        line_no: usize,
        st: &mut GameState,
    ) -> Result<Option<String>, PgnError> {
        let bytes: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < bytes.len() {
            let c = bytes[i];
            if st.comment_from.is_some() {
                if c == '}' {
                    st.comment_from = None;
                    let text = std::mem::take(&mut st.comment_text);
                    st.add_comment(&text);
                } else {
                    st.comment_text.push(c);
                }
                i += 1;
                continue;
            }
            match c {
                '{' => {
                    st.comment_from = Some(line_no);
                    i += 1;
                }
                ';' => {
                    let text: String = bytes[i + 1..].iter().collect();
                    st.add_comment(&text);
                    return Ok(None);
                }
                '(' => {
                    if st.depth == 0 {
                        st.depth_from = line_no;
                    }
                    st.depth += 1;
                    st.in_movetext = true;
                    i += 1;
                }
                ')' => {
                    if st.depth == 0 {
                        return Err(PgnError {
                            line: line_no,
                            message: "`)` without an open variation".to_string(),
                        });
                    }
                    st.depth -= 1;
                    i += 1;
                }
                '}' => {
                    return Err(PgnError {
                        line: line_no,
                        message: "`}` without an open comment".to_string(),
                    });
                }
                c if c.is_whitespace() => i += 1,
                _ => {
                    let start = i;
                    while i < bytes.len()
                        && !matches!(bytes[i], '{' | '}' | '(' | ')' | ';')
                        && !bytes[i].is_whitespace()
                    {
                        i += 1;
                    }
                    let token: String = bytes[start..i].iter().collect();
                    st.started = true;
                    st.in_movetext = true;
                    if st.depth > 0 {
                        continue;
                    }
                    if let Some(outcome) = Outcome::from_token(&token) {
                        st.termination = Some(outcome);
                        return Ok(Some(bytes[i..].iter().collect()));
                    }
                    if let Some(san) = move_of_token(&token, line_no)? {
                        st.game.moves.push(san);
                    }
                }
            }
        }
        if st.comment_from.is_some() {
            st.comment_text.push(' ');
        }
        Ok(None)
    }
}

/// The SAN move in a movetext token (`12.`, `12...Nf3`, `e4!?`, `$3`), if any.
fn move_of_token(token: &str, line_no: usize) -> Result<Option<String>, PgnError> {
    if let Some(digits) = token.strip_prefix('$') {
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            return Ok(None);
        }
        return Err(PgnError {
            line: line_no,
            message: format!("bad NAG `{token}`"),
        });
    }
    let rest = token.trim_start_matches(|c: char| c.is_ascii_digit());
    let rest = if rest.len() < token.len() {
        if !rest.starts_with('.') {
            // A token starting with digits but no dot: `0-0` castling (some writers), else junk.
            if token.starts_with("0-0") {
                return Ok(Some(token.replace('0', "O")));
            }
            return Err(PgnError {
                line: line_no,
                message: format!("unexpected token `{token}` in movetext"),
            });
        }
        rest.trim_start_matches('.')
    } else {
        token.trim_start_matches('.')
    };
    let san = rest.trim_end_matches(['!', '?']);
    if san.is_empty() {
        return Ok(None);
    }
    let ok_chars = san
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '#' | '=' | '-' | ':' | '@'));
    let ok_start = san.starts_with(|c: char| "KQRBNPOabcdefgh-Z@".contains(c));
    if !ok_chars || !ok_start {
        return Err(PgnError {
            line: line_no,
            message: format!("unexpected token `{token}` in movetext"),
        });
    }
    Ok(Some(san.to_string()))
}

/// Parses the tag pairs `[Name "value"]` of one line into `tags`.
fn parse_tags(
    line: &str,
    line_no: usize,
    tags: &mut Vec<(String, String)>,
) -> Result<(), PgnError> {
    let err = |message: String| PgnError {
        line: line_no,
        message,
    };
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    loop {
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        if i == chars.len() {
            return Ok(());
        }
        if chars[i] == ';' {
            return Ok(());
        }
        if chars[i] != '[' {
            return Err(err(format!(
                "unexpected text after a tag: `{}`",
                line.trim()
            )));
        }
        i += 1;
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        let start = i;
        while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
            i += 1;
        }
        let name: String = chars[start..i].iter().collect();
        if name.is_empty() {
            return Err(err(format!("tag without a name: `{}`", line.trim())));
        }
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        if i == chars.len() || chars[i] != '"' {
            return Err(err(format!("tag `{name}` without a quoted value")));
        }
        i += 1;
        let mut value = String::new();
        loop {
            match chars.get(i) {
                None => return Err(err(format!("tag `{name}`: value not closed by `\"`"))),
                Some('\\') if matches!(chars.get(i + 1), Some('"' | '\\')) => {
                    value.push(chars[i + 1]);
                    i += 2;
                }
                Some('"') => {
                    i += 1;
                    break;
                }
                Some(&c) => {
                    value.push(c);
                    i += 1;
                }
            }
        }
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        if chars.get(i) != Some(&']') {
            return Err(err(format!("tag `{name}` not closed by `]`")));
        }
        i += 1;
        tags.push((name, value));
    }
}

impl<R: BufRead> Iterator for PgnReader<R> {
    type Item = Result<PgnGame, PgnError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.read_game() {
            Ok(Some(game)) => Some(Ok(game)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}
