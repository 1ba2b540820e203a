//! Cost per move of `delta` for the mobility blocks (`delta/mb`, `delta/mc`), against
//! - `delta/all`: the `all` block's `delta` (the baseline feature set),
//! - `delta/full_diff_mb`, `delta/full_diff_mc`: plugin-api's default `full_diff_delta`
//!   (`active` before and after, sorted, diffed),
//! - `delta/recompute_mc`: `mc`'s delta from the unions of both whole boards, without sorting or
//!   allocation (what the incremental part saves over a tight recomputation),
//!
//! and, for scale, `active/mb`, `active/mc`: one `active` call per perspective and position (a
//! refresh).
//!
//! The moves are a fixed sequence: seeded random games from a few start positions. Each
//! benchmark runs the whole sequence once per iteration; criterion's throughput line gives moves
//! per second, and ns per move is the iteration time divided by the number of moves (printed at
//! start, with the average number of indices each block's delta emits per move).
//!
//! `cargo bench -p nnue-plugin-mobility --bench delta -- --warm-up-time 1 --measurement-time 3`

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use nnue_plugin_all::All;
use nnue_plugin_mobility::rules::{Placement, type_parts, unions};
use nnue_plugin_mobility::{CAP, Mb, Mc, mc_index};
use plugin_api::testing::{active_pass, delta_bench_moves, delta_pass};
use plugin_api::{Board, Color, FeatureBlock, IndexList, Move, MoveDelta, full_diff_delta};

/// `mc`'s delta from the unions of both whole boards (no sorting, no allocation): what the
/// incremental `delta` saves over a plain recomputation done well.
fn recompute_mc(board: &Board, mv: &Move, out: &mut MoveDelta<'_>) {
    let before = unions(&Placement::of(board));
    let after = unions(&Placement::of(&board.play(mv)));
    for t in 0..12 {
        let (color, role) = type_parts(t);
        let nb = before[t].count_ones().min(CAP[role]);
        let na = after[t].count_ones().min(CAP[role]);
        if nb != na {
            for p in Color::ALL {
                out.removed[p.index()].push(mc_index(p, color, role, nb));
                out.added[p.index()].push(mc_index(p, color, role, na));
            }
        }
    }
}

fn bench_delta(c: &mut Criterion) {
    let seq = delta_bench_moves();
    eprintln!("delta benchmark: {} moves per iteration", seq.len());
    let mut bufs: [Vec<u32>; 4] = std::array::from_fn(|_| vec![0; 768]);
    let mut md = MoveDelta::over(&mut bufs);
    // How much each block's delta says per move (White's perspective; Black's is alike).
    for (name, f) in [
        ("all", All::delta as fn(&Board, &Move, &mut MoveDelta<'_>)),
        ("mb", Mb::delta),
        ("mc", Mc::delta),
    ] {
        let (n, _) = delta_pass(&seq, &mut md, &f);
        eprintln!(
            "{name}: {:.1} indices (added + removed) per move and perspective",
            n as f64 / seq.len() as f64
        );
    }
    let mut group = c.benchmark_group("delta");
    group.throughput(Throughput::Elements(seq.len() as u64));
    let mut run = |name: &str, f: &dyn Fn(&Board, &Move, &mut MoveDelta<'_>)| {
        group.bench_function(name, |b| b.iter(|| delta_pass(&seq, &mut md, f)));
    };
    run("all", &All::delta);
    run("mb", &Mb::delta);
    run("mc", &Mc::delta);
    run("recompute_mc", &recompute_mc);
    run("full_diff_mb", &|b, m, o| {
        full_diff_delta(b, m, o, Mb::active, Mb::MAX_ACTIVE as usize)
    });
    run("full_diff_mc", &|b, m, o| {
        full_diff_delta(b, m, o, Mc::active, Mc::MAX_ACTIVE as usize)
    });
    group.finish();

    // For scale: one full `active` (both perspectives) per move, what a refresh costs.
    let mut group = c.benchmark_group("active");
    group.throughput(Throughput::Elements(seq.len() as u64));
    let mut buf = vec![0u32; 768];
    let mut run = |name: &str, f: &dyn Fn(&Board, Color, &mut IndexList<'_>)| {
        group.bench_function(name, |b| b.iter(|| active_pass(&seq, &mut buf, f)));
    };
    run("mb", &Mb::active);
    run("mc", &Mc::active);
    group.finish();
}

criterion_group!(benches, bench_delta);
criterion_main!(benches);
