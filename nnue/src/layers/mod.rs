//! The layers after the first, one file per kind of activation, each holding its integer
//! propagation in the engine (with its SIMD versions) and in the reference: [`Activation`],
//! with its byte in the network format ([`WireCode`]), dispatches to them. A new activation is
//! its file here, its arms below, and its float version in the trainer (`trainer::model`).
//! How the layers are wired (skip, dense output) is one [`Plan`] that every walk follows.

mod clipped_relu;
mod plan;
mod sqr_clipped_relu;

pub use plan::{HiddenStep, OutputStep, Plan, SkipRead};

use serde::{Deserialize, Serialize};

use crate::simd::SimdLevel;
use crate::wire_code::{SHAPE_VERSION, WireCode};

/// The activation after a hidden layer, with the layer's shift s
/// ([`Hidden::shift`](crate::shape::Hidden::shift), 6 unless said otherwise).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Activation {
    /// `clamp(x >> s, 0, 127)`: as many outputs as inputs.
    #[serde(rename = "crelu")]
    ClippedRelu,
    /// Stockfish's `[SqrClippedReLU(x) ‖ ClippedReLU(x)]`: `min(127, x² >> (2s + 7))` (the
    /// square of the signed value, `sqr_clipped_relu.h`) then `clamp(x >> s, 0, 127)`, twice as
    /// many outputs as inputs.
    #[serde(rename = "sqr-crelu")]
    SqrClippedRelu,
}

impl WireCode for Activation {
    const FIELD: &'static str = "activation";
    const ALL: &'static [Self] = &[Activation::ClippedRelu, Activation::SqrClippedRelu];

    fn wire(self) -> (u8, u32) {
        match self {
            Activation::ClippedRelu => (0, SHAPE_VERSION),
            Activation::SqrClippedRelu => (1, SHAPE_VERSION),
        }
    }
}

impl Activation {
    /// Outputs per input.
    pub fn fan_out(self) -> usize {
        match self {
            Activation::ClippedRelu => 1,
            Activation::SqrClippedRelu => 2,
        }
    }

    /// Writes the activations of a hidden layer's first `width` sums `sums` at shift `shift`
    /// into `acts` ([`fan_out`](Self::fan_out) per sum); returns whether that also zeroed the
    /// padding after them up to the next run of 32, which the next layer reads whole.
    #[inline(always)]
    pub(crate) fn activate(
        self,
        level: SimdLevel,
        sums: &[i32],
        width: usize,
        shift: u32,
        acts: &mut [u8],
    ) -> bool {
        match self {
            Activation::ClippedRelu => clipped_relu::activate(level, sums, width, shift, acts),
            Activation::SqrClippedRelu => {
                sqr_clipped_relu::activate(level, sums, width, shift, acts)
            }
        }
    }

    /// The reference's activations of a hidden layer's sums `y` (its `width` outputs) at shift
    /// `shift`, in 64 bits ([`crate::reference`]).
    pub(crate) fn reference(self, y: &[i64], shift: u32) -> Vec<i64> {
        match self {
            Activation::ClippedRelu => clipped_relu::reference(y, shift),
            Activation::SqrClippedRelu => sqr_clipped_relu::reference(y, shift),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_activates_as_the_reference() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x5eed);
        for activation in [Activation::ClippedRelu, Activation::SqrClippedRelu] {
            for width in [1usize, 8, 15, 16, 31, 32, 64, 96] {
                // Stockfish's 6; 5 to 8 take its 16-bit way, the others the 32-bit one.
                for shift in [4, 5, 6, 7, 8, 9] {
                    // Sums of every magnitude, both signs, and the edges of the square's cap
                    // and of the clamps.
                    let padded = width.next_multiple_of(32);
                    let mut sums: Vec<i32> = (0..padded)
                        .map(|_| rng.random::<i32>() >> rng.random_range(0..28))
                        .collect();
                    let edges = [i32::MIN, i32::MAX, 32767, 32768, -32768, 127 << 7, -1, 0];
                    for (s, e) in sums.iter_mut().zip(edges) {
                        *s = e;
                    }
                    let wide: Vec<i64> = sums[..width].iter().map(|&s| i64::from(s)).collect();
                    let expected = activation.reference(&wide, shift);
                    for level in SimdLevel::under_test().unwrap_or_else(|e| panic!("{e}")) {
                        let mut acts = vec![0xa5u8; 2 * padded + 32];
                        activation.activate(level, &sums, width, shift, &mut acts);
                        let got: Vec<i64> = acts[..expected.len()]
                            .iter()
                            .map(|&a| i64::from(a))
                            .collect();
                        assert_eq!(got, expected, "{activation:?} {level} width {width}");
                    }
                }
            }
        }
    }
}
