//! `host net convert` and `host net info`: network files in either format.

use std::io::Write;
use std::path::Path;

use plugin_api::PluginRegistry;

use host::nnue::{NetFormat, Nnue};

/// `host net convert --in FILE --out FILE [--format own|thesis]`: reads either format, checks it
/// against the plugins and writes it in `format`.
pub fn convert(
    plugin_dir: Option<&Path>,
    input: &Path,
    output: &Path,
    format: &str,
) -> Result<(), String> {
    let format: NetFormat = format.parse()?;
    let registry = PluginRegistry::discover(plugin_dir).map_err(|e| e.to_string())?;
    let nnue = Nnue::load(input, &registry).map_err(|e| e.to_string())?;
    nnue.write(output, format).map_err(|e| e.to_string())
}

/// `host net info --net FILE`: format, feature set, blocks, N, L1, L2, quantization.
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
    writeln!(
        out,
        "feature set\t{} ({})",
        n.feature_set(),
        nnue.features().name()
    )
    .map_err(io)?;
    for (b, slot) in n.blocks().iter().zip(nnue.features().slots()) {
        writeln!(
            out,
            "block\t{}\tsize {}\toffset {}\tlayout version {}\tlayout id {:016x}\t{}",
            b.name, b.size, slot.offset, b.layout_version, b.layout_id, slot.block.origin
        )
        .map_err(io)?;
    }
    writeln!(out, "N\t{}", n.n()).map_err(io)?;
    writeln!(out, "L1\t{}", n.l1()).map_err(io)?;
    writeln!(out, "L2\t{}", n.l2()).map_err(io)?;
    let q = n.quantization();
    writeln!(
        out,
        "quantization\tactivation clip {}, hidden shift {}, output shift {}",
        q.activation_clip, q.hidden_shift, q.output_shift
    )
    .map_err(io)?;
    Ok(())
}
