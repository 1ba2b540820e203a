//! Encoding and decoding of the two network file formats (byte layouts in the [module
//! docs](super)). Decoding checks structure, sizes, length and checksum; matching the blocks
//! against the loaded plugins is [`Nnue::load`](super::Nnue::load)'s job.

use std::fmt;

use super::first_layer::{StoredRun, WeightType};
use super::network::{
    BlockInfo, LayerParts, Network, NetworkParts, Quantization, ShapeError, check_sizes,
    feature_count, term_runs,
};
use super::shape::{Arch, Hidden, MAX_HIDDEN_LAYERS};

/// The first eight bytes of a network file in this project's format.
pub const MAGIC: [u8; 8] = *b"NNUEFSET";
use crate::names::UnknownName;
use crate::units::ScoreUnits;
pub use crate::wire_code::{FORMAT_VERSION, SHAPE_VERSION, THESIS_SHAPE_VERSION, UNITS_VERSION};
use crate::wire_code::{TODAY_VERSION, WireCode};
/// The oldest format version this code reads (version 1: every block `i16`).
pub const OLDEST_FORMAT_VERSION: u32 = 1;
/// Longest feature-set name a thesis file may start with.
pub const MAX_THESIS_NAME: usize = 256;
/// Most blocks a feature set of this project's format may list.
pub const MAX_BLOCKS: usize = 64;

/// The network file formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetFormat {
    /// This project's versioned, checksummed format (`NNUEFSET` magic).
    Own,
    /// The thesis's `.nn` files: name, NUL, sizes, tensors; nothing else.
    Thesis,
    /// Stockfish 15.1's `.nnue` files (SFNNv5, [`stockfish`](super::stockfish)).
    Stockfish,
}

impl NetFormat {
    /// `own`, `thesis` or `stockfish`.
    pub fn name(self) -> &'static str {
        match self {
            NetFormat::Own => "own",
            NetFormat::Thesis => "thesis",
            NetFormat::Stockfish => "stockfish",
        }
    }
}

impl fmt::Display for NetFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for NetFormat {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        match s.trim().to_ascii_lowercase().as_str() {
            "own" => Ok(NetFormat::Own),
            "thesis" => Ok(NetFormat::Thesis),
            "stockfish" => Ok(NetFormat::Stockfish),
            other => Err(UnknownName {
                what: "network format",
                text: other.to_string(),
                expected: "own, thesis or stockfish",
            }),
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
    /// A Stockfish network this build cannot read (another architecture, a wrong hash), as a
    /// clause.
    Stockfish(String),
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
            DecodeError::Stockfish(reason) => f.write_str(reason),
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

/// Bytes of the tensors of a thesis-shaped network with these sizes (W1 of `w1_bytes`, b1, W2,
/// b2, W3, b3).
pub fn tensor_bytes(w1_bytes: u64, l1: u64, l2: u64) -> u64 {
    arch_tensor_bytes(w1_bytes, 0, l1, &Arch::thesis(l2 as usize))
}

/// Bytes of the tensors of a network of `arch` with N = `n` and this first layer: W1 of
/// `w1_bytes`, b1, the PSQT weights, then each stack's layers (weights, biases).
pub fn arch_tensor_bytes(w1_bytes: u64, n: u64, l1: u64, arch: &Arch) -> u64 {
    let stack: u64 = arch
        .layers(l1 as usize)
        .iter()
        .map(|&(i, o)| (i * o + 4 * o) as u64)
        .sum();
    w1_bytes + 2 * l1 + 4 * n * arch.psqt_buckets as u64 + arch.stacks as u64 * stack
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

/// Little-endian `i16` values of `bytes` (a multiple of 2 long).
pub(crate) fn i16s(bytes: &[u8]) -> Vec<i16> {
    bytes
        .chunks_exact(2)
        .map(|c| i16::from_le_bytes([c[0], c[1]]))
        .collect()
}

/// Little-endian `i32` values of `bytes` (a multiple of 4 long).
pub(crate) fn i32s(bytes: &[u8]) -> Vec<i32> {
    bytes
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// The tensors of a file, decoded from exactly `arch_tensor_bytes(..)` bytes (W1 widened to
/// `i16`).
struct Tensors {
    w1: Vec<i16>,
    b1: Vec<i16>,
    psqt: Vec<i32>,
    stacks: Vec<Vec<LayerParts>>,
}

fn decode_tensors(bytes: &[u8], runs: &[(u32, WeightType)], l1: usize, arch: &Arch) -> Tensors {
    let mut pos = 0;
    let mut next = |len: usize| {
        let s = &bytes[pos..pos + len];
        pos += len;
        s
    };
    let i8s = |s: &[u8]| -> Vec<i8> { s.iter().map(|&b| b as i8).collect() };
    let mut w1 = Vec::new();
    let mut n = 0;
    for &(rows, ty) in runs {
        n += rows as usize;
        let raw = next(rows as usize * l1 * ty.bytes());
        match ty {
            WeightType::I16 => w1.extend(i16s(raw)),
            WeightType::I8 => w1.extend(raw.iter().map(|&b| i16::from(b as i8))),
        }
    }
    let b1 = i16s(next(2 * l1));
    let psqt = i32s(next(4 * n * arch.psqt_buckets));
    let layers = arch.layers(l1);
    let stacks = (0..arch.stacks)
        .map(|_| {
            layers
                .iter()
                .map(|&(inputs, outputs)| LayerParts {
                    weights: i8s(next(inputs * outputs)),
                    biases: i32s(next(4 * outputs)),
                })
                .collect()
        })
        .collect();
    Tensors {
        w1,
        b1,
        psqt,
        stacks,
    }
}

/// Appends the tensors of `net`, W1 in each block's weight type if `typed`, else all `i16`.
fn encode_tensors(net: &Network, typed: bool, out: &mut Vec<u8>) {
    let w1 = net.w1();
    out.reserve(arch_tensor_bytes(
        w1.bytes() as u64,
        net.n() as u64,
        net.l1() as u64,
        net.arch(),
    ) as usize);
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
    for v in net.psqt() {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for stack in net.stacks() {
        for layer in stack {
            out.extend(layer.weights().iter().map(|&v| v as u8));
            for v in layer.biases() {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
    }
}

/// Checks that `len` bytes hold exactly a header of `header` bytes, the tensors (W1 of
/// `w1_bytes`) and `trailer`.
fn check_length(
    len: usize,
    header: usize,
    trailer: u64,
    sizes: [u64; 3],
    (w1_bytes, arch): (u64, &Arch),
) -> Result<usize, DecodeError> {
    let expected = header as u64 + arch_tensor_bytes(w1_bytes, sizes[0], sizes[1], arch) + trailer;
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
        (header.w1_bytes(), &Arch::thesis(header.l2 as usize)),
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
    let arch = Arch::thesis(header.l2 as usize);
    let t = decode_tensors(
        &bytes[header.tensors_at..],
        &[(header.n, WeightType::I16)],
        header.l1 as usize,
        &arch,
    );
    Ok(Network::from_parts(NetworkParts {
        feature_set: header.name.clone(),
        blocks,
        l1: header.l1 as usize,
        arch,
        quantization: Quantization::THESIS,
        w1: t.w1,
        b1: t.b1,
        psqt: t.psqt,
        stacks: t.stacks,
        units: ScoreUnits::Centipawns,
    })?)
}

/// A network that a file format cannot hold. `Display`: a clause.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    /// The thesis's format holds only the thesis's shape.
    #[error("the thesis's format holds only the thesis's shape, not {0}")]
    ThesisShape(String),
    /// The thesis's format records no units: its networks are in centipawns.
    #[error("the thesis's format holds networks in centipawns; this one's output is in {}", .0.describe())]
    ThesisUnits(ScoreUnits),
    /// No Stockfish format holds the network (why, as a clause).
    #[error(transparent)]
    Stockfish(#[from] NotStockfish),
}

/// Why no Stockfish format holds a network: its shape, feature set, weight types or width, as a
/// clause (with the option that would make one where there is one;
/// [`crate::stockfish::generation_of`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotStockfish(String);

impl From<String> for NotStockfish {
    fn from(why: String) -> Self {
        NotStockfish(why)
    }
}

/// The thesis file of `net`: its feature-set name as stored, NUL, N, L1, L2, tensors. The
/// format holds the thesis's shape only.
pub fn encode_thesis(net: &Network) -> Result<Vec<u8>, EncodeError> {
    if net.arch().preset() != Some(crate::shape::Preset::Thesis) {
        return Err(EncodeError::ThesisShape(net.arch().to_string()));
    }
    if net.units() != ScoreUnits::Centipawns {
        return Err(EncodeError::ThesisUnits(net.units()));
    }
    let mut out = Vec::new();
    out.extend_from_slice(net.feature_set().as_bytes());
    out.push(0);
    for v in [net.n(), net.l1(), net.l2()] {
        out.extend_from_slice(&(v as u32).to_le_bytes());
    }
    encode_tensors(net, false, &mut out);
    Ok(out)
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
    /// The shape after the first layer (versions 1 and 2: the thesis's).
    arch: Arch,
    /// The terms' rows and weight types (version 1: all `i16`, one run of N).
    runs: Vec<(u32, WeightType)>,
    /// The output's units (before version 5: centipawns).
    units: ScoreUnits,
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
    let n_blocks = count_within(c.u16()?.into(), "block count", MAX_BLOCKS)?;
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
    let arch = match version {
        1 | 2 => Arch::thesis(l2 as usize),
        v => read_arch(&mut c, v)?,
    };
    let units = match version >= UNITS_VERSION {
        true => read_code(&mut c)?,
        false => ScoreUnits::Centipawns,
    };
    if arch.hidden[0].width != l2 as usize {
        return Err(DecodeError::BadText {
            field: "shape",
            reason: format!(
                "its first hidden width {} differs from the header's L2 = {l2}",
                arch.hidden[0].width
            ),
        });
    }
    arch.check(l1 as usize)
        .map_err(|reason| DecodeError::BadText {
            field: "shape",
            reason: reason.to_string(),
        })?;
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
        arch,
        runs,
        units,
        tensors_at: c.pos,
    })
}

/// Reads a version-3 or version-4 shape: `u8` first-layer output, `u32` PSQT buckets, `u32`
/// stacks, `u8` bucket rule, `u8` H hidden layers, H × (`u32` width, `u8` activation, then in
/// version 4 `u8` shift), `u8` skip, `u8` output rule, then in version 4 `u8` dense output (0,
/// 1). Each kind's byte is its [`WireCode`], declared beside it in [`crate::shape`] (first-layer
/// output 0 clipped ReLU, 1 pairwise, 2 pairwise clipped at 255; bucket rule 0 piece count;
/// activation 0 clipped ReLU, 1 squared and plain clipped ReLU; skip 0 none, 1 extra output, 2
/// difference; output rule 0 thesis, 1 Stockfish 15.1, 2 Stockfish of today).
/// A count read from a file, checked to be between 1 and `max` before anything is allocated
/// for it.
fn count_within(n: usize, field: &'static str, max: usize) -> Result<usize, DecodeError> {
    if n == 0 || n > max {
        return Err(DecodeError::BadText {
            field,
            reason: format!("{n} is not between 1 and {max}"),
        });
    }
    Ok(n)
}

fn read_arch(c: &mut Cursor, version: u32) -> Result<Arch, DecodeError> {
    let ft_output = read_code(c)?;
    let psqt_buckets = c.u32()? as usize;
    let stacks = c.u32()? as usize;
    let bucket_rule = read_code(c)?;
    let layers = count_within(
        c.take(1)?[0].into(),
        "hidden layer count",
        MAX_HIDDEN_LAYERS,
    )?;
    let mut hidden = Vec::with_capacity(layers);
    for _ in 0..layers {
        let width = c.u32()? as usize;
        let activation = read_code(c)?;
        let shift = match version {
            SHAPE_VERSION => crate::scales::HIDDEN_SHIFT,
            _ => c.take(1)?[0].into(),
        };
        hidden.push(Hidden {
            width,
            activation,
            shift,
        });
    }
    let skip = read_code(c)?;
    let output = read_code(c)?;
    let dense_output = match version {
        SHAPE_VERSION => false,
        _ => match c.take(1)?[0] {
            0 => false,
            1 => true,
            k => return Err(unknown_code("dense output", k)),
        },
    };
    Ok(Arch {
        ft_output,
        psqt_buckets,
        stacks,
        bucket_rule,
        hidden,
        skip,
        dense_output,
        output,
    })
}

/// The error of a byte that stands for no value of `field` this build knows.
fn unknown_code(field: &'static str, code: u8) -> DecodeError {
    DecodeError::BadText {
        field,
        reason: format!("code {code} is not one this build knows"),
    }
}

/// Reads one kind's byte ([`WireCode`]).
fn read_code<T: WireCode>(c: &mut Cursor) -> Result<T, DecodeError> {
    let code = c.take(1)?[0];
    T::from_code(code).ok_or_else(|| unknown_code(T::FIELD, code))
}

/// The own-format version that expresses `arch` in `units`: 5 for units other than
/// centipawns, else 2 for the thesis's shape, else the newest version any of its kinds needs
/// ([`WireCode::since`]), 4 for activation shifts and the dense output.
fn version_of(arch: &Arch, units: ScoreUnits) -> u32 {
    if units != ScoreUnits::Centipawns {
        return UNITS_VERSION;
    }
    if arch.preset() == Some(crate::shape::Preset::Thesis) {
        return THESIS_SHAPE_VERSION;
    }
    let kinds = [
        arch.ft_output.since(),
        arch.bucket_rule.since(),
        arch.skip.since(),
        arch.output.since(),
    ];
    let layers = arch.hidden.iter().map(|h| match h.shift {
        crate::scales::HIDDEN_SHIFT => h.activation.since(),
        _ => TODAY_VERSION,
    });
    let dense = match arch.dense_output {
        true => TODAY_VERSION,
        false => SHAPE_VERSION,
    };
    kinds.into_iter().chain(layers).fold(dense, u32::max)
}

/// Appends a shape of `version` 3 or 4 (see [`read_arch`]).
fn write_arch(arch: &Arch, version: u32, out: &mut Vec<u8>) {
    out.push(arch.ft_output.code());
    out.extend_from_slice(&(arch.psqt_buckets as u32).to_le_bytes());
    out.extend_from_slice(&(arch.stacks as u32).to_le_bytes());
    out.push(arch.bucket_rule.code());
    out.push(arch.hidden.len() as u8);
    for h in &arch.hidden {
        out.extend_from_slice(&(h.width as u32).to_le_bytes());
        out.push(h.activation.code());
        if version > SHAPE_VERSION {
            out.push(h.shift as u8);
        }
    }
    out.push(arch.skip.code());
    out.push(arch.output.code());
    if version > SHAPE_VERSION {
        out.push(u8::from(arch.dense_output));
    }
}

/// How long a file of this project's format must be, from its first bytes (the header alone):
/// the length and the sizes N, L1, L2 ([`crate::detect::declared_length`] for any format).
pub(crate) fn own_declared_length(prefix: &[u8]) -> Result<(u64, [u64; 3]), DecodeError> {
    let h = own_header_fields(prefix)?;
    let w1 = w1_bytes(&h.runs, h.sizes[1]);
    let [n, l1, l2] = h.sizes;
    let len = h.tensors_at as u64 + arch_tensor_bytes(w1, n, l1, &h.arch) + 4;
    Ok((len, [n, l1, l2]))
}

/// [`own_declared_length`] for the thesis's format.
pub(crate) fn thesis_declared_length(prefix: &[u8]) -> Result<(u64, [u64; 3]), DecodeError> {
    let h = thesis_header_fields(prefix)?;
    let arch = Arch::thesis(h.l2 as usize);
    let [n, l1, l2] = h.sizes();
    let len = h.tensors_at as u64 + arch_tensor_bytes(h.w1_bytes(), n, l1, &arch);
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
        arch,
        runs,
        units,
        tensors_at,
    } = own_header_fields(bytes)?;
    let l1 = sizes[1];
    let total = check_length(
        bytes.len(),
        tensors_at,
        4,
        sizes,
        (w1_bytes(&runs, l1), &arch),
    )?;
    let stored = u32::from_le_bytes(bytes[total - 4..].try_into().unwrap());
    let computed = crc32fast::hash(&bytes[..total - 4]);
    if stored != computed {
        return Err(DecodeError::Checksum { stored, computed });
    }
    let sum = feature_count(&feature_set, &blocks)?;
    if sum != sizes[0] {
        return Err(DecodeError::BlockSum { n: sizes[0], sum });
    }
    let t = decode_tensors(&bytes[tensors_at..total - 4], &runs, l1 as usize, &arch);
    let net = Network::from_parts(NetworkParts {
        feature_set,
        blocks,
        l1: l1 as usize,
        arch,
        quantization,
        w1: t.w1,
        b1: t.b1,
        psqt: t.psqt,
        stacks: t.stacks,
        units,
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

/// The file of `net` in this project's format (see the [module docs](super)): version 5 for
/// units other than centipawns, else version 2 for the thesis's shape (the bytes every earlier
/// build wrote and reads), version 3 for a shape it expresses, version 4 for the others.
pub fn encode_own(net: &Network) -> Vec<u8> {
    let version = version_of(net.arch(), net.units());
    let mut out = Vec::new();
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&version.to_le_bytes());
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
    if version != THESIS_SHAPE_VERSION {
        write_arch(net.arch(), version, &mut out);
    }
    if version >= UNITS_VERSION {
        out.push(net.units().code());
    }
    encode_tensors(net, true, &mut out);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}
