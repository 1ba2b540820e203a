//! Batch loader throughput: positions per second from a `.binpack`, through the plugins, for
//! `all` and `all+ph+pv`, with one thread (positions per second per core) and with two.
//!
//! The data is generated here: 200 000 positions of seeded random games, written as a binpack
//! (chained like real Stockfish data). Every position is encoded (no filter), shuffled through
//! a 65 536-position buffer, in batches of 16 384.
//!
//! `cargo bench -p trainer --bench loader`

use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use plugin_api::PluginRegistry;
use trainer::data::filter::FilterConfig;
use trainer::data::synthetic::random_games;
use trainer::data::{self, Format};
use trainer::loader::{BatchLoader, Input, LoaderConfig};

const POSITIONS: u64 = 200_000;

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("bench.binpack");
    let mut w = data::create_writer(&path, Format::Binpack).expect("create");
    for s in random_games(2024).take(POSITIONS as usize) {
        w.write(&s).expect("write");
    }
    w.finish().expect("finish");
    let registry = PluginRegistry::discover(None).expect("plugins next to the benchmark");
    let mut group = c.benchmark_group("loader");
    group.throughput(Throughput::Elements(POSITIONS));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(15));
    for spec in ["all", "all+ph+pv"] {
        let set = registry.feature_set(spec).expect("feature set");
        for threads in [1, 2] {
            group.bench_function(format!("{spec}/{threads}-thread"), |b| {
                b.iter(|| {
                    let loader = BatchLoader::new(
                        LoaderConfig {
                            inputs: vec![Input::new(path.clone(), None).expect("input")],
                            threads,
                            shuffle_buffer: 65_536,
                            filter: FilterConfig::default(),
                            ..LoaderConfig::default()
                        },
                        set.clone(),
                    )
                    .expect("loader");
                    let n: usize = loader.map(|b| b.expect("batch").len).sum();
                    assert_eq!(n as u64, POSITIONS);
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
