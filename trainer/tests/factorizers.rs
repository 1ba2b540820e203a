//! Factorized training (`^` specs): the virtual features fold into an ordinary network that
//! computes what the factorized model computes, and specs that cannot be factorized are refused.

use std::path::PathBuf;

use nnue::Shape;
use plugin_api::PluginRegistry;
use tch::{Device, Kind};
use trainer::data::synthetic::random_games;
use trainer::loader::batch::SparseBatch;
use trainer::model::{Model, SparseInput};
use trainer::train::export::fold_factors;

fn registry() -> PluginRegistry {
    let dir: PathBuf = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    PluginRegistry::discover(Some(&dir)).unwrap()
}

#[test]
fn folded_networks_compute_what_the_factorized_model_computes() {
    let registry = registry();
    let positions: Vec<_> = random_games(5).take(300).collect();
    for spec in ["halfka_v2_hm^", "k*all^+all", "k*p^+halfka_v2_hm"] {
        let set = registry.feature_set(spec).unwrap();
        let plain = registry.feature_set(set.plain_name()).unwrap();
        assert!(set.training_size() > set.size(), "{spec}");
        assert_eq!(plain.training_size(), set.size());
        let shape = Shape::thesis(set.training_size() as usize, 32, 8);
        // Random virtual rows, so that the fold has something to add.
        let model = Model::new(shape, 3, Device::Cpu);
        let folded = fold_factors(&model, &set)
            .unwrap()
            .expect("a factorized set folds");
        assert_eq!(folded.shape.n, set.size() as usize);
        let (mut training, mut real) = (SparseBatch::default(), SparseBatch::default());
        let mut scratch = Vec::new();
        for s in &positions {
            training.push_sample(&set, s, &mut scratch).unwrap();
            real.push_sample(&plain, s, &mut scratch).unwrap();
        }
        // The training encoding has one virtual feature per real index of a factorized term.
        assert!(training.indices[0].len() > real.indices[0].len(), "{spec}");
        let a = model.forward(&SparseInput::from_batch(&training));
        let b = folded.forward(&SparseInput::from_batch(&real));
        let diff = (a - b).abs().max().to_kind(Kind::Double).double_value(&[]);
        assert!(diff < 1e-3, "{spec}: outputs differ by {diff}");
    }
}

#[test]
fn specs_that_cannot_be_factorized_are_refused() {
    let registry = registry();
    let err = |spec: &str| registry.feature_set(spec).unwrap_err().to_string();
    assert_eq!(
        err("all^"),
        "invalid feature set 'all^': block 'all' declares no factor, so 'all^' has none (a product 'a*b^' factorizes by 'b')"
    );
    assert!(
        err("h*v^").contains("'h*v^' needs left factors with one active index at most"),
        "{}",
        err("h*v^")
    );
    // Unfactorized sets train on their own layout.
    let set = registry.feature_set("k*all").unwrap();
    assert_eq!(set.training_size(), set.size());
    assert!(
        fold_factors(
            &Model::new(Shape::thesis(49152, 32, 8), 1, Device::Cpu),
            &set
        )
        .unwrap()
        .is_none()
    );
}
