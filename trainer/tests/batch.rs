//! Sparse batches through the real `all` plugin: side-to-move-first order and CSR offsets.

use chess_text::parse_fen;
use plugin_api::board_from_setup;
use plugin_api::{Color, PluginRegistry};
use trainer::loader::batch::SparseBatch;

#[test]
fn batch_holds_side_to_move_first_sorted_unique_indices() {
    let dir = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let registry = PluginRegistry::discover(Some(&dir)).unwrap();
    let set = registry.feature_set("all").unwrap();
    let white = board_from_setup(&parse_fen("4k3/8/8/8/8/8/8/R3K3 w - - 0 1").unwrap());
    let black = board_from_setup(&parse_fen("4k3/8/8/8/8/8/8/R3K3 b - - 0 1").unwrap());
    let mut batch = SparseBatch::with_capacity(&set, 2);
    let mut scratch = Vec::new();
    batch.push(&set, &white, &mut scratch).unwrap();
    batch.push(&set, &black, &mut scratch).unwrap();
    assert_eq!(batch.len, 2);
    assert_eq!(batch.stm, vec![0, 1]);
    // White to move: slot 0 is White's view: rook a1 = 6, king e1 = 394, enemy king e8 = 479.
    assert_eq!(batch.position(0, 0), &[6, 394, 479]);
    // Black to move: slot 0 is Black's view, which equals White's view of the mirrored board.
    assert_eq!(
        batch.position(0, 1),
        set.active_set(&black, Color::Black).unwrap().as_slice()
    );
    assert_eq!(batch.position(1, 1), &[6, 394, 479]);
    assert_eq!(batch.offsets[0], vec![0, 3, 6]);
}

#[test]
fn parts_concatenate_into_the_batch_of_all_positions() {
    let dir = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let set = PluginRegistry::discover(Some(&dir))
        .unwrap()
        .feature_set("all")
        .unwrap();
    let samples: Vec<trainer::data::Sample> = trainer::data::synthetic::random_games(4)
        .take(300)
        .collect();
    let mut scratch = Vec::new();
    let mut whole = SparseBatch::with_capacity(&set, 300);
    for s in &samples {
        whole.push_sample(&set, s, &mut scratch).unwrap();
    }
    let parts: Vec<SparseBatch> = samples
        .chunks(70)
        .map(|chunk| {
            let mut b = SparseBatch::with_capacity(&set, chunk.len());
            for s in chunk {
                b.push_sample(&set, s, &mut scratch).unwrap();
            }
            b
        })
        .collect();
    let joined = SparseBatch::concat(&parts);
    assert_eq!(joined, whole);
    assert_eq!(joined.indices[0].capacity(), joined.indices[0].len());
    assert_eq!(
        joined.score,
        samples.iter().map(|s| s.score).collect::<Vec<_>>()
    );
}
