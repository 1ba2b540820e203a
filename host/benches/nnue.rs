//! NNUE inference speed for every thesis network and every kernel version this CPU runs.
//!
//! - `nnue_nodes/NET/LEVEL`: the search's per-node work along games: make a move (the plugins'
//!   delta, counts, accumulator update of both perspectives), run the forward pass, and undo
//!   the move. The workload walks seeded random games from the first openings of
//!   `shared/data/uho_4060_v2.epd`; at every position of a game it tries three random legal
//!   moves (push, evaluate, pop), then plays the game's move (push, evaluate). Throughput is
//!   nodes (push + evaluate) per second; the refresh at each game's root is not timed.
//! - `nnue_update/NET`: the same walk without the forward pass (best kernels): the update cost.
//! - `nnue_delta/NET`: the plugins' part of it alone: `FeatureSet::delta` for every push of
//!   the walk (what the feature set costs before any accumulator work).
//! - `nnue_rows/NET`: the accumulator arithmetic of those pushes alone (best kernels): the
//!   first-layer rows each push adds and subtracts, both perspectives, with no plugin or count
//!   work: the floor of any implementation that updates accumulators move by move.
//! - `nnue_refresh/NET/LEVEL`: a full refresh of both perspectives (plugins' `active`, counts,
//!   accumulators) per position.
//! - `nnue_forward/NET/LEVEL`: the forward pass alone (clipped ReLU, hidden layer, output).
//! - `nnue_counts_copy/N`: what copy-make would add per move: copying the 2·N counts.
//!
//! Networks: every thesis network in `shared/nets/thesis/`, and synthetic networks (random
//! weights, L1 = 256) of the king-relative and threat sets, named `SET@256`; the sets with
//! threat blocks also as `SET@256-i8`, their threat blocks stored as `i8`.
//!
//! `cargo bench -p host --bench nnue` (about four minutes on 2 cores; filter with
//! `-- nnue_nodes/all.nn`). Plugins are found next to the bench executable (the host crate
//! dev-depends on the plugin crates, so cargo builds them).

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use plugin_api::{Board, Move, PluginRegistry, board_from_position, move_from_shakmaty};
use rand::SeedableRng;
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Position};

use host::nnue::{
    AccumulatorStack, BlockInfo, Kernels, Network, NetworkParts, Nnue, RowLists, SimdLevel,
    WeightType,
};

fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared")
}

/// Feature sets measured with synthetic networks (seeded random weights, `NAME@L1`) beside the
/// thesis's networks: the king-relative and threat sets, whose cost per move does not depend on
/// trained values.
const SYNTHETIC: &[&str] = &[
    "all",
    "all+full_threats",
    "halfka_v2_hm",
    "halfka_v2_hm+full_threats",
    "halfka_v2_hm+full_threats+pp_3wide",
];

/// Blocks the `-i8` synthetic networks store as `i8` (as Stockfish stores its threat weights).
const NARROW_BLOCKS: &[&str] = &["full_threats", "pp_3wide"];

/// First-layer width of the synthetic networks (Stockfish's threat networks are far wider; this
/// is the width of the project's experiments).
const SYNTHETIC_L1: usize = 256;

fn thesis_nets() -> Vec<PathBuf> {
    let mut nets: Vec<PathBuf> = std::fs::read_dir(shared().join("nets/thesis"))
        .expect("../shared/nets/thesis beside the repository")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "nn"))
        .collect();
    nets.sort();
    nets
}

/// One step of the walk.
#[derive(Clone, Copy)]
enum Op {
    Push(Move),
    Pop,
}

/// Games as (root, operations): at every position three tried moves (push, pop) and the game's
/// move (push); the game's moves are popped at the end.
fn workload() -> Vec<(Board, Vec<Op>)> {
    let book = std::fs::read_to_string(shared().join("data/uho_4060_v2.epd")).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    let mut games = Vec::new();
    for line in book.lines().take(12) {
        let fen: Fen = line.trim().parse().unwrap();
        let mut pos: Chess = fen.into_position(CastlingMode::Standard).unwrap();
        let root = board_from_position(&pos);
        let mut ops = Vec::new();
        let mut played = 0;
        for _ in 0..60 {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            for _ in 0..3 {
                let m = moves.choose(&mut rng).unwrap();
                ops.push(Op::Push(move_from_shakmaty(m).unwrap()));
                ops.push(Op::Pop);
            }
            let m = *moves.choose(&mut rng).unwrap();
            ops.push(Op::Push(move_from_shakmaty(&m).unwrap()));
            pos.play_unchecked(m);
            played += 1;
        }
        ops.extend(std::iter::repeat_n(Op::Pop, played));
        games.push((root, ops));
    }
    games
}

fn pushes(games: &[(Board, Vec<Op>)]) -> u64 {
    games
        .iter()
        .flat_map(|(_, ops)| ops)
        .filter(|op| matches!(op, Op::Push(_)))
        .count() as u64
}

/// The walk, timed without the refresh at each game's root; evaluates after every push when
/// `eval`.
fn walk(
    stack: &mut AccumulatorStack<'_>,
    games: &[(Board, Vec<Op>)],
    eval: bool,
    sum: &mut i64,
) -> Duration {
    let mut elapsed = Duration::ZERO;
    for (root, ops) in games {
        stack.reset(root).unwrap();
        let start = Instant::now();
        for op in ops {
            match op {
                Op::Push(mv) => {
                    stack.push(mv).unwrap();
                    if eval {
                        *sum += i64::from(stack.evaluate());
                    }
                }
                Op::Pop => stack.pop(),
            }
        }
        elapsed += start.elapsed();
    }
    elapsed
}

/// Times `iters` walks.
fn timed_walks(
    stack: &mut AccumulatorStack<'_>,
    games: &[(Board, Vec<Op>)],
    eval: bool,
    iters: u64,
) -> Duration {
    let mut sum = 0i64;
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        total += walk(stack, games, eval, &mut sum);
    }
    black_box(sum);
    total
}

fn benches(c: &mut Criterion) {
    let registry = PluginRegistry::discover(None).unwrap_or_else(|e| panic!("{e}"));
    let games = workload();
    let positions: Vec<Board> = games.iter().map(|(b, _)| *b).collect();
    let levels = SimdLevel::supported();
    let nets = bench_nets(&registry);
    walks(c, &nets, &games, &levels);
    deltas_and_rows(c, &nets, &push_deltas(&games));
    refresh_and_forward(c, &nets, &positions, &levels);
    counts_copy(c);
}

/// The networks measured: the thesis's, then synthetic networks of every set of [`SYNTHETIC`]
/// (all-`i16`, and with threat blocks stored as `i8`, `-i8`, where it has them).
fn bench_nets(registry: &PluginRegistry) -> Vec<(String, Nnue)> {
    let nets: Vec<(String, Nnue)> = thesis_nets()
        .into_iter()
        .filter_map(|p| {
            let name = p.file_name().unwrap().to_str().unwrap().to_string();
            match Nnue::load(&p, registry) {
                Ok(n) => Some((name, n)),
                Err(e) => {
                    eprintln!("skipping {name}: {e}");
                    None
                }
            }
        })
        .collect();
    // Each set as all-i16, and, where it has threat blocks, with those stored as i8 (`-i8`).
    let narrow: Vec<String> = NARROW_BLOCKS.iter().map(|b| b.to_string()).collect();
    let synthetic = SYNTHETIC
        .iter()
        .flat_map(|spec| {
            let threats = NARROW_BLOCKS.iter().any(|b| spec.contains(b));
            [(spec, false), (spec, true)]
                .into_iter()
                .take(1 + usize::from(threats))
        })
        .filter_map(|(spec, i8_threats)| {
            let set = registry.feature_set(spec).ok()?;
            let mut parts = NetworkParts::synthetic(&set, SYNTHETIC_L1, 32, 1);
            if i8_threats {
                parts.blocks = BlockInfo::with_weight_type(parts.blocks, &narrow, WeightType::I8);
            }
            let nnue = Nnue::bind(Network::from_parts(parts).ok()?, spec, registry).ok()?;
            let suffix = if i8_threats { "-i8" } else { "" };
            Some((format!("{spec}@{SYNTHETIC_L1}{suffix}"), nnue))
        });
    nets.into_iter().chain(synthetic).collect()
}

/// The (board, move) of every push of the walk.
fn push_deltas(games: &[(Board, Vec<Op>)]) -> Vec<(Board, Move)> {
    let mut deltas: Vec<(Board, Move)> = Vec::new();
    for (root, ops) in games {
        let mut line = vec![*root];
        for op in ops {
            match op {
                Op::Push(mv) => {
                    let board = *line.last().unwrap();
                    deltas.push((board, *mv));
                    line.push(board.play(mv));
                }
                Op::Pop => {
                    line.pop();
                }
            }
        }
    }
    deltas
}

/// `nnue_nodes` (walks through every kernel version) and `nnue_update` (the accumulators alone).
fn walks(
    c: &mut Criterion,
    nets: &[(String, Nnue)],
    games: &[(Board, Vec<Op>)],
    levels: &[SimdLevel],
) {
    let nodes = pushes(games);
    let mut g = c.benchmark_group("nnue_nodes");
    g.throughput(Throughput::Elements(nodes));
    for (name, nnue) in nets {
        for &level in levels {
            let mut stack = AccumulatorStack::new(nnue, Kernels::new(level).unwrap());
            g.bench_function(BenchmarkId::new(name.as_str(), level), |b| {
                b.iter_custom(|iters| timed_walks(&mut stack, games, true, iters))
            });
        }
    }
    g.finish();

    let mut g = c.benchmark_group("nnue_update");
    g.throughput(Throughput::Elements(nodes));
    for (name, nnue) in nets {
        let mut stack = AccumulatorStack::new(nnue, Kernels::best());
        // What the walk asks of the accumulators, per push (both perspectives).
        walk(&mut stack, games, false, &mut 0);
        let s = stack.stats();
        let per_push = |x: u64| x as f64 / nodes as f64;
        eprintln!(
            "{name}: per push {:.3} refreshes, {:.1} rows by updates, {:.1} rows by refreshes",
            per_push(s.refreshes),
            per_push(s.rows),
            per_push(s.refresh_rows)
        );
        g.bench_function(BenchmarkId::from_parameter(name.as_str()), |b| {
            b.iter_custom(|iters| timed_walks(&mut stack, games, false, iters))
        });
    }
    g.finish();
}

/// `nnue_delta` (the feature sets' deltas alone) and `nnue_rows` (the accumulator arithmetic
/// alone) over every push's (board, move).
fn deltas_and_rows(c: &mut Criterion, nets: &[(String, Nnue)], deltas: &[(Board, Move)]) {
    let mut g = c.benchmark_group("nnue_delta");
    g.throughput(Throughput::Elements(deltas.len() as u64));
    for (name, nnue) in nets {
        let set = nnue.features();
        let mut buf = set.delta_buffer();
        g.bench_function(BenchmarkId::from_parameter(name.as_str()), |b| {
            b.iter(|| {
                for (board, mv) in deltas {
                    set.delta(board, mv, &mut buf).unwrap();
                }
                black_box(buf.added(plugin_api::Color::White).len())
            })
        });
    }
    g.finish();

    // The accumulator arithmetic alone: every push's rows added to and subtracted from a parent
    // accumulator, both perspectives, with no plugin, count or forward work. Only for feature
    // sets whose blocks emit each active index once (`all`, `mb`, `mc`), where the delta's
    // indices are exactly the rows a push touches.
    let mut g = c.benchmark_group("nnue_rows");
    g.throughput(Throughput::Elements(deltas.len() as u64));
    for (name, nnue) in nets.iter().filter(|(n, _)| {
        ["all.nn", "best.nn", "all+mb.nn", "all+mc.nn"].contains(&n.as_str()) || n.contains('@')
    }) {
        let set = nnue.features();
        let net = nnue.network();
        let mut buf = set.delta_buffer();
        let mut rows: Vec<[RowLists; 2]> = Vec::new();
        for (board, mv) in deltas {
            set.delta(board, mv, &mut buf).unwrap();
            rows.push(plugin_api::Color::ALL.map(|p| {
                let mut r = RowLists::default();
                buf.added(p).iter().for_each(|&i| r.add(net.w1(), i));
                buf.removed(p).iter().for_each(|&i| r.sub(net.w1(), i));
                r
            }));
        }
        let count = |ty: WeightType| -> usize {
            rows.iter()
                .flatten()
                .map(|r| r.added(ty).len() + r.removed(ty).len())
                .sum()
        };
        let pushes = rows.len() as f64;
        let (wide, narrow) = (count(WeightType::I16), count(WeightType::I8));
        eprintln!(
            "{name}: {:.1} rows per push (both perspectives; {:.1} of them i8), {:.0} bytes of first-layer rows",
            (wide + narrow) as f64 / pushes,
            narrow as f64 / pushes,
            (2 * wide + narrow) as f64 / pushes * net.l1() as f64
        );
        let kernels = Kernels::best();
        let l1 = net.l1();
        let mut accs = vec![0i16; 4 * l1];
        accs[..l1].copy_from_slice(net.b1());
        accs[l1..2 * l1].copy_from_slice(net.b1());
        g.bench_function(BenchmarkId::from_parameter(name.as_str()), |b| {
            b.iter(|| {
                for (i, r) in rows.iter().enumerate() {
                    // Ping-pong: the child of one push is the parent of the next (a walk
                    // straight down the game).
                    let (low, high) = accs.split_at_mut(2 * l1);
                    let (parent, child) = if i % 2 == 0 { (low, high) } else { (high, low) };
                    for (p, lists) in r.iter().enumerate() {
                        let src = &parent[p * l1..(p + 1) * l1];
                        kernels.update(&mut child[p * l1..(p + 1) * l1], src, net.w1(), lists);
                    }
                }
                black_box(accs[0])
            })
        });
    }
    g.finish();
}

/// `nnue_refresh` (accumulators from scratch) and `nnue_forward` (the layers after the first).
fn refresh_and_forward(
    c: &mut Criterion,
    nets: &[(String, Nnue)],
    positions: &[Board],
    levels: &[SimdLevel],
) {
    let mut g = c.benchmark_group("nnue_refresh");
    g.throughput(Throughput::Elements(positions.len() as u64));
    for (name, nnue) in nets {
        for &level in levels {
            let mut stack = AccumulatorStack::with_max_ply(nnue, Kernels::new(level).unwrap(), 0);
            g.bench_function(BenchmarkId::new(name.as_str(), level), |b| {
                b.iter(|| {
                    for board in positions {
                        stack.reset(black_box(board)).unwrap();
                    }
                    black_box(stack.accumulator(plugin_api::Color::White)[0])
                })
            });
        }
    }
    g.finish();

    let mut g = c.benchmark_group("nnue_forward");
    g.throughput(Throughput::Elements(positions.len() as u64));
    for (name, nnue) in nets
        .iter()
        .filter(|(n, _)| ["all.nn", "best.nn", "all+ph+pv.nn"].contains(&n.as_str()))
    {
        for &level in levels {
            // Accumulators of real positions, evaluated again and again.
            let mut stacks: Vec<AccumulatorStack<'_>> = positions
                .iter()
                .map(|b| {
                    let mut s =
                        AccumulatorStack::with_max_ply(nnue, Kernels::new(level).unwrap(), 0);
                    s.reset(b).unwrap();
                    s
                })
                .collect();
            g.bench_function(BenchmarkId::new(name.as_str(), level), |b| {
                b.iter(|| {
                    let mut sum = 0i64;
                    for s in &mut stacks {
                        sum += i64::from(s.evaluate());
                    }
                    black_box(sum)
                })
            });
        }
    }
    g.finish();
}

/// `nnue_counts_copy`: the copy of a feature-count array, the floor of a count update.
fn counts_copy(c: &mut Criterion) {
    let mut g = c.benchmark_group("nnue_counts_copy");
    for n in [768usize, 1536, 3072] {
        let src = vec![1u16; 2 * n];
        let mut dst = vec![0u16; 2 * n];
        g.throughput(Throughput::Elements(1));
        g.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter(|| {
                dst.copy_from_slice(black_box(&src));
                black_box(dst[n])
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = nnue;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(900))
        .sample_size(15);
    targets = benches
}
criterion_main!(nnue);
