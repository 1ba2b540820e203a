//! `trainer gensfen`: training data by self-play (see [`trainer::gensfen`]).

use anyhow::Result;
use std::path::{Path, PathBuf};

use clap::Args;

use trainer::data::Format;
use trainer::gensfen::{
    self, GensfenConfig, LabelSettings, PlayerSettings, SelfPlaySettings, Target,
};

/// Arguments of `trainer gensfen`.
#[derive(Args, Debug)]
pub struct GensfenArgs {
    /// Output file (.binpack, .bin, .txt/.csv or .compact); its progress record is OUT.progress.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Format of the output, overriding its extension.
    #[arg(long, value_name = "FORMAT")]
    pub out_format: Option<Format>,
    /// Play this many games (a shard plays those of its residue); or --positions.
    #[arg(long, value_name = "G")]
    pub games: Option<u64>,
    /// Write this many positions (split evenly over the shards; the last game is cut).
    #[arg(long, value_name = "P")]
    pub positions: Option<u64>,
    /// Who plays, from where, and how long each move is searched.
    #[command(flatten)]
    pub player: PlayerSettings,
    /// Worker threads (one game each; 0: one per core; the output does not depend on it).
    #[arg(long, value_name = "T", default_value_t = 1, value_parser = super::thread_count)]
    pub threads: usize,
    /// Seed of all random choices: one seed, one file.
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub seed: u64,
    /// Play the games numbered i modulo N only (`i/N`, 0 <= i < N).
    #[arg(long, value_name = "i/N", default_value = "0/1")]
    pub shard: String,
    /// How games are played and written.
    #[command(flatten)]
    pub game: SelfPlaySettings,
    /// Who scores the written positions, if not the player's search.
    #[command(flatten)]
    pub label: LabelSettings,
    /// Start over: replace an existing output and its progress record.
    #[arg(long)]
    pub force: bool,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// Parses `i/N`.
pub fn parse_shard(text: &str) -> Result<(u64, u64), String> {
    let bad = || format!("invalid --shard '{text}': expected i/N with 0 <= i < N");
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    let i: u64 = i.trim().parse().map_err(|_| bad())?;
    let n: u64 = n.trim().parse().map_err(|_| bad())?;
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

impl GensfenArgs {
    /// The library configuration.
    pub fn config(&self, plugin_dir: Option<&Path>) -> Result<GensfenConfig> {
        let target = Target::of(self.games, self.positions).map_err(anyhow::Error::msg)?;
        let config = GensfenConfig {
            target,
            player: self.player.clone(),
            plugin_dir: plugin_dir.map(Path::to_path_buf),
            threads: self.threads,
            seed: self.seed,
            shard: parse_shard(&self.shard).map_err(anyhow::Error::msg)?,
            game: self.game.clone(),
            label: self.label.clone(),
            format: self.out_format,
        };
        config.check().map_err(anyhow::Error::msg)?;
        Ok(config)
    }
}

/// Runs `trainer gensfen`; prints a summary line.
pub fn run(args: &GensfenArgs, plugin_dir: Option<&Path>) -> Result<()> {
    let config = args.config(plugin_dir)?;
    let s = gensfen::generate_with(&config, &args.out, !args.quiet, args.force)?;
    if s.already_complete {
        println!(
            "{}: already complete ({} games, {} positions, {} bytes); --force starts over",
            args.out.display(),
            s.games,
            s.positions,
            s.bytes
        );
        return Ok(());
    }
    let secs = s.elapsed.as_secs_f64().max(1e-9);
    let resumed = if s.resumed_games > 0 {
        format!(" (resumed after game {})", s.resumed_games)
    } else {
        String::new()
    };
    let threads = arena::workers::workers(config.threads) as f64;
    let search_secs = s.search_time.as_secs_f64().max(1e-9);
    println!(
        "{}: {} games, {} positions, {} bytes{resumed}",
        args.out.display(),
        s.games,
        s.positions,
        s.bytes
    );
    println!(
        "this run: {} positions in {:.1} s = {:.1} positions/s ({:.1} per thread); {} searches, {} nodes; searches alone: {:.1} per second per thread, {:.0}% of worker time",
        s.new_positions,
        secs,
        s.positions_per_second(),
        s.positions_per_second() / threads,
        s.searches,
        s.nodes,
        s.searches as f64 / search_secs,
        100.0 * search_secs / (secs * threads)
    );
    if s.labels > 0 {
        let label_secs = s.label_time.as_secs_f64().max(1e-9);
        println!(
            "labels ({}): {} labels, {} nodes; {:.1} per second per thread, {:.0}% of worker time",
            config.label.budget.map_or(String::new(), |b| b.to_string()),
            s.labels,
            s.label_nodes,
            s.labels as f64 / label_secs,
            100.0 * label_secs / (secs * threads)
        );
    }
    if config.game.dedup_mb > 0 {
        println!("duplicates dropped: {}", s.duplicates);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse() {
        assert_eq!(parse_shard("0/1"), Ok((0, 1)));
        assert_eq!(parse_shard("2/3"), Ok((2, 3)));
        for bad in ["3/2", "1/0", "x/2", "1", "-1/2", "2/2"] {
            assert!(parse_shard(bad).is_err(), "{bad}");
        }
    }
}
