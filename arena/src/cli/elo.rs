//! `arena elo`: joint maximum-likelihood ratings of the players of PGN files (Ordo's model).

use std::path::PathBuf;

use arena::pgn;
use arena::rating::{self, Anchor, Bootstrap, FitOptions};

/// Arguments of `arena elo`.
#[derive(clap::Args, Debug)]
pub struct EloArgs {
    /// PGN files to read (all games together).
    #[arg(required = true)]
    pub pgn: Vec<PathBuf>,
    /// Fix this player's rating (Ordo `-A`); default: the pool average is fixed.
    #[arg(long, short = 'A')]
    pub anchor: Option<String>,
    /// The anchor's rating, or the pool average (Ordo `-a`).
    #[arg(long, short = 'a', default_value_t = 0.0)]
    pub average: f64,
    /// Errors by parametric bootstrap with this many simulations (Ordo `-s`); default: Hessian.
    #[arg(long, short = 's')]
    pub simulations: Option<usize>,
    /// Seed of the bootstrap.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Rating difference for a 76% score (Ordo's `-z`; 202 is Ordo's default).
    #[arg(long, short = 'z', default_value_t = arena::rating::ORDO_Z76)]
    pub z76: f64,
    /// Use the Elo curve 1 / (1 + 10^(-d/400)) instead of the `-z` scale.
    #[arg(long, conflicts_with = "z76")]
    pub elo_curve: bool,
    /// Print a Markdown table instead of text.
    #[arg(long)]
    pub markdown: bool,
    /// Also print the direct-game statistics of these two players (`A,B`).
    #[arg(long, value_name = "A,B")]
    pub pair: Option<String>,
}

/// Runs `arena elo`.
pub fn run(args: EloArgs) -> Result<(), String> {
    let mut games = Vec::new();
    for path in &args.pgn {
        games.extend(pgn::read_file(path).map_err(|e| e.to_string())?);
    }
    let (results, skipped) = rating::results_from_pgn(&games);
    if skipped > 0 {
        eprintln!("arena elo: {skipped} game(s) without a result or player names skipped");
    }
    let anchor = match args.anchor {
        Some(name) => Anchor::Player {
            name,
            rating: args.average,
        },
        None => Anchor::PoolAverage(args.average),
    };
    let options = FitOptions {
        z76: (!args.elo_curve).then_some(args.z76),
        bootstrap: args.simulations.map(|simulations| Bootstrap {
            simulations,
            seed: args.seed,
        }),
    };
    let ratings = rating::fit(&results, anchor, options).map_err(|e| e.to_string())?;
    if args.markdown {
        print!("{}", rating::render_markdown(&ratings));
    } else {
        print!("{}", rating::render_text(&ratings));
    }
    if let Some(pair) = args.pair {
        let (a, b) = pair
            .split_once(',')
            .ok_or_else(|| format!("--pair `{pair}`: expected two names `A,B`"))?;
        match rating::pairwise(&results, a.trim(), b.trim()) {
            Some(p) => println!("\n{}", rating::render_pairwise(&p)),
            None => {
                return Err(format!(
                    "`{}` and `{}` played no games together",
                    a.trim(),
                    b.trim()
                ));
            }
        }
    }
    Ok(())
}
