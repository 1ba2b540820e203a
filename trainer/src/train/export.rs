//! From the float model to the project's quantized network (`nnue`) and back.
//!
//! The mapping is the one of [`crate::model`]: W1 and b1 ×127 (`i16`), W2 and W3 ×64 (`i8`),
//! b2 ×64·127 and b3 ×16·508 (`i32`), each saturated to its type. Half a step is added to b2
//! (32) and b3 (8) so that the quantized pass's floor shifts (`>> 6`, `>> 4`) round to nearest.
//!
//! ## Calibrated rounding
//!
//! The hidden and output weights have a coarse grid (1/64) compared with what short trainings
//! produce (typically a few hundredths), so rounding each weight to nearest moves every hidden
//! neuron's input sum by a sizeable, position-dependent amount: on a network trained for a few
//! minutes, the median error of the output is around 17 score units, with a bias. Given
//! *calibration* activations (the first layer's outputs on a few thousand positions),
//! [`quantize_calibrated`] instead
//!
//! 1. rounds W2 row by row with error feedback (the GPTQ/OBQ scheme): the weights are rounded
//!    one input at a time and the rounding error of each is spread over the inputs not rounded
//!    yet, in proportion to their correlation with it (through the Cholesky factor of the
//!    inverse of `H = E[x·xᵀ]`), which keeps `W2·x` close on typical inputs;
//! 2. corrects b2 by the mean of what remains of `(W2 − W2q)·x`;
//! 3. does the same for W3 on the hidden activations of the quantized layer, and corrects b3 so
//!    that the mean output over the calibration positions is the float model's.
//!
//! On the same network this brings the median error down to about 4 score units. W1 and b1 are
//! rounded to nearest (their grid is fine: 1/127 per feature, about 2 units of output).

use anyhow::{Context, Result, bail};
use std::path::Path;

use nnue::format::encode_own;
use nnue::units::ScoreUnits;
use nnue::{
    BlockInfo, LayerParts, Network, NetworkParts, Plan, Quantization, SkipRead, WeightType,
    term_runs,
};
use plugin_api::FeatureSet;
use tch::{Device, Tensor};

use crate::atomic_file::write_atomic;
use crate::model::{
    ArchScales, Model, PSQT_SCALE, SparseInput, activate, read_by_output, skip_value, w1_columns,
};
use nnue::Shape;

/// Calibration positions used by the training loop's exports (from the validation set).
pub const CALIBRATION_POSITIONS: usize = 8192;
/// `round(v · scale) + offset`, saturated to `lo..=hi`.
fn quantize_one(v: f32, scale: f64, offset: i64, lo: i64, hi: i64) -> i64 {
    ((f64::from(v) * scale).round() as i64 + offset).clamp(lo, hi)
}

fn quantize_vec<T>(values: &[f32], scale: f64, offset: i64, lo: i64, hi: i64) -> Vec<T>
where
    T: TryFrom<i64>,
    <T as TryFrom<i64>>::Error: std::fmt::Debug,
{
    values
        .iter()
        .map(|&v| T::try_from(quantize_one(v, scale, offset, lo, hi)).expect("clamped into range"))
        .collect()
}

/// The identities of `set`'s blocks as a network of it records them, the blocks named in
/// `i8_blocks` stored as `i8`. Fails on a name that is not a block of `set`, or on a product
/// term whose operands would get different types.
pub fn network_blocks(set: &FeatureSet, i8_blocks: &[String]) -> Result<Vec<BlockInfo>> {
    BlockInfo::of_set_with_i8(set, i8_blocks).map_err(|e| anyhow::anyhow!("i8_blocks: {e}"))
}

/// The runs of first-layer rows (first row, rows) that `blocks` store as `i8`, for
/// [`Model::narrow_rows`].
pub fn narrow_rows(name: &str, blocks: &[BlockInfo]) -> Result<Vec<(i64, i64)>> {
    let mut start = 0i64;
    let mut out = Vec::new();
    for (rows, ty) in term_runs(name, blocks)? {
        if ty == WeightType::I8 {
            out.push((start, i64::from(rows)));
        }
        start += i64::from(rows);
    }
    Ok(out)
}

/// The scales of layer `i` of `arch`'s stacks ([`ArchScales`]): weight scale, bias scale, and
/// the offset added to each output's quantized bias (half of the floor shift that follows it,
/// see [`crate::model`]; none for 15.1's skip output, which no shift follows).
fn layer_scales(plan: &Plan, scales: &ArchScales, i: usize) -> (f64, f64, Vec<i64>) {
    let outputs = plan.layers()[i].1;
    let (weight, bias, offset) = scales.layer(i);
    let mut offsets = vec![offset; outputs];
    if let (0, SkipRead::Sum(k)) = (i, plan.skip) {
        offsets[k] = 0;
    }
    (weight, bias, offsets)
}

/// The quantized network of `model` for the feature set `name` with `blocks` (the rows of `i8`
/// blocks saturated to ±127, as training clips them), rounding every value to nearest.
pub fn quantize(model: &Model, name: &str, blocks: Vec<BlockInfo>) -> Result<Network> {
    let vecs = model.to_vecs();
    let arch = model.arch().clone();
    let ft = model.scales().ft;
    let (l1, cols) = (model.shape.l1, w1_columns(&model.shape));
    let (i16_lo, i16_hi) = (i64::from(i16::MIN), i64::from(i16::MAX));
    let (i8_lo, i8_hi) = (i64::from(i8::MIN), i64::from(i8::MAX));
    let (i32_lo, i32_hi) = (i64::from(i32::MIN), i64::from(i32::MAX));
    let mut w1: Vec<i16> = Vec::with_capacity(model.shape.n * l1);
    let p = model.shape.arch.psqt_buckets;
    let mut psqt: Vec<i32> = Vec::with_capacity(model.shape.n * p);
    for row in vecs[0].chunks(cols) {
        w1.extend(quantize_vec::<i16>(&row[..l1], ft, 0, i16_lo, i16_hi));
        psqt.extend(quantize_vec::<i32>(
            &row[l1..l1 + p],
            PSQT_SCALE,
            0,
            i32_lo,
            i32_hi,
        ));
    }
    for (start, rows) in narrow_rows(name, &blocks)? {
        let range = start as usize * l1..(start + rows) as usize * l1;
        w1[range]
            .iter_mut()
            .for_each(|v| *v = (*v).clamp(-127, 127));
    }
    let layers = model.plan().layers();
    let stacks = (0..arch.stacks)
        .map(|k| {
            layers
                .iter()
                .enumerate()
                .map(|(i, &(inputs, outputs))| {
                    let (ws, bs, offsets) = layer_scales(model.plan(), model.scales(), i);
                    let w = &vecs[2 + 2 * i][k * outputs * inputs..(k + 1) * outputs * inputs];
                    let b = &vecs[3 + 2 * i][k * outputs..(k + 1) * outputs];
                    LayerParts {
                        weights: quantize_vec(w, ws, 0, i8_lo, i8_hi),
                        biases: b
                            .iter()
                            .zip(&offsets)
                            .map(|(&v, &o)| quantize_one(v, bs, o, i32_lo, i32_hi) as i32)
                            .collect(),
                    }
                })
                .collect()
        })
        .collect();
    let parts = NetworkParts {
        feature_set: name.to_string(),
        blocks,
        l1,
        arch,
        quantization: Quantization::THESIS,
        w1,
        b1: quantize_vec(&vecs[1], ft, 0, i16_lo, i16_hi),
        psqt,
        stacks,
        // The exporter records the data's units ([`export`]).
        units: ScoreUnits::Centipawns,
    };
    Network::from_parts(parts).context("cannot build the network")
}

/// Calibration data for [`quantize_calibrated`]: positions' first-layer outputs and their piece
/// counts (which pick each one's layer stack).
#[derive(Debug)]
pub struct Calibration {
    /// The first layer's outputs `[M, 2·(L1 + P)]` (as [`Model::activations`] gives them), on
    /// the CPU.
    pub x: Tensor,
    /// Each position's number of pieces.
    pub pieces: Vec<u8>,
}

/// The first-layer outputs of `model` on the positions of `inputs` (no gradients), at most
/// `limit` positions, as calibration data for [`quantize_calibrated`].
pub fn calibration_activations(
    model: &Model,
    inputs: &[&SparseInput],
    limit: usize,
) -> Calibration {
    let mut parts = Vec::new();
    let mut pieces = Vec::new();
    let mut rows = 0usize;
    for input in inputs {
        if rows >= limit {
            break;
        }
        let x = tch::no_grad(|| model.activations(input)).to_device(Device::Cpu);
        let take = (limit - rows).min(input.len);
        rows += take;
        parts.push(x.narrow(0, 0, take as i64));
        pieces.extend_from_slice(&input.pieces[..take]);
    }
    let x = match parts.is_empty() {
        true => Tensor::zeros(
            [0, 2 * w1_columns(&model.shape) as i64],
            (tch::Kind::Float, Device::Cpu),
        ),
        false => Tensor::cat(&parts, 0),
    };
    Calibration { x, pieces }
}

/// Rounds the rows of `w` (`rows × d`, row-major) to multiples of `step` within `±max_q`
/// steps, with GPTQ's error feedback over the inputs `x` (`M × d`): returns the integer steps.
fn gptq(w: &[f64], rows: usize, x: &Tensor, step: f64, max_q: f64) -> Vec<i64> {
    let d = w.len() / rows;
    let m = x.size()[0].max(1) as f64;
    let x = x.to_kind(tch::Kind::Double);
    let mut h = x.tr().matmul(&x) / m;
    let mean_diag = h
        .diagonal(0, 0, 1)
        .mean(tch::Kind::Double)
        .double_value(&[]);
    let damp = 0.01 * mean_diag + 1e-9;
    h += Tensor::eye(d as i64, (tch::Kind::Double, Device::Cpu)) * damp;
    let u = h.inverse().linalg_cholesky(true);
    let u = tensor_to_f64(&u);
    let mut w = w.to_vec();
    let mut q = vec![0i64; w.len()];
    for k in 0..d {
        let ukk = u[k * d + k];
        for r in 0..rows {
            let row = &mut w[r * d..(r + 1) * d];
            let steps = (row[k] / step).round().clamp(-max_q, max_q);
            q[r * d + k] = steps as i64;
            let err = (row[k] - steps * step) / ukk;
            for c in k + 1..d {
                row[c] -= err * u[k * d + c];
            }
        }
    }
    q
}

fn tensor_to_f64(t: &Tensor) -> Vec<f64> {
    let flat = t.to_kind(tch::Kind::Double).contiguous().view([-1]);
    let n = flat.numel();
    let mut out = vec![0f64; n];
    flat.copy_data(&mut out, n);
    out
}

/// [`quantize`] with calibrated rounding of every layer after the first (see the module
/// documentation), in every layer stack, from the calibration positions of that stack; `cal`
/// holds them, from [`calibration_activations`]. A stack without calibration positions (and
/// every stack, with none at all) is rounded to nearest, as [`quantize`] does.
pub fn quantize_calibrated(
    model: &Model,
    name: &str,
    blocks: Vec<BlockInfo>,
    cal: &Calibration,
) -> Result<Network> {
    let mut net = quantize(model, name, blocks)?.to_parts();
    if cal.x.size()[0] == 0 {
        return Network::from_parts(net).context("cannot build the network");
    }
    let arch = model.arch().clone();
    let plan = model.plan();
    let layers = plan.layers();
    let (len, cols) = (cal.x.size()[0], w1_columns(&model.shape) as i64);
    // What the first layer hands on, per calibration position.
    let handed = tch::no_grad(|| model.ft_output(&cal.x.view([len, 2, cols])));
    let stack_of: Vec<usize> = cal
        .pieces
        .iter()
        .map(|&p| arch.stack_of(u32::from(p)))
        .collect();
    let params: Vec<Tensor> = model
        .params()
        .iter()
        .map(|t| t.detach().to_device(Device::Cpu).to_kind(tch::Kind::Double))
        .collect();
    let sat = |v: f64| (v.round() as i64).clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
    for (k, stack) in net.stacks.iter_mut().enumerate() {
        let rows: Vec<i64> = (0..len).filter(|&r| stack_of[r as usize] == k).collect();
        if rows.is_empty() {
            continue;
        }
        let x = match arch.stacks {
            1 => handed.shallow_clone(),
            _ => handed.index_select(0, &Tensor::from_slice(&rows)),
        };
        let x = x.to_kind(tch::Kind::Double).to_device(Device::Cpu);
        // The inputs of each layer along the float path and along the quantized one (the same
        // for the first layer), and the skip output of each.
        let (mut h_float, mut h_quant) = (x.shallow_clone(), None::<Tensor>);
        let (mut skip_float, mut skip_quant) = (None::<Tensor>, None::<Tensor>);
        // Every hidden layer's activations, for a dense output layer.
        let (mut all_float, mut all_quant) = (Vec::new(), Vec::new());
        for (i, &(inputs, outputs)) in layers.iter().enumerate() {
            if i + 1 == layers.len() {
                h_float = read_by_output(plan, &all_float);
                h_quant = Some(read_by_output(plan, &all_quant));
            }
            let (weight_scale, bias_scale, offsets) = layer_scales(plan, model.scales(), i);
            let at = k as i64 * outputs as i64;
            let w = params[2 + 2 * i].narrow(0, at, outputs as i64);
            let b = params[3 + 2 * i].narrow(0, at, outputs as i64);
            let quant_in = h_quant.as_ref().unwrap_or(&h_float);
            let q = gptq(
                &tensor_to_f64(&w),
                outputs,
                quant_in,
                1.0 / weight_scale,
                127.0,
            );
            let wq = Tensor::from_slice(
                &q.iter()
                    .map(|&v| v as f64 / weight_scale)
                    .collect::<Vec<_>>(),
            )
            .view([outputs as i64, inputs as i64]);
            let last = i + 1 == layers.len();
            let b_corrected = if last {
                let with_skip = |out: Tensor, skip: &Option<Tensor>| match skip {
                    Some(s) => out + s.view([-1, 1]),
                    None => out,
                };
                let out_float = with_skip(h_float.matmul(&w.tr()) + &b, &skip_float);
                let out_quant = with_skip(quant_in.matmul(&wq.tr()) + &b, &skip_quant);
                &b + (out_float - out_quant).mean(tch::Kind::Double)
            } else {
                // b + the mean of what the rounding (and, after the first layer, the inputs'
                // own error) moves the sums by.
                let moved = match &h_quant {
                    None => h_float.matmul(&(&w - &wq).tr()),
                    Some(hq) => h_float.matmul(&w.tr()) - hq.matmul(&wq.tr()),
                };
                let b_c = &b + moved.mean_dim(0, false, tch::Kind::Double);
                let y_float = h_float.matmul(&w.tr()) + &b;
                let y_quant = quant_in.matmul(&wq.tr()) + &b_c;
                let step = &plan.hidden[i];
                if i == 0 {
                    let difference = model.scales().skip_difference;
                    let skip_of = |y: &Tensor| skip_value(plan, y, difference);
                    (skip_float, skip_quant) = (skip_of(&y_float), skip_of(&y_quant));
                }
                let act =
                    |y: &Tensor| activate(step.activation, &y.narrow(1, 0, step.width as i64));
                let (next_float, next_quant) = (act(&y_float), act(&y_quant));
                all_float.push(next_float.shallow_clone());
                all_quant.push(next_quant.shallow_clone());
                h_float = next_float;
                h_quant = Some(next_quant);
                b_c
            };
            stack[i].weights = q.iter().map(|&v| v.clamp(-128, 127) as i8).collect();
            stack[i].biases = tensor_to_f64(&b_corrected)
                .into_iter()
                .zip(&offsets)
                .map(|(v, &o)| sat(v * bias_scale + o as f64))
                .collect();
        }
    }
    Network::from_parts(net).context("cannot build the network")
}

/// The float parameters a quantized network stands for (the inverse of [`quantize`] up to
/// rounding), in the order of [`crate::model::param_names`].
pub fn dequantize(net: &Network) -> (Shape, Vec<Tensor>) {
    let parts = net.to_parts();
    let shape = Shape::new(net.n(), net.l1(), parts.arch.clone());
    let (n, l1, cols) = (shape.n, shape.l1, w1_columns(&shape));
    let p = shape.arch.psqt_buckets;
    let ft = ArchScales::of(&shape.arch).ft;
    let mut w1 = Vec::with_capacity(n * cols);
    for r in 0..n {
        w1.extend(
            parts.w1[r * l1..(r + 1) * l1]
                .iter()
                .map(|&x| (f64::from(x) / ft) as f32),
        );
        w1.extend(
            parts.psqt[r * p..(r + 1) * p]
                .iter()
                .map(|&x| (f64::from(x) / PSQT_SCALE) as f32),
        );
        w1.resize((r + 1) * cols, 0.0);
    }
    let f = |v: Vec<f32>, dims: &[i64]| Tensor::from_slice(&v).view(dims);
    let mut tensors = vec![
        f(w1, &[n as i64, cols as i64]),
        f(
            parts
                .b1
                .iter()
                .map(|&x| (f64::from(x) / ft) as f32)
                .collect(),
            &[l1 as i64],
        ),
    ];
    let (plan, scales) = (parts.arch.plan(l1), ArchScales::of(&parts.arch));
    let layers = plan.layers();
    let stacks = parts.arch.stacks as i64;
    for (i, &(inputs, outputs)) in layers.iter().enumerate() {
        let (ws, bs, offsets) = layer_scales(&plan, &scales, i);
        let (mut w, mut b) = (Vec::new(), Vec::new());
        for stack in &parts.stacks {
            w.extend(stack[i].weights.iter().map(|&x| (f64::from(x) / ws) as f32));
            b.extend(
                stack[i]
                    .biases
                    .iter()
                    .zip(&offsets)
                    .map(|(&x, &o)| ((f64::from(x) - o as f64) / bs) as f32),
            );
        }
        let rows = stacks * outputs as i64;
        tensors.push(f(w, &[rows, inputs as i64]));
        tensors.push(f(b, &[rows]));
    }
    (shape, tensors)
}

/// The float model of a quantized network, on `device`.
pub fn model_of_network(net: &Network, device: Device) -> Model {
    let (shape, tensors) = dequantize(net);
    Model::from_tensors(shape, tensors, device)
}

/// Quantizes `model`, trained on `set` (its virtual features folded in, see [`fold_factors`]),
/// calibrated with the activations `calibration` if any rows, and writes it to `path` in the
/// project's format (atomically): an ordinary network of `set`'s plain name, its blocks
/// recorded as `blocks` say ([`network_blocks`]), its output in the data's `units`.
pub fn export(
    model: &Model,
    set: &FeatureSet,
    (blocks, units): (Vec<BlockInfo>, ScoreUnits),
    calibration: &Calibration,
    path: &Path,
) -> Result<Network> {
    let folded = fold_factors(model, set)?;
    let net = quantize_calibrated(
        folded.as_ref().unwrap_or(model),
        set.plain_name(),
        blocks,
        calibration,
    )?
    .with_units(units);
    write_atomic(path, &encode_own(&net))?;
    Ok(net)
}

/// The model of a factorized training (its first layer holding `set`'s virtual features after
/// the N real rows) as a plain one: every real row plus the virtual row it shares, the virtual
/// rows dropped. It computes the same function on real inputs as the factorized model on their
/// training encoding. `None` when `set` has no factorized term.
pub fn fold_factors(model: &Model, set: &FeatureSet) -> Result<Option<Model>> {
    if !set.is_factorized() {
        return Ok(None);
    }
    let n = set.size() as usize;
    if model.shape.n != set.training_size() as usize {
        bail!(
            "the model has {} input rows but '{}' trains {}",
            model.shape.n,
            set.name(),
            set.training_size()
        );
    }
    let pairs = set.factor_pairs()?;
    let real: Vec<i64> = pairs.iter().map(|&(r, _)| i64::from(r)).collect();
    let virt: Vec<i64> = pairs.iter().map(|&(_, v)| i64::from(v)).collect();
    let mut tensors: Vec<Tensor> = model
        .params()
        .iter()
        .map(|t| t.detach().to_device(Device::Cpu).copy())
        .collect();
    let w1 = &tensors[0];
    tensors[0] = w1.narrow(0, 0, n as i64).index_add(
        0,
        &Tensor::from_slice(&real),
        &w1.index_select(0, &Tensor::from_slice(&virt)),
    );
    Ok(Some(Model::from_tensors(
        model.shape.with_n(n),
        tensors,
        model.device(),
    )))
}
