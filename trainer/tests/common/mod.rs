//! Helpers shared by the trainer's integration tests.

use std::path::Path;

use trainer::model::tensor_to_vec;
use trainer::train::checkpoint;
use trainer::train::training_loop::TrainState;

/// Everything of a checkpoint that must match between two runs: the state without timings,
/// the model's and Adam's tensors.
pub fn fingerprint(path: &Path) -> (TrainState, Vec<Vec<f32>>) {
    let loaded = checkpoint::read::<TrainState>(path).unwrap();
    let mut state = loaded.state;
    for m in &mut state.history {
        m.seconds = 0.0;
        m.per_second = 0.0;
    }
    let tensors = loaded
        .params
        .iter()
        .map(|(_, t)| t)
        .chain(&loaded.m)
        .chain(&loaded.v)
        .chain(&loaded.n)
        .chain(&loaded.slow)
        .chain(&loaded.average)
        .map(tensor_to_vec)
        .collect();
    (state, tensors)
}

/// Asserts that the run `what` ended as `expected` did: the same history (timings aside) and
/// the same tensors (both as [`fingerprint`] reads them).
pub fn assert_same_end(
    expected: &(TrainState, Vec<Vec<f32>>),
    got: &(TrainState, Vec<Vec<f32>>),
    what: &str,
) {
    assert_eq!(
        got.0.history, expected.0.history,
        "{what}: loss curves differ"
    );
    assert!(got.1 == expected.1, "{what} ends with other weights");
}
