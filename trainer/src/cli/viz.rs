//! `trainer viz`: pictures of a network's first-layer neurons in each block's geometry, weight
//! histograms and, with positions, the block attribution and activation histograms; into a
//! folder, with `insight.md` and a self-contained `insight.html` that shows them all.

use anyhow::{Context, Result};
use std::path::PathBuf;

use clap::Args;
use nnue::Nnue;
use plugin_api::PluginRegistry;

use trainer::atomic_file::write_atomic;
use trainer::data::filter::FilterConfig;
use trainer::data::{self, Format};
use trainer::insight::{self, DEFAULT_NEURONS, Neurons, attribution::trained_features};

/// Arguments of `trainer viz`.
#[derive(Args, Debug)]
pub struct VizArgs {
    /// The network (a thesis `.nn` file or the project's format).
    #[arg(long, value_name = "FILE")]
    pub net: PathBuf,
    /// Output folder (created if needed).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Draw this neuron (repeatable); without it, the strongest by first-layer weight norm.
    #[arg(long, value_name = "K")]
    pub neuron: Vec<usize>,
    /// How many of the strongest neurons to draw when no --neuron is given.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_NEURONS)]
    pub top: usize,
    /// Positions for the block attribution and the activation histograms (any data format);
    /// positions in check or whose best move is a capture are left out, as in training.
    #[arg(long, value_name = "FILE")]
    pub data: Option<PathBuf>,
    /// Format of --data and --train-data, overriding their extensions.
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<Format>,
    /// Number of positions of --data to use.
    #[arg(long, value_name = "N", default_value_t = 20_000)]
    pub positions: usize,
    /// The network's training data (repeatable): features never active in it count as never
    /// trained.
    #[arg(long, value_name = "FILE")]
    pub train_data: Vec<PathBuf>,
}

/// Runs `trainer viz`.
pub fn run(args: &VizArgs, registry: &PluginRegistry) -> Result<()> {
    let nnue = Nnue::load(&args.net, registry)?;
    let net = nnue.network();
    let set = nnue.features();
    let samples = match &args.data {
        Some(path) => Some(data::first_samples(
            path,
            args.format,
            args.positions,
            Some(&FilterConfig::quiet()),
        )?),
        None => None,
    };
    let trained = if args.train_data.is_empty() {
        None
    } else {
        Some(trained_features(set, &args.train_data, args.format)?)
    };
    let neurons = if args.neuron.is_empty() {
        Neurons::Top(args.top)
    } else {
        Neurons::List(args.neuron.clone())
    };
    let result = insight::write(
        &net,
        set,
        samples.as_deref(),
        trained.as_deref(),
        &neurons,
        &args.out,
        ".",
    )
    .with_context(|| format!("{}", args.net.display()))?;
    let title = format!("{} ({})", args.net.display(), set.name());
    let md = format!("# {title}\n\n{}", result.markdown);
    write_atomic(&args.out.join("insight.md"), md.as_bytes())?;
    let html = insight::html::page(&title, &md, &args.out)?;
    write_atomic(&args.out.join("insight.html"), html.as_bytes())?;
    if let Some(a) = &result.attribution {
        println!("{}", a.markdown());
    }
    println!(
        "neurons drawn: {}",
        result
            .neurons
            .iter()
            .map(|k| k.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!("wrote {}", args.out.join("insight.html").display());
    Ok(())
}
