//! UCI conformance driven by a real client: python-chess (pinned in `scripts/test.sh`, installed
//! in the repository's `.venv/`) runs `uci_client.py` against the `host` binary. The test fails,
//! with instructions, when the virtual environment is missing: it is never silently skipped.

mod common;

use std::path::Path;
use std::process::Command;

#[test]
fn python_chess_drives_the_engine() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let python = root.join(".venv/bin/python");
    assert!(
        python.is_file(),
        "{} is missing: run scripts/test.sh (it creates .venv/ with python-chess), or \
         `python3 -m venv .venv && .venv/bin/pip install chess==1.11.2` in the repository",
        python.display()
    );
    let probe = Command::new(&python)
        .args(["-c", "import chess.engine"])
        .output()
        .expect("cannot run the virtual environment's python");
    assert!(
        probe.status.success(),
        "python-chess is not installed in {}: run scripts/test.sh ({})",
        python.display(),
        String::from_utf8_lossy(&probe.stderr)
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/uci_client.py");
    let net = common::shared().join("nets/thesis/all.nn");
    let out = Command::new(&python)
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_host"))
        .arg(&net)
        .output()
        .expect("cannot run uci_client.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "uci_client.py failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    assert!(stdout.contains("games: ok"), "{stdout}\n{stderr}");
}
