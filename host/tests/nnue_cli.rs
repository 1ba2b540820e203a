//! `host eval` and `host net` through the real binary: parity with the thesis reference outputs
//! (`shared/parity/X.eval.tsv`) for every published network and every kernel version, lossless
//! conversion, and one-line errors for malformed files.

mod common;
use common::*;

use std::path::Path;
use std::process::Output;

fn stem(net: &Path) -> String {
    net.file_stem().unwrap().to_str().unwrap().to_string()
}

fn supported_levels() -> Vec<&'static str> {
    host::nnue::SimdLevel::under_test()
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|l| l.name())
        .collect()
}

/// Checks that `host eval` printed exactly the parity file's lines.
fn assert_parity(out: Output, parity: &Path, what: &str) {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ours = String::from_utf8(out.stdout).unwrap();
    let expected = std::fs::read_to_string(parity).unwrap();
    let expected: Vec<&str> = expected
        .lines()
        .filter(|l| !l.starts_with("fen\t"))
        .collect();
    let ours: Vec<&str> = ours.lines().collect();
    assert_eq!(ours.len(), expected.len(), "{what}: line count");
    for (o, e) in ours.iter().zip(&expected) {
        assert_eq!(o, e, "{what}");
    }
}

#[test]
fn eval_matches_thesis_parity_for_every_network_and_kernel() {
    let mut runs = 0;
    for net in thesis_nets() {
        let parity = shared().join(format!("parity/{}.eval.tsv", stem(&net)));
        for level in supported_levels() {
            let out = host()
                .args(["eval", "--simd", level, "--net"])
                .arg(&net)
                .arg("--fens")
                .arg(&parity)
                .output()
                .unwrap();
            assert_parity(out, &parity, &format!("{} with {level}", stem(&net)));
            runs += 1;
        }
        // The environment variable selects the kernels too.
        let out = host()
            .env("NNUE_SIMD", "scalar")
            .args(["eval", "--net"])
            .arg(&net)
            .arg("--fens")
            .arg(&parity)
            .output()
            .unwrap();
        assert_parity(
            out,
            &parity,
            &format!("{} with NNUE_SIMD=scalar", stem(&net)),
        );
    }
    assert!(runs >= 13 * 2, "only {runs} runs");
}

#[test]
fn convert_round_trips_every_thesis_network_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    for net in thesis_nets() {
        let own = dir.path().join(format!("{}.nnue", stem(&net)));
        let back = dir.path().join(format!("{}.nn", stem(&net)));
        run_ok(
            host()
                .args(["net", "convert", "--in"])
                .arg(&net)
                .arg("--out")
                .arg(&own),
        );
        assert!(std::fs::read(&own).unwrap().starts_with(b"NNUEFSET"));
        run_ok(
            host()
                .args(["net", "convert", "--format", "thesis", "--in"])
                .arg(&own)
                .arg("--out")
                .arg(&back),
        );
        assert!(
            std::fs::read(&back).unwrap() == std::fs::read(&net).unwrap(),
            "{}: thesis -> own -> thesis differs",
            stem(&net)
        );
        // The converted network evaluates identically.
        let parity = shared().join(format!("parity/{}.eval.tsv", stem(&net)));
        let out = host()
            .args(["eval", "--net"])
            .arg(&own)
            .arg("--fens")
            .arg(&parity)
            .output()
            .unwrap();
        assert_parity(out, &parity, &format!("{} in the own format", stem(&net)));
    }
}

#[test]
fn net_info_describes_both_formats() {
    let net = shared().join("nets/thesis/all+h+v.nn");
    let out = run_ok(host().args(["net", "info", "--net"]).arg(&net));
    let text = String::from_utf8(out.stdout).unwrap();
    for expected in [
        "format\tthesis",
        "feature set\thv+h+v (all+h+v)",
        "block\tall\tsize 768\toffset 0",
        "block\th\tsize 96\toffset 768",
        "block\tv\tsize 96\toffset 864",
        "N\t960",
        "L1\t512",
        "L2\t32",
        "quantization\tactivation clip 127, hidden shift 6, output shift 4",
    ] {
        assert!(text.contains(expected), "missing '{expected}' in:\n{text}");
    }
    let dir = tempfile::tempdir().unwrap();
    let own = dir.path().join("x.nnue");
    run_ok(
        host()
            .args(["net", "convert", "--in"])
            .arg(&net)
            .arg("--out")
            .arg(&own),
    );
    let out = run_ok(host().args(["net", "info", "--net"]).arg(&own));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("format\town (version 2, crc32 "), "{text}");
    assert!(text.contains("N\t960"), "{text}");
}

#[test]
fn random_networks_are_written_with_their_weight_types_and_searched() {
    let dir = tempfile::tempdir().unwrap();
    let net = dir.path().join("r.nnue");
    let spec = "halfka_v2_hm+full_threats+pp_3wide";
    run_ok(
        host()
            .args(["net", "random", "--spec", spec, "--l1", "64", "--l2", "8"])
            .args(["--i8-blocks", "full_threats,pp_3wide", "--out"])
            .arg(&net),
    );
    let text =
        String::from_utf8(run_ok(host().args(["net", "info", "--net"]).arg(&net)).stdout).unwrap();
    for expected in [
        "block\thalfka_v2_hm\tsize 22528\toffset 0",
        "weights i16",
        "block\tfull_threats\tsize 59808\toffset 22528",
        "weights i8",
        // 22,528 rows of 64 i16 and 64,368 rows of 64 i8.
        "W1 bytes\t7003136",
    ] {
        assert!(
            text.contains(expected),
            "missing '{expected}' in:
{text}"
        );
    }
    // Stockfish's shape of today keeps its i8 blocks without being told; `none` keeps none.
    let today = dir.path().join("today.nnue");
    let info_of = |extra: &[&str]| {
        run_ok(
            host()
                .args([
                    "net", "random", "--spec", spec, "--l1", "64", "--arch", "sfnnv16",
                ])
                .args(extra)
                .arg("--out")
                .arg(&today),
        );
        String::from_utf8(run_ok(host().args(["net", "info", "--net"]).arg(&today)).stdout).unwrap()
    };
    assert!(info_of(&[]).contains("W1 bytes\t7003136"));
    assert!(info_of(&["--i8-blocks", "none"]).contains(&format!("W1 bytes\t{}", 86_896 * 128)));
    let out = run_ok(host().args(["bench", "--depth", "3", "--net"]).arg(&net));
    let last = String::from_utf8(out.stdout).unwrap();
    assert!(last.trim_end().ends_with("nps"), "{last}");
    for (args, needle) in [
        (
            vec!["--spec", "all", "--i8-blocks", "h"],
            "'h' is not a block of the feature set 'all'",
        ),
        (vec!["--spec", "all", "--l1", "100"], "multiple of 32"),
        (
            vec!["--spec", "k*all", "--i8-blocks", "all"],
            "different weight types",
        ),
    ] {
        let out = host()
            .args(["net", "random"])
            .args(&args)
            .arg("--out")
            .arg(dir.path().join("bad.nnue"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && stderr.lines().count() == 1,
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
}

/// Runs `host ARGS` expecting a failure with one line on stderr containing `needle`.
fn assert_one_line_error(args: &[&str], file: &Path, needle: &str) {
    let out = host().args(args).arg(file).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} {file:?} succeeded");
    assert_eq!(stderr.lines().count(), 1, "not one line: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.starts_with(&format!("error: cannot load network {}: ", file.display())),
        "{stderr}"
    );
    assert!(stderr.contains(needle), "expected '{needle}' in: {stderr}");
}

#[test]
fn malformed_networks_fail_with_one_line_through_the_binary() {
    let dir = tempfile::tempdir().unwrap();
    let fens = shared().join("parity/all.eval.tsv");
    let thesis = std::fs::read(shared().join("nets/thesis/all.nn")).unwrap();
    let own_path = dir.path().join("good.nnue");
    run_ok(
        host()
            .args(["net", "convert", "--in"])
            .arg(shared().join("nets/thesis/all.nn"))
            .arg("--out")
            .arg(&own_path),
    );
    let own = std::fs::read(&own_path).unwrap();
    let mut corrupt = own.clone();
    corrupt[own.len() / 2] ^= 1;
    let mut version = own.clone();
    version[8] = 9;
    let mut unknown = b"hv+nosuchblock\0".to_vec();
    unknown.extend_from_slice(&thesis[3..]);
    let mut wrong_n = b"hv+h\0".to_vec();
    wrong_n.extend_from_slice(&thesis[3..]);
    let mut bad_l1 = thesis.clone();
    bad_l1[7..11].copy_from_slice(&500u32.to_le_bytes());
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "truncated.nn",
            thesis[..thesis.len() - 10].to_vec(),
            "truncated",
        ),
        (
            "trailing.nn",
            [thesis.clone(), vec![0; 3]].concat(),
            "3 trailing bytes",
        ),
        ("corrupt.nnue", corrupt, "checksum"),
        ("version.nnue", version, "format version 9 is not supported"),
        (
            "unknown.nn",
            unknown,
            "unknown feature block 'nosuchblock' (available: ",
        ),
        ("wrong-n.nn", wrong_n, "N = 768"),
        ("bad-l1.nn", bad_l1, "L1 = 500"),
        ("empty.nn", vec![], "not a network file"),
        (
            "text.nn",
            b"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\n".to_vec(),
            "not a network file",
        ),
    ];
    for (name, bytes, needle) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        assert_one_line_error(&["net", "info", "--net"], &path, needle);
        let fens_arg = fens.to_str().unwrap();
        assert_one_line_error(&["eval", "--fens", fens_arg, "--net"], &path, needle);
        let out_arg = dir.path().join("out.nnue");
        assert_one_line_error(
            &["net", "convert", "--out", out_arg.to_str().unwrap(), "--in"],
            &path,
            needle,
        );
    }
    // A missing file.
    let out = host()
        .args(["eval", "--fens"])
        .arg(&fens)
        .arg("--net")
        .arg(dir.path().join("missing.nn"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("cannot read network") && stderr.contains("missing.nn"),
        "{stderr}"
    );
}

/// Endless or huge inputs are refused from their first bytes (header first, then only what it
/// declares), in bounded memory: `/dev/zero`, a 3 GiB sparse file of zeros, and a valid header
/// followed by 3 GiB (read from the metadata, never from the disk).
#[test]
fn huge_and_endless_network_files_are_refused_from_their_header() {
    let dir = tempfile::tempdir().unwrap();
    let zeros = dir.path().join("zeros.nn");
    std::fs::File::create(&zeros)
        .unwrap()
        .set_len(3 << 30)
        .unwrap();
    let thesis = std::fs::read(shared().join("nets/thesis/all.nn")).unwrap();
    let padded = dir.path().join("padded.nn");
    std::fs::write(&padded, &thesis).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&padded)
        .unwrap()
        .set_len(3 << 30)
        .unwrap();
    for (file, needle) in [
        (Path::new("/dev/zero"), "not a network file"),
        (zeros.as_path(), "not a network file"),
        (padded.as_path(), "trailing bytes"),
    ] {
        let out = host_in_1gib()
            .args(["net", "info", "--net"])
            .arg(file)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{file:?} accepted");
        assert_eq!(stderr.lines().count(), 1, "{file:?}: {stderr}");
        assert!(stderr.contains(needle), "{file:?}: {stderr}");
    }
}

/// A FEN file without line breaks ends with one line at the length limit, not an allocation
/// failure.
#[test]
fn endless_fen_line_is_one_line_error() {
    for args in [
        vec!["features", "--spec", "all", "--fens", "/dev/zero"],
        vec!["eval", "--fens", "/dev/zero", "--net"],
    ] {
        let mut cmd = host_in_1gib();
        cmd.args(&args);
        if args[0] == "eval" {
            cmd.arg(shared().join("nets/thesis/all.nn"));
        }
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.contains("/dev/zero:1: ") && stderr.contains("line longer than"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn bad_kernel_choice_is_one_line() {
    let net = shared().join("nets/thesis/all.nn");
    let fens = shared().join("parity/all.eval.tsv");
    for (env, flag) in [(Some("sse9"), None), (None, Some("neon"))] {
        let mut cmd = host();
        if let Some(v) = env {
            cmd.env("NNUE_SIMD", v);
        }
        cmd.arg("eval");
        if let Some(f) = flag {
            cmd.args(["--simd", f]);
        }
        let out = cmd
            .arg("--net")
            .arg(&net)
            .arg("--fens")
            .arg(&fens)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains("unknown kernel version"), "{stderr}");
    }
}
