//! Ratings against independent references: the closed form for two players, a separate
//! Python solver (`tests/data/rating_reference.py`, Zermelo/MM iteration) for round robins,
//! and Ordo's fitting condition (expected points = actual points).

use arena::pgn::{self, Outcome, PgnGame};
use arena::rating::{
    self, Anchor, Bootstrap, FitOptions, GameResult, RatingBound, elo_from_score, normal_cdf,
    pairwise,
};

/// `w` wins, `d` draws, `l` losses of `a` against `b`, colours alternating.
fn matchup(a: &str, b: &str, w: u32, d: u32, l: u32) -> Vec<GameResult> {
    let mut scores = Vec::new();
    scores.extend(std::iter::repeat_n(1.0, w as usize));
    scores.extend(std::iter::repeat_n(0.5, d as usize));
    scores.extend(std::iter::repeat_n(0.0, l as usize));
    scores
        .into_iter()
        .enumerate()
        .map(|(k, s)| {
            if k % 2 == 0 {
                GameResult {
                    white: a.into(),
                    black: b.into(),
                    white_score: s,
                }
            } else {
                GameResult {
                    white: b.into(),
                    black: a.into(),
                    white_score: 1.0 - s,
                }
            }
        })
        .collect()
}

fn three() -> Vec<GameResult> {
    [
        matchup("A", "B", 20, 50, 10),
        matchup("A", "C", 40, 40, 5),
        matchup("B", "C", 25, 50, 15),
    ]
    .concat()
}

fn four() -> Vec<GameResult> {
    [
        matchup("A", "B", 12, 30, 8),
        matchup("A", "C", 30, 20, 10),
        matchup("B", "C", 10, 40, 10),
        matchup("B", "D", 25, 15, 5),
        matchup("C", "D", 20, 20, 20),
        matchup("D", "A", 3, 7, 20),
    ]
    .concat()
}

/// Name, pool rating, pool error, rating with A = 0, error with A = 0.
type Expected = (&'static str, f64, f64, f64, f64);

fn rating(r: &rating::Ratings, name: &str) -> f64 {
    r.player(name).unwrap().rating.unwrap()
}

fn err(r: &rating::Ratings, name: &str) -> f64 {
    r.player(name).unwrap().error_hessian.unwrap()
}

#[test]
fn two_players_match_the_closed_form() {
    for (w, d, l) in [(30, 40, 10), (5, 90, 5), (1, 0, 9), (17, 3, 12)] {
        let games = matchup("X", "Y", w, d, l);
        let s = (w as f64 + 0.5 * d as f64) / (w + d + l) as f64;
        let r = rating::fit(
            &games,
            Anchor::Player {
                name: "Y".into(),
                rating: 0.0,
            },
            FitOptions::elo_curve(),
        )
        .unwrap();
        let want = -400.0 * (1.0 / s - 1.0).log10();
        assert!(
            (rating(&r, "X") - want).abs() < 1e-6,
            "{w}/{d}/{l}: {} vs {want}",
            rating(&r, "X")
        );
        assert_eq!(rating(&r, "Y"), 0.0);
        assert_eq!(err(&r, "Y"), 0.0);
        // Pool average: ±half the difference.
        let r = rating::fit(&games, Anchor::PoolAverage(2300.0), FitOptions::elo_curve()).unwrap();
        assert!((rating(&r, "X") - 2300.0 - want / 2.0).abs() < 1e-6);
    }
}

#[test]
fn round_robins_match_the_python_reference() {
    // From `python3 tests/data/rating_reference.py` (values to 1e-6 Elo).
    let cases: [(Vec<GameResult>, Vec<Expected>); 2] = [
        (
            three(),
            vec![
                ("A", 64.670945, 36.861013, 0.0, 0.0),
                ("B", -2.541638, 35.422148, -67.212583, 62.866062),
                ("C", -62.129307, 35.704116, -126.800252, 63.342780),
            ],
        ),
        (
            four(),
            vec![
                ("A", 85.632351, 45.945903, 0.0, 0.0),
                ("B", 28.578604, 42.152750, -57.053747, 71.006422),
                ("C", -30.003497, 39.099879, -115.635848, 68.828392),
                ("D", -84.207458, 46.626918, -169.839809, 79.092318),
            ],
        ),
    ];
    for (games, want) in cases {
        let pool = rating::fit(&games, Anchor::PoolAverage(0.0), FitOptions::elo_curve()).unwrap();
        let anchored = rating::fit(
            &games,
            Anchor::Player {
                name: "A".into(),
                rating: 0.0,
            },
            FitOptions::elo_curve(),
        )
        .unwrap();
        for (name, r_pool, e_pool, r_anchor, e_anchor) in want {
            assert!((rating(&pool, name) - r_pool).abs() < 1e-3, "{name} pool");
            assert!(
                (err(&pool, name) - e_pool).abs() < 1e-3,
                "{name} pool error"
            );
            assert!(
                (rating(&anchored, name) - r_anchor).abs() < 1e-3,
                "{name} anchored"
            );
            assert!(
                (err(&anchored, name) - e_anchor).abs() < 1e-3,
                "{name} anchored error"
            );
        }
    }
}

#[test]
fn expected_points_equal_actual_points() {
    for games in [three(), four()] {
        let r = rating::fit(&games, Anchor::PoolAverage(0.0), FitOptions::elo_curve()).unwrap();
        for p in &r.players {
            let expected: f64 = games
                .iter()
                .filter_map(|g| {
                    if g.white == p.name {
                        r.expected(&g.white, &g.black)
                    } else if g.black == p.name {
                        r.expected(&g.black, &g.white)
                    } else {
                        None
                    }
                })
                .sum();
            assert!(
                (expected - p.points()).abs() < 1e-6,
                "{}: {expected} vs {}",
                p.name,
                p.points()
            );
        }
    }
}

#[test]
fn ordo_scale_option_stretches_ratings() {
    let games = matchup("X", "Y", 30, 40, 10);
    let opts = FitOptions {
        z76: Some(202.0),
        bootstrap: None,
    };
    let r = rating::fit(
        &games,
        Anchor::Player {
            name: "Y".into(),
            rating: 0.0,
        },
        opts,
    )
    .unwrap();
    let s: f64 = 50.0 / 80.0;
    let want = (s / (1.0 - s)).ln() / ((0.76f64 / 0.24).ln() / 202.0);
    assert!((rating(&r, "X") - want).abs() < 1e-6);
    // A 76% score is exactly 202 points apart.
    let games = matchup("X", "Y", 76, 0, 24);
    let r = rating::fit(
        &games,
        Anchor::Player {
            name: "Y".into(),
            rating: 0.0,
        },
        opts,
    )
    .unwrap();
    assert!((rating(&r, "X") - 202.0).abs() < 1e-6);
}

#[test]
fn perfect_winner_gets_a_floor_like_ordo() {
    let mut games = three();
    games.extend(matchup("P", "A", 6, 0, 0));
    games.extend(matchup("P", "C", 4, 0, 0));
    let r = rating::fit(&games, Anchor::PoolAverage(0.0), FitOptions::elo_curve()).unwrap();
    let p = r.player("P").unwrap();
    assert_eq!(p.bound, RatingBound::AtLeast);
    // From the Python reference: the rating that scores 9.5/10 against A and C.
    assert!(
        (p.rating.unwrap() - 534.930381).abs() < 1e-3,
        "{:?}",
        p.rating
    );
    assert_eq!(r.players[0].name, "P");
    // Others unchanged by P's games (P is removed before the fit).
    assert!((rating(&r, "A") - 64.670945).abs() < 1e-3);
    assert!(rating::render_text(&r).contains(">534.9"));
    // A perfect loser gets a ceiling.
    let mut games = three();
    games.extend(matchup("Q", "B", 0, 0, 3));
    let r = rating::fit(&games, Anchor::PoolAverage(0.0), FitOptions::elo_curve()).unwrap();
    let q = r.player("Q").unwrap();
    assert_eq!(q.bound, RatingBound::AtMost);
    assert!(q.rating.unwrap() < rating(&r, "C"));
    // An anchor with a perfect score is an error, not a panic.
    let e = rating::fit(
        &games,
        Anchor::Player {
            name: "Q".into(),
            rating: 0.0,
        },
        FitOptions::elo_curve(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("Q"), "{e}");
}

#[test]
fn bad_inputs_are_errors() {
    assert!(rating::fit(&[], Anchor::PoolAverage(0.0), FitOptions::elo_curve()).is_err());
    let e = rating::fit(
        &three(),
        Anchor::Player {
            name: "Nobody".into(),
            rating: 0.0,
        },
        FitOptions::elo_curve(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("Nobody"));
    // Two pools that never met.
    let games = [matchup("A", "B", 3, 3, 3), matchup("C", "D", 3, 3, 3)].concat();
    let e = rating::fit(&games, Anchor::PoolAverage(0.0), FitOptions::elo_curve())
        .unwrap_err()
        .to_string();
    assert!(e.contains("not determined"), "{e}");
    // One pool dominates the other without perfect players: no finite maximum.
    let games = [
        matchup("A", "B", 3, 3, 3),
        matchup("C", "D", 3, 3, 3),
        matchup("A", "C", 2, 0, 0),
        matchup("B", "D", 2, 0, 0),
    ]
    .concat();
    let e = rating::fit(&games, Anchor::PoolAverage(0.0), FitOptions::elo_curve())
        .unwrap_err()
        .to_string();
    assert!(e.contains("scored nothing"), "{e}");
}

#[test]
fn bootstrap_is_seeded_and_close_to_the_hessian() {
    let games = four();
    let opts = FitOptions {
        z76: None,
        bootstrap: Some(Bootstrap {
            simulations: 400,
            seed: 7,
        }),
    };
    let anchor = Anchor::Player {
        name: "A".into(),
        rating: 0.0,
    };
    let a = rating::fit(&games, anchor.clone(), opts).unwrap();
    let b = rating::fit(&games, anchor, opts).unwrap();
    assert_eq!(a, b);
    let deq = a.draw_rate_equal.unwrap();
    assert!(deq > 0.3 && deq < 0.7, "{deq}");
    for p in &a.players {
        let boot = p.error_bootstrap.unwrap();
        let hess = p.error_hessian.unwrap();
        if p.name == "A" {
            assert_eq!(boot, 0.0);
        } else {
            // The bootstrap simulates draws (smaller variance than the Hessian's binomial
            // information assumes), so it is somewhat smaller, but of the same size.
            assert!(
                boot > 0.6 * hess && boot < 1.2 * hess,
                "{}: {boot} vs {hess}",
                p.name
            );
        }
    }
}

#[test]
fn pairwise_matches_fastchess_numbers() {
    // fastchess app/tests/elo_test.cpp "EloWDL 2": W 136, L 96, D 111 -> 40.70 ± 30.43.
    let games = matchup("X", "Y", 136, 111, 96);
    let p = pairwise(&games, "X", "Y").unwrap();
    assert_eq!((p.wins, p.draws, p.losses), (136, 111, 96));
    assert!((p.elo - 40.70).abs() < 0.01, "{}", p.elo);
    assert!((p.error - 30.43).abs() < 0.01, "{}", p.error);
    assert!((p.los - normal_cdf(40.0 / 232f64.sqrt())).abs() < 1e-12);
    let q = pairwise(&games, "Y", "X").unwrap();
    assert!((q.elo + p.elo).abs() < 1e-9);
    assert!(pairwise(&games, "X", "Z").is_none());
    assert!((elo_from_score(0.75) - 190.848).abs() < 1e-3);
    assert!((normal_cdf(1.959963984540054) - 0.975).abs() < 1e-12);
    assert!((normal_cdf(-3.0) - 0.0013498980316301).abs() < 1e-13);
    assert_eq!(normal_cdf(0.0), 0.5);
    assert!((normal_cdf(4.0) - 0.9999683287581669).abs() < 1e-14);
}

#[test]
fn ratings_from_pgn_and_renderers() {
    let mut text = Vec::new();
    for g in three() {
        let game = PgnGame {
            tags: vec![
                ("White".into(), g.white.clone()),
                ("Black".into(), g.black.clone()),
                (
                    "Result".into(),
                    Outcome::from_token(match g.white_score {
                        1.0 => "1-0",
                        0.0 => "0-1",
                        _ => "1/2-1/2",
                    })
                    .unwrap()
                    .token()
                    .into(),
                ),
            ],
            moves: vec!["e4".into()],
            comments: vec![],
            outcome: None,
        };
        pgn::write_game(&mut text, &game).unwrap();
    }
    // One unfinished game is skipped.
    text.extend_from_slice(b"[White \"A\"]\n[Black \"B\"]\n\n1. e4 *\n\n");
    let games: Vec<PgnGame> = pgn::read_games(&text[..])
        .collect::<Result<_, _>>()
        .unwrap();
    let (results, skipped) = rating::results_from_pgn(&games);
    assert_eq!(skipped, 1);
    assert_eq!(results, three());
    let r = rating::fit(&results, Anchor::PoolAverage(0.0), FitOptions::elo_curve()).unwrap();
    let text = rating::render_text(&r);
    assert!(text.lines().nth(1).unwrap().contains("A"), "{text}");
    assert!(text.contains("64.7"), "{text}");
    let md = rating::render_markdown(&r);
    assert!(md.starts_with("| # | Player |"), "{md}");
    assert!(md.contains("| 1 | A | 64.7 | 36.9 |"), "{md}");
}

/// The library's default is the scale the CLI, tournaments and `trainer run` rate with.
#[test]
fn the_default_scale_is_ordos() {
    assert_eq!(FitOptions::default().z76, Some(rating::ORDO_Z76));
    assert_eq!(FitOptions::elo_curve().z76, None);
    let b = FitOptions::default().beta();
    let expected = 1.0 / (1.0 + (-b * rating::ORDO_Z76).exp());
    assert!((expected - 0.76).abs() < 1e-12, "{expected}");
}
