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
/// The factor of a product of two activations (the pairwise product, the squared ReLU): the
/// quantized product of two values of 127 is shifted right by 7, so 1.0 · 1.0 is 127 · 127 /
/// 128 in activation units (nnue-pytorch's `127/128`).
pub const PRODUCT_SCALE: f64 = ACTIVATION_SCALE / 128.0;
/// The piece values (pawn, knight, bishop, rook, queen; Stockfish's internal units) the PSQT
/// weights start from: nnue-pytorch's `halfka_psqts` (`halfka_v2_hm.py`).
pub const PSQT_PIECE_VALUES: [f64; 5] = [126.0, 781.0, 825.0, 1276.0, 2538.0];

/// The float scales of one shape's layers, where its layer kinds change them: the first
/// layer's accumulator scale (1.0 is 127, or 255 where the product clips at 255), the pairwise
/// product's factor, each hidden layer's weight scale `2^shift` (its bias scale `2^shift · 127`
/// and the half step its floor shift rounds by), the output layer's scales and the skip
/// difference's factor. For the thesis's and 15.1's shapes these are the constants above.
///
/// Stockfish's shape of today in float (nnue-pytorch's `quantize.py` of 2026, with this
/// project's activation unit of 127): accumulators ×255 clipped at 1.0; the product of two
/// clipped halves `255a · 255b / 512` is `127 · a·b · 65025/65024` in hidden units; `fc_0`'s
/// weights ×128 (its shift 7), so `clamp(y >> 7)` and `y² >> 21` are the usual `clamp(y)` and
/// `y² · 127/128`; the output layer's sum has 1.0 = 128 · 64 · 2 = 16384 (weights ×16384/127),
/// and the skip `fc_0[30] − fc_0[31]`, in units of 128 · 127 there, counts 127/128 of its float
/// difference; positional = 9600 · (out + skip), the float model's 600 · 16.
#[derive(Clone, Debug, PartialEq)]
pub struct ArchScales {
    /// A first-layer weight or bias of 1.0, quantized.
    pub ft: f64,
    /// The pairwise product's float factor (1 for the clipped ReLU).
    pub product: f64,
    /// Per hidden layer: weight scale, bias scale, and the offset added to its quantized biases
    /// (half of its shift's step, so that the floor rounds to nearest).
    pub hidden: Vec<(f64, f64, i64)>,
    /// The output layer's weight scale, bias scale and bias offset.
    pub output: (f64, f64, i64),
    /// The skip difference's float factor.
    pub skip_difference: f64,
}

impl ArchScales {
    /// The scales of `arch`.
    pub fn of(arch: &nnue::Arch) -> ArchScales {
        use nnue::{FtOutput, OutputRule};
        let ft = f64::from(arch.ft_output.clip());
        let product = match arch.ft_output {
            FtOutput::ClippedRelu => 1.0,
            // (ft·a · ft·b >> shift) / 127: 127/128 (PRODUCT_SCALE), or 255²/512/127.
            FtOutput::Pairwise | FtOutput::Pairwise255 => {
                ft * ft / f64::from(1u32 << arch.ft_output.product_shift()) / ACTIVATION_SCALE
            }
        };
        let hidden = arch
            .hidden
            .iter()
            .map(|h| {
                let w = f64::from(1u32 << h.shift);
                (w, w * ACTIVATION_SCALE, (1i64 << h.shift) / 2)
            })
            .collect();
        let scaled = f64::from(nnue::scales::SCALED_OUTPUT_ONE);
        let output = match arch.output {
            OutputRule::Thesis => (
                WEIGHT_SCALE,
                THESIS_OUTPUT_DIVISOR * OUTPUT_SCALE,
                1 << (OUTPUT_SHIFT - 1),
            ),
            OutputRule::Stockfish => (STOCKFISH_OUTPUT_WEIGHT_SCALE, PSQT_SCALE, 0),
            OutputRule::StockfishScaled => (scaled / ACTIVATION_SCALE, scaled, 0),
        };
        let first = arch.hidden.first().map_or(HIDDEN_SHIFT, |h| h.shift);
        let skip_difference = f64::from(1u32 << first) * ACTIVATION_SCALE / scaled;
        ArchScales {
            ft,
            product,
            hidden,
            output,
            skip_difference,
        }
    }

    /// The largest float first-layer weight or bias of an `i16` row.
    pub fn max_l1_weight(&self) -> f64 {
        32767.0 / self.ft
    }

    /// The largest float first-layer weight of an `i8` row.
    pub fn max_narrow_l1_weight(&self) -> f64 {
        127.0 / self.ft
    }

    /// Layer `i`'s scales (the output layer is the last): weight scale, bias scale, offset.
    pub fn layer(&self, i: usize) -> (f64, f64, i64) {
        self.hidden.get(i).copied().unwrap_or(self.output)
    }

    /// Layer `i`'s largest float weight and bias.
    pub fn layer_max(&self, i: usize) -> (f64, f64) {
        let (w, b, _) = self.layer(i);
        (127.0 / w, 2_147_483_647.0 / b * 0.999)
    }
}

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

    #[test]
    fn the_shapes_scales_are_the_constants_and_todays() {
        let thesis = ArchScales::of(&nnue::Arch::thesis(32));
        assert_eq!(thesis.ft, ACTIVATION_SCALE);
        assert_eq!(thesis.hidden, vec![(64.0, 64.0 * 127.0, 32)]);
        assert_eq!(thesis.output, (64.0, 16.0 * 508.0, 8));
        assert_eq!(thesis.layer_max(0).0, MAX_HIDDEN_WEIGHT);
        let v5 = ArchScales::of(&nnue::Arch::sfnnv5());
        assert_eq!(v5.product, PRODUCT_SCALE);
        assert_eq!(v5.output, (STOCKFISH_OUTPUT_WEIGHT_SCALE, PSQT_SCALE, 0));
        assert_eq!(v5.layer_max(2).0, 127.0 / STOCKFISH_OUTPUT_WEIGHT_SCALE);
        let v16 = ArchScales::of(&nnue::Arch::sfnnv16());
        assert_eq!((v16.ft, v16.product), (255.0, 65025.0 / 65024.0));
        assert_eq!(v16.hidden[0], (128.0, 128.0 * 127.0, 64));
        assert_eq!(v16.hidden[1], (64.0, 64.0 * 127.0, 32));
        assert_eq!(v16.output, (16384.0 / 127.0, 16384.0, 0));
        assert_eq!(v16.skip_difference, 127.0 / 128.0);
        assert_eq!(v16.max_narrow_l1_weight(), 127.0 / 255.0);
    }
}
