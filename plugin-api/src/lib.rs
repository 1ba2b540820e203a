//! # plugin-api
//!
//! The stable ABI through which NNUE feature blocks are loaded at run time, shared by the engine
//! (`host`) and the trainer, so that one definition of every feature block serves both.
//!
//! - [`types`]: `#[repr(C)]` board and move types that cross the boundary.
//! - [`decompose`](mod@decompose): a move as piece removals and additions, so simple blocks only describe what
//!   one piece contributes.
//! - [`block`]: the block interface ([`BlockDescriptor`], [`FeatureBlock`]) with caller-owned
//!   buffers and errors as values.
//! - [`module`]: the root module a plugin exports ([`export_plugin!`]).
//! - [`registry`]: finding plugin files and loading them.
//! - [`spec`]: the spec language, `+` for the thesis's ⊕ and `*` for its × (`k*all+h`).
//! - [`feature_set`]: blocks composed into the input of a network, products included.
//! - [`delta`]: a move's delta of a feature set, written where its reader wants it.
//! - [`piece_table`]: a piecewise block's indices piece by piece, for deltas made without it.
//! - [`geometry`]: how a block's indices are drawn (boards, strips, pair matrices), optional.
//! - [`conformance`]: the kit every plugin runs in its tests ([`conformance_test!`]).
//! - [`convert`]: shakmaty positions and moves to ABI types.
//! - [`testing`]: helpers for plugin unit tests (the start board, sorted active indices).

#![warn(missing_docs)]

pub mod active;
pub mod block;
pub mod conformance;
pub mod convert;
pub mod decompose;
pub mod delta;
pub mod feature_set;
pub mod geometry;
#[allow(non_camel_case_types)]
pub mod module;
pub mod piece_table;
pub mod registry;
pub mod spec;
pub mod term_geometry;
pub mod testing;
pub mod types;

#[doc(hidden)]
pub use abi_stable;

pub use active::ActiveTarget;
pub use block::{
    full_diff_delta, install_plugin_panic_hook, layout_id, piece_block_active, piece_block_delta,
    BlockDescriptor, ErrorKind, FeatureBlock, IndexList, MoveDelta, PluginError, RefreshTrigger,
    RelativePiece,
};
pub use convert::{
    board_from_position, board_from_setup, move_from_shakmaty, move_to_shakmaty, setup_from_board,
};
pub use decompose::{decompose, PieceChanges, PieceOnSquare};
pub use delta::{DeltaTarget, FeatureDelta, ProductScratch};
pub use feature_set::{term_bit, FeatureSet, Term};
pub use geometry::{Axis, GeometryDescriptor, Grid, Place, PIECE_SHEETS};
pub use module::{PluginModule, PluginModule_Ref, API_VERSION};
pub use piece_table::PieceTable;
pub use registry::{BlockError, LoadError, PluginRegistry, RegisteredBlock, PLUGIN_DIR_ENV};
pub use spec::{Spec, SpecError};
pub use term_geometry::TermGeometry;
pub use types::{
    file_of, flip_rank, pawn_captures, rank_of, square, Board, Color, Move, MoveKind, Role, Square,
    FILE_A, FILE_H, NO_ROLE, NO_SQUARE,
};
