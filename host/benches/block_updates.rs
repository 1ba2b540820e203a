//! Feature-update cost per move for every block: a direct (inlinable) call of the block's Rust
//! code, a call through the panic-catching `extern "C"` shim of the linked crate, and a call
//! through the plugin loaded at run time; plus whole feature sets as the engine uses them
//! (`FeatureSet::delta`, one boundary call per block), so MB/MC can be compared with ALL.
//!
//! Workload: a fixed sequence of (position, move) pairs from seeded random games started from
//! the conformance kit's positions. Throughput is moves per second.
//!
//! `cargo bench -p host --bench block_updates`

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use plugin_api::conformance::START_FENS;
use plugin_api::{
    BlockDescriptor, Board, FeatureBlock, Move, MoveDelta, PluginRegistry, board_from_position,
    move_from_shakmaty,
};
use rand::SeedableRng;
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Position};
use std::hint::black_box;

fn workload() -> Vec<(Board, Move)> {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut out = Vec::new();
    for game in 0..60 {
        let fen: Fen = START_FENS[game % START_FENS.len()].parse().unwrap();
        let mut pos: Chess = fen.into_position(CastlingMode::Standard).unwrap();
        for _ in 0..80 {
            let moves = pos.legal_moves();
            let Some(m) = moves.choose(&mut rng).copied() else {
                break;
            };
            out.push((board_from_position(&pos), move_from_shakmaty(&m).unwrap()));
            pos.play_unchecked(m);
        }
    }
    out
}

struct Buffers {
    lists: [Vec<u32>; 4],
}

impl Buffers {
    fn new() -> Self {
        Buffers {
            lists: std::array::from_fn(|_| vec![0; 1024]),
        }
    }

    fn delta(&mut self) -> MoveDelta<'_> {
        MoveDelta::over(&mut self.lists)
    }
}

fn bench_block<B: FeatureBlock>(
    c: &mut Criterion,
    registry: &PluginRegistry,
    work: &[(Board, Move)],
) {
    let mut group = c.benchmark_group(format!("delta/{}", B::NAME));
    group.throughput(Throughput::Elements(work.len() as u64));
    let mut buffers = Buffers::new();
    group.bench_function("direct", |b| {
        b.iter(|| {
            for (board, mv) in work {
                let mut md = buffers.delta();
                B::delta(black_box(board), black_box(mv), &mut md);
                black_box(md.added[0].len());
            }
        })
    });
    let linked = BlockDescriptor::of::<B>();
    let loaded = registry.block(B::NAME).unwrap().descriptor;
    for (label, desc) in [("linked_shim", linked), ("loaded_plugin", loaded)] {
        group.bench_function(label, |b| {
            b.iter(|| {
                for (board, mv) in work {
                    let mut md = buffers.delta();
                    let r = (desc.delta)(black_box(board), black_box(mv), &mut md);
                    black_box((r.is_ok(), md.added[0].len()));
                }
            })
        });
    }
    group.finish();
}

fn bench_sets(c: &mut Criterion, registry: &PluginRegistry, work: &[(Board, Move)]) {
    let mut group = c.benchmark_group("feature_set_delta");
    group.throughput(Throughput::Elements(work.len() as u64));
    for spec in ["all", "all+h+v", "all+ph+pv", "all+mb", "all+mc"] {
        let set = registry.feature_set(spec).unwrap();
        let mut buf = set.delta_buffer();
        group.bench_function(spec, |b| {
            b.iter(|| {
                for (board, mv) in work {
                    set.delta(black_box(board), black_box(mv), &mut buf)
                        .unwrap();
                    black_box(buf.added(plugin_api::Color::White).len());
                }
            })
        });
    }
    group.finish();
}

fn benches(c: &mut Criterion) {
    let work = workload();
    let dir = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let registry = PluginRegistry::discover(Some(&dir)).unwrap();
    bench_block::<nnue_plugin_all::All>(c, &registry, &work);
    bench_block::<nnue_plugin_axes::H>(c, &registry, &work);
    bench_block::<nnue_plugin_axes::V>(c, &registry, &work);
    bench_block::<nnue_plugin_axes::D1>(c, &registry, &work);
    bench_block::<nnue_plugin_axes::D2>(c, &registry, &work);
    bench_block::<nnue_plugin_pairwise::Ph>(c, &registry, &work);
    bench_block::<nnue_plugin_pairwise::Pv>(c, &registry, &work);
    bench_block::<nnue_plugin_pairwise::Pd1>(c, &registry, &work);
    bench_block::<nnue_plugin_pairwise::Pd2>(c, &registry, &work);
    bench_block::<nnue_plugin_mobility::Mb>(c, &registry, &work);
    bench_block::<nnue_plugin_mobility::Mc>(c, &registry, &work);
    bench_sets(c, &registry, &work);
}

criterion_group! {
    name = group;
    config = Criterion::default().warm_up_time(std::time::Duration::from_millis(500)).measurement_time(std::time::Duration::from_secs(2)).sample_size(20);
    targets = benches
}
criterion_main!(group);
