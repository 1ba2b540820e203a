//! The `arena` command line: tournaments, ratings from PGN, SPRT, puzzles.

mod cli;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Engine-vs-engine tournaments, ratings and puzzle accuracy for UCI engines.
#[derive(Parser, Debug)]
#[command(name = "arena", version, about)]
struct ArenaArgs {
    #[command(subcommand)]
    command: ArenaCommand,
}

#[derive(Subcommand, Debug)]
enum ArenaCommand {
    /// Play a tournament between UCI engines (or networks, run through `host`).
    Tournament(cli::tournament::TournamentArgs),
    /// Solve puzzles with a UCI engine and report move accuracy.
    Puzzles(cli::puzzles::PuzzlesArgs),
    /// Rate the players of PGN files jointly by maximum likelihood.
    Elo(cli::elo::EloArgs),
    /// Sequential probability ratio test on a PGN (or result counts) with pentanomial statistics.
    Sprt(cli::sprt::SprtArgs),
}

fn main() -> ExitCode {
    let args = ArenaArgs::parse();
    let result = match args.command {
        ArenaCommand::Tournament(a) => cli::tournament::run(a),
        ArenaCommand::Puzzles(a) => cli::puzzles::run(a),
        ArenaCommand::Elo(a) => cli::elo::run(a),
        ArenaCommand::Sprt(a) => cli::sprt::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("arena: {message}");
            ExitCode::FAILURE
        }
    }
}
