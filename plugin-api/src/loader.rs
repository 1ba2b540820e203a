//! Finding, loading and composing feature blocks.
//!
//! [`PluginRegistry`] loads plugin libraries (files named `*nnue_plugin_*.so`, `.dylib` or
//! `.dll`) from a directory and indexes their blocks by name; [`FeatureSet`] concatenates blocks
//! named in a spec like `all+ph+pv` (the thesis's ⊕), each block's indices offset by the sizes of
//! the blocks before it. Every failure is a [`LoadError`] whose `Display` is one sentence naming
//! the file or the block.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use abi_stable::library::{AbiHeaderRef, LibHeader, LibraryError, RawLibrary};
use abi_stable::std_types::RResult;
use object::{Object, ObjectSymbol};

use crate::block::{BlockDescriptor, IndexList, MoveDelta, PluginError};
use crate::module::{PluginModule_Ref, API_VERSION, HEADER_SYMBOL_PREFIX};
use crate::types::{Board, Color, Move};

/// Environment variable naming the plugin directory (overridden by an explicit flag).
pub const PLUGIN_DIR_ENV: &str = "NNUE_PLUGIN_DIR";

/// A failure to find, load or compose plugins. `Display` is a single line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// The directory could not be read.
    Dir {
        /// The directory.
        dir: PathBuf,
        /// The operating system's reason.
        reason: String,
    },
    /// No plugin directory with any plugin in it was found.
    NoPlugins {
        /// The directories looked in.
        searched: Vec<PathBuf>,
    },
    /// The dynamic loader refused the file.
    Open {
        /// The file.
        path: PathBuf,
        /// The dynamic loader's (or parser's) reason.
        reason: String,
    },
    /// The file is a library but not a feature plugin.
    NotAPlugin {
        /// The file.
        path: PathBuf,
    },
    /// The plugin was built against another, incompatible `plugin-api`.
    Incompatible {
        /// The file.
        path: PathBuf,
        /// The plugin-api version the plugin reports.
        plugin_api: String,
        /// What differs (version numbers, type layouts, header).
        reason: String,
    },
    /// Two plugins provide the same block name.
    Duplicate {
        /// The block name.
        name: String,
        /// The plugin that registered it first.
        first: String,
        /// The plugin that claimed it again.
        second: String,
    },
    /// A block descriptor is unusable (size 0, bad name...).
    BadBlock {
        /// The plugin file or label.
        origin: String,
        /// What is wrong with the block.
        reason: String,
    },
    /// A spec names a block no plugin provides.
    UnknownBlock {
        /// The name asked for.
        name: String,
        /// The names the registry knows.
        available: Vec<String>,
    },
    /// A spec is malformed.
    BadSpec {
        /// The spec as given.
        spec: String,
        /// Why it is malformed.
        reason: String,
    },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Dir { dir, reason } => {
                write!(f, "cannot read plugin directory {}: {reason}", dir.display())
            }
            LoadError::NoPlugins { searched } => write!(
                f,
                "no feature plugins (files named *nnue_plugin_*{}) found in {}; build them with `cargo build` or pass --plugin-dir / set {PLUGIN_DIR_ENV}",
                std::env::consts::DLL_SUFFIX,
                searched
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            LoadError::Open { path, reason } => {
                write!(f, "cannot load plugin {}: {reason}", path.display())
            }
            LoadError::NotAPlugin { path } => write!(
                f,
                "{} is not an NNUE feature plugin (it exports no plugin-api module)",
                path.display()
            ),
            LoadError::Incompatible {
                path,
                plugin_api,
                reason,
            } => write!(
                f,
                "plugin {} was built against plugin-api {plugin_api}, incompatible with this host's {API_VERSION} ({reason}); rebuild it",
                path.display()
            ),
            LoadError::Duplicate {
                name,
                first,
                second,
            } => write!(
                f,
                "feature block '{name}' is provided by two plugins: {first} and {second}"
            ),
            LoadError::BadBlock { origin, reason } => {
                write!(f, "plugin {origin} exports an invalid block: {reason}")
            }
            LoadError::UnknownBlock { name, available } => write!(
                f,
                "unknown feature block '{name}' (available: {})",
                available.join(", ")
            ),
            LoadError::BadSpec { spec, reason } => {
                write!(f, "invalid feature set '{spec}': {reason}")
            }
        }
    }
}

impl std::error::Error for LoadError {}

/// A block that failed while being called. `Display` is one line naming block and plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockError {
    /// The block's name.
    pub block: String,
    /// Where the block came from (a plugin file, or "linked" for direct registration).
    pub origin: String,
    /// The plugin's own message.
    pub message: String,
}

impl fmt::Display for BlockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "feature block '{}' (from {}) failed: {}",
            self.block, self.origin, self.message
        )
    }
}

impl std::error::Error for BlockError {}

/// A block known to the registry, with where it came from.
#[derive(Clone, Debug)]
pub struct RegisteredBlock {
    /// The block's descriptor (entry points stay valid: plugin libraries are never unloaded).
    pub descriptor: BlockDescriptor,
    /// The plugin file, or a label for directly linked blocks.
    pub origin: String,
    /// The plugin crate's name and version.
    pub crate_name: String,
}

/// All blocks known to this process, by name.
#[derive(Clone, Debug, Default)]
pub struct PluginRegistry {
    blocks: BTreeMap<String, RegisteredBlock>,
}

/// Whether a file name looks like a plugin library of this project.
pub fn is_plugin_file_name(name: &str) -> bool {
    name.contains("nnue_plugin_") && name.ends_with(std::env::consts::DLL_SUFFIX)
}

/// The directories searched when no directory is given: the running executable's directory,
/// its `deps/` folder (where `cargo test` puts cdylibs), and its parent (for test binaries that
/// live in `deps/`).
pub fn default_plugin_dirs() -> Vec<PathBuf> {
    let Ok(exe) = std::env::current_exe() else {
        return Vec::new();
    };
    let Some(dir) = exe.parent() else {
        return Vec::new();
    };
    let mut dirs = vec![dir.to_path_buf(), dir.join("deps")];
    if let Some(parent) = dir.parent() {
        dirs.push(parent.to_path_buf());
    }
    dirs
}

fn plugin_files(dir: &Path) -> Result<Vec<PathBuf>, LoadError> {
    let entries = std::fs::read_dir(dir).map_err(|e| LoadError::Dir {
        dir: dir.to_path_buf(),
        reason: e.to_string(),
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(is_plugin_file_name)
        })
        .collect();
    files.sort();
    Ok(files)
}

fn condense_library_error(path: &Path, err: LibraryError) -> LoadError {
    let header_version = || {
        header_symbol(path)
            .ok()
            .flatten()
            .and_then(|symbol| open_header(path, &symbol).ok())
            .map(|h| h.version_strings().version.to_string())
            .unwrap_or_else(|| "unknown".to_string())
    };
    match err {
        LibraryError::OpenError { err, .. } => LoadError::Open {
            path: path.to_path_buf(),
            reason: err.to_string().lines().next().unwrap_or("").to_string(),
        },
        LibraryError::GetSymbolError { .. } => LoadError::NotAPlugin {
            path: path.to_path_buf(),
        },
        LibraryError::IncompatibleVersionNumber { actual_version, .. } => LoadError::Incompatible {
            path: path.to_path_buf(),
            plugin_api: actual_version.to_string(),
            reason: "version numbers differ".into(),
        },
        LibraryError::AbiInstability(_) => LoadError::Incompatible {
            path: path.to_path_buf(),
            plugin_api: header_version(),
            reason: "the type layouts differ".into(),
        },
        LibraryError::InvalidAbiHeader(_) | LibraryError::InvalidCAbi { .. } => {
            LoadError::Incompatible {
                path: path.to_path_buf(),
                plugin_api: header_version(),
                reason: "the abi_stable header differs".into(),
            }
        }
        LibraryError::ParseVersionError(e) => LoadError::Incompatible {
            path: path.to_path_buf(),
            plugin_api: "unparseable".into(),
            reason: e.to_string(),
        },
        LibraryError::RootModule { err, .. } => LoadError::Open {
            path: path.to_path_buf(),
            reason: format!(
                "its module constructor failed: {}",
                err.to_string().lines().next().unwrap_or("")
            ),
        },
        LibraryError::Many(errors) => match errors.into_iter().next() {
            Some(first) => condense_library_error(path, first),
            None => LoadError::Open {
                path: path.to_path_buf(),
                reason: "unknown error".into(),
            },
        },
    }
}

/// The name of the plugin-header symbol `path` exports, found in its export table without
/// loading it; `None` if the file is a library that exports none.
fn header_symbol(path: &Path) -> Result<Option<String>, LoadError> {
    let open_err = |reason: String| LoadError::Open {
        path: path.to_path_buf(),
        reason,
    };
    let data = std::fs::read(path).map_err(|e| open_err(e.to_string()))?;
    let file =
        object::File::parse(&*data).map_err(|e| open_err(format!("not a shared library ({e})")))?;
    let mut found: Vec<String> = Vec::new();
    let symbols = file.dynamic_symbols().chain(file.symbols());
    for sym in symbols {
        if !sym.is_definition() {
            continue;
        }
        let Ok(name) = sym.name() else { continue };
        // Mach-O prefixes C symbols with '_'.
        let name = name
            .strip_prefix('_')
            .filter(|n| n.starts_with(HEADER_SYMBOL_PREFIX))
            .unwrap_or(name);
        if name.starts_with(HEADER_SYMBOL_PREFIX) && !found.iter().any(|f| f == name) {
            found.push(name.to_string());
        }
    }
    match found.len() {
        0 => Ok(None),
        1 => Ok(found.pop()),
        _ => Err(LoadError::BadBlock {
            origin: path.display().to_string(),
            reason: format!("it exports several plugin headers ({})", found.join(", ")),
        }),
    }
}

/// Loads the library (kept loaded for the life of the process: block entry points must stay
/// valid) and reads its abi_stable header from `symbol`.
fn open_header(path: &Path, symbol: &str) -> Result<&'static LibHeader, LibraryError> {
    let raw = RawLibrary::load_at(path)?;
    let mut name = symbol.as_bytes().to_vec();
    name.push(0);
    // SAFETY: the symbol is a `LibHeader` static written by `export_plugin!` (its name was found
    // in the export table), and the library is never unloaded (forgotten below), so the
    // 'static references in the header stay valid.
    let header = unsafe {
        let abi: AbiHeaderRef = *raw.get::<AbiHeaderRef>(&name)?;
        abi.upgrade()?
    };
    std::mem::forget(raw);
    Ok(header)
}

impl PluginRegistry {
    /// A registry without blocks.
    pub fn new() -> Self {
        Self::default()
    }

    /// Loads the plugins of `dir` if given, else of `$NNUE_PLUGIN_DIR`, else of the
    /// [`default_plugin_dirs`] together. In the default case a plugin file present in several
    /// of those directories is taken from where it is newest: cargo refreshes the copy in
    /// `deps/` on every test build but the one beside the binary only on `cargo build`, and a
    /// stale copy must not shadow the fresh one.
    pub fn discover(dir: Option<&Path>) -> Result<Self, LoadError> {
        let env_dir = std::env::var_os(PLUGIN_DIR_ENV).filter(|d| !d.is_empty());
        let explicit = dir.map(Path::to_path_buf).or(env_dir.map(PathBuf::from));
        let (searched, files) = match explicit {
            Some(dir) => {
                let files = plugin_files(&dir)?;
                (vec![dir], files)
            }
            None => {
                let dirs = default_plugin_dirs();
                let mut newest: BTreeMap<std::ffi::OsString, (std::time::SystemTime, PathBuf)> =
                    BTreeMap::new();
                for file in dirs.iter().filter_map(|d| plugin_files(d).ok()).flatten() {
                    let modified = std::fs::metadata(&file)
                        .and_then(|m| m.modified())
                        .unwrap_or(std::time::UNIX_EPOCH);
                    let name = file.file_name().unwrap_or_default().to_os_string();
                    if newest.get(&name).is_none_or(|(t, _)| modified > *t) {
                        newest.insert(name, (modified, file));
                    }
                }
                (dirs, newest.into_values().map(|(_, f)| f).collect())
            }
        };
        if files.is_empty() {
            return Err(LoadError::NoPlugins { searched });
        }
        let mut registry = Self::new();
        for file in files {
            registry.load_file(&file)?;
        }
        Ok(registry)
    }

    /// Loads one plugin library and registers its blocks.
    pub fn load_file(&mut self, path: &Path) -> Result<(), LoadError> {
        // dlopen does not search the current directory for bare names: always pass a path with '/'.
        let path = if path.components().count() == 1 {
            Path::new(".").join(path)
        } else {
            path.to_path_buf()
        };
        if !path.is_file() {
            return Err(LoadError::Open {
                path,
                reason: "no such file".into(),
            });
        }
        let symbol =
            header_symbol(&path)?.ok_or_else(|| LoadError::NotAPlugin { path: path.clone() })?;
        let module = open_header(&path, &symbol)
            .and_then(|header| header.init_root_module::<PluginModule_Ref>())
            .map_err(|e| condense_library_error(&path, e))?;
        let crate_name = format!(
            "{} {}",
            module.crate_name().as_str(),
            module.crate_version().as_str()
        );
        let blocks = (module.blocks())();
        self.register(blocks.as_slice(), &path.display().to_string(), &crate_name)
    }

    /// Registers blocks linked into this process (a plugin crate used as an rlib), e.g. for
    /// benchmarks comparing a direct call with a call through the loaded plugin.
    pub fn register(
        &mut self,
        blocks: &[BlockDescriptor],
        origin: &str,
        crate_name: &str,
    ) -> Result<(), LoadError> {
        for d in blocks {
            let name = d.name.as_str();
            let bad = |reason: String| LoadError::BadBlock {
                origin: origin.to_string(),
                reason,
            };
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(bad(format!(
                    "block name '{name}' must be non-empty ASCII letters, digits or '_'"
                )));
            }
            if name != name.to_ascii_lowercase() || name == "hv" {
                return Err(bad(format!(
                    "block name '{name}' must be lowercase and not the alias 'hv'"
                )));
            }
            if d.size == 0 || d.max_active == 0 {
                return Err(bad(format!("block '{name}' declares size or max_active 0")));
            }
            if let Some(existing) = self.blocks.get(name) {
                return Err(LoadError::Duplicate {
                    name: name.to_string(),
                    first: existing.origin.clone(),
                    second: origin.to_string(),
                });
            }
            self.blocks.insert(
                name.to_string(),
                RegisteredBlock {
                    descriptor: *d,
                    origin: origin.to_string(),
                    crate_name: crate_name.to_string(),
                },
            );
        }
        Ok(())
    }

    /// The names of all known blocks, sorted.
    pub fn names(&self) -> Vec<String> {
        self.blocks.keys().cloned().collect()
    }

    /// All known blocks, sorted by name.
    pub fn blocks(&self) -> impl Iterator<Item = &RegisteredBlock> {
        self.blocks.values()
    }

    /// The block called `name` (`hv` means `all`).
    pub fn block(&self, name: &str) -> Result<&RegisteredBlock, LoadError> {
        let canonical = canonical_block_name(name);
        self.blocks
            .get(canonical.as_str())
            .ok_or_else(|| LoadError::UnknownBlock {
                name: name.to_string(),
                available: self.names(),
            })
    }

    /// The feature set named by `spec` (`all+ph+pv`).
    pub fn feature_set(&self, spec: &str) -> Result<FeatureSet, LoadError> {
        let names = parse_spec(spec)?;
        let mut slots = Vec::with_capacity(names.len());
        let mut offset = 0u32;
        for name in &names {
            let b = self.block(name)?;
            slots.push(BlockSlot {
                block: b.clone(),
                offset,
            });
            offset = offset
                .checked_add(b.descriptor.size)
                .ok_or_else(|| LoadError::BadSpec {
                    spec: spec.to_string(),
                    reason: "total size overflows u32".into(),
                })?;
        }
        Ok(FeatureSet {
            name: names.join("+"),
            slots,
            size: offset,
        })
    }
}

/// The canonical name of a block: lowercase, with the thesis's alias `hv` mapped to `all`.
pub fn canonical_block_name(name: &str) -> String {
    let lower = name.trim().to_ascii_lowercase();
    if lower == "hv" {
        "all".to_string()
    } else {
        lower
    }
}

/// Splits a spec into canonical block names, rejecting empty parts and repeated blocks.
pub fn parse_spec(spec: &str) -> Result<Vec<String>, LoadError> {
    let bad = |reason: String| LoadError::BadSpec {
        spec: spec.to_string(),
        reason,
    };
    if spec.trim().is_empty() {
        return Err(bad("it names no block".into()));
    }
    let mut names: Vec<String> = Vec::new();
    for part in spec.split('+') {
        let name = canonical_block_name(part);
        if name.is_empty() {
            return Err(bad("empty block name between '+' signs".into()));
        }
        if names.contains(&name) {
            return Err(bad(format!("block '{name}' appears twice")));
        }
        names.push(name);
    }
    Ok(names)
}

/// One block of a feature set and the offset of its indices.
#[derive(Clone, Debug)]
pub struct BlockSlot {
    /// The block.
    pub block: RegisteredBlock,
    /// Sum of the sizes of the blocks before it.
    pub offset: u32,
}

/// Blocks concatenated in order (the thesis's ⊕): the sparse input of one network.
#[derive(Clone, Debug)]
pub struct FeatureSet {
    name: String,
    slots: Vec<BlockSlot>,
    size: u32,
}

fn block_error(slot: &BlockSlot, e: PluginError) -> BlockError {
    BlockError {
        block: slot.block.descriptor.name.to_string(),
        origin: slot.block.origin.clone(),
        message: e.message.to_string(),
    }
}

impl FeatureSet {
    /// Canonical name (`all+ph+pv`; `hv` written as `all`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Total number of indices N.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// The blocks with their offsets.
    pub fn slots(&self) -> &[BlockSlot] {
        &self.slots
    }

    /// Bound on the indices [`active`](Self::active) returns for one perspective.
    pub fn max_active(&self) -> usize {
        self.slots
            .iter()
            .map(|s| s.block.descriptor.max_active as usize)
            .sum()
    }

    /// Appends all active indices (with duplicates, offset) of `board` from `perspective`.
    pub fn active(
        &self,
        board: &Board,
        perspective: Color,
        out: &mut Vec<u32>,
    ) -> Result<(), BlockError> {
        for slot in &self.slots {
            let d = &slot.block.descriptor;
            let start = out.len();
            out.resize(start + d.max_active as usize, 0);
            let mut list = IndexList::new(&mut out[start..]);
            let r = (d.active)(board, perspective, &mut list);
            let n = list.len();
            out.truncate(start + n);
            if let RResult::RErr(e) = r {
                return Err(block_error(slot, e));
            }
            for ix in &mut out[start..] {
                if *ix >= d.size {
                    return Err(BlockError {
                        block: d.name.to_string(),
                        origin: slot.block.origin.clone(),
                        message: format!("emitted index {ix} >= its size {}", d.size),
                    });
                }
                *ix += slot.offset;
            }
        }
        Ok(())
    }

    /// Sorted unique active indices: the binary network input.
    pub fn active_set(&self, board: &Board, perspective: Color) -> Result<Vec<u32>, BlockError> {
        let mut v = Vec::with_capacity(self.max_active());
        self.active(board, perspective, &mut v)?;
        v.sort_unstable();
        v.dedup();
        Ok(v)
    }

    /// A delta buffer sized for this feature set (allocate once, reuse for every move).
    pub fn delta_buffer(&self) -> FeatureDelta {
        let cap: usize = self
            .slots
            .iter()
            .map(|s| s.block.descriptor.max_delta as usize)
            .sum();
        FeatureDelta {
            added: [vec![0; cap], vec![0; cap]],
            removed: [vec![0; cap], vec![0; cap]],
            n_added: [0; 2],
            n_removed: [0; 2],
            refresh: [false; 2],
        }
    }

    /// Fills `buf` with what `mv` (legal on `board`) adds and removes, both perspectives, every
    /// block offset. One call per block; no allocation.
    pub fn delta(
        &self,
        board: &Board,
        mv: &Move,
        buf: &mut FeatureDelta,
    ) -> Result<(), BlockError> {
        buf.n_added = [0; 2];
        buf.n_removed = [0; 2];
        buf.refresh = [false; 2];
        for slot in &self.slots {
            let d = &slot.block.descriptor;
            let cap = d.max_delta as usize;
            let starts_a = buf.n_added;
            let starts_r = buf.n_removed;
            let (a0, a1) = split_pair(&mut buf.added, starts_a, cap);
            let (r0, r1) = split_pair(&mut buf.removed, starts_r, cap);
            let mut md = MoveDelta {
                added: [IndexList::new(a0), IndexList::new(a1)],
                removed: [IndexList::new(r0), IndexList::new(r1)],
                refresh: [false; 2],
            };
            let r = (d.delta)(board, mv, &mut md);
            if let RResult::RErr(e) = r {
                return Err(block_error(slot, e));
            }
            let counts_a = [md.added[0].len(), md.added[1].len()];
            let counts_r = [md.removed[0].len(), md.removed[1].len()];
            let refresh = md.refresh;
            for p in 0..2 {
                buf.refresh[p] |= refresh[p];
                for ix in &mut buf.added[p][starts_a[p]..starts_a[p] + counts_a[p]] {
                    *ix += slot.offset;
                }
                for ix in &mut buf.removed[p][starts_r[p]..starts_r[p] + counts_r[p]] {
                    *ix += slot.offset;
                }
                buf.n_added[p] += counts_a[p];
                buf.n_removed[p] += counts_r[p];
            }
        }
        Ok(())
    }
}

fn split_pair(
    lists: &mut [Vec<u32>; 2],
    starts: [usize; 2],
    cap: usize,
) -> (&mut [u32], &mut [u32]) {
    let [l0, l1] = lists;
    (
        &mut l0[starts[0]..starts[0] + cap],
        &mut l1[starts[1]..starts[1] + cap],
    )
}

/// Host-owned result of [`FeatureSet::delta`]: per perspective, added and removed indices
/// (offset into the whole feature set) and whether a refresh is needed.
#[derive(Clone, Debug)]
pub struct FeatureDelta {
    added: [Vec<u32>; 2],
    removed: [Vec<u32>; 2],
    n_added: [usize; 2],
    n_removed: [usize; 2],
    refresh: [bool; 2],
}

impl FeatureDelta {
    /// Indices whose count rises by one for `perspective`.
    #[inline(always)]
    pub fn added(&self, perspective: Color) -> &[u32] {
        let p = perspective.index();
        &self.added[p][..self.n_added[p]]
    }

    /// Indices whose count falls by one for `perspective`.
    #[inline(always)]
    pub fn removed(&self, perspective: Color) -> &[u32] {
        let p = perspective.index();
        &self.removed[p][..self.n_removed[p]]
    }

    /// Whether `perspective` must be recomputed from scratch (its lists are then meaningless).
    #[inline(always)]
    pub fn needs_refresh(&self, perspective: Color) -> bool {
        self.refresh[perspective.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_are_canonicalised_and_checked() {
        assert_eq!(parse_spec("hv+H+v").unwrap(), vec!["all", "h", "v"]);
        assert_eq!(parse_spec(" all ").unwrap(), vec!["all"]);
        for bad in ["", "all+", "+all", "all++h", "all+hv", "h+h"] {
            assert!(parse_spec(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn plugin_file_names() {
        let suffix = std::env::consts::DLL_SUFFIX;
        assert!(is_plugin_file_name(&format!("libnnue_plugin_all{suffix}")));
        assert!(!is_plugin_file_name(&format!(
            "libserde_derive-123{suffix}"
        )));
        assert!(!is_plugin_file_name("libnnue_plugin_all.rlib"));
    }

    #[test]
    fn layout_ids_differ_by_name_size_and_version() {
        let base = crate::layout_id("all", 768, 1);
        assert_ne!(base, crate::layout_id("alm", 768, 1));
        assert_ne!(base, crate::layout_id("all", 769, 1));
        assert_ne!(base, crate::layout_id("all", 768, 2));
        assert_eq!(base, crate::layout_id("all", 768, 1));
    }
}
