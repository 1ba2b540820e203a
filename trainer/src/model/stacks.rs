//! Which layer stack each position goes through: the grouping of a batch by stack (the CPU's
//! way) and the per-row choice (a GPU's).

use nnue::Arch;
use tch::Tensor;

/// Which layer stack the rows of a tensor go through.
#[derive(Clone, Copy)]
pub(super) enum Stacks<'a> {
    /// All through stack k.
    One(usize),
    /// Row r through stack `stack[r]` (`[rows]`, on the rows' device).
    PerRow(&'a Tensor),
}

/// A batch's positions grouped by layer stack: `order[r]` is the position at row r of the
/// grouped rows, `back[i]` the row of position i, `counts[k]` the positions of stack k.
#[derive(Debug)]
pub(super) struct StackOrder {
    pub(super) order: Vec<i64>,
    pub(super) back: Vec<i64>,
    pub(super) counts: Vec<i64>,
}

/// The layer stack of each position, from its number of pieces (`i64`: a tensor's indices).
pub(super) fn stack_of_each(arch: &Arch, pieces: &[u8]) -> Vec<i64> {
    pieces
        .iter()
        .map(|&n| arch.stack_of(u32::from(n)) as i64)
        .collect()
}

impl StackOrder {
    pub(super) fn new(arch: &Arch, pieces: &[u8]) -> StackOrder {
        let stack = stack_of_each(arch, pieces);
        let mut order: Vec<i64> = (0..stack.len() as i64).collect();
        order.sort_by_key(|&i| stack[i as usize]);
        let mut back = vec![0i64; order.len()];
        for (at, &i) in order.iter().enumerate() {
            back[i as usize] = at as i64;
        }
        let mut counts = vec![0i64; arch.stacks];
        for &k in &stack {
            counts[k as usize] += 1;
        }
        StackOrder {
            order,
            back,
            counts,
        }
    }
}
