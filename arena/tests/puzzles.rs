//! Puzzle scoring: the rule on hand-made answers, file errors, and the real `host` engine.

use std::path::{Path, PathBuf};

use arena::puzzles::{self, PuzzleVerdict};
use arena::uci::{EngineSpec, SearchLimit};

/// Two mates in one for White after Black's c6c5: Ra8# (expected) and Rb8#.
const MATE_TWICE: &str = "7k/6pp/2p5/8/8/8/8/RR4K1 b - - 0 1,c6c5 a1a8,1000,mateIn1";

#[test]
fn scoring_rule_expected_alternative_mate_wrong_illegal() {
    let p = puzzles::parse_puzzle_line(MATE_TWICE, 1).unwrap();
    for (answer, verdict, correct) in [
        ("a1a8", PuzzleVerdict::Expected, 1),
        ("b1b8", PuzzleVerdict::Mate, 1),
        ("g1f1", PuzzleVerdict::Wrong, 0),
        ("e2e4", PuzzleVerdict::Illegal, 0),
        ("junk", PuzzleVerdict::Illegal, 0),
    ] {
        let r = puzzles::score_puzzle(&p, 0, |moves: &[String]| {
            assert_eq!(moves, ["c6c5"]);
            Ok::<_, ()>(answer.to_string())
        })
        .unwrap();
        assert_eq!(r.verdicts, [verdict], "{answer}");
        assert_eq!((r.answers, r.correct), (1, correct), "{answer}");
        assert_eq!(r.solved(), correct == 1);
    }
}

#[test]
fn every_answer_of_a_line_is_scored_on_the_puzzle_positions() {
    // Puzzle 2 of the data file: 4 answers.
    let line = "B4k2/p4p2/1pp1b3/2b1Q3/3NPpP1/5P1r/PPP2KPq/R2R4 w - - 3 29,\
d1d3 h2g3 f2g1 h3h2 d3d2 g3h4 g1f1 e6c4,1987,advantage";
    let p = puzzles::parse_puzzle_line(line, 2).unwrap();
    assert_eq!(p.answers(), 4);
    let mut seen = Vec::new();
    // Right, wrong (illegal), right, wrong (legal: a different move).
    let r = puzzles::score_puzzle(&p, 5, |moves: &[String]| {
        seen.push(moves.len());
        Ok::<_, ()>(match moves.len() {
            1 => "h2g3".to_string(),
            3 => "a1a1".to_string(),
            5 => "g3h4".to_string(),
            _ => "h4g3".to_string(),
        })
    })
    .unwrap();
    assert_eq!(seen, [1, 3, 5, 7]);
    assert_eq!(
        r.verdicts,
        [
            PuzzleVerdict::Expected,
            PuzzleVerdict::Illegal,
            PuzzleVerdict::Expected,
            PuzzleVerdict::Wrong
        ]
    );
    assert_eq!(
        (r.index, r.line, r.rating, r.answers, r.correct),
        (5, 2, 1987, 4, 2)
    );
    assert!(!r.solved());
    // An alternative mate ends the puzzle; the skipped answers count as correct.
    let p = puzzles::parse_puzzle_line(
        "7k/6pp/2p5/8/8/8/8/RR4K1 b - - 0 1,c6c5 b1b7 c5c4 b7b8,1000,mateIn2",
        1,
    )
    .unwrap();
    let r = puzzles::score_puzzle(&p, 0, |_: &[String]| Ok::<_, ()>("a1a8".to_string())).unwrap();
    assert_eq!(r.verdicts, [PuzzleVerdict::Mate]);
    assert_eq!((r.answers, r.correct), (2, 2));
}

#[test]
fn bad_lines_name_file_and_line() {
    let good = MATE_TWICE;
    let cases = [
        ("not a fen,e2e4 e7e5,1000,x", "bad FEN"),
        (
            "7k/6pp/2p5/8/8/8/8/RR4K1 b - - 0 1,c6c5 a1a9,1000,x",
            "not legal",
        ),
        (
            "7k/6pp/2p5/8/8/8/8/RR4K1 b - - 0 1,c6c5 b1b3 a1a8,1000,x",
            "not legal",
        ),
        (
            "7k/6pp/2p5/8/8/8/8/RR4K1 b - - 0 1,c6c5,1000,x",
            "at least one answer",
        ),
        (
            "7k/6pp/2p5/8/8/8/8/RR4K1 b - - 0 1,c6c5 a1a8,high,x",
            "rating",
        ),
        ("7k/6pp/2p5/8/8/8/8/RR4K1 b - - 0 1", "field"),
    ];
    for (bad, what) in cases {
        let text = format!("FEN,moves,rating,themes\n{good}\n\n{bad}\n");
        let e = puzzles::parse_puzzles(&text, "p.csv")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("p.csv:4: "), "{e}");
        assert!(e.contains(what), "{e}");
        assert!(!e.contains('\n'));
    }
    let ok =
        puzzles::parse_puzzles(&format!("FEN,moves,rating,themes\n{good}\n"), "p.csv").unwrap();
    assert_eq!(ok.len(), 1);
    assert_eq!(ok[0].line, 2);
}

/// The shared puzzle file: 1,000 Lichess puzzles (`../shared` sits beside the repository, as
/// the README says and CI provides it).
fn shared_puzzles() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/puzzles.csv")
}

#[test]
fn the_shared_puzzle_file_reads() {
    let list = puzzles::read_puzzles(&shared_puzzles()).unwrap();
    assert_eq!(list.len(), 1000);
    assert!(list.iter().all(|p| p.moves.len() % 2 == 0));
}

#[test]
fn host_engine_is_deterministic_on_the_first_twenty_shared_puzzles() {
    // `cargo test --workspace` builds the host binary next to the test's folder.
    let spec = EngineSpec::host("host").expect("the host binary is built");
    let mut list = puzzles::read_puzzles(&shared_puzzles()).unwrap();
    list.truncate(20);
    let a = puzzles::solve_all(&spec, &list, SearchLimit::Nodes(3000), 1, false).unwrap();
    let acc = a.accuracy();
    assert!((0.0..=1.0).contains(&acc), "{acc}");
    assert_eq!(a.results.len(), 20);
    assert!(
        a.results
            .iter()
            .enumerate()
            .all(|(i, r)| r.index == i && r.line == list[i].line)
    );
    let b = puzzles::solve_all(&spec, &list, SearchLimit::Nodes(3000), 1, false).unwrap();
    assert_eq!(
        a, b,
        "host with Threads=1 and a node limit must be deterministic"
    );
    // Two workers: same results (ucinewgame before each puzzle), same order.
    let c = puzzles::solve_all(&spec, &list, SearchLimit::Nodes(3000), 2, false).unwrap();
    assert_eq!(a, c);
    let total = a.total();
    assert_eq!(total.puzzles, 20);
    assert_eq!(
        total.answers,
        list.iter().map(|p| p.answers()).sum::<usize>()
    );
    let bands = a.by_band();
    assert_eq!(bands.iter().map(|b| b.puzzles).sum::<usize>(), 20);
    let mut csv = Vec::new();
    a.write_csv(&mut csv).unwrap();
    assert_eq!(String::from_utf8(csv).unwrap().lines().count(), 21);
    eprintln!("{a}");
}
