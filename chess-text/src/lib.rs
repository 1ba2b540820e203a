//! # The text forms of chess positions
//!
//! Every tool of the workspace reads positions as text: FEN files and FENs on command lines
//! (`host`), `position fen` (the UCI engine), opening books (`arena`'s tournaments, `trainer
//! gensfen`), the trainer's text data. They all read them here, by one rule:
//!
//! - [`fen`]: a FEN is parsed strictly ([`parse_fen`]): eight ranks of eight squares (no two
//!   digits in a row: `44` is not a rank), `w` or `b`, castling `-` or a subset of `KQkq` in
//!   that order, an en-passant square on the rank behind a pawn that just moved two squares
//!   (the 6th with White to move, the 3rd with Black), numbers for the clocks (fields left out
//!   from the end take their defaults, as in EPD). shakmaty parses what passes; legality ([`legal_position`]) is a second,
//!   separate question, since feature tools read any placement.
//! - [`epd`]: an EPD line is the four fields of a FEN and then operations (`id "x";`) or the
//!   two clocks; a book ([`read_book`]) is a file of them, every position legal.
//! - [`fen_file`]: files of FENs, one per line, the text before a TAB (so TSV outputs can be
//!   fed back).
//! - [`lines`]: lines read in bounded memory (an endless line is one error) and the excerpts of
//!   bad input that error messages quote.
//!
//! Every error is one line naming the input and the reason.

pub mod epd;
pub mod fen;
pub mod fen_file;
pub mod lines;

pub use epd::{BookError, BookPosition, parse_epd, read_book};
pub use fen::{FenError, legal_position, parse_fen, parse_position};
pub use fen_file::{FenFileError, FenLine, fen_lines};
pub use lines::{EXCERPT_CHARS, LineError, MAX_LINE_BYTES, bounded_lines, excerpt};
