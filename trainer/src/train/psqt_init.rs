//! The PSQT weights' starting values: each feature's piece value, so that a fresh network's PSQT
//! term is the material balance (nnue-pytorch's `_init_psqt` with `halfka_psqts`,
//! `model.py`/`halfka_v2_hm.py`: own pieces +value, the opponent's −value, kings 0, virtual
//! features 0).
//!
//! nnue-pytorch's feature sets each list their values by hand; here any feature set gets them
//! from the geometry its blocks declare (`plugin_api::TermGeometry`): a term whose pictures are
//! 8 × 8 boards, one sheet per piece kind named as in [`PIECE_SHEETS`], has exactly one active
//! feature per piece, the piece of its sheet. Other terms (axes, pairs, counts, threats) start at
//! 0. A set with several such terms (`all+k*all`) shares each piece's value among them, so the
//! sum is still the material balance.

use plugin_api::{FeatureSet, PIECE_SHEETS, Term, TermGeometry};

use crate::model::PSQT_PIECE_VALUES;

/// The value (score units) of the piece of a sheet named `name`: own pieces positive, the
/// opponent's negative, kings 0; `None` for a sheet that is not a piece kind.
fn sheet_value(name: &str) -> Option<f64> {
    let kind = PIECE_SHEETS.iter().position(|&s| s == name)?;
    let value = PSQT_PIECE_VALUES.get(kind / 2).copied().unwrap_or(0.0);
    Some(if kind % 2 == 0 { value } else { -value })
}

/// Each of `set`'s training features' starting PSQT value (its real features first, then its
/// virtual ones at 0), in score units.
pub fn psqt_piece_values(set: &FeatureSet) -> Vec<f64> {
    let mut values = vec![0.0; set.training_size() as usize];
    let boards: Vec<(&Term, TermGeometry)> = set
        .terms()
        .iter()
        .filter_map(|term| {
            let g = TermGeometry::of(term)?;
            let grid = *g.grid();
            let pieces = grid.cells == [8, 8]
                && (0..grid.sheets).all(|s| {
                    let name = g.sheet_name(s);
                    sheet_value(&name).is_some() || name == "both kings"
                });
            pieces.then_some((term, g))
        })
        .collect();
    let share = 1.0 / boards.len().max(1) as f64;
    for (term, g) in &boards {
        for local in 0..term.size {
            if let Some(place) = g.place(local) {
                let value = sheet_value(&g.sheet_name(place.sheet)).unwrap_or(0.0);
                values[(term.offset + local) as usize] = value * share;
            }
        }
    }
    values
}
