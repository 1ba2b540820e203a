//! The walk over the layers after the first, planned once per shape ([`Arch::plan`]): what each
//! hidden layer reads and where its activations go, where the skip value comes from, and what
//! the output layer reads. The engine's forward pass ([`crate::forward`]), the 64-bit
//! reference ([`crate::reference`]), the trainer's float model (`trainer::model`) and every
//! reader of the layers' sizes ([`Arch::layers`]: the formats, the exporter) follow it, so a new
//! way of wiring the layers (another skip, another output) is planned in `Arch::plan` once
//! instead of being walked anew by each.
//!
//! [`Arch::plan`]: crate::shape::Arch::plan
//! [`Arch::layers`]: crate::shape::Arch::layers

use std::ops::Range;

use super::Activation;

/// The layers after the first of one stack, as every walk takes them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The hidden layers, in order: the first reads the first layer's outputs, each other one
    /// the activations of the layer before.
    pub hidden: Vec<HiddenStep>,
    /// Where the skip value comes from: the first hidden layer's sums.
    pub skip: SkipRead,
    /// What the output layer reads.
    pub output: OutputStep,
}

/// One hidden layer: an affine layer, then its activation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HiddenStep {
    /// Inputs of its affine layer.
    pub inputs: usize,
    /// Outputs of its affine layer: the width, and one more where the skip is an extra output.
    pub outputs: usize,
    /// The outputs that go through the activation.
    pub width: usize,
    /// The activation.
    pub activation: Activation,
    /// The activation's shift.
    pub shift: u32,
    /// Where its activations (width × fan-out) lie among the hidden activations: after the
    /// layer before's where the output reads them all, else from 0 (each layer overwrites the
    /// one before, which it has read).
    pub acts: Range<usize>,
}

/// Where the skip value comes from, among the first hidden layer's sums.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SkipRead {
    /// No skip value.
    None,
    /// The sum of this output (an extra one, not activated; Stockfish 15.1's `fc_0[15]`).
    Sum(usize),
    /// The difference of these two sums (activated as the others too; today's
    /// `fc_0[30] − fc_0[31]`).
    Difference(usize, usize),
}

/// What the output layer reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputStep {
    /// The hidden layers whose activations it reads, side by side: the last, or all of them
    /// (a dense output).
    pub layers: Range<usize>,
    /// Where those activations lie among the hidden activations.
    pub reads: Range<usize>,
}

impl Plan {
    /// The affine layers as (inputs, outputs), the output layer last: the sizes the formats,
    /// the network and the trainer's model hold.
    pub fn layers(&self) -> Vec<(usize, usize)> {
        self.hidden
            .iter()
            .map(|h| (h.inputs, h.outputs))
            .chain(std::iter::once((self.output.reads.len(), 1)))
            .collect()
    }

    /// How many activations the hidden layers place side by side at most (the room they
    /// need).
    pub fn acts_len(&self) -> usize {
        self.hidden.iter().map(|h| h.acts.end).max().unwrap_or(0)
    }

    /// The activations hidden layer `i` reads (`None` for the first, which reads the first
    /// layer's outputs).
    pub fn input_of(&self, i: usize) -> Option<Range<usize>> {
        i.checked_sub(1)
            .map(|before| self.hidden[before].acts.clone())
    }
}
