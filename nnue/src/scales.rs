//! The quantization scales, declared once: what the engine's integer arithmetic divides by, and
//! what the trainer multiplies its float parameters by when it exports a network (thesis
//! §4.4.1; Stockfish `nnue_architecture.h` and nnue-pytorch `model.py` at 5225117).
//!
//! | float value of 1.0 | integer | where |
//! | --- | --- | --- |
//! | an activation (accumulator, clipped ReLU) | 127 ([`ACTIVATION_CLIP`]) | s_a |
//! | a hidden (or the thesis's output) weight | 64 (`1 << HIDDEN_SHIFT`) | s_W |
//! | a hidden pre-activation | 127 · 64 = 8128 ([`HIDDEN_ONE`]) | Stockfish's "1.0 = 127·2^6" |
//! | the thesis's output sum | 16 (`1 << OUTPUT_SHIFT`) | `out >> 4` |
//! | Stockfish's output and PSQT sums | 600 · 16 = 9600 ([`OUTPUT_ONE`]) | nnue-pytorch |
//! | today's output layer's sum | 128 · 64 · 2 = 16384 ([`SCALED_OUTPUT_ONE`]) | Stockfish 762dd1da9 |

/// Clip of the first-layer and hidden activations: `clamp(x, 0, 127)` (the activation scale
/// s_a = 127 of the thesis §4.4.1, so a float activation of 1.0 is 127).
pub const ACTIVATION_CLIP: i32 = 127;
/// Right shift after a hidden layer: `>> 6` divides by the hidden weight scale s_W = 64.
pub const HIDDEN_SHIFT: u32 = 6;
/// Right shift after the thesis's output layer: `>> 4` divides by the output scale 16.
pub const OUTPUT_SHIFT: u32 = 4;
/// A hidden pre-activation of 1.0: 127 · 64 = 8128 (Stockfish `nnue_architecture.h`, "1.0 =
/// 127·2^6").
pub const HIDDEN_ONE: i32 = ACTIVATION_CLIP << HIDDEN_SHIFT;
/// Score units of a float output of 1.0 under Stockfish's output rule: nnue-pytorch's
/// `nnue2score` (`model.py` at 5225117).
pub const SCORE_ONE: i32 = 600;
/// Stockfish's output scale: a float output of 1.0 is 600 · 16 = 9600 in the output layer's
/// units (nnue-pytorch `model.py` at 5225117: `nnue2score` 600, `weight_scale_out` 16), and
/// the PSQT weights' scale.
pub const OUTPUT_ONE: i32 = SCORE_ONE * 16;
/// The output layer's sum of 1.0 in Stockfish's shape of today: `HiddenOneVal · 2^WeightScaleBits
/// · 2` = 128 · 64 · 2 (`nnue_architecture.h:123-128`, `nnue_common.h:68-71` at 762dd1da9), which
/// [`OutputRule::StockfishScaled`](crate::OutputRule::StockfishScaled) rescales to
/// [`OUTPUT_ONE`].
pub const SCALED_OUTPUT_ONE: i32 = 128 << (HIDDEN_SHIFT + 1);
