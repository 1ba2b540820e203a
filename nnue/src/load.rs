//! Loading a network file and binding it to the loaded feature plugins.
//!
//! [`Nnue::load`] reads either format, checks everything the file says, then checks that the
//! plugins provide every block the network was trained with, at the same size and layout
//! identity. Every failure is a [`NetError`] whose `Display` is one sentence naming the file.

use std::fmt;
use std::fs::File;
use std::io::Read;
use std::path::Path;

use plugin_api::{FeatureSet, LoadError, PluginRegistry};

use super::arrange::{Arranged, arrange};
use super::detect::{declared_length, detect};
use super::format::{
    DecodeError, EncodeError, NetFormat, OwnHeader, decode_own, decode_thesis, encode_own,
    encode_thesis, thesis_header,
};
use super::network::{BlockInfo, Network};
use super::stockfish;
use super::units::ScoreUnits;

/// Why a network file could not be loaded, bound or written. `Display`: one sentence that names
/// the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetError {
    /// The file (or a label such as `(memory)`).
    pub file: String,
    /// What went wrong.
    pub kind: NetErrorKind,
}

/// The reasons behind a [`NetError`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NetErrorKind {
    /// The file could not be read.
    Read(String),
    /// The file could not be written.
    Write(String),
    /// The bytes are not a valid network (see [`DecodeError`]).
    Decode(DecodeError),
    /// The feature set named in the file cannot be built from the loaded plugins (an unknown
    /// block: the message lists the available ones).
    FeatureSet(LoadError),
    /// A Stockfish file's feature transformer's hash names blocks the loaded plugins do not
    /// provide.
    StockfishBlocks {
        /// The feature transformer's hash.
        hash: u32,
        /// The feature set its blocks make, as this project names it.
        name: String,
        /// Why the plugins cannot make it.
        why: String,
    },
    /// A thesis file's N differs from the size of its feature set.
    FeatureCount {
        /// The feature-set name as stored.
        name: String,
        /// N from the file.
        n: u64,
        /// The feature set's size from the plugins.
        size: u32,
    },
    /// A block's size in the file differs from the loaded plugin's.
    BlockSize {
        /// The block.
        block: String,
        /// Its size in the file.
        file_size: u32,
        /// Its size in the plugin.
        plugin_size: u32,
        /// The plugin file.
        origin: String,
    },
    /// A block's layout identity in the file differs from the loaded plugin's.
    BlockLayout {
        /// The block.
        block: String,
        /// Version and identity in the file.
        file: (u32, u64),
        /// Version and identity in the plugin.
        plugin: (u32, u64),
        /// The plugin file.
        origin: String,
    },
}

impl fmt::Display for NetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = &self.file;
        match &self.kind {
            NetErrorKind::Write(e) => return write!(f, "cannot write network {file}: {e}"),
            NetErrorKind::Read(e) => return write!(f, "cannot read network {file}: {e}"),
            _ => {}
        }
        write!(f, "cannot load network {file}: ")?;
        match &self.kind {
            NetErrorKind::Read(_) | NetErrorKind::Write(_) => unreachable!("handled above"),
            NetErrorKind::Decode(e) => e.fmt(f),
            NetErrorKind::FeatureSet(e) => write!(f, "{e}"),
            NetErrorKind::StockfishBlocks { hash, name, why } => write!(
                f,
                "its feature transformer's hash 0x{hash:08X} names the feature set {name}, which the loaded plugins cannot make: {why}"
            ),
            NetErrorKind::FeatureCount { name, n, size } => write!(
                f,
                "its header says N = {n} but the feature set '{name}' of the loaded plugins has {size} features"
            ),
            NetErrorKind::BlockSize {
                block,
                file_size,
                plugin_size,
                origin,
            } => write!(
                f,
                "it was trained with block '{block}' of size {file_size}, but the loaded plugin {origin} gives it size {plugin_size}"
            ),
            NetErrorKind::BlockLayout {
                block,
                file,
                plugin,
                origin,
            } => write!(
                f,
                "it was trained with block '{block}' of layout version {} (id {:016x}), but the loaded plugin {origin} has layout version {} (id {:016x})",
                file.0, file.1, plugin.0, plugin.1
            ),
        }
    }
}

impl std::error::Error for NetError {}

/// A network bound to the feature set it reads, built from the loaded plugins: what an
/// evaluator needs.
#[derive(Clone, Debug)]
pub struct Nnue {
    /// The network as the kernels read it (see [`super::arrange`]); the only copy of its
    /// weights ([`Nnue::network`] rebuilds the file's order).
    arranged: Arranged,
    features: FeatureSet,
    format: NetFormat,
    own_header: Option<OwnHeader>,
    /// A Stockfish file's description (written back when converting to Stockfish's format).
    description: Option<String>,
    /// Whether a Stockfish file's first-layer tensors were LEB128-compressed.
    compressed: bool,
}

impl Nnue {
    /// Reads and binds the network file `path` (either format).
    pub fn load(path: &Path, registry: &PluginRegistry) -> Result<Nnue, NetError> {
        let label = path.display().to_string();
        let bytes = read_declared(path).map_err(|kind| NetError {
            file: label.clone(),
            kind,
        })?;
        Self::from_bytes(&bytes, &label, registry)
    }

    /// Decodes and binds the bytes of a network file; `label` names it in errors.
    pub fn from_bytes(
        bytes: &[u8],
        label: &str,
        registry: &PluginRegistry,
    ) -> Result<Nnue, NetError> {
        let err = |kind: NetErrorKind| NetError {
            file: label.to_string(),
            kind,
        };
        match detect(bytes) {
            NetFormat::Own => {
                let (network, header) =
                    decode_own(bytes).map_err(|e| err(NetErrorKind::Decode(e)))?;
                let mut nnue = Self::bind(network, label, registry)?;
                nnue.format = NetFormat::Own;
                nnue.own_header = Some(header);
                Ok(nnue)
            }
            NetFormat::Thesis => {
                let header = thesis_header(bytes).map_err(|e| err(NetErrorKind::Decode(e)))?;
                let features = registry
                    .feature_set(&header.name)
                    .map_err(|e| err(NetErrorKind::FeatureSet(e)))?;
                if u64::from(features.size()) != u64::from(header.n) {
                    return Err(err(NetErrorKind::FeatureCount {
                        name: header.name,
                        n: u64::from(header.n),
                        size: features.size(),
                    }));
                }
                let blocks = BlockInfo::of_set(&features);
                let network = decode_thesis(bytes, &header, blocks)
                    .map_err(|e| err(NetErrorKind::Decode(e)))?;
                Ok(Self::arranged_for(network, features, NetFormat::Thesis))
            }
            NetFormat::Stockfish => {
                // The file names no feature set; its feature transformer's hash says which:
                // HalfKAv2_hm (15.1), or any of HalfKAv2_hm, FullThreats and PP_3Wide (today),
                // which the king and threats plugins provide index-exact with Stockfish.
                let layout = stockfish::Layout::of_header(bytes)
                    .map_err(|e| err(NetErrorKind::Decode(e)))?;
                let description = layout.description.clone();
                let name = layout.blocks.feature_set();
                let features = registry.feature_set(&name).map_err(|e| {
                    err(NetErrorKind::StockfishBlocks {
                        hash: layout.blocks.hash(layout.l1),
                        name: name.clone(),
                        why: e.to_string(),
                    })
                })?;
                let n = layout.sizes()[0];
                if u64::from(features.size()) != n {
                    return Err(err(NetErrorKind::FeatureCount {
                        name: name.clone(),
                        n,
                        size: features.size(),
                    }));
                }
                let blocks = layout.blocks.block_infos(&features);
                let network = stockfish::decode(bytes, &layout, blocks)
                    .map_err(|e| err(NetErrorKind::Decode(e)))?;
                let mut nnue = Self::arranged_for(network, features, NetFormat::Stockfish);
                nnue.description = Some(description);
                nnue.compressed = layout.compressed;
                Ok(nnue)
            }
        }
    }

    /// Binds an in-memory network (e.g. from a trainer) to the loaded plugins: every block must
    /// exist with the size and layout identity the network was trained with.
    pub fn bind(
        network: Network,
        label: &str,
        registry: &PluginRegistry,
    ) -> Result<Nnue, NetError> {
        let err = |kind: NetErrorKind| NetError {
            file: label.to_string(),
            kind,
        };
        for b in network.blocks() {
            let reg = registry
                .block(&b.name)
                .map_err(|e| err(NetErrorKind::FeatureSet(e)))?;
            let d = &reg.descriptor;
            if d.size != b.size {
                return Err(err(NetErrorKind::BlockSize {
                    block: b.name.clone(),
                    file_size: b.size,
                    plugin_size: d.size,
                    origin: reg.origin.clone(),
                }));
            }
            if d.layout_id != b.layout_id || d.layout_version != b.layout_version {
                return Err(err(NetErrorKind::BlockLayout {
                    block: b.name.clone(),
                    file: (b.layout_version, b.layout_id),
                    plugin: (d.layout_version, d.layout_id),
                    origin: reg.origin.clone(),
                }));
            }
        }
        let features = registry
            .feature_set(network.feature_set())
            .map_err(|e| err(NetErrorKind::FeatureSet(e)))?;
        if features.size() as usize != network.n() {
            return Err(err(NetErrorKind::FeatureCount {
                name: network.feature_set().to_string(),
                n: network.n() as u64,
                size: features.size(),
            }));
        }
        Ok(Self::arranged_for(network, features, NetFormat::Own))
    }

    /// The bound network with its neurons arranged for the kernels.
    fn arranged_for(network: Network, features: FeatureSet, format: NetFormat) -> Nnue {
        Nnue {
            arranged: arrange(network, &features),
            features,
            format,
            own_header: None,
            description: None,
            compressed: false,
        }
    }

    /// The network in the file's neuron order: a copy rebuilt from the arranged weights (the
    /// engine holds W1 once); for writing, inspecting and comparing, not for evaluating.
    pub fn network(&self) -> Network {
        self.arranged.original()
    }

    /// The network as the kernels read it: its first-layer neurons reordered (the evaluation is
    /// the same). Accumulators of an [`super::AccumulatorStack`] are in this order.
    pub fn arranged(&self) -> &Arranged {
        &self.arranged
    }

    /// The feature set the network reads, as built from the loaded plugins.
    pub fn features(&self) -> &FeatureSet {
        &self.features
    }

    /// The format the network was read from ([`NetFormat::Own`] for [`bind`](Self::bind)).
    pub fn source_format(&self) -> NetFormat {
        self.format
    }

    /// Version and checksum of an own-format file, `None` otherwise.
    pub fn own_header(&self) -> Option<&OwnHeader> {
        self.own_header.as_ref()
    }

    /// Whether the network came from a Stockfish file with LEB128-compressed first-layer
    /// tensors (Stockfish 16 and later; `false` for every other file).
    pub fn source_compressed(&self) -> bool {
        self.compressed
    }

    /// A Stockfish file's description, `None` for other formats.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// The network's file in `format` (a Stockfish file keeps the description it was read
    /// with); an error (a clause) for a shape `format` cannot hold.
    pub fn to_bytes(&self, format: NetFormat) -> Result<Vec<u8>, EncodeError> {
        encode(&self.network(), format, self.description())
    }

    /// Writes the network's file in `format` to `path`.
    pub fn write(&self, path: &Path, format: NetFormat) -> Result<(), NetError> {
        let bytes = self.to_bytes(format).map_err(|e| NetError {
            file: path.display().to_string(),
            kind: NetErrorKind::Write(e.to_string()),
        })?;
        write_bytes(path, &bytes)
    }
}

/// The file of `network` in `format`; `description` is a Stockfish file's (by default, one that
/// says where the network comes from). An error, as a clause, for a shape `format` cannot hold.
pub fn encode(
    network: &Network,
    format: NetFormat,
    description: Option<&str>,
) -> Result<Vec<u8>, EncodeError> {
    match format {
        NetFormat::Own => Ok(encode_own(network)),
        NetFormat::Thesis => encode_thesis(network),
        NetFormat::Stockfish => {
            let default = format!(
                "Network of feature set {} converted by nnue-features (host net convert).",
                network.feature_set()
            );
            stockfish::encode(network, description.unwrap_or(&default))
        }
    }
}

/// The units a file of `format` gives `network` when read back: its own, except where the
/// format implies others (the thesis's: centipawns; Stockfish's: those its generation
/// evaluates in, [`stockfish::Generation::units`]). A conversion that changes them says so.
pub fn units_read_back(network: &Network, format: NetFormat) -> ScoreUnits {
    match format {
        NetFormat::Own => network.units(),
        NetFormat::Thesis => ScoreUnits::Centipawns,
        NetFormat::Stockfish => {
            stockfish::generation_of(network).map_or(network.units(), |g| g.units())
        }
    }
}

/// Writes `network` to `path` in `format` (a trainer's export needs no plugins for this).
pub fn write_network(network: &Network, path: &Path, format: NetFormat) -> Result<(), NetError> {
    let bytes = encode(network, format, None).map_err(|e| NetError {
        file: path.display().to_string(),
        kind: NetErrorKind::Write(e.to_string()),
    })?;
    write_bytes(path, &bytes)
}

fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), NetError> {
    std::fs::write(path, bytes).map_err(|e| NetError {
        file: path.display().to_string(),
        kind: NetErrorKind::Write(e.to_string()),
    })
}

/// Reads an own-format file without plugins (a trainer continuing from its own export). Use
/// [`Nnue::load`] to evaluate: it also checks the blocks against the plugins.
pub fn read_own(path: &Path) -> Result<Network, NetError> {
    let label = path.display().to_string();
    let err = |kind| NetError {
        file: label.clone(),
        kind,
    };
    let bytes = read_declared(path).map_err(err)?;
    decode_own(&bytes)
        .map(|(net, _)| net)
        .map_err(|e| err(NetErrorKind::Decode(e)))
}

/// Checks that `path` is a network file of either format (structure, sizes, length, and the
/// checksum of the own format) without binding it to plugins: what `trainer run --check` asks
/// of a `net` key before any stage runs.
pub fn check_network_file(path: &Path) -> Result<(), NetError> {
    let err = |kind| NetError {
        file: path.display().to_string(),
        kind,
    };
    let bytes = read_declared(path).map_err(err)?;
    match detect(&bytes) {
        NetFormat::Own => decode_own(&bytes).map(drop),
        NetFormat::Thesis => thesis_header(&bytes).map(drop),
        NetFormat::Stockfish => {
            // The blocks' identities come from the plugins when the file is bound; any will do
            // to check the file's structure.
            stockfish::Layout::of_header(&bytes).and_then(|layout| {
                let blocks = layout.blocks.unbound_block_infos();
                stockfish::decode(&bytes, &layout, blocks).map(drop)
            })
        }
    }
    .map_err(|e| err(NetErrorKind::Decode(e)))
}

/// The most header bytes [`read_declared`] reads before the header must have said how long the
/// file is (an own-format header of 64 blocks with the longest names stays below it).
const MAX_HEADER_BYTES: usize = 8 << 20;

/// Reads a network file in memory and time bounded by what its header declares: the header
/// first (growing from 4 KiB), then exactly the bytes it announces and one more, so that
/// `/dev/zero` or a huge sparse file is refused after a few KiB. A regular file whose length
/// differs from the declared one is refused from its metadata, without reading it (with the
/// decoders' own length errors); whatever else is wrong with the bytes is left to the decoders.
fn read_declared(path: &Path) -> Result<Vec<u8>, NetErrorKind> {
    let read_err = |e: std::io::Error| NetErrorKind::Read(e.to_string());
    let mut file = File::open(path).map_err(read_err)?;
    let metadata = file.metadata().map_err(read_err)?;
    let regular_len = metadata.is_file().then_some(metadata.len());
    let mut bytes = Vec::new();
    let mut want = 4096usize;
    let declared = loop {
        let missing = want - bytes.len();
        let got = (&mut file)
            .take(missing as u64)
            .read_to_end(&mut bytes)
            .map_err(read_err)?;
        let at_end = got < missing;
        match declared_length(&bytes) {
            Ok(len) => break Some(len),
            Err(DecodeError::TruncatedHeader { .. }) if !at_end && want < MAX_HEADER_BYTES => {
                want = (want * 2).min(MAX_HEADER_BYTES);
            }
            Err(_) => break None,
        }
    };
    let Some((declared, sizes, exact)) = declared else {
        return Ok(bytes);
    };
    match regular_len {
        Some(len) if len < declared && exact => {
            return Err(NetErrorKind::Decode(DecodeError::Truncated {
                len: len as usize,
                expected: declared,
                sizes,
            }));
        }
        Some(len) if len > declared => {
            return Err(NetErrorKind::Decode(DecodeError::TrailingBytes {
                len: len as usize,
                expected: declared,
                sizes,
            }));
        }
        _ => {}
    }
    let rest = (declared + 1).saturating_sub(bytes.len() as u64);
    (&mut file)
        .take(rest)
        .read_to_end(&mut bytes)
        .map_err(read_err)?;
    Ok(bytes)
}
