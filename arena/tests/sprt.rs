//! SPRT against published numbers: fastchess's `app/tests/sprt_test.cpp` cases (LLRs to 0.01,
//! its own tolerance), and the LLRs fishtest's own `server/fishtest/stats/LLRcalc.py`
//! (`LLR_logistic`, `LLR_normalized`; official-stockfish/fishtest at b8eecff, with SciPy 1.17.1)
//! printed for the same counts, run by hand outside the repository (to 1e-6).

use arena::pgn::{Outcome, PgnGame};
use arena::sprt::{self, Counts, EloModel, SprtParams, Verdict};

fn tri(w: u64, l: u64, d: u64) -> Counts {
    Counts::Trinomial([l, d, w])
}

/// fastchess `Stats(ll, ld, wl, dd, wd, ww)`.
fn penta(ll: u64, ld: u64, wl: u64, dd: u64, wd: u64, ww: u64) -> Counts {
    Counts::Pentanomial([ll, ld, wl + dd, wd, ww])
}

#[test]
fn llr_matches_fastchess_and_fishtest() {
    use EloModel::{Logistic, Normalized};
    // (counts, elo0, elo1, model, fastchess's value, fishtest's value)
    let cases = [
        (
            tri(21404, 21184, 40708),
            0.5,
            2.5,
            Logistic,
            -1.57,
            -1.5718887926943381,
        ),
        (
            tri(57433, 57030, 106593),
            0.0,
            2.0,
            Logistic,
            -2.59,
            -2.593024163515815,
        ),
        (
            penta(223, 9863, 20279, 1000, 10037, 246),
            0.5,
            2.5,
            Logistic,
            -3.07,
            -3.0741264395890813,
        ),
        (
            penta(871, 26175, 55003, 980, 26678, 821),
            0.0,
            2.0,
            Logistic,
            -4.98,
            -4.978672863444156,
        ),
        (
            tri(36433, 36027, 68692),
            0.0,
            2.0,
            Normalized,
            0.92,
            0.9232934509457336,
        ),
        (
            tri(10871, 10650, 20431),
            -1.75,
            0.25,
            Normalized,
            2.30,
            2.297500407106383,
        ),
        (
            penta(365, 16618, 36029, 200, 16974, 390),
            0.0,
            2.0,
            Normalized,
            2.25,
            2.250367703548933,
        ),
        (
            penta(127, 4883, 10311, 401, 5150, 104),
            -1.75,
            0.25,
            Normalized,
            3.01,
            3.010154196606051,
        ),
    ];
    for (counts, e0, e1, model, fastchess, fishtest) in cases {
        let llr = sprt::llr(&counts, e0, e1, model);
        assert!(
            (llr - fastchess).abs() <= 0.01 * fastchess.abs(),
            "{counts:?}: {llr} vs {fastchess}"
        );
        assert!(
            (llr - fishtest).abs() < 1e-6,
            "{counts:?}: {llr} vs {fishtest}"
        );
    }
    // Small counts (fishtest's values).
    let small = Counts::Pentanomial([2, 10, 30, 14, 4]);
    assert!((sprt::llr(&small, 0.0, 5.0, Logistic) - 0.25795297589973504).abs() < 1e-6);
    assert!((sprt::llr(&small, 0.0, 5.0, Normalized) - 0.16976240103087736).abs() < 1e-6);
}

#[test]
fn bounds_verdicts_and_estimates() {
    let params = SprtParams {
        elo0: 0.0,
        elo1: 5.0,
        alpha: 0.05,
        beta: 0.05,
        model: EloModel::Logistic,
    };
    assert!((params.lower_bound() - (0.05f64 / 0.95).ln()).abs() < 1e-12);
    assert!((params.upper_bound() - (0.95f64 / 0.05).ln()).abs() < 1e-12);
    assert!((params.upper_bound() - 2.944_438_979_166_44).abs() < 1e-12);
    // fastchess "logistic pentanomial 2": a clear fail at [0, 2].
    let counts = penta(871, 26175, 55003, 980, 26678, 821);
    let report = sprt::evaluate(
        &counts,
        SprtParams {
            elo1: 2.0,
            ..params
        },
    )
    .unwrap();
    assert_eq!(report.verdict, Verdict::AcceptH0);
    // A strong engine passes.
    let report = sprt::evaluate(&Counts::Pentanomial([10, 100, 400, 300, 80]), params).unwrap();
    assert_eq!(report.verdict, Verdict::AcceptH1);
    assert!(report.to_string().contains("H1 accepted"));
    let report = sprt::evaluate(&Counts::Pentanomial([2, 10, 30, 14, 4]), params).unwrap();
    assert_eq!(report.verdict, Verdict::Continue);
    // Estimates as fastchess elo_test.cpp "EloPentanomial 1": Stats(34, 54, 31, 32, 64, 75)
    // -> Elo 55.58 ± 27.65, nElo 57.94 ± 28.28.
    let report = sprt::evaluate(&penta(34, 54, 31, 32, 64, 75), params).unwrap();
    assert!((report.elo - 55.58).abs() < 0.01, "{}", report.elo);
    assert!(
        (report.elo_error - 27.65).abs() < 0.01,
        "{}",
        report.elo_error
    );
    assert!((report.nelo - 57.94).abs() < 0.01, "{}", report.nelo);
    assert!(
        (report.nelo_error - 28.28).abs() < 0.01,
        "{}",
        report.nelo_error
    );
    // "EloPentanomial 2": Stats(332, 433, 457, 41, 333, 334) -> -8.64 ± 10.33, LOS 5.05%.
    let report = sprt::evaluate(&penta(332, 433, 457, 41, 333, 334), params).unwrap();
    assert!((report.elo + 8.64).abs() < 0.01 && (report.elo_error - 10.33).abs() < 0.01);
    assert!((100.0 * report.los - 5.05).abs() < 0.01, "{}", report.los);
    // Invalid parameters and empty counts are errors.
    assert!(
        sprt::evaluate(
            &counts,
            SprtParams {
                elo0: 5.0,
                elo1: 0.0,
                ..params
            }
        )
        .is_err()
    );
    assert!(
        sprt::evaluate(
            &counts,
            SprtParams {
                alpha: 0.0,
                ..params
            }
        )
        .is_err()
    );
    assert!(sprt::evaluate(&Counts::Trinomial([0, 0, 0]), params).is_err());
}

fn game(white: &str, black: &str, round: Option<&str>, fen: Option<&str>, o: Outcome) -> PgnGame {
    let mut g = PgnGame::default();
    g.set_tag("White", white);
    g.set_tag("Black", black);
    if let Some(r) = round {
        g.set_tag("Round", r);
    }
    if let Some(f) = fen {
        g.set_tag("FEN", f);
    }
    g.outcome = Some(o);
    g
}

#[test]
fn pairs_from_pgn_by_round_or_fen() {
    use Outcome::{BlackWins as B, Draw as D, WhiteWins as W};
    // Rounds N.1/N.2, finished out of order; new engine "T".
    let games = vec![
        game("T", "O", Some("2.1"), None, W), // T wins
        game("T", "O", Some("1.1"), None, D), // T draws
        game("O", "T", Some("2.2"), None, W), // T loses -> pair 2: 1 point (WL)
        game("O", "T", Some("1.2"), None, B), // T wins  -> pair 1: 1.5 points (DW)
        game("O", "T", Some("3.2"), None, D), // unpaired
        game("T", "X", Some("9.1"), None, W), // other opponent
        game("X", "T", Some("9.2"), None, B), // T wins -> 2 points
    ];
    let c = sprt::counts_from_pgn(&games, "T", None);
    assert_eq!(c.pentanomial, [0, 0, 1, 1, 1]);
    assert_eq!(c.trinomial, [1, 2, 4]);
    assert_eq!(c.unpaired, 1);
    assert_eq!(c.opponents, vec!["O".to_string(), "X".to_string()]);
    let c = sprt::counts_from_pgn(&games, "T", Some("O"));
    assert_eq!(c.pentanomial, [0, 0, 1, 1, 0]);
    // Without Round tags: by FEN.
    let f1 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
    let f2 = "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1";
    let games = vec![
        game("T", "O", None, Some(f1), B),
        game("T", "O", None, Some(f2), W),
        game("O", "T", None, Some(f2), W),
        game("O", "T", None, Some(f1), W),
    ];
    let c = sprt::counts_from_pgn(&games, "T", None);
    assert_eq!(c.pentanomial, [1, 0, 1, 0, 0]);
    assert_eq!(c.counts(), Counts::Pentanomial([1, 0, 1, 0, 0]));
    // No pairs at all: trinomial.
    let c = sprt::counts_from_pgn(&games[..1], "T", None);
    assert_eq!(c.counts(), Counts::Trinomial([1, 0, 0]));
}
