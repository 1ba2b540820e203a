//! Stockfish's `.bin` format: a sequence of 40-byte `PackedSfenValue` records, byte-compatible
//! with Stockfish's `gensfen`/`learn` tools and nnue-pytorch's loader.
//!
//! | bytes | field |
//! | --- | --- |
//! | 0..32 | `PackedSfen`: the position, Huffman-coded (below) |
//! | 32..34 | `score`: `i16` little-endian, side to move's view |
//! | 34..36 | `move`: `u16` little-endian, Stockfish's move encoding (below) |
//! | 36..38 | `gamePly`: `u16` little-endian |
//! | 38 | `game_result`: `i8`, 1 / 0 / −1 = side to move won / drew / lost |
//! | 39 | padding, 0 |
//!
//! The packed position is a bit stream, least significant bit of each byte first, every value
//! written least significant bit first: side to move (1 bit, 1 = Black), White's king square
//! (6 bits), Black's king square (6 bits), then the 64 squares from a8, b8, .. h8 down to a1 ..
//! h1, kings skipped, each as a Huffman code (empty `0`; pawn `1000`, knight `1100`, bishop
//! `1010`, rook `1110`, queen `1001` in stream order, then 1 colour bit, 1 = Black); castling
//! rights (4 bits: White short, White long, Black short, Black long); the en-passant square
//! (1 bit, then 6 bits if set); the halfmove clock's low 6 bits; the full-move number (8 low
//! bits, then 8 high bits); the halfmove clock's bit 6. The rest is zero.
//!
//! Squares are `rank * 8 + file` (a1 = 0). The move is `to | from << 6 | (promotion − knight)
//! << 12 | kind << 14` with kind 0 normal, 1 promotion, 2 en passant, 3 castling; castling is
//! written king → own rook (`e1h1`), and 0 is "no move".

use std::io::{self, Read, Seek, SeekFrom, Write};

use plugin_api::{Board, Color, Move, MoveKind, NO_SQUARE, Role};

use super::invalid::InvalidSample;
use super::sample::{Sample, check_structure, move_on_board, normalize_ep};
use super::stream::{DataError, DataErrorKind, Location, ReadOptions, SampleReader, SampleWriter};

/// Bytes per record.
pub const RECORD_SIZE: usize = 40;

/// Huffman codes (value as read least significant bit first, bit count) of empty, pawn ..
/// queen.
const HUFFMAN: [(u32, u32); 6] = [
    (0b0, 1),
    (0b0001, 4),
    (0b0011, 4),
    (0b0101, 4),
    (0b0111, 4),
    (0b1001, 4),
];

struct BitWriter<'a> {
    data: &'a mut [u8; 32],
    cursor: usize,
}

impl BitWriter<'_> {
    fn bits(&mut self, value: u32, n: u32) -> Result<(), String> {
        for i in 0..n {
            if self.cursor >= 256 {
                return Err("position needs more than 256 bits".into());
            }
            if value & (1 << i) != 0 {
                self.data[self.cursor / 8] |= 1 << (self.cursor & 7);
            }
            self.cursor += 1;
        }
        Ok(())
    }
}

struct BitReader<'a> {
    data: &'a [u8; 32],
    cursor: usize,
}

impl BitReader<'_> {
    fn bits(&mut self, n: u32) -> Result<u32, String> {
        let mut v = 0;
        for i in 0..n {
            if self.cursor >= 256 {
                return Err("packed position runs past 256 bits".into());
            }
            v |= u32::from((self.data[self.cursor / 8] >> (self.cursor & 7)) & 1) << i;
            self.cursor += 1;
        }
        Ok(v)
    }
}

/// Castling rights bits (White short, White long, Black short, Black long) and the rook squares
/// they stand for.
const CASTLING_ROOKS: [u8; 4] = [7, 0, 63, 56];

/// Packs a position into Stockfish's 32-byte `PackedSfen`. Fails for what the format cannot
/// hold: castling rights of a rook off its corner (Chess960), a halfmove clock above 127, more
/// than 256 bits of pieces (impossible for legal positions).
pub fn pack_sfen(board: &Board, rule50: u16, fullmoves: u32) -> Result<[u8; 32], InvalidSample> {
    let mut data = [0u8; 32];
    let mut w = BitWriter {
        data: &mut data,
        cursor: 0,
    };
    let white_king = board
        .king(Color::White)
        .ok_or(InvalidSample::from("no White king"))?;
    let black_king = board
        .king(Color::Black)
        .ok_or(InvalidSample::from("no Black king"))?;
    w.bits(board.turn as u32, 1)?;
    w.bits(u32::from(white_king), 6)?;
    w.bits(u32::from(black_king), 6)?;
    for rank in (0..8u8).rev() {
        for file in 0..8u8 {
            let sq = rank * 8 + file;
            match board.piece_at(sq) {
                Some((_, Role::King)) => {}
                None => w.bits(HUFFMAN[0].0, HUFFMAN[0].1)?,
                Some((color, role)) => {
                    let (code, n) = HUFFMAN[role.index() + 1];
                    w.bits(code, n)?;
                    w.bits(color as u32, 1)?;
                }
            }
        }
    }
    let mut rest = board.castling;
    for rook in CASTLING_ROOKS {
        w.bits(u32::from(board.castling & (1u64 << rook) != 0), 1)?;
        rest &= !(1u64 << rook);
    }
    if rest != 0 {
        return Err("castling rights of a rook off its corner (Chess960) cannot be packed".into());
    }
    if board.ep_square == NO_SQUARE {
        w.bits(0, 1)?;
    } else {
        w.bits(1, 1)?;
        w.bits(u32::from(board.ep_square), 6)?;
    }
    if rule50 > 127 {
        return Err(format!("halfmove clock {rule50} above 127 cannot be packed").into());
    }
    let fullmoves = fullmoves.min(0xffff);
    w.bits(u32::from(rule50), 6)?;
    w.bits(fullmoves, 8)?;
    w.bits(fullmoves >> 8, 8)?;
    w.bits(u32::from(rule50) >> 6, 1)?;
    Ok(data)
}

/// Unpacks a `PackedSfen`: the board (en-passant square kept only when a capture is legal), the
/// halfmove clock and the full-move number. Fails on an invalid Huffman code, a stream longer
/// than 256 bits, or a board that fails [`check_structure`].
pub fn unpack_sfen(data: &[u8; 32]) -> Result<(Board, u16, u32), InvalidSample> {
    let mut r = BitReader { data, cursor: 0 };
    let turn = if r.bits(1)? == 1 {
        Color::Black
    } else {
        Color::White
    };
    let kings = [r.bits(6)? as u8, r.bits(6)? as u8];
    if kings[0] == kings[1] {
        return Err("both kings on one square".into());
    }
    let mut board = Board {
        by_color: [0; 2],
        by_role: [0; 6],
        castling: 0,
        turn,
        ep_square: NO_SQUARE,
    };
    board.put(kings[0], Color::White, Role::King);
    board.put(kings[1], Color::Black, Role::King);
    for rank in (0..8u8).rev() {
        for file in 0..8u8 {
            let sq = rank * 8 + file;
            if sq == kings[0] || sq == kings[1] {
                continue;
            }
            let mut code = 0;
            let mut n = 0;
            let role = loop {
                code |= r.bits(1)? << n;
                n += 1;
                if let Some(i) = HUFFMAN.iter().position(|&(c, b)| c == code && b == n) {
                    break i;
                }
                if n >= 4 {
                    return Err(format!("invalid piece code {code:04b} at square {sq}").into());
                }
            };
            if role > 0 {
                let color = if r.bits(1)? == 1 {
                    Color::Black
                } else {
                    Color::White
                };
                board.put(sq, color, Role::ALL[role - 1]);
            }
        }
    }
    for rook in CASTLING_ROOKS {
        if r.bits(1)? == 1 {
            board.castling |= 1u64 << rook;
        }
    }
    if r.bits(1)? == 1 {
        board.ep_square = r.bits(6)? as u8;
    }
    let mut rule50 = r.bits(6)? as u16;
    let mut fullmoves = r.bits(8)?;
    fullmoves |= r.bits(8)? << 8;
    rule50 |= (r.bits(1)? as u16) << 6;
    check_structure(&board)?;
    normalize_ep(&mut board);
    Ok((board, rule50, fullmoves))
}

/// Stockfish's 16-bit encoding of a move (0 for none).
pub fn encode_move(mv: Option<&Move>) -> u16 {
    let Some(mv) = mv else { return 0 };
    let mut code = u16::from(mv.to) | (u16::from(mv.from) << 6);
    match mv.kind {
        MoveKind::Normal => {
            if let Some(p) = mv.promotion() {
                code |= (1 << 14) | ((p.index() as u16 - 1) << 12);
            }
        }
        MoveKind::EnPassant => code |= 2 << 14,
        MoveKind::Castle => code |= 3 << 14,
    }
    code
}

/// The move a 16-bit Stockfish move code stands for on `board`; `None` for 0 and for null
/// moves (`from == to`).
pub fn decode_move(board: &Board, code: u16) -> Result<Option<Move>, InvalidSample> {
    let to = (code & 63) as u8;
    let from = ((code >> 6) & 63) as u8;
    if code == 0 || from == to {
        return Ok(None);
    }
    let (kind, promotion) = match code >> 14 {
        0 => (MoveKind::Normal, None),
        1 => (
            MoveKind::Normal,
            Some(Role::ALL[((code >> 12) & 3) as usize + 1]),
        ),
        2 => (MoveKind::EnPassant, None),
        _ => (MoveKind::Castle, None),
    };
    move_on_board(board, from, to, kind, promotion).map(Some)
}

/// Encodes one sample as a 40-byte record. A missing result is written as 0 (draw).
pub fn encode_record(s: &Sample) -> Result<[u8; RECORD_SIZE], InvalidSample> {
    let mut rec = [0u8; RECORD_SIZE];
    rec[..32].copy_from_slice(&pack_sfen(&s.board, s.rule50, s.fullmoves())?);
    rec[32..34].copy_from_slice(&s.score.to_le_bytes());
    rec[34..36].copy_from_slice(&encode_move(s.best_move.as_ref()).to_le_bytes());
    rec[36..38].copy_from_slice(&s.ply.to_le_bytes());
    rec[38] = s.result.unwrap_or(0) as u8;
    Ok(rec)
}

/// Decodes one 40-byte record. `gamePly` is taken from the record (not from the packed full-move
/// number, which old generators filled inconsistently).
pub fn decode_record(rec: &[u8; RECORD_SIZE], validate: bool) -> Result<Sample, InvalidSample> {
    let sfen: &[u8; 32] = rec[..32].try_into().expect("32 bytes");
    let (board, rule50, _fullmoves) = unpack_sfen(sfen)?;
    let score = i16::from_le_bytes([rec[32], rec[33]]);
    let code = u16::from_le_bytes([rec[34], rec[35]]);
    let ply = u16::from_le_bytes([rec[36], rec[37]]);
    let result = rec[38] as i8;
    if !(-1..=1).contains(&result) {
        return Err(format!("game result {result} is not -1, 0 or 1").into());
    }
    let best_move = decode_move(&board, code)?;
    let sample = Sample {
        board,
        rule50,
        ply,
        score,
        best_move,
        result: Some(result),
    };
    if validate {
        sample.validate()?;
    }
    Ok(sample)
}

/// Streams the records of a byte range of a `.bin` file (start rounded up to a record boundary).
pub struct BinReader<R> {
    file: String,
    reader: R,
    pos: u64,
    end: u64,
    options: ReadOptions,
    buf: Vec<u8>,
    buf_pos: usize,
    failed: bool,
}

/// Read-ahead of the reader, a whole number of records.
const BLOCK: usize = RECORD_SIZE * 4096;

impl<R: Read + Seek> BinReader<R> {
    /// A reader of records in `start..end` (byte offsets; `end` clipped to the data).
    pub fn new(
        file: String,
        mut reader: R,
        start: u64,
        end: u64,
        options: ReadOptions,
    ) -> io::Result<Self> {
        let start = start.div_ceil(RECORD_SIZE as u64) * RECORD_SIZE as u64;
        reader.seek(SeekFrom::Start(start))?;
        Ok(BinReader {
            file,
            reader,
            pos: start,
            end,
            options,
            buf: Vec::new(),
            buf_pos: 0,
            failed: false,
        })
    }

    fn error(&self, at: u64, kind: DataErrorKind, message: String) -> DataError {
        DataError::new(&self.file, Some(Location::byte(at)), kind, message)
    }

    fn fill(&mut self) -> io::Result<()> {
        let want = (self.end.saturating_sub(self.pos)).min(BLOCK as u64) as usize;
        self.buf.clear();
        self.buf_pos = 0;
        let mut taken = (&mut self.reader).take(want as u64);
        taken.read_to_end(&mut self.buf)?;
        Ok(())
    }
}

impl<R: Read + Seek + Send> Iterator for BinReader<R> {
    type Item = Result<Sample, DataError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.failed || self.pos >= self.end {
                return None;
            }
            if self.buf_pos + RECORD_SIZE > self.buf.len() {
                let left = self.buf.len() - self.buf_pos;
                if left > 0 {
                    // A partial record at the end of the data.
                    self.failed = true;
                    return Some(Err(self.error(
                        self.pos,
                        DataErrorKind::Truncated,
                        format!("truncated record: {left} of {RECORD_SIZE} bytes"),
                    )));
                }
                if let Err(e) = self.fill() {
                    self.failed = true;
                    return Some(Err(self.error(self.pos, DataErrorKind::Io, e.to_string())));
                }
                if self.buf.is_empty() {
                    return None;
                }
                continue;
            }
            let at = self.pos;
            let rec: &[u8; RECORD_SIZE] = self.buf[self.buf_pos..self.buf_pos + RECORD_SIZE]
                .try_into()
                .expect("record size");
            let r = decode_record(rec, self.options.validate);
            self.buf_pos += RECORD_SIZE;
            self.pos += RECORD_SIZE as u64;
            return Some(r.map_err(|m| self.error(at, DataErrorKind::BadRecord, m.0)));
        }
    }
}

impl<R: Read + Seek + Send> SampleReader for BinReader<R> {
    fn bytes_read(&self) -> u64 {
        self.pos
    }
}

/// Writes 40-byte records.
pub struct BinWriter<W: Write> {
    file: String,
    out: W,
    written: u64,
}

impl<W: Write> BinWriter<W> {
    /// A writer into `out`; `file` names it in errors.
    pub fn new(file: String, out: W) -> Self {
        BinWriter {
            file,
            out,
            written: 0,
        }
    }

    /// The underlying writer.
    pub fn into_inner(self) -> W {
        self.out
    }
}

impl<W: Write> SampleWriter for BinWriter<W> {
    fn write(&mut self, s: &Sample) -> Result<(), DataError> {
        let rec = encode_record(s)
            .map_err(|m| DataError::new(&self.file, None, DataErrorKind::Unrepresentable, m.0))?;
        self.out.write_all(&rec).map_err(|e| {
            DataError::new(
                &self.file,
                Some(Location::byte(self.written)),
                DataErrorKind::Io,
                e.to_string(),
            )
        })?;
        self.written += RECORD_SIZE as u64;
        Ok(())
    }

    fn finish(&mut self) -> Result<(), DataError> {
        self.out
            .flush()
            .map_err(|e| DataError::new(&self.file, None, DataErrorKind::Io, e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::sample::move_on_board;

    fn sample(fen: &str) -> Sample {
        Sample::from_fen(fen)
    }

    /// The start position's `PackedSfen`, derived by hand from the bit layout in the module
    /// docs (see the comments), not from this implementation.
    #[test]
    fn start_position_packs_to_hand_checked_bytes() {
        // Bits in stream order:
        //   0          white to move
        //   001000     e1 = 4, LSB first
        //   001111     e8 = 60, LSB first
        //   rank 8 without e8: r n b q . b n r  (rook 1110+1, knight 1100+1, ...)
        //   rank 7: 8 × black pawn 1000 1
        //   ranks 6..3: 32 × empty 0
        //   rank 2: 8 × white pawn 1000 0
        //   rank 1 without e1: R N B Q . B N R (colour bit 0)
        //   castling 1111, no ep 0, rule50 000000, fullmove 1 = 10000000, 00000000, rule50 bit 0
        // 223 bits; byte k holds stream bits 8k..8k+7, the first in its least significant bit.
        // Byte 0: 0 | 0010 00 | 0 (first bit of e8) = bit 3 set: 0x08; byte 1: the rest of e8
        // (0 1111 → bits 0..4 = 0,1,1,1,1) then the a8 rook's 111 = 0xfe; and so on.
        let expected: [u8; 32] = [
            0x08, 0xfe, 0xce, 0x9a, 0xeb, 0xbc, 0x31, 0xc6, 0x18, 0x63, 0x8c, 0x00, 0x00, 0x00,
            0x00, 0x21, 0x84, 0x10, 0x42, 0x08, 0x67, 0x94, 0x54, 0xc6, 0x79, 0x40, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00,
        ];
        let s = sample("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
        let packed = pack_sfen(&s.board, 0, 1).unwrap();
        assert_eq!(packed, expected, "{packed:02x?}");
        let (board, rule50, fullmoves) = unpack_sfen(&expected).unwrap();
        assert_eq!((board, rule50, fullmoves), (s.board, 0, 1));
    }

    #[test]
    fn record_layout_and_move_codes() {
        let mut s = sample("r3k2r/8/8/3pP3/8/8/8/R3K2R w KQkq d6 3 30");
        // e5xd6 en passant: to 43, from 36, kind 2.
        let ep = move_on_board(&s.board, 36, 43, MoveKind::EnPassant, None).unwrap();
        assert_eq!(encode_move(Some(&ep)), 43 | (36 << 6) | (2 << 14));
        // Castling short: king e1 (4) to rook h1 (7), kind 3.
        let castle = move_on_board(&s.board, 4, 7, MoveKind::Castle, None).unwrap();
        assert_eq!(encode_move(Some(&castle)), 7 | (4 << 6) | (3 << 14));
        assert_eq!(
            decode_move(&s.board, 7 | (4 << 6) | (3 << 14)).unwrap(),
            Some(castle)
        );
        assert_eq!(decode_move(&s.board, 0).unwrap(), None);
        s.best_move = Some(ep);
        s.score = -1234;
        s.result = Some(-1);
        let rec = encode_record(&s).unwrap();
        assert_eq!(&rec[32..34], &(-1234i16).to_le_bytes());
        assert_eq!(&rec[34..36], &(43u16 | (36 << 6) | (2 << 14)).to_le_bytes());
        assert_eq!(&rec[36..38], &58u16.to_le_bytes());
        assert_eq!(rec[38], 0xff);
        assert_eq!(rec[39], 0);
        assert_eq!(decode_record(&rec, true).unwrap(), s);
    }

    #[test]
    fn promotion_code() {
        let s = sample("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1");
        let mv = move_on_board(&s.board, 49, 57, MoveKind::Normal, Some(Role::Knight)).unwrap();
        assert_eq!(encode_move(Some(&mv)), 57 | (49 << 6) | (1 << 14));
        let mv = move_on_board(&s.board, 49, 57, MoveKind::Normal, Some(Role::Queen)).unwrap();
        let code = 57 | (49 << 6) | (1 << 14) | (3 << 12);
        assert_eq!(encode_move(Some(&mv)), code);
        assert_eq!(decode_move(&s.board, code).unwrap(), Some(mv));
    }

    #[test]
    fn large_clocks_use_the_extension_bits() {
        let s = sample("4k3/8/8/8/8/8/8/4K3 b - - 100 300");
        let packed = pack_sfen(&s.board, s.rule50, s.fullmoves()).unwrap();
        let (_, rule50, fullmoves) = unpack_sfen(&packed).unwrap();
        assert_eq!((rule50, fullmoves), (100, 300));
        assert!(pack_sfen(&s.board, 128, 1).is_err());
    }

    #[test]
    fn corrupt_records_are_errors() {
        let s = sample("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
        let mut rec = encode_record(&s).unwrap();
        rec[38] = 7;
        assert!(decode_record(&rec, false).unwrap_err().0.contains("result"));
        // Both kings on e1.
        let mut data = [0u8; 32];
        let mut w = BitWriter {
            data: &mut data,
            cursor: 0,
        };
        w.bits(0, 1).unwrap();
        w.bits(4, 6).unwrap();
        w.bits(4, 6).unwrap();
        assert!(unpack_sfen(&data).unwrap_err().0.contains("both kings"));
        // An all-ones stream has invalid piece codes.
        assert!(decode_record(&[0xff; RECORD_SIZE], false).is_err());
        // A move from an empty square.
        let mut rec = encode_record(&s).unwrap();
        rec[34..36].copy_from_slice(&(28u16 | (20 << 6)).to_le_bytes());
        assert!(decode_record(&rec, false).unwrap_err().0.contains("empty"));
        // A pseudo-legal but illegal move is caught by validation only.
        let s = sample("4k3/8/8/8/8/8/4r3/4K3 w - - 0 1");
        // Kd2, into the rook's attack.
        let mv = move_on_board(&s.board, 4, 11, MoveKind::Normal, None).unwrap();
        let rec = encode_record(&Sample {
            best_move: Some(mv),
            ..s
        })
        .unwrap();
        assert!(decode_record(&rec, false).is_ok());
        assert!(decode_record(&rec, true).unwrap_err().0.contains("illegal"));
    }
}
