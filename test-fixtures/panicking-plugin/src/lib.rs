//! Test fixture: the block `boom` panics in `active` and `delta`. Its file name does not match
//! the plugin pattern, so it is only ever loaded by tests that ask for it explicitly.

use plugin_api::{Board, Color, FeatureBlock, IndexList, Move, MoveDelta};

/// A block that always panics.
pub struct Boom;

impl FeatureBlock for Boom {
    const NAME: &'static str = "boom";
    const DESCRIPTION: &'static str = "test fixture: panics on every call";
    const SIZE: u32 = 1;
    const MAX_ACTIVE: u32 = 1;
    const MAX_DELTA: u32 = 1;

    fn active(_: &Board, _: Color, _: &mut IndexList<'_>) {
        panic!("boom in active");
    }

    fn delta(_: &Board, _: &Move, _: &mut MoveDelta<'_>) {
        panic!("boom in delta");
    }
}

plugin_api::export_plugin!(Boom);
