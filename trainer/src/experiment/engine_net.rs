//! A UCI engine's embedded network as a file: Stockfish's `export_net FILE` (Debian's
//! `stockfish` 15.1 writes `nn-ad9b42354671.nnue`, 47,001,499 bytes). A manifest names it as
//! `label_net = "export:ENGINE"`, so that a recipe labelled by Stockfish's network needs no
//! file beside the manifest: the data stage exports it into its own folder.

use anyhow::{Context, Result, bail};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The prefix of a `label_net` that names an engine instead of a file.
pub const EXPORT_PREFIX: &str = "export:";

/// The engine a `label_net` value names with [`EXPORT_PREFIX`], if it does.
pub fn export_engine(label_net: &str) -> Option<&str> {
    label_net
        .strip_prefix(EXPORT_PREFIX)
        .map(str::trim)
        .filter(|e| !e.is_empty())
}

/// Where `engine` runs from: a path (with a folder) as given, else the first match on `PATH`;
/// an error names it when it is in neither.
pub fn locate(engine: &str) -> Result<PathBuf> {
    let path = Path::new(engine);
    let found = if path.components().count() > 1 {
        path.is_file().then(|| path.to_path_buf())
    } else {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join(engine))
                .find(|p| p.is_file())
        })
    };
    found.with_context(|| format!("engine {engine} does not exist"))
}

/// Has `engine` write its network to `out` (`uci`, `export_net OUT`, `quit`) and checks that
/// the file is a network the host loads. Bounded: the engine reads three lines and exits.
pub fn export(engine: &str, out: &Path) -> Result<()> {
    let program = locate(engine)?;
    let mut child = Command::new(&program)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start {}", program.display()))?;
    let script = format!("uci\nexport_net {}\nquit\n", out.display());
    if let Some(mut stdin) = child.stdin.take() {
        // An engine that exits early closes its input; its status says the rest.
        let _ = stdin.write_all(script.as_bytes());
    }
    let status = child
        .wait_with_output()
        .with_context(|| format!("{} did not finish", program.display()))?;
    if !status.status.success() {
        bail!(
            "{} exited with {} while exporting its network: {}",
            program.display(),
            status.status,
            String::from_utf8_lossy(&status.stderr).trim()
        );
    }
    if !out.is_file() {
        bail!(
            "{} wrote no network to {} (does it know `export_net`?)",
            program.display(),
            out.display()
        );
    }
    nnue::check_network_file(out)
        .with_context(|| format!("the network {} exported", program.display()))?;
    Ok(())
}
