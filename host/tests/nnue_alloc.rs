//! The per-move path of the accumulator stack (push, evaluate, pop) never touches the heap, and
//! a loaded network holds its first layer once: counted with a global allocator on the test's
//! own thread.

mod common;
mod nnue_common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use common::thesis_nets;
use nnue_common::{Step, random_walk, registry};

use host::nnue::{
    AccumulatorStack, Arch, Kernels, Network, NetworkParts, Nnue, OutputRule, SimdLevel,
};
use plugin_api::Move;

struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
    static LIVE_BYTES: Cell<i64> = const { Cell::new(0) };
}

/// Counts an allocation (`delta` bytes more or fewer held) while counting is on.
fn count(allocation: bool, delta: i64) {
    if COUNTING.with(Cell::get) {
        if allocation {
            ALLOCATIONS.with(|a| a.set(a.get() + 1));
        }
        LIVE_BYTES.with(|b| b.set(b.get() + delta));
    }
}

// SAFETY: delegates to the system allocator; the counters are plain thread-local cells.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(true, layout.size() as i64);
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(false, -(layout.size() as i64));
        // SAFETY: forwarded unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(true, new_size as i64 - layout.size() as i64);
        // SAFETY: forwarded unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Heap allocations `f` makes on this thread.
fn allocations(f: impl FnOnce()) -> u64 {
    ALLOCATIONS.with(|a| a.set(0));
    COUNTING.with(|c| c.set(true));
    f();
    COUNTING.with(|c| c.set(false));
    ALLOCATIONS.with(Cell::get)
}

/// Bytes that `f`'s result holds on the heap (allocated on this thread while making it, not
/// freed before it returned).
fn held_bytes<T>(f: impl FnOnce() -> T) -> (T, i64) {
    LIVE_BYTES.with(|b| b.set(0));
    COUNTING.with(|c| c.set(true));
    let value = f();
    COUNTING.with(|c| c.set(false));
    (value, LIVE_BYTES.with(Cell::get))
}

#[test]
fn a_loaded_network_holds_its_first_layer_once() {
    let reg = registry();
    for net in thesis_nets() {
        let (nnue, held) = held_bytes(|| Nnue::load(&net, &reg).unwrap());
        let n = nnue.arranged().network();
        let w1_bytes = (2 * n.n() * n.l1()) as i64;
        // W1 (the bulk) once, plus b1, W2, its copy by columns, the neuron order and the names.
        assert!(
            held < w1_bytes + w1_bytes / 2,
            "{net:?}: {held} bytes held for a W1 of {w1_bytes}"
        );
        assert!(
            held >= w1_bytes,
            "{net:?}: the counter missed W1 ({held} bytes)"
        );
    }
}

/// Games recorded beforehand: start boards and moves.
fn games() -> Vec<(plugin_api::Board, Vec<Move>)> {
    let mut games: Vec<(plugin_api::Board, Vec<Move>)> = Vec::new();
    random_walk(77, 400, 60, |step| match step {
        Step::Start(b) => games.push((*b, Vec::new())),
        Step::Push(mv, _) => games.last_mut().unwrap().1.push(*mv),
        Step::Pop(_) => {
            games.last_mut().unwrap().1.pop();
        }
    });
    games
}

/// Plays `games` with every kernel version on `nnue`, counting the allocations of the
/// per-move path (push, evaluate, pop): none allowed. Returns the moves played.
fn per_move_allocations_are_none(
    nnue: &Nnue,
    name: &str,
    games: &[(plugin_api::Board, Vec<Move>)],
) -> usize {
    let mut checked = 0;
    for level in SimdLevel::under_test().unwrap_or_else(|e| panic!("{e}")) {
        let mut stack = AccumulatorStack::new(nnue, Kernels::new(level).unwrap());
        let mut sum = 0i64;
        for (board, moves) in games {
            stack.reset(board).unwrap();
            let n = allocations(|| {
                for mv in moves {
                    stack.push(mv).unwrap();
                    sum += i64::from(stack.evaluate());
                }
                for _ in moves {
                    stack.pop();
                    sum += i64::from(stack.evaluate());
                }
            });
            assert_eq!(n, 0, "{name} {level}: {n} allocations on the per-move path");
            checked += moves.len();
        }
        std::hint::black_box(sum);
    }
    checked
}

#[test]
fn push_evaluate_pop_do_not_allocate() {
    let reg = registry();
    let games = games();
    // Sanity check of the counter itself.
    assert!(allocations(|| drop(std::hint::black_box(vec![1u8; 10]))) >= 1);
    let mut checked = 0;
    for net in thesis_nets() {
        let Ok(nnue) = Nnue::load(&net, &reg) else {
            panic!("{net:?} does not load");
        };
        checked += per_move_allocations_are_none(&nnue, &format!("{net:?}"), &games);
    }
    assert!(checked > 1000);
}

#[test]
fn the_layer_stacks_evaluate_without_allocating() {
    // Stockfish's shape (PSQT buckets, 8 stacks, pairwise product, squared ReLU, skip) over a
    // king-relative set with the refresh cache, and over a set of two term groups (king-relative
    // and threats: hybrid king moves), and the thesis's layers in 4 stacks with PSQT buckets.
    let reg = registry();
    let games = games();
    let mut stacked = Arch::thesis(32);
    (stacked.stacks, stacked.psqt_buckets, stacked.output) = (4, 4, OutputRule::Stockfish);
    let mut checked = 0;
    for (spec, l1, arch) in [
        ("halfka_v2_hm", 256, Arch::sfnnv5()),
        ("halfka_v2_hm+full_threats", 128, Arch::sfnnv5()),
        ("all+h+v", 128, stacked),
    ] {
        let set = reg.feature_set(spec).unwrap();
        let net = Network::from_parts(NetworkParts::synthetic_arch(&set, l1, &arch, 7)).unwrap();
        let nnue = Nnue::bind(net, "synthetic", &reg).unwrap();
        checked += per_move_allocations_are_none(&nnue, &format!("{spec} {arch}"), &games);
    }
    assert!(checked > 1000);
}
