//! `host net convert`, `host net info` and `host net random`: network files in either format.

use std::io::Write;
use std::path::Path;

use plugin_api::PluginRegistry;

use host::nnue::{
    BlockInfo, NetFormat, Network, NetworkParts, Nnue, Preset, stockfish, write_network,
};

/// `host net convert --in FILE --out FILE [--format own|thesis|stockfish]`: reads any format,
/// checks it against the plugins and writes it in `format` (a shape the format cannot hold is
/// an error before anything is written). The network keeps its score units (this project's
/// format records them); where `format` implies others (Stockfish's, for a network trained in
/// centipawns), the returned note says how the written file will be read.
pub fn convert(
    plugin_dir: Option<&Path>,
    input: &Path,
    output: &Path,
    format: &str,
) -> Result<Option<String>, String> {
    let format = format.parse::<NetFormat>().map_err(|e| e.to_string())?;
    let registry = PluginRegistry::discover(plugin_dir).map_err(|e| e.to_string())?;
    let nnue = Nnue::load(input, &registry).map_err(|e| e.to_string())?;
    nnue.write(output, format).map_err(|e| e.to_string())?;
    let (units, read_back) = (
        nnue.network().units(),
        host::nnue::units_read_back(&nnue.network(), format),
    );
    Ok((units != read_back).then(|| {
        format!(
            "note: {}: the {format} format records no score units; the network's output, in {}, will be read as {}",
            output.display(),
            units.describe(),
            read_back.describe()
        )
    }))
}

/// `host net random --spec S [--l1 W] [--l2 H] [--arch A] [--seed K] [--i8-blocks B,...] --out
/// FILE`: a network of seeded random weights ([`NetworkParts::synthetic_arch`]) for `spec` in
/// the shape of preset `arch`, in this project's format.
pub fn random(
    plugin_dir: Option<&Path>,
    (spec, preset): (&str, Preset),
    [l1, l2]: [usize; 2],
    seed: u64,
    i8_blocks: &[String],
    output: &Path,
) -> Result<(), String> {
    let registry = PluginRegistry::discover(plugin_dir).map_err(|e| e.to_string())?;
    let set = registry.feature_set(spec).map_err(|e| e.to_string())?;
    host::nnue::check_sizes(u64::from(set.size()), l1 as u64, l2 as u64)
        .map_err(|e| format!("cannot make a network of '{spec}': {e}"))?;
    let arch = preset.arch(l2);
    let in_set = |b: &String| {
        set.operands()
            .any(|o| o.descriptor.name.as_str() == b.as_str())
    };
    // Today's shape keeps Stockfish's i8 blocks unless told otherwise: those of the set.
    let named = i8_blocks;
    let i8_blocks: Vec<String> = host::nnue::stockfish::i8_blocks_for(&arch, named)
        .into_iter()
        .filter(|b| !named.is_empty() || in_set(b))
        .collect();
    if let Some(stray) = i8_blocks.iter().find(|b| !in_set(b)) {
        return Err(format!(
            "--i8-blocks: '{stray}' is not a block of the feature set '{spec}'"
        ));
    }
    let mut parts = NetworkParts::synthetic_arch(&set, l1, &arch, seed);
    parts.blocks =
        BlockInfo::of_set_with_i8(&set, &i8_blocks).map_err(|e| format!("--i8-blocks: {e}"))?;
    let net = Network::from_parts(parts)
        .map_err(|e| format!("cannot make a network of '{spec}': {e}"))?;
    write_network(&net, output, NetFormat::Own).map_err(|e| e.to_string())
}

/// `host net reference --seed S --scale K [--blocks B,...] --out FILE`: the seeded random SFNNv16
/// network of the reference vectors ([`stockfish::seeded_random_parts`]), in Stockfish's format,
/// with the description Stockfish's writer gave it: the same bytes. With `blocks`, the network
/// of those blocks alone (the file nnue-pytorch writes for such a set).
pub fn reference(
    plugin_dir: Option<&Path>,
    (seed, scale): (u64, i32),
    blocks: &[String],
    output: &Path,
) -> Result<(), String> {
    let blocks = match blocks {
        [] => stockfish::BlockSet::own(stockfish::Generation::Sfnnv16),
        names => {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            stockfish::BlockSet::of_names(&names).ok_or_else(|| {
                format!(
                    "--blocks {}: name some of {} once each, in that order",
                    names.join(","),
                    stockfish::FEATURE_SET_SFNNV16.replace('+', ", ")
                )
            })?
        }
    };
    let registry = PluginRegistry::discover(plugin_dir).map_err(|e| e.to_string())?;
    let set = registry
        .feature_set(&blocks.feature_set())
        .map_err(|e| e.to_string())?;
    let net = Network::from_parts(stockfish::seeded_random_parts(seed, scale, &blocks, &set))
        .map_err(|e| format!("cannot make the reference network: {e}"))?;
    let bytes = stockfish::encode(&net, &stockfish::seeded_description(seed, scale))
        .map_err(|e| format!("cannot encode the reference network: {e}"))?;
    std::fs::write(output, bytes).map_err(|e| format!("cannot write {}: {e}", output.display()))
}

/// `host net info --net FILE`: format, feature set, its terms and blocks, N, L1, L2, the shape,
/// quantization.
pub fn info(plugin_dir: Option<&Path>, net: &Path, out: &mut impl Write) -> Result<(), String> {
    let registry = PluginRegistry::discover(plugin_dir).map_err(|e| e.to_string())?;
    let nnue = Nnue::load(net, &registry).map_err(|e| e.to_string())?;
    let n = nnue.network();
    let io = |e: std::io::Error| format!("cannot write output: {e}");
    let format = match nnue.own_header() {
        Some(h) => format!("own (version {}, crc32 {:08x})", h.version, h.checksum),
        None => nnue.source_format().to_string(),
    };
    writeln!(out, "file\t{}", net.display()).map_err(io)?;
    writeln!(out, "format\t{format}").map_err(io)?;
    if let Some(d) = nnue.description() {
        writeln!(out, "description\t{d}").map_err(io)?;
    }
    writeln!(
        out,
        "feature set\t{} ({})",
        n.feature_set(),
        nnue.features().name()
    )
    .map_err(io)?;
    // One line per term; a product's factors follow it, indented.
    let mut infos = n.blocks().iter().zip(nnue.features().operands());
    for term in nnue.features().terms() {
        if term.is_product() {
            writeln!(
                out,
                "term\t{}\tsize {}\toffset {}\tlayout id {:016x}",
                term.name, term.size, term.offset, term.layout_id
            )
            .map_err(io)?;
        }
        for (b, block) in infos.by_ref().take(term.factors.len()) {
            let (label, offset) = if term.is_product() {
                ("  factor", String::new())
            } else {
                ("block", format!("\toffset {}", term.offset))
            };
            writeln!(
                out,
                "{label}\t{}\tsize {}{offset}\tlayout version {}\tlayout id {:016x}\tweights {}\t{}",
                b.name, b.size, b.layout_version, b.layout_id, b.weight_type, block.origin
            )
            .map_err(io)?;
        }
    }
    writeln!(out, "N\t{}", n.n()).map_err(io)?;
    writeln!(out, "L1\t{}", n.l1()).map_err(io)?;
    writeln!(out, "L2\t{}", n.l2()).map_err(io)?;
    writeln!(out, "shape\t{}", n.arch()).map_err(io)?;
    writeln!(out, "score units\t{}", n.units().describe()).map_err(io)?;
    // Which Stockfish would load the network in Stockfish's format (`net convert --format
    // stockfish` writes SFNNv5's raw, as 15.1 reads it), or why the format cannot hold it.
    let stockfish = match stockfish::stored_as(&n) {
        Ok((generation, blocks)) => {
            let compressed = nnue.source_compressed();
            stockfish::loaded_by(generation, &blocks, n.l1(), n.arch(), compressed)
        }
        Err(why) => format!("not expressible in Stockfish's formats: {why}"),
    };
    writeln!(out, "stockfish\t{stockfish}").map_err(io)?;
    writeln!(out, "W1 bytes\t{}", n.w1().bytes()).map_err(io)?;
    let q = n.quantization();
    writeln!(
        out,
        "quantization\tactivation clip {}, hidden shift {}, output shift {}",
        q.activation_clip, q.hidden_shift, q.output_shift
    )
    .map_err(io)?;
    Ok(())
}
