//! `host bench`: deterministic node counts with one thread, the `N nodes M nps` last line, the
//! network and thread options, and a clear failure for a network that cannot be loaded.

mod common;

use common::{host, run_ok, shared};

/// The node count of the last line, checking its `N nodes M nps` shape.
fn summary(stdout: &[u8]) -> u64 {
    let text = String::from_utf8_lossy(stdout);
    let last = text.lines().last().expect("bench printed nothing");
    let parts: Vec<&str> = last.split(' ').collect();
    assert_eq!(parts.len(), 4, "last line: {last}");
    assert_eq!((parts[1], parts[3]), ("nodes", "nps"), "last line: {last}");
    parts[2].parse::<u64>().expect("nps is an integer");
    parts[0].parse().expect("nodes is an integer")
}

#[test]
fn one_thread_node_counts_are_deterministic() {
    let a = summary(&run_ok(host().args(["bench", "--depth", "6"])).stdout);
    let b = summary(&run_ok(host().args(["bench", "--depth", "6", "--hash", "4"])).stdout);
    let c = summary(&run_ok(host().args(["bench", "--depth", "6"])).stdout);
    assert_eq!(a, c);
    assert!(a > 10_000, "{a}");
    // A different table size may change the count, but the run still completes.
    assert!(b > 10_000, "{b}");
}

#[test]
fn networks_and_threads() {
    let net = shared().join("nets/thesis/all.nn");
    let args = ["bench", "--depth", "5", "--net", net.to_str().unwrap()];
    let a = summary(&run_ok(host().args(args)).stdout);
    let b = summary(&run_ok(host().args(args)).stdout);
    assert_eq!(a, b);
    let t = summary(&run_ok(host().args(["bench", "--depth", "5", "--threads", "2"])).stdout);
    assert!(t > 0);
}

#[test]
fn a_bad_network_fails_with_one_line() {
    let out = host()
        .args(["bench", "--depth", "3", "--net", "/nonexistent/net.nn"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("/nonexistent/net.nn"), "{err}");
    let out = host().args(["bench", "--threads", "0"]).output().unwrap();
    assert!(!out.status.success());
}

#[test]
fn list_prints_the_positions_searched() {
    let out = run_ok(host().args(["bench", "--list"])).stdout;
    let fens: Vec<&str> = std::str::from_utf8(&out).unwrap().lines().collect();
    let searched = run_ok(host().args(["bench", "--depth", "1"])).stdout;
    let searched = String::from_utf8(searched).unwrap();
    let position_lines: Vec<&str> = searched
        .lines()
        .filter(|l| l.starts_with("position "))
        .collect();
    assert_eq!(fens.len(), position_lines.len());
    assert!(fens.len() > 40);
    for (fen, line) in fens.iter().zip(&position_lines) {
        assert!(line.ends_with(fen), "{line} does not search {fen}");
    }
}
