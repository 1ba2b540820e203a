//! Opening books: EPD lines a game starts from.

use anyhow::{Context, Result, anyhow, bail};
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess};

/// Reads an EPD book: one position per line (the first four FEN fields; any operations after
/// them are ignored; blank lines and `#` comments skipped). A bad line is an error naming it.
pub fn read_book(path: &Path) -> Result<Vec<Chess>> {
    let file = File::open(path).with_context(|| format!("cannot open book {}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in host::fens::bounded_lines(BufReader::new(file)).enumerate() {
        let line = line
            .map_err(anyhow::Error::msg)
            .with_context(|| format!("{}:{}", path.display(), i + 1))?;
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = t.split_whitespace().take(4).collect();
        let bad = |m: String| {
            let t = host::excerpt::excerpt(t, host::excerpt::EXCERPT_CHARS);
            anyhow!("{}:{}: invalid EPD line '{t}': {m}", path.display(), i + 1)
        };
        if fields.len() < 4 {
            return Err(bad("expected board, side, castling and en passant".into()));
        }
        let fen: Fen = format!("{} 0 1", fields.join(" "))
            .parse()
            .map_err(|e: shakmaty::fen::ParseFenError| bad(e.to_string()))?;
        let pos: Chess = fen
            .into_position(CastlingMode::Standard)
            .or_else(shakmaty::PositionError::ignore_invalid_ep_square)
            .map_err(|e| bad(e.to_string()))?;
        out.push(pos);
    }
    if out.is_empty() {
        bail!("book {} has no positions", path.display());
    }
    Ok(out)
}
