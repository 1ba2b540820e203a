//! The workspace's crates have no import cycles at any level of their module trees, and the
//! plugin-facing ABI of `plugin-api` depends on nothing of the host's side of it.

use std::path::{Path, PathBuf};

use layering::{CrateGraph, workspace_crates};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn graph(name: &str) -> CrateGraph {
    let (n, root) = workspace_crates(&workspace())
        .unwrap()
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no crate {name}"));
    CrateGraph::load(&n, &root).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn no_crate_of_the_workspace_has_an_import_cycle() {
    let crates = workspace_crates(&workspace()).unwrap();
    assert!(crates.len() > 10, "{crates:?}");
    let mut cycles = Vec::new();
    for (name, root) in crates {
        let g = CrateGraph::load(&name, &root).unwrap_or_else(|e| panic!("{e}"));
        cycles.extend(g.cycles().into_iter().map(|c| c.to_string()));
    }
    assert!(cycles.is_empty(), "\n{}", cycles.join("\n"));
}

#[test]
fn the_plugin_abi_reaches_nothing_of_the_hosts_side() {
    // What a plugin compiles against (the ABI types, the block interface and its geometry, the
    // root module, conversions and test helpers) against what only the host uses: loading
    // plugins, parsing specs, composing feature sets, the conformance kit.
    let abi = [
        "types",
        "decompose",
        "block",
        "geometry",
        "module",
        "convert",
        "testing",
    ];
    let host_side = [
        "registry",
        "spec",
        "feature_set",
        "term_geometry",
        "conformance",
    ];
    let g = graph("plugin-api");
    for module in abi {
        let reached = g.reaches(module);
        let wrong: Vec<&&str> = host_side.iter().filter(|h| reached.contains(**h)).collect();
        assert!(
            wrong.is_empty(),
            "plugin-api's {module} reaches the host's side: {wrong:?} (all it reaches: {reached:?})"
        );
    }
}

#[test]
fn a_cycle_is_found_and_named() {
    // Two modules that import each other, one through a re-export of the root.
    let dir = std::env::temp_dir().join(format!("layering-test-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("lib.rs"),
        "mod a;\nmod b;\nmod c;\npub use b::Bee;\n",
    )
    .unwrap();
    std::fs::write(
        src.join("a.rs"),
        "pub fn f() -> crate::Bee { crate::Bee }\n",
    )
    .unwrap();
    std::fs::write(
        src.join("b.rs"),
        "pub struct Bee;\npub fn g() { super::a::f(); }\n#[cfg(test)]\nmod tests { use crate::c::C; }\n",
    )
    .unwrap();
    std::fs::write(src.join("c.rs"), "pub struct C;\nuse super::a;\n").unwrap();
    let g = CrateGraph::load("demo", &src.join("lib.rs")).unwrap();
    let cycles = g.cycles();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    let text = cycles[0].to_string();
    assert!(text.contains("a -> b") && text.contains("b -> a"), "{text}");
    assert!(!text.contains("-> c"), "test code counted: {text}");
    assert!(g.order("demo::").is_none());
}
