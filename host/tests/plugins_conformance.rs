//! Every block of every plugin found by the real loader passes the conformance kit through the
//! ABI (the same function pointers the engine calls), so a plugin dropped into `plugins/` is
//! checked without writing a test for it; and so do products composed by the host.

use plugin_api::PluginRegistry;
use plugin_api::conformance::{Settings, check_blocks, check_feature_sets};

fn registry() -> PluginRegistry {
    let dir = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    PluginRegistry::discover(Some(&dir)).unwrap()
}

#[test]
fn every_loaded_block_conforms() {
    let registry = registry();
    let names = registry.names();
    for expected in [
        "all",
        "p",
        "h",
        "v",
        "d1",
        "d2",
        "ph",
        "pv",
        "pd1",
        "pd2",
        "mb",
        "mc",
        "k",
        "kr",
        "halfka_v2_hm",
        "halfkp",
        "full_threats",
        "pp_3wide",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "block {expected} not loaded: {names:?}"
        );
    }
    let descriptors: Vec<_> = registry.blocks().map(|b| b.descriptor).collect();
    let settings = Settings {
        plies: 3000,
        seed: 0xc0ffee,
        ..Settings::default()
    };
    let report = check_blocks(&descriptors, settings).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.plies, 3000);
    assert!(report.covers_king_events(), "{report:?}");
    // The king-relative blocks asked for refreshes from both perspectives.
    assert!(
        report.refreshes_by_perspective.iter().all(|&r| r > 100),
        "{report:?}"
    );
}

#[test]
fn products_conform_and_refresh_only_on_own_king_moves() {
    let registry = registry();
    // The last one refreshes whenever k*h changes, the others only on own king moves.
    let specs = [
        "k*all",
        "k*p",
        "k*all+all",
        "all+kr",
        "halfka_v2_hm+k*p+mb",
        "k*h*v",
    ];
    let sets: Vec<_> = specs
        .iter()
        .map(|s| registry.feature_set(s).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    assert_eq!(sets[0].size(), 64 * 768);
    assert_eq!(sets[1].size(), 64 * 640);
    let size = |name: &str| registry.block(name).unwrap().descriptor.size;
    assert_eq!(sets[5].size(), 64 * size("h") * size("v"));
    let settings = Settings {
        plies: 3000,
        seed: 0xbadc0de,
        ..Settings::default()
    };
    let report = check_feature_sets(&sets, settings).unwrap_or_else(|e| panic!("{e}"));
    assert!(report.covers_king_events(), "{report:?}");
    let king_only = check_feature_sets(&sets[..5], settings).unwrap();
    // Each of those five refreshes a perspective exactly when its own king moves.
    for c in 0..2 {
        assert_eq!(
            king_only.refreshes_by_perspective[c],
            5 * king_only.king_moves[c],
            "{king_only:?}"
        );
    }
}

#[test]
fn threat_sets_conform_and_refresh_only_when_the_king_changes_side() {
    use plugin_api::RefreshTrigger;
    let registry = registry();
    let set = |s: &str| registry.feature_set(s).unwrap_or_else(|e| panic!("{e}"));
    let side_only = [set("all+full_threats+pp_3wide"), set("k+pp_3wide")];
    for s in &side_only {
        assert_eq!(
            s.refresh_trigger(),
            RefreshTrigger::OwnKingSide,
            "{}",
            s.name()
        );
    }
    let stockfish = set("halfka_v2_hm+full_threats+pp_3wide");
    assert_eq!(stockfish.refresh_trigger(), RefreshTrigger::OwnKingMove);
    assert_eq!(stockfish.size(), 22_528 + 59_808 + 4_560);
    let settings = Settings {
        plies: 3000,
        seed: 0x7468_7265,
        ..Settings::default()
    };
    let report = check_feature_sets(&side_only, settings).unwrap_or_else(|e| panic!("{e}"));
    assert!(report.covers_king_events(), "{report:?}");
    // Each set refreshes a perspective exactly when its own king crosses the d/e line.
    for c in 0..2 {
        assert_eq!(
            report.refreshes_by_perspective[c],
            2 * report.mirror_crossings[c],
            "{report:?}"
        );
    }
    check_feature_sets(&[stockfish], settings).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn a_product_too_large_is_a_one_line_error() {
    let err = registry()
        .feature_set("halfkp*halfkp*k")
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "invalid feature set 'halfkp*halfkp*k': the size of 'halfkp*halfkp*k' does not fit in 32 bits"
    );
}

/// The piece-square blocks that refresh on own king moves get a piece table, from which the
/// evaluator makes their deltas (and which the tests above hold to `active`); others get none.
#[test]
fn piece_square_blocks_have_piece_tables() {
    let registry = registry();
    for (spec, expected) in [
        ("halfka_v2_hm", true),
        ("halfkp", true),
        ("kr", true),
        ("all", false),
        ("k*all", false),
        ("full_threats", false),
        ("mb", false),
    ] {
        let set = registry.feature_set(spec).unwrap_or_else(|e| panic!("{e}"));
        let table = set.terms()[0].piece_table();
        assert_eq!(table.is_some(), expected, "{spec}");
    }
}
