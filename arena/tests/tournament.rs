//! Tournaments between real engines: this workspace's `host` with a thesis network against
//! `host` with its built-in evaluation, at a few hundred nodes per move.

use std::path::PathBuf;

use arena::game::{Adjudication, DrawRule, GameSettings, Termination};
use arena::openings::{self, OpeningOrder};
use arena::pgn::{self, Outcome};
use arena::tournament::{self, TournamentConfig};
use arena::uci::{EngineSpec, SearchLimit};

fn shared(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared")
        .join(path)
}

/// `host` with `all.nn` and `host` with the built-in evaluation.
fn players() -> Vec<EngineSpec> {
    let net = EngineSpec::host_with_net(&shared("nets/thesis/all.nn"))
        .expect("the host binary (cargo build -p host) and ../shared/nets/thesis/all.nn");
    let builtin = EngineSpec::host("builtin").expect("host binary");
    vec![net, builtin]
}

fn config() -> TournamentConfig {
    let openings = openings::read_openings(&shared("data/noob_3moves.epd")).unwrap();
    let mut config = TournamentConfig::new(players(), GameSettings::new(SearchLimit::Nodes(300)));
    config.openings = openings;
    config.rounds = 2;
    config.concurrency = 2;
    config
}

#[test]
fn four_games_with_reversed_colours_and_a_valid_pgn() {
    let dir = tempfile::tempdir().unwrap();
    let pgn_path = dir.path().join("games.pgn");
    let mut config = config();
    config.opening_order = OpeningOrder::Random;
    config.seed = 3;
    config.pgn = Some(pgn_path.clone());
    let outcome = tournament::run(&config, false).unwrap();
    assert_eq!(outcome.players, ["all", "builtin"]);
    assert_eq!(outcome.games.len(), 4);
    assert!(outcome.failures.iter().all(|f| *f == Default::default()));
    for g in &outcome.games {
        assert!(!g.record.termination.is_failure(), "{:?}", g.record);
        assert_ne!(g.record.outcome, Outcome::Unknown);
        assert_eq!(g.record.moves_san.len(), g.record.comments.len());
    }
    // Each pair: one opening, both colours.
    for pair in 0..2 {
        let games: Vec<_> = outcome.games.iter().filter(|g| g.pair == pair).collect();
        assert_eq!(games.len(), 2);
        assert_eq!(
            (games[0].white, games[0].black),
            (games[1].black, games[1].white)
        );
        assert_eq!(games[0].record.opening_fen, games[1].record.opening_fen);
        assert!(games[0].record.opening_fen.is_some());
    }
    assert_ne!(
        outcome
            .games
            .iter()
            .find(|g| g.pair == 0)
            .unwrap()
            .record
            .opening_fen,
        outcome
            .games
            .iter()
            .find(|g| g.pair == 1)
            .unwrap()
            .record
            .opening_fen
    );
    let (all, games) = outcome.score(0);
    let (builtin, _) = outcome.score(1);
    assert_eq!((all + builtin, games), (4.0, 4));
    let penta = outcome.pentanomial(0, 1);
    assert_eq!(penta.iter().sum::<u32>(), 2);
    let pairing = outcome.pairing_results();
    assert_eq!(pairing.len(), 1);
    assert_eq!(pairing[0].points(), all);

    // The PGN reads back: four games, the same results, FEN and rounds N.1/N.2.
    let text = std::fs::read_to_string(&pgn_path).unwrap();
    assert_eq!(text.matches("[Event ").count(), 4);
    let games = pgn::read_file(&pgn_path).unwrap();
    assert_eq!(games.len(), 4);
    for (read, played) in games.iter().zip(&outcome.games) {
        assert_eq!(read.outcome, Some(played.record.outcome));
        assert_eq!(
            read.tag("White"),
            Some(outcome.players[played.white].as_str())
        );
        assert_eq!(read.tag("FEN"), played.record.opening_fen.as_deref());
        assert_eq!(read.tag("SetUp"), Some("1"));
        assert_eq!(read.tag("TimeControl"), Some("nodes=300"));
        assert_eq!(
            read.tag("Termination"),
            Some(played.record.termination.to_string().as_str())
        );
        assert_eq!(read.moves, played.record.moves_san);
        let round = format!("{}.{}", played.pair + 1, played.number % 2 + 1);
        assert_eq!(read.tag("Round"), Some(round.as_str()));
        assert_eq!(
            read.tag("PlyCount"),
            Some(played.record.moves_san.len().to_string().as_str())
        );
    }
}

#[test]
fn adjudication_ends_games_early() {
    // Any score is "drawish" from move 1: every game is drawn after one move of each side.
    let mut config = config();
    config.rounds = 1;
    config.game.adjudication = Adjudication {
        draw: Some(DrawRule {
            move_number: 1,
            score_cp: 100_000,
            moves: 1,
        }),
        ..Adjudication::default()
    };
    let outcome = tournament::run(&config, false).unwrap();
    for g in &outcome.games {
        assert_eq!(g.record.termination, Termination::DrawAdjudication);
        assert_eq!(g.record.outcome, Outcome::Draw);
        assert_eq!(g.record.moves_san.len(), 2);
    }
    // A move limit of 3 moves each.
    let mut config = self::config();
    config.rounds = 1;
    config.game.adjudication.max_moves = Some(3);
    let outcome = tournament::run(&config, false).unwrap();
    for g in &outcome.games {
        assert!(g.record.moves_san.len() <= 6, "{:?}", g.record);
        if g.record.moves_san.len() == 6 {
            assert_eq!(g.record.termination, Termination::MaxMoves);
        }
    }
}

#[test]
fn a_gauntlet_plays_only_the_first_player() {
    let mut players = players();
    players.push(EngineSpec::host("builtin2").unwrap());
    let mut config = TournamentConfig::new(players, GameSettings::new(SearchLimit::Nodes(200)));
    config.format = tournament::TournamentFormat::Gauntlet;
    config.game.adjudication.max_moves = Some(4);
    assert_eq!(config.pairings(), [(0, 1), (0, 2)]);
    let outcome = tournament::run(&config, false).unwrap();
    assert_eq!(outcome.games.len(), 4);
    assert!(outcome.games.iter().all(|g| g.white == 0 || g.black == 0));
    // From the start position: no FEN tag.
    let pgn = outcome.games[0].record.to_pgn("e", "1.1");
    assert_eq!(pgn.tag("FEN"), None);
}

#[test]
fn pairs_play_only_the_listed_pairings_and_bad_pairs_are_refused() {
    let mut players = players();
    players.push(EngineSpec::host("builtin2").unwrap());
    let mut config = TournamentConfig::new(players, GameSettings::new(SearchLimit::Nodes(200)));
    config.format = tournament::TournamentFormat::Pairs(vec![(1, 2)]);
    config.game.adjudication.max_moves = Some(4);
    assert_eq!(config.pairings(), [(1, 2)]);
    let outcome = tournament::run(&config, false).unwrap();
    assert_eq!(outcome.games.len(), 2);
    assert!(outcome.games.iter().all(|g| g.white != 0 && g.black != 0));
    for bad in [vec![], vec![(0, 3)], vec![(1, 1)]] {
        config.format = tournament::TournamentFormat::Pairs(bad.clone());
        let err = tournament::run(&config, false).unwrap_err().to_string();
        assert!(err.contains("pair"), "{bad:?}: {err}");
    }
}

/// A tournament played in batches (`batch = (i, n)`, as on several machines) is the whole
/// tournament: every game once, with its number, pair, colours and moves at fixed nodes, and
/// `write_pgn` of the merged games gives the whole tournament's games in schedule order.
#[test]
fn batches_played_apart_merge_into_the_whole_tournament() {
    let mut config = config();
    config.rounds = 3;
    config.opening_order = OpeningOrder::Random;
    config.seed = 5;
    let whole = tournament::run(&config, false).unwrap();
    assert_eq!(whole.games.len(), 6);
    let numbers: Vec<usize> = whole.games.iter().map(|g| g.number).collect();
    assert_eq!(numbers, [0, 1, 2, 3, 4, 5], "schedule order");
    let mut merged = Vec::new();
    for i in 0..2 {
        let mut batch = config.clone();
        batch.batch = (i, 2);
        assert_eq!(batch.batch_pairs(batch.batch).len(), [1, 2][i]);
        merged.extend(tournament::run(&batch, false).unwrap().games);
    }
    merged.sort_by_key(|g| g.number);
    let strip = |games: &[tournament::TournamentGame]| -> Vec<_> {
        games
            .iter()
            .map(|g| {
                (
                    g.number,
                    g.pair,
                    g.white,
                    g.black,
                    g.record.moves_uci.clone(),
                )
            })
            .collect()
    };
    assert_eq!(strip(&merged), strip(&whole.games));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("merged.pgn");
    tournament::write_pgn(&path, &config, &merged).unwrap();
    let games = pgn::read_file(&path).unwrap();
    let rounds: Vec<&str> = games
        .iter()
        .map(|g| g.tag("Round").unwrap_or_default())
        .collect();
    assert_eq!(rounds, ["1.1", "1.2", "2.1", "2.2", "3.1", "3.2"]);
    let mut bad = config.clone();
    bad.batch = (2, 2);
    assert!(
        tournament::run(&bad, false)
            .unwrap_err()
            .to_string()
            .contains("batch 2 of 2")
    );
}
