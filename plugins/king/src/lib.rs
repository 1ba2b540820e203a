//! King-relative feature blocks.
//!
//! - [`K`] (`k`, 64): the perspective's own king square. With the thesis's product operator it
//!   makes the king-relative sets of §3.3.2 from any block: KA = `k*all` (49,152), KP = `k*p`
//!   (40,960, with `p` from the `all` plugin).
//! - [`Kr`] (`kr`, 2,700): every piece's offset from the own king, the thesis code's
//!   half-relative king-piece block.
//! - [`HalfKav2Hm`] (`halfka_v2_hm`, 22,528): Stockfish's HalfKAv2_hm, index for index.
//! - [`HalfKp`] (`halfkp`, 41,024): Stockfish 12's HalfKP, index for index.
//!
//! Every block here refreshes a perspective when that perspective's own king moves (castling
//! included) and updates it incrementally otherwise, except `k`, whose delta is the king's own
//! index pair. Each layout is documented with worked examples in its module and checked by the
//! conformance kit.

mod halfka;
mod halfkp;
mod k;
mod kr;
mod relative;

pub use halfka::{HalfKav2Hm, halfka_v2_hm_index, halfka_v2_hm_place};
pub use halfkp::{HalfKp, halfkp_index, halfkp_place};
pub use k::{K, k_index, k_place};
pub use kr::{Kr, kr_index, kr_place};
pub use relative::KingRelative;

plugin_api::export_plugin!(K, Kr, HalfKav2Hm, HalfKp);

#[cfg(test)]
mod tests {
    use super::*;

    plugin_api::conformance_test!(K, Kr, HalfKav2Hm, HalfKp);

    #[test]
    fn k_composes_as_the_tiles_of_a_product() {
        // `k*kr`: the own king's square picks the tile, KR's offset grid the cell.
        let mut registry = plugin_api::PluginRegistry::new();
        registry
            .register(
                &[
                    plugin_api::BlockDescriptor::of::<K>(),
                    plugin_api::BlockDescriptor::of::<Kr>(),
                ],
                "test",
                "linked",
            )
            .unwrap();
        let set = registry.feature_set("k*kr").unwrap();
        let term = &set.terms()[0];
        plugin_api::term_geometry::check(term).unwrap();
        let g = plugin_api::TermGeometry::of(term).unwrap();
        assert_eq!(g.grid().tiles, [8, 8]);
        assert_eq!(g.grid().tile_title.as_str(), "own king square");
        // King g1 (k index 48) and the enemy knight f3 (kr index 1,503).
        let place = g.place(48 * 2700 + 1503).unwrap();
        assert_eq!((place.sheet, place.tile, place.cell), (3, [6, 0], [6, 5]));
        assert_eq!(g.sheet_name(3), "their knight");
    }
}
