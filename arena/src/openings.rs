//! Opening positions for tournaments: EPD or FEN files, one position per line, and the choice
//! of which ones to play (file order, or shuffled with a seed, as cutechess's `-openings
//! order=random`).

use std::path::Path;

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

/// In which order openings are taken from the file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OpeningOrder {
    /// As in the file.
    #[default]
    Sequential,
    /// Shuffled with the tournament's seed.
    Random,
}

/// Reads the positions of an EPD or FEN file ([`chess_text::read_book`]: one per line, blank
/// lines and `#` comments skipped, every position strict and legal), as full FENs; errors name
/// `file:line`.
pub fn read_openings(path: &Path) -> Result<Vec<String>, chess_text::BookError> {
    let book = chess_text::read_book(path)?;
    Ok(book.into_iter().map(|p| p.fen).collect())
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
