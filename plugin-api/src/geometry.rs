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
//! This is the plugin's side (what a block declares); the host composes a product term's
//! picture from its factors' ([`crate::term_geometry`]).

use abi_stable::std_types::RStr;
use abi_stable::StableAbi;

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
