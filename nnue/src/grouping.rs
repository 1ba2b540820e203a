//! How the accumulator stack sorts a feature set's terms ([`crate::AccumulatorStack`]'s module
//! docs): in one group, or in two — the terms a [`RefreshCache`](crate::refresh_cache) can
//! serve (binary, piecewise, refreshed on own king moves) and the others (threats), which then
//! refresh on their own triggers only, so that a king move refreshes the first group through
//! the cache while the second keeps its incremental update (Stockfish's hybrid update).

use plugin_api::{FeatureSet, RefreshTrigger, term_bit};

/// A group of terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Group {
    /// The group's terms ([`plugin_api::term_bit`]).
    pub mask: u64,
    /// Whether counts are kept for its indices (its terms are not all binary).
    pub counted: bool,
}

/// A feature set's terms as the stack groups them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Grouping {
    /// Every term in one group, refreshed whole; through a cache when `cacheable` (every
    /// term binary, the set refreshed on own king moves).
    One {
        /// The group.
        all: Group,
        /// Whether a refresh cache can serve it.
        cacheable: bool,
    },
    /// Two groups: the terms a cache serves, then the others.
    Two {
        /// The terms a refresh cache serves.
        cached: Group,
        /// The others.
        rest: Group,
        /// Each term's end of indices and whether it is in `rest`, in index order.
        ends: Vec<(u32, bool)>,
    },
}

impl Grouping {
    /// The grouping of `set`.
    ///
    /// Terms a cache can serve are binary and piecewise (its refreshes diff pieces); it pays
    /// when one of them is refreshed on own king moves. A set whose terms can all be served is
    /// one group with a cache if it has such a term; a set that mixes them with others
    /// (threats, which are not piecewise) is split in two when it has such a term and at most
    /// 64 terms; otherwise it is one group without a cache.
    pub fn of(set: &FeatureSet) -> Grouping {
        let terms = set.terms();
        let servable = |t: &plugin_api::Term| t.binary() && t.piecewise();
        let king_moved = |t: &plugin_api::Term| t.refresh_trigger() == RefreshTrigger::OwnKingMove;
        let mask_of = |want: bool| {
            terms
                .iter()
                .enumerate()
                .filter(|(_, t)| servable(t) == want)
                .fold(0u64, |m, (i, _)| m | term_bit(i))
        };
        let (served, other) = (mask_of(true), mask_of(false));
        let pays = terms.iter().any(|t| servable(t) && king_moved(t));
        if other == 0 || served == 0 || !pays || terms.len() > 64 {
            return Grouping::One {
                all: Group {
                    mask: u64::MAX,
                    counted: !set.binary(),
                },
                cacheable: other == 0
                    && set.binary()
                    && set.refresh_trigger() == RefreshTrigger::OwnKingMove,
            };
        }
        Grouping::Two {
            cached: Group {
                mask: served,
                counted: false,
            },
            rest: Group {
                mask: other,
                counted: terms.iter().any(|t| !servable(t) && !t.binary()),
            },
            ends: terms
                .iter()
                .map(|t| (t.offset + t.size, !servable(t)))
                .collect(),
        }
    }

    /// How many groups: 1 or 2.
    pub fn len(&self) -> usize {
        match self {
            Grouping::One { .. } => 1,
            Grouping::Two { .. } => 2,
        }
    }

    /// Whether the first group can use a refresh cache.
    pub fn cacheable(&self) -> bool {
        match self {
            Grouping::One { cacheable, .. } => *cacheable,
            Grouping::Two { .. } => true,
        }
    }

    /// The first group: the one a cache serves (with two), or the only one.
    pub fn first(&self) -> Group {
        match self {
            Grouping::One { all, .. } => *all,
            Grouping::Two { cached, .. } => *cached,
        }
    }

    /// The second group, with two.
    pub fn rest(&self) -> Option<Group> {
        match self {
            Grouping::One { .. } => None,
            Grouping::Two { rest, .. } => Some(*rest),
        }
    }

    /// The groups, first to last.
    pub fn iter(&self) -> impl Iterator<Item = Group> {
        std::iter::once(self.first()).chain(self.rest())
    }

    /// The group of feature `index` (in range).
    #[inline(always)]
    pub fn group_of(&self, index: u32) -> Group {
        match self {
            Grouping::One { all, .. } => *all,
            Grouping::Two { cached, rest, ends } => {
                match ends.iter().find(|&&(end, _)| index < end) {
                    Some(&(_, true)) => *rest,
                    _ => *cached,
                }
            }
        }
    }
}
