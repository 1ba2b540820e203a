//! Opening positions for tournaments: EPD or FEN files, one position per line, and the choice
//! of which ones to play (file order, or shuffled with a seed, as cutechess's `-openings
//! order=random`).

use std::fs;
use std::path::Path;

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess};

/// In which order openings are taken from the file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OpeningOrder {
    /// As in the file.
    #[default]
    Sequential,
    /// Shuffled with the tournament's seed.
    Random,
}

/// Reads positions from an EPD or FEN file: one per line, blank lines and lines starting with
/// `#` skipped. EPD lines (four fields, then opcodes such as `id "x";`) get halfmove clock 0 and
/// fullmove number 1. Every position is checked for legality; errors name `file:line`.
pub fn read_openings(path: &Path) -> Result<Vec<String>, String> {
    let text =
        fs::read_to_string(path).map_err(|e| format!("openings file {}: {e}", path.display()))?;
    let mut openings = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fen = parse_line(line).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
        openings.push(fen);
    }
    if openings.is_empty() {
        return Err(format!("openings file {}: no positions", path.display()));
    }
    Ok(openings)
}

/// One EPD or FEN line as a full, legal FEN.
pub fn parse_line(line: &str) -> Result<String, String> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    if fields.len() < 4 {
        return Err(format!(
            "'{line}' is not a FEN or EPD (fewer than 4 fields)"
        ));
    }
    let counters_given =
        fields.len() >= 6 && fields[4].parse::<u32>().is_ok() && fields[5].parse::<u32>().is_ok();
    let fen = if counters_given {
        fields[..6].join(" ")
    } else {
        format!("{} 0 1", fields[..4].join(" "))
    };
    let parsed: Fen = fen
        .parse()
        .map_err(|e| format!("invalid position '{fen}': {e}"))?;
    parsed
        .into_position::<Chess>(CastlingMode::Standard)
        .map_err(|e| format!("illegal position '{fen}': {e}"))?;
    Ok(fen)
}

/// Chooses `count` openings: the first ones in file order, or a seeded shuffle. Returns fewer
/// when the file has fewer (the tournament then cycles through them).
pub fn select(openings: &[String], count: usize, order: OpeningOrder, seed: u64) -> Vec<String> {
    let mut chosen = openings.to_vec();
    if order == OpeningOrder::Random {
        chosen.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    }
    chosen.truncate(count);
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epd_and_fen_lines() {
        assert_eq!(
            parse_line("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - id \"e4\";")
                .unwrap(),
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
        );
        let fen = "r1bqkbnr/1ppp1ppp/p1n5/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 0 4";
        assert_eq!(parse_line(fen).unwrap(), fen);
        assert!(parse_line("8/8/8/8 w").is_err());
        assert!(parse_line("8/8/8/8/8/8/8/8 w - -").is_err()); // no kings
    }

    #[test]
    fn errors_name_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("o.epd");
        fs::write(
            &path,
            "# comment\nrnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -\n\nnot a fen\n",
        )
        .unwrap();
        let error = read_openings(&path).unwrap_err();
        assert!(error.contains("o.epd:4:"), "{error}");
        assert!(read_openings(&dir.path().join("missing.epd")).is_err());
    }

    #[test]
    fn selection_is_seeded() {
        let all: Vec<String> = (0..10).map(|i| i.to_string()).collect();
        assert_eq!(
            select(&all, 3, OpeningOrder::Sequential, 0),
            ["0", "1", "2"]
        );
        let a = select(&all, 5, OpeningOrder::Random, 7);
        assert_eq!(a, select(&all, 5, OpeningOrder::Random, 7));
        assert_ne!(a, select(&all, 5, OpeningOrder::Random, 8));
        assert_eq!(select(&all, 50, OpeningOrder::Sequential, 0).len(), 10);
    }
}
