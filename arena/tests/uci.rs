//! The UCI client against this workspace's `host` engine and against fake engines.

use std::path::PathBuf;
use std::time::Duration;

use arena::uci::{EngineProcess, EngineSpec, SearchLimit, UciError};

fn net() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/nets/thesis/all.nn")
}

#[test]
fn searches_with_host_and_a_network() {
    let spec = EngineSpec::parse(net().to_str().unwrap()).expect("host binary and all.nn");
    assert_eq!(spec.name, "all");
    assert_eq!(spec.options[0].0, "EvalFile");
    let mut engine = EngineProcess::start(&spec).unwrap();
    assert_eq!(engine.name(), "all");
    assert!(engine.id_name().is_some());
    engine.new_game().unwrap();
    let timeout = Duration::from_secs(30);
    let result = engine
        .search(None, &[], &SearchLimit::Nodes(500), timeout)
        .unwrap();
    assert_eq!(result.best_move.len(), 4);
    assert!(result.score.is_some() && result.depth.is_some());
    assert!(result.nodes.is_some());
    assert_eq!(result.pv.first(), Some(&result.best_move));
    // From a FEN: the scholar's mate in one is found and scored as mate.
    let fen = "r1bqkbnr/pppp1ppp/2n5/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 2 3";
    let result = engine
        .search(Some(fen), &[], &SearchLimit::Depth(3), timeout)
        .unwrap();
    assert_eq!(result.best_move, "h5f7");
    assert_eq!(result.score, Some(arena::uci::Score::Mate(1)));
    // From the start position with moves, under a move time.
    let moves = vec!["g1f3".to_string(), "d7d5".to_string()];
    let result = engine
        .search(
            None,
            &moves,
            &SearchLimit::MoveTime(Duration::from_millis(50)),
            timeout,
        )
        .unwrap();
    assert!(result.elapsed < Duration::from_secs(5));
    engine.quit();
}

#[cfg(unix)]
#[test]
fn timeouts_and_crashes_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let script = |name: &str, on_go: &str| {
        let path = dir.path().join(name);
        let text = format!(
            "#!/bin/sh\nwhile read -r cmd rest; do\n  case \"$cmd\" in\n    uci) echo uciok;;\n    \
             isready) echo readyok;;\n    go) {on_go};;\n    quit) exit 0;;\n  esac\ndone\n"
        );
        std::fs::write(&path, text).unwrap();
        // Run by `sh`, never executed itself: exec'ing a file just written races with other
        // tests' forks holding it open ("Text file busy").
        EngineSpec::parse(&format!("name={name},cmd=/bin/sh,arg={}", path.display())).unwrap()
    };
    let limit = SearchLimit::Nodes(1);
    let short = Duration::from_millis(200);

    let mut silent = EngineProcess::start(&script("silent", ":")).unwrap();
    let error = silent.search(None, &[], &limit, short).unwrap_err();
    assert!(matches!(error, UciError::Timeout { .. }), "{error}");
    assert!(error.to_string().contains("silent"));
    assert!(!silent.is_usable());

    let mut crasher = EngineProcess::start(&script("crasher", "exit 7")).unwrap();
    let error = crasher.search(None, &[], &limit, short).unwrap_err();
    assert!(matches!(error, UciError::Crashed { .. }), "{error}");
    assert!(error.to_string().contains("crasher"), "{error}");
    assert!(!crasher.is_usable());

    // Late, but answers `stop`: still usable.
    let mut late =
        EngineProcess::start(&script("late", "sleep 0.4; echo 'bestmove e2e4'")).unwrap();
    let error = late.search(None, &[], &limit, short).unwrap_err();
    assert!(matches!(error, UciError::Timeout { .. }));
    assert!(late.is_usable());

    let error = EngineProcess::start(&EngineSpec::parse("name=x,cmd=/no/such/engine").unwrap())
        .err()
        .unwrap();
    assert!(matches!(error, UciError::Spawn { .. }));
    assert_eq!(error.to_string().lines().count(), 1);
}
