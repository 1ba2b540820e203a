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

pub use halfka::{HalfKav2Hm, halfka_v2_hm_index};
pub use halfkp::{HalfKp, halfkp_index};
pub use k::{K, k_index};
pub use kr::{Kr, kr_index};
pub use relative::{KingRelative, own_king_moves};

plugin_api::export_plugin!(K, Kr, HalfKav2Hm, HalfKp);

#[cfg(test)]
mod tests {
    use super::*;

    plugin_api::conformance_test!(K, Kr, HalfKav2Hm, HalfKp);
}
