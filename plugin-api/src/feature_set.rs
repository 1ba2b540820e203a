//! Feature sets: blocks composed by the thesis's sum ⊕ and product × (see [`spec`](crate::spec)).
//!
//! A [`FeatureSet`] is a list of [`Term`]s laid side by side, each a single block or a product of
//! blocks. Products are composed here, on the host's side of the plugin boundary, so every
//! product of loaded blocks works in `host features`, the engine, the trainer and network
//! headers without any plugin code.
//!
//! **Products, incrementally.** For a term `a*b` and one perspective: if the move leaves `a`
//! unchanged (its delta is empty and asks for no refresh), the term's delta is `b`'s delta under
//! each active index of `a` (`i·|B| + j` for every active `i` and changed `j`); otherwise the
//! perspective is refreshed. `a*b*c` is `(a*b)*c`. Counts multiply: ⟨i, j⟩ is active as often as
//! the product of `i`'s and `j`'s counts.
//!
//! **Factorizers (training only).** A term marked `^` gets virtual features after the set's N
//! real ones: for a product `a*b`, the block `b` (⟨i, j⟩ also activates virtual `j`, shared by
//! every `i`); for a block that declares a factor map ([`crate::FeatureBlock::factor`]), that
//! map (`halfka_v2_hm^`: its 768 piece-square planes). [`FeatureSet::active_training`] lists
//! them; a trainer folds each virtual row into the real rows that share it on export
//! ([`FeatureSet::factor_pairs`]), so the exported network is an ordinary one of
//! [`FeatureSet::plain_name`]. Virtual features must be distinct within one board and
//! perspective (else the binary training input would count one where the folded network counts
//! two): a product's left factors must have one active index at most (`k*all^`), and a block's
//! factor map must be injective on any board (the conformance kit checks it).

use std::sync::{Arc, OnceLock};

use abi_stable::std_types::RResult;

use crate::block::{IndexList, PluginError, RefreshTrigger};
use crate::piece_table::PieceTable;
use crate::registry::{BlockError, LoadError, PluginRegistry, RegisteredBlock};
use crate::spec::Spec;
use crate::types::{Board, Color};

/// One term of a feature set's sum: a block, or a product of blocks, and where its indices start.
#[derive(Clone, Debug)]
pub struct Term {
    /// The term's canonical name (`all`, `k*all`).
    pub name: String,
    /// The factors in order (one for a plain block).
    pub factors: Vec<RegisteredBlock>,
    /// Sum of the sizes of the terms before it.
    pub offset: u32,
    /// Number of indices: the product of the factors' sizes.
    pub size: u32,
    /// Identity of the layout: the block's own, or for a product one derived from the factors'.
    pub layout_id: u64,
    /// Bound on the indices `active` emits for one perspective.
    pub max_active: u32,
    /// Bound on the indices in one list of one perspective of a delta.
    pub max_delta: u32,
    /// The roles whose moves may change the term ([`Role::bit`](crate::Role::bit)s): any of
    /// its factors' ([`crate::FeatureBlock::CHANGED_BY`]).
    pub changed_by: u8,
    /// Whether the term is trained with a factorizer (`^`).
    pub factorized: bool,
    /// Where the term's virtual features start (at or after the set's N); 0 if not factorized.
    pub virtual_offset: u32,
    /// Number of the term's virtual features; 0 if not factorized.
    pub virtual_size: u32,
    /// What each piece adds to the term's indices, made on first asking
    /// ([`piece_table`](Self::piece_table)).
    pieces: OnceLock<Option<Arc<PieceTable>>>,
}

/// The layout identity of a product: FNV-1a over `×` and the factors' identities in order, so
/// that a change of any factor's layout changes the product's.
pub fn product_layout_id(factor_ids: &[u64]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in "×"
        .bytes()
        .chain(factor_ids.iter().flat_map(|id| id.to_le_bytes()))
    {
        h ^= u64::from(byte);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

impl Term {
    fn new(factors: Vec<RegisteredBlock>, offset: u32, spec: &str) -> Result<Term, LoadError> {
        let name = factors
            .iter()
            .map(|f| f.descriptor.name.as_str())
            .collect::<Vec<_>>()
            .join("*");
        let too_big = |what: &str| LoadError::BadSpec {
            spec: spec.to_string(),
            reason: format!("the {what} of '{name}' does not fit in 32 bits"),
        };
        let product = |f: fn(&RegisteredBlock) -> u32, of: &[RegisteredBlock]| {
            of.iter().try_fold(1u32, |acc, b| acc.checked_mul(f(b)))
        };
        let size = product(|b| b.descriptor.size, &factors).ok_or_else(|| too_big("size"))?;
        let max_active = product(|b| b.descriptor.max_active, &factors)
            .ok_or_else(|| too_big("active bound"))?;
        let (last, prefix) = factors.split_last().expect("a term has a factor");
        let max_delta = product(|b| b.descriptor.max_active, prefix)
            .and_then(|a| a.checked_mul(last.descriptor.max_delta))
            .ok_or_else(|| too_big("delta bound"))?;
        let changed_by = factors
            .iter()
            .fold(0, |roles, f| roles | f.descriptor.changed_by);
        let layout_id = match factors.as_slice() {
            [single] => single.descriptor.layout_id,
            _ => product_layout_id(
                &factors
                    .iter()
                    .map(|f| f.descriptor.layout_id)
                    .collect::<Vec<_>>(),
            ),
        };
        Ok(Term {
            name,
            factors,
            offset,
            size,
            layout_id,
            max_active,
            max_delta,
            changed_by,
            factorized: false,
            virtual_offset: 0,
            virtual_size: 0,
            pieces: OnceLock::new(),
        })
    }

    /// What each piece adds to the term's indices ([`PieceTable`]), made from its block's
    /// `active` the first time it is asked for; `None` for a term that has none.
    pub fn piece_table(&self) -> Option<&Arc<PieceTable>> {
        self.pieces
            .get_or_init(|| {
                let [block] = self.factors.as_slice() else {
                    return None;
                };
                let active = |board: &Board, p, out: &mut Vec<u32>| {
                    Term::factor_active(block, board, p, out).is_ok()
                };
                PieceTable::of(&block.descriptor, self.max_delta, active).map(Arc::new)
            })
            .as_ref()
    }

    /// Marks the term as factorized with its virtual features at `virtual_offset`, checking that
    /// it can be: a product whose left factors have at most one active index, or a block that
    /// declares a factor map.
    fn factorize(&mut self, virtual_offset: u32, spec: &str) -> Result<(), LoadError> {
        let bad = |reason: String| LoadError::BadSpec {
            spec: spec.to_string(),
            reason,
        };
        let (last, prefix) = self.factors.split_last().expect("a term has a factor");
        self.virtual_size = if prefix.is_empty() {
            match last.descriptor.factor_size {
                0 => {
                    return Err(bad(format!(
                        "block '{}' declares no factor, so '{}^' has none (a product 'a*b^' factorizes by 'b')",
                        self.name, self.name
                    )));
                }
                size => size,
            }
        } else {
            let left_active: u64 = prefix
                .iter()
                .map(|f| u64::from(f.descriptor.max_active))
                .product();
            if left_active > 1 {
                return Err(bad(format!(
                    "'{}^' needs left factors with one active index at most (they have up to {left_active})",
                    self.name
                )));
            }
            last.descriptor.size
        };
        self.factorized = true;
        self.virtual_offset = virtual_offset;
        Ok(())
    }

    /// The virtual feature (an index of the training layout) shared by the term's index `local`
    /// (counted from the term's start). Only for factorized terms.
    pub fn virtual_index(&self, local: u32) -> Result<u32, BlockError> {
        let (last, prefix) = self.factors.split_last().expect("a term has a factor");
        let v = if prefix.is_empty() {
            (last.descriptor.factor)(local)
        } else {
            local % last.descriptor.size
        };
        if v >= self.virtual_size {
            return Err(BlockError {
                block: last.descriptor.name.to_string(),
                origin: last.origin.clone(),
                message: format!(
                    "its factor of index {local} is {v}, not below its factor size {}",
                    self.virtual_size
                ),
            });
        }
        Ok(self.virtual_offset + v)
    }

    /// When the term asks for refreshes: a block's own promise; for a product whose left
    /// factors all depend on the own king square alone ([`RefreshTrigger::OwnKingSquare`]), a
    /// refresh only on own king moves (unless its last factor promises nothing); otherwise no
    /// promise.
    pub fn refresh_trigger(&self) -> RefreshTrigger {
        let (last, prefix) = self.factors.split_last().expect("a term has a factor");
        let last = last.descriptor.refresh_trigger;
        if prefix.is_empty() {
            return last;
        }
        let king_keyed = prefix
            .iter()
            .all(|f| f.descriptor.refresh_trigger == RefreshTrigger::OwnKingSquare);
        if king_keyed && last != RefreshTrigger::AnyMove {
            RefreshTrigger::OwnKingMove
        } else {
            RefreshTrigger::AnyMove
        }
    }

    /// Whether the term emits every index at most once (all its factors do).
    pub fn binary(&self) -> bool {
        self.factors.iter().all(|f| f.descriptor.binary)
    }

    /// Whether the term is a sum over pieces: a piecewise block, or a product of piecewise
    /// blocks whose left factors depend on the own king square alone.
    pub fn piecewise(&self) -> bool {
        let (last, prefix) = self.factors.split_last().expect("a term has a factor");
        last.descriptor.piecewise
            && prefix.iter().all(|f| {
                f.descriptor.piecewise
                    && f.descriptor.refresh_trigger == RefreshTrigger::OwnKingSquare
            })
    }

    /// Whether the term is a product of two or more blocks.
    pub fn is_product(&self) -> bool {
        self.factors.len() > 1
    }

    /// Appends one factor's active indices of `board` from `p` to `out` (unoffset), checking its
    /// buffer and its size.
    pub(crate) fn factor_active(
        factor: &RegisteredBlock,
        board: &Board,
        p: Color,
        out: &mut Vec<u32>,
    ) -> Result<(), BlockError> {
        let d = &factor.descriptor;
        let start = out.len();
        out.reserve(d.max_active as usize);
        let spare = &mut out.spare_capacity_mut()[..d.max_active as usize];
        let mut list = IndexList::placed(spare, 0, d.size);
        let buffer = list.buffer();
        let r = (d.active)(board, p, &mut list);
        if list.buffer() != buffer {
            return Err(lists_replaced(factor));
        }
        let (n, stray) = (list.len(), list.stray());
        // SAFETY: the list (the one made here: checked) wrote its first `n` entries, right
        // after the vector's `start`.
        unsafe { out.set_len(start + n) };
        if let RResult::RErr(e) = r {
            return Err(block_error(factor, e));
        }
        match stray {
            Some(ix) => Err(index_past_block(factor, "emitted", ix)),
            None => Ok(()),
        }
    }

    /// Appends the term's active indices of `board` from `p`, offset into the feature set.
    pub(crate) fn active_offset(
        &self,
        board: &Board,
        p: Color,
        out: &mut Vec<u32>,
    ) -> Result<(), BlockError> {
        let start = out.len();
        combined_active(&self.factors, board, p, out)?;
        for ix in &mut out[start..] {
            *ix += self.offset;
        }
        Ok(())
    }
}

/// Appends the active indices of the product of `factors` (one factor: its own indices): every
/// combination of the factors' active indices, strided. `out` past its length is scratch.
pub(crate) fn combined_active(
    factors: &[RegisteredBlock],
    board: &Board,
    p: Color,
    out: &mut Vec<u32>,
) -> Result<(), BlockError> {
    let start = out.len();
    let (first, rest) = factors.split_first().expect("a term has a factor");
    Term::factor_active(first, board, p, out)?;
    for factor in rest {
        // out[start..mid] holds the combinations so far; append the factor's list after it,
        // then the new combinations after that, and move them down.
        let mid = out.len();
        Term::factor_active(factor, board, p, out)?;
        let end = out.len();
        let size = factor.descriptor.size;
        for i in start..mid {
            for j in mid..end {
                let combined = out[i] * size + out[j];
                out.push(combined);
            }
        }
        out.copy_within(end.., start);
        out.truncate(start + (mid - start) * (end - mid));
    }
    Ok(())
}

/// The error of term `term` that emitted `ix`, at or above the term's size, as a target of
/// [`FeatureSet::delta_into`] or [`FeatureSet::active_into`] found (`what`: "delta emitted",
/// "emitted"). Apart from the per-move loops, which only return it.
#[cold]
#[inline(never)]
pub(crate) fn index_past_term(term: &Term, what: &str, ix: u32) -> BlockError {
    BlockError {
        block: term.name.clone(),
        origin: term.factors[0].origin.clone(),
        message: format!("{what} index {ix} >= its size {}", term.size),
    }
}

/// The error of a block that put other index lists in place of those the host gave it: their
/// indices were never checked, and the host's lists hold none.
#[cold]
#[inline(never)]
pub(crate) fn lists_replaced(block: &RegisteredBlock) -> BlockError {
    BlockError {
        block: block.descriptor.name.to_string(),
        origin: block.origin.clone(),
        message: "replaced the index lists it was given".into(),
    }
}

/// The error of `block` giving an index at or above its size (`what`: "emitted", "delta
/// emitted").
pub(crate) fn index_past_block(block: &RegisteredBlock, what: &str, ix: u32) -> BlockError {
    BlockError {
        block: block.descriptor.name.to_string(),
        origin: block.origin.clone(),
        message: format!("{what} index {ix} >= its size {}", block.descriptor.size),
    }
}

pub(crate) fn block_error(block: &RegisteredBlock, e: PluginError) -> BlockError {
    BlockError {
        block: block.descriptor.name.to_string(),
        origin: block.origin.clone(),
        message: e.message.to_string(),
    }
}

/// Terms laid side by side (the thesis's ⊕): the sparse input of one network.
#[derive(Clone, Debug)]
pub struct FeatureSet {
    name: String,
    plain_name: String,
    terms: Vec<Term>,
    size: u32,
    training_size: u32,
}

impl PluginRegistry {
    /// The feature set named by `spec` (`all+ph+pv`, `k*all+h`).
    pub fn feature_set(&self, spec: &str) -> Result<FeatureSet, LoadError> {
        let parsed = Spec::parse(spec)?;
        let mut terms = Vec::with_capacity(parsed.terms().len());
        let mut offset = 0u32;
        for names in parsed.terms() {
            let factors = names
                .factors
                .iter()
                .map(|name| self.block(name).cloned())
                .collect::<Result<Vec<_>, _>>()?;
            let term = Term::new(factors, offset, spec)?;
            offset = offset
                .checked_add(term.size)
                .ok_or_else(|| LoadError::BadSpec {
                    spec: spec.to_string(),
                    reason: "its total size does not fit in 32 bits".into(),
                })?;
            terms.push(term);
        }
        let overflow = || LoadError::BadSpec {
            spec: spec.to_string(),
            reason: "its virtual features do not fit in 32 bits".into(),
        };
        let mut virtual_offset = offset;
        for (term, names) in terms.iter_mut().zip(parsed.terms()) {
            if names.factorized {
                term.factorize(virtual_offset, spec)?;
                virtual_offset = virtual_offset
                    .checked_add(term.virtual_size)
                    .ok_or_else(overflow)?;
            }
        }
        Ok(FeatureSet {
            name: parsed.to_string(),
            plain_name: parsed.plain(),
            terms,
            size: offset,
            training_size: virtual_offset,
        })
    }
}

impl FeatureSet {
    /// Canonical name (`all+ph+pv`, `k*all^+h`; `hv` written as `all`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The name without factorizer marks (`k*all+h`): the feature set of the networks it makes.
    pub fn plain_name(&self) -> &str {
        &self.plain_name
    }

    /// Total number of (real) indices N: the size of a network's input.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// N plus the virtual features of the factorized terms: the rows a trainer holds.
    pub fn training_size(&self) -> u32 {
        self.training_size
    }

    /// Whether a term is factorized (the training layout is then larger than N).
    pub fn is_factorized(&self) -> bool {
        self.terms.iter().any(|t| t.factorized)
    }

    /// A position in the training layout: [`active`](Self::active)'s indices, each factorized
    /// term's followed by the virtual features of its active indices.
    pub fn active_training(
        &self,
        board: &Board,
        perspective: Color,
        out: &mut Vec<u32>,
    ) -> Result<(), BlockError> {
        for term in &self.terms {
            let from = out.len();
            term.active_offset(board, perspective, out)?;
            if term.factorized {
                for k in from..out.len() {
                    out.push(term.virtual_index(out[k] - term.offset)?);
                }
            }
        }
        Ok(())
    }

    /// Every (real index, virtual index) pair of the factorized terms: a trainer adds each
    /// virtual row to its real rows to export an ordinary network.
    pub fn factor_pairs(&self) -> Result<Vec<(u32, u32)>, BlockError> {
        let mut pairs = Vec::new();
        for term in self.terms.iter().filter(|t| t.factorized) {
            for local in 0..term.size {
                pairs.push((term.offset + local, term.virtual_index(local)?));
            }
        }
        Ok(pairs)
    }

    /// The terms with their offsets.
    pub fn terms(&self) -> &[Term] {
        &self.terms
    }

    /// Every operand block in spec order (a block in several terms once per term): the blocks
    /// whose identities a network records.
    pub fn operands(&self) -> impl Iterator<Item = &RegisteredBlock> {
        self.terms.iter().flat_map(|t| t.factors.iter())
    }

    /// When the set asks for refreshes: no promise if a term makes none; else only on own king
    /// moves if a term refreshes then; else only when the own king changes side if a term
    /// refreshes then; else never ([`RefreshTrigger::OwnKingSquare`] only if
    /// every term promises it).
    pub fn refresh_trigger(&self) -> RefreshTrigger {
        let triggers: Vec<RefreshTrigger> = self.terms.iter().map(Term::refresh_trigger).collect();
        if triggers.contains(&RefreshTrigger::AnyMove) {
            RefreshTrigger::AnyMove
        } else if triggers.contains(&RefreshTrigger::OwnKingMove) {
            RefreshTrigger::OwnKingMove
        } else if triggers.contains(&RefreshTrigger::OwnKingSide) {
            RefreshTrigger::OwnKingSide
        } else if triggers.iter().all(|&t| t == RefreshTrigger::OwnKingSquare) {
            RefreshTrigger::OwnKingSquare
        } else {
            RefreshTrigger::Never
        }
    }

    /// Whether every index is emitted at most once per board and perspective (counts only go
    /// 0 ↔ 1): every term is binary, and terms never share indices.
    pub fn binary(&self) -> bool {
        self.terms.iter().all(Term::binary)
    }

    /// Whether every term is a sum over pieces (see [`crate::BlockDescriptor::piecewise`]).
    pub fn piecewise(&self) -> bool {
        self.terms.iter().all(Term::piecewise)
    }

    /// Bound on the indices [`active`](Self::active) returns for one perspective.
    pub fn max_active(&self) -> usize {
        self.terms.iter().map(|t| t.max_active as usize).sum()
    }

    /// Bound on the indices of one list of one perspective in [`delta`](Self::delta).
    pub fn max_delta(&self) -> usize {
        self.terms.iter().map(|t| t.max_delta as usize).sum()
    }

    /// Appends all active indices (with duplicates, offset) of `board` from `perspective`.
    pub fn active(
        &self,
        board: &Board,
        perspective: Color,
        out: &mut Vec<u32>,
    ) -> Result<(), BlockError> {
        for term in &self.terms {
            term.active_offset(board, perspective, out)?;
        }
        Ok(())
    }

    /// Appends the active indices of the terms in `mask` (bit t for term t, see [`term_bit`]).
    /// A term with a [`PieceTable`] lists them from it: its block's indices (the conformance
    /// kit checks it), without a call into the plugin (the evaluator's refreshes).
    pub fn active_terms(
        &self,
        board: &Board,
        perspective: Color,
        mask: u64,
        out: &mut Vec<u32>,
    ) -> Result<(), BlockError> {
        for (t, term) in self.terms.iter().enumerate() {
            if mask & term_bit(t) == 0 {
                continue;
            }
            let listed = term.piece_table().is_some_and(|table| {
                table.active(board, perspective, |ix| out.push(ix + term.offset))
            });
            if !listed {
                term.active_offset(board, perspective, out)?;
            }
        }
        Ok(())
    }

    /// Sorted unique active indices: the binary network input.
    pub fn active_set(&self, board: &Board, perspective: Color) -> Result<Vec<u32>, BlockError> {
        let mut v = Vec::with_capacity(self.max_active());
        self.active(board, perspective, &mut v)?;
        v.sort_unstable();
        v.dedup();
        Ok(v)
    }
}

/// The bit of term `t` in the term masks of [`FeatureSet::active_terms`] and
/// [`crate::FeatureDelta::refresh_terms`]; terms from the 64th on share the last bit.
#[inline(always)]
pub fn term_bit(t: usize) -> u64 {
    1 << t.min(63)
}
