//! Every block of every plugin found by the real loader passes the conformance kit through the
//! ABI (the same function pointers the engine calls), so a plugin dropped into `plugins/` is
//! checked without writing a test for it.

use plugin_api::PluginRegistry;
use plugin_api::conformance::{Settings, check_blocks};

#[test]
fn every_loaded_block_conforms() {
    let dir = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let registry = PluginRegistry::discover(Some(&dir)).unwrap();
    let names = registry.names();
    for expected in [
        "all", "h", "v", "d1", "d2", "ph", "pv", "pd1", "pd2", "mb", "mc",
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
}
