//! FEN, strictly: the syntax of the PGN standard's FEN (section 16.1), checked field by field
//! before shakmaty builds the setup. shakmaty's own parser is lenient where a tool should not
//! be: it sums the digits of a rank (`44` is eight empty squares), takes castling letters in
//! any number and order (`KKKK`), and any en-passant square (`e4`). Those are typos or
//! corrupted data; here they are one-line errors.
//!
//! Legality (kings, checks, castling rights that match the pieces, an en-passant square behind
//! a pawn that could have just moved two squares) is a separate check, [`legal_position`]:
//! feature tools read any placement.

use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, FromSetup, Setup};

use crate::lines::{EXCERPT_CHARS, excerpt};

/// A FEN that is not one, or a position that is not legal. `Display`: `invalid FEN 'TEXT':
/// REASON` (the text cut to an excerpt), or `illegal position 'TEXT': REASON`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FenError {
    /// The text breaks the FEN syntax.
    #[error("invalid FEN '{text}': {reason}")]
    Syntax {
        /// The FEN as given (an excerpt).
        text: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The FEN is well formed but the position cannot arise in a game of chess.
    #[error("illegal position '{text}': {reason}")]
    Illegal {
        /// The FEN as given (an excerpt).
        text: String,
        /// Why it is not legal (shakmaty's reasons).
        reason: String,
    },
}

impl FenError {
    /// The reason alone, without the text (for messages that quote the text already).
    pub fn reason(&self) -> &str {
        match self {
            FenError::Syntax { reason, .. } | FenError::Illegal { reason, .. } => reason,
        }
    }
}

/// Checks the syntax of a FEN's fields (the board and the side to move, then castling, en
/// passant and the two clocks, each of which may be left out from the end); the reason in a
/// clause otherwise.
fn check_syntax(fields: &[&str]) -> Result<(), String> {
    if !(2..=6).contains(&fields.len()) {
        return Err(format!(
            "a FEN has 6 fields (the board and the side to move at least), not {}",
            fields.len()
        ));
    }
    check_board(fields[0])?;
    let white = match fields[1] {
        "w" => true,
        "b" => false,
        other => return Err(format!("the side to move is 'w' or 'b', not '{other}'")),
    };
    if let Some(castling) = fields.get(2) {
        check_castling(castling)?;
    }
    if let Some(ep) = fields.get(3) {
        check_ep(ep, white)?;
    }
    if let Some(half) = fields.get(4) {
        half.parse::<u32>()
            .map_err(|_| format!("the halfmove clock '{half}' is not a number"))?;
    }
    if let Some(full) = fields.get(5) {
        let full = full
            .parse::<u32>()
            .map_err(|_| format!("the fullmove number '{full}' is not a number"))?;
        if full == 0 {
            return Err("the fullmove number starts at 1, not 0".into());
        }
    }
    Ok(())
}

/// Eight ranks of eight squares: piece letters and digits 1–8, no two digits in a row.
fn check_board(board: &str) -> Result<(), String> {
    let ranks: Vec<&str> = board.split('/').collect();
    if ranks.len() != 8 {
        return Err(format!(
            "the board has 8 ranks separated by '/', not {}",
            ranks.len()
        ));
    }
    for (i, rank) in ranks.iter().enumerate() {
        let name = 8 - i;
        let mut squares = 0u32;
        let mut digit_before = false;
        for c in rank.chars() {
            match c {
                '1'..='8' if digit_before => {
                    return Err(format!(
                        "rank {name} '{rank}' has two digits in a row (write their sum)"
                    ));
                }
                '1'..='8' => {
                    squares += c.to_digit(10).unwrap_or(0);
                    digit_before = true;
                }
                'p' | 'n' | 'b' | 'r' | 'q' | 'k' | 'P' | 'N' | 'B' | 'R' | 'Q' | 'K' => {
                    squares += 1;
                    digit_before = false;
                }
                other => {
                    return Err(format!("rank {name} '{rank}' has the character '{other}'"));
                }
            }
        }
        if squares != 8 {
            return Err(format!("rank {name} '{rank}' has {squares} squares, not 8"));
        }
    }
    Ok(())
}

/// `-`, or a non-empty subset of `KQkq` in that order, each letter once.
fn check_castling(castling: &str) -> Result<(), String> {
    if castling == "-" {
        return Ok(());
    }
    let mut rest = "KQkq";
    for c in castling.chars() {
        match rest.find(c) {
            Some(at) => rest = &rest[at + 1..],
            None => {
                return Err(format!(
                    "castling rights are '-' or letters of 'KQkq' in that order, each once, not '{castling}'"
                ));
            }
        }
    }
    Ok(())
}

/// `-`, or the square behind a pawn that just moved two squares: on the 6th rank with White to
/// move, the 3rd with Black.
fn check_ep(ep: &str, white_to_move: bool) -> Result<(), String> {
    if ep == "-" {
        return Ok(());
    }
    let b = ep.as_bytes();
    if b.len() != 2 || !(b'a'..=b'h').contains(&b[0]) || !(b'1'..=b'8').contains(&b[1]) {
        return Err(format!(
            "the en-passant square is '-' or a square, not '{ep}'"
        ));
    }
    let rank = if white_to_move { b'6' } else { b'3' };
    if b[1] != rank {
        return Err(format!(
            "the en-passant square '{ep}' is not on rank {} (with {} to move)",
            rank as char,
            if white_to_move { "White" } else { "Black" }
        ));
    }
    Ok(())
}

/// Parses one FEN strictly. Fields may be left out from the end, down to the board and the side
/// to move (castling and en passant are then `-`, the clocks 0 and 1, as EPD and shakmaty have
/// them). Surrounding white space is ignored. The position is not checked for legality.
pub fn parse_fen(text: &str) -> Result<Setup, FenError> {
    let text = text.trim();
    let syntax = |reason: String| FenError::Syntax {
        text: excerpt(text, EXCERPT_CHARS).into_owned(),
        reason,
    };
    let fields: Vec<&str> = text.split_ascii_whitespace().collect();
    check_syntax(&fields).map_err(syntax)?;
    let fen: Fen = fields
        .join(" ")
        .parse()
        .map_err(|e| syntax(format!("{e}")))?;
    Ok(fen.into_setup())
}

/// The legal position of a setup (standard castling), or why it is not one; `text` is what the
/// error quotes.
pub fn legal_position(setup: &Setup, text: &str) -> Result<Chess, FenError> {
    Chess::from_setup(setup.clone(), CastlingMode::Standard).map_err(|e| FenError::Illegal {
        text: excerpt(text.trim(), EXCERPT_CHARS).into_owned(),
        reason: e.to_string(),
    })
}

/// [`parse_fen`] then [`legal_position`].
pub fn parse_position(text: &str) -> Result<Chess, FenError> {
    legal_position(&parse_fen(text)?, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

    fn reason(text: &str) -> String {
        parse_fen(text).unwrap_err().to_string()
    }

    #[test]
    fn well_formed_fens_parse_with_or_without_clocks() {
        assert!(parse_fen(START).is_ok());
        let epd = parse_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3").unwrap();
        assert_eq!((epd.halfmoves, epd.fullmoves.get()), (0, 1));
        assert!(parse_fen("4k3/8/8/8/8/8/8/4K3 w - - 12 40").is_ok());
        assert!(parse_fen("  r3k2r/8/8/8/8/8/8/R3K2R b Kq - 0 1\n").is_ok());
        let short = parse_fen("8/8/8/8/8/2k5/8/K7 w").unwrap();
        assert_eq!((short.halfmoves, short.fullmoves.get()), (0, 1));
        assert!(parse_fen("8/8/8/8/8/2k5/8/K7 w - - 7").is_ok());
        assert!(parse_position(START).is_ok());
    }

    #[test]
    fn what_shakmaty_lets_through_is_refused_in_one_line() {
        // Rank 44 (eight squares by its digits' sum), castling KKKK, en passant on the 4th rank:
        // all accepted by shakmaty's parser.
        let rank44 = "rnbqkbnr/pppppppp/44/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        assert!(rank44.parse::<Fen>().is_ok());
        assert!(
            reason(rank44).contains("two digits in a row"),
            "{}",
            reason(rank44)
        );
        let kkkk = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KKKK - 0 1";
        assert!(kkkk.parse::<Fen>().is_ok());
        assert!(reason(kkkk).contains("castling rights"), "{}", reason(kkkk));
        let ep4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e4 0 1";
        assert!(ep4.parse::<Fen>().is_ok());
        assert!(reason(ep4).contains("not on rank 3"), "{}", reason(ep4));
        for (bad, why) in [
            ("", "6 fields"),
            ("8/8/8/8/8/8/8/8", "6 fields"),
            ("8/8/8/8/8/8/8/8 w - - 0 1 x", "6 fields"),
            ("8/8/8/8/8/8/8 w - - 0 1", "8 ranks"),
            ("8/8/8/8/8/8/8/7 w - - 0 1", "7 squares"),
            ("8/8/8/8/8/8/8/9 w - - 0 1", "character '9'"),
            ("8/8/8/8/8/8/8/7x w - - 0 1", "character 'x'"),
            ("8/8/8/8/8/8/8/8 x - - 0 1", "'w' or 'b'"),
            ("8/8/8/8/8/8/8/8 w qk - 0 1", "castling rights"),
            ("8/8/8/8/8/8/8/8 w - e9 0 1", "en-passant square"),
            ("8/8/8/8/8/8/8/8 w - e3 0 1", "not on rank 6"),
            ("8/8/8/8/8/8/8/8 w - - x 1", "halfmove"),
            ("8/8/8/8/8/8/8/8 w - - 0 0", "starts at 1"),
        ] {
            let r = reason(bad);
            assert!(
                r.starts_with("invalid FEN '") && r.contains(why),
                "{bad}: {r}"
            );
            assert!(!r.contains('\n'), "{r}");
        }
    }

    #[test]
    fn legality_is_a_second_question() {
        let no_kings = "8/8/8/8/8/8/8/8 w - - 0 1";
        assert!(parse_fen(no_kings).is_ok());
        let e = parse_position(no_kings).unwrap_err();
        assert!(matches!(e, FenError::Illegal { .. }), "{e}");
        // The right rank, but no pawn could have moved there.
        let e = parse_position("4k3/8/8/8/8/8/8/4K3 b - e3 0 1").unwrap_err();
        assert!(e.to_string().contains("illegal position"), "{e}");
        let long = "x".repeat(500);
        assert!(reason(&long).len() < 200);
    }
}
