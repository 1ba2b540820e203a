//! Misbehaving engines (tiny shell scripts) lose their games with the right termination, and
//! the tournament goes on, restarting them.

#![cfg(unix)]

use std::path::Path;
use std::time::Duration;

use arena::game::{GameSettings, Termination};
use arena::pgn::Outcome;
use arena::tournament::{self, TournamentConfig, TournamentFormat};
use arena::uci::{EngineSpec, SearchLimit};

/// Writes a fake UCI engine that answers `uci` and `isready`, and runs `on_go` for `go`.
fn fake(dir: &Path, name: &str, on_go: &str) -> EngineSpec {
    let path = dir.join(name);
    let script = format!(
        "#!/bin/sh\nwhile read -r cmd rest; do\n  case \"$cmd\" in\n    uci) echo \"id name {name}\"; \
         echo uciok;;\n    isready) echo readyok;;\n    go) {on_go};;\n    quit) exit 0;;\n  esac\ndone\n"
    );
    std::fs::write(&path, script).unwrap();
    // Run by `sh`, never executed itself: exec'ing a file just written races with other tests'
    // forks holding it open ("Text file busy").
    EngineSpec::parse(&format!("name={name},cmd=/bin/sh,arg={}", path.display())).unwrap()
}

fn host() -> EngineSpec {
    EngineSpec::host("host").expect("the host binary (cargo build -p host)")
}

#[test]
fn crashes_illegal_moves_and_stalls_lose_and_the_tournament_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let players = vec![
        host(),
        fake(dir.path(), "crasher", "exit 3"),
        fake(
            dir.path(),
            "illegal",
            "echo 'info depth 1 score cp 5'; echo 'bestmove a1a1'",
        ),
        fake(dir.path(), "silent", ":"),
    ];
    let mut config = TournamentConfig::new(players, GameSettings::new(SearchLimit::Nodes(300)));
    config.format = TournamentFormat::Gauntlet;
    config.concurrency = 2;
    // Generous enough for host on a loaded machine; the silent engine costs this plus the
    // grace after `stop` per game.
    config.game.move_timeout = Duration::from_millis(1500);
    let pgn = dir.path().join("faults.pgn");
    config.pgn = Some(pgn.clone());
    let outcome = tournament::run(&config, false).unwrap();
    assert_eq!(outcome.games.len(), 6);
    for g in &outcome.games {
        let fake = if g.white == 0 { g.black } else { g.white };
        let expected = [
            Termination::Crash,
            Termination::IllegalMove,
            Termination::Stalled,
        ][fake - 1];
        assert_eq!(g.record.termination, expected, "{:?}", g.record);
        let host_wins = if g.white == 0 {
            Outcome::WhiteWins
        } else {
            Outcome::BlackWins
        };
        assert_eq!(g.record.outcome, host_wins);
        assert!(!g.record.detail.is_empty());
    }
    assert_eq!(outcome.failures[0], Default::default());
    assert_eq!(outcome.failures[1].crashes, 2);
    assert_eq!(outcome.failures[2].illegal_moves, 2);
    assert_eq!(outcome.failures[3].stalls, 2);
    assert_eq!(outcome.score(0), (6.0, 6));
    let text = std::fs::read_to_string(&pgn).unwrap();
    assert_eq!(text.matches("[Termination \"crash\"]").count(), 2);
    assert_eq!(text.matches("[Termination \"illegal move\"]").count(), 2);
    assert_eq!(
        text.matches("[Termination \"stalled connection\"]").count(),
        2
    );
}

#[test]
fn an_engine_that_overruns_its_clock_loses_on_time() {
    let dir = tempfile::tempdir().unwrap();
    let players = vec![
        host(),
        fake(dir.path(), "sleepy", "sleep 2; echo 'bestmove e7e5'"),
    ];
    let clock = SearchLimit::Clock {
        white: Duration::from_millis(1000),
        black: Duration::from_millis(1000),
        white_inc: Duration::from_millis(50),
        black_inc: Duration::from_millis(50),
    };
    let mut game = GameSettings::new(clock);
    game.time_margin = Duration::from_millis(50);
    let config = TournamentConfig::new(players, game);
    let outcome = tournament::run(&config, false).unwrap();
    assert_eq!(outcome.games.len(), 2);
    for g in &outcome.games {
        assert_eq!(
            g.record.termination,
            Termination::TimeForfeit,
            "{:?}",
            g.record
        );
        assert_eq!(g.record.loser().map(|c| c.is_white()), Some(g.white == 1));
        assert_eq!(g.record.time_controls[0], "1+0.05");
    }
    assert_eq!(outcome.failures[1].time_forfeits, 2);
}

#[test]
fn bad_engines_give_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = EngineSpec::parse("name=ghost,cmd=/no/such/engine").unwrap();
    let config = TournamentConfig::new(
        vec![host(), missing],
        GameSettings::new(SearchLimit::Nodes(10)),
    );
    let error = tournament::run(&config, false).unwrap_err().to_string();
    assert!(
        error.contains("ghost") && error.contains("/no/such/engine"),
        "{error}"
    );
    assert!(!error.contains('\n'));

    let not_uci = dir.path().join("not-uci");
    std::fs::write(&not_uci, "#!/bin/sh\necho hello\nexit 0\n").unwrap();
    let spec = EngineSpec::parse(&format!(
        "name=not-uci,cmd=/bin/sh,arg={}",
        not_uci.display()
    ))
    .unwrap();
    assert_eq!(spec.name, "not-uci");
    let config = TournamentConfig::new(
        vec![host(), spec],
        GameSettings::new(SearchLimit::Nodes(10)),
    );
    let error = tournament::run(&config, false).unwrap_err().to_string();
    // The script exits at once: depending on timing, writing `uci` finds the pipe closed
    // (a crash) or the reply lacks `uciok`. Either way one line naming the engine.
    assert!(
        error.contains("not-uci") && (error.contains("uciok") || error.contains("crashed")),
        "{error}"
    );
    assert!(!error.contains('\n'), "{error}");

    let config = TournamentConfig::new(
        vec![host(), host()],
        GameSettings::new(SearchLimit::Nodes(10)),
    );
    assert!(
        tournament::run(&config, false)
            .unwrap_err()
            .to_string()
            .contains("named")
    );
}
