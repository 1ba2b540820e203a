//! The conformance kit: checks that any block keeps its promises.
//!
//! A plugin crate runs it from its own tests with one line,
//! `plugin_api::conformance_test!(MyBlock, MyOtherBlock);`, and the host runs it on every block
//! of every loaded plugin. For every block it plays seeded random legal games from positions
//! rich in special moves (castling both ways, en passant, promotions with and without capture,
//! checks, near-empty boards) and verifies after every ply, for both perspectives:
//!
//! - every index emitted by `active` and `delta` is below the block's size;
//! - the counts maintained from `delta` (plus refreshes where asked) equal a full recomputation
//!   with `active` (as multisets: a block may emit an index several times);
//! - a `delta` never removes an index whose count is already zero, and never both adds and
//!   removes one index for one perspective (a change that a later one takes back cancels), so
//!   its lists are exactly the difference between the two boards' multisets;
//! - for blocks that promise it, Black's indices of a board equal White's indices of the
//!   colour-flipped mirror;
//! - blocks keep their [`crate::FeatureBlock::CHANGED_BY`] promise (the host does not ask a
//!   block about a move of other roles, so its indices must not change: the count check above
//!   holds it to that);
//! - blocks keep their [`RefreshTrigger`] promise (no refresh for `Never`, refreshes only when
//!   the perspective's own king moves for `OwnKingMove`, only when it crosses between the d- and
//!   e-files for `OwnKingSide`, and for `OwnKingSquare` no refresh and no change at all unless
//!   that king moves), and binary blocks never emit an index twice;
//! - a block's factor map sends the indices of one board to distinct factors below its factor
//!   size;
//! - a piecewise block's indices of a board are those of the own king alone plus what each
//!   other piece adds to it;
//! - a block's (or a product's) declared geometry places indices inside its grid, no two on one
//!   place, and names every sheet ([`crate::term_geometry::check`]); every index it emits in the
//!   games has a place.
//!
//! The same checks run on whole feature sets ([`check_feature_sets`]), so products composed by
//! the host (`k*all`) are held to the same standard as blocks. The games are chosen so that every
//! run exercises what king-relative sets must get right, for both colours: king moves, castling
//! both ways, and kings crossing between the d- and e-files (the mirror line of
//! `halfka_v2_hm`); the [`Report`] counts them and [`assert_conformance`] insists on them.

use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Position};

use crate::block::{BlockDescriptor, RefreshTrigger};
use crate::convert::{board_from_position, move_from_shakmaty};
use crate::delta::FeatureDelta;
use crate::feature_set::{term_bit, FeatureSet};
use crate::registry::{LoadError, PluginRegistry};
use crate::term_geometry::{GeometryError, TermGeometry};
use crate::types::{file_of, Board, Color, Move, MoveKind, Role};

/// Start positions of the random games: the initial position plus positions chosen for castling,
/// en passant, promotions, pins and checks, and sparse boards.
pub const START_FENS: &[&str] = &[
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
    "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1",
    "1r2k3/P6P/8/8/8/8/p6p/1R2K3 w - - 0 1",
    "4k3/8/8/8/8/8/8/4K3 w - - 0 1",
    "8/8/3k4/8/2pP4/8/8/3K4 b - d3 0 1",
    "7k/8/8/8/8/8/8/K6Q b - - 0 1",
    "r1bq1rk1/pp3ppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R w KQ - 0 9",
    "8/5pk1/3p2p1/2pP4/2P1K3/6P1/8/8 w - - 0 40",
    "2k5/8/1p6/1P1r4/8/3RK3/8/8 b - - 0 50",
    // Batteries and x-rays (queen behind bishop, doubled rooks) for threat blocks.
    "r4rk1/pp1bqppp/2nbpn2/3p4/2PP4/1PNBPN2/PB1Q1PPP/R4RK1 w - - 0 1",
    // Promoted pieces: several queens and knights on an open board.
    "1k1q4/2N1Q3/8/3n4/8/2q5/Q4N2/7K w - - 0 1",
];

/// How much the kit plays.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// Total plies over all games.
    pub plies: usize,
    /// Longest game before restarting from the next start position.
    pub max_game_plies: usize,
    /// Seed of the random move choice.
    pub seed: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            plies: 4000,
            max_game_plies: 160,
            seed: 0x5eed_2026,
        }
    }
}

/// What a successful run checked. Per-colour counts are indexed by [`Color::index`].
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Plies played (each checked for every block and perspective).
    pub plies: usize,
    /// Games played.
    pub games: usize,
    /// Perspective refreshes the blocks asked for (summed over blocks).
    pub refreshes: usize,
    /// The same, per perspective.
    pub refreshes_by_perspective: [usize; 2],
    /// Positions on which mirror symmetry was checked.
    pub mirror_checks: usize,
    /// King moves (castling included) played by each colour.
    pub king_moves: [usize; 2],
    /// Castling moves played by each colour.
    pub castles: [usize; 2],
    /// King moves of each colour between the d- and e-files (either way).
    pub mirror_crossings: [usize; 2],
}

impl Report {
    /// Whether the games exercised every king event for both colours (see the module docs).
    pub fn covers_king_events(&self) -> bool {
        (0..2)
            .all(|c| self.king_moves[c] > 0 && self.castles[c] > 0 && self.mirror_crossings[c] > 0)
    }
}

/// Why the conformance kit refused: the blocks could not be registered, a term's geometry
/// cannot be drawn, or a feature set broke a promise in a position of the random games.
#[derive(Clone, Debug)]
pub enum ConformanceError {
    /// The blocks were refused by the registry, or a set of them could not be formed.
    Registry(LoadError),
    /// A term's declared geometry cannot be drawn.
    Geometry(GeometryError),
    /// A block or feature set broke a promise in a position.
    Violation {
        /// `"block"` for a set of one plain block, else `"feature set"`.
        kind: &'static str,
        /// The set's name.
        set: String,
        /// The position (FEN).
        fen: String,
        /// What differs, naming the move where one was played.
        what: String,
    },
    /// The kit's own games went wrong (a start position, or `Board::play` against shakmaty).
    Harness(String),
}

impl std::fmt::Display for ConformanceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConformanceError::Registry(e) => e.fmt(f),
            ConformanceError::Geometry(e) => e.fmt(f),
            ConformanceError::Violation {
                kind,
                set,
                fen,
                what,
            } => write!(f, "{kind} '{set}' at {fen}: {what}"),
            ConformanceError::Harness(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for ConformanceError {}

impl From<LoadError> for ConformanceError {
    fn from(e: LoadError) -> Self {
        ConformanceError::Registry(e)
    }
}

impl From<GeometryError> for ConformanceError {
    fn from(e: GeometryError) -> Self {
        ConformanceError::Geometry(e)
    }
}

/// Runs [`check_blocks`] with default settings and panics with its message on failure, or if
/// the games missed a king event.
pub fn assert_conformance(blocks: &[BlockDescriptor]) -> Report {
    match check_blocks(blocks, Settings::default()) {
        Ok(report) => {
            assert!(
                report.covers_king_events(),
                "conformance games missed a king event: {report:?}"
            );
            report
        }
        Err(message) => panic!("conformance failure: {message}"),
    }
}

/// Declares a `#[test]` that runs the conformance kit on the listed block types.
#[macro_export]
macro_rules! conformance_test {
    ($($block:ty),+ $(,)?) => {
        #[test]
        fn plugin_conformance() {
            let report = $crate::conformance::assert_conformance(&[
                $($crate::BlockDescriptor::of::<$block>()),+
            ]);
            eprintln!("conformance: {report:?}");
            assert!(report.plies > 0);
        }
    };
}

/// A feature set's counts per perspective, maintained from deltas.
struct Tracker<'s> {
    set: &'s FeatureSet,
    counts: [Vec<u32>; 2],
    /// Sum of `counts`, per perspective.
    totals: [usize; 2],
    delta: FeatureDelta,
    /// Whether the deltas come from the terms' piece tables ([`crate::PieceTable`]).
    from_tables: bool,
    scratch: Vec<u32>,
    refreshes: [usize; 2],
}

impl Tracker<'_> {
    /// Checks what `board`'s indices for `p` (in the scratch, sorted) promise: the factor map,
    /// the piecewise sum, binary counts.
    fn check_boards(&self, board: &Board, p: Color) -> Result<(), String> {
        check_factor_map(self.set, &self.scratch)?;
        check_piece_tables(self.set, board, p)?;
        if self.set.piecewise() {
            check_piecewise(self.set, board, p, &self.scratch)?;
        }
        if self.set.binary() {
            if let Some(w) = self.scratch.windows(2).find(|w| w[0] == w[1]) {
                return Err(format!(
                    "{p:?}: index {} emitted twice by a block that promises binary counts",
                    w[0]
                ));
            }
        }
        Ok(())
    }

    /// Checks the set's refresh promise for perspective `p` on the move `before` → `after`.
    fn check_promises(&self, p: Color, before: &Board, after: &Board) -> Result<(), String> {
        let king_moved = before.king(p) != after.king(p);
        let side = |b: &Board| b.king(p).map(|k| file_of(k) >= 4);
        let king_changed_side = side(before) != side(after);
        let refresh = self.delta.needs_refresh(p);
        let changed =
            refresh || !self.delta.added(p).is_empty() || !self.delta.removed(p).is_empty();
        let broken = match self.set.refresh_trigger() {
            RefreshTrigger::AnyMove => None,
            RefreshTrigger::Never => refresh.then_some("asked for a refresh but promises never to"),
            RefreshTrigger::OwnKingMove => (refresh && !king_moved)
                .then_some("asked for a refresh without an own king move but promises OwnKingMove"),
            RefreshTrigger::OwnKingSquare => (changed && !king_moved)
                .then_some("changed without an own king move but promises OwnKingSquare"),
            RefreshTrigger::OwnKingSide => (refresh && !king_changed_side).then_some(
                "asked for a refresh without the own king changing side but promises OwnKingSide",
            ),
        };
        match broken {
            Some(what) => Err(format!("{p:?}: {what}")),
            None => Ok(()),
        }
    }
}

/// The piecewise promise on `board` for `p`, whose sorted indices are `expected`: the own king
/// alone, plus for each other piece what it adds to the king alone, gives the same multiset.
fn check_piecewise(
    set: &FeatureSet,
    board: &Board,
    p: Color,
    expected: &[u32],
) -> Result<(), String> {
    let Some(king) = board.king(p) else {
        return Ok(());
    };
    let mut alone = Board::empty(p);
    alone.put(king, p, Role::King);
    let mut base = Vec::new();
    sorted_active(set, &alone, p, &mut base)?;
    let mut sum = base.clone();
    let mut with = Vec::new();
    let mut failure = None;
    board.for_each_piece(|square, color, role| {
        if square == king || failure.is_some() {
            return;
        }
        let mut pair = alone;
        pair.put(square, color, role);
        if let Err(e) = sorted_active(set, &pair, p, &mut with) {
            failure = Some(e);
            return;
        }
        // `with` minus `base`, as multisets.
        let mut rest = base.clone();
        for &ix in &with {
            match rest.iter().position(|&r| r == ix) {
                Some(k) => {
                    rest.swap_remove(k);
                }
                None => sum.push(ix),
            }
        }
    });
    if let Some(e) = failure {
        return Err(e);
    }
    sum.sort_unstable();
    if sum != expected {
        return Err(format!(
            "{p:?}: piecewise promise broken: the pieces one by one give {sum:?}, the board {expected:?}"
        ));
    }
    Ok(())
}

/// For every term with a [`PieceTable`](crate::PieceTable): its indices of `board` from `p`
/// listed from the table are its block's `active` (as multisets).
fn check_piece_tables(set: &FeatureSet, board: &Board, p: Color) -> Result<(), String> {
    for term in set.terms() {
        let Some(table) = term.piece_table() else {
            continue;
        };
        let mut from_table = Vec::new();
        if !table.active(board, p, |ix| from_table.push(ix + term.offset)) {
            continue;
        }
        let mut from_block = Vec::new();
        term.active_offset(board, p, &mut from_block)
            .map_err(|e| format!("active() failed: {}", e.message))?;
        from_table.sort_unstable();
        from_block.sort_unstable();
        if from_table != from_block {
            return Err(format!(
                "{p:?}: {}'s piece table lists {from_table:?}, its block {from_block:?}",
                term.name
            ));
        }
    }
    Ok(())
}

/// For every block term that declares a factor map: the factors of the board's active indices
/// are below the factor size and distinct (what a factorized training relies on).
fn check_factor_map(set: &FeatureSet, active: &[u32]) -> Result<(), String> {
    for term in set.terms() {
        let [block] = term.factors.as_slice() else {
            continue;
        };
        let d = &block.descriptor;
        if d.factor_size == 0 {
            continue;
        }
        let mut images: Vec<u32> = active
            .iter()
            .filter(|&&ix| ix >= term.offset && ix < term.offset + term.size)
            .map(|&ix| (d.factor)(ix - term.offset))
            .collect();
        if let Some(v) = images.iter().find(|&&v| v >= d.factor_size) {
            return Err(format!("factor {v} >= factor size {}", d.factor_size));
        }
        images.sort_unstable();
        if let Some(w) = images.windows(2).find(|w| w[0] == w[1]) {
            return Err(format!(
                "two active indices share the factor {}: a factorized training would count it once",
                w[0]
            ));
        }
    }
    Ok(())
}

/// The sorted active indices (with repeats) of `board` from `p`, range-checked.
fn sorted_active(
    set: &FeatureSet,
    board: &Board,
    p: Color,
    out: &mut Vec<u32>,
) -> Result<(), String> {
    out.clear();
    set.active(board, p, out)
        .map_err(|e| format!("active() failed: {}", e.message))?;
    if let Some(ix) = out.iter().find(|&&ix| ix >= set.size()) {
        return Err(format!(
            "active() emitted index {ix} >= size {}",
            set.size()
        ));
    }
    out.sort_unstable();
    Ok(())
}

fn dense(size: u32, sorted: &[u32]) -> Vec<u32> {
    let mut counts = vec![0u32; size as usize];
    for &ix in sorted {
        counts[ix as usize] += 1;
    }
    counts
}

fn diff_counts(expected: &[u32], got: &[u32]) -> String {
    let mut missing = Vec::new();
    let mut extra = Vec::new();
    for (ix, (&e, &g)) in expected.iter().zip(got).enumerate() {
        if g < e {
            missing.push(format!("{ix}x{}", e - g));
        } else if g > e {
            extra.push(format!("{ix}x{}", g - e));
        }
    }
    format!(
        "incremental lacks [{}], has extra [{}]",
        missing.join(","),
        extra.join(",")
    )
}

impl<'s> Tracker<'s> {
    /// Counts of `set` on `board`, to be kept from the blocks' deltas, or (`from_tables`) from
    /// the piece tables where terms have them.
    fn new(set: &'s FeatureSet, board: &Board, from_tables: bool) -> Result<Self, String> {
        let mut scratch = Vec::new();
        let mut counts: [Vec<u32>; 2] = Default::default();
        let mut totals = [0; 2];
        for p in Color::ALL {
            sorted_active(set, board, p, &mut scratch)?;
            counts[p.index()] = dense(set.size(), &scratch);
            totals[p.index()] = scratch.len();
        }
        Ok(Tracker {
            set,
            counts,
            totals,
            delta: match from_tables {
                true => set.delta_buffer().from_piece_tables(),
                false => set.delta_buffer(),
            },
            from_tables,
            scratch,
            refreshes: [0; 2],
        })
    }

    fn step(&mut self, before: &Board, mv: &Move, after: &Board) -> Result<(), String> {
        let size = self.set.size();
        self.set
            .delta(before, mv, &mut self.delta)
            .map_err(|e| format!("delta() failed: {}", e.message))?;
        for p in Color::ALL {
            let pi = p.index();
            self.check_promises(p, before, after)?;
            sorted_active(self.set, after, p, &mut self.scratch)?;
            // What the boards' indices promise is checked once, by the blocks' tracker.
            if !self.from_tables {
                self.check_boards(after, p)?;
            }
            if self.delta.needs_refresh(p) {
                self.refreshes[pi] += 1;
                self.counts[pi] = dense(size, &self.scratch);
                self.totals[pi] = self.scratch.len();
                continue;
            }
            if let Some(ix) = common_index(self.delta.added(p), self.delta.removed(p)) {
                return Err(format!(
                    "{p:?}: delta() both added and removed index {ix} (a change that a later \
                     one takes back must cancel)"
                ));
            }
            let counts = &mut self.counts[pi];
            for &ix in self.delta.added(p) {
                if ix >= size {
                    return Err(format!("{p:?}: delta() added index {ix} >= size {size}"));
                }
                counts[ix as usize] += 1;
                self.totals[pi] += 1;
            }
            for &ix in self.delta.removed(p) {
                if ix >= size {
                    return Err(format!("{p:?}: delta() removed index {ix} >= size {size}"));
                }
                if counts[ix as usize] == 0 {
                    return Err(format!(
                        "{p:?}: delta() removed index {ix}, which was not active"
                    ));
                }
                counts[ix as usize] -= 1;
                self.totals[pi] -= 1;
            }
            // Equal multisets: every expected index has its count, and nothing else is counted.
            let agrees = self.totals[pi] == self.scratch.len()
                && self
                    .scratch
                    .chunk_by(|a, b| a == b)
                    .all(|run| counts[run[0] as usize] as usize == run.len());
            if !agrees {
                let expected = dense(size, &self.scratch);
                // A term the move's roles cannot change (its promise) was not asked.
                let unasked: Vec<&str> = self
                    .set
                    .terms()
                    .iter()
                    .filter(|t| t.changed_by & mv.roles() == 0)
                    .map(|t| t.name.as_str())
                    .collect();
                let promise = match unasked.is_empty() {
                    true => String::new(),
                    false => format!(
                        " ({} not asked: promised no change on a move of these roles)",
                        unasked.join(", ")
                    ),
                };
                return Err(format!(
                    "{p:?}: {}{promise}",
                    diff_counts(&expected, counts)
                ));
            }
        }
        Ok(())
    }
}

/// An index that both lists hold, if any (the lists are short: a move's changes).
fn common_index(added: &[u32], removed: &[u32]) -> Option<u32> {
    added.iter().copied().find(|ix| removed.contains(ix))
}

fn pick_move(pos: &Chess, rng: &mut ChaCha8Rng) -> Option<shakmaty::Move> {
    let moves = pos.legal_moves();
    if moves.is_empty() {
        return None;
    }
    let special: Vec<&shakmaty::Move> = moves
        .iter()
        .filter(|m| {
            m.is_capture()
                || m.is_castle()
                || m.is_promotion()
                || m.is_en_passant()
                || pos.clone().play(**m).is_ok_and(|p| p.is_check())
        })
        .collect();
    if !special.is_empty() && rng.random_bool(0.5) {
        special.choose(rng).map(|m| **m)
    } else {
        moves.choose(rng).copied()
    }
}

fn check_mirror(set: &FeatureSet, board: &Board, scratch: &mut Vec<u32>) -> Result<(), String> {
    sorted_active(set, board, Color::Black, scratch)?;
    let black = scratch.clone();
    sorted_active(set, &board.mirrored(), Color::White, scratch)?;
    if black != *scratch {
        return Err(format!(
            "mirror symmetry: Black's indices differ from White's of the mirrored board ({})",
            diff_counts(&dense(set.size(), scratch), &dense(set.size(), &black))
        ));
    }
    Ok(())
}

/// Every index that a term with a geometry emits on `board` has a place: only indices a block
/// never emits may be left undrawn.
fn check_placed(
    set: &FeatureSet,
    drawn: &[(usize, TermGeometry)],
    board: &Board,
    scratch: &mut Vec<u32>,
) -> Result<(), String> {
    for (t, g) in drawn {
        let term = &set.terms()[*t];
        for p in Color::ALL {
            scratch.clear();
            set.active_terms(board, p, term_bit(*t), scratch)
                .map_err(|e| e.to_string())?;
            if let Some(ix) = scratch
                .iter()
                .find(|&&ix| g.place(ix - term.offset).is_none())
            {
                return Err(format!(
                    "geometry of '{}': index {} that {p:?}'s view emits has no place",
                    term.name,
                    ix - term.offset
                ));
            }
        }
    }
    Ok(())
}

/// Whether every block of `set` promises mirror symmetry (then the set keeps it too).
fn mirror_symmetric(set: &FeatureSet) -> bool {
    set.operands().all(|b| b.descriptor.mirror_symmetric)
}

/// Plays the random games and checks every block, each as a feature set of its own; on failure
/// returns one paragraph naming the block, the position (FEN), the move (UCI) and what differs.
pub fn check_blocks(
    blocks: &[BlockDescriptor],
    settings: Settings,
) -> Result<Report, ConformanceError> {
    let mut registry = PluginRegistry::new();
    registry.register(blocks, "the conformance kit", "linked")?;
    let sets = blocks
        .iter()
        .map(|b| registry.feature_set(b.name.as_str()))
        .collect::<Result<Vec<_>, _>>()?;
    check_feature_sets(&sets, settings)
}

/// Plays the random games and checks every feature set (products included); on failure returns
/// one paragraph naming the set, the position (FEN), the move (UCI) and what differs.
pub fn check_feature_sets(
    sets: &[FeatureSet],
    settings: Settings,
) -> Result<Report, ConformanceError> {
    for set in sets {
        for term in set.terms() {
            crate::term_geometry::check(term)?;
        }
    }
    // Per set, the terms that declare a geometry: every index they emit must be drawn.
    let drawn: Vec<Vec<(usize, TermGeometry)>> = sets
        .iter()
        .map(|set| {
            set.terms()
                .iter()
                .enumerate()
                .filter_map(|(t, term)| TermGeometry::of(term).map(|g| (t, g)))
                .collect()
        })
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(settings.seed);
    let mut report = Report::default();
    let mut scratch = Vec::new();
    let mut start = 0usize;
    let fail = |set: &FeatureSet, pos: &Chess, what: String| {
        let kind = if set.terms().len() == 1 && !set.terms()[0].is_product() {
            "block"
        } else {
            "feature set"
        };
        ConformanceError::Violation {
            kind,
            set: set.name().to_string(),
            fen: Fen::from_position(pos, EnPassantMode::Legal).to_string(),
            what,
        }
    };
    while report.plies < settings.plies {
        let fen: Fen = START_FENS[start % START_FENS.len()]
            .parse()
            .map_err(|e| ConformanceError::Harness(format!("bad start FEN: {e}")))?;
        start += 1;
        let mut pos: Chess = fen
            .into_position(CastlingMode::Standard)
            .map_err(|e| ConformanceError::Harness(format!("bad start position: {e}")))?;
        report.games += 1;
        let mut board = board_from_position(&pos);
        let mut trackers = Vec::with_capacity(sets.len());
        for set in sets {
            trackers.push(Tracker::new(set, &board, false).map_err(|e| fail(set, &pos, e))?);
            // A set whose terms have piece tables is also followed through them, as the
            // evaluator follows it.
            if set.terms().iter().any(|t| t.piece_table().is_some()) {
                trackers.push(Tracker::new(set, &board, true).map_err(|e| fail(set, &pos, e))?);
            }
        }
        for _ in 0..settings.max_game_plies {
            if report.plies >= settings.plies {
                break;
            }
            for set in sets.iter().filter(|s| mirror_symmetric(s)) {
                check_mirror(set, &board, &mut scratch).map_err(|e| fail(set, &pos, e))?;
                report.mirror_checks += 1;
            }
            for (set, drawn) in sets.iter().zip(&drawn) {
                check_placed(set, drawn, &board, &mut scratch).map_err(|e| fail(set, &pos, e))?;
            }
            let Some(m) = pick_move(&pos, &mut rng) else {
                break;
            };
            let harness = |e: String| ConformanceError::Harness(e);
            let mv = move_from_shakmaty(&m)
                .ok_or_else(|| harness("drop move in standard chess".into()))?;
            let next = pos.clone().play(m).map_err(|e| harness(e.to_string()))?;
            let next_board = board_from_position(&next);
            let played = board.play(&mv);
            if (
                played.by_color,
                played.by_role,
                played.turn,
                played.castling,
            ) != (
                next_board.by_color,
                next_board.by_role,
                next_board.turn,
                next_board.castling,
            ) {
                return Err(harness(format!(
                    "plugin-api Board::play disagrees with shakmaty on {} at {}",
                    UciMove::from_move(m, CastlingMode::Standard),
                    Fen::from_position(&pos, EnPassantMode::Legal)
                )));
            }
            count_king_event(&mut report, &board, &next_board, &mv);
            for t in &mut trackers {
                t.step(&board, &mv, &next_board).map_err(|e| {
                    let by = match t.from_tables {
                        true => " (the deltas from its piece tables)",
                        false => "",
                    };
                    fail(
                        t.set,
                        &pos,
                        format!(
                            "after {}{by}: {e}",
                            UciMove::from_move(m, CastlingMode::Standard)
                        ),
                    )
                })?;
            }
            pos = next;
            board = next_board;
            report.plies += 1;
        }
        for t in trackers.iter().filter(|t| !t.from_tables) {
            for p in 0..2 {
                report.refreshes += t.refreshes[p];
                report.refreshes_by_perspective[p] += t.refreshes[p];
            }
        }
    }
    Ok(report)
}

/// Counts a king move, castling or d/e-file crossing of the side that played `mv`.
fn count_king_event(report: &mut Report, before: &Board, after: &Board, mv: &Move) {
    let side = before.turn;
    let (Some(from), Some(to)) = (before.king(side), after.king(side)) else {
        return;
    };
    if from == to {
        return;
    }
    let c = side.index();
    report.king_moves[c] += 1;
    if mv.kind == MoveKind::Castle {
        report.castles[c] += 1;
    }
    if (file_of(from) < 4) != (file_of(to) < 4) {
        report.mirror_crossings[c] += 1;
    }
}
