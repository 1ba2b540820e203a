//! `arena tournament`: play engines (or networks through `host`) against each other, in the
//! spirit of cutechess-cli and fastchess, and print each pairing's results.

use std::path::PathBuf;
use std::time::Duration;

use clap::ValueEnum;

use arena::game::{Adjudication, DrawRule, GameSettings, ResignRule};
use arena::move_limit::LimitArgs;
use arena::openings::{self, OpeningOrder};
use arena::rating::{self, Anchor, FitOptions, GameResult};
use arena::tournament::{self, TournamentConfig, TournamentFormat, TournamentOutcome};
use arena::uci::EngineSpec;

/// Arguments of `arena tournament`.
#[derive(clap::Args, Debug)]
pub struct TournamentArgs {
    /// An engine: `name=X,cmd=PATH,arg=..,option.Hash=16`, `name=X,net=FILE` (host with that
    /// network), `cmd=host` (host, built-in evaluation), or just a network file. Repeat it.
    #[arg(long = "engine", value_name = "SPEC", required = true)]
    engines: Vec<String>,
    /// The first engine plays each of the others (instead of a round robin).
    #[arg(long)]
    gauntlet: bool,
    /// EPD or FEN file of openings (default: the start position).
    #[arg(long, value_name = "FILE")]
    openings: Option<PathBuf>,
    /// Opening order.
    #[arg(long, value_enum, default_value = "sequential")]
    openings_order: Order,
    /// Seed for the random opening order.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Play only batch I of N (I/N, from 0/N): a contiguous share of the game pairs, numbered
    /// as in the whole tournament, for tournaments split over several machines.
    #[arg(long, value_name = "I/N", default_value = "0/1", value_parser = parse_batch)]
    batch: (usize, usize),
    /// Game pairs (one opening, both colours) per pairing.
    #[arg(long, default_value_t = 1)]
    rounds: usize,
    /// Games played in parallel (0: one per core).
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
    /// How long each move is searched: exactly one of --nodes, --depth, --movetime, --tc.
    #[command(flatten)]
    limit: LimitArgs,
    /// Grace beyond the clock before a time loss, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 100)]
    timemargin: u64,
    /// Resign adjudication: a side at least this many centipawns behind in both engines' eyes...
    #[arg(long, value_name = "CP")]
    resign_score: Option<i32>,
    /// ...for this many consecutive moves of each engine.
    #[arg(long, value_name = "N", default_value_t = 3)]
    resign_moves: u32,
    /// Draw adjudication: both engines' |score| at most this many centipawns...
    #[arg(long, value_name = "CP")]
    draw_score: Option<i32>,
    /// ...for this many consecutive moves of each engine...
    #[arg(long, value_name = "N", default_value_t = 8)]
    draw_moves: u32,
    /// ...from this full move number on.
    #[arg(long, value_name = "N", default_value_t = 40)]
    draw_movenumber: u32,
    /// A draw once each side made this many moves.
    #[arg(long, value_name = "N")]
    maxmoves: Option<u32>,
    /// PGN file the games are appended to.
    #[arg(long, value_name = "FILE")]
    pgn: Option<PathBuf>,
    /// The PGN Event tag.
    #[arg(long, default_value = "arena tournament")]
    event: String,
}

/// Opening order on the command line.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum Order {
    Sequential,
    Random,
}

/// Runs `arena tournament`.
pub fn run(args: TournamentArgs) -> Result<(), String> {
    let config = config_from(&args)?;
    let outcome = tournament::run(&config, true).map_err(|e| e.to_string())?;
    print!("{}", report(&outcome));
    print_ratings(&outcome);
    Ok(())
}

fn config_from(args: &TournamentArgs) -> Result<TournamentConfig, String> {
    let players = args
        .engines
        .iter()
        .map(|s| EngineSpec::parse(s).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    let limit = args
        .limit
        .limit()
        .ok_or("give one of --tc, --nodes, --movetime, --depth")?
        .search_limit();
    let mut game = GameSettings::new(limit);
    game.time_margin = Duration::from_millis(args.timemargin);
    game.adjudication = Adjudication {
        resign: args.resign_score.map(|score_cp| ResignRule {
            score_cp,
            moves: args.resign_moves,
        }),
        draw: args.draw_score.map(|score_cp| DrawRule {
            move_number: args.draw_movenumber,
            score_cp,
            moves: args.draw_moves,
        }),
        max_moves: args.maxmoves,
    };
    let openings = match &args.openings {
        Some(path) => openings::read_openings(path).map_err(|e| e.to_string())?,
        None => Vec::new(),
    };
    Ok(TournamentConfig {
        players,
        format: if args.gauntlet {
            TournamentFormat::Gauntlet
        } else {
            TournamentFormat::RoundRobin
        },
        openings,
        opening_order: match args.openings_order {
            Order::Sequential => OpeningOrder::Sequential,
            Order::Random => OpeningOrder::Random,
        },
        rounds: args.rounds,
        game,
        concurrency: args.concurrency,
        pgn: args.pgn.clone(),
        event: args.event.clone(),
        seed: args.seed,
        batch: args.batch,
    })
}

/// Parses `I/N` with `I < N`.
fn parse_batch(text: &str) -> Result<(usize, usize), String> {
    let bad = || format!("--batch '{text}': expected I/N with 0 <= I < N");
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (i.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
    if i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

/// Joint maximum-likelihood Elo ratings of the players (pool average 0), when they can be fit.
fn print_ratings(outcome: &TournamentOutcome) {
    let results: Vec<GameResult> = outcome
        .games
        .iter()
        .filter_map(|g| {
            Some(GameResult {
                white: outcome.players[g.white].clone(),
                black: outcome.players[g.black].clone(),
                white_score: g.record.outcome.white_score()?,
            })
        })
        .collect();
    let options = FitOptions::default();
    match rating::fit(&results, Anchor::PoolAverage(0.0), options) {
        Ok(ratings) => print!("\n{}", rating::render_text(&ratings)),
        Err(e) => eprintln!("arena tournament: no ratings: {e}"),
    }
}

/// The final tables: each pairing's W/D/L and score, then each player's score and failures.
fn report(outcome: &TournamentOutcome) -> String {
    let names = &outcome.players;
    let width = names.iter().map(|n| n.len()).max().unwrap_or(4).max(6);
    let mut out = String::new();
    out.push_str(&format!(
        "{:<w$}  {:<w$}  {:>5} {:>5} {:>5}  {:>11}  {:>6}\n",
        "player",
        "opponent",
        "W",
        "D",
        "L",
        "score",
        "%",
        w = width
    ));
    for r in outcome.pairing_results() {
        let games = r.games();
        out.push_str(&format!(
            "{:<w$}  {:<w$}  {:>5} {:>5} {:>5}  {:>11}  {:>5.1}%\n",
            names[r.first],
            names[r.second],
            r.wins,
            r.draws,
            r.losses,
            format!("{}/{games}", r.points()),
            100.0 * r.points() / f64::from(games.max(1)),
            w = width
        ));
    }
    out.push('\n');
    out.push_str(&format!(
        "{:<w$}  {:>11}  {:>7} {:>7} {:>7} {:>7}\n",
        "player",
        "score",
        "crashes",
        "time",
        "illegal",
        "stalled",
        w = width
    ));
    for (p, name) in names.iter().enumerate() {
        let (points, games) = outcome.score(p);
        let f = outcome.failures[p];
        out.push_str(&format!(
            "{:<w$}  {:>11}  {:>7} {:>7} {:>7} {:>7}\n",
            name,
            format!("{points}/{games}"),
            f.crashes,
            f.time_forfeits,
            f.illegal_moves,
            f.stalls,
            w = width
        ));
    }
    out
}
