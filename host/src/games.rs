//! Reading games: one per line, `START_FEN<TAB>uci moves separated by spaces` (more columns are
//! ignored, so the vectors of `tests/data/stockfish-15.1/games.tsv` and `host eval --games`'s
//! own output read back), `#` comments and blank lines skipped. Lines are bounded
//! ([`chess_text::bounded_lines`]); every move is checked for legality.

use std::path::Path;

use plugin_api::{Board, Move, board_from_position, move_from_shakmaty};
use shakmaty::uci::UciMove;
use shakmaty::{Chess, Position};

use chess_text::{EXCERPT_CHARS, bounded_lines, excerpt, legal_position, parse_fen};

/// A game read from a file: its start, its moves, and its text as written.
#[derive(Clone, Debug)]
pub struct Game {
    /// The start position's FEN as written.
    pub start_fen: String,
    /// The moves as written (UCI, space-separated).
    pub moves_text: String,
    /// The start position.
    pub start: Board,
    /// The moves, each legal in the position before it.
    pub moves: Vec<Move>,
}

/// A games file that cannot be read. `Display`: `PATH:LINE: REASON in 'EXCERPT'`, or
/// `PATH: REASON` for the file itself.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct GamesError {
    /// The whole one-line message.
    message: String,
}

/// Reads every game of `path`; an error names the file, the line and what is wrong, quoting an
/// excerpt of the line.
pub fn read_games(path: &Path) -> Result<Vec<Game>, GamesError> {
    read(path).map_err(|message| GamesError { message })
}

/// [`read_games`], its error as the message.
fn read(path: &Path) -> Result<Vec<Game>, String> {
    let file =
        std::fs::File::open(path).map_err(|e| format!("{}: cannot open: {e}", path.display()))?;
    let mut games = Vec::new();
    for (i, line) in bounded_lines(std::io::BufReader::new(file)).enumerate() {
        let at = |reason: String, text: &str| {
            format!(
                "{}:{}: {reason} in '{}'",
                path.display(),
                i + 1,
                excerpt(text, EXCERPT_CHARS)
            )
        };
        let line = line.map_err(|e| at(e.to_string(), ""))?;
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let mut fields = line.split('\t');
        let start_fen = fields.next().unwrap_or("").trim().to_string();
        let moves_text = fields.next().unwrap_or("").trim().to_string();
        let setup =
            parse_fen(&start_fen).map_err(|e| at(format!("invalid FEN: {}", e.reason()), &line))?;
        let mut pos: Chess = legal_position(&setup, &start_fen)
            .map_err(|e| at(format!("illegal position: {}", e.reason()), &line))?;
        let start = board_from_position(&pos);
        let mut moves = Vec::new();
        for (k, text) in moves_text.split_whitespace().enumerate() {
            let m = text
                .parse::<UciMove>()
                .ok()
                .and_then(|u| u.to_move(&pos).ok())
                .ok_or_else(|| at(format!("move {} '{text}' is not legal", k + 1), &line))?;
            moves.push(move_from_shakmaty(&m).expect("standard chess has no drops"));
            pos = pos.play(m).expect("a legal move plays");
        }
        games.push(Game {
            start_fen,
            moves_text,
            start,
            moves,
        });
    }
    Ok(games)
}
