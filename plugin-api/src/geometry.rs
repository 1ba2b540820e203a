//! How a block's indices are drawn: the optional picture layout a block declares, so that tools
//! (`trainer viz`, the experiment reports) can draw a network's first-layer weights in the
//! block's own geometry (boards for piece-square blocks, strips for axis blocks, pair matrices,
//! count bars, king-square grids) without knowing the block.
//!
//! The layout is three nested grids. A block has `sheets` pictures (usually one per piece kind:
//! "own pawn", "their knight"...); every sheet is a grid of `tiles` (one tile for most blocks,
//! the own king's square for king-relative ones), and every tile a grid of `cells` (the squares
//! of a board, the files of a strip, the 12 × 12 piece kinds of a pair matrix). Each index has at
//! most one [`Place`]: its sheet, its tile and its cell. An [`Axis`] per grid direction says how
//! to label it (squares' files and ranks, piece kinds, plain numbers).
//!
//! A product term (`k*all`) is drawn by [`TermGeometry`]: when the left factor is a single grid
//! of cells (`k`: the own king's square on a board), its cells become the tiles of the right
//! factor's sheets, so `k*all` is twelve king-square grids of boards, one per piece kind.

use abi_stable::std_types::RStr;
use abi_stable::StableAbi;

use crate::feature_set::Term;

/// How the positions along one direction of a grid are labelled.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, PartialEq, Eq, Debug)]
pub enum Axis {
    /// Plain numbers from 0 (drawn left to right, or top to bottom).
    Index = 0,
    /// Files a–h, left to right.
    File = 1,
    /// Ranks 1–8 (perspective-relative), rank 1 at the bottom as on a diagram.
    Rank = 2,
    /// The 12 piece kinds `role * 2 + c` (pawn 0 .. king 5; c = 0 the perspective's own piece,
    /// 1 the opponent's), labelled `P p N n B b R r Q q K k` with the own pieces upper case.
    Piece = 3,
}

impl Axis {
    /// The label of position `i` along this axis.
    pub fn label(self, i: u32) -> String {
        match self {
            Axis::Index => i.to_string(),
            Axis::File => char::from(b'a' + (i % 8) as u8).to_string(),
            Axis::Rank => (i + 1).to_string(),
            Axis::Piece => PIECE_LETTERS
                .get(i as usize)
                .map_or_else(|| i.to_string(), |c| c.to_string()),
        }
    }

    /// Whether position 0 is drawn at the bottom (ranks, as on a diagram) instead of the top.
    pub fn bottom_up(self) -> bool {
        self == Axis::Rank
    }
}

/// Letters of the piece kinds of [`Axis::Piece`], own pieces upper case.
pub const PIECE_LETTERS: [char; 12] = ['P', 'p', 'N', 'n', 'B', 'b', 'R', 'r', 'Q', 'q', 'K', 'k'];

/// Names of the 12 piece kinds `role * 2 + c` (c = 0 own): the sheet names of blocks with one
/// sheet per piece kind.
pub const PIECE_SHEETS: [&str; 12] = [
    "own pawn",
    "their pawn",
    "own knight",
    "their knight",
    "own bishop",
    "their bishop",
    "own rook",
    "their rook",
    "own queen",
    "their queen",
    "own king",
    "their king",
];

/// The shape of a block's picture: sheets of tiles of cells, with the axes' labels and titles.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, PartialEq, Eq, Debug)]
pub struct Grid {
    /// Number of sheets (pictures); 0 means the block declares no geometry.
    pub sheets: u32,
    /// Columns and rows of tiles per sheet.
    pub tiles: [u8; 2],
    /// Columns and rows of cells per tile.
    pub cells: [u8; 2],
    /// Labels of the tile columns and rows.
    pub tile_axes: [Axis; 2],
    /// Labels of the cell columns and rows.
    pub cell_axes: [Axis; 2],
    /// What a tile is (`own king square`); empty for a single tile.
    pub tile_title: RStr<'static>,
    /// What a cell is (`square`, `file`, `count`).
    pub cell_title: RStr<'static>,
}

impl Grid {
    /// No geometry: the block's indices are drawn in index order.
    pub const NONE: Grid = Grid::cells(0, [0, 0], [Axis::Index, Axis::Index], "");

    /// `sheets` sheets of one tile of `cells` (columns, rows), labelled by `axes`.
    pub const fn cells(sheets: u32, cells: [u8; 2], axes: [Axis; 2], title: &'static str) -> Grid {
        Grid {
            sheets,
            tiles: [1, 1],
            cells,
            tile_axes: [Axis::Index, Axis::Index],
            cell_axes: axes,
            tile_title: RStr::from_str(""),
            cell_title: RStr::from_str(title),
        }
    }

    /// `sheets` boards of 8 × 8 squares (files left to right, rank 1 at the bottom).
    pub const fn boards(sheets: u32, title: &'static str) -> Grid {
        Grid::cells(sheets, [8, 8], [Axis::File, Axis::Rank], title)
    }

    /// This grid with every sheet made of `tiles` (columns, rows) tiles labelled by `axes`.
    pub const fn with_tiles(
        mut self,
        tiles: [u8; 2],
        axes: [Axis; 2],
        title: &'static str,
    ) -> Grid {
        self.tiles = tiles;
        self.tile_axes = axes;
        self.tile_title = RStr::from_str(title);
        self
    }

    /// Whether the block declares a geometry.
    pub fn is_some(&self) -> bool {
        self.sheets > 0
    }

    /// Whether `place` lies inside the grid.
    pub fn contains(&self, place: Place) -> bool {
        place.sheet < self.sheets
            && place.tile[0] < self.tiles[0]
            && place.tile[1] < self.tiles[1]
            && place.cell[0] < self.cells[0]
            && place.cell[1] < self.cells[1]
    }
}

/// Where one index is drawn: its sheet, the tile (column, row) in the sheet and the cell
/// (column, row) in the tile. Rows count from the top, or from the bottom on an
/// [`Axis::bottom_up`] axis.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Place {
    /// The sheet, below [`Grid::sheets`]; `u32::MAX` for an index that is not drawn.
    pub sheet: u32,
    /// Tile column and row.
    pub tile: [u8; 2],
    /// Cell column and row.
    pub cell: [u8; 2],
}

impl Place {
    /// An index without a place (one the block never emits, or a geometry call that panicked).
    pub const NONE: Place = Place {
        sheet: u32::MAX,
        tile: [0, 0],
        cell: [0, 0],
    };

    /// The cell (column, row) of the single tile of `sheet`.
    pub const fn cell(sheet: u32, cell: [u8; 2]) -> Place {
        Place {
            sheet,
            tile: [0, 0],
            cell,
        }
    }

    /// Square `square` (rank * 8 + file) of `sheet`'s single board.
    pub const fn square(sheet: u32, square: u8) -> Place {
        Place::cell(sheet, [square % 8, square / 8])
    }

    /// Whether this is [`Place::NONE`].
    pub fn is_none(&self) -> bool {
        self.sheet == u32::MAX
    }
}

/// A block's geometry as it crosses the boundary: the grid and two `extern "C"` functions.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug)]
pub struct GeometryDescriptor {
    /// The shape ([`Grid::NONE`] when the block declares none).
    pub grid: Grid,
    /// The name of a sheet (`own pawn`); empty if the block's code panicked.
    pub sheet_name: extern "C" fn(u32) -> RStr<'static>,
    /// The place of an index ([`Place::NONE`] if not drawn or if the block's code panicked).
    pub place: extern "C" fn(u32) -> Place,
}

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
                        tile_title: left.descriptor.title_as_left_factor(),
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

impl crate::block::BlockDescriptor {
    /// What a product's tiles are when this block is its left factor: the block's cell title,
    /// else its name.
    fn title_as_left_factor(&self) -> RStr<'static> {
        if self.geometry.grid.cell_title.is_empty() {
            self.name
        } else {
            self.geometry.grid.cell_title
        }
    }
}

/// Checks a term's geometry: every placed index inside the grid and no two indices on one
/// place, every sheet named. Returns one clause naming the first problem.
pub fn check(term: &Term) -> Result<(), String> {
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
            return Err(format!(
                "geometry of '{}': index {local} is placed at {raw:?}, outside the grid {grid:?}",
                term.name
            ));
        }
        if let Some(other) = seen.insert(raw, local) {
            return Err(format!(
                "geometry of '{}': indices {other} and {local} are both placed at {raw:?}",
                term.name
            ));
        }
    }
    for s in 0..grid.sheets {
        if g.sheet_name(s).is_empty() {
            return Err(format!(
                "geometry of '{}': sheet {s} has no name",
                term.name
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::{BlockDescriptor, FeatureBlock, IndexList};
    use crate::conformance::{check_blocks, Settings};
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

    fn conformance<B: FeatureBlock>() -> Result<(), String> {
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
            collide.contains("indices 0 and 1 are both placed"),
            "{collide}"
        );
        // The kings start on e1 (White's view) and e8, rank-mirrored to e1 (Black's view): index 4.
        let undrawn = conformance::<OwnKing<4, false>>().unwrap_err();
        assert!(
            undrawn.contains("index 4 that White's view emits has no place"),
            "{undrawn}"
        );
    }

    #[test]
    fn a_products_left_factor_picks_the_tile() {
        let mut registry = crate::loader::PluginRegistry::new();
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
