//! Bad plugins and bad input give one clear line, never a panic, and the host keeps working:
//! a panicking block, a file that is not a plugin, a plugin built against an older plugin-api,
//! two plugins claiming one name, unknown blocks, malformed specs and FENs.

mod common;
use common::*;

use std::path::{Path, PathBuf};

use chess_text::parse_fen;
use plugin_api::board_from_setup;
use plugin_api::{Color, PluginRegistry};

/// Where cargo put the cdylibs of this workspace (the test executable's own directory).
fn deps_dir() -> PathBuf {
    std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf()
}

fn dylib(stem: &str) -> PathBuf {
    let p = deps_dir().join(format!(
        "{}{stem}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    assert!(p.is_file(), "{} was not built", p.display());
    p
}

/// A plugin directory holding copies of the given libraries under the given file names.
fn plugin_dir(files: &[(&Path, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (src, name) in files {
        std::fs::copy(src, dir.path().join(name)).unwrap();
    }
    dir
}

fn so(name: &str) -> String {
    format!("libnnue_plugin_{name}{}", std::env::consts::DLL_SUFFIX)
}

/// Runs `host features` against `dir`, expecting failure with exactly one stderr line.
fn features_error(dir: &Path, spec: &str, fens: &Path) -> String {
    let out = host()
        .arg("--plugin-dir")
        .arg(dir)
        .args(["features", "--spec", spec, "--fens"])
        .arg(fens)
        .output()
        .unwrap();
    assert!(!out.status.success(), "expected failure for spec {spec}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        err.lines().count(),
        1,
        "expected one error line, got:\n{err}"
    );
    assert!(!err.contains("panicked at"), "the host panicked: {err}");
    err
}

fn start_fen_file(dir: &Path) -> PathBuf {
    let p = dir.join("start.fen");
    std::fs::write(
        &p,
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\n",
    )
    .unwrap();
    p
}

#[test]
fn panicking_block_is_one_line_and_the_registry_keeps_working() {
    let mut registry = PluginRegistry::discover(Some(&deps_dir())).unwrap();
    registry
        .load_file(&dylib("fixture_panicking_plugin"))
        .unwrap();
    let boom = registry.feature_set("all+boom").unwrap();
    let board = board_from_setup(
        &parse_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1").unwrap(),
    );
    for _ in 0..2 {
        let err = boom
            .active_set(&board, Color::White)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("'boom'") && err.contains("panicked: boom in active"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1);
    }
    // The other blocks still answer after the failures.
    let all = registry.feature_set("all").unwrap();
    assert_eq!(all.active_set(&board, Color::White).unwrap().len(), 32);

    let dir = plugin_dir(&[(&dylib("fixture_panicking_plugin"), &so("boom"))]);
    let fens = start_fen_file(dir.path());
    let err = features_error(dir.path(), "boom", &fens);
    assert!(err.contains("panicked: boom in active"), "{err}");
}

#[test]
fn a_file_that_is_not_a_plugin_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(so("text")), "not a library").unwrap();
    let fens = start_fen_file(dir.path());
    let err = features_error(dir.path(), "all", &fens);
    assert!(
        err.contains("cannot load plugin") && err.contains(&so("text")),
        "{err}"
    );

    // A real shared library without the plugin module.
    let libm = [
        "/lib/x86_64-linux-gnu/libm.so.6",
        "/usr/lib/x86_64-linux-gnu/libm.so.6",
        "/lib64/libm.so.6",
    ]
    .iter()
    .map(Path::new)
    .find(|p| p.is_file());
    if cfg!(target_os = "linux") {
        let libm = libm.expect("libm.so.6 not found on this Linux system");
        let dir = plugin_dir(&[(libm, &so("libm"))]);
        let err = features_error(dir.path(), "all", &fens);
        assert!(err.contains("is not an NNUE feature plugin"), "{err}");
    }
}

#[test]
fn a_plugin_built_against_another_plugin_api_is_refused() {
    let dir = plugin_dir(&[(&dylib("fixture_stale_plugin"), &so("stale"))]);
    let fens = start_fen_file(dir.path());
    let err = features_error(dir.path(), "stale", &fens);
    assert!(
        err.contains("was built against plugin-api")
            && err.contains("rebuild it")
            && err.contains(&so("stale")),
        "{err}"
    );
}

#[test]
fn two_plugins_claiming_one_block_are_refused() {
    let all = dylib("nnue_plugin_all");
    let dir = plugin_dir(&[(&all, &so("all")), (&all, &so("all_copy"))]);
    let fens = start_fen_file(dir.path());
    let err = features_error(dir.path(), "all", &fens);
    assert!(
        err.contains("feature block 'all' is provided by two plugins"),
        "{err}"
    );
}

#[test]
fn unknown_blocks_and_bad_specs_are_named() {
    let dir = plugin_dir(&[(&dylib("nnue_plugin_all"), &so("all"))]);
    let fens = start_fen_file(dir.path());
    let err = features_error(dir.path(), "all+nope", &fens);
    assert!(
        err.contains("unknown feature block 'nope' (available: all, p)"),
        "{err}"
    );
    let err = features_error(dir.path(), "all++all", &fens);
    assert!(err.contains("invalid feature set 'all++all'"), "{err}");
    let err = features_error(dir.path(), "all+hv", &fens);
    assert!(err.contains("appears twice"), "{err}");
    let err = features_error(dir.path(), "all", &dir.path().join("missing.fen"));
    assert!(
        err.contains("missing.fen") && err.contains("cannot open"),
        "{err}"
    );
}

#[test]
fn a_bad_fen_is_reported_with_its_line_and_earlier_output_is_kept() {
    let dir = plugin_dir(&[(&dylib("nnue_plugin_all"), &so("all"))]);
    let fens = dir.path().join("mixed.fen");
    std::fs::write(
        &fens,
        "fen\n4k3/8/8/8/8/8/8/4K3 w - - 0 1\n\n4k3/8/8/8/8/8/8/4K3 b - -\nnot/a/fen w - - 0 1\n4k3/8/8/8/8/8/8/4K3 w - - 0 1\n",
    )
    .unwrap();
    let out = host()
        .arg("--plugin-dir")
        .arg(dir.path())
        .args(["features", "--spec", "hv", "--fens"])
        .arg(&fens)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 2, "{stdout}");
    assert!(
        stdout
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("4k3/8/8/8/8/8/8/4K3 b - -\tb\t")
    );
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("mixed.fen:5: invalid FEN 'not/a/fen w - - 0 1'"),
        "{err}"
    );
}
