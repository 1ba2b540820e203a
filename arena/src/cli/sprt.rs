//! `arena sprt`: the GSPRT on a PGN file or on given result counts.

use std::path::PathBuf;

use arena::pgn;
use arena::sprt::{self, Counts, EloModel, SprtParams};

/// Arguments of `arena sprt`.
#[derive(clap::Args, Debug)]
pub struct SprtArgs {
    /// PGN file with the games (pairs are found by `Round` N.1/N.2 or by opening FEN).
    #[arg(long, conflicts_with_all = ["penta", "wdl"])]
    pub pgn: Option<PathBuf>,
    /// The tested engine's name in the PGN.
    #[arg(long, requires = "pgn")]
    pub engine: Option<String>,
    /// Only games against this opponent (default: all of the engine's games).
    #[arg(long, requires = "pgn")]
    pub opponent: Option<String>,
    /// Pentanomial pair counts `LL,LD,WL+DD,WD,WW` instead of a PGN.
    #[arg(long, value_name = "LL,LD,D2,WD,WW", conflicts_with = "wdl")]
    pub penta: Option<String>,
    /// Trinomial game counts `W,D,L` instead of a PGN.
    #[arg(long, value_name = "W,D,L")]
    pub wdl: Option<String>,
    /// Elo under H0.
    #[arg(long, allow_negative_numbers = true)]
    pub elo0: f64,
    /// Elo under H1.
    #[arg(long, allow_negative_numbers = true)]
    pub elo1: f64,
    /// Type I error.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// Type II error.
    #[arg(long, default_value_t = 0.05)]
    pub beta: f64,
    /// Elo model of elo0/elo1: logistic or normalized.
    #[arg(long, default_value = "logistic")]
    pub model: String,
    /// Use trinomial counts even when games are paired.
    #[arg(long)]
    pub trinomial: bool,
}

fn parse_counts<const N: usize>(text: &str, what: &str) -> Result<[u64; N], String> {
    let values: Vec<u64> = text
        .split(',')
        .map(|v| v.trim().parse::<u64>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("{what} `{text}`: expected {N} whole numbers separated by commas"))?;
    values
        .try_into()
        .map_err(|_| format!("{what} `{text}`: expected {N} numbers"))
}

/// Runs `arena sprt`.
pub fn run(args: SprtArgs) -> Result<(), String> {
    let model = match args.model.as_str() {
        "logistic" => EloModel::Logistic,
        "normalized" => EloModel::Normalized,
        other => {
            return Err(format!(
                "--model `{other}`: expected logistic or normalized"
            ));
        }
    };
    let params = SprtParams {
        elo0: args.elo0,
        elo1: args.elo1,
        alpha: args.alpha,
        beta: args.beta,
        model,
    };
    let counts = if let Some(text) = &args.penta {
        Counts::Pentanomial(parse_counts::<5>(text, "--penta")?)
    } else if let Some(text) = &args.wdl {
        let [w, d, l] = parse_counts::<3>(text, "--wdl")?;
        Counts::Trinomial([l, d, w])
    } else if let Some(path) = &args.pgn {
        let engine = args
            .engine
            .as_deref()
            .ok_or("--pgn needs --engine NAME (the tested engine)")?;
        let games = pgn::read_file(path).map_err(|e| e.to_string())?;
        let found = sprt::counts_from_pgn(&games, engine, args.opponent.as_deref());
        if found.trinomial.iter().sum::<u64>() == 0 {
            return Err(format!(
                "{}: no finished games of `{engine}`{}",
                path.display(),
                args.opponent
                    .as_deref()
                    .map(|o| format!(" against `{o}`"))
                    .unwrap_or_default()
            ));
        }
        println!("Opponents: {}", found.opponents.join(", "));
        if found.unpaired > 0 && !args.trinomial {
            println!(
                "{} game(s) without a partner game are left out of the pentanomial counts",
                found.unpaired
            );
        }
        if args.trinomial {
            Counts::Trinomial(found.trinomial)
        } else {
            found.counts()
        }
    } else {
        return Err("give --pgn FILE --engine NAME, --penta, or --wdl".to_string());
    };
    let report = sprt::evaluate(&counts, params).map_err(|e| e.to_string())?;
    print!("{report}");
    Ok(())
}
