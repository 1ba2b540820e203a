//! `trainer score`: networks of any trainer, shape or units held to one held-out set through one
//! code path ([`trainer::train::held_out`]).

use anyhow::Result;
use std::path::PathBuf;

use clap::Args;
use nnue::Nnue;
use nnue::units::ScoreUnits;
use plugin_api::PluginRegistry;

use trainer::data::Format;
use trainer::train::held_out::{HELD_OUT_SCALE, HeldOutSet};

/// Arguments of `trainer score`.
#[derive(Args, Debug)]
pub struct ScoreArgs {
    /// A network (any format host loads; repeat for several).
    #[arg(long = "net", value_name = "FILE", required = true)]
    pub nets: Vec<PathBuf>,
    /// The held-out positions: the first ones of this data file.
    #[arg(long, value_name = "FILE")]
    pub data: PathBuf,
    /// Format of the data file, overriding its extension.
    #[arg(long)]
    pub format: Option<Format>,
    /// The units of the data's scores, overriding its record's or format's.
    #[arg(long, value_name = "UNITS")]
    pub data_units: Option<ScoreUnits>,
    /// Positions scored.
    #[arg(long, default_value_t = 100_000)]
    pub positions: usize,
    /// Kernels of the quantized evaluation (scalar, avx2, avx512, avx512vnni; default: the best).
    #[arg(long)]
    pub simd: Option<String>,
}

/// Prints, per network, the held-out loss and its companions, as a table.
pub fn run(args: &ScoreArgs, registry: &PluginRegistry) -> Result<()> {
    let files = [args.data.clone()];
    let set = HeldOutSet::read(&files, args.format, args.data_units, args.positions)?;
    let kernels = super::kernels(args.simd.as_deref())?;
    println!(
        "# {} positions of {} (scores in {}); loss: mean (W(eval) - W(target))^2, W(cp) = sigmoid(cp / {HELD_OUT_SCALE})",
        set.samples.len(),
        args.data.display(),
        set.units.describe()
    );
    println!("network\tunits\tloss\tconstant's loss\tmean |eval - target| (cp)\tcorrelation");
    for path in &args.nets {
        let nnue = Nnue::load(path, registry).map_err(|e| anyhow::anyhow!("{e}"))?;
        let h = set.score(&nnue, kernels)?;
        println!(
            "{}\t{}\t{:.6}\t{:.6}\t{:.1}\t{:.4}",
            path.display(),
            nnue.network().units(),
            h.mse,
            h.constant_mse,
            h.mean_abs_cp,
            h.correlation
        );
    }
    Ok(())
}
