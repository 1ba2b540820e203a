//! Stockfish 15.1's network files (SFNNv5, `nn-ad9b42354671.nnue`): read and written exactly.
//!
//! Followed sources: official-stockfish/Stockfish tag `sf_15.1` (commit 758f9c9),
//! `src/nnue/evaluate_nnue.cpp:66-137` (header, loading order, the end of the stream),
//! `src/nnue/nnue_feature_transformer.h:248-270` (the feature transformer's hash and tensors),
//! `src/nnue/nnue_architecture.h:58-70` and `src/nnue/layers/affine_transform.h:213-262`,
//! `clipped_relu.h:45-49` (the layer stack's hash chain and tensors); nnue-pytorch
//! `serialize.py` at 5225117 (the writer, its padding and its description). The layout is in
//! `shared/reference/stockfish-15.1-network.md`:
//!
//! | bytes | field |
//! | --- | --- |
//! | 4 | `u32` version `0x7AF32F20` |
//! | 4 | `u32` network hash `0x1C102EF2` (= feature-transformer hash ^ stack hash) |
//! | 4 + n | `u32` n, then the description (UTF-8, no NUL) |
//! | 4 | `u32` feature-transformer hash `0x7F2344B8` (= HalfKAv2_hm's `0x7F234CB8` ^ 2·1024) |
//! | 2·1024 | `i16` biases |
//! | 2·22528·1024 | `i16` weights, feature-major |
//! | 4·22528·8 | `i32` PSQT weights, feature-major |
//! | 8 × 17,640 | per stack: `u32` hash `0x63336A4A`; fc_0 `i32` bias\[16\], `i8` weight\[16\]\[1024\]; fc_1 `i32` bias\[32\], `i8` weight\[32\]\[32\] (inputs 30, 31 are padding); fc_2 `i32` bias\[1\], `i8` weight\[1\]\[32\] |
//!
//! Nothing follows (`stream.peek() == EOF`). Weights are stored row-major `[out][padded in]`
//! with inputs padded to a multiple of 32; padding is dropped on reading (its inputs are always
//! zero) and written as zeros.

use super::first_layer::WeightType;
use super::format::{DecodeError, EncodeError, i16s, i32s};
use super::network::{BlockInfo, LayerParts, Network, NetworkParts, Quantization};
use super::shape::Arch;

/// Stockfish's network file version (`nnue_common.h:51`); unchanged from SFNNv1 to SFNNv15.
pub const VERSION: u32 = 0x7AF3_2F20;
/// The version of Stockfish's development networks from SFNNv16 on (threat inputs and pawn
/// pairs, 2026): recognised so that they are refused by name.
pub const VERSION_DEV: u32 = 0x6A44_8AFA;
/// HalfKAv2_hm's hash (`half_ka_v2_hm.h:74`).
pub const HALFKA_V2_HM_HASH: u32 = 0x7F23_4CB8;
/// Stockfish 15.1's L1.
pub const L1: usize = 1024;
/// The feature set of Stockfish 15.1's networks, as this project names it.
pub const FEATURE_SET: &str = "halfka_v2_hm";
/// HalfKAv2_hm's number of features.
pub const FEATURES: usize = 22_528;
/// The description nnue-pytorch writes (`serialize.py` at 5225117, `DEFAULT_DESCRIPTION`), which
/// Stockfish 15.1's own network carries.
pub const NNUE_PYTORCH_DESCRIPTION: &str =
    "Network trained with the https://github.com/glinscott/nnue-pytorch trainer.";
/// Longest description accepted (Stockfish reads any; a bound keeps a corrupt length from
/// asking for gigabytes).
pub const MAX_DESCRIPTION: usize = 1 << 20;
/// The magic of LEB128-compressed tensors (Stockfish 16 and later, `nnue_common.h`).
const LEB128_MAGIC: &[u8] = b"COMPRESSED_LEB128";

/// The hash step of an affine layer with `outputs` outputs (`affine_transform.h:213-219`).
fn affine_hash(prev: u32, outputs: u32) -> u32 {
    0xCC03_DAE4_u32.wrapping_add(outputs) ^ (prev >> 1) ^ (prev << 31)
}

/// The hash step of a clipped ReLU (`clipped_relu.h:45-49`); the squared one is not hashed.
fn relu_hash(prev: u32) -> u32 {
    0x538D_24C7_u32.wrapping_add(prev)
}

/// The feature transformer's hash for HalfKAv2_hm at width `l1`.
pub fn feature_transformer_hash(l1: usize) -> u32 {
    HALFKA_V2_HM_HASH ^ (2 * l1 as u32)
}

/// The layer stack's hash at width `l1` (`nnue_architecture.h:58-70`): fc_0 (16 outputs),
/// ac_0, fc_1 (32), ac_1, fc_2 (1).
pub fn stack_hash(l1: usize) -> u32 {
    let h = 0xEC42_E90D_u32 ^ (2 * l1 as u32);
    affine_hash(relu_hash(affine_hash(relu_hash(affine_hash(h, 16)), 32)), 1)
}

/// The network hash of the header: feature-transformer hash ^ stack hash.
pub fn network_hash(l1: usize) -> u32 {
    feature_transformer_hash(l1) ^ stack_hash(l1)
}

/// Bytes of one layer stack in the file.
const fn stack_bytes(l1: usize) -> usize {
    4 + (4 * 16 + 16 * l1) + (4 * 32 + 32 * 32) + (4 + 32)
}

/// Bytes of the feature transformer after its hash.
const fn ft_bytes(l1: usize) -> usize {
    2 * l1 + 2 * FEATURES * l1 + 4 * FEATURES * 8
}

/// Whether `bytes` start like a Stockfish network file (a known version).
pub fn is_stockfish(bytes: &[u8]) -> bool {
    bytes.len() >= 4 && matches!(le_u32(bytes, 0), VERSION | VERSION_DEV)
}

fn le_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("four bytes"))
}

/// The header: version checked, network hash checked against 15.1's (with the architecture
/// named when it is another known one), description. Returns the description and where the
/// feature transformer's hash is.
fn header(bytes: &[u8]) -> Result<(String, usize), DecodeError> {
    let truncated = || DecodeError::TruncatedHeader { len: bytes.len() };
    if bytes.len() < 12 {
        return Err(truncated());
    }
    let version = le_u32(bytes, 0);
    if version == VERSION_DEV {
        return Err(DecodeError::Stockfish(format!(
            "it is a Stockfish network of version 0x{version:08X} (SFNNv16 or later: threat inputs, pawn pairs); only Stockfish 15.1's SFNNv5 (version 0x{VERSION:08X}) is supported"
        )));
    }
    let hash = le_u32(bytes, 4);
    let len = le_u32(bytes, 8) as usize;
    if len > MAX_DESCRIPTION {
        return Err(DecodeError::Stockfish(format!(
            "its description is said to be {len} bytes long, more than the {MAX_DESCRIPTION} accepted: the file is corrupt"
        )));
    }
    let ft_at = 12 + len;
    if bytes.len() < ft_at + 4 + LEB128_MAGIC.len() {
        return Err(truncated());
    }
    let description = String::from_utf8_lossy(&bytes[12..ft_at]).into_owned();
    if hash != network_hash(L1) {
        let compressed = &bytes[ft_at + 4..ft_at + 4 + LEB128_MAGIC.len()] == LEB128_MAGIC;
        let other_l1 = [128, 256, 512, 768, 1536, 2048, 2560, 3072]
            .into_iter()
            .find(|&l1| network_hash(l1) == hash);
        let what = match (other_l1, compressed) {
            (Some(l1), true) => format!(
                "HalfKAv2_hm with L1 = {l1} and LEB128-compressed weights (Stockfish 16 or later)"
            ),
            (Some(l1), false) => format!("HalfKAv2_hm with L1 = {l1}"),
            (None, true) => {
                "LEB128-compressed weights (Stockfish 16 or later) of an unknown architecture"
                    .to_string()
            }
            (None, false) => "an unknown architecture (another feature set or layer shape, such as Stockfish 18's threat inputs)".to_string(),
        };
        return Err(DecodeError::Stockfish(format!(
            "its architecture hash 0x{hash:08X} is not Stockfish 15.1's 0x{:08X} (HalfKAv2_hm, L1 1024, 8 layer stacks): it holds {what}",
            network_hash(L1)
        )));
    }
    Ok((description, ft_at))
}

/// The length a Stockfish 15.1 file must have, from its first bytes, and its sizes N, L1, L2.
pub fn declared_length(prefix: &[u8]) -> Result<(u64, [u64; 3]), DecodeError> {
    let (_, ft_at) = header(prefix)?;
    let len = ft_at + 4 + ft_bytes(L1) + 8 * stack_bytes(L1);
    Ok((len as u64, sizes()))
}

fn sizes() -> [u64; 3] {
    [FEATURES as u64, L1 as u64, 15]
}

/// A Stockfish 15.1 file's description (the text after the header's hash).
pub fn description(bytes: &[u8]) -> Result<String, DecodeError> {
    header(bytes).map(|(d, _)| d)
}

/// Decodes a Stockfish 15.1 network, `blocks` the identity of the `halfka_v2_hm` block from the
/// loaded plugins (the file stores none): checks version, hashes, length, then reads the tensors.
pub fn decode(bytes: &[u8], blocks: Vec<BlockInfo>) -> Result<Network, DecodeError> {
    let (_, ft_at) = header(bytes)?;
    let expected = (ft_at + 4 + ft_bytes(L1) + 8 * stack_bytes(L1)) as u64;
    if (bytes.len() as u64) < expected {
        return Err(DecodeError::Truncated {
            len: bytes.len(),
            expected,
            sizes: sizes(),
        });
    }
    if bytes.len() as u64 > expected {
        return Err(DecodeError::TrailingBytes {
            len: bytes.len(),
            expected,
            sizes: sizes(),
        });
    }
    let ft_hash = le_u32(bytes, ft_at);
    if ft_hash != feature_transformer_hash(L1) {
        return Err(DecodeError::Stockfish(format!(
            "its feature transformer's hash 0x{ft_hash:08X} is not HalfKAv2_hm's at L1 1024 (0x{:08X})",
            feature_transformer_hash(L1)
        )));
    }
    let mut pos = ft_at + 4;
    let mut next = |len: usize| {
        let s = &bytes[pos..pos + len];
        pos += len;
        s
    };
    let b1 = i16s(next(2 * L1));
    let w1 = i16s(next(2 * FEATURES * L1));
    let psqt = i32s(next(4 * FEATURES * 8));
    let arch = Arch::sfnnv5();
    let layers = arch.layers(L1);
    let mut stacks = Vec::with_capacity(8);
    for k in 0..8 {
        let hash = le_u32(next(4), 0);
        if hash != stack_hash(L1) {
            return Err(DecodeError::Stockfish(format!(
                "the hash 0x{hash:08X} of its layer stack {k} is not SFNNv5's 0x{:08X}",
                stack_hash(L1)
            )));
        }
        let mut stack = Vec::with_capacity(layers.len());
        for &(inputs, outputs) in &layers {
            let padded = inputs.next_multiple_of(32);
            let biases = i32s(next(4 * outputs));
            let raw = next(padded * outputs);
            let weights = raw
                .chunks_exact(padded)
                .flat_map(|row| row[..inputs].iter().map(|&b| b as i8))
                .collect();
            stack.push(LayerParts { weights, biases });
        }
        stacks.push(stack);
    }
    Ok(Network::from_parts(NetworkParts {
        feature_set: FEATURE_SET.into(),
        blocks,
        l1: L1,
        arch,
        quantization: Quantization::THESIS,
        w1,
        b1,
        psqt,
        stacks,
    })?)
}

/// Why a network cannot be written in Stockfish 15.1's format, as a clause; `None` if it can.
pub fn unsupported(net: &Network) -> Option<String> {
    let mut differs = Vec::new();
    if net.feature_set() != FEATURE_SET {
        differs.push(format!("feature set {}", net.feature_set()));
    }
    if net.l1() != L1 {
        differs.push(format!("L1 {}", net.l1()));
    }
    if *net.arch() != Arch::sfnnv5() {
        differs.push(format!("shape '{}'", net.arch()));
    }
    if !differs.is_empty() {
        return Some(format!(
            "Stockfish 15.1 loads only HalfKAv2_hm at L1 1024 in the sfnnv5 shape; this network has {}",
            differs.join(", ")
        ));
    }
    if net
        .blocks()
        .iter()
        .any(|b| b.weight_type != WeightType::I16)
    {
        return Some("Stockfish 15.1 stores its first layer as i16 only".into());
    }
    None
}

/// The Stockfish 15.1 file of `net` with `description`; an error (a clause) for a network of
/// another shape ([`unsupported`]).
pub fn encode(net: &Network, description: &str) -> Result<Vec<u8>, EncodeError> {
    if let Some(why) = unsupported(net) {
        return Err(EncodeError::Stockfish(why));
    }
    let mut out =
        Vec::with_capacity(12 + description.len() + 4 + ft_bytes(L1) + 8 * stack_bytes(L1));
    let u32s = |out: &mut Vec<u8>, v: u32| out.extend_from_slice(&v.to_le_bytes());
    u32s(&mut out, VERSION);
    u32s(&mut out, network_hash(L1));
    u32s(&mut out, description.len() as u32);
    out.extend_from_slice(description.as_bytes());
    u32s(&mut out, feature_transformer_hash(L1));
    net.b1()
        .iter()
        .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
    for v in net.w1().to_values() {
        out.extend_from_slice(&v.to_le_bytes());
    }
    net.psqt()
        .iter()
        .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
    for stack in net.stacks() {
        u32s(&mut out, stack_hash(L1));
        for layer in stack {
            layer
                .biases()
                .iter()
                .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
            let padded = layer.inputs().next_multiple_of(32);
            for row in layer.weights().chunks_exact(layer.inputs()) {
                out.extend(row.iter().map(|&w| w as u8));
                out.resize(out.len() + padded - layer.inputs(), 0);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_stockfish_15_1s() {
        assert_eq!(feature_transformer_hash(1024), 0x7F23_44B8);
        assert_eq!(stack_hash(1024), 0x6333_6A4A);
        assert_eq!(network_hash(1024), 0x1C10_2EF2);
        assert_eq!(stack_bytes(1024), 17_640);
        assert_eq!(
            12 + 75 + 4 + ft_bytes(1024) + 8 * stack_bytes(1024),
            47_001_499
        );
    }

    #[test]
    fn other_architectures_are_named() {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&VERSION.to_le_bytes());
        bytes.extend_from_slice(&network_hash(1536).to_le_bytes());
        bytes.extend_from_slice(&0u32.to_le_bytes());
        bytes.extend_from_slice(&feature_transformer_hash(1536).to_le_bytes());
        bytes.extend_from_slice(LEB128_MAGIC);
        let e = header(&bytes).unwrap_err().to_string();
        assert!(e.contains("L1 = 1536") && e.contains("LEB128"), "{e}");
        let mut dev = bytes.clone();
        dev[..4].copy_from_slice(&VERSION_DEV.to_le_bytes());
        assert!(header(&dev).unwrap_err().to_string().contains("SFNNv16"));
    }
}
