//! The model's float scales: how a float parameter or output maps to the quantized network's
//! integers, all derived from the one declaration of the integer scales in [`nnue::scales`]
//! (see the table in [`crate::model`]).

use nnue::scales::{ACTIVATION_CLIP, HIDDEN_SHIFT, OUTPUT_ONE, OUTPUT_SHIFT, SCORE_ONE};

/// Activation scale s_a: a float activation of 1.0 is 127 in the quantized network.
pub const ACTIVATION_SCALE: f64 = ACTIVATION_CLIP as f64;
/// Hidden (and the thesis's output) weight scale s_W: 64.
pub const WEIGHT_SCALE: f64 = (1u32 << HIDDEN_SHIFT) as f64;
/// The thesis's output shift as a factor: 16.
pub const THESIS_OUTPUT_DIVISOR: f64 = (1u32 << OUTPUT_SHIFT) as f64;
/// Score units per unit of the thesis's float output layer: `s_a · s_W / 16` = 127 · 64 / 16 =
/// 508.
pub const OUTPUT_SCALE: f64 = ACTIVATION_SCALE * WEIGHT_SCALE / THESIS_OUTPUT_DIVISOR;
/// Score units per unit of the float output under Stockfish's rule: nnue-pytorch's
/// `nnue2score`, 600.
pub const STOCKFISH_OUTPUT_SCALE: f64 = SCORE_ONE as f64;
/// Scale of the PSQT weights and of Stockfish's output bias: 600 · 16 (nnue-pytorch's
/// `nnue2score · weight_scale_out`).
pub const PSQT_SCALE: f64 = OUTPUT_ONE as f64;
/// Scale of the output weights under Stockfish's rule: 9600 / 127.
pub const STOCKFISH_OUTPUT_WEIGHT_SCALE: f64 = PSQT_SCALE / ACTIVATION_SCALE;
/// Largest float hidden or output weight: 127 / 64 (an `i8` after ×64).
pub const MAX_HIDDEN_WEIGHT: f64 = 127.0 / WEIGHT_SCALE;
/// Largest float output weight under Stockfish's rule: 127² / 9600 (an `i8` after ×9600/127).
pub const MAX_STOCKFISH_OUTPUT_WEIGHT: f64 = 127.0 / STOCKFISH_OUTPUT_WEIGHT_SCALE;
/// Largest float first-layer weight or bias: 32767 / 127 (an `i16` after ×127).
pub const MAX_L1_WEIGHT: f64 = 32767.0 / ACTIVATION_SCALE;
/// Largest float first-layer weight of a block stored as `i8`: 127 / 127 (nnue-pytorch clamps
/// its threat weights the same way, to `±127 / ft_quantized_one`).
pub const MAX_NARROW_L1_WEIGHT: f64 = 127.0 / ACTIVATION_SCALE;
/// Largest float hidden bias: an `i32` after ×64·127.
pub const MAX_HIDDEN_BIAS: f64 = 2_147_483_647.0 / (WEIGHT_SCALE * ACTIVATION_SCALE) * 0.999;
/// Largest float output bias: an `i32` after ×16·508.
pub const MAX_OUTPUT_BIAS: f64 = 2_147_483_647.0 / (THESIS_OUTPUT_DIVISOR * OUTPUT_SCALE) * 0.999;
/// Largest float output bias under Stockfish's rule: an `i32` after ×9600.
pub const MAX_STOCKFISH_OUTPUT_BIAS: f64 = 2_147_483_647.0 / PSQT_SCALE * 0.999;
/// The factor of a product of two activations (the pairwise product, the squared ReLU): the
/// quantized product of two values of 127 is shifted right by 7, so 1.0 · 1.0 is 127 · 127 /
/// 128 in activation units (nnue-pytorch's `127/128`).
pub const PRODUCT_SCALE: f64 = ACTIVATION_SCALE / 128.0;
/// The piece values (pawn, knight, bishop, rook, queen; Stockfish's internal units) the PSQT
/// weights start from: nnue-pytorch's `halfka_psqts` (`halfka_v2_hm.py`).
pub const PSQT_PIECE_VALUES: [f64; 5] = [126.0, 781.0, 825.0, 1276.0, 2538.0];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_float_scales_are_the_documented_numbers() {
        assert_eq!(
            (ACTIVATION_SCALE, WEIGHT_SCALE, OUTPUT_SCALE),
            (127.0, 64.0, 508.0)
        );
        assert_eq!((STOCKFISH_OUTPUT_SCALE, PSQT_SCALE), (600.0, 9600.0));
    }
}
