//! Finding, loading and composing feature blocks.
//!
//! [`PluginRegistry`] loads plugin libraries (files named `*nnue_plugin_*.so`, `.dylib` or
//! `.dll`) from a directory and indexes their blocks by name; it composes them into feature sets
//! ([`crate::feature_set`]). Every failure is a [`LoadError`] whose `Display` is one sentence
//! naming the file or the block.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use abi_stable::library::{AbiHeaderRef, LibHeader, LibraryError, RawLibrary};
use object::{Object, ObjectSymbol};

use crate::block::BlockDescriptor;
use crate::module::{PluginModule_Ref, API_VERSION, HEADER_SYMBOL_PREFIX};
use crate::spec::canonical_block_name;

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

impl From<crate::spec::SpecError> for LoadError {
    fn from(e: crate::spec::SpecError) -> Self {
        LoadError::BadSpec {
            spec: e.spec,
            reason: e.reason,
        }
    }
}

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
}

#[cfg(test)]
mod tests {
    use super::*;

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
