//! Stockfish's `.binpack` (the format of Stockfish's training data and what the thesis trained
//! on), through the `sfbinpack` crate (a port of Stockfish's `nnue_data_binpack_format.h`).
//!
//! A file is a sequence of chunks: `BINP`, a little-endian `u32` size, then that many bytes of
//! chains. A chain is a 32-byte stem (compressed position, move, score, ply and result, halfmove
//! clock), a big-endian `u16` count, and that many (move, score) pairs encoded relative to the
//! previous position: each following position is the previous one after its move, one ply later,
//! with the result negated. Writers start a new chain whenever a sample is not such a
//! continuation, so any sequence of samples can be stored; games stored in order compress to
//! about 2–3 bytes per position.
//!
//! What the format cannot hold: a sample without a best move, castling rights of a rook off its
//! corner, a ply above 16383, a halfmove clock above 255; a missing result is written as 0.
//! Chunks are limited to 100 MiB by the format; Stockfish's and this writer's chunks are about
//! 1 MiB, so a reader holds about 1 MiB.
//!
//! The crate panics on corrupt chunks; the reader catches that (see `guard`) and reports the
//! chunk's byte offset and entry (never the panic's own text); with the `skip` policy the rest
//! of that chunk is skipped. A record without a move is corrupt (every entry carries the move
//! played from it) and is reported at its chunk.

use std::io::{self, Read, Seek, SeekFrom, Write};
use std::sync::{Arc, Mutex};

use plugin_api::{Board, Color as AbiColor, MoveKind, NO_SQUARE, Role};
use sfbinpack::chess::castling_rights::CastlingRights;
use sfbinpack::chess::color::Color;
use sfbinpack::chess::coords::Square;
use sfbinpack::chess::r#move::{Move as SfMove, MoveType};
use sfbinpack::chess::piece::Piece;
use sfbinpack::chess::piecetype::PieceType;
use sfbinpack::chess::position::Position;
use sfbinpack::{ChunkReader, CompressedTrainingDataEntryWriter, TrainingDataEntry};

use super::guard::quietly;
use super::invalid::InvalidSample;
use super::sample::{Sample, check_structure, move_on_board, normalize_ep};
use super::stream::{DataError, DataErrorKind, Location, ReadOptions, SampleReader, SampleWriter};

/// The chunk magic.
pub const MAGIC: &[u8; 4] = b"BINP";
/// The largest chunk the format allows.
pub const MAX_CHUNK: u32 = 100 * 1024 * 1024;
/// Chains longer than this are cut (a new chunk starts), which keeps the crate's writer within
/// its movetext buffer whatever the input.
const MAX_CHAIN: usize = 1000;

const ROLES: [PieceType; 6] = [
    PieceType::Pawn,
    PieceType::Knight,
    PieceType::Bishop,
    PieceType::Rook,
    PieceType::Queen,
    PieceType::King,
];

/// Castling flags and the corner rook squares they stand for.
const CASTLING: [(CastlingRights, u8); 4] = [
    (CastlingRights::WHITE_KING_SIDE, 7),
    (CastlingRights::WHITE_QUEEN_SIDE, 0),
    (CastlingRights::BLACK_KING_SIDE, 63),
    (CastlingRights::BLACK_QUEEN_SIDE, 56),
];

/// The ABI board of a binpack position (en-passant square normalised to legal captures).
pub fn board_from_binpack(pos: &Position) -> Board {
    let mut board = Board {
        by_color: [0; 2],
        by_role: [0; 6],
        castling: 0,
        turn: if pos.side_to_move() == Color::White {
            AbiColor::White
        } else {
            AbiColor::Black
        },
        ep_square: NO_SQUARE,
    };
    for (i, pt) in ROLES.into_iter().enumerate() {
        let w = pos.pieces_bb_color(Color::White, pt).bits();
        let b = pos.pieces_bb_color(Color::Black, pt).bits();
        board.by_role[i] = w | b;
        board.by_color[0] |= w;
        board.by_color[1] |= b;
    }
    let rights = pos.castling_rights();
    for (flag, rook) in CASTLING {
        if rights.contains(flag) {
            board.castling |= 1u64 << rook;
        }
    }
    let ep = pos.ep_square();
    if ep != Square::NONE && ep.index() < 64 {
        board.ep_square = ep.index() as u8;
    }
    normalize_ep(&mut board);
    board
}

/// The sample of a decoded binpack entry.
pub fn sample_from_entry(
    entry: &TrainingDataEntry,
    validate: bool,
) -> Result<Sample, InvalidSample> {
    let board = board_from_binpack(&entry.pos);
    check_structure(&board)?;
    if !(-1..=1).contains(&entry.result) {
        return Err(format!("game result {} is not -1, 0 or 1", entry.result).into());
    }
    let mv = entry.mv;
    let (from, to) = (mv.from().index(), mv.to().index());
    // Every binpack entry carries the move played from it (the chain needs it, and this
    // project's writer refuses samples without one): an empty move is a corrupt record.
    let best_move = if from >= 64 || to >= 64 || from == to {
        return Err(format!("record without a move (from square {from}, to square {to})").into());
    } else {
        let (kind, promotion) = match mv.mtype() {
            MoveType::Normal => (MoveKind::Normal, None),
            MoveType::Promotion => {
                let pt = mv.promoted_piece().piece_type().ordinal() as usize;
                let role = Role::from_index(pt as u8)
                    .filter(|r| !matches!(r, Role::Pawn | Role::King))
                    .ok_or_else(|| format!("promotion to piece type {pt}"))?;
                (MoveKind::Normal, Some(role))
            }
            MoveType::Castle => (MoveKind::Castle, None),
            MoveType::EnPassant => (MoveKind::EnPassant, None),
        };
        Some(move_on_board(
            &board, from as u8, to as u8, kind, promotion,
        )?)
    };
    let sample = Sample {
        board,
        rule50: entry.pos.rule50_counter(),
        ply: entry.ply,
        score: entry.score,
        best_move,
        result: Some(entry.result as i8),
    };
    if validate {
        sample.validate()?;
    }
    Ok(sample)
}

/// The binpack entry of a sample, or why the format cannot hold it.
pub fn entry_from_sample(s: &Sample) -> Result<TrainingDataEntry, InvalidSample> {
    let b = &s.board;
    check_structure(b)?;
    let mv = s.best_move.ok_or(InvalidSample::from(
        "a binpack entry needs a move (this sample has none)",
    ))?;
    if move_on_board(b, mv.from, mv.to, mv.kind, mv.promotion()) != Ok(mv) {
        return Err(format!(
            "move {} does not fit the board",
            crate::data::sample::uci(&mv)
        )
        .into());
    }
    if s.ply > 0x3fff {
        return Err(format!("ply {} above the format's 16383", s.ply).into());
    }
    if s.rule50 > 255 {
        return Err(format!("halfmove clock {} above 255", s.rule50).into());
    }
    let mut pos = Position::empty();
    for sq in 0..64u8 {
        if let Some((color, role)) = b.piece_at(sq) {
            let c = if color == AbiColor::White {
                Color::White
            } else {
                Color::Black
            };
            pos.place(
                Piece::new(ROLES[role.index()], c),
                Square::new(u32::from(sq)),
            );
        }
    }
    let stm = if b.turn == AbiColor::White {
        Color::White
    } else {
        Color::Black
    };
    pos.set_side_to_move(stm);
    let mut rest = b.castling;
    let mut rights = CastlingRights::NONE;
    for (flag, rook) in CASTLING {
        if b.castling & (1u64 << rook) != 0 {
            rights |= flag;
            rest &= !(1u64 << rook);
        }
    }
    if rest != 0 {
        return Err("castling rights of a rook off its corner (Chess960)".into());
    }
    pos.set_castling_rights(rights);
    pos.set_ep_square_unchecked(if b.ep_square < 64 {
        Square::new(u32::from(b.ep_square))
    } else {
        Square::NONE
    });
    pos.set_ply(s.ply);
    pos.set_rule50_counter(s.rule50);
    let (from, to) = (
        Square::new(u32::from(mv.from)),
        Square::new(u32::from(mv.to)),
    );
    let sf_move = match (mv.kind, mv.promotion()) {
        (MoveKind::Castle, _) => SfMove::new(from, to, MoveType::Castle, Piece::none()),
        (MoveKind::EnPassant, _) => SfMove::new(from, to, MoveType::EnPassant, Piece::none()),
        (MoveKind::Normal, Some(p)) => SfMove::new(
            from,
            to,
            MoveType::Promotion,
            Piece::new(ROLES[p.index()], stm),
        ),
        (MoveKind::Normal, None) => SfMove::new(from, to, MoveType::Normal, Piece::none()),
    };
    Ok(TrainingDataEntry {
        pos,
        mv: sf_move,
        score: s.score,
        ply: s.ply,
        result: i16::from(s.result.unwrap_or(0)),
    })
}

/// Byte ranges of whole chunks, each about `target` bytes or more. A damaged header ends the
/// scan: the rest of the file becomes the last range.
pub fn chunk_ranges(path: &std::path::Path, len: u64, target: u64) -> io::Result<Vec<(u64, u64)>> {
    let mut f = std::fs::File::open(path)?;
    let mut out = Vec::new();
    let (mut start, mut offset) = (0u64, 0u64);
    while offset < len {
        let mut header = [0u8; 8];
        f.seek(SeekFrom::Start(offset))?;
        let ok = f.read_exact(&mut header).is_ok() && &header[..4] == MAGIC;
        let size = u32::from_le_bytes(header[4..].try_into().expect("4 bytes"));
        let next = offset + 8 + u64::from(size);
        if !ok || size > MAX_CHUNK || next > len {
            break;
        }
        offset = next;
        if offset - start >= target {
            out.push((start, offset));
            start = offset;
        }
    }
    if start < len {
        out.push((start, len));
    }
    Ok(out)
}

/// Streams the entries of the chunks that start in a byte range of a `.binpack` file (the range
/// must start at a chunk header, as [`chunk_ranges`] gives).
pub struct BinpackReader<R> {
    file: String,
    reader: R,
    next_chunk: u64,
    end: u64,
    options: ReadOptions,
    chunk: Vec<u8>,
    chunk_at: u64,
    chunk_reader: Option<ChunkReader>,
    entry_index: u64,
    resync: bool,
    done: bool,
}

impl<R: Read + Seek> BinpackReader<R> {
    /// A reader of the chunks starting in `start..end`.
    pub fn new(
        file: String,
        reader: R,
        start: u64,
        end: u64,
        options: ReadOptions,
    ) -> io::Result<Self> {
        Ok(BinpackReader {
            file,
            reader,
            next_chunk: start,
            end,
            options,
            chunk: Vec::new(),
            chunk_at: start,
            chunk_reader: None,
            entry_index: 0,
            resync: false,
            done: false,
        })
    }

    fn err(&self, at: u64, kind: DataErrorKind, message: String) -> DataError {
        DataError::new(&self.file, Some(Location::byte(at)), kind, message)
    }

    /// Reads as many bytes as there are, up to `buf.len()`.
    fn read_up_to(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut n = 0;
        while n < buf.len() {
            match self.reader.read(&mut buf[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(n)
    }

    /// Moves `next_chunk` to the next `BINP` in the range; false if there is none.
    fn find_magic(&mut self) -> io::Result<bool> {
        self.reader.seek(SeekFrom::Start(self.next_chunk))?;
        let mut window = vec![0u8; 1 << 16];
        let mut base = self.next_chunk;
        let mut carry = 0usize;
        while base < self.end {
            let n = self.read_up_to(&mut window[carry..])?;
            let have = carry + n;
            if let Some(i) = window[..have].windows(4).position(|w| w == MAGIC) {
                self.next_chunk = base + i as u64;
                return Ok(self.next_chunk < self.end);
            }
            if n == 0 {
                return Ok(false);
            }
            // Keep the last three bytes: a magic may straddle two reads.
            carry = have.min(3);
            window.copy_within(have - carry..have, 0);
            base += (have - carry) as u64;
        }
        Ok(false)
    }

    /// Loads the next chunk; `Ok(false)` at the end of the range.
    fn load_chunk(&mut self) -> Result<bool, DataError> {
        let io_err =
            |me: &Self, e: io::Error| me.err(me.next_chunk, DataErrorKind::Io, e.to_string());
        if self.resync {
            self.resync = false;
            match self.find_magic() {
                Ok(true) => {}
                Ok(false) => return Ok(false),
                Err(e) => return Err(io_err(self, e)),
            }
        }
        if self.next_chunk >= self.end {
            return Ok(false);
        }
        let at = self.next_chunk;
        self.reader
            .seek(SeekFrom::Start(at))
            .map_err(|e| io_err(self, e))?;
        let mut header = [0u8; 8];
        let n = self.read_up_to(&mut header).map_err(|e| io_err(self, e))?;
        if n == 0 {
            return Ok(false);
        }
        if n < 8 {
            self.done = true;
            return Err(self.err(
                at,
                DataErrorKind::Truncated,
                format!("chunk header of {n} bytes"),
            ));
        }
        if &header[..4] != MAGIC {
            self.resync = true;
            self.next_chunk = at + 1;
            return Err(self.err(
                at,
                DataErrorKind::BadMagic,
                format!("expected 'BINP', found {:02x?}", &header[..4]),
            ));
        }
        let size = u32::from_le_bytes(header[4..].try_into().expect("4 bytes"));
        if size > MAX_CHUNK {
            self.resync = true;
            self.next_chunk = at + 1;
            return Err(self.err(
                at,
                DataErrorKind::BadMagic,
                format!("chunk size {size} above the format's {MAX_CHUNK}"),
            ));
        }
        self.chunk.resize(size as usize, 0);
        let mut chunk = std::mem::take(&mut self.chunk);
        let got = self.read_up_to(&mut chunk);
        self.chunk = chunk;
        let got = got.map_err(|e| io_err(self, e))?;
        if got < size as usize {
            self.done = true;
            return Err(self.err(
                at,
                DataErrorKind::Truncated,
                format!("chunk of {size} bytes ends after {got}"),
            ));
        }
        self.chunk_at = at;
        self.next_chunk = at + 8 + u64::from(size);
        self.chunk_reader = Some(ChunkReader::default());
        self.entry_index = 0;
        Ok(true)
    }
}

impl<R: Read + Seek + Send> Iterator for BinpackReader<R> {
    type Item = Result<Sample, DataError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(cr) = self.chunk_reader.as_mut() {
                let chunk = &self.chunk;
                let step = quietly(|| cr.has_next(chunk).then(|| cr.next(chunk)));
                match step {
                    Ok(Some(entry)) => {
                        self.entry_index += 1;
                        match sample_from_entry(&entry, self.options.validate) {
                            Ok(s) => return Some(Ok(s)),
                            Err(m) => {
                                self.chunk_reader = None;
                                return Some(Err(self.err(
                                    self.chunk_at,
                                    DataErrorKind::BadRecord,
                                    format!(
                                        "entry {} of the chunk: {m}; the rest of the chunk is unreadable",
                                        self.entry_index
                                    ),
                                )));
                            }
                        }
                    }
                    Ok(None) => self.chunk_reader = None,
                    Err(_panic) => {
                        // The crate's panic text ("index out of bounds ...") says nothing to a
                        // user: the chunk and the entry do.
                        self.chunk_reader = None;
                        return Some(Err(self.err(
                            self.chunk_at,
                            DataErrorKind::BadRecord,
                            format!(
                                "chunk does not decode after entry {} (corrupt or truncated chain); the rest of the chunk is unreadable",
                                self.entry_index
                            ),
                        )));
                    }
                }
                continue;
            }
            if self.done {
                return None;
            }
            match self.load_chunk() {
                Ok(true) => {}
                Ok(false) => {
                    self.done = true;
                    return None;
                }
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

impl<R: Read + Seek + Send> SampleReader for BinpackReader<R> {
    fn bytes_read(&self) -> u64 {
        self.next_chunk.min(self.end)
    }
}

/// A `Write` that records the first error and swallows it (the crate's writer ignores some
/// errors and panics on others once it has failed), so the sink can report it.
struct Capture<W> {
    inner: W,
    error: Arc<Mutex<Option<io::Error>>>,
}

impl<W: Write> Capture<W> {
    fn record(&self, e: io::Error) {
        let mut slot = self.error.lock().unwrap_or_else(|p| p.into_inner());
        slot.get_or_insert(e);
    }

    fn failed(&self) -> bool {
        self.error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }
}

impl<W: Write> Write for Capture<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !self.failed()
            && let Err(e) = self.inner.write_all(buf)
        {
            self.record(e);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.failed()
            && let Err(e) = self.inner.flush()
        {
            self.record(e);
        }
        Ok(())
    }
}

/// Writes `.binpack` through the crate's writer (1 MiB chunks, chains of consecutive plies).
pub struct BinpackWriter<W: Write> {
    file: String,
    writer: Option<CompressedTrainingDataEntryWriter<Capture<W>>>,
    error: Arc<Mutex<Option<io::Error>>>,
    last: Option<TrainingDataEntry>,
    chain: usize,
    finished: Option<W>,
}

impl<W: Write> BinpackWriter<W> {
    /// A writer into `out`; `file` names it in errors.
    pub fn new(file: String, out: W) -> Self {
        let error = Arc::new(Mutex::new(None));
        let writer = CompressedTrainingDataEntryWriter::new(Capture {
            inner: out,
            error: error.clone(),
        })
        .ok();
        BinpackWriter {
            file,
            writer,
            error,
            last: None,
            chain: 0,
            finished: None,
        }
    }

    /// The underlying writer, after [`SampleWriter::finish`].
    pub fn into_inner(self) -> Option<W> {
        self.finished
    }

    fn check_io(&self) -> Result<(), DataError> {
        let slot = self.error.lock().unwrap_or_else(|p| p.into_inner());
        match slot.as_ref() {
            Some(e) => Err(DataError::new(
                &self.file,
                None,
                DataErrorKind::Io,
                e.to_string(),
            )),
            None => Ok(()),
        }
    }

    /// Flushes the crate's writer and takes the output back.
    fn close(&mut self) -> Result<Option<W>, DataError> {
        let Some(mut w) = self.writer.take() else {
            return Ok(None);
        };
        let out = quietly(move || {
            w.flush_and_end();
            w.into_inner()
        });
        match out {
            Ok(Ok(capture)) => Ok(Some(capture.inner)),
            Ok(Err(e)) => Err(DataError::new(
                &self.file,
                None,
                DataErrorKind::Io,
                e.to_string(),
            )),
            Err(panic) => Err(DataError::new(
                &self.file,
                None,
                DataErrorKind::Io,
                format!("binpack writer failed: {panic}"),
            )),
        }
    }

    fn closed(&self) -> DataError {
        DataError::new(
            &self.file,
            None,
            DataErrorKind::Io,
            "writer already failed or finished".into(),
        )
    }
}

impl<W: Write> SampleWriter for BinpackWriter<W> {
    fn write(&mut self, s: &Sample) -> Result<(), DataError> {
        let entry = entry_from_sample(s)
            .map_err(|m| DataError::new(&self.file, None, DataErrorKind::Unrepresentable, m.0))?;
        if self.writer.is_none() {
            return Err(self.closed());
        }
        let continues = match &self.last {
            Some(last) => quietly(|| last.is_continuation(&entry)).unwrap_or(false),
            None => false,
        };
        self.chain = if continues { self.chain + 1 } else { 0 };
        if self.chain >= MAX_CHAIN {
            // Start a new writer: the long chain ends with this chunk.
            let out = self.close()?.ok_or_else(|| self.closed())?;
            self.writer = CompressedTrainingDataEntryWriter::new(Capture {
                inner: out,
                error: self.error.clone(),
            })
            .ok();
            self.chain = 0;
        }
        let closed = self.closed();
        let w = self.writer.as_mut().ok_or(closed)?;
        match quietly(|| w.write_entry(&entry)) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                return Err(DataError::new(
                    &self.file,
                    None,
                    DataErrorKind::Io,
                    e.to_string(),
                ));
            }
            Err(panic) => {
                // Its state is unknown: never touch (or drop-flush) it again.
                if let Some(w) = self.writer.take() {
                    std::mem::forget(w);
                }
                return Err(DataError::new(
                    &self.file,
                    None,
                    DataErrorKind::BadRecord,
                    format!("binpack writer failed on {}: {panic}", s.fen()),
                ));
            }
        }
        self.last = Some(entry);
        self.check_io()
    }

    fn finish(&mut self) -> Result<(), DataError> {
        let out = self.close()?;
        self.check_io()?;
        if let Some(mut out) = out {
            out.flush()
                .map_err(|e| DataError::new(&self.file, None, DataErrorKind::Io, e.to_string()))?;
            self.finished = Some(out);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::sample::chess_from_setup;
    use shakmaty::{Chess, Position as _};
    use std::io::Cursor;

    fn game() -> Vec<Sample> {
        let mut pos = Chess::default();
        let mut out = Vec::new();
        for (i, uci) in [
            "e2e4", "c7c5", "g1f3", "d7d6", "d2d4", "c5d4", "f3d4", "g8f6",
        ]
        .iter()
        .enumerate()
        {
            let m = shakmaty::uci::UciMove::from_ascii(uci.as_bytes())
                .unwrap()
                .to_move(&pos)
                .unwrap();
            let result = if i % 2 == 0 { 1 } else { -1 };
            out.push(Sample::from_position(
                &pos,
                (i as i16) * 10 - 20,
                plugin_api::move_from_shakmaty(&m),
                Some(result),
            ));
            pos.play_unchecked(m);
        }
        out
    }

    fn write(samples: &[Sample]) -> Vec<u8> {
        let mut w = BinpackWriter::new("o".into(), Vec::new());
        for s in samples {
            w.write(s).unwrap();
        }
        w.finish().unwrap();
        w.into_inner().unwrap()
    }

    fn read(bytes: &[u8]) -> Vec<Result<Sample, DataError>> {
        BinpackReader::new(
            "i".into(),
            Cursor::new(bytes.to_vec()),
            0,
            bytes.len() as u64,
            ReadOptions::default(),
        )
        .unwrap()
        .collect()
    }

    #[test]
    fn round_trip_and_chaining() {
        let samples = game();
        let bytes = write(&samples);
        assert_eq!(&bytes[..4], MAGIC);
        // One stem (32 bytes) + count (2) + 7 short move/score pairs: one chain.
        assert!(bytes.len() < 8 + 34 + 7 * 3, "{} bytes", bytes.len());
        let back: Vec<Sample> = read(&bytes).into_iter().map(Result::unwrap).collect();
        assert_eq!(back, samples);
    }

    #[test]
    fn unrepresentable_samples_are_refused() {
        let mut s = game()[0];
        s.best_move = None;
        let mut w = BinpackWriter::new("o".into(), Vec::new());
        assert_eq!(
            w.write(&s).unwrap_err().kind,
            DataErrorKind::Unrepresentable
        );
        let setup = chess_text::parse_fen("4k3/8/8/8/8/8/8/4K3 w - - 0 1").unwrap();
        let mut s = Sample::from_position(&chess_from_setup(setup).unwrap(), 0, None, None);
        s.best_move = game()[0].best_move;
        assert!(w.write(&s).is_err());
    }

    #[test]
    fn an_entry_without_a_move_is_refused_at_the_input() {
        let bytes = write(&game());
        let mut reader = BinpackReader::new(
            "in.binpack".into(),
            std::io::Cursor::new(bytes.clone()),
            0,
            bytes.len() as u64,
            ReadOptions::default(),
        )
        .unwrap();
        reader.load_chunk().unwrap();
        let cr = reader.chunk_reader.as_mut().unwrap();
        let mut entry = cr.next(&reader.chunk);
        let e2 = Square::new(12);
        entry.mv = SfMove::new(e2, e2, MoveType::Normal, Piece::none());
        let err = sample_from_entry(&entry, false).unwrap_err();
        assert!(err.0.contains("without a move"), "{err}");
    }

    #[test]
    fn corrupt_input_is_reported_not_panicked() {
        let bytes = write(&game());
        // Wrong magic: reported at byte 0; nothing else found.
        let mut bad = bytes.clone();
        bad[0] = b'X';
        let items = read(&bad);
        assert_eq!(items.len(), 1);
        let e = items[0].as_ref().unwrap_err();
        assert_eq!(
            (e.kind, e.location),
            (DataErrorKind::BadMagic, Some(Location::byte(0)))
        );
        // Garbage before a good chunk: one error, then all entries.
        let mut prefixed = b"junkjunk".to_vec();
        prefixed.extend_from_slice(&bytes);
        let items = read(&prefixed);
        assert_eq!(items.iter().filter(|r| r.is_err()).count(), 1);
        assert_eq!(items.iter().filter(|r| r.is_ok()).count(), 8);
        // Truncated chunk.
        let items = read(&bytes[..bytes.len() - 3]);
        assert_eq!(
            items[0].as_ref().unwrap_err().kind,
            DataErrorKind::Truncated
        );
        // Random chunk contents: never a panic, only errors or decodable entries.
        let mut rng = 0x1234_5678_9abc_def0u64;
        for _ in 0..200 {
            let mut junk = bytes.clone();
            for b in junk[8..].iter_mut() {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                if rng.is_multiple_of(5) {
                    *b = (rng >> 24) as u8;
                }
            }
            let _ = read(&junk);
        }
    }

    #[test]
    fn chunk_ranges_follow_headers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.binpack");
        let one = write(&game());
        let mut two = one.clone();
        two.extend_from_slice(&one);
        two.extend_from_slice(b"BINPjunk");
        std::fs::write(&path, &two).unwrap();
        let len = two.len() as u64;
        let n = one.len() as u64;
        assert_eq!(
            chunk_ranges(&path, len, 1).unwrap(),
            vec![(0, n), (n, 2 * n), (2 * n, len)]
        );
        assert_eq!(chunk_ranges(&path, len, 1 << 20).unwrap(), vec![(0, len)]);
    }
}
