//! # The workspace's module graph
//!
//! Each crate's modules should import one another in one direction only: a reader can then
//! learn a crate bottom-up, and a change to a low module cannot be needed by the module it
//! serves. This crate reads a crate's sources (with `syn`), builds its module tree and the
//! references between modules, and finds the cycles, at every level of the tree:
//!
//! - the nodes of a level are a module's own code and its child modules (each child standing
//!   for its whole subtree);
//! - a reference from code in one subtree to an item of another is an edge between the two
//!   children; a reference from a child to its parent's own items (or back) is an edge between
//!   the child and the parent's own code;
//! - `use` declarations count where they are private (an import is for use); `pub use`
//!   re-exports are a module's facade, not a use, and references through them are followed to
//!   the module that defines the item;
//! - a module written inline in its parent's file (`mod x86 { ... }`) is part of that file's
//!   code: the file is what a reader reads as one;
//! - `#[cfg(test)]` code is left out: tests may reach anywhere.
//!
//! `cargo test -p layering` checks every member of the workspace (`tests/workspace.rs`, which
//! `scripts/test.sh` runs with the other tests); `cargo run -p layering -- CRATE_DIR` prints a
//! crate's levels in an order that imports only downwards.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// One module of a crate.
#[derive(Debug)]
pub struct Module {
    /// Names from the crate root (empty for the root).
    pub path: Vec<String>,
    /// The file its code is in.
    pub file: PathBuf,
    parent: Option<usize>,
    /// Declared with its body in its parent's file (`mod x86 { ... }`): part of that file's
    /// code, as a reader meets it.
    inline: bool,
    children: BTreeMap<String, usize>,
    /// Names this module brings into scope with `use`, and the paths they stand for (as
    /// written, resolved from this module).
    imports: HashMap<String, Vec<String>>,
    /// The paths its own code refers to (private `use` declarations included).
    refs: Vec<Vec<String>>,
    /// The names of the items it defines (functions, types, constants, traits, macros).
    defines: BTreeSet<String>,
}

/// A crate's module tree and the references of each module's own code.
#[derive(Debug)]
pub struct CrateGraph {
    /// The crate's name, for messages.
    pub name: String,
    /// Its modules, the root first.
    pub modules: Vec<Module>,
}

/// An edge of one level of the tree: `from` refers to `to` (the names of the level's nodes:
/// a child's name, or `self` for the module's own code), through `example` written in `file`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Edge {
    /// The referring node.
    pub from: String,
    /// The referred node.
    pub to: String,
    /// One reference that makes the edge, as written (`super::format::DecodeError`).
    pub example: String,
    /// The file it is written in.
    pub file: PathBuf,
}

/// The modules of one level that import one another in a circle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cycle {
    /// The crate.
    pub krate: String,
    /// The module whose level it is (`nnue::` for the root).
    pub level: String,
    /// The edges among the circle's nodes.
    pub edges: Vec<Edge>,
}

impl fmt::Display for Cycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: modules under {} import one another:",
            self.krate, self.level
        )?;
        for e in &self.edges {
            write!(
                f,
                " {} -> {} ({}: {});",
                e.from,
                e.to,
                e.file.display(),
                e.example
            )?;
        }
        Ok(())
    }
}

/// Whether the attributes hold `#[cfg(test)]`.
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| matches!(m, syn::Meta::Path(p) if p.is_ident("test")))
    })
}

/// The paths a `use` tree names: (the name it binds, the path), `*` for a glob.
fn use_paths(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<(String, Vec<String>)>) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_paths(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            if name == "self" {
                if let Some(last) = prefix.last() {
                    out.push((last.clone(), prefix.clone()));
                }
            } else {
                let mut path = prefix.clone();
                path.push(name.clone());
                out.push((name, path));
            }
        }
        syn::UseTree::Rename(r) => {
            let mut path = prefix.clone();
            path.push(r.ident.to_string());
            out.push((r.rename.to_string(), path));
        }
        syn::UseTree::Glob(_) => out.push(("*".into(), prefix.clone())),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                use_paths(t, prefix, out);
            }
        }
    }
}

/// Collects the paths of a module's own code (not its child modules').
struct PathCollector {
    refs: Vec<Vec<String>>,
}

impl<'ast> Visit<'ast> for PathCollector {
    fn visit_path(&mut self, p: &'ast syn::Path) {
        // A single name counts too: it may be one the module imports (with a `pub use` as
        // well as a private one), which resolves to where it is defined.
        self.refs
            .push(p.segments.iter().map(|s| s.ident.to_string()).collect());
        syn::visit::visit_path(self, p);
    }

    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {}

    fn visit_item_use(&mut self, _: &'ast syn::ItemUse) {}

    fn visit_attribute(&mut self, _: &'ast syn::Attribute) {}

    /// `pub(super)`, `pub(crate)`, `pub(in path)`: who may see an item, not a use.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}
}

/// Why a crate's sources or the workspace's member list could not be read.
#[derive(Debug)]
pub enum GraphLoadError {
    /// A file that cannot be read or listed, and why.
    Read(PathBuf, std::io::Error),
    /// A source file that does not parse as Rust.
    Parse(PathBuf, syn::Error),
    /// The workspace's `Cargo.toml` has no `members = [...]` list.
    NoMembers,
}

impl fmt::Display for GraphLoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GraphLoadError::Read(path, e) => write!(f, "cannot read {}: {e}", path.display()),
            GraphLoadError::Parse(path, e) => write!(f, "{}: cannot parse: {e}", path.display()),
            GraphLoadError::NoMembers => f.write_str("the workspace's Cargo.toml lists no members"),
        }
    }
}

impl std::error::Error for GraphLoadError {}

impl CrateGraph {
    /// Reads the crate whose root file is `root` (its `src/lib.rs` or `src/main.rs`).
    pub fn load(name: &str, root: &Path) -> Result<CrateGraph, GraphLoadError> {
        let mut graph = CrateGraph {
            name: name.to_string(),
            modules: Vec::new(),
        };
        let dir = root.parent().unwrap_or(Path::new("")).to_path_buf();
        let file = read_file(root)?;
        graph.add_module(Vec::new(), None, false, root, &dir, &file.items)?;
        Ok(graph)
    }

    fn add_module(
        &mut self,
        path: Vec<String>,
        parent: Option<usize>,
        inline: bool,
        file: &Path,
        dir: &Path,
        items: &[syn::Item],
    ) -> Result<usize, GraphLoadError> {
        let id = self.modules.len();
        self.modules.push(Module {
            path: path.clone(),
            file: file.to_path_buf(),
            parent,
            inline,
            children: BTreeMap::new(),
            imports: HashMap::new(),
            refs: Vec::new(),
            defines: BTreeSet::new(),
        });
        let mut collector = PathCollector { refs: Vec::new() };
        for item in items {
            match item {
                syn::Item::Mod(m) if is_test(&m.attrs) => {}
                syn::Item::Mod(m) => {
                    let name = m.ident.to_string();
                    let mut child_path = path.clone();
                    child_path.push(name.clone());
                    let child = match &m.content {
                        Some((_, inner)) => self.add_module(
                            child_path,
                            Some(id),
                            true,
                            file,
                            &dir.join(&name),
                            inner,
                        )?,
                        None => {
                            let flat = dir.join(format!("{name}.rs"));
                            let nested = dir.join(&name).join("mod.rs");
                            let child_file = if flat.exists() { flat } else { nested };
                            let parsed = read_file(&child_file)?;
                            self.add_module(
                                child_path,
                                Some(id),
                                false,
                                &child_file,
                                &dir.join(&name),
                                &parsed.items,
                            )?
                        }
                    };
                    self.modules[id].children.insert(name, child);
                }
                syn::Item::Use(u) if is_test(&u.attrs) => {}
                syn::Item::Use(u) => {
                    let mut out = Vec::new();
                    use_paths(&u.tree, &mut Vec::new(), &mut out);
                    let public = !matches!(u.vis, syn::Visibility::Inherited);
                    for (name, target) in out {
                        if !public {
                            self.modules[id].refs.push(target.clone());
                        }
                        self.modules[id].imports.insert(name, target);
                    }
                }
                syn::Item::Fn(f) if is_test(&f.attrs) => {}
                syn::Item::Fn(f) => {
                    self.modules[id].defines.insert(f.sig.ident.to_string());
                    collector.visit_item(item);
                }
                syn::Item::Struct(s) if !is_test(&s.attrs) => {
                    self.modules[id].defines.insert(s.ident.to_string());
                    collector.visit_item(item);
                }
                syn::Item::Enum(e) => {
                    self.modules[id].defines.insert(e.ident.to_string());
                    collector.visit_item(item);
                }
                syn::Item::Const(c) if !is_test(&c.attrs) => {
                    self.modules[id].defines.insert(c.ident.to_string());
                    collector.visit_item(item);
                }
                syn::Item::Static(st) => {
                    self.modules[id].defines.insert(st.ident.to_string());
                    collector.visit_item(item);
                }
                syn::Item::Trait(t) => {
                    self.modules[id].defines.insert(t.ident.to_string());
                    collector.visit_item(item);
                }
                syn::Item::Type(t) => {
                    self.modules[id].defines.insert(t.ident.to_string());
                    collector.visit_item(item);
                }
                syn::Item::Union(u) => {
                    self.modules[id].defines.insert(u.ident.to_string());
                    collector.visit_item(item);
                }
                syn::Item::Macro(m) => {
                    if let Some(name) = &m.ident {
                        self.modules[id].defines.insert(name.to_string());
                    }
                    collector.visit_item(item);
                }
                syn::Item::Impl(i) if is_test(&i.attrs) => {}
                syn::Item::Const(c) if is_test(&c.attrs) => {}
                syn::Item::Struct(s) if is_test(&s.attrs) => {}
                other => collector.visit_item(other),
            }
        }
        self.modules[id].refs.extend(collector.refs);
        Ok(id)
    }

    /// The module a path written in module `from` leads to: the deepest module it names, its
    /// re-exports followed; `None` for a path outside the crate.
    fn resolve(&self, from: usize, segs: &[String], depth: usize) -> Option<usize> {
        if depth > 16 || segs.is_empty() {
            return None;
        }
        let (mut cur, rest) = match segs[0].as_str() {
            "crate" => (0, &segs[1..]),
            "self" => (from, &segs[1..]),
            "super" => {
                let mut cur = from;
                let mut rest = segs;
                while rest.first().is_some_and(|s| s == "super") {
                    cur = self.modules[cur].parent?;
                    rest = &rest[1..];
                }
                (cur, rest)
            }
            first => {
                let m = &self.modules[from];
                if let Some(&child) = m.children.get(first) {
                    (child, &segs[1..])
                } else if let Some(target) = m.imports.get(first) {
                    if target.as_slice() == segs {
                        return None;
                    }
                    let mut full = target.clone();
                    full.extend_from_slice(&segs[1..]);
                    return self.resolve(from, &full, depth + 1);
                } else if let Some(glob) = m.imports.get("*")
                    && let Some(target) = self.resolve(from, glob, depth + 1)
                    && self.exports(target, first)
                {
                    let mut full = vec!["self".to_string()];
                    full.extend_from_slice(segs);
                    return self.resolve(target, &full, depth + 1);
                } else {
                    return None;
                }
            }
        };
        for (k, seg) in rest.iter().enumerate() {
            let m = &self.modules[cur];
            if let Some(&child) = m.children.get(seg) {
                cur = child;
            } else if let Some(target) = m.imports.get(seg) {
                let mut full = target.clone();
                full.extend_from_slice(&rest[k + 1..]);
                return self.resolve(cur, &full, depth + 1).or(Some(cur));
            } else if !m.defines.contains(seg)
                && let Some(glob) = m.imports.get("*")
                && let Some(target) = self.resolve(cur, glob, depth + 1)
                && self.exports(target, seg)
            {
                // A name brought in by `pub use module::*`: the module that has it.
                let mut full = vec!["self".to_string(), seg.clone()];
                full.extend_from_slice(&rest[k + 1..]);
                return self.resolve(target, &full, depth + 1).or(Some(target));
            } else {
                break;
            }
        }
        Some(cur)
    }

    /// The module whose file holds `id`'s code: itself, or for an inline module the nearest
    /// ancestor with a file of its own.
    fn file_module(&self, mut id: usize) -> usize {
        while self.modules[id].inline {
            id = self.modules[id].parent.expect("the root has a file");
        }
        id
    }

    /// Whether module `id` defines or imports the name `name` (so a glob of it brings it).
    fn exports(&self, id: usize, name: &str) -> bool {
        let m = &self.modules[id];
        m.defines.contains(name) || m.imports.contains_key(name) || m.children.contains_key(name)
    }

    /// The chain of module ids from the root to `id`.
    fn chain(&self, mut id: usize) -> Vec<usize> {
        let mut out = vec![id];
        while let Some(p) = self.modules[id].parent {
            out.push(p);
            id = p;
        }
        out.reverse();
        out
    }

    /// The name of a node of `level`'s graph: a child's name, or `self`.
    fn node_name(&self, level: usize, node: Option<usize>) -> String {
        match node {
            None => "self".into(),
            Some(c) => self.modules[c].path[self.modules[level].path.len()].clone(),
        }
    }

    /// Every level's edges: for each module with children, the edges among its own code
    /// (`self`) and its children.
    pub fn levels(&self) -> BTreeMap<String, BTreeSet<Edge>> {
        let mut levels: BTreeMap<String, BTreeSet<Edge>> = BTreeMap::new();
        for (id, m) in self.modules.iter().enumerate() {
            for r in &m.refs {
                let Some(to) = self.resolve(id, r, 0) else {
                    continue;
                };
                let (from, to) = (self.file_module(id), self.file_module(to));
                if to == from {
                    continue;
                }
                let (a, b) = (self.chain(from), self.chain(to));
                let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
                let level = a[common - 1];
                let from_node = a.get(common).copied();
                let to_node = b.get(common).copied();
                let edge = Edge {
                    from: self.node_name(level, from_node),
                    to: self.node_name(level, to_node),
                    example: r.join("::"),
                    file: m.file.clone(),
                };
                levels
                    .entry(self.level_name(level))
                    .or_default()
                    .insert(edge);
            }
        }
        levels
    }

    /// `crate::a::b` for module `id`.
    fn level_name(&self, id: usize) -> String {
        let mut s = format!("{}::", self.name);
        s.push_str(&self.modules[id].path.join("::"));
        s
    }

    /// The cycles of every level (none in a crate whose modules import in one direction).
    pub fn cycles(&self) -> Vec<Cycle> {
        let mut out = Vec::new();
        for (level, edges) in self.levels() {
            for component in strongly_connected(&edges) {
                let mut inside: Vec<Edge> = edges
                    .iter()
                    .filter(|e| component.contains(&e.from) && component.contains(&e.to))
                    .cloned()
                    .collect();
                // One example per pair of nodes.
                inside.dedup_by(|a, b| a.from == b.from && a.to == b.to);
                out.push(Cycle {
                    krate: self.name.clone(),
                    level: level.clone(),
                    edges: inside,
                });
            }
        }
        out
    }

    /// The top-level modules that module `name` reaches through the root level's edges (itself
    /// included).
    pub fn reaches(&self, name: &str) -> BTreeSet<String> {
        let root = self.level_name(0);
        let levels = self.levels();
        let edges = levels.get(&root).cloned().unwrap_or_default();
        let mut seen = BTreeSet::from([name.to_string()]);
        let mut todo = vec![name.to_string()];
        while let Some(n) = todo.pop() {
            for e in edges.iter().filter(|e| e.from == n) {
                if seen.insert(e.to.clone()) {
                    todo.push(e.to.clone());
                }
            }
        }
        seen
    }

    /// The nodes of `level` (a key of [`levels`](Self::levels)) in an order where each imports
    /// only those after it: the lowest last. `None` if the level has a cycle.
    pub fn order(&self, level: &str) -> Option<Vec<String>> {
        let levels = self.levels();
        let edges = levels.get(level)?;
        let mut nodes: BTreeSet<String> = edges
            .iter()
            .flat_map(|e| [e.from.clone(), e.to.clone()])
            .collect();
        let mut order = Vec::new();
        while !nodes.is_empty() {
            let top: Vec<String> = nodes
                .iter()
                .filter(|n| {
                    !edges
                        .iter()
                        .any(|e| &e.to == *n && e.from != **n && nodes.contains(&e.from))
                })
                .cloned()
                .collect();
            if top.is_empty() {
                return None;
            }
            for n in top {
                nodes.remove(&n);
                order.push(n);
            }
        }
        Some(order)
    }
}

fn read_file(path: &Path) -> Result<syn::File, GraphLoadError> {
    let text =
        std::fs::read_to_string(path).map_err(|e| GraphLoadError::Read(path.to_path_buf(), e))?;
    syn::parse_file(&text).map_err(|e| GraphLoadError::Parse(path.to_path_buf(), e))
}

/// The strongly connected components of more than one node (Tarjan's algorithm).
fn strongly_connected(edges: &BTreeSet<Edge>) -> Vec<BTreeSet<String>> {
    let nodes: BTreeSet<&str> = edges
        .iter()
        .flat_map(|e| [e.from.as_str(), e.to.as_str()])
        .collect();
    let index_of: HashMap<&str, usize> = nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let names: Vec<&str> = nodes.iter().copied().collect();
    let mut adj = vec![Vec::new(); names.len()];
    for e in edges {
        adj[index_of[e.from.as_str()]].push(index_of[e.to.as_str()]);
    }
    struct State {
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(v: usize, adj: &[Vec<usize>], s: &mut State) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in &adj[v] {
            match s.index[w] {
                None => {
                    visit(w, adj, s);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(i) if s.on_stack[w] => s.low[v] = s.low[v].min(i),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            s.out.push(component);
        }
    }
    let n = names.len();
    let mut state = State {
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if state.index[v].is_none() {
            visit(v, &adj, &mut state);
        }
    }
    state
        .out
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| c.into_iter().map(|i| names[i].to_string()).collect())
        .collect()
}

/// The crates of the workspace at `root`: (name, root file) for every `src/lib.rs` and
/// `src/main.rs` of the members listed in its `Cargo.toml` (`dir/*` globs included).
pub fn workspace_crates(root: &Path) -> Result<Vec<(String, PathBuf)>, GraphLoadError> {
    let path = root.join("Cargo.toml");
    let manifest = std::fs::read_to_string(&path).map_err(|e| GraphLoadError::Read(path, e))?;
    let start = manifest.find("members").ok_or(GraphLoadError::NoMembers)?;
    let list = &manifest[start..];
    let list = &list[list.find('[').ok_or(GraphLoadError::NoMembers)? + 1..];
    let list = &list[..list.find(']').ok_or(GraphLoadError::NoMembers)?];
    let mut dirs = Vec::new();
    for member in list.split(',').map(|m| m.trim().trim_matches('"')) {
        if member.is_empty() {
            continue;
        }
        if let Some(parent) = member.strip_suffix("/*") {
            let dir = root.join(parent);
            let entries = std::fs::read_dir(&dir).map_err(|e| GraphLoadError::Read(dir, e))?;
            let mut found: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.join("Cargo.toml").exists())
                .collect();
            found.sort();
            dirs.extend(found);
        } else {
            dirs.push(root.join(member));
        }
    }
    let mut out = Vec::new();
    for dir in dirs {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for (root_file, suffix) in [("lib.rs", ""), ("main.rs", " (binary)")] {
            let file = dir.join("src").join(root_file);
            if file.exists() {
                out.push((format!("{name}{suffix}"), file));
            }
        }
    }
    Ok(out)
}
