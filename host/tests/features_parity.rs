//! `host features` reproduces the thesis reference's feature indices for every published network
//! (`shared/parity/X.features.tsv`), through the real binary and the real plugins.

mod common;
use common::*;

#[test]
fn features_match_thesis_parity_files() {
    let mut checked = 0;
    for net in thesis_nets() {
        let stem = net.file_stem().unwrap().to_str().unwrap().to_string();
        let parity = shared().join(format!("parity/{stem}.features.tsv"));
        let spec = thesis_header_name(&net);
        let out = run_ok(
            host()
                .args(["features", "--spec", &spec, "--fens"])
                .arg(&parity),
        );
        let ours = String::from_utf8(out.stdout).unwrap();
        let expected = std::fs::read_to_string(&parity).unwrap();
        let expected: Vec<&str> = expected.lines().skip(1).collect();
        let ours: Vec<&str> = ours.lines().collect();
        assert_eq!(ours.len(), expected.len(), "{stem}: line count");
        for (o, e) in ours.iter().zip(&expected) {
            let o: Vec<&str> = o.split('\t').collect();
            let e: Vec<&str> = e.split('\t').collect();
            assert_eq!(o[0], e[0], "{stem}: FEN");
            assert_eq!(o[1], e[1], "{stem}: side to move of {}", e[0]);
            for (col, persp) in [(2, "White"), (3, "Black")] {
                assert_eq!(
                    index_set(o[col]),
                    index_set(e[col]),
                    "{stem} ({spec}): {persp} perspective of {}",
                    e[0]
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 13 * 40, "checked only {checked} positions");
}

/// `host features --spec SPEC` equals, line for line, `SPEC.tsv` in `tests/data/DIR`, computed
/// by the reference project's own code on `positions.fen` there (`lines` positions).
fn assert_matches_reference(dir: &str, specs: &[&str], lines: usize, reference: &str) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(dir);
    for spec in specs {
        let out = run_ok(
            host()
                .args(["features", "--spec", spec, "--fens"])
                .arg(dir.join("positions.fen")),
        );
        let ours = String::from_utf8(out.stdout).unwrap();
        let expected = std::fs::read_to_string(dir.join(format!("{spec}.tsv"))).unwrap();
        assert_eq!(ours.lines().count(), lines, "{spec}");
        assert_eq!(expected.lines().count(), lines, "{spec}");
        for (o, e) in ours.lines().zip(expected.lines()) {
            assert_eq!(o, e, "{spec}: ours (left) against {reference}'s (right)");
        }
    }
}

/// `host features` gives Stockfish's own HalfKAv2_hm (Stockfish 18), HalfKP (Stockfish 12),
/// FullThreats and PP_3Wide (Stockfish 762dd1da9, the blocks of SFNNv16) indices, line for line, on 62 positions that the blocks' code was never tuned on: castling,
/// en passant, promotions, kings on both wings, both sides to move
/// (`tests/data/stockfish-features`, computed by Stockfish's C++ code; README there).
#[test]
fn king_relative_blocks_match_stockfish() {
    assert_matches_reference(
        "stockfish-features",
        &["halfka_v2_hm", "halfkp", "full_threats", "pp_3wide"],
        62,
        "Stockfish",
    );
}

/// `host features` gives nnue-pytorch's own Full_Threats and PP_3Wide indices (its C++ data
/// loader of July 2026), line for line, on 344 positions the blocks were never tuned on:
/// crowded middlegames with every king-side combination, promoted pieces, en passant, checks
/// (`tests/data/nnue-pytorch-features`; README there).
#[test]
fn threat_blocks_match_nnue_pytorch() {
    assert_matches_reference(
        "nnue-pytorch-features",
        &["full_threats", "pp_3wide"],
        344,
        "nnue-pytorch",
    );
}
