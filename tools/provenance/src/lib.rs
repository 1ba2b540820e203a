//! # What the tree may hold of other projects
//!
//! The project reads other projects (Stockfish, nnue-pytorch, fishtest, fastchess, bullet),
//! cites them and records the figures and vectors their programs printed; it keeps none of
//! their code, no binary built from it, no recipe that obtains or builds it, and none of their
//! data files, which live in `../shared` beside the repository (ARCHITECTURE.md,
//! "References"). This crate checks every file of the tree against that rule, so that it stays
//! true: `tests/tree.rs` runs [`check_tree`] on the repository with the other tests
//! (`scripts/test.sh`), and a finding names the file, the line and the rule.
//!
//! What is refused:
//!
//! - [`Rule::ForeignSource`]: C, C++, CUDA or Objective-C sources and headers (the project is
//!   Rust, Python and shell; such a file is a harness or a copy of another project's code);
//! - [`Rule::Binary`]: executables, object files, libraries and packages, by their first bytes
//!   or their extension;
//! - [`Rule::VendoredFolder`]: a folder whose name says it holds other projects
//!   (`vendor`, `third_party`, `external`, `node_modules`, ...);
//! - [`Rule::ForeignData`]: networks, training data, books and game collections (`.nnue`, `.nn`,
//!   `.binpack`, `.epd`, `.pgn`, ...): other projects' data belongs in `../shared`, the
//!   project's own is made at run or test time from a recipe;
//! - [`Rule::ForeignNotice`]: another project's licence header (a sign of copied code);
//! - [`Rule::BuildRecipe`]: a line of any text file (scripts, docs, comments) that obtains or
//!   compiles code (`git clone`, `git archive`, a C or C++ compiler, `cmake`, `make` with a
//!   target or flags, a download from a code host, `pip install git+…`).
//!
//! Citing a file of another project (`src/nnue/nnue_accumulator.cpp` at 762dd1da9) is a fact,
//! not a recipe, and passes.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::LazyLock;

use regex::Regex;

/// Which part of the rule a file breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// A C, C++, CUDA or Objective-C source or header.
    ForeignSource,
    /// An executable, object file, library or package.
    Binary,
    /// A folder named for other projects' code.
    VendoredFolder,
    /// A network, training data, an opening book or a game collection.
    ForeignData,
    /// Another project's licence header.
    ForeignNotice,
    /// A command that obtains or builds code.
    BuildRecipe,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Rule::ForeignSource => {
                "a C/C++ source: the project keeps no other project's code (harnesses stay outside the repository)"
            }
            Rule::Binary => "a binary: nothing built is committed",
            Rule::VendoredFolder => "a vendored folder: other projects are read, never kept",
            Rule::ForeignData => {
                "a data file: other projects' data lives in ../shared, the project's own is made from its recipe"
            }
            Rule::ForeignNotice => "another project's licence header: its code is not kept here",
            Rule::BuildRecipe => {
                "a build recipe: no command that obtains or compiles code belongs in the tree (record what it printed instead)"
            }
        })
    }
}

/// One file (and line, for text) that breaks the rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The file, relative to the tree's root.
    pub path: String,
    /// The line (from 1), for a finding inside a text file.
    pub line: Option<usize>,
    /// What it breaks.
    pub rule: Rule,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.path, self.rule),
            None => write!(f, "{}: {}", self.path, self.rule),
        }
    }
}

/// Extensions of C, C++, CUDA and Objective-C sources and headers.
const SOURCE_EXTENSIONS: &[&str] = &[
    "c", "cc", "cpp", "cxx", "c++", "h", "hh", "hpp", "hxx", "h++", "inl", "ipp", "tcc", "cu",
    "cuh", "m", "mm",
];

/// Extensions of built things.
const BINARY_EXTENSIONS: &[&str] = &[
    "o", "obj", "a", "lib", "so", "dylib", "dll", "exe", "rlib", "whl", "jar", "class", "pyc",
    "wasm",
];

/// Extensions of networks, training data, books and game collections.
const DATA_EXTENSIONS: &[&str] = &[
    "nnue", "nn", "binpack", "plain", "epd", "pgn", "pt", "ckpt", "onnx",
];

/// Folder names that say they hold other projects.
const VENDORED_FOLDERS: &[&str] = &[
    "vendor",
    "vendored",
    "third_party",
    "third-party",
    "thirdparty",
    "external",
    "node_modules",
];

/// The first bytes of executables, objects, archives and packages.
const BINARY_MAGICS: &[&[u8]] = &[
    b"\x7fELF",
    b"\xfe\xed\xfa\xce",
    b"\xfe\xed\xfa\xcf",
    b"\xce\xfa\xed\xfe",
    b"\xcf\xfa\xed\xfe",
    b"\xca\xfe\xba\xbe",
    b"!<arch>\n",
    b"\0asm",
];

/// Licence headers of other projects' sources.
const FOREIGN_NOTICES: &[&str] = &[
    "Stockfish, a UCI chess playing engine derived from Glaurung",
    "The Stockfish developers (see AUTHORS file)",
];

/// Commands that obtain or compile code, as they appear in scripts, command blocks and
/// comments.
static RECIPES: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        // Fetching a repository or a snapshot of one.
        r"\bgit(\s+(-C\s+\S+|-\S+))*\s+(clone|archive|submodule|worktree\s+add)\b",
        r"\b(svn\s+checkout|hg\s+clone)\b",
        r"\b(curl|wget)\b.*\b(github\.com|gitlab\.com|bitbucket\.org|codeberg\.org)",
        r"\bpip3?\s+install\b.*\bgit\+",
        r"\bcargo\s+install\b.*--git\b",
        // Compilers and build systems of C and C++.
        r"(g\+\+|clang\+\+|\bnvcc)\s",
        r"(^|[\s;&|(`$])(gcc|cc|clang)\s+[^\n]*\.(c|cc|cpp|cxx)\b",
        r"(^|[;&|(`]\s*|^\s*(\$\s+)?)(cmake|ninja|meson)\s",
        r"(^|[;&|(`]\s*|^\s*(\$\s+)?)make(\s+-\S|\s+[A-Z_]+=|\s+(build|profile-build|all|install|net|config-sanity|clean)\b)",
        // Their compilers' flags, which only a build recipe needs.
        r"(^|[\s`])-(std=(c|gnu)(\+\+)?\d\d|march=|mtune=|flto\b|funroll-loops\b|fno-exceptions\b|DNNUE_EMBEDDING_OFF\b)",
    ]
    .iter()
    .map(|p| Regex::new(p).expect("a valid pattern"))
    .collect()
});

/// This crate's own sources, which must name what they look for.
const SELF: &[&str] = &["tools/provenance/src/lib.rs"];

fn extension(path: &str) -> Option<String> {
    let name = path.rsplit('/').next()?;
    let (stem, ext) = name.rsplit_once('.')?;
    (!stem.is_empty()).then(|| ext.to_ascii_lowercase())
}

/// Checks one file, `path` relative to the tree's root, with its contents.
pub fn check_file(path: &str, bytes: &[u8]) -> Vec<Finding> {
    let finding = |rule, line| Finding {
        path: path.to_string(),
        line,
        rule,
    };
    let mut found = Vec::new();
    let folders: Vec<&str> = path.split('/').collect();
    if folders[..folders.len() - 1]
        .iter()
        .any(|f| VENDORED_FOLDERS.contains(&f.to_ascii_lowercase().as_str()))
    {
        found.push(finding(Rule::VendoredFolder, None));
    }
    let ext = extension(path);
    let is = |list: &[&str]| ext.as_deref().is_some_and(|e| list.contains(&e));
    if is(SOURCE_EXTENSIONS) {
        found.push(finding(Rule::ForeignSource, None));
    }
    if is(BINARY_EXTENSIONS) || BINARY_MAGICS.iter().any(|m| bytes.starts_with(m)) {
        found.push(finding(Rule::Binary, None));
    }
    if is(DATA_EXTENSIONS) {
        found.push(finding(Rule::ForeignData, None));
    }
    if SELF.contains(&path) {
        return found;
    }
    let Ok(text) = std::str::from_utf8(bytes) else {
        return found;
    };
    for (n, line) in text.lines().enumerate() {
        if FOREIGN_NOTICES.iter().any(|notice| line.contains(notice)) {
            found.push(finding(Rule::ForeignNotice, Some(n + 1)));
        }
        if RECIPES.iter().any(|r| r.is_match(line)) {
            found.push(finding(Rule::BuildRecipe, Some(n + 1)));
        }
    }
    found
}

/// The files of the tree at `root`: those git tracks and those it would (not ignored), or,
/// outside a git work tree, every file but those in hidden folders, `target` and `runs`.
pub fn tree_files(root: &Path) -> Result<Vec<String>, String> {
    let listed = Command::new("git")
        .arg("-C")
        .arg(root)
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .output();
    match listed {
        Ok(out) if out.status.success() => {
            let text = String::from_utf8(out.stdout)
                .map_err(|_| format!("{}: a file name that is not UTF-8", root.display()))?;
            Ok(text
                .split('\0')
                .filter(|p| !p.is_empty())
                // A file git still tracks but the work tree no longer has (deleted, not yet
                // committed) is not in the tree.
                .filter(|p| root.join(p).is_file())
                .map(str::to_string)
                .collect())
        }
        _ => {
            let mut files = Vec::new();
            walk(root, root, &mut files)?;
            files.sort();
            Ok(files)
        }
    }
}

fn walk(root: &Path, dir: &Path, files: &mut Vec<String>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        let path: PathBuf = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry
            .file_type()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        if kind.is_dir() {
            if !name.starts_with('.') && name != "target" && name != "runs" {
                walk(root, &path, files)?;
            }
        } else if kind.is_file() {
            let relative = path.strip_prefix(root).expect("under the root");
            files.push(relative.to_string_lossy().replace('\\', "/"));
        }
    }
    Ok(())
}

/// Checks every file of the tree at `root` ([`tree_files`]).
pub fn check_tree(root: &Path) -> Result<Vec<Finding>, String> {
    let mut found = Vec::new();
    for path in tree_files(root)? {
        let bytes = std::fs::read(root.join(&path)).map_err(|e| format!("{path}: {e}"))?;
        found.extend(check_file(&path, &bytes));
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(path: &str, text: &str) -> Vec<Rule> {
        check_file(path, text.as_bytes())
            .into_iter()
            .map(|f| f.rule)
            .collect()
    }

    #[test]
    fn sources_binaries_folders_and_data_are_refused_by_name_or_bytes() {
        assert_eq!(rules("scripts/harness.cpp", ""), [Rule::ForeignSource]);
        assert_eq!(rules("x/include/a.HPP", ""), [Rule::ForeignSource]);
        assert_eq!(rules("tools/a.so", ""), [Rule::Binary]);
        assert_eq!(
            check_file("tools/engine", b"\x7fELF\x02\x01\x01").len(),
            1,
            "an executable without an extension"
        );
        assert_eq!(rules("third_party/lib.rs", ""), [Rule::VendoredFolder]);
        assert_eq!(rules("a/Vendor/b/c.py", ""), [Rule::VendoredFolder]);
        assert_eq!(rules("tests/data/sample.binpack", ""), [Rule::ForeignData]);
        assert_eq!(rules("nets/best.nnue", ""), [Rule::ForeignData]);
        // Names that only look alike pass.
        assert!(rules("src/cache.rs", "").is_empty());
        assert!(rules(".gitignore", "").is_empty());
        assert!(rules("externals.md", "").is_empty());
    }

    #[test]
    fn recipes_are_refused_and_citations_pass() {
        let recipe = |line: &str| rules("README.md", line) == [Rule::BuildRecipe];
        for line in [
            "git --git-dir=$SFGIT archive sf_18 | tar -x -C /tmp/sf-18",
            "git -C /tmp/sf fetch && git -C /tmp/sf clone x y",
            "  git clone https://github.com/official-stockfish/Stockfish",
            "g++ -std=c++17 -O2 -I$SRC harness.cpp",
            "clang++ -O3 x.cc",
            "    gcc -O2 -c foo.c",
            "cmake -B build",
            "$ make -j4 build ARCH=x86-64-avx2",
            "cd src && make profile-build",
            "make ARCH=x86-64-avx2",
            "wget https://github.com/a/b/archive/main.zip",
            "pip install git+https://github.com/a/b",
            "its Makefile's flags (`-O3 -funroll-loops -flto`)",
            "built with -std=c++20 and -DNNUE_EMBEDDING_OFF",
        ] {
            assert!(recipe(line), "{line}");
        }
        for line in [
            "the first layer's rows (`src/nnue/nnue_accumulator.cpp` at 762dd1da9)",
            "fishtest's `LLRcalc.py` and fastchess's `sprt_test.cpp` give the same numbers",
            "make a network of the set, then make the report",
            "python-chess makes the positions (pip install chess==1.11.2)",
            "cargo build --release -p host",
            "git log --oneline",
            "apt-get install stockfish",
        ] {
            assert!(rules("README.md", line).is_empty(), "{line}");
        }
    }

    #[test]
    fn another_projects_licence_header_is_refused() {
        let header = "/*\n  Stockfish, a UCI chess playing engine derived from Glaurung 2.1\n*/";
        let found = check_file("src/a.rs", header.as_bytes());
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].rule, found[0].line),
            (Rule::ForeignNotice, Some(2))
        );
        assert_eq!(
            found[0].to_string(),
            format!("src/a.rs:2: {}", Rule::ForeignNotice)
        );
    }

    #[test]
    fn a_new_file_is_checked_before_it_is_committed_and_ignored_ones_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let git = |args: &[&str]| {
            let ok = Command::new("git")
                .arg("-C")
                .arg(root)
                .args(args)
                .output()
                .unwrap()
                .status
                .success();
            assert!(ok, "git {args:?}");
        };
        git(&["init", "-q"]);
        std::fs::write(root.join(".gitignore"), "/target\n").unwrap();
        std::fs::create_dir_all(root.join("target/release")).unwrap();
        std::fs::write(root.join("target/release/host"), b"\x7fELF").unwrap();
        std::fs::write(root.join("main.rs"), "fn main() {}\n").unwrap();
        assert!(check_tree(root).unwrap().is_empty());
        // Untracked, not yet added: found all the same.
        std::fs::write(root.join("harness.cpp"), "int main() {}\n").unwrap();
        let found = check_tree(root).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].path, "harness.cpp");
        // Outside git, the walk finds it too and leaves build output alone.
        std::fs::remove_dir_all(root.join(".git")).unwrap();
        let found = check_tree(root).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
    }
}
