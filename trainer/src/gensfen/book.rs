//! Opening books: the EPD lines a game starts from, read by [`chess_text::read_book`] (strict
//! FEN fields, legal positions; the tournaments read theirs the same way).

use anyhow::Result;
use std::path::Path;

use shakmaty::Chess;

/// The positions of the book at `path`, in file order. A bad line is an error naming it.
pub fn read_book(path: &Path) -> Result<Vec<Chess>> {
    Ok(chess_text::read_book(path)?
        .into_iter()
        .map(|p| p.position)
        .collect())
}
