//! Encoding and decoding of the two network file formats (byte layouts in the [module
//! docs](super)). Decoding checks structure, sizes, length and checksum; matching the blocks
//! against the loaded plugins is [`Nnue::load`](super::Nnue::load)'s job.

use std::fmt;

use super::first_layer::{StoredRun, WeightType};
use super::network::{
    BlockInfo, Network, NetworkParts, Quantization, ShapeError, check_sizes, feature_count,
    term_runs,
};

/// The first eight bytes of a network file in this project's format.
pub const MAGIC: [u8; 8] = *b"NNUEFSET";
/// The format version this code writes (version 2: a weight type per block).
pub const FORMAT_VERSION: u32 = 2;
/// The oldest format version this code reads (version 1: every block `i16`).
pub const OLDEST_FORMAT_VERSION: u32 = 1;
/// Longest feature-set name a thesis file may start with.
pub const MAX_THESIS_NAME: usize = 256;
/// Most blocks a feature set of this project's format may list.
pub const MAX_BLOCKS: usize = 64;

/// The two network file formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetFormat {
    /// This project's versioned, checksummed format (`NNUEFSET` magic).
    Own,
    /// The thesis's `.nn` files: name, NUL, sizes, tensors; nothing else.
    Thesis,
}

impl NetFormat {
    /// `own` or `thesis`.
    pub fn name(self) -> &'static str {
        match self {
            NetFormat::Own => "own",
            NetFormat::Thesis => "thesis",
        }
    }
}

impl fmt::Display for NetFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for NetFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "own" => Ok(NetFormat::Own),
            "thesis" => Ok(NetFormat::Thesis),
            other => Err(format!(
                "unknown network format '{other}' (expected own or thesis)"
            )),
        }
    }
}

/// What is wrong with the bytes of a network file. `Display` is a clause meant to follow
/// "cannot load network FILE: ".
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// Neither this project's magic nor a thesis feature-set name at the start.
    NotANetwork,
    /// This project's magic with a format version this code does not read.
    UnsupportedVersion(u32),
    /// The file ends inside its header.
    TruncatedHeader {
        /// The file's length.
        len: usize,
    },
    /// The file is shorter than its sizes require.
    Truncated {
        /// The file's length.
        len: usize,
        /// The length N, L1, L2 require.
        expected: u64,
        /// N, L1, L2 from the header.
        sizes: [u64; 3],
    },
    /// The file is longer than its sizes require.
    TrailingBytes {
        /// The file's length.
        len: usize,
        /// The length N, L1, L2 require.
        expected: u64,
        /// N, L1, L2 from the header.
        sizes: [u64; 3],
    },
    /// A text field is not valid.
    BadText {
        /// Which field.
        field: &'static str,
        /// Why.
        reason: String,
    },
    /// The header's sizes or parts do not make a network.
    Shape(ShapeError),
    /// The header's N differs from the sum of its block sizes.
    BlockSum {
        /// N as stored.
        n: u64,
        /// The sum of the listed block sizes.
        sum: u64,
    },
    /// The stored CRC-32 differs from the contents'.
    Checksum {
        /// As stored.
        stored: u32,
        /// As computed.
        computed: u32,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sizes = |s: &[u64; 3]| format!("N = {}, L1 = {}, L2 = {}", s[0], s[1], s[2]);
        match self {
            DecodeError::NotANetwork => write!(
                f,
                "it is not a network file (it starts neither with the magic '{}' nor with a thesis feature-set name and a NUL byte)",
                String::from_utf8_lossy(&MAGIC)
            ),
            DecodeError::UnsupportedVersion(v) => write!(
                f,
                "its format version {v} is not supported (this build reads versions {OLDEST_FORMAT_VERSION} to {FORMAT_VERSION})"
            ),
            DecodeError::TruncatedHeader { len } => {
                write!(
                    f,
                    "it is truncated: it ends inside its header after {len} bytes"
                )
            }
            DecodeError::Truncated {
                len,
                expected,
                sizes: s,
            } => write!(
                f,
                "it is truncated: it has {len} bytes but its sizes ({}) need {expected}",
                sizes(s)
            ),
            DecodeError::TrailingBytes {
                len,
                expected,
                sizes: s,
            } => write!(
                f,
                "it has {} trailing bytes: {len} bytes where its sizes ({}) need {expected}",
                *len as u64 - expected,
                sizes(s)
            ),
            DecodeError::BadText { field, reason } => write!(f, "its {field} is invalid: {reason}"),
            DecodeError::Shape(e) => e.fmt(f),
            DecodeError::BlockSum { n, sum } => write!(
                f,
                "its header says N = {n} but its block sizes add up to {sum}"
            ),
            DecodeError::Checksum { stored, computed } => write!(
                f,
                "its checksum does not match (stored CRC-32 {stored:08x}, contents give {computed:08x}): the file is corrupt"
            ),
        }
    }
}

impl std::error::Error for DecodeError {}

impl From<ShapeError> for DecodeError {
    fn from(e: ShapeError) -> Self {
        DecodeError::Shape(e)
    }
}

/// Which format `bytes` claim to be: [`NetFormat::Own`] if they start with [`MAGIC`], else
/// [`NetFormat::Thesis`] (whose decoder then checks the name).
pub fn detect(bytes: &[u8]) -> NetFormat {
    if bytes.starts_with(&MAGIC) {
        NetFormat::Own
    } else {
        NetFormat::Thesis
    }
}

/// Bytes of the tensors of a network with these sizes (W1 of `w1_bytes`, b1, W2, b2, W3, b3).
pub fn tensor_bytes(w1_bytes: u64, l1: u64, l2: u64) -> u64 {
    w1_bytes + 2 * l1 + 2 * l1 * l2 + 4 * l2 + l2 + 4
}

/// Bytes of a first layer of `runs` (rows and weight type per term) and width `l1`.
fn w1_bytes(runs: &[(u32, WeightType)], l1: u64) -> u64 {
    runs.iter()
        .map(|&(rows, ty)| u64::from(rows) * l1 * ty.bytes() as u64)
        .sum()
}

/// A bounds-checked little-endian reader over a header.
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or(DecodeError::TruncatedHeader {
                len: self.bytes.len(),
            })?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn u16(&mut self) -> Result<u16, DecodeError> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().unwrap()))
    }

    fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }

    fn i32(&mut self) -> Result<i32, DecodeError> {
        Ok(i32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }

    fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }

    fn text(&mut self, field: &'static str) -> Result<String, DecodeError> {
        let len = self.u16()? as usize;
        let raw = self.take(len)?;
        let s = std::str::from_utf8(raw).map_err(|_| DecodeError::BadText {
            field,
            reason: "not UTF-8".into(),
        })?;
        if s.is_empty() {
            return Err(DecodeError::BadText {
                field,
                reason: "empty".into(),
            });
        }
        Ok(s.to_string())
    }
}

/// The tensors of a file, decoded from exactly `tensor_bytes(..)` bytes (W1 widened to `i16`).
struct Tensors {
    w1: Vec<i16>,
    b1: Vec<i16>,
    w2: Vec<i8>,
    b2: Vec<i32>,
    w3: Vec<i8>,
    b3: i32,
}

fn decode_tensors(bytes: &[u8], runs: &[(u32, WeightType)], l1: usize, l2: usize) -> Tensors {
    let mut pos = 0;
    let mut next = |len: usize| {
        let s = &bytes[pos..pos + len];
        pos += len;
        s
    };
    let i16s = |s: &[u8]| -> Vec<i16> {
        s.chunks_exact(2)
            .map(|c| i16::from_le_bytes([c[0], c[1]]))
            .collect()
    };
    let i32s = |s: &[u8]| -> Vec<i32> {
        s.chunks_exact(4)
            .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    };
    let i8s = |s: &[u8]| -> Vec<i8> { s.iter().map(|&b| b as i8).collect() };
    let mut w1 = Vec::new();
    for &(rows, ty) in runs {
        let raw = next(rows as usize * l1 * ty.bytes());
        match ty {
            WeightType::I16 => w1.extend(i16s(raw)),
            WeightType::I8 => w1.extend(raw.iter().map(|&b| i16::from(b as i8))),
        }
    }
    let b1 = i16s(next(2 * l1));
    let w2 = i8s(next(2 * l1 * l2));
    let b2 = i32s(next(4 * l2));
    let w3 = i8s(next(l2));
    let b3 = i32s(next(4))[0];
    Tensors {
        w1,
        b1,
        w2,
        b2,
        w3,
        b3,
    }
}

/// Appends the tensors of `net`, W1 in each block's weight type if `typed`, else all `i16`.
fn encode_tensors(net: &Network, typed: bool, out: &mut Vec<u8>) {
    let w1 = net.w1();
    out.reserve(tensor_bytes(w1.bytes() as u64, net.l1() as u64, net.l2() as u64) as usize);
    let i16_bytes = |out: &mut Vec<u8>, v: i16| out.extend_from_slice(&v.to_le_bytes());
    for run in w1.stored_runs() {
        match run {
            StoredRun::Wide(rows) => rows.iter().for_each(|&v| i16_bytes(out, v)),
            StoredRun::Narrow(rows) if typed => out.extend(rows.iter().map(|&v| v as u8)),
            StoredRun::Narrow(rows) => rows.iter().for_each(|&v| i16_bytes(out, i16::from(v))),
        }
    }
    for v in net.b1() {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend(net.w2().iter().map(|&v| v as u8));
    for v in net.b2() {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend(net.w3().iter().map(|&v| v as u8));
    out.extend_from_slice(&net.b3().to_le_bytes());
}

/// Checks that `len` bytes hold exactly a header of `header` bytes, the tensors (W1 of
/// `w1_bytes`) and `trailer`.
fn check_length(
    len: usize,
    header: usize,
    trailer: u64,
    sizes: [u64; 3],
    w1_bytes: u64,
) -> Result<usize, DecodeError> {
    let expected = header as u64 + tensor_bytes(w1_bytes, sizes[1], sizes[2]) + trailer;
    if (len as u64) < expected {
        Err(DecodeError::Truncated {
            len,
            expected,
            sizes,
        })
    } else if len as u64 > expected {
        Err(DecodeError::TrailingBytes {
            len,
            expected,
            sizes,
        })
    } else {
        Ok(expected as usize)
    }
}

/// The header of a thesis file: feature-set name and sizes, and where the tensors start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThesisHeader {
    /// The feature-set name as written (`hv+h+v`).
    pub name: String,
    /// Number of features N.
    pub n: u32,
    /// First-layer width.
    pub l1: u32,
    /// Hidden width.
    pub l2: u32,
    /// Offset of the first tensor byte.
    pub tensors_at: usize,
}

/// Decodes and checks a thesis header: name (letters, digits, `_`, `+`) and NUL, sane sizes, and a
/// file length that holds exactly the tensors.
pub fn thesis_header(bytes: &[u8]) -> Result<ThesisHeader, DecodeError> {
    let header = thesis_header_fields(bytes)?;
    check_length(
        bytes.len(),
        header.tensors_at,
        0,
        header.sizes(),
        header.w1_bytes(),
    )?;
    Ok(header)
}

/// The thesis header at the start of `bytes` (which may be only the file's first bytes).
fn thesis_header_fields(bytes: &[u8]) -> Result<ThesisHeader, DecodeError> {
    let window = &bytes[..bytes.len().min(MAX_THESIS_NAME + 1)];
    let end = window
        .iter()
        .position(|&b| b == 0)
        .ok_or(DecodeError::NotANetwork)?;
    let name_bytes = &bytes[..end];
    if name_bytes.is_empty()
        || !name_bytes
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'+')
    {
        return Err(DecodeError::NotANetwork);
    }
    let name = String::from_utf8(name_bytes.to_vec()).expect("ASCII checked above");
    let mut c = Cursor {
        bytes,
        pos: end + 1,
    };
    let (n, l1, l2) = (c.u32()?, c.u32()?, c.u32()?);
    check_sizes(u64::from(n), u64::from(l1), u64::from(l2))?;
    Ok(ThesisHeader {
        name,
        n,
        l1,
        l2,
        tensors_at: c.pos,
    })
}

impl ThesisHeader {
    fn sizes(&self) -> [u64; 3] {
        [u64::from(self.n), u64::from(self.l1), u64::from(self.l2)]
    }

    /// A thesis file's W1 is all `i16`.
    fn w1_bytes(&self) -> u64 {
        2 * u64::from(self.n) * u64::from(self.l1)
    }
}

/// Decodes a thesis file whose header is `header`, with `blocks` the identities of the blocks
/// its name lists (from the loaded plugins: the file itself stores none).
pub fn decode_thesis(
    bytes: &[u8],
    header: &ThesisHeader,
    blocks: Vec<BlockInfo>,
) -> Result<Network, DecodeError> {
    let sum = feature_count(&header.name, &blocks)?;
    if sum != u64::from(header.n) {
        return Err(DecodeError::BlockSum {
            n: u64::from(header.n),
            sum,
        });
    }
    let t = decode_tensors(
        &bytes[header.tensors_at..],
        &[(header.n, WeightType::I16)],
        header.l1 as usize,
        header.l2 as usize,
    );
    Ok(Network::from_parts(NetworkParts {
        feature_set: header.name.clone(),
        blocks,
        l1: header.l1 as usize,
        l2: header.l2 as usize,
        quantization: Quantization::THESIS,
        w1: t.w1,
        b1: t.b1,
        w2: t.w2,
        b2: t.b2,
        w3: t.w3,
        b3: t.b3,
    })?)
}

/// The thesis file of `net`: its feature-set name as stored, NUL, N, L1, L2, tensors.
pub fn encode_thesis(net: &Network) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(net.feature_set().as_bytes());
    out.push(0);
    for v in [net.n(), net.l1(), net.l2()] {
        out.extend_from_slice(&(v as u32).to_le_bytes());
    }
    encode_tensors(net, false, &mut out);
    out
}

/// What an own-format file says besides its tensors (for `host net info`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnHeader {
    /// Format version.
    pub version: u32,
    /// The stored CRC-32.
    pub checksum: u32,
}

/// The header of an own-format file, up to the first tensor byte.
struct OwnFields {
    version: u32,
    feature_set: String,
    blocks: Vec<BlockInfo>,
    sizes: [u64; 3],
    quantization: Quantization,
    /// The terms' rows and weight types (version 1: all `i16`, one run of N).
    runs: Vec<(u32, WeightType)>,
    tensors_at: usize,
}

/// The own-format header at the start of `bytes` (which may be only the file's first bytes):
/// magic, version, names, block identities, sizes (checked against the limits), quantization.
fn own_header_fields(bytes: &[u8]) -> Result<OwnFields, DecodeError> {
    let mut c = Cursor { bytes, pos: 0 };
    if c.take(MAGIC.len()).map_err(|_| DecodeError::NotANetwork)? != MAGIC {
        return Err(DecodeError::NotANetwork);
    }
    let version = c.u32()?;
    if !(OLDEST_FORMAT_VERSION..=FORMAT_VERSION).contains(&version) {
        return Err(DecodeError::UnsupportedVersion(version));
    }
    let feature_set = c.text("feature-set name")?;
    let n_blocks = c.u16()? as usize;
    if n_blocks == 0 || n_blocks > MAX_BLOCKS {
        return Err(DecodeError::BadText {
            field: "block count",
            reason: format!("{n_blocks} is not between 1 and {MAX_BLOCKS}"),
        });
    }
    let mut blocks = Vec::with_capacity(n_blocks);
    for _ in 0..n_blocks {
        let name = c.text("block name")?;
        let size = c.u32()?;
        let layout_version = c.u32()?;
        let layout_id = c.u64()?;
        let weight_type = match version {
            1 => WeightType::I16,
            _ => {
                let code = c.take(1)?[0];
                WeightType::from_code(code).ok_or_else(|| DecodeError::BadText {
                    field: "weight type",
                    reason: format!("code {code} of block '{name}' is neither 0 (i16) nor 1 (i8)"),
                })?
            }
        };
        blocks.push(BlockInfo {
            name,
            size,
            layout_version,
            layout_id,
            weight_type,
        });
    }
    let (n, l1, l2) = (c.u32()?, c.u32()?, c.u32()?);
    let quantization = Quantization {
        activation_clip: c.i32()?,
        hidden_shift: c.u32()?,
        output_shift: c.u32()?,
    };
    let sizes = [u64::from(n), u64::from(l1), u64::from(l2)];
    check_sizes(sizes[0], sizes[1], sizes[2])?;
    let runs = match version {
        1 => vec![(n, WeightType::I16)],
        _ => term_runs(&feature_set, &blocks)?,
    };
    let rows: u64 = runs.iter().map(|&(r, _)| u64::from(r)).sum();
    if rows != sizes[0] {
        return Err(DecodeError::BlockSum {
            n: sizes[0],
            sum: rows,
        });
    }
    Ok(OwnFields {
        version,
        feature_set,
        blocks,
        sizes,
        quantization,
        runs,
        tensors_at: c.pos,
    })
}

/// How long a network file must be, from its first bytes (the header alone): what a reader
/// needs to read the rest in bounded memory. `TruncatedHeader` means more bytes are needed.
/// Returns the length and the sizes N, L1, L2.
pub fn declared_length(prefix: &[u8]) -> Result<(u64, [u64; 3]), DecodeError> {
    let (tensors_at, trailer, [n, l1, l2], w1) = match detect(prefix) {
        NetFormat::Own => {
            let h = own_header_fields(prefix)?;
            let w1 = w1_bytes(&h.runs, h.sizes[1]);
            (h.tensors_at, 4, h.sizes, w1)
        }
        NetFormat::Thesis => {
            let h = thesis_header_fields(prefix)?;
            (h.tensors_at, 0, h.sizes(), h.w1_bytes())
        }
    };
    let len = tensors_at as u64 + tensor_bytes(w1, l1, l2) + trailer;
    Ok((len, [n, l1, l2]))
}

/// Decodes a file of this project's format, checking magic, version, header, sizes, length,
/// checksum, quantization and that the block list matches the feature-set name.
pub fn decode_own(bytes: &[u8]) -> Result<(Network, OwnHeader), DecodeError> {
    let OwnFields {
        version,
        feature_set,
        blocks,
        sizes,
        quantization,
        runs,
        tensors_at,
    } = own_header_fields(bytes)?;
    let [_, l1, l2] = sizes;
    let total = check_length(bytes.len(), tensors_at, 4, sizes, w1_bytes(&runs, l1))?;
    let stored = u32::from_le_bytes(bytes[total - 4..].try_into().unwrap());
    let computed = crc32fast::hash(&bytes[..total - 4]);
    if stored != computed {
        return Err(DecodeError::Checksum { stored, computed });
    }
    let sum = feature_count(&feature_set, &blocks)?;
    if sum != sizes[0] {
        return Err(DecodeError::BlockSum { n: sizes[0], sum });
    }
    let t = decode_tensors(
        &bytes[tensors_at..total - 4],
        &runs,
        l1 as usize,
        l2 as usize,
    );
    let net = Network::from_parts(NetworkParts {
        feature_set,
        blocks,
        l1: l1 as usize,
        l2: l2 as usize,
        quantization,
        w1: t.w1,
        b1: t.b1,
        w2: t.w2,
        b2: t.b2,
        w3: t.w3,
        b3: t.b3,
    })?;
    Ok((
        net,
        OwnHeader {
            version,
            checksum: stored,
        },
    ))
}

fn push_text(out: &mut Vec<u8>, s: &str) {
    let len = u16::try_from(s.len()).expect("names are far shorter than 64 KiB");
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// The file of `net` in this project's format (see the [module docs](super)).
pub fn encode_own(net: &Network) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    push_text(&mut out, net.feature_set());
    out.extend_from_slice(&(net.blocks().len() as u16).to_le_bytes());
    for b in net.blocks() {
        push_text(&mut out, &b.name);
        out.extend_from_slice(&b.size.to_le_bytes());
        out.extend_from_slice(&b.layout_version.to_le_bytes());
        out.extend_from_slice(&b.layout_id.to_le_bytes());
        out.push(b.weight_type.code());
    }
    for v in [net.n(), net.l1(), net.l2()] {
        out.extend_from_slice(&(v as u32).to_le_bytes());
    }
    let q = net.quantization();
    out.extend_from_slice(&q.activation_clip.to_le_bytes());
    out.extend_from_slice(&q.hidden_shift.to_le_bytes());
    out.extend_from_slice(&q.output_shift.to_le_bytes());
    encode_tensors(net, true, &mut out);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}
