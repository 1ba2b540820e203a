//! `layering [CRATE_DIR ...]`: prints each level of each crate's module tree in an order where
//! every module imports only those below it (the workspace's crates when none is named), and
//! the import cycles where there is no such order. Exits non-zero if there is a cycle.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use layering::{CrateGraph, workspace_crates};

fn main() -> ExitCode {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let crates = if args.is_empty() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        match workspace_crates(&root) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        args.iter()
            .flat_map(|dir| {
                let name = dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                ["lib.rs", "main.rs"]
                    .into_iter()
                    .map(move |f| (name.clone(), dir.join("src").join(f)))
            })
            .filter(|(_, f)| f.exists())
            .collect()
    };
    let mut clean = true;
    for (name, root) in crates {
        let graph = match CrateGraph::load(&name, &root) {
            Ok(g) => g,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        };
        for level in graph.levels().keys() {
            match graph.order(level) {
                Some(order) => println!("{level}  {}", order.join(" > ")),
                None => println!("{level}  (cycle)"),
            }
        }
        for cycle in graph.cycles() {
            clean = false;
            eprintln!("{cycle}");
        }
    }
    if clean {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
