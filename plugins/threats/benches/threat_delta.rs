//! Cost per move of the threat blocks' incremental `delta` against plugin-api's generic
//! `full_diff_delta` (`active` on both boards for both perspectives, sorted, diffed), the
//! fallback every block without its own `delta` gets:
//!
//! - `delta/full_threats`, `delta/full_diff_full_threats`;
//! - `delta/pp_3wide`, `delta/full_diff_pp_3wide`;
//!
//! and, for scale, `active/full_threats`, `active/pp_3wide`: one `active` call per perspective
//! and position (a refresh). The moves are a fixed sequence of seeded random games from a few
//! start positions rich in sliders (about 1000 moves); each benchmark plays the whole sequence
//! once per iteration, so criterion's throughput line gives moves per second. The average number
//! of indices per move and perspective is printed at start.
//!
//! `cargo bench -p nnue-plugin-threats --bench threat_delta -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use nnue_plugin_threats::{FullThreats, PawnPairs3Wide};
use plugin_api::{
    Board, Color, FeatureBlock, IndexList, Move, MoveDelta, board_from_position, full_diff_delta,
    move_from_shakmaty,
};
use rand::SeedableRng;
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Position};

const STARTS: &[&str] = &[
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R w KQ - 0 8",
    "2r2rk1/1bqnbppp/p2ppn2/1p6/3NP3/1BN1BP2/PPPQ2PP/2KR3R w - - 0 13",
];

/// Board and move before every ply of a few seeded random games.
fn sequence() -> Vec<(Board, Move)> {
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    let mut out = Vec::new();
    for _round in 0..3 {
        for fen in STARTS {
            let mut pos: Chess = fen
                .parse::<Fen>()
                .unwrap()
                .into_position(CastlingMode::Standard)
                .unwrap();
            for _ in 0..90 {
                let moves = pos.legal_moves();
                let Some(&m) = moves.choose(&mut rng) else {
                    break;
                };
                out.push((board_from_position(&pos), move_from_shakmaty(&m).unwrap()));
                pos = pos.play(m).unwrap();
            }
        }
    }
    out
}

type DeltaFn = fn(&Board, &Move, &mut MoveDelta<'_>);

fn bench_delta(c: &mut Criterion) {
    let seq = sequence();
    eprintln!("threat delta benchmark: {} moves per iteration", seq.len());
    let mut bufs = vec![vec![0u32; 512]; 4];
    let [a0, a1, r0, r1] = &mut bufs[..] else {
        unreachable!()
    };
    let mut md = MoveDelta {
        added: [IndexList::new(a0), IndexList::new(a1)],
        removed: [IndexList::new(r0), IndexList::new(r1)],
        refresh: [false; 2],
    };
    for (name, f) in [
        ("full_threats", FullThreats::delta as DeltaFn),
        ("pp_3wide", PawnPairs3Wide::delta),
    ] {
        let (mut n, mut refreshes) = (0, 0);
        for (board, mv) in &seq {
            md.clear();
            f(board, mv, &mut md);
            n += md.added[0].len() + md.removed[0].len();
            refreshes += usize::from(md.refresh[0]);
        }
        eprintln!(
            "{name}: {:.1} indices (added + removed) per move and perspective, {refreshes} refreshes",
            n as f64 / seq.len() as f64
        );
    }
    let mut group = c.benchmark_group("delta");
    group.throughput(Throughput::Elements(seq.len() as u64));
    let mut run = |name: &str, f: &dyn Fn(&Board, &Move, &mut MoveDelta<'_>)| {
        group.bench_function(name, |b| {
            b.iter(|| {
                for (board, mv) in &seq {
                    md.clear();
                    f(black_box(board), black_box(mv), &mut md);
                    black_box(&md);
                }
            })
        });
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
        group.bench_function(name, |b| {
            b.iter(|| {
                for (board, _) in &seq {
                    for p in Color::ALL {
                        let mut list = IndexList::new(&mut buf);
                        f(black_box(board), p, &mut list);
                        black_box(list.len());
                    }
                }
            })
        });
    };
    run("full_threats", &FullThreats::active);
    run("pp_3wide", &PawnPairs3Wide::active);
    group.finish();
}

criterion_group!(benches, bench_delta);
criterion_main!(benches);
