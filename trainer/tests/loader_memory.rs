//! The loader's memory does not grow with the amount of data read. Alone in its test binary, so
//! no other test's allocations disturb the process's resident size.

use std::path::Path;

use plugin_api::PluginRegistry;
use trainer::data::filter::FilterConfig;
use trainer::data::synthetic::random_games;
use trainer::data::{self, Format, Sample};
use trainer::loader::{BatchLoader, Input, LoaderConfig};

fn write(path: &Path, format: Format, samples: &[Sample]) {
    let mut w = data::create_writer(path, format).unwrap();
    for s in samples {
        w.write(s).unwrap();
    }
    w.finish().unwrap();
}

/// Resident memory of this process in kB.
fn rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

#[test]
fn memory_stays_bounded_on_a_long_cycling_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.binpack");
    let samples: Vec<Sample> = random_games(21).take(20_000).collect();
    write(&path, Format::Binpack, &samples);
    drop(samples);
    let plugins = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let set = PluginRegistry::discover(Some(&plugins))
        .unwrap()
        .feature_set("all+ph+pv")
        .unwrap();
    let mut loader = BatchLoader::new(
        LoaderConfig {
            inputs: vec![Input::new(path, None).unwrap()],
            batch_size: 4096,
            threads: 2,
            shuffle_buffer: 50_000,
            epochs: None,
            unit_bytes: 16 << 10,
            filter: FilterConfig::default(),
            ..LoaderConfig::default()
        },
        set,
    )
    .unwrap();
    // Warm up: the shuffle buffer fills, the queue fills.
    let _ = loader.by_ref().take(30).count();
    let before = rss();
    // 300 batches: 1.2M positions, 60 passes over the file.
    let n = loader.by_ref().take(300).count();
    let after = rss();
    assert_eq!(n, 300);
    assert!(loader.report().epoch > 50);
    assert!(
        after < before + 20_000,
        "resident memory grew from {before} kB to {after} kB"
    );
}
