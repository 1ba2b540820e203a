//! Cost per move of the threat blocks' incremental `delta` against plugin-api's generic
//! `full_diff_delta` (`active` on both boards for both perspectives, sorted, diffed), the
//! fallback every block without its own `delta` gets:
//!
//! - `delta/full_threats`, `delta/full_diff_full_threats`;
//! - `delta/pp_3wide`, `delta/full_diff_pp_3wide`;
//!
//! and, for scale, `active/full_threats`, `active/pp_3wide`: one `active` call per perspective
//! and position (a refresh). The moves are plugin-api's fixed `delta_bench_moves` (seeded random
//! games from four openings rich in sliders, 1,030 moves); each benchmark plays the whole sequence
//! once per iteration, so criterion's throughput line gives moves per second. The average number
//! of indices per move and perspective is printed at start.
//!
//! `cargo bench -p nnue-plugin-threats --bench threat_delta -- --warm-up-time 1 --measurement-time 3`

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use nnue_plugin_threats::{FullThreats, PawnPairs3Wide};
use plugin_api::testing::{active_pass, delta_bench_moves, delta_pass};
use plugin_api::{Board, Color, FeatureBlock, IndexList, Move, MoveDelta, full_diff_delta};

type DeltaFn = fn(&Board, &Move, &mut MoveDelta<'_>);

fn bench_delta(c: &mut Criterion) {
    let seq = delta_bench_moves();
    eprintln!("threat delta benchmark: {} moves per iteration", seq.len());
    let mut bufs: [Vec<u32>; 4] = std::array::from_fn(|_| vec![0; 512]);
    let mut md = MoveDelta::over(&mut bufs);
    for (name, f) in [
        ("full_threats", FullThreats::delta as DeltaFn),
        ("pp_3wide", PawnPairs3Wide::delta),
    ] {
        let (n, refreshes) = delta_pass(&seq, &mut md, &f);
        eprintln!(
            "{name}: {:.1} indices (added + removed) per move and perspective, {refreshes} refreshes",
            n as f64 / seq.len() as f64
        );
    }
    let mut group = c.benchmark_group("delta");
    group.throughput(Throughput::Elements(seq.len() as u64));
    let mut run = |name: &str, f: &dyn Fn(&Board, &Move, &mut MoveDelta<'_>)| {
        group.bench_function(name, |b| b.iter(|| delta_pass(&seq, &mut md, f)));
    };
    run("full_threats", &FullThreats::delta);
    run("full_diff_full_threats", &|b, m, o| {
        full_diff_delta(
            b,
            m,
            o,
            FullThreats::active,
            FullThreats::MAX_ACTIVE as usize,
        )
    });
    run("pp_3wide", &PawnPairs3Wide::delta);
    run("full_diff_pp_3wide", &|b, m, o| {
        full_diff_delta(
            b,
            m,
            o,
            PawnPairs3Wide::active,
            PawnPairs3Wide::MAX_ACTIVE as usize,
        )
    });
    group.finish();

    let mut group = c.benchmark_group("active");
    group.throughput(Throughput::Elements(seq.len() as u64));
    let mut buf = vec![0u32; 512];
    let mut run = |name: &str, f: &dyn Fn(&Board, Color, &mut IndexList<'_>)| {
        group.bench_function(name, |b| b.iter(|| active_pass(&seq, &mut buf, f)));
    };
    run("full_threats", &FullThreats::active);
    run("pp_3wide", &PawnPairs3Wide::active);
    group.finish();
}

criterion_group!(benches, bench_delta);
criterion_main!(benches);
