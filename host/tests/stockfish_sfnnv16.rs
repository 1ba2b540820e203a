//! Stockfish's networks of today (SFNNv16: HalfKAv2_hm, FullThreats and PP_3Wide) loaded,
//! evaluated and written by host, checked against Stockfish's own code at 762dd1da9: the
//! vectors of `host/tests/data/stockfish-sfnnv16/` (its README says how they were made), computed
//! on seeded random networks that Stockfish's own writer (`Network::save`) wrote.
//!
//! The networks (90 MB each) are not committed: `host net reference` writes each one again
//! (`nnue::stockfish::seeded_random_parts`) and the test checks that its SHA-256 is that of the
//! file Stockfish wrote. The vectors then hold for exactly the bytes Stockfish's code read.

mod common;
mod nnue_common;

use std::path::{Path, PathBuf};

use common::{assert_networks_refused, host, run_ok, tsv_rows};
use nnue_common::registry;
use sha2::{Digest, Sha256};

use host::nnue::{Network, SimdLevel, stockfish};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/stockfish-sfnnv16")
}

/// The rows of a vector file, comments dropped.
fn rows(file: &str) -> Vec<Vec<String>> {
    tsv_rows(&data().join(file))
}

/// The networks of `networks.tsv` (seed, scale), each written by `host net reference` into
/// `dir` and checked byte for byte (SHA-256 and length) against the file Stockfish's writer
/// made.
fn rebuilt_networks(dir: &Path) -> Vec<(u64, PathBuf)> {
    rows("networks.tsv")
        .iter()
        .map(|r| {
            let seed: u64 = r[0].parse().unwrap();
            let path = dir.join(format!("random-{seed}.nnue"));
            run_ok(
                host()
                    .args([
                        "net",
                        "reference",
                        "--seed",
                        &r[0],
                        "--scale",
                        &r[1],
                        "--out",
                    ])
                    .arg(&path),
            );
            let bytes = std::fs::read(&path).unwrap();
            assert_eq!(bytes.len().to_string(), r[2], "seed {seed}: length");
            assert_eq!(
                sha256(&bytes),
                r[3],
                "seed {seed}: not the bytes Stockfish wrote"
            );
            (seed, path)
        })
        .collect()
}

/// SHA-256 of `bytes`, in hex.
fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What one network was checked on: evaluations of positions (all stacks) and along games.
#[derive(Default)]
struct Checked {
    positions: usize,
    moves: usize,
    stacks: [usize; 8],
}

/// `host eval --stacks` of `net` on the positions of the vector file `positions`, and `host
/// eval --games` on the games of `games`, at every kernel version under test, equal Stockfish's
/// values there (FEN, stack, every stack's PSQT and positional sums, the evaluation; the
/// evaluation after the start and every move).
fn assert_evaluates_as_stockfish(dir: &Path, net: &Path, positions: &str, games: &str) -> Checked {
    let reference = rows(positions);
    assert!(reference.len() > 900, "{positions}");
    let fens = dir.join("positions.fen");
    let text: String = reference.iter().map(|r| format!("{}\n", r[0])).collect();
    std::fs::write(&fens, text).unwrap();
    let games_rows = rows(games);
    let game_file = dir.join("games.txt");
    let text: String = games_rows
        .iter()
        .map(|g| format!("{}\t{}\n", g[0], g[1]))
        .collect();
    std::fs::write(&game_file, text).unwrap();
    let mut checked = Checked::default();
    for level in SimdLevel::under_test().unwrap_or_else(|e| panic!("{e}")) {
        let out = run_ok(
            host()
                .args(["eval", "--stacks", "--simd", level.name(), "--net"])
                .arg(net)
                .arg("--fens")
                .arg(&fens),
        );
        let ours = String::from_utf8(out.stdout).unwrap();
        assert_eq!(ours.lines().count(), reference.len());
        for (o, r) in ours.lines().zip(&reference) {
            let o: Vec<&str> = o.split('\t').collect();
            // Reference: FEN, stack, psqt, positional, evaluation; ours: FEN, value, stack...
            assert_eq!(
                (o[0], o[1], o[2], o[3], o[4]),
                (&*r[0], &*r[4], &*r[1], &*r[2], &*r[3]),
                "{positions}, {level}"
            );
            checked.stacks[r[1].parse::<usize>().unwrap()] += 1;
            checked.positions += 1;
        }
        let out = run_ok(
            host()
                .args(["eval", "--simd", level.name(), "--net"])
                .arg(net)
                .arg("--games")
                .arg(&game_file),
        );
        let ours = String::from_utf8(out.stdout).unwrap();
        assert_eq!(ours.lines().count(), games_rows.len());
        for (o, g) in ours.lines().zip(&games_rows) {
            assert_eq!(o, g.join("\t"), "{games}, {level}");
            checked.moves += g[2].split(',').count();
        }
    }
    checked
}

/// `host net convert --format stockfish` of `net` gives its bytes back.
fn assert_converts_back(dir: &Path, net: &Path) {
    let back = dir.join("back.nnue");
    run_ok(
        host()
            .args(["net", "convert", "--format", "stockfish", "--in"])
            .arg(net)
            .arg("--out")
            .arg(&back),
    );
    assert!(std::fs::read(&back).unwrap() == std::fs::read(net).unwrap());
}

/// Host writes the bytes Stockfish's own writer wrote, reads them back (`net convert`) byte for
/// byte, and `host eval --stacks` equals Stockfish's code on every position, stack and kernel
/// version; `host eval --games` equals its incremental evaluation after every move.
#[test]
fn host_evaluates_stockfish_sfnnv16_networks_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let nets = rebuilt_networks(dir.path());
    assert_eq!(nets.len(), 3);
    let levels = SimdLevel::under_test()
        .unwrap_or_else(|e| panic!("{e}"))
        .len();
    let mut total = (0, 0);
    for (seed, net) in &nets {
        let checked = assert_evaluates_as_stockfish(
            dir.path(),
            net,
            &format!("positions-{seed}.tsv"),
            &format!("games-{seed}.tsv"),
        );
        assert!(
            checked.stacks.iter().all(|&n| n >= 70),
            "{:?}",
            checked.stacks
        );
        total = (total.0 + checked.positions, total.1 + checked.moves);
        assert_converts_back(dir.path(), net);
    }
    assert!(total.0 >= (2873 + 2 * 958) * levels, "{total:?}");
    assert!(total.1 >= 6000 * levels, "{total:?}");
}

/// Networks of some of today's blocks, as nnue-pytorch writes them for its other feature sets
/// (`--features HalfKAv2_hm^`, `Full_Threats+PP_3Wide`, ...): each written by `host net
/// reference --blocks` (its SHA-256 pinned in `subsets/networks.tsv`), read back byte for byte,
/// and evaluated on every position, stack, kernel version and move exactly as Stockfish's own
/// code evaluates its twin, the whole network with the other blocks' rows zeroed (Stockfish
/// reads only the whole set).
#[test]
fn networks_of_some_blocks_evaluate_as_stockfish_evaluates_their_twins() {
    let dir = tempfile::tempdir().unwrap();
    let subsets = rows("subsets/networks.tsv");
    assert_eq!(subsets.len(), 6, "every proper subset of the three blocks");
    for r in &subsets {
        let (blocks, seed, scale, sha) = (&r[0], &r[1], &r[2], &r[3]);
        let net = dir.path().join(format!("{blocks}.nnue"));
        run_ok(
            host()
                .args(["net", "reference", "--seed", seed, "--scale", scale])
                .args(["--blocks", &blocks.replace('+', ","), "--out"])
                .arg(&net),
        );
        assert_eq!(&sha256(&std::fs::read(&net).unwrap()), sha, "{blocks}");
        let info =
            String::from_utf8(run_ok(host().args(["net", "info", "--net"]).arg(&net)).stdout)
                .unwrap();
        assert!(info.contains(&format!("feature set\t{blocks} ")), "{info}");
        assert!(info.contains("no Stockfish binary loads it"), "{info}");
        let checked = assert_evaluates_as_stockfish(
            dir.path(),
            &net,
            &format!("subsets/{blocks}-positions.tsv"),
            &format!("subsets/{blocks}-games.tsv"),
        );
        assert!(
            checked.positions >= 958 && checked.moves >= 2000,
            "{blocks}"
        );
        assert_converts_back(dir.path(), &net);
    }
}

/// Broken SFNNv16 files: truncated or corrupted LEB128 streams, a wrong magic, a byte count
/// that overruns, an older version (HalfKP's; 15.1's with today's feature transformer, as the
/// threat networks of SFNNv10 to SFNNv15 were), trailing bytes: one line each, in bounded
/// memory, never a panic.
#[test]
fn broken_sfnnv16_files_are_refused_in_one_line() {
    let set = registry()
        .feature_set(stockfish::FEATURE_SET_SFNNV16)
        .unwrap();
    let own = stockfish::BlockSet::own(stockfish::Generation::Sfnnv16);
    let net = Network::from_parts(stockfish::seeded_random_parts(7, 4, &own, &set)).unwrap();
    let original = stockfish::encode(&net, "x").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let fens = dir.path().join("f.fen");
    std::fs::write(&fens, "8/8/8/8/8/8/8/K6k w - - 0 1\n").unwrap();
    // The biases' LEB128 block starts after the header (12 + 1) and the FT hash (4).
    let leb = 12 + 1 + 4;
    let magic_len = stockfish::leb128::MAGIC.len();
    let count_at = leb + magic_len;
    let count = u32::from_le_bytes(original[count_at..count_at + 4].try_into().unwrap());
    let patch = |at: usize, bytes: &[u8]| {
        let mut b = original.clone();
        b[at..at + bytes.len()].copy_from_slice(bytes);
        b
    };
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "truncated",
            original[..original.len() / 2].to_vec(),
            "truncated",
        ),
        (
            "trailing",
            [&original[..], &[0, 0]].concat(),
            "trailing bytes",
        ),
        ("magic", patch(leb, b"X"), "COMPRESSED_LEB128"),
        (
            "overrun",
            patch(count_at, &u32::MAX.to_le_bytes()),
            "runs past the end",
        ),
        (
            "short-count",
            patch(count_at, &(count - 1).to_le_bytes()),
            "LEB128-compressed biases",
        ),
        (
            "halfkp-version",
            patch(0, &stockfish::VERSION_HALFKP.to_le_bytes()),
            "Stockfish 12 or 13 network (HalfKP",
        ),
        (
            "sfnnv5-version",
            patch(0, &stockfish::VERSION.to_le_bytes()),
            "feature transformer's hash",
        ),
        (
            "sfnnv10",
            {
                let mut b = patch(0, &stockfish::VERSION.to_le_bytes());
                let ft = stockfish::FULL_THREATS_HASH ^ 2048;
                b[13..17].copy_from_slice(&ft.to_le_bytes());
                b
            },
            "FullThreats beside HalfKAv2_hm at L1 = 1024 (SFNNv10 to SFNNv15",
        ),
        (
            "stack-hash",
            patch(original.len() - 35_208 * 3, &[9, 9, 9, 9]),
            "layer stack 5",
        ),
    ];
    assert_networks_refused(dir.path(), &fens, cases);
}

/// A file whose blocks the loaded plugins cannot make is refused in one line that names its
/// feature transformer's hash and the feature set it stands for.
#[test]
fn a_file_of_blocks_no_plugin_provides_names_its_hash() {
    let dir = tempfile::tempdir().unwrap();
    let net = dir.path().join("threats.nnue");
    run_ok(
        host()
            .args(["net", "reference", "--seed", "2", "--scale", "4"])
            .args(["--blocks", "full_threats,pp_3wide", "--out"])
            .arg(&net),
    );
    // Only the king plugin (HalfKAv2_hm), as a user without the threats plugin has it.
    let plugins = dir.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    let exe = Path::new(env!("CARGO_BIN_EXE_host"));
    let king = ["", "deps"]
        .iter()
        .map(|d| exe.parent().unwrap().join(d).join("libnnue_plugin_king.so"))
        .find(|p| p.exists())
        .expect("the king plugin built beside host");
    std::fs::copy(king, plugins.join("libnnue_plugin_king.so")).unwrap();
    let out = host()
        .arg("--plugin-dir")
        .arg(&plugins)
        .args(["net", "info", "--net"])
        .arg(&net)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    let hash = stockfish::BlockSet::of_names(&["full_threats", "pp_3wide"])
        .unwrap()
        .hash(1024);
    assert!(
        err.contains(&format!(
            "hash 0x{hash:08X} names the feature set full_threats+pp_3wide"
        )),
        "{err}"
    );
    assert!(err.contains("full_threats"), "{err}");
}
