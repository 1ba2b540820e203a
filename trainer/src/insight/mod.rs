//! Seeing inside a trained network: what it takes from each block of its feature set.
//!
//! - [`pictures`]: a neuron's first-layer weights drawn per block in the block's own geometry
//!   (declared by its plugin), and the root mean square of every feature's weights;
//! - [`attribution`]: per block, the loss and the evaluation without it, its contribution to
//!   the accumulators, its dead and never-trained features, its weight size;
//! - histograms of the weights of every layer and of both clipped layers' activations;
//! - [`html`]: Markdown reports as one self-contained HTML page.
//!
//! [`write()`] makes all of them for one network into a folder (`trainer viz`, and every
//! feature set of a `trainer run` report).

pub mod attribution;
pub mod html;
pub mod pictures;

use anyhow::{Context, Result};
use std::fmt::Write as _;
use std::path::Path;

use nnue::Network;
use plugin_api::FeatureSet;

use self::attribution::Attribution;
use self::pictures::{Scale, TermLayout};
use crate::analysis::plot::{self, BarPanel};
use crate::atomic_file::write_atomic;
use crate::data::Sample;
use crate::model::ACTIVATION_SCALE;
use crate::train::loss::ScoreLoss;

/// Neurons pictured when none are named: the strongest by weight norm.
pub const DEFAULT_NEURONS: usize = 4;

/// Which first-layer neurons to draw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Neurons {
    /// The `k` neurons with the largest first-layer weight norm.
    Top(usize),
    /// These neurons.
    List(Vec<usize>),
}

/// What [`write()`] measured and drew.
#[derive(Clone, Debug)]
pub struct Insight {
    /// The neurons drawn, in order.
    pub neurons: Vec<usize>,
    /// The attribution, when positions were given.
    pub attribution: Option<Attribution>,
    /// The section as Markdown, its image links starting with [`write()`]'s `link`.
    pub markdown: String,
}

/// The `k` neurons with the largest L2 norm of their first-layer weights, strongest first, from
/// W1's values (`w1`, N rows of `l1`, as [`nnue::FirstLayer::to_values`] gives them).
pub fn top_neurons(w1: &[i16], l1: usize, k: usize) -> Vec<usize> {
    let mut norms = vec![0f64; l1];
    for (i, w) in w1.iter().enumerate() {
        norms[i % l1] += f64::from(*w).powi(2);
    }
    let mut order: Vec<usize> = (0..l1).collect();
    order.sort_by(|&a, &b| norms[b].total_cmp(&norms[a]).then(a.cmp(&b)));
    order.truncate(k);
    order
}

/// Neuron `k`'s first-layer weights, one per feature, in float units (1.0 = 127), from W1's
/// values (N rows of `l1`).
pub fn neuron_weights(w1: &[i16], l1: usize, k: usize) -> Vec<f64> {
    w1.chunks(l1)
        .map(|row| f64::from(row[k]) / ACTIVATION_SCALE)
        .collect()
}

/// The root mean square over neurons of every feature's weights (float units), from W1's
/// values (N rows of `l1`): how much a feature moves the accumulator at all.
pub fn feature_rms(w1: &[i16], l1: usize) -> Vec<f64> {
    w1.chunks(l1)
        .map(|row| {
            (row.iter().map(|&w| f64::from(w).powi(2)).sum::<f64>() / l1 as f64).sqrt()
                / ACTIVATION_SCALE
        })
        .collect()
}

/// The PSQT weights of bucket `b`, one per feature, divided by 16: in Stockfish's internal
/// units, where a piece-square feature starts at its piece's value (nnue-pytorch's init).
pub fn psqt_weights(net: &Network, b: usize) -> Vec<f64> {
    let buckets = net.arch().psqt_buckets;
    net.psqt()
        .iter()
        .skip(b)
        .step_by(buckets.max(1))
        .map(|&w| f64::from(w) / 16.0)
        .collect()
}

/// The weight histograms' panels: W1, b1, then each later layer's weights and biases (every
/// stack's together), and the PSQT weights.
fn weight_panels(net: &Network, w1: &[i16]) -> Vec<(String, Vec<f64>)> {
    let to_f64 = |v: &[i16]| v.iter().map(|&x| f64::from(x)).collect::<Vec<_>>();
    let mut panels = vec![
        ("W1 (first layer)".to_string(), to_f64(w1)),
        ("b1".to_string(), to_f64(net.b1())),
    ];
    let arch = net.arch();
    let layers = arch.layers(net.l1());
    let stacks = match arch.stacks {
        1 => String::new(),
        k => format!(", {k} stacks"),
    };
    for (i, &(inputs, outputs)) in layers.iter().enumerate() {
        let what = if i + 1 == layers.len() {
            "output".to_string()
        } else {
            format!("hidden {}", i + 1)
        };
        let (mut w, mut b) = (Vec::new(), Vec::new());
        for stack in net.stacks() {
            let layer = &stack[i];
            w.extend(layer.weights().iter().map(|&x| f64::from(x)));
            b.extend(layer.biases().iter().map(|&x| f64::from(x)));
        }
        panels.push((
            format!("W{} ({what}, {inputs} -> {outputs}{stacks})", i + 2),
            w,
        ));
        panels.push((format!("b{}", i + 2), b));
    }
    if arch.psqt_buckets > 0 {
        panels.push((
            format!("PSQT ({} buckets)", arch.psqt_buckets),
            net.psqt().iter().map(|&x| f64::from(x)).collect(),
        ));
    }
    panels
}

/// A histogram of `values` in `bins` equal bins over their range: `(lo, hi, count)`.
fn histogram(values: impl Iterator<Item = f64> + Clone, bins: usize) -> Vec<(f64, f64, f64)> {
    let (lo, hi) = values
        .clone()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if !lo.is_finite() {
        return Vec::new();
    }
    let width = ((hi - lo) / bins as f64).max(1e-9);
    let mut counts = vec![0f64; bins];
    for v in values {
        counts[(((v - lo) / width) as usize).min(bins - 1)] += 1.0;
    }
    counts
        .into_iter()
        .enumerate()
        .map(|(i, c)| (lo + i as f64 * width, lo + (i + 1) as f64 * width, c))
        .collect()
}

/// A histogram's bars of activation counts by value, the values between the two clips only:
/// the spikes at 0 and 127 are in the titles and would flatten everything else.
fn activation_counts(c: &[u64]) -> Vec<(f64, f64, f64)> {
    c.iter()
        .enumerate()
        .filter(|&(v, _)| v != 0 && v != 127)
        .map(|(v, &n)| (v as f64, v as f64 + 1.0, n as f64))
        .collect()
}

/// Each layer stack's first hidden layer over the attribution's positions into
/// `dir/stacks.svg`, with its Markdown.
fn write_stacks(
    a: &attribution::Attribution,
    name: &str,
    dir: &Path,
    link: &str,
) -> Result<String> {
    let mut md = String::new();
    let img = |alt: &str, file: &str| format!("![{alt}]({link}/{file})\n\n");
    let panels: Vec<BarPanel> = a
        .stacks
        .iter()
        .enumerate()
        .map(|(k, st)| {
            let (z, sat) = st.zero_and_saturated();
            BarPanel {
                title: format!(
                    "Stack {k} ({} positions): {:.1}% zero, {:.1}% at 127",
                    st.positions,
                    100.0 * z,
                    100.0 * sat
                ),
                x_desc: "first hidden layer's activation, values 1 to 126".into(),
                y_desc: "values".into(),
                bars: activation_counts(&st.hidden_activations),
                categories: Vec::new(),
            }
        })
        .collect();
    plot::bar_panels(
        &dir.join("stacks.svg"),
        &format!(
            "Each layer stack's first hidden layer, {name}, over {} positions",
            a.positions
        ),
        4,
        &panels,
    )?;
    let _ = writeln!(
        md,
        "Positions per layer stack (chosen by piece count): {}.\n",
        a.stacks
            .iter()
            .enumerate()
            .map(|(k, st)| format!("{k}: {}", st.positions))
            .collect::<Vec<_>>()
            .join(", ")
    );
    md.push_str(&img("layer stacks", "stacks.svg"));
    Ok(md)
}

/// The attribution part of [`write`]: `attribution.json`, `attribution.svg`,
/// `activations.svg` and, with layer stacks, `stacks.svg` into `dir` (`link` as the Markdown
/// names it), with its Markdown.
fn write_attribution(
    net: &Network,
    set: &FeatureSet,
    (samples, trained): (&[Sample], Option<&[bool]>),
    dir: &Path,
    link: &str,
) -> Result<(attribution::Attribution, String)> {
    let name = set.name();
    let mut md = String::new();
    let img = |alt: &str, file: &str| format!("![{alt}]({link}/{file})\n\n");
    let a = attribution::attribute(net, set, samples, &ScoreLoss::default(), trained)?;
    write_atomic(
        &dir.join("attribution.json"),
        &serde_json::to_vec_pretty(&a)?,
    )?;
    let cats = |f: fn(&attribution::TermAttribution) -> f64| {
        a.terms
            .iter()
            .map(|t| (t.term.clone(), f(t)))
            .collect::<Vec<_>>()
    };
    let delta = |t: &attribution::TermAttribution| t.loss_without;
    let mut loss_panel = BarPanel::categories("Loss without the block", "loss", &cats(delta));
    loss_panel.categories.push("(none removed)".into());
    let k = loss_panel.categories.len() - 1;
    loss_panel
        .bars
        .push((k as f64 - 0.4, k as f64 + 0.4, a.loss));
    plot::bar_panels(
        &dir.join("attribution.svg"),
        &format!("Block attribution of {name} ({} positions)", a.positions),
        2,
        &[
            BarPanel::categories(
                "Share of |accumulator contribution| (%)",
                "%",
                &cats(|t| 100.0 * t.contribution_share),
            ),
            loss_panel,
            BarPanel::categories(
                "Mean |eval change| without the block",
                "score units",
                &cats(|t| t.mean_abs_eval_change),
            ),
            BarPanel::categories(
                "Dead features (never active here, %)",
                "%",
                &cats(|t| 100.0 * t.dead),
            ),
        ],
    )?;
    let (x0, x127) = a.first_layer_zero_and_saturated();
    let (h0, h127) = a.hidden_zero_and_saturated();
    plot::bar_panels(
        &dir.join("activations.svg"),
        &format!("Activations of {name} over {} positions", a.positions),
        2,
        &[
            BarPanel {
                title: format!(
                    "First layer: {:.1}% zero, {:.1}% at 127",
                    100.0 * x0,
                    100.0 * x127
                ),
                x_desc: match net.arch().ft_output {
                    nnue::FtOutput::ClippedRelu => {
                        "clamp(accumulator, 0, 127), values 1 to 126".into()
                    }
                    nnue::FtOutput::Pairwise => {
                        "pairwise product of the clipped halves, values 1 to 126".into()
                    }
                    nnue::FtOutput::Pairwise255 => {
                        "pairwise product of the halves clipped at 255, values 1 to 126".into()
                    }
                },
                y_desc: "values".into(),
                bars: activation_counts(&a.first_layer_activations),
                categories: Vec::new(),
            },
            BarPanel {
                title: format!(
                    "Hidden layer: {:.1}% zero, {:.1}% at 127",
                    100.0 * h0,
                    100.0 * h127
                ),
                x_desc: "hidden activation, values 1 to 126".into(),
                y_desc: "values".into(),
                bars: activation_counts(&a.hidden_activations),
                categories: Vec::new(),
            },
        ],
    )?;
    md.push_str(&a.markdown());
    md.push('\n');
    md.push_str(&img("attribution", "attribution.svg"));
    let _ = writeln!(
        md,
        "First-layer activations: {:.1}% zero (what the sparse hidden layer skips), {:.1}% saturated; hidden activations: {:.1}% zero, {:.1}% saturated.\n",
        100.0 * x0,
        100.0 * x127,
        100.0 * h0,
        100.0 * h127
    );
    md.push_str(&img("activations", "activations.svg"));
    if !a.stacks.is_empty() {
        md.push_str(&write_stacks(&a, name, dir, link)?);
    }
    Ok((a, md))
}

/// Draws and measures `net` (bound to `set`) into `dir`: `neuron-K.svg` per neuron,
/// `features.svg` (every feature's weight RMS), `weights.svg` (weight histograms per layer) and,
/// with `samples`, `attribution.svg`, `activations.svg` and `attribution.json` (`trained`:
/// the features active in the training data, if scanned). `link` is the folder as the Markdown
/// section's image links name it.
pub fn write(
    net: &Network,
    set: &FeatureSet,
    samples: Option<&[Sample]>,
    trained: Option<&[bool]>,
    neurons: &Neurons,
    dir: &Path,
    link: &str,
) -> Result<Insight> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let l1 = net.l1();
    // W1 widened once: the neuron choice, the histograms and every picture read it.
    let w1 = net.w1().to_values();
    let neurons = match neurons {
        Neurons::Top(k) => top_neurons(&w1, l1, *k),
        Neurons::List(list) => {
            if let Some(&bad) = list.iter().find(|&&k| k >= l1) {
                anyhow::bail!(
                    "neuron {bad} does not exist: the network has L1 = {l1} (neurons 0..{})",
                    l1 - 1
                );
            }
            list.clone()
        }
    };
    let layouts = TermLayout::of_set(set);
    let name = set.name();
    let save = |file: &str, text: &str| write_atomic(&dir.join(file), text.as_bytes());
    let mut md = String::new();
    let img = |alt: &str, file: &str| format!("![{alt}]({link}/{file})\n\n");

    // Attribution first: it is the answer to "does the network use this block?".
    let attribution = match samples {
        Some(samples) => {
            let (a, text) = write_attribution(net, set, (samples, trained), dir, link)?;
            md.push_str(&text);
            Some(a)
        }
        None => None,
    };

    let panels: Vec<BarPanel> = weight_panels(net, &w1)
        .into_iter()
        .map(|(title, values)| BarPanel {
            title: format!("{title}: {} values", values.len()),
            x_desc: "quantized value".into(),
            y_desc: "count".into(),
            bars: histogram(values.iter().copied(), 60),
            categories: Vec::new(),
        })
        .collect();
    plot::bar_panels(
        &dir.join("weights.svg"),
        &format!("Weights of {name}"),
        3,
        &panels,
    )?;
    md.push_str(&img("weight histograms", "weights.svg"));

    let rms = feature_rms(&w1, l1);
    let top = rms.iter().copied().fold(0.0, f64::max);
    save(
        "features.svg",
        &pictures::draw(
            &format!("{name}: RMS over the {l1} neurons of each feature's weights"),
            &layouts,
            &rms,
            Scale::Sequential(top),
            "RMS weight (float units)",
        )?,
    )?;
    md.push_str(&img("feature weight RMS", "features.svg"));
    // One value per feature drawn in the blocks' geometry around 0, into `file`: its image
    // line for a gallery.
    let diverging = |file: &str, title: &str, values: &[f64], unit: &str, alt: &str| {
        let m = values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        save(
            file,
            &pictures::draw(title, &layouts, values, Scale::Diverging(m), unit)?,
        )?;
        Ok::<_, anyhow::Error>(format!("{}\n", img(alt, file).trim_end()))
    };
    let mut gallery = String::new();
    for &k in &neurons {
        gallery.push_str(&diverging(
            &format!("neuron-{k}.svg"),
            &format!("{name}: first-layer weights of neuron {k}"),
            &neuron_weights(&w1, l1, k),
            "weight (float units, 1.0 = 127)",
            &format!("neuron {k}"),
        )?);
    }
    // One paragraph: the HTML page shows the neurons side by side.
    let _ = writeln!(
        md,
        "Strongest neurons by first-layer weight norm:\n\n{gallery}"
    );
    let buckets = net.arch().psqt_buckets;
    if buckets > 0 {
        let mut gallery = String::new();
        for b in 0..buckets {
            gallery.push_str(&diverging(
                &format!("psqt-{b}.svg"),
                &format!("{name}: PSQT weights of bucket {b}"),
                &psqt_weights(net, b),
                "PSQT weight / 16 (Stockfish's internal units)",
                &format!("PSQT bucket {b}"),
            )?);
        }
        let _ = writeln!(
            md,
            "PSQT weights per bucket (the bucket of a position with n pieces is (n − 1) · {buckets} / 32; a position's PSQT term is half the difference of both sides' sums, / 16):\n\n{gallery}"
        );
    }
    Ok(Insight {
        neurons,
        attribution,
        markdown: md,
    })
}
