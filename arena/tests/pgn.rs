//! The PGN reader: real-world syntax, errors with line numbers, round trip with the writer.

use arena::pgn::{self, Outcome, PgnGame};

fn read(text: &str) -> Result<Vec<PgnGame>, pgn::PgnError> {
    pgn::read_games(text.as_bytes()).collect()
}

#[test]
fn reads_comments_variations_nags_and_several_games() {
    let text = "\u{feff}[Event \"Test \\\"quoted\\\" \\\\ event\"]\r\n\
[White \"A\"][Black \"B\"]\r\n\
[Result \"1-0\"]\r\n\
\r\n\
% escape line\n\
{opening comment} 1. e4 {+0.31/12 0.105s} e5 $1 2.Nf3 ; rest of line\n\
Nc6!? (2... d6 {in a variation} 3. d4 (3. Bc4)) 3... a6 {a comment\n\
over two lines} 4. Bb5 1-0\n\
\n\
[White \"C\"]\n\
[Black \"D\"]\n\
\n\
1. d4 d5 1/2-1/2\n\
[White \"E\"]\n\
[Black \"F\"]\n\
\n\
1. c4 0-1 [White \"G\"] [Black \"H\"]\n\
1. e4\n";
    let games = read(text).unwrap();
    assert_eq!(games.len(), 4);
    let g = &games[0];
    assert_eq!(g.tag("Event"), Some("Test \"quoted\" \\ event"));
    assert_eq!(g.tag("White"), Some("A"));
    assert_eq!(g.moves, ["e4", "e5", "Nf3", "Nc6", "a6", "Bb5"]);
    assert_eq!(g.comments[0], "+0.31/12 0.105s");
    assert_eq!(g.comments[2], "rest of line");
    assert_eq!(g.comments[4], "a comment over two lines");
    assert_eq!(g.outcome, Some(Outcome::WhiteWins));
    // No Result tag: the termination token.
    assert_eq!(games[1].outcome, Some(Outcome::Draw));
    assert_eq!(games[1].moves, ["d4", "d5"]);
    assert_eq!(games[2].outcome, Some(Outcome::BlackWins));
    // Cut off at the end of the file.
    assert_eq!(games[3].tag("White"), Some("G"));
    assert_eq!(games[3].moves, ["e4"]);
    assert_eq!(games[3].outcome, Some(Outcome::Unknown));
}

#[test]
fn result_tag_wins_over_the_token_and_games_without_termination_split() {
    let text =
        "[Result \"0-1\"]\n\n1. e4 e5 *\n[White \"X\"]\n\n1. d4\n[White \"Y\"]\n\n1. c4 1-0\n";
    let games = read(text).unwrap();
    assert_eq!(games.len(), 3);
    assert_eq!(games[0].outcome, Some(Outcome::BlackWins));
    assert_eq!(games[1].moves, ["d4"]);
    assert_eq!(games[1].outcome, Some(Outcome::Unknown));
    assert_eq!(games[2].outcome, Some(Outcome::WhiteWins));
}

#[test]
fn errors_name_the_line() {
    let cases = [
        ("[White \"A\"]\n[Black \"B\n\n1. e4 *\n", 2, "not closed"),
        (
            "[White \"A\"]\n\n1. e4 {never closed\n e5 *\n",
            3,
            "never closed",
        ),
        ("[White A]\n", 1, "quoted value"),
        ("[White \"A\"]\n\n1. e4 e5\n2. Nf3 ) *\n", 4, "`)`"),
        ("[White \"A\"]\n\n1. e4 (1. d4\n", 3, "variation"),
        (
            "[White \"A\"]\n\n1. e4 e5 2. <junk> *\n",
            3,
            "unexpected token",
        ),
    ];
    for (text, line, what) in cases {
        let result: Result<Vec<PgnGame>, _> = pgn::read_games(text.as_bytes()).collect();
        let e = result.unwrap_err();
        assert_eq!(e.line, line, "{text:?}: {e}");
        assert!(e.message.contains(what), "{text:?}: {e}");
        assert!(e.to_string().starts_with(&format!("line {line}: ")));
    }
    // The iterator stops after an error.
    let mut it = pgn::read_games("1. e4 ) *\n1. d4 *\n".as_bytes());
    assert!(it.next().unwrap().is_err());
    assert!(it.next().is_none());
}

#[test]
fn round_trip_with_the_writer() {
    let mut a = PgnGame::default();
    for (k, v) in [
        ("Event", "arena \"test\""),
        ("Site", "here\\there"),
        ("Date", "2024.01.02"),
        ("Round", "3.1"),
        ("White", "net-a"),
        ("Black", "net-b"),
        ("Result", "1/2-1/2"),
        (
            "FEN",
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
        ),
        ("SetUp", "1"),
    ] {
        a.set_tag(k, v);
    }
    let moves = [
        "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6", "O-O", "Be7", "Re1", "b5", "Bb3", "d6",
        "c3", "O-O", "h3", "Nb8", "d4", "Nbd7", "c4", "c6", "cxb5", "axb5", "Nc3", "Bb7", "Bg5",
        "b4", "Nb1", "h6", "Bh4", "c5", "dxe5", "Nxe4", "Bxe7", "Qxe7", "exd6", "Qf6", "Nbd2",
    ];
    a.moves = moves.iter().map(|m| m.to_string()).collect();
    a.comments = (0..moves.len())
        .map(|i| {
            if i % 3 == 0 {
                format!("+0.{i}/{} 0.1s", i + 1)
            } else {
                String::new()
            }
        })
        .collect();
    while a.comments.last().is_some_and(|c| c.is_empty()) {
        a.comments.pop();
    }
    a.outcome = Some(Outcome::Draw);
    let mut b = a.clone();
    b.tags.retain(|(k, _)| k != "FEN" && k != "SetUp");
    b.set_tag("Result", "1-0");
    b.moves.truncate(7);
    b.comments.clear();
    b.outcome = Some(Outcome::WhiteWins);
    let mut text = Vec::new();
    pgn::write_game(&mut text, &a).unwrap();
    pgn::write_game(&mut text, &b).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains("1... e5"), "{text}");
    assert!(text.lines().all(|l| l.len() < 80));
    let back = read(&text).unwrap();
    assert_eq!(back, vec![a, b]);
}

#[test]
fn read_file_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.pgn");
    std::fs::write(&path, "[White \"A\"]\n\n1. e4 }\n").unwrap();
    let e = pgn::read_file(&path).unwrap_err().to_string();
    assert!(e.starts_with(&format!("{}:3: ", path.display())), "{e}");
    assert!(!e.contains('\n'));
    assert!(pgn::read_file(&dir.path().join("missing.pgn")).is_err());
}
