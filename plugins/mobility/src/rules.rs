//! The thesis's mobility rules on bitboards: the kept squares of every piece, their unions per
//! (role, colour), and the unions a move can change (see the crate documentation for why the
//! incremental part is exact).
//!
//! A *type* is a (colour, role) pair, numbered `colour * 6 + role` (White pawn 0 .. Black king
//! 11). All sets are bitboards in shakmaty's square numbering (a1 = 0, h8 = 63).

use plugin_api::{Board, Color, Move, Role, decompose, pawn_captures};
use shakmaty::attacks;
use shakmaty::{Bitboard, Square as SSquare};

/// Number of (colour, role) types.
pub const TYPES: usize = 12;

/// The type number of a (colour, role) pair.
#[inline(always)]
pub const fn type_of(color: Color, role: Role) -> usize {
    color as usize * 6 + role as usize
}

/// The colour and role index of a type number (0..12).
#[inline(always)]
pub const fn type_parts(t: usize) -> (Color, usize) {
    (if t < 6 { Color::White } else { Color::Black }, t % 6)
}

#[inline(always)]
fn ssq(sq: u32) -> SSquare {
    // The mask makes the range check in `Square::new` provably dead.
    SSquare::new(sq & 63)
}

#[inline(always)]
const fn bit(sq: u32) -> u64 {
    1u64 << (sq & 63)
}

#[inline(always)]
fn rook(sq: u32, occ: u64) -> u64 {
    attacks::rook_attacks(ssq(sq), Bitboard(occ)).0
}

#[inline(always)]
fn bishop(sq: u32, occ: u64) -> u64 {
    attacks::bishop_attacks(ssq(sq), Bitboard(occ)).0
}

#[inline(always)]
fn knight(sq: u32) -> u64 {
    attacks::knight_attacks(ssq(sq)).0
}

#[inline(always)]
fn king(sq: u32) -> u64 {
    attacks::king_attacks(ssq(sq)).0
}

#[inline(always)]
fn pawn_attacks(color: Color, sq: u32) -> u64 {
    let c = match color {
        Color::White => shakmaty::Color::White,
        Color::Black => shakmaty::Color::Black,
    };
    attacks::pawn_attacks(c, ssq(sq)).0
}

const fn pseudo_table(rook_like: bool) -> [u64; 64] {
    let mut t = [0; 64];
    let mut sq = 0;
    while sq < 64 {
        let s = SSquare::new(sq as u32);
        t[sq] = if rook_like {
            attacks::rook_attacks(s, Bitboard(0)).0
        } else {
            attacks::bishop_attacks(s, Bitboard(0)).0
        };
        sq += 1;
    }
    t
}

/// Rook attacks on an empty board: a cheap filter before a magic lookup.
static ROOK_PSEUDO: [u64; 64] = pseudo_table(true);
/// Bishop attacks on an empty board.
static BISHOP_PSEUDO: [u64; 64] = pseudo_table(false);

/// Squares strictly between two aligned squares (empty if not aligned).
#[inline(always)]
fn between(a: u32, b: u32) -> u64 {
    attacks::between(ssq(a), ssq(b)).0
}

/// The whole rank, file or diagonal through two squares (empty if not aligned).
#[inline(always)]
fn line(a: u32, b: u32) -> u64 {
    attacks::ray(ssq(a), ssq(b)).0
}

/// Squares attacked by the pawns `pawns` of `color` (set-wise).
#[inline(always)]
const fn pawn_attacks_set(color: Color, pawns: u64) -> u64 {
    let [(towards_a, _), (towards_h, _)] = pawn_captures(color, pawns);
    towards_a | towards_h
}

/// The single-push squares of the pawns `pawns` of `color` (set-wise, occupancy ignored).
#[inline(always)]
const fn pawn_push_set(color: Color, pawns: u64) -> u64 {
    match color {
        Color::White => pawns << 8,
        Color::Black => pawns >> 8,
    }
}

/// Iterator over the squares of a bitboard, lowest first.
#[derive(Clone, Copy)]
struct Squares(u64);

impl Iterator for Squares {
    type Item = u32;

    #[inline(always)]
    fn next(&mut self) -> Option<u32> {
        if self.0 == 0 {
            None
        } else {
            let sq = self.0.trailing_zeros();
            self.0 &= self.0 - 1;
            Some(sq)
        }
    }
}

/// Squares of `bb`, lowest first.
#[inline(always)]
pub(crate) fn squares(bb: u64) -> impl Iterator<Item = u32> {
    Squares(bb)
}

/// Where the pieces stand: the only part of a [`Board`] the mobility rules read (side to move,
/// castling rights and en passant are ignored by the thesis's definition).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Placement {
    /// Occupied squares per colour ([`Color::index`]).
    pub by_color: [u64; 2],
    /// Occupied squares per role ([`Role::index`]).
    pub by_role: [u64; 6],
}

impl Placement {
    /// The piece placement of a board.
    #[inline(always)]
    pub fn of(board: &Board) -> Self {
        Placement {
            by_color: board.by_color,
            by_role: board.by_role,
        }
    }

    /// Pieces of one colour and role.
    #[inline(always)]
    pub fn pieces(&self, color: Color, role: Role) -> u64 {
        self.by_color[color.index()] & self.by_role[role.index()]
    }

    /// All occupied squares.
    #[inline(always)]
    pub fn occupied(&self) -> u64 {
        self.by_color[0] | self.by_color[1]
    }

    #[inline(always)]
    fn toggle(&mut self, sq: u32, color: Color, role: Role) {
        self.by_color[color.index()] ^= bit(sq);
        self.by_role[role.index()] ^= bit(sq);
    }
}

/// What the legality test needs about one colour's king on one board.
#[derive(Clone, Copy, Debug)]
struct Safety {
    /// Whether the colour has a king (if not, nothing of this colour is kept).
    has_king: bool,
    /// The king's square (the lowest one on a malformed board with several).
    king: u32,
    /// Own pieces that are the only piece between the king and an enemy slider aligned with it.
    pinned: u64,
    /// Destinations that leave the king safe as far as checks go: everything without a check,
    /// the checker and the squares between it and the king with one, nothing with two (and
    /// nothing without a king).
    check_mask: u64,
    /// Whether the king is attacked by at least one enemy piece.
    in_check: bool,
}

/// Pins and checks of `color`'s king on `p`.
#[inline]
fn safety(p: &Placement, color: Color) -> Safety {
    let kings = p.pieces(color, Role::King);
    if kings == 0 {
        return Safety {
            has_king: false,
            king: 0,
            pinned: 0,
            check_mask: 0,
            in_check: false,
        };
    }
    let k = kings.trailing_zeros();
    let own = p.by_color[color.index()];
    let enemy = p.by_color[color.other().index()];
    let occ = own | enemy;
    let rq = enemy & (p.by_role[Role::Rook.index()] | p.by_role[Role::Queen.index()]);
    let bq = enemy & (p.by_role[Role::Bishop.index()] | p.by_role[Role::Queen.index()]);
    let mut checkers = (pawn_attacks(color, k) & enemy & p.by_role[Role::Pawn.index()])
        | (knight(k) & enemy & p.by_role[Role::Knight.index()])
        | (king(k) & enemy & p.by_role[Role::King.index()]);
    let mut pinned = 0;
    let (kr, kb) = (ROOK_PSEUDO[k as usize], BISHOP_PSEUDO[k as usize]);
    for sniper in squares((kr & rq) | (kb & bq)) {
        let b = between(k, sniper) & occ;
        if b == 0 {
            checkers |= bit(sniper);
        } else if b & (b - 1) == 0 {
            pinned |= b & own;
        }
    }
    let check_mask = if checkers == 0 {
        !0
    } else if checkers & (checkers - 1) == 0 {
        let ch = checkers.trailing_zeros();
        between(k, ch) | checkers
    } else {
        0
    };
    Safety {
        has_king: true,
        king: k,
        pinned,
        check_mask,
        in_check: checkers != 0,
    }
}

/// Kept squares of the king of `color` on `k`: adjacent squares without an own piece that no
/// enemy piece attacks once the king has left `k` (a slider's ray through `k` continues).
#[inline]
fn kept_king(p: &Placement, color: Color, k: u32) -> u64 {
    kept_king_among(p, color, k, !0)
}

/// [`kept_king`] restricted to the squares `among`.
#[inline]
fn kept_king_among(p: &Placement, color: Color, k: u32, among: u64) -> u64 {
    let mut cand = king(k) & !p.by_color[color.index()] & among;
    if cand == 0 {
        return 0;
    }
    let them = color.other();
    let enemy = p.by_color[them.index()];
    cand &= !pawn_attacks_set(them, enemy & p.by_role[Role::Pawn.index()]);
    let knights = enemy & p.by_role[Role::Knight.index()];
    let kings = enemy & p.by_role[Role::King.index()];
    let rq = enemy & (p.by_role[Role::Rook.index()] | p.by_role[Role::Queen.index()]);
    let bq = enemy & (p.by_role[Role::Bishop.index()] | p.by_role[Role::Queen.index()]);
    let occ = p.occupied() ^ bit(k);
    let mut kept = 0;
    for y in squares(cand) {
        let attacked = knight(y) & knights != 0
            || king(y) & kings != 0
            || (ROOK_PSEUDO[y as usize] & rq != 0 && rook(y, occ) & rq != 0)
            || (BISHOP_PSEUDO[y as usize] & bq != 0 && bishop(y, occ) & bq != 0);
        if !attacked {
            kept |= bit(y);
        }
    }
    kept
}

/// Kept squares of one piece of `color` and `role` on `q`, given its king's [`Safety`].
#[inline]
fn kept_piece(p: &Placement, color: Color, role: Role, q: u32, sf: &Safety) -> u64 {
    let own = p.by_color[color.index()];
    let occ = p.occupied();
    let cand = match role {
        Role::Pawn => {
            (pawn_attacks(color, q) & p.by_color[color.other().index()])
                | (pawn_push_set(color, bit(q)) & !occ)
        }
        Role::Knight => knight(q) & !own,
        Role::Bishop => bishop(q, occ) & !own,
        Role::Rook => rook(q, occ) & !own,
        Role::Queen => (rook(q, occ) | bishop(q, occ)) & !own,
        Role::King => {
            return if sf.has_king {
                kept_king(p, color, q)
            } else {
                0
            };
        }
    };
    let mut kept = cand & sf.check_mask;
    if sf.pinned & bit(q) != 0 {
        kept &= line(sf.king, q);
    }
    kept
}

/// Union of the kept squares of all pawns of `color` (set-wise for the unpinned ones).
#[inline]
fn kept_pawns(p: &Placement, color: Color, sf: &Safety) -> u64 {
    let pawns = p.pieces(color, Role::Pawn);
    if !sf.has_king || pawns == 0 {
        return 0;
    }
    let free = pawns & !sf.pinned;
    let enemy = p.by_color[color.other().index()];
    let mut kept = ((pawn_push_set(color, free) & !p.occupied())
        | (pawn_attacks_set(color, free) & enemy))
        & sf.check_mask;
    for q in squares(pawns & sf.pinned) {
        kept |= kept_piece(p, color, Role::Pawn, q, sf);
    }
    kept
}

/// Union of the kept squares of the pieces of `color` and `role` (not a pawn) standing on
/// `among`. Unpinned pieces share the check mask, so their candidates are united first; pinned
/// ones (rare) go through [`kept_piece`].
#[inline(always)]
fn kept_union(p: &Placement, color: Color, role: Role, among: u64, sf: &Safety) -> u64 {
    let pieces = p.pieces(color, role) & among;
    if pieces == 0 || !sf.has_king {
        return 0;
    }
    let occ = p.occupied();
    let free = pieces & !sf.pinned;
    let mut cand = 0;
    match role {
        Role::Knight => {
            for q in squares(free) {
                cand |= knight(q);
            }
        }
        Role::Bishop => {
            for q in squares(free) {
                cand |= bishop(q, occ);
            }
        }
        Role::Rook => {
            for q in squares(free) {
                cand |= rook(q, occ);
            }
        }
        Role::Queen => {
            for q in squares(free) {
                cand |= rook(q, occ) | bishop(q, occ);
            }
        }
        Role::King => {
            let mut u = 0;
            for k in squares(pieces) {
                u |= kept_king(p, color, k);
            }
            return u;
        }
        Role::Pawn => {
            for q in squares(free) {
                cand |= kept_piece(p, color, role, q, sf);
            }
        }
    }
    let mut u = cand & !p.by_color[color.index()] & sf.check_mask;
    for q in squares(pieces & sf.pinned) {
        u |= kept_piece(p, color, role, q, sf);
    }
    u
}

/// The kept squares of one piece on `sq` of `board` (empty if the square is empty). Meant for
/// inspection and tests; the blocks work with whole unions.
pub fn kept_squares(board: &Board, sq: u8) -> u64 {
    let p = Placement::of(board);
    match board.piece_at(sq) {
        Some((color, role)) => kept_piece(&p, color, role, u32::from(sq), &safety(&p, color)),
        None => 0,
    }
}

/// M(role, colour) for all 12 types, indexed by [`type_of`].
pub fn unions(p: &Placement) -> [u64; TYPES] {
    let mut u = [0; TYPES];
    for color in Color::ALL {
        let sf = safety(p, color);
        if !sf.has_king {
            continue;
        }
        u[type_of(color, Role::Pawn)] = kept_pawns(p, color, &sf);
        for role in [
            Role::Knight,
            Role::Bishop,
            Role::Rook,
            Role::Queen,
            Role::King,
        ] {
            u[type_of(color, role)] = kept_union(p, color, role, !0, &sf);
        }
    }
    u
}

/// The unions a move changes: for every type in `dirty` (bit [`type_of`]), M before and after
/// the move (they differ); every other type keeps its M.
#[derive(Clone, Copy, Debug)]
pub struct MoveUnions {
    /// Types whose union differs (bit `type_of(colour, role)`).
    pub dirty: u16,
    /// M of the dirty types on the board before the move (0 for the others).
    pub before: [u64; TYPES],
    /// M of the dirty types on the board after the move (0 for the others).
    pub after: [u64; TYPES],
}

/// The unions `mv` (legal on `board`) can change, before and after, computed from the pieces
/// whose kept squares can change (see the crate documentation for the rules and their proof).
pub fn move_unions(board: &Board, mv: &Move) -> MoveUnions {
    let changes = decompose(board, mv);
    let b = Placement::of(board);
    let mut a = b;
    for pc in changes.removed().iter().chain(changes.added()) {
        a.toggle(u32::from(pc.square), pc.color, pc.role);
    }
    let changed = changes.changed_squares();
    // Off the changed squares both boards agree, so a ray that reaches a changed square on
    // either board reaches the changed square nearest its origin on this occupancy.
    let occ = b.occupied() | a.occupied();

    // Sliders of each colour on either board (for the kings' zones).
    let rook_like = |p: &Placement, c: usize| {
        p.by_color[c] & (p.by_role[Role::Rook.index()] | p.by_role[Role::Queen.index()])
    };
    let bishop_like = |p: &Placement, c: usize| {
        p.by_color[c] & (p.by_role[Role::Bishop.index()] | p.by_role[Role::Queen.index()])
    };
    let rq_any = [0, 1].map(|c| rook_like(&b, c) | rook_like(&a, c));
    let bq_any = [0, 1].map(|c| bishop_like(&b, c) | bishop_like(&a, c));
    // Who sees a changed square: sliders whose rays reach it, knights and kings next to it.
    let (mut rays_r, mut rays_b, mut knight_near, mut king_near) = (0u64, 0u64, 0u64, 0u64);
    // zone[c] (with the steps from X added below): where the move can change what attacks the
    // candidates of c's king.
    let mut zone = [0u64; 2];
    for x in squares(changed) {
        let (rx, bx) = (rook(x, occ), bishop(x, occ));
        rays_r |= rx;
        rays_b |= bx;
        knight_near |= knight(x);
        king_near |= king(x);
        let (r_line, b_line) = (
            ROOK_PSEUDO[x as usize] | bit(x),
            BISHOP_PSEUDO[x as usize] | bit(x),
        );
        for (c, z) in zone.iter_mut().enumerate() {
            if r_line & rq_any[1 - c] != 0 {
                *z |= rx;
            }
            if b_line & bq_any[1 - c] != 0 {
                *z |= bx;
            }
        }
    }
    // Pawns capturing onto a changed square or pushing to it.
    let white_pawn_watch =
        pawn_attacks_set(Color::Black, changed) | pawn_push_set(Color::Black, changed);
    let black_pawn_watch =
        pawn_attacks_set(Color::White, changed) | pawn_push_set(Color::White, changed);
    let rq = b.by_role[Role::Rook.index()] | b.by_role[Role::Queen.index()];
    let bq = b.by_role[Role::Bishop.index()] | b.by_role[Role::Queen.index()];
    let mut hot = changed
        | (rays_r & rq)
        | (rays_b & bq)
        | (knight_near & b.by_role[Role::Knight.index()])
        | (white_pawn_watch & b.pieces(Color::White, Role::Pawn))
        | (black_pawn_watch & b.pieces(Color::Black, Role::Pawn));

    let sb = [safety(&b, Color::White), safety(&b, Color::Black)];
    // A colour's pins and checks read its king square and, from there, the pieces on the queen
    // lines and a knight's move away; if the move touched none of them they are unchanged.
    let sa = Color::ALL.map(|color| {
        let i = color.index();
        let kings = b.pieces(color, Role::King);
        let k = kings.trailing_zeros() as usize & 63;
        let reach = ROOK_PSEUDO[k] | BISHOP_PSEUDO[k] | knight(k as u32) | bit(k as u32);
        if kings != 0 && kings == a.pieces(color, Role::King) && changed & reach == 0 {
            sb[i]
        } else {
            safety(&a, color)
        }
    });
    for color in Color::ALL {
        let i = color.index();
        if sb[i].in_check || sa[i].in_check || sb[i].has_king != sa[i].has_king {
            hot |= b.by_color[i];
        } else if sb[i].king == sa[i].king {
            // Same king square: a piece pinned on both boards is pinned along the same line.
            hot |= sb[i].pinned ^ sa[i].pinned;
        } else {
            hot |= sb[i].pinned | sa[i].pinned;
        }
    }

    let mut out = MoveUnions {
        dirty: 0,
        before: [0; TYPES],
        after: [0; TYPES],
    };
    for color in Color::ALL {
        let i = color.index();
        king_unions(&b, &a, color, zone[i] | knight_near | king_near, &mut out);
        if hot & (b.by_color[i] | a.by_color[i]) == 0 {
            continue;
        }
        let (sb, sa) = (&sb[i], &sa[i]);
        if (b.pieces(color, Role::Pawn) | a.pieces(color, Role::Pawn)) & hot != 0 {
            out.set(
                type_of(color, Role::Pawn),
                kept_pawns(&b, color, sb),
                kept_pawns(&a, color, sa),
            );
        }
        let w = Worlds {
            b: &b,
            a: &a,
            sb,
            sa,
            hot,
        };
        type_unions(&w, color, Role::Knight, &mut out);
        type_unions(&w, color, Role::Bishop, &mut out);
        type_unions(&w, color, Role::Rook, &mut out);
        type_unions(&w, color, Role::Queen, &mut out);
    }
    out
}

impl MoveUnions {
    /// Records M of type `t` before and after, if they differ.
    #[inline(always)]
    fn set(&mut self, t: usize, before: u64, after: u64) {
        if before != after {
            self.dirty |= 1 << t;
            self.before[t] = before;
            self.after[t] = after;
        }
    }
}

/// Both boards of a move, with what [`type_unions`] needs about one colour.
struct Worlds<'p> {
    b: &'p Placement,
    a: &'p Placement,
    sb: &'p Safety,
    sa: &'p Safety,
    hot: u64,
}

/// M before and after for one non-pawn type with hot pieces (inlined per role, so the role
/// dispatch folds away).
#[inline(always)]
fn type_unions(w: &Worlds<'_>, color: Color, role: Role, out: &mut MoveUnions) {
    if (w.b.pieces(color, role) | w.a.pieces(color, role)) & w.hot == 0 {
        return;
    }
    let hot_b = kept_union(w.b, color, role, w.hot, w.sb);
    let hot_a = kept_union(w.a, color, role, w.hot, w.sa);
    if hot_b == hot_a {
        // The same union of the same clean part: M is unchanged.
        return;
    }
    // Off the hot squares both boards hold the same pieces with the same kept squares.
    let clean = kept_union(w.b, color, role, !w.hot, w.sb);
    out.set(type_of(color, role), clean | hot_b, clean | hot_a);
}

/// M of `color`'s king type before (`b`) and after (`a`) a move, into `out` if it changed.
/// `zone`: where the move can change what the enemy attacks (see the crate documentation).
///
/// A king that stays on its square with the same own pieces around it and outside the zone
/// keeps the verdict on every candidate outside the zone; only candidates in the zone are
/// tested on both boards, and the others once if those differ.
#[inline]
fn king_unions(b: &Placement, a: &Placement, color: Color, zone: u64, out: &mut MoveUnions) {
    let (kings_b, kings_a) = (b.pieces(color, Role::King), a.pieces(color, Role::King));
    let t = type_of(color, Role::King);
    if kings_b != kings_a || kings_b & kings_b.wrapping_sub(1) != 0 {
        // The king moved (or a malformed board has several): recompute.
        let (mut before, mut after) = (0, 0);
        for k in squares(kings_b) {
            before |= kept_king(b, color, k);
        }
        for k in squares(kings_a) {
            after |= kept_king(a, color, k);
        }
        out.set(t, before, after);
        return;
    }
    if kings_b == 0 {
        return;
    }
    let k = kings_b.trailing_zeros();
    let i = color.index();
    let near = king(k);
    let cand = near & !b.by_color[i];
    if cand != near & !a.by_color[i] || zone & bit(k) != 0 {
        out.set(t, kept_king(b, color, k), kept_king(a, color, k));
        return;
    }
    let touched = cand & zone;
    if touched == 0 {
        return;
    }
    let (before, after) = (
        kept_king_among(b, color, k, touched),
        kept_king_among(a, color, k, touched),
    );
    if before != after {
        let rest = kept_king_among(b, color, k, cand & !touched);
        out.set(t, rest | before, rest | after);
    }
}
