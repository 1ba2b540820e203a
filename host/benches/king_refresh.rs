//! Refreshes on king moves for a king-relative set (`halfka_v2_hm`, L1 = 256 and 1024):
//!
//! - `refresh/L1/cache` and `refresh/L1/full`: the refresh alone, as the stack does it after an
//!   own king move: through the [`RefreshCache`] (the entry of the new king square plus what the
//!   pieces that differ contribute), or from the bias (the plugins' active indices of the new
//!   position, every row summed);
//! - `push/L1/cache` and `push/L1/full`: the whole push and pop of the king move in an
//!   [`AccumulatorStack`] (the plugins' delta, the other perspective's update, the refresh).
//!
//! Workload: seeded random games from the first openings of `shared/data/uho_4060_v2.epd`; at
//! every position, every legal king move of the side to move is pushed and popped (as a search
//! tries them), then the game's move is played. Only the king moves' work is timed; throughput
//! is king moves per second. The cache holds whatever the walk left in it, as in a
//! search. The network is synthetic (random weights of a real `halfka_v2_hm` layout): the cost
//! does not depend on the weights.
//!
//! `cargo bench -p host --bench king_refresh`

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use host::nnue::{
    AccumulatorStack, CachedTerms, Kernels, Network, NetworkParts, Nnue, RefreshCache, RowLists,
};
use plugin_api::{
    Board, Color, Move, PluginRegistry, Square, board_from_position, move_from_shakmaty,
};
use rand::SeedableRng;
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Position};

const L2: usize = 32;

/// A `halfka_v2_hm` network of random weights with first-layer width `L1`.
#[allow(non_snake_case)]
fn network(registry: &PluginRegistry, L1: usize) -> Nnue {
    let set = registry.feature_set("halfka_v2_hm").unwrap();
    let parts = NetworkParts::synthetic(&set, L1, L2, 1);
    Nnue::bind(Network::from_parts(parts).unwrap(), "synthetic", registry).unwrap()
}

/// A game: its root and, per ply, the king moves tried and the move played.
type RecordedGame = (Board, Vec<(Vec<Move>, Move)>);

/// The games of the walk.
fn workload() -> Vec<RecordedGame> {
    let book = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/uho_4060_v2.epd");
    let book = std::fs::read_to_string(book).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    let mut games = Vec::new();
    for line in book.lines().take(12) {
        let fen: Fen = line.trim().parse().unwrap();
        let mut pos: Chess = fen.into_position(CastlingMode::Standard).unwrap();
        let root = board_from_position(&pos);
        let mut plies = Vec::new();
        for _ in 0..60 {
            let moves = pos.legal_moves();
            let Some(&played) = moves.choose(&mut rng) else {
                break;
            };
            let kings = moves
                .iter()
                .filter(|m| m.role() == shakmaty::Role::King)
                .map(|m| move_from_shakmaty(m).unwrap())
                .collect();
            plies.push((kings, move_from_shakmaty(&played).unwrap()));
            pos.play_unchecked(played);
        }
        games.push((root, plies));
    }
    games
}

fn king_moves(games: &[RecordedGame]) -> u64 {
    games
        .iter()
        .flat_map(|(_, plies)| plies)
        .map(|(kings, _)| kings.len() as u64)
        .sum()
}

/// Times the king-move pushes and pops of one walk.
fn walk(stack: &mut AccumulatorStack<'_>, games: &[RecordedGame]) -> Duration {
    let mut elapsed = Duration::ZERO;
    let mut sum = 0i64;
    for (root, plies) in games {
        stack.reset(root).unwrap();
        for (kings, played) in plies {
            let start = Instant::now();
            for mv in kings {
                stack.push(mv).unwrap();
                sum += i64::from(stack.accumulator(stack.board().turn)[0]);
                stack.pop();
            }
            elapsed += start.elapsed();
            stack.push(played).unwrap();
        }
    }
    black_box(sum);
    elapsed
}

/// The positions after every king move of the walk, in order, with the perspective to refresh
/// and its king square.
fn king_move_positions(games: &[RecordedGame]) -> Vec<(Board, Color, Square)> {
    let mut out = Vec::new();
    for (root, plies) in games {
        let mut board = *root;
        for (kings, played) in plies {
            let p = board.turn;
            for mv in kings {
                let after = board.play(mv);
                out.push((after, p, after.king(p).unwrap()));
            }
            board = board.play(played);
        }
    }
    out
}

/// Times the refreshes of the king moves of one walk (one timer around all of them), through
/// `cache` or (without) from the bias with the plugins' active indices of the new position.
fn refreshes(
    nnue: &Nnue,
    positions: &[(Board, Color, Square)],
    mut cache: Option<&mut RefreshCache>,
) -> Duration {
    let (set, net) = (nnue.features(), nnue.arranged().network());
    let kernels = Kernels::best();
    let mut active = Vec::with_capacity(set.max_active());
    let mut rows = RowLists::with_capacity(set.max_active());
    let mut dst = vec![0i16; net.l1()];
    let start = Instant::now();
    for (after, p, king) in positions {
        match cache.as_deref_mut() {
            Some(cache) => {
                let terms = CachedTerms {
                    kernels,
                    set,
                    mask: u64::MAX,
                    net,
                };
                cache
                    .refresh(&terms, (after, *p, *king), (&mut dst, &mut []))
                    .unwrap();
            }
            None => {
                active.clear();
                set.active(after, *p, &mut active).unwrap();
                rows.clear();
                active.iter().for_each(|&i| rows.add(net.w1(), i));
                kernels.update(&mut dst, net.b1(), net.w1(), &rows);
            }
        }
        black_box(&dst);
    }
    start.elapsed()
}

fn benches(c: &mut Criterion) {
    let registry = PluginRegistry::discover(None).unwrap_or_else(|e| panic!("{e}"));
    let games = workload();
    let positions = king_move_positions(&games);
    let mut group = c.benchmark_group("king_refresh");
    group.throughput(Throughput::Elements(king_moves(&games)));
    for l1 in [256, 1024] {
        let nnue = network(&registry, l1);
        let mut cache = RefreshCache::new(l1, 0, nnue.features().max_active());
        group.bench_function(format!("refresh/{l1}/cache"), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| refreshes(&nnue, &positions, Some(&mut cache)))
                    .sum()
            })
        });
        group.bench_function(format!("refresh/{l1}/full"), |b| {
            b.iter_custom(|iters| (0..iters).map(|_| refreshes(&nnue, &positions, None)).sum())
        });
        let s = cache.stats();
        eprintln!(
            "king_refresh/refresh/{l1}/cache: {:.1} rows per refresh from an entry, {} hits, {} fills",
            s.rows as f64 / s.hits.max(1) as f64,
            s.hits,
            s.fills
        );
        for (name, cached) in [("cache", true), ("full", false)] {
            let mut stack = AccumulatorStack::with_max_ply(&nnue, Kernels::best(), 128);
            stack.set_refresh_cache(cached);
            group.bench_function(format!("push/{l1}/{name}"), |b| {
                b.iter_custom(|iters| (0..iters).map(|_| walk(&mut stack, &games)).sum())
            });
            let s = stack.stats();
            eprintln!(
                "king_refresh/push/{l1}/{name}: {:.1} rows per refresh ({} refreshes)",
                s.refresh_rows as f64 / s.refreshes.max(1) as f64,
                s.refreshes
            );
        }
    }
    group.finish();
}

criterion_group! {
    name = king_refresh;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(4));
    targets = benches
}
criterion_main!(king_refresh);
