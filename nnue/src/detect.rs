//! Which of the three network formats a file's first bytes claim to be, and how long such a
//! file must be: what a reader needs before it reads the rest in bounded memory. Above the
//! formats (`format`: this project's and the thesis's; `stockfish`), which know nothing of one
//! another.

use super::format::{DecodeError, MAGIC, NetFormat, own_declared_length, thesis_declared_length};
use super::stockfish;

/// Which format `bytes` claim to be: [`NetFormat::Own`] if they start with [`MAGIC`],
/// [`NetFormat::Stockfish`] if they start with a version word of Stockfish's, else
/// [`NetFormat::Thesis`] (whose decoder then checks the name).
pub fn detect(bytes: &[u8]) -> NetFormat {
    if bytes.starts_with(&MAGIC) {
        NetFormat::Own
    } else if stockfish::is_stockfish(bytes) {
        NetFormat::Stockfish
    } else {
        NetFormat::Thesis
    }
}

/// How long a network file must be, from its first bytes (the header alone).
/// `TruncatedHeader` means more bytes are needed. Returns the length, the sizes N, L1, L2, and
/// whether the length is exact (`false`: the most it may be, for Stockfish's LEB128-compressed
/// tensors, whose lengths only the tensors themselves tell).
pub fn declared_length(prefix: &[u8]) -> Result<(u64, [u64; 3], bool), DecodeError> {
    let exact = |(len, sizes)| (len, sizes, true);
    match detect(prefix) {
        NetFormat::Own => own_declared_length(prefix).map(exact),
        NetFormat::Thesis => thesis_declared_length(prefix).map(exact),
        NetFormat::Stockfish => stockfish::declared_length(prefix),
    }
}
