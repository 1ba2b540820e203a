//! The repository keeps no other project's code, binaries, build recipes or data
//! (ARCHITECTURE.md, "References"): every file of the tree, committed or about to be.

use std::path::Path;

#[test]
fn the_tree_holds_nothing_of_other_projects_but_facts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let files = provenance::tree_files(&root).unwrap();
    assert!(files.len() > 100, "the whole tree is read: {}", files.len());
    let found = provenance::check_tree(&root).unwrap();
    assert!(
        found.is_empty(),
        "\n{}",
        found
            .iter()
            .map(|f| f.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
}
