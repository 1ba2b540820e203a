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

use abi_stable::std_types::RResult;

use crate::block::{IndexList, MoveDelta, PluginError, RefreshTrigger};
use crate::loader::{BlockError, LoadError, PluginRegistry, RegisteredBlock};
use crate::spec::Spec;
use crate::types::{Board, Color, Move};

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
    /// Whether the term is trained with a factorizer (`^`).
    pub factorized: bool,
    /// Where the term's virtual features start (at or after the set's N); 0 if not factorized.
    pub virtual_offset: u32,
    /// Number of the term's virtual features; 0 if not factorized.
    pub virtual_size: u32,
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
            factorized: false,
            virtual_offset: 0,
            virtual_size: 0,
        })
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
    fn factor_active(
        factor: &RegisteredBlock,
        board: &Board,
        p: Color,
        out: &mut Vec<u32>,
    ) -> Result<(), BlockError> {
        let d = &factor.descriptor;
        let start = out.len();
        out.reserve(d.max_active as usize);
        let spare = &mut out.spare_capacity_mut()[..d.max_active as usize];
        let mut list = IndexList::in_spare(spare);
        let r = (d.active)(board, p, &mut list);
        let n = list.len();
        // SAFETY: the list wrote its first `n` entries, right after the vector's `start`.
        unsafe { out.set_len(start + n) };
        if let RResult::RErr(e) = r {
            return Err(block_error(factor, e));
        }
        // The largest index first (a loop without exits, which the compiler vectorises), the
        // culprit only when there is one.
        let largest = out[start..].iter().copied().max().unwrap_or(0);
        if let Some(ix) = (largest >= d.size)
            .then(|| out[start..].iter().find(|&&ix| ix >= d.size))
            .flatten()
        {
            return Err(BlockError {
                block: d.name.to_string(),
                origin: factor.origin.clone(),
                message: format!("emitted index {ix} >= its size {}", d.size),
            });
        }
        Ok(())
    }

    /// Appends the term's active indices of `board` from `p`, offset into the feature set.
    fn active_offset(&self, board: &Board, p: Color, out: &mut Vec<u32>) -> Result<(), BlockError> {
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
fn combined_active(
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

fn block_error(block: &RegisteredBlock, e: PluginError) -> BlockError {
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
    pub fn active_terms(
        &self,
        board: &Board,
        perspective: Color,
        mask: u64,
        out: &mut Vec<u32>,
    ) -> Result<(), BlockError> {
        for (t, term) in self.terms.iter().enumerate() {
            if mask & term_bit(t) != 0 {
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

    /// A delta buffer sized for this feature set (allocate once, reuse for every move).
    pub fn delta_buffer(&self) -> FeatureDelta {
        let cap = self.max_delta();
        let factor_cap = self
            .terms
            .iter()
            .filter(|t| t.is_product())
            .flat_map(|t| &t.factors)
            .map(|f| f.descriptor.max_delta as usize)
            .max()
            .unwrap_or(0);
        let prefix_cap = self
            .terms
            .iter()
            .filter(|t| t.is_product())
            .map(|t| 2 * t.max_active as usize)
            .max()
            .unwrap_or(0);
        FeatureDelta {
            added: [vec![0; cap], vec![0; cap]],
            removed: [vec![0; cap], vec![0; cap]],
            n_added: [0; 2],
            n_removed: [0; 2],
            refresh: [false; 2],
            refresh_terms: [0; 2],
            factor_lists: std::array::from_fn(|_| vec![0; factor_cap]),
            prefix: Vec::with_capacity(prefix_cap),
        }
    }

    /// Fills `buf` with what `mv` (legal on `board`) adds and removes, both perspectives, every
    /// term offset. One call per block (a product also lists its left factors' active indices);
    /// no allocation.
    pub fn delta(
        &self,
        board: &Board,
        mv: &Move,
        buf: &mut FeatureDelta,
    ) -> Result<(), BlockError> {
        buf.n_added = [0; 2];
        buf.n_removed = [0; 2];
        buf.refresh = [false; 2];
        buf.refresh_terms = [0; 2];
        // Every term writes at most its `max_delta` indices after those of the terms before it:
        // lists this long hold them all, and each term's room needs no check of its own.
        let need = self.max_delta();
        assert!(
            buf.added
                .iter()
                .chain(&buf.removed)
                .all(|l| l.len() >= need),
            "a delta buffer made for another feature set"
        );
        for (t, term) in self.terms.iter().enumerate() {
            if term.is_product() {
                let before = buf.refresh;
                buf.refresh = [false; 2];
                self.product_delta(term, board, mv, buf)?;
                for (p, was) in before.into_iter().enumerate() {
                    if buf.refresh[p] {
                        buf.refresh_terms[p] |= term_bit(t);
                    }
                    buf.refresh[p] |= was;
                }
                continue;
            }
            let block = &term.factors[0];
            let cap = term.max_delta as usize;
            let (starts_a, starts_r) = (buf.n_added, buf.n_removed);
            let [a0, a1] = &mut buf.added;
            let [r0, r1] = &mut buf.removed;
            let mut md = MoveDelta {
                added: [
                    IndexList::new(room(a0, starts_a[0], cap)),
                    IndexList::new(room(a1, starts_a[1], cap)),
                ],
                removed: [
                    IndexList::new(room(r0, starts_r[0], cap)),
                    IndexList::new(room(r1, starts_r[1], cap)),
                ],
                refresh: [false; 2],
            };
            if let RResult::RErr(e) = (block.descriptor.delta)(board, mv, &mut md) {
                return Err(block_error(block, e));
            }
            let counts_a = [md.added[0].len(), md.added[1].len()];
            let counts_r = [md.removed[0].len(), md.removed[1].len()];
            for (p, asked) in md.refresh.into_iter().enumerate() {
                if asked {
                    buf.refresh[p] = true;
                    buf.refresh_terms[p] |= term_bit(t);
                }
            }
            // The first term's indices are the set's already.
            if term.offset != 0 {
                for (list, starts, counts) in [
                    (&mut buf.added, starts_a, counts_a),
                    (&mut buf.removed, starts_r, counts_r),
                ] {
                    for p in 0..2 {
                        for ix in &mut list[p][starts[p]..starts[p] + counts[p]] {
                            *ix += term.offset;
                        }
                    }
                }
            }
            for p in 0..2 {
                buf.n_added[p] += counts_a[p];
                buf.n_removed[p] += counts_r[p];
            }
        }
        Ok(())
    }

    /// The delta of a product term: refresh a perspective unless only the last factor changed,
    /// in which case its changes are emitted under every active combination of the others.
    fn product_delta(
        &self,
        term: &Term,
        board: &Board,
        mv: &Move,
        buf: &mut FeatureDelta,
    ) -> Result<(), BlockError> {
        let (last, prefix) = term.factors.split_last().expect("a product has factors");
        // Which perspectives a left factor changes (then they are refreshed).
        let mut changed = [false; 2];
        for factor in prefix {
            let md = call_delta(factor, board, mv, &mut buf.factor_lists)?;
            for (p, c) in changed.iter_mut().enumerate() {
                *c |= md.refresh[p] || !md.added[p].is_empty() || !md.removed[p].is_empty();
            }
        }
        let md = call_delta(last, board, mv, &mut buf.factor_lists)?;
        let last_size = last.descriptor.size;
        let lists: [[(usize, usize); 2]; 2] = [
            [(0, md.added[0].len()), (2, md.removed[0].len())],
            [(1, md.added[1].len()), (3, md.removed[1].len())],
        ];
        let last_refresh = md.refresh;
        for p in Color::ALL {
            let pi = p.index();
            if changed[pi] || last_refresh[pi] {
                buf.refresh[pi] = true;
                continue;
            }
            let [(added_list, n_added), (removed_list, n_removed)] = lists[pi];
            if n_added == 0 && n_removed == 0 {
                continue;
            }
            // The left factors' combined active indices (unchanged by the move).
            buf.prefix.clear();
            combined_active(prefix, board, p, &mut buf.prefix)?;
            for (list, n, out, count) in [
                (
                    added_list,
                    n_added,
                    &mut buf.added[pi],
                    &mut buf.n_added[pi],
                ),
                (
                    removed_list,
                    n_removed,
                    &mut buf.removed[pi],
                    &mut buf.n_removed[pi],
                ),
            ] {
                for &i in &buf.prefix {
                    for &j in &buf.factor_lists[list][..n] {
                        out[*count] = term.offset + i * last_size + j;
                        *count += 1;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Calls one block's `delta` into the scratch lists (added White, added Black, removed White,
/// removed Black) and returns the filled lists.
fn call_delta<'b>(
    block: &RegisteredBlock,
    board: &Board,
    mv: &Move,
    lists: &'b mut [Vec<u32>; 4],
) -> Result<MoveDelta<'b>, BlockError> {
    let cap = block.descriptor.max_delta as usize;
    let [aw, ab, rw, rb] = lists;
    let mut md = MoveDelta {
        added: [
            IndexList::new(&mut aw[..cap]),
            IndexList::new(&mut ab[..cap]),
        ],
        removed: [
            IndexList::new(&mut rw[..cap]),
            IndexList::new(&mut rb[..cap]),
        ],
        refresh: [false; 2],
    };
    if let RResult::RErr(e) = (block.descriptor.delta)(board, mv, &mut md) {
        return Err(block_error(block, e));
    }
    for p in 0..2 {
        if md.added[p].overflowed() || md.removed[p].overflowed() {
            md.refresh[p] = true;
        }
    }
    Ok(md)
}

/// The bit of term `t` in the term masks of [`FeatureSet::active_terms`] and
/// [`FeatureDelta::refresh_terms`]; terms from the 64th on share the last bit.
#[inline(always)]
pub fn term_bit(t: usize) -> u64 {
    1 << t.min(63)
}

/// A term's room of `cap` indices in a delta list, after the `start` indices of the terms
/// before it. The caller has checked that the list holds `start + cap` indices.
#[inline(always)]
fn room(list: &mut [u32], start: usize, cap: usize) -> &mut [u32] {
    debug_assert!(start + cap <= list.len());
    // SAFETY: start + cap <= list.len(), which `FeatureSet::delta` asserts for every term.
    unsafe { list.get_unchecked_mut(start..start + cap) }
}

/// Host-owned result of [`FeatureSet::delta`]: per perspective, added and removed indices
/// (offset into the whole feature set) and whether a refresh is needed.
#[derive(Clone, Debug)]
pub struct FeatureDelta {
    added: [Vec<u32>; 2],
    removed: [Vec<u32>; 2],
    n_added: [usize; 2],
    n_removed: [usize; 2],
    refresh: [bool; 2],
    /// Per perspective, the terms that asked for the refresh ([`term_bit`]).
    refresh_terms: [u64; 2],
    /// A product's factor deltas: added White, added Black, removed White, removed Black.
    factor_lists: [Vec<u32>; 4],
    /// A product's left factors' combined active indices.
    prefix: Vec<u32>,
}

impl FeatureDelta {
    /// Indices whose count rises by one for `perspective`.
    #[inline(always)]
    pub fn added(&self, perspective: Color) -> &[u32] {
        let p = perspective.index();
        &self.added[p][..self.n_added[p]]
    }

    /// Indices whose count falls by one for `perspective`.
    #[inline(always)]
    pub fn removed(&self, perspective: Color) -> &[u32] {
        let p = perspective.index();
        &self.removed[p][..self.n_removed[p]]
    }

    /// Whether `perspective` must be recomputed from scratch (its lists are then meaningless).
    #[inline(always)]
    pub fn needs_refresh(&self, perspective: Color) -> bool {
        self.refresh[perspective.index()]
    }

    /// The terms whose indices must be recomputed for `perspective` (bit t for term t, see
    /// [`term_bit`]): their lists are meaningless, the other terms' lists are exact. An
    /// evaluator that keeps terms apart refreshes only these.
    #[inline(always)]
    pub fn refresh_terms(&self, perspective: Color) -> u64 {
        self.refresh_terms[perspective.index()]
    }
}
