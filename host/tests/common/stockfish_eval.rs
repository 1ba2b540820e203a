//! Debian's Stockfish 15.1 as a referee: its `eval` command's table of each layer stack's PSQT
//! and positional terms, for a network loaded with `EvalFile`, and the same table made from
//! host's raw per-stack sums. Shared by host's tests of Stockfish's own network and the trainer's
//! tests of networks it trained in Stockfish's shape (`#[path]`-included there).

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Debian's Stockfish 15.1 (installed by `scripts/test.sh`).
pub const STOCKFISH: &str = "/usr/games/stockfish";

/// The size of Stockfish 15.1's network file.
pub const NET_BYTES: u64 = 47_001_499;

/// Stockfish 15.1's network `nn-ad9b42354671.nnue` in `dir`, exported there by the real binary
/// (its UCI command `export_net`) unless a whole one is there already.
pub fn exported_net(dir: &Path) -> PathBuf {
    let path = dir.join("nn-ad9b42354671.nnue");
    if std::fs::metadata(&path).map(|m| m.len()).ok() != Some(NET_BYTES) {
        let tmp = path.with_extension(format!("part{}", std::process::id()));
        let mut child = Command::new(STOCKFISH)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot start {STOCKFISH} (scripts/test.sh installs it): {e}")
            });
        let cmd = format!("uci\nexport_net {}\nquit\n", tmp.display());
        child
            .stdin
            .take()
            .unwrap()
            .write_all(cmd.as_bytes())
            .unwrap();
        assert!(child.wait().unwrap().success());
        assert_eq!(std::fs::metadata(&tmp).unwrap().len(), NET_BYTES);
        std::fs::rename(&tmp, &path).unwrap();
    }
    path
}

/// The bucket rows of Stockfish's `NNUE network contributions` table for each of `fens`, with
/// the network `net` loaded (`None`: its embedded one). Positions in check print no table:
/// leave them out.
pub fn stockfish_eval_tables(net: Option<&Path>, fens: &[String]) -> Vec<Vec<String>> {
    let mut script = String::from("uci\n");
    if let Some(net) = net {
        script += &format!("setoption name EvalFile value {}\n", net.display());
    }
    for fen in fens {
        script += &format!("position fen {fen}\neval\n");
    }
    script += "quit\n";
    let mut child = Command::new(STOCKFISH)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {STOCKFISH} (scripts/test.sh installs it): {e}"));
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let out = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap();
    assert!(
        !out.contains("ERROR"),
        "Stockfish refused the network: {out}"
    );
    let tables: Vec<Vec<String>> = out
        .split("NNUE network contributions")
        .skip(1)
        .map(|t| {
            t.lines()
                .filter(|l| l.starts_with("|  ") && l.as_bytes()[3].is_ascii_digit())
                .map(str::to_string)
                .collect()
        })
        .collect();
    assert_eq!(tables.len(), fens.len(), "one table per position");
    tables
}

/// The rows Stockfish 15.1 prints for raw per-stack sums `psqt` and `positional` (as
/// `host eval --stacks` prints them, before the `/ 16`), `used` being the stack the position
/// uses: each term `/ 16`, in pawns of 361 units with two decimals (`evaluate_nnue.cpp`'s
/// `format_cp_aligned_dot` and `trace`).
pub fn expected_table(psqt: &[i32], positional: &[i32], used: usize) -> Vec<String> {
    let cell = |v: i32| {
        let sign = match v.signum() {
            -1 => '-',
            1 => '+',
            _ => ' ',
        };
        format!("{sign}{:6.2}", f64::from(v.abs()) / 361.0)
    };
    (0..psqt.len())
        .map(|b| {
            let (vp, vl) = (psqt[b] / 16, positional[b] / 16);
            let marker = if b == used {
                " <-- this bucket is used"
            } else {
                ""
            };
            format!(
                "|  {b}         |  {}   |  {}   |  {}   |{marker}",
                cell(vp),
                cell(vl),
                cell(vp + vl)
            )
        })
        .collect()
}
