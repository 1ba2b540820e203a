//! One game between two UCI engines: clocks, legality of every move (shakmaty), the rules'
//! endings, adjudication as in cutechess-cli, and the record that becomes a PGN game.

use std::collections::HashMap;
use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use chess_text::FenError;
use shakmaty::san::SanPlus;
use shakmaty::uci::UciMove;
use shakmaty::zobrist::Zobrist64;
use shakmaty::{CastlingMode, Chess, Color, EnPassantMode, Position};

use crate::pgn::{Outcome, PgnGame};
use crate::uci::{EngineProcess, SearchLimit, UciError, UciSearchResult};

/// The standard start position.
pub const START_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// Resign adjudication (two-sided): the game is lost for a side when both engines' scores put
/// it at least `score_cp` behind for `moves` consecutive moves each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResignRule {
    /// Threshold in centipawns (positive).
    pub score_cp: i32,
    /// Consecutive moves of each engine.
    pub moves: u32,
}

/// Draw adjudication: from full move `move_number` on, both engines' |score| at most
/// `score_cp` for `moves` consecutive moves each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DrawRule {
    /// First full move number (of the position, counting the opening) at which it applies.
    pub move_number: u32,
    /// Threshold in centipawns.
    pub score_cp: i32,
    /// Consecutive moves of each engine.
    pub moves: u32,
}

/// Which adjudications apply; all off by default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Adjudication {
    /// Resign adjudication.
    pub resign: Option<ResignRule>,
    /// Draw adjudication.
    pub draw: Option<DrawRule>,
    /// A draw once each side has made this many moves in the game.
    pub max_moves: Option<u32>,
}

/// How games are played, apart from who plays and from where.
#[derive(Clone, Debug, PartialEq)]
pub struct GameSettings {
    /// White's and Black's limits (`[white, black]`). With `Clock`, a side's clock starts from
    /// its own colour's fields (White: `white`, `white_inc`).
    pub limits: [SearchLimit; 2],
    /// Adjudication rules.
    pub adjudication: Adjudication,
    /// Grace beyond the clock (or the move time) before a move counts as a time loss
    /// (fastchess's `timemargin`).
    pub time_margin: Duration,
    /// How long a fixed-nodes or fixed-depth search may take before the engine is declared
    /// stalled.
    pub move_timeout: Duration,
}

impl GameSettings {
    /// Both sides under the same limit, no adjudication, a 100 ms time margin and a 60 s
    /// timeout for fixed-nodes or fixed-depth moves.
    pub fn new(limit: SearchLimit) -> GameSettings {
        GameSettings {
            limits: [limit.clone(), limit],
            adjudication: Adjudication::default(),
            time_margin: Duration::from_millis(100),
            move_timeout: Duration::from_secs(60),
        }
    }
}

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Termination {
    /// The side to move is mated.
    Checkmate,
    /// The side to move has no legal move and is not in check.
    Stalemate,
    /// The same position for the third time.
    Repetition,
    /// A hundred plies without capture or pawn move.
    FiftyMoves,
    /// Neither side can mate.
    InsufficientMaterial,
    /// A side exceeded its clock (or move time) plus the margin.
    TimeForfeit,
    /// A side played an illegal or unparsable move.
    IllegalMove,
    /// A side's engine exited or broke the protocol.
    Crash,
    /// A side's engine did not answer a fixed-nodes/depth search in time.
    Stalled,
    /// Resign adjudication.
    Resign,
    /// Draw adjudication.
    DrawAdjudication,
    /// The move limit was reached.
    MaxMoves,
}

impl Termination {
    /// True for the endings caused by a misbehaving engine rather than by the game.
    pub fn is_failure(self) -> bool {
        matches!(
            self,
            Termination::TimeForfeit
                | Termination::IllegalMove
                | Termination::Crash
                | Termination::Stalled
        )
    }
}

impl fmt::Display for Termination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Termination::Checkmate => "checkmate",
            Termination::Stalemate => "stalemate",
            Termination::Repetition => "threefold repetition",
            Termination::FiftyMoves => "fifty-move rule",
            Termination::InsufficientMaterial => "insufficient material",
            Termination::TimeForfeit => "time forfeit",
            Termination::IllegalMove => "illegal move",
            Termination::Crash => "crash",
            Termination::Stalled => "stalled connection",
            Termination::Resign => "adjudication: resign",
            Termination::DrawAdjudication => "adjudication: draw",
            Termination::MaxMoves => "adjudication: max moves",
        })
    }
}

/// A finished game.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GameRecord {
    /// White's name.
    pub white: String,
    /// Black's name.
    pub black: String,
    /// The starting position; `None` for the standard start position.
    pub opening_fen: Option<String>,
    /// The result.
    pub outcome: Outcome,
    /// Why the game ended.
    pub termination: Termination,
    /// A one-line explanation when an engine failed (its error), else empty.
    pub detail: String,
    /// The moves in SAN.
    pub moves_san: Vec<String>,
    /// The same moves in UCI notation.
    pub moves_uci: Vec<String>,
    /// A cutechess-style comment per move: `+0.31/12 0.105s` (score from the mover's side).
    pub comments: Vec<String>,
    /// The `TimeControl` tag value for White and for Black.
    pub time_controls: [String; 2],
    /// The date the game started, `YYYY.MM.DD`.
    pub date: String,
}

impl GameRecord {
    /// The colour that lost, if the game was decisive.
    pub fn loser(&self) -> Option<Color> {
        match self.outcome {
            Outcome::WhiteWins => Some(Color::Black),
            Outcome::BlackWins => Some(Color::White),
            _ => None,
        }
    }

    /// The game as PGN: the seven-tag roster, `FEN`/`SetUp` for a non-standard start,
    /// `Termination`, `TimeControl` (or one per side when they differ), `PlyCount`.
    pub fn to_pgn(&self, event: &str, round: &str) -> PgnGame {
        let mut game = PgnGame::default();
        game.set_tag("Event", event);
        game.set_tag("Site", "?");
        game.set_tag("Date", self.date.as_str());
        game.set_tag("Round", round);
        game.set_tag("White", self.white.as_str());
        game.set_tag("Black", self.black.as_str());
        game.set_tag("Result", self.outcome.token());
        if let Some(fen) = self.opening_fen.as_deref().filter(|f| *f != START_FEN) {
            game.set_tag("FEN", fen);
            game.set_tag("SetUp", "1");
        }
        game.set_tag("Termination", self.termination.to_string());
        if self.time_controls[0] == self.time_controls[1] {
            game.set_tag("TimeControl", self.time_controls[0].as_str());
        } else {
            game.set_tag("WhiteTimeControl", self.time_controls[0].as_str());
            game.set_tag("BlackTimeControl", self.time_controls[1].as_str());
        }
        game.set_tag("PlyCount", self.moves_san.len().to_string());
        game.moves = self.moves_san.clone();
        game.comments = self.comments.clone();
        if !self.detail.is_empty() {
            // The reason goes into the last move's comment, as cutechess does.
            if game.comments.len() < game.moves.len() {
                game.comments.resize(game.moves.len(), String::new());
            }
            if let Some(last) = game.comments.last_mut() {
                if last.is_empty() {
                    *last = self.detail.clone();
                } else {
                    *last = format!("{last}, {}", self.detail);
                }
            }
        }
        game.outcome = Some(self.outcome);
        game
    }
}

/// The `TimeControl` value of a limit: `10+0.1` (seconds), `0.1/move`, `nodes=300`, `depth=8`.
pub fn time_control_tag(limit: &SearchLimit, color: Color) -> String {
    match limit {
        SearchLimit::Nodes(n) => format!("nodes={n}"),
        SearchLimit::Depth(d) => format!("depth={d}"),
        SearchLimit::MoveTime(t) => format!("{}/move", seconds(*t)),
        SearchLimit::Clock {
            white,
            black,
            white_inc,
            black_inc,
        } => {
            let (time, inc) = match color {
                Color::White => (white, white_inc),
                Color::Black => (black, black_inc),
            };
            if inc.is_zero() {
                seconds(*time)
            } else {
                format!("{}+{}", seconds(*time), seconds(*inc))
            }
        }
    }
}

/// Seconds without trailing zeros: `10`, `0.1`, `2.5`.
fn seconds(d: Duration) -> String {
    let s = format!("{:.3}", d.as_secs_f64());
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Today's date (UTC) as PGN writes it.
fn today() -> String {
    let days = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() / 86_400)
        .unwrap_or(0) as i64;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}.{month:02}.{day:02}")
}

fn index(color: Color) -> usize {
    match color {
        Color::White => 0,
        Color::Black => 1,
    }
}

fn win_for(color: Color) -> Outcome {
    match color {
        Color::White => Outcome::WhiteWins,
        Color::Black => Outcome::BlackWins,
    }
}

/// Adjudication bookkeeping: consecutive plies meeting each condition.
#[derive(Default)]
struct Streaks {
    white_winning: u32,
    black_winning: u32,
    drawish: u32,
}

impl Streaks {
    /// Records the mover's score (from White's side, `None` when it gave none) and returns an
    /// adjudication if one applies now. `fullmove` is the move number of the position searched.
    fn update(
        &mut self,
        rules: &Adjudication,
        white_score: Option<i32>,
        fullmove: u32,
    ) -> Option<(Outcome, Termination)> {
        let bump = |streak: &mut u32, ok: bool| *streak = if ok { *streak + 1 } else { 0 };
        if let Some(rule) = rules.resign {
            bump(
                &mut self.white_winning,
                white_score.is_some_and(|s| s >= rule.score_cp),
            );
            bump(
                &mut self.black_winning,
                white_score.is_some_and(|s| s <= -rule.score_cp),
            );
            if self.white_winning >= 2 * rule.moves {
                return Some((Outcome::WhiteWins, Termination::Resign));
            }
            if self.black_winning >= 2 * rule.moves {
                return Some((Outcome::BlackWins, Termination::Resign));
            }
        }
        if let Some(rule) = rules.draw {
            bump(
                &mut self.drawish,
                fullmove >= rule.move_number
                    && white_score.is_some_and(|s| s.abs() <= rule.score_cp),
            );
            if self.drawish >= 2 * rule.moves {
                return Some((Outcome::Draw, Termination::DrawAdjudication));
            }
        }
        None
    }
}

/// The ending the rules impose on `pos`, if any. `seen` counts positions since the last
/// irreversible move (by Zobrist key).
fn rules_ending(pos: &Chess, seen: &HashMap<Zobrist64, u32>) -> Option<(Outcome, Termination)> {
    if pos.is_checkmate() {
        return Some((win_for(!pos.turn()), Termination::Checkmate));
    }
    if pos.is_stalemate() {
        return Some((Outcome::Draw, Termination::Stalemate));
    }
    if pos.is_insufficient_material() {
        return Some((Outcome::Draw, Termination::InsufficientMaterial));
    }
    if pos.halfmoves() >= 100 {
        return Some((Outcome::Draw, Termination::FiftyMoves));
    }
    let key = pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal);
    if seen.get(&key).copied().unwrap_or(0) >= 3 {
        return Some((Outcome::Draw, Termination::Repetition));
    }
    None
}

/// Each side's time at the start and increment, for the sides under a clock (zero for the
/// others).
fn starting_clocks(settings: &GameSettings) -> ([Duration; 2], [Duration; 2]) {
    let mut clocks = [Duration::ZERO; 2];
    let mut incs = [Duration::ZERO; 2];
    for color in [Color::White, Color::Black] {
        if let SearchLimit::Clock {
            white,
            black,
            white_inc,
            black_inc,
        } = &settings.limits[index(color)]
        {
            let i = index(color);
            (clocks[i], incs[i]) = match color {
                Color::White => (*white, *white_inc),
                Color::Black => (*black, *black_inc),
            };
        }
    }
    (clocks, incs)
}

/// The limit of the next search of side `i` and how long it may take before it loses on time
/// (or stalls): a clock as it stands now (`clocks`, `incs`; the opponent's own when it has
/// one), a fixed time, or a node or depth limit under the stall timeout.
fn this_move(
    settings: &GameSettings,
    i: usize,
    (clocks, incs): (&[Duration; 2], &[Duration; 2]),
) -> (SearchLimit, Duration) {
    match &settings.limits[i] {
        SearchLimit::Clock { .. } => {
            let other = if matches!(settings.limits[1 - i], SearchLimit::Clock { .. }) {
                1 - i
            } else {
                i
            };
            let (w, b) = if i == 0 { (i, other) } else { (other, i) };
            (
                SearchLimit::Clock {
                    white: clocks[w],
                    black: clocks[b],
                    white_inc: incs[w],
                    black_inc: incs[b],
                },
                clocks[i] + settings.time_margin,
            )
        }
        SearchLimit::MoveTime(t) => (SearchLimit::MoveTime(*t), *t + settings.time_margin),
        other => (other.clone(), settings.move_timeout),
    }
}

/// A move's PGN comment: `score/depth time`, or the time alone without a score.
fn move_comment(result: &UciSearchResult) -> String {
    match (result.score, result.depth) {
        (Some(score), depth) => format!(
            "{score}/{} {:.3}s",
            depth.unwrap_or(0),
            result.elapsed.as_secs_f64()
        ),
        (None, _) => format!("{:.3}s", result.elapsed.as_secs_f64()),
    }
}

/// Plays one game: `engines[0]` has White, `engines[1]` Black, from `opening_fen` (the start
/// position when `None`). Sends `ucinewgame` to both first. An engine that fails (crash, illegal
/// move, time) loses; the caller checks `EngineProcess::is_usable` afterwards and restarts it.
/// Errors only for an invalid opening (chess-text's reason).
pub fn play_game(
    engines: [&mut EngineProcess; 2],
    opening_fen: Option<&str>,
    settings: &GameSettings,
) -> Result<GameRecord, FenError> {
    let mut pos: Chess = match opening_fen {
        Some(fen) => chess_text::parse_position(fen)?,
        None => Chess::default(),
    };
    let mut record = GameRecord {
        white: engines[0].name().to_string(),
        black: engines[1].name().to_string(),
        opening_fen: opening_fen.map(str::to_string),
        outcome: Outcome::Unknown,
        termination: Termination::Crash,
        detail: String::new(),
        moves_san: Vec::new(),
        moves_uci: Vec::new(),
        comments: Vec::new(),
        time_controls: [
            time_control_tag(&settings.limits[0], Color::White),
            time_control_tag(&settings.limits[1], Color::Black),
        ],
        date: today(),
    };
    let finish = |record: &mut GameRecord, outcome, termination, detail: String| {
        record.outcome = outcome;
        record.termination = termination;
        record.detail = detail;
    };
    for color in [Color::White, Color::Black] {
        if let Err(error) = engines[index(color)].new_game() {
            finish(
                &mut record,
                win_for(!color),
                Termination::Crash,
                error.to_string(),
            );
            return Ok(record);
        }
    }
    // Remaining time per side (only meaningful for sides under a clock).
    let (mut clocks, incs) = starting_clocks(settings);
    let mut seen: HashMap<Zobrist64, u32> = HashMap::new();
    seen.insert(pos.zobrist_hash(EnPassantMode::Legal), 1);
    let mut streaks = Streaks::default();
    let start_plies = pos.fullmoves().get() * 2 + u32::from(pos.turn() == Color::Black);
    loop {
        if let Some((outcome, termination)) = rules_ending(&pos, &seen) {
            finish(&mut record, outcome, termination, String::new());
            return Ok(record);
        }
        let mover = pos.turn();
        let i = index(mover);
        let (limit, timeout) = this_move(settings, i, (&clocks, &incs));
        let timed = matches!(limit, SearchLimit::Clock { .. } | SearchLimit::MoveTime(_));
        let result = engines[i].search(opening_fen, &record.moves_uci, &limit, timeout);
        let result = match result {
            Ok(result) => result,
            Err(error) => {
                let termination = match error {
                    UciError::Timeout { .. } if timed => Termination::TimeForfeit,
                    UciError::Timeout { .. } => Termination::Stalled,
                    _ => Termination::Crash,
                };
                finish(&mut record, win_for(!mover), termination, error.to_string());
                return Ok(record);
            }
        };
        if timed && result.elapsed > timeout {
            let detail = format!(
                "{} {} used {:.3}s, allowed {:.3}s",
                engines[i].name(),
                mover,
                result.elapsed.as_secs_f64(),
                timeout.as_secs_f64()
            );
            finish(
                &mut record,
                win_for(!mover),
                Termination::TimeForfeit,
                detail,
            );
            return Ok(record);
        }
        if matches!(limit, SearchLimit::Clock { .. }) {
            clocks[i] = clocks[i].saturating_sub(result.elapsed) + incs[i];
        }
        let legal = result
            .best_move
            .parse::<UciMove>()
            .ok()
            .and_then(|m| m.to_move(&pos).ok());
        let Some(m) = legal else {
            let detail = format!(
                "{} played the illegal move {}",
                engines[i].name(),
                result.best_move
            );
            finish(
                &mut record,
                win_for(!mover),
                Termination::IllegalMove,
                detail,
            );
            return Ok(record);
        };
        let fullmove = pos.fullmoves().get();
        let comment = move_comment(&result);
        let san = SanPlus::from_move_and_play_unchecked(&mut pos, m);
        record.moves_san.push(san.to_string());
        record
            .moves_uci
            .push(UciMove::from_move(m, CastlingMode::Standard).to_string());
        record.comments.push(comment);
        if pos.halfmoves() == 0 {
            seen.clear();
        }
        *seen
            .entry(pos.zobrist_hash(EnPassantMode::Legal))
            .or_insert(0) += 1;
        // Mate and checkmate-by-rule come before adjudication.
        if rules_ending(&pos, &seen).is_some() {
            continue;
        }
        let white_score = result.score.map(|s| match mover {
            Color::White => s.as_cp(),
            Color::Black => s.negate().as_cp(),
        });
        if let Some((outcome, termination)) =
            streaks.update(&settings.adjudication, white_score, fullmove)
        {
            finish(&mut record, outcome, termination, String::new());
            return Ok(record);
        }
        if let Some(max) = settings.adjudication.max_moves {
            let plies = pos.fullmoves().get() * 2 + u32::from(pos.turn() == Color::Black);
            if plies - start_plies >= 2 * max {
                finish(
                    &mut record,
                    Outcome::Draw,
                    Termination::MaxMoves,
                    String::new(),
                );
                return Ok(record);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resign_needs_both_engines_for_n_moves_each() {
        let rules = Adjudication {
            resign: Some(ResignRule {
                score_cp: 500,
                moves: 2,
            }),
            ..Adjudication::default()
        };
        let mut s = Streaks::default();
        // White's engine says +600, Black's engine says White is +700 (i.e. -700 for Black).
        assert_eq!(s.update(&rules, Some(600), 10), None);
        assert_eq!(s.update(&rules, Some(700), 10), None);
        assert_eq!(s.update(&rules, Some(600), 11), None);
        assert_eq!(
            s.update(&rules, Some(900), 11),
            Some((Outcome::WhiteWins, Termination::Resign))
        );
        // A disagreeing move resets the streak.
        let mut s = Streaks::default();
        for score in [-600, -600, 100, -600, -600, -600] {
            assert_eq!(s.update(&rules, Some(score), 5), None);
        }
        assert_eq!(
            s.update(&rules, Some(-600), 6),
            Some((Outcome::BlackWins, Termination::Resign))
        );
    }

    #[test]
    fn draw_adjudication_waits_for_the_move_number() {
        let rules = Adjudication {
            draw: Some(DrawRule {
                move_number: 40,
                score_cp: 10,
                moves: 1,
            }),
            ..Adjudication::default()
        };
        let mut s = Streaks::default();
        assert_eq!(s.update(&rules, Some(0), 39), None);
        assert_eq!(s.update(&rules, Some(0), 39), None);
        assert_eq!(s.update(&rules, Some(5), 40), None);
        assert_eq!(
            s.update(&rules, Some(-5), 40),
            Some((Outcome::Draw, Termination::DrawAdjudication))
        );
        let mut s = Streaks::default();
        assert_eq!(s.update(&rules, Some(5), 40), None);
        assert_eq!(s.update(&rules, None, 40), None);
        assert_eq!(s.update(&rules, Some(5), 41), None);
    }

    #[test]
    fn time_control_tags() {
        let clock = SearchLimit::Clock {
            white: Duration::from_secs(10),
            black: Duration::from_secs(10),
            white_inc: Duration::from_millis(100),
            black_inc: Duration::ZERO,
        };
        assert_eq!(time_control_tag(&clock, Color::White), "10+0.1");
        assert_eq!(time_control_tag(&clock, Color::Black), "10");
        assert_eq!(
            time_control_tag(&SearchLimit::Nodes(300), Color::White),
            "nodes=300"
        );
        assert_eq!(
            time_control_tag(
                &SearchLimit::MoveTime(Duration::from_millis(250)),
                Color::Black
            ),
            "0.25/move"
        );
    }

    #[test]
    fn dates_look_like_pgn_dates() {
        let date = today();
        assert_eq!(date.len(), 10);
        assert!(date.starts_with("20"), "{date}");
    }

    #[test]
    fn repetition_and_rules() {
        let mut pos = Chess::default();
        let mut seen = HashMap::new();
        seen.insert(pos.zobrist_hash(EnPassantMode::Legal), 1);
        for uci in [
            "g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8",
        ] {
            assert_eq!(rules_ending(&pos, &seen), None);
            let m = uci.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
            pos.play_unchecked(m);
            *seen
                .entry(pos.zobrist_hash(EnPassantMode::Legal))
                .or_insert(0) += 1;
        }
        assert_eq!(
            rules_ending(&pos, &seen),
            Some((Outcome::Draw, Termination::Repetition))
        );
        let mate: Chess = chess_text::parse_position(
            "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3",
        )
        .unwrap();
        assert_eq!(
            rules_ending(&mate, &HashMap::new()),
            Some((Outcome::BlackWins, Termination::Checkmate))
        );
    }
}
