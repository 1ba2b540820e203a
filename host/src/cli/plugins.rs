//! `host plugins`: the blocks of the loaded plugins, one per line.

use std::io::Write;
use std::path::Path;

use plugin_api::PluginRegistry;

/// Prints `name<TAB>size<TAB>layout id<TAB>origin<TAB>description` for every block.
pub fn run(plugin_dir: Option<&Path>, out: &mut impl Write) -> Result<(), String> {
    let registry = PluginRegistry::discover(plugin_dir).map_err(|e| e.to_string())?;
    let io = |e: std::io::Error| format!("cannot write output: {e}");
    writeln!(out, "block\tsize\tlayout_id\tplugin\tdescription").map_err(io)?;
    for b in registry.blocks() {
        let d = &b.descriptor;
        writeln!(
            out,
            "{}\t{}\t{:016x}\t{} ({})\t{}",
            d.name, d.size, d.layout_id, b.crate_name, b.origin, d.description
        )
        .map_err(io)?;
    }
    Ok(())
}
