//! A term's picture, on the host's side: a block's own geometry ([`crate::geometry`]), or a
//! product term's composed from its factors'. For `k*all`, the left factor is a single grid of
//! cells (the own king's square on a board), whose cells become the tiles of the right factor's
//! sheets: twelve king-square grids of boards, one per piece kind.

use abi_stable::std_types::RStr;

use crate::block::BlockDescriptor;
use crate::feature_set::Term;
use crate::geometry::{GeometryDescriptor, Grid, Place};

/// A term's geometry: a block's own, or a product's composed from its factors'.
#[derive(Clone, Debug)]
pub struct TermGeometry {
    grid: Grid,
    /// The left factor of a product (whose cells are the tiles), and its right factor's size.
    left: Option<(GeometryDescriptor, u32)>,
    right: GeometryDescriptor,
}

impl TermGeometry {
    /// The geometry of `term`, if its blocks declare one that composes: a block's own; a
    /// product of two blocks whose left factor is one tile of one sheet and whose right
    /// factor's sheets are one tile each (`k*all`: the king's square picks the tile).
    pub fn of(term: &Term) -> Option<TermGeometry> {
        match term.factors.as_slice() {
            [block] => {
                let g = block.descriptor.geometry;
                g.grid.is_some().then_some(TermGeometry {
                    grid: g.grid,
                    left: None,
                    right: g,
                })
            }
            [left, right] => {
                let (l, r) = (left.descriptor.geometry, right.descriptor.geometry);
                let composes = l.grid.sheets == 1
                    && l.grid.tiles == [1, 1]
                    && r.grid.is_some()
                    && r.grid.tiles == [1, 1];
                composes.then_some(TermGeometry {
                    grid: Grid {
                        tiles: l.grid.cells,
                        tile_axes: l.grid.cell_axes,
                        tile_title: title_as_left_factor(&left.descriptor),
                        ..r.grid
                    },
                    left: Some((l, right.descriptor.size)),
                    right: r,
                })
            }
            _ => None,
        }
    }

    /// The term's grid.
    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// The place of the term's index `local` (counted from the term's start), or `None` when it
    /// is not drawn (or lies outside the grid: a block that breaks its own declaration).
    pub fn place(&self, local: u32) -> Option<Place> {
        let place = self.declared_place(local);
        (!place.is_none() && self.grid.contains(place)).then_some(place)
    }

    /// The place the blocks declare for `local`, unchecked ([`Place::NONE`] when a factor's is).
    fn declared_place(&self, local: u32) -> Place {
        let Some((left, right_size)) = self.left else {
            return (self.right.place)(local);
        };
        let (l, r) = (
            (left.place)(local / right_size),
            (self.right.place)(local % right_size),
        );
        if l.is_none() || r.is_none() {
            return Place::NONE;
        }
        Place {
            sheet: r.sheet,
            tile: l.cell,
            cell: r.cell,
        }
    }

    /// The name of sheet `sheet`.
    pub fn sheet_name(&self, sheet: u32) -> String {
        (self.right.sheet_name)(sheet).to_string()
    }
}

/// What a product's tiles are when `block` is its left factor: the block's cell title, else
/// its name.
fn title_as_left_factor(block: &BlockDescriptor) -> RStr<'static> {
    if block.geometry.grid.cell_title.is_empty() {
        block.name
    } else {
        block.geometry.grid.cell_title
    }
}

/// A term whose declared geometry cannot be drawn: the term's name and the first problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeometryError {
    /// The term (a block's name, or a product's).
    pub term: String,
    /// What is wrong, in a clause.
    pub problem: String,
}

impl std::fmt::Display for GeometryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "geometry of '{}': {}", self.term, self.problem)
    }
}

impl std::error::Error for GeometryError {}

/// Checks a term's geometry: every placed index inside the grid and no two indices on one
/// place, every sheet named. Fails on the first problem.
pub fn check(term: &Term) -> Result<(), GeometryError> {
    let fail = |problem: String| GeometryError {
        term: term.name.clone(),
        problem,
    };
    let Some(g) = TermGeometry::of(term) else {
        return Ok(());
    };
    let grid = g.grid();
    let mut seen = std::collections::HashMap::new();
    for local in 0..term.size {
        let raw = g.declared_place(local);
        if raw.is_none() {
            continue;
        }
        if !grid.contains(raw) {
            return Err(fail(format!(
                "index {local} is placed at {raw:?}, outside the grid {grid:?}"
            )));
        }
        if let Some(other) = seen.insert(raw, local) {
            return Err(fail(format!(
                "indices {other} and {local} are both placed at {raw:?}"
            )));
        }
    }
    for s in 0..grid.sheets {
        if g.sheet_name(s).is_empty() {
            return Err(fail(format!("sheet {s} has no name")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::{FeatureBlock, IndexList};
    use crate::conformance::{check_blocks, ConformanceError, Settings};
    use crate::geometry::{Grid, Place};
    use crate::types::{Board, Color};

    /// The own king's square (64), drawn on one board: squares from `FIRST_UNDRAWN` on have no
    /// place, and with `COLLIDE` every index lands on a1.
    struct OwnKing<const FIRST_UNDRAWN: u32, const COLLIDE: bool>;

    impl<const FIRST_UNDRAWN: u32, const COLLIDE: bool> FeatureBlock
        for OwnKing<FIRST_UNDRAWN, COLLIDE>
    {
        const NAME: &'static str = "own_king_fixture";
        const DESCRIPTION: &'static str = "the own king's square";
        const SIZE: u32 = 64;
        const MAX_ACTIVE: u32 = 1;
        const MAX_DELTA: u32 = 1;
        const GEOMETRY: Grid = Grid::boards(1, "square");

        fn sheet_name(_sheet: u32) -> &'static str {
            "own king"
        }

        fn place(index: u32) -> Place {
            match index {
                i if i >= FIRST_UNDRAWN => Place::NONE,
                _ if COLLIDE => Place::square(0, 0),
                i => Place::square(0, i as u8),
            }
        }

        fn active(board: &Board, perspective: Color, out: &mut IndexList<'_>) {
            if let Some(k) = board.king(perspective) {
                out.push(u32::from(perspective.relative(k)));
            }
        }
    }

    fn conformance<B: FeatureBlock>() -> Result<(), ConformanceError> {
        let settings = Settings {
            plies: 600,
            ..Settings::default()
        };
        check_blocks(&[BlockDescriptor::of::<B>()], settings).map(|_| ())
    }

    #[test]
    fn the_conformance_kit_holds_blocks_to_their_geometry() {
        conformance::<OwnKing<64, false>>().unwrap();
        let collide = conformance::<OwnKing<64, true>>().unwrap_err();
        assert!(
            matches!(&collide, ConformanceError::Geometry(g)
                if g.term == "own_king_fixture"
                    && g.problem.contains("indices 0 and 1 are both placed")),
            "{collide}"
        );
        // The kings start on e1 (White's view) and e8, rank-mirrored to e1 (Black's view): index 4.
        let undrawn = conformance::<OwnKing<4, false>>().unwrap_err();
        assert!(
            matches!(&undrawn, ConformanceError::Violation { what, .. }
                if what.contains("index 4 that White's view emits has no place")),
            "{undrawn}"
        );
    }

    #[test]
    fn a_products_left_factor_picks_the_tile() {
        let mut registry = crate::registry::PluginRegistry::new();
        registry
            .register(
                &[BlockDescriptor::of::<OwnKing<64, false>>()],
                "test",
                "linked",
            )
            .unwrap();
        let set = registry
            .feature_set("own_king_fixture*own_king_fixture")
            .unwrap();
        let g = TermGeometry::of(&set.terms()[0]).unwrap();
        assert_eq!((g.grid().tiles, g.grid().cells), ([8, 8], [8, 8]));
        assert_eq!(g.grid().tile_title.as_str(), "square");
        // ⟨g1, c3⟩ = 6 · 64 + 18: tile g1, cell c3.
        let p = g.place(6 * 64 + 18).unwrap();
        assert_eq!((p.sheet, p.tile, p.cell), (0, [6, 0], [2, 2]));
    }
}
