//! Threat inputs, the feature blocks Stockfish's networks added in 2025–2026 beside HalfKAv2_hm,
//! index for index as nnue-pytorch's extractors of July 2026 define them:
//!
//! - [`FullThreats`] (`full_threats`, 59,808): an active feature per (attacking piece on its
//!   square, attacked piece on its square) pair, with redundant pairs removed ([`layout`]).
//! - [`PawnPairs3Wide`] (`pp_3wide`, 4,560): pairs of pawns on the same or adjacent files.
//!
//! Both mirror the board horizontally by the side the own king stands on, so a perspective is
//! refreshed only when its king crosses between the d- and e-files
//! ([`RefreshTrigger::OwnKingSide`](plugin_api::RefreshTrigger)); every other move is an
//! incremental delta for both perspectives in one call. The thesis's mobility blocks (`mb`,
//! `mc`) are their older cousins. Indices are checked against nnue-pytorch's own C++ extractor
//! on positions outside the conformance games (`host/tests/data/nnue-pytorch-features/`).

pub mod attacks;
mod full_threats;
mod king_side;
pub mod layout;
mod pawn_pairs;
mod sliders;

pub use full_threats::{FullThreats, for_each_threat};
pub use layout::{THREAT_FEATURES, threat_index, threat_place};
pub use pawn_pairs::{
    PAWN_PAIR_FEATURES, PawnPairs3Wide, pair_mask, pawn_pair_index, pawn_pair_place,
};

plugin_api::export_plugin!(FullThreats, PawnPairs3Wide);

#[cfg(test)]
mod tests {
    use super::*;

    plugin_api::conformance_test!(FullThreats, PawnPairs3Wide);

    /// Incremental == refresh over long games: ten times the kit's default plies, games up to
    /// 400 plies, so that discovered and blocked rays, captures, castling, en passant and
    /// promotions all occur many times for both colours.
    #[test]
    fn long_random_games() {
        let settings = plugin_api::conformance::Settings {
            plies: 40_000,
            max_game_plies: 400,
            seed: 0x7472_6561_7473,
        };
        let blocks = [
            plugin_api::BlockDescriptor::of::<FullThreats>(),
            plugin_api::BlockDescriptor::of::<PawnPairs3Wide>(),
        ];
        let report = plugin_api::conformance::check_blocks(&blocks, settings)
            .unwrap_or_else(|e| panic!("conformance failure: {e}"));
        assert!(report.covers_king_events(), "{report:?}");
        assert_eq!(report.plies, 40_000);
    }
}
