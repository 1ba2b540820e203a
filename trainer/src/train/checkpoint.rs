//! Training checkpoints: the float model, Adam's state, the configuration and the metrics so far,
//! in one file written atomically.
//!
//! ## File layout (little-endian)
//!
//! | bytes | field |
//! | --- | --- |
//! | 8 | magic `NNUECKPT` |
//! | 4 | `u32` version = 1 |
//! | 8 | `u64` H, length of the header |
//! | H | header, JSON: `{"state": ..., "tensors": [{"name", "shape"}, ...]}` |
//! | … | each tensor's values as `f32`, in the header's order |
//! | 4 | `u32` CRC-32 of every byte before it |
//!
//! Tensors: the model's `w1 b1 w2 b2 w3 b3`, then Adam's first moments `m.w1 ...` and second
//! moments `v.w1 ...`, for RangerLite its other first moments `n.w1 ...` and slow weights
//! `s.w1 ...`, and for stochastic weight averaging the average `a.w1 ...`. `f32` values are
//! stored bit for bit, so a resumed run continues from exactly the state that was saved.
//!
//! Checkpoints are written with [`crate::atomic_file::write_atomic`]: a run killed while saving
//! resumes from the previous checkpoint, never from a torn one.

use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};
use tch::{Device, Tensor};

use super::optim::{Adam, AdamConfig};
use crate::model::{Model, param_names, tensor_to_vec};
use nnue::Shape;

/// The magic of a checkpoint file.
pub const CHECKPOINT_MAGIC: &[u8; 8] = b"NNUECKPT";
/// The checkpoint format version.
pub const CHECKPOINT_VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
struct TensorEntry {
    name: String,
    shape: Vec<i64>,
}

#[derive(Serialize, Deserialize)]
struct Header<S> {
    state: S,
    tensors: Vec<TensorEntry>,
}

/// Why a checkpoint cannot be written, read or used.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// The bytes are not a checkpoint this trainer reads (magic, version, checksum, header or
    /// tensors).
    #[error("{0}")]
    Format(String),
    /// The checkpoint's tensors do not fit the network's shape.
    #[error("{0}")]
    Shape(String),
    /// The training state could not be serialized.
    #[error("cannot write the checkpoint's header: {0}")]
    Encode(#[from] serde_json::Error),
    /// A checkpoint file could not be read or decoded.
    #[error("cannot read checkpoint {path}: {reason}")]
    File {
        /// The file.
        path: String,
        /// Why (the I/O error or the decoding's refusal).
        reason: String,
    },
}

impl From<String> for CheckpointError {
    fn from(reason: String) -> Self {
        CheckpointError::Format(reason)
    }
}

impl From<&str> for CheckpointError {
    fn from(reason: &str) -> Self {
        CheckpointError::Format(reason.to_string())
    }
}

/// Serializes `state` (any JSON-serializable training state), the model and Adam into the
/// checkpoint format.
pub fn encode<S: Serialize>(
    state: &S,
    model: &Model,
    adam: &Adam,
) -> Result<Vec<u8>, CheckpointError> {
    let mut entries = Vec::new();
    let mut values: Vec<Vec<f32>> = Vec::new();
    let groups: [(&str, Vec<&Tensor>); 6] = [
        ("", model.params()),
        ("m.", adam.m.iter().collect()),
        ("v.", adam.v.iter().collect()),
        ("n.", adam.n.iter().collect()),
        ("s.", adam.slow.iter().collect()),
        ("a.", adam.average.iter().collect()),
    ];
    let names = param_names(&model.shape);
    for (prefix, tensors) in groups {
        for (name, t) in names.iter().zip(tensors) {
            entries.push(TensorEntry {
                name: format!("{prefix}{name}"),
                shape: t.size(),
            });
            values.push(tensor_to_vec(t));
        }
    }
    let header = serde_json::to_vec(&Header {
        state,
        tensors: entries,
    })?;
    let data: usize = values.iter().map(|v| 4 * v.len()).sum();
    let mut out = Vec::with_capacity(24 + header.len() + data + 4);
    out.extend_from_slice(CHECKPOINT_MAGIC);
    out.extend_from_slice(&CHECKPOINT_VERSION.to_le_bytes());
    out.extend_from_slice(&(header.len() as u64).to_le_bytes());
    out.extend_from_slice(&header);
    for v in &values {
        for x in v {
            out.extend_from_slice(&x.to_le_bytes());
        }
    }
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    Ok(out)
}

/// A checkpoint read back: the training state, the model's tensors and Adam's moments (CPU).
#[derive(Debug)]
pub struct Loaded<S> {
    /// The training state stored with it.
    pub state: S,
    /// The model's tensors by name, in the order they were written ([`param_names`]).
    pub params: Vec<(String, Tensor)>,
    /// Adam's first moments, in the same order.
    pub m: Vec<Tensor>,
    /// Adam's second moments, in the same order.
    pub v: Vec<Tensor>,
    /// RangerLite's second first moments, in the same order (none for Adam).
    pub n: Vec<Tensor>,
    /// RangerLite's slow weights, in the same order (none for Adam).
    pub slow: Vec<Tensor>,
    /// The stochastic weight average, in the same order (none before or without it).
    pub average: Vec<Tensor>,
}

impl<S> Loaded<S> {
    /// The model on `device` (checked against `shape`).
    pub fn model(&self, shape: &Shape, device: Device) -> Result<Model, CheckpointError> {
        let names = param_names(shape);
        let stored: Vec<&str> = self.params.iter().map(|(n, _)| n.as_str()).collect();
        if stored != names {
            return Err(CheckpointError::Shape(format!(
                "the checkpoint holds the tensors {} where the network's shape needs {}",
                stored.join(" "),
                names.join(" ")
            )));
        }
        let expected = Model::param_shapes(shape);
        for ((name, t), e) in self.params.iter().zip(&expected) {
            if t.size() != *e {
                return Err(CheckpointError::Shape(format!(
                    "the checkpoint's tensor {name} has shape {:?} where the network needs {e:?}",
                    t.size()
                )));
            }
        }
        Ok(Model::from_tensors(
            shape.clone(),
            self.params.iter().map(|(_, t)| t.copy()).collect(),
            device,
        ))
    }

    /// Adam's state on `device`, with `step` steps taken.
    pub fn adam(&self, config: AdamConfig, step: u64, device: Device) -> Adam {
        Adam {
            config,
            step,
            m: self.m.iter().map(|t| t.to_device(device)).collect(),
            v: self.v.iter().map(|t| t.to_device(device)).collect(),
            n: self.n.iter().map(|t| t.to_device(device)).collect(),
            slow: self.slow.iter().map(|t| t.to_device(device)).collect(),
            average: self.average.iter().map(|t| t.to_device(device)).collect(),
        }
    }
}

/// Reads a checkpoint file; `S` is the training state's type.
pub fn read<S: for<'de> Deserialize<'de>>(path: &Path) -> Result<Loaded<S>, CheckpointError> {
    let file = |reason: String| CheckpointError::File {
        path: path.display().to_string(),
        reason,
    };
    let bytes = fs::read(path).map_err(|e| file(e.to_string()))?;
    decode(&bytes).map_err(|e| file(e.to_string()))
}

/// Whether `bytes` start like a checkpoint.
pub fn is_checkpoint(bytes: &[u8]) -> bool {
    bytes.starts_with(CHECKPOINT_MAGIC)
}

/// Decodes the bytes of a checkpoint file.
pub fn decode<S: for<'de> Deserialize<'de>>(bytes: &[u8]) -> Result<Loaded<S>, CheckpointError> {
    if !is_checkpoint(bytes) {
        return Err("not a trainer checkpoint (bad magic)".into());
    }
    if bytes.len() < 24 + 4 {
        return Err("truncated".into());
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if version != CHECKPOINT_VERSION {
        return Err(format!(
            "format version {version}, this trainer reads version {CHECKPOINT_VERSION}"
        )
        .into());
    }
    let (body, crc) = bytes.split_at(bytes.len() - 4);
    if crc32fast::hash(body) != u32::from_le_bytes(crc.try_into().expect("4 bytes")) {
        return Err("checksum mismatch (a damaged or truncated file)".into());
    }
    let header_len = u64::from_le_bytes(body[12..20].try_into().expect("8 bytes")) as usize;
    let header_end = 20usize
        .checked_add(header_len)
        .filter(|&e| e <= body.len())
        .ok_or(CheckpointError::from("truncated header"))?;
    let header: Header<S> =
        serde_json::from_slice(&body[20..header_end]).map_err(|e| format!("bad header: {e}"))?;
    let mut at = header_end;
    let mut tensors = Vec::new();
    for entry in &header.tensors {
        let n: i64 = entry.shape.iter().product();
        let len = usize::try_from(n).map_err(|_| "bad tensor shape")? * 4;
        let end = at
            .checked_add(len)
            .filter(|&e| e <= body.len())
            .ok_or(CheckpointError::from("truncated tensor data"))?;
        let values: Vec<f32> = body[at..end]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect();
        tensors.push((
            entry.name.clone(),
            Tensor::from_slice(&values).view(entry.shape.as_slice()),
        ));
        at = end;
    }
    if at != body.len() {
        return Err("trailing bytes after the tensors".into());
    }
    let params: Vec<(String, Tensor)> = tensors
        .iter()
        .filter(|(n, _)| !n.contains('.'))
        .map(|(n, t)| (n.clone(), t.shallow_clone()))
        .collect();
    let take = |prefix: &str| -> Result<Vec<Tensor>, CheckpointError> {
        params
            .iter()
            .map(|(name, _)| {
                let full = format!("{prefix}{name}");
                tensors
                    .iter()
                    .find(|(n, _)| *n == full)
                    .map(|(_, t)| t.shallow_clone())
                    .ok_or_else(|| CheckpointError::Format(format!("tensor {full} missing")))
            })
            .collect()
    };
    let m = take("m.")?;
    let v = take("v.")?;
    // The optimizer's optional state: RangerLite's (its two groups together), the stochastic
    // weight average; none where the run has none.
    let has = |prefix: &str| tensors.iter().any(|(n, _)| n.starts_with(prefix));
    let (n, slow) = match has("s.") {
        true => (take("n.")?, take("s.")?),
        false => (Vec::new(), Vec::new()),
    };
    let average = match has("a.") {
        true => take("a.")?,
        false => Vec::new(),
    };
    Ok(Loaded {
        state: header.state,
        params,
        m,
        v,
        n,
        slow,
        average,
    })
}

/// A network's shape as a checkpoint stores it: `{n, l1, arch}`, or, in checkpoints written
/// before the engine and the trainer shared one shape type, `{n, l1, l2}` for the thesis's shape
/// (`{n, l1, l2, arch}` for another). For `#[serde(deserialize_with)]` on a stored shape.
pub fn stored_shape<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Shape, D::Error> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Stored {
        n: usize,
        l1: usize,
        #[serde(default)]
        l2: Option<usize>,
        #[serde(default)]
        arch: Option<nnue::Arch>,
    }
    let s = Stored::deserialize(d)?;
    let arch = match (s.arch, s.l2) {
        (Some(arch), _) => arch,
        (None, Some(l2)) => nnue::Arch::thesis(l2),
        (None, None) => return Err(serde::de::Error::missing_field("arch")),
    };
    Ok(Shape::new(s.n, s.l1, arch))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct SmallState {
        epoch: u64,
        note: String,
    }

    #[test]
    fn round_trip_is_exact_and_damage_is_detected() {
        let shape = Shape::thesis(20, 32, 4);
        let model = Model::new(shape.clone(), 5, Device::Cpu);
        let mut adam = Adam::new(AdamConfig::default(), &model.params());
        adam.step = 17;
        let _ = adam.m[2].fill_(0.25);
        let state = SmallState {
            epoch: 3,
            note: "x".into(),
        };
        let bytes = encode(&state, &model, &adam).unwrap();
        let loaded: Loaded<SmallState> = decode(&bytes).unwrap();
        assert_eq!(loaded.state, state);
        let back = loaded.model(&shape, Device::Cpu).unwrap();
        assert_eq!(back.to_vecs(), model.to_vecs());
        let a = loaded.adam(AdamConfig::default(), 17, Device::Cpu);
        assert_eq!(tensor_to_vec(&a.m[2]), tensor_to_vec(&adam.m[2]));
        assert!(loaded.model(&shape.with_n(21), Device::Cpu).is_err());
        let other = Shape::new(20, 64, nnue::Arch::sfnnv5());
        assert!(
            loaded
                .model(&other, Device::Cpu)
                .unwrap_err()
                .to_string()
                .contains("w4")
        );

        let mut bad = bytes.clone();
        let mid = bad.len() / 2;
        bad[mid] ^= 1;
        assert!(matches!(
            decode::<SmallState>(&bad).unwrap_err(),
            CheckpointError::Format(e) if e.contains("checksum")
        ));
        assert!(decode::<SmallState>(&bytes[..bytes.len() - 9]).is_err());
        assert!(decode::<SmallState>(b"NNUEFSET....").is_err());
    }

    #[test]
    fn shapes_stored_before_one_shape_type_read_back() {
        #[derive(Deserialize)]
        struct Holder {
            #[serde(deserialize_with = "stored_shape")]
            shape: Shape,
        }
        let read = |json: &str| serde_json::from_str::<Holder>(json).map(|h| h.shape);
        assert_eq!(
            read(r#"{"shape":{"n":768,"l1":512,"l2":32}}"#).unwrap(),
            Shape::thesis(768, 512, 32)
        );
        let now = Shape::new(768, 64, nnue::Arch::sfnnv5());
        let json = format!(r#"{{"shape":{}}}"#, serde_json::to_string(&now).unwrap());
        assert_eq!(read(&json).unwrap(), now);
        assert!(read(r#"{"shape":{"n":768,"l1":512}}"#).is_err());
    }
}
