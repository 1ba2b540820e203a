//! The search's NNUE evaluator (lazy updates, null moves on their own stacks) against fresh
//! evaluations, along seeded random walks with pushes, null moves and pops; and searches with
//! the thesis networks.

mod common;
mod nnue_common;

use plugin_api::{
    BlockDescriptor, Board, Color, FeatureBlock, IndexList, Move, MoveDelta, PluginRegistry,
    board_from_position,
};
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Position};

use host::engine::Engine;
use host::engine::eval_source::EvalSource;
use host::engine::evaluator::{EVAL_LIMIT, Evaluator};
use host::engine::limits::Limits;
use host::engine::nnue_evaluator::NnueEval;
use host::engine::position::null_move;
use host::nnue::units::ScoreUnits;
use host::nnue::{Kernels, Nnue};

fn registry() -> PluginRegistry {
    PluginRegistry::discover(None).unwrap_or_else(|e| panic!("{e}"))
}

fn fresh(nnue: &Nnue, pos: &Chess) -> i32 {
    nnue.evaluate(&board_from_position(pos), Kernels::best())
        .unwrap()
        .clamp(-EVAL_LIMIT, EVAL_LIMIT)
}

/// Random walk: push (70%), null move (10%) or pop (20%), evaluating at random moments.
fn walk(nnue: &Nnue, start: &str, seed: u64, steps: usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let root: Chess = start
        .parse::<Fen>()
        .unwrap()
        .into_position(CastlingMode::Standard)
        .unwrap();
    let mut eval = NnueEval::new(nnue, Kernels::best(), ScoreUnits::Centipawns);
    eval.set_root(&root);
    let mut path = vec![root];
    let mut last_null = false;
    for step in 0..steps {
        let pos = path.last().unwrap().clone();
        let r: f64 = rng.random();
        let moves = pos.legal_moves();
        if r < 0.2 && path.len() > 1 {
            path.pop();
            eval.pop();
            last_null = false;
        } else if r < 0.3 && !last_null && path.len() < 200 {
            if let Some(after) = null_move(&pos) {
                eval.push_null(&after);
                path.push(after);
                last_null = true;
            }
        } else if !moves.is_empty() && path.len() < 200 {
            let m = *moves.choose(&mut rng).unwrap();
            let mut after = pos.clone();
            after.play_unchecked(m);
            eval.push(&pos, &m);
            path.push(after);
            last_null = false;
        }
        if rng.random_bool(0.4) {
            let cur = path.last().unwrap();
            assert_eq!(
                eval.evaluate(cur),
                fresh(nnue, cur),
                "step {step}, seed {seed}: {}",
                Fen::from_position(cur, shakmaty::EnPassantMode::Legal)
            );
        }
    }
    assert_eq!(eval.take_error(), None);
}

#[test]
fn lazy_evaluator_matches_fresh_evaluations_with_null_moves() {
    let reg = registry();
    let nets = common::shared().join("nets/thesis");
    for (name, seeds) in [
        ("all.nn", 0..6),
        ("all+ph+pv.nn", 6..9),
        ("all+mb.nn", 9..11),
    ] {
        let nnue = Nnue::load(&nets.join(name), &reg).unwrap_or_else(|e| panic!("{e}"));
        for seed in seeds {
            for start in [
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            ] {
                walk(&nnue, start, seed, 600);
            }
        }
    }
}

#[test]
fn searches_with_thesis_networks_find_a_legal_move_and_agree_across_runs() {
    let reg = registry();
    let nets = common::shared().join("nets/thesis");
    for name in ["all.nn", "all+h+v.nn", "all+mc.nn"] {
        let source =
            EvalSource::load_with(&nets.join(name), &reg).unwrap_or_else(|e| panic!("{e}"));
        let root: Chess = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        let limits = Limits {
            depth: Some(7),
            ..Limits::default()
        };
        let mut nodes = Vec::new();
        for _ in 0..2 {
            let mut engine = Engine::new(4, 1, source.clone()).unwrap();
            let result = engine.search(&root, &[], &limits, &|_, _, _| {});
            let errors = &result.errors;
            assert!(errors.is_empty(), "{name}: {errors:?}");
            let best = result.best.expect("a legal move");
            assert!(root.is_legal(best));
            assert_eq!(result.last.depth, 7);
            nodes.push(result.nodes);
        }
        assert_eq!(
            nodes[0], nodes[1],
            "{name}: fixed-depth search is deterministic"
        );
    }
}

/// A block that works for a full refresh but fails on every incremental update.
struct FailsOnDelta;

impl FeatureBlock for FailsOnDelta {
    const NAME: &'static str = "failsondelta";
    const DESCRIPTION: &'static str = "test block: one index, panics in delta";
    const SIZE: u32 = 1;
    const MAX_ACTIVE: u32 = 1;
    const MAX_DELTA: u32 = 1;

    fn active(_: &Board, _: Color, out: &mut IndexList<'_>) {
        out.push(0);
    }

    fn delta(_: &Board, _: &Move, _: &mut MoveDelta<'_>) {
        panic!("no incremental updates here");
    }
}

/// A block that fails on everything.
struct AlwaysFails;

impl FeatureBlock for AlwaysFails {
    const NAME: &'static str = "alwaysfails";
    const DESCRIPTION: &'static str = "test block: panics on every call";
    const SIZE: u32 = 1;
    const MAX_ACTIVE: u32 = 1;
    const MAX_DELTA: u32 = 1;

    fn active(_: &Board, _: Color, _: &mut IndexList<'_>) {
        panic!("no refresh here");
    }

    fn delta(_: &Board, _: &Move, _: &mut MoveDelta<'_>) {
        panic!("no incremental updates here");
    }
}

/// A block whose delta gives an index one past its end (its lists refuse and remember it).
struct StrayOnDelta;

impl FeatureBlock for StrayOnDelta {
    const NAME: &'static str = "strayondelta";
    const DESCRIPTION: &'static str = "test block: index 1 of a block of size 1 in delta";
    const SIZE: u32 = 1;
    const MAX_ACTIVE: u32 = 1;
    const MAX_DELTA: u32 = 1;

    fn active(_: &Board, _: Color, out: &mut IndexList<'_>) {
        out.push(0);
    }

    fn delta(_: &Board, _: &Move, out: &mut MoveDelta<'_>) {
        out.added[1].push(1);
    }
}

/// A block whose active indices include one past its end.
struct StrayOnActive;

impl FeatureBlock for StrayOnActive {
    const NAME: &'static str = "strayonactive";
    const DESCRIPTION: &'static str = "test block: index 1 of a block of size 1 in active";
    const SIZE: u32 = 1;
    const MAX_ACTIVE: u32 = 1;
    const MAX_DELTA: u32 = 1;

    fn active(_: &Board, _: Color, out: &mut IndexList<'_>) {
        out.push(1);
    }
}

#[test]
fn a_failing_plugin_is_reported_and_the_search_still_plays() {
    let mut reg = registry();
    reg.register(
        &[
            BlockDescriptor::of::<FailsOnDelta>(),
            BlockDescriptor::of::<AlwaysFails>(),
            BlockDescriptor::of::<StrayOnDelta>(),
            BlockDescriptor::of::<StrayOnActive>(),
        ],
        "linked test blocks",
        "tests",
    )
    .unwrap();
    let root = Chess::default();
    let limits = Limits {
        depth: Some(5),
        ..Limits::default()
    };
    for (spec, message) in [
        ("all+failsondelta", "no incremental updates here"),
        ("all+alwaysfails", "no refresh here"),
        ("all+strayondelta", "delta emitted index 1 >= its size 1"),
        ("all+strayonactive", "emitted index 1 >= its size 1"),
    ] {
        let net = nnue_common::random_network(&reg, spec, 64, 8, nnue_common::Weights::Moderate, 5);
        let nnue = Nnue::bind(net, "synthetic", &reg).unwrap_or_else(|e| panic!("{e}"));
        let source = EvalSource::Nnue {
            nnue: std::sync::Arc::new(nnue),
            path: "synthetic".into(),
            kernels: Kernels::best(),
        };
        for threads in [1, 2] {
            let mut engine = Engine::new(4, threads, source.clone()).unwrap();
            let result = engine.search(&root, &[], &limits, &|_, _, _| {});
            let errors = &result.errors;
            assert!(root.is_legal(result.best.expect("a move")), "{spec}");
            assert_eq!(result.last.depth, 5, "{spec}");
            assert!(!errors.is_empty(), "{spec}: the failure was not reported");
            assert!(
                errors
                    .iter()
                    .all(|e| e.contains(message) && e.contains("built-in")),
                "{spec}: {errors:?}"
            );
        }
    }
}
