//! The search's numbers, in one place: every margin, depth limit and divisor that pruning,
//! reductions, aspiration windows, move ordering and the history tables use, named and
//! explained (Viridithas' `search/parameters.rs` is the model: one home per tunable number, so
//! that a tuning run or a reader finds them all). Scores are in centipawns (every evaluator
//! converts its network's units, `nnue::units::ScoreUnits`); depths in plies.
//!
//! Changing one changes the engine's play: `host bench`'s node count is its fingerprint.

/// Reverse futility pruning: tried at depths up to this.
pub const RFP_MAX_DEPTH: i32 = 7;
/// Reverse futility pruning: the margin per ply of depth (one ply less when improving).
pub const RFP_MARGIN: i32 = 80;

/// Null-move pruning: tried from this depth.
pub const NMP_MIN_DEPTH: i32 = 3;
/// Null-move pruning: the static evaluation must be at least `beta − NMP_DEPTH_MARGIN · depth +
/// NMP_BASE_MARGIN`.
pub const NMP_DEPTH_MARGIN: i32 = 20;
/// See [`NMP_DEPTH_MARGIN`].
pub const NMP_BASE_MARGIN: i32 = 160;
/// Null-move reduction: `NMP_BASE_REDUCTION + depth / NMP_DEPTH_DIVISOR + min((eval − beta) /
/// NMP_EVAL_DIVISOR, NMP_MAX_EVAL_REDUCTION)`.
pub const NMP_BASE_REDUCTION: i32 = 3;
/// See [`NMP_BASE_REDUCTION`].
pub const NMP_DEPTH_DIVISOR: i32 = 3;
/// See [`NMP_BASE_REDUCTION`].
pub const NMP_EVAL_DIVISOR: i32 = 200;
/// See [`NMP_BASE_REDUCTION`].
pub const NMP_MAX_EVAL_REDUCTION: i32 = 3;

/// Internal iterative reduction: from this depth, a node without a hash move searches a ply
/// shallower.
pub const IIR_MIN_DEPTH: i32 = 4;

/// Late move pruning: quiet moves after `(LMP_BASE + depth²)` (halved when not improving) are
/// skipped.
pub const LMP_BASE: i32 = 3;

/// Futility pruning of quiet moves: at reduced depths up to this.
pub const FUTILITY_MAX_DEPTH: i32 = 6;
/// Futility pruning: skipped when `static eval + FUTILITY_BASE + FUTILITY_DEPTH · depth ≤
/// alpha` (depth being the reduced depth).
pub const FUTILITY_BASE: i32 = 120;
/// See [`FUTILITY_BASE`].
pub const FUTILITY_DEPTH: i32 = 90;

/// SEE pruning: at (reduced) depths up to this.
pub const SEE_MAX_DEPTH: i32 = 6;
/// SEE pruning of quiet moves: skipped when their exchange loses more than `SEE_QUIET_MARGIN ·
/// depth²`.
pub const SEE_QUIET_MARGIN: i32 = 25;
/// SEE pruning of bad captures: skipped when their exchange loses more than
/// `SEE_CAPTURE_MARGIN · depth`.
pub const SEE_CAPTURE_MARGIN: i32 = 90;

/// Late move reductions: from this depth.
pub const LMR_MIN_DEPTH: i32 = 3;
/// Late move reductions: the table's `LMR_BASE + ln(depth) · ln(move number) / LMR_DIVISOR`.
pub const LMR_BASE: f64 = 0.75;
/// See [`LMR_BASE`].
pub const LMR_DIVISOR: f64 = 2.25;
/// Late move reductions: a quiet move's reduction shrinks by one ply per this much history.
pub const LMR_HISTORY_DIVISOR: i32 = 8_000;

/// Quiescence futility: a capture whose victim, won for free, leaves the static evaluation
/// this far below alpha is skipped.
pub const QS_FUTILITY_MARGIN: i32 = 200;
/// Quiescence in check: quiet evasions after this many moves are skipped once a move scored
/// above a mated score.
pub const QS_CHECK_QUIETS: usize = 3;

/// Aspiration windows: from this depth, around the previous iteration's score.
pub const ASPIRATION_MIN_DEPTH: i32 = 4;
/// Aspiration windows: the first half-width; it grows by half on each failure.
pub const ASPIRATION_DELTA: i32 = 20;
/// Aspiration windows: beyond this half-width the window is opened fully.
pub const ASPIRATION_MAX_DELTA: i32 = 1_000;

/// Capture ordering: `(victim + promotion) · CAPTURE_VALUE_SCALE + history /
/// CAPTURE_HISTORY_DIVISOR`.
pub const CAPTURE_VALUE_SCALE: i32 = 16;
/// See [`CAPTURE_VALUE_SCALE`].
pub const CAPTURE_HISTORY_DIVISOR: i32 = 16;

/// History bonus of a move at `depth`: `min(HISTORY_DEPTH2 · depth² + HISTORY_DEPTH · depth,
/// HISTORY_MAX_BONUS)`.
pub const HISTORY_DEPTH2: i32 = 16;
/// See [`HISTORY_DEPTH2`].
pub const HISTORY_DEPTH: i32 = 32;
/// See [`HISTORY_DEPTH2`].
pub const HISTORY_MAX_BONUS: i32 = 1_600;
/// History updates: a bonus is clamped to ± this.
pub const HISTORY_CLAMP: i32 = 16_000;
/// History updates: the "gravity" divisor, `v + b − v · |b| / HISTORY_GRAVITY`, which keeps
/// entries within ± it.
pub const HISTORY_GRAVITY: i32 = 16_384;

/// Nodes between two looks at the clock and the stop flag (a power of two, minus one: a mask).
pub const CHECK_EVERY_NODES: u64 = 1023;
