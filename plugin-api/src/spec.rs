//! The feature-set spec language: blocks joined by the thesis's two operators.
//!
//! `a+b` is the sum ⊕ (the blocks' indices side by side, §3.1) and `a*b` the product × (one
//! feature per pair, §3.2), binding tighter than `+`: `k*all+h` is (K × ALL) ⊕ H. A product's
//! feature ⟨i, j⟩ has index `i·|B| + j` (the thesis's striding, §3.4); a longer product
//! `a*b*c` strides the same way, `(i·|B| + j)·|C| + k`. Names are lower case (as every block
//! names itself; `K*ALL` is an error, not a second spelling) and `hv` is the thesis's name for
//! `all`. A term may not appear twice (`all+all`), but a block may appear
//! in several terms (`k*all+all`).
//!
//! A term ending in `^` is trained with a factorizer (nnue-pytorch's notation, `HalfKAv2_hm^`):
//! virtual features shared by many real ones, folded into the real weights on export (see
//! [`crate::feature_set`]). `^` only changes training; the exported network is the plain term's.

use std::fmt;

/// Why a spec is malformed. `Display`: `invalid feature set 'SPEC': REASON`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    /// The spec as given.
    pub spec: String,
    /// Why it is malformed.
    pub reason: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid feature set '{}': {}", self.spec, self.reason)
    }
}

impl std::error::Error for SpecError {}

/// A parsed spec: the terms of the sum, each a product of one or more block names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    terms: Vec<SpecTerm>,
}

/// One term of a spec: its factors' names and whether it is trained with a factorizer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecTerm {
    /// The factors' canonical names, in order.
    pub factors: Vec<String>,
    /// Whether the term ends in `^`.
    pub factorized: bool,
}

/// The canonical name of a block: trimmed, with the thesis's alias `hv` mapped to `all`.
pub fn canonical_block_name(name: &str) -> String {
    match name.trim() {
        "hv" => "all".to_string(),
        other => other.to_string(),
    }
}

impl Spec {
    /// Parses `spec`, canonicalising names and rejecting empty operands and repeated terms.
    pub fn parse(spec: &str) -> Result<Spec, SpecError> {
        let bad = |reason: String| SpecError {
            spec: spec.to_string(),
            reason,
        };
        if spec.trim().is_empty() {
            return Err(bad("it names no block".into()));
        }
        let mut terms: Vec<SpecTerm> = Vec::new();
        for part in spec.split('+') {
            let (part, factorized) = match part.trim().strip_suffix('^') {
                Some(rest) => (rest, true),
                None => (part, false),
            };
            let mut factors = Vec::new();
            for factor in part.split('*') {
                let name = canonical_block_name(factor);
                if name.chars().any(|c| c.is_ascii_uppercase()) {
                    return Err(bad(format!("block names are lower case, not '{name}'")));
                }
                if name.is_empty() {
                    return Err(bad(if part.contains('*') {
                        format!("empty operand of '*' in '{}'", part.trim())
                    } else {
                        "empty block name between '+' signs".into()
                    }));
                }
                factors.push(name);
            }
            if let Some(bad_name) = factors.iter().find(|f| f.contains('^')) {
                return Err(bad(format!("'^' must end a term, not '{bad_name}'")));
            }
            if terms.iter().any(|t| t.factors == factors) {
                return Err(bad(format!("'{}' appears twice", factors.join("*"))));
            }
            terms.push(SpecTerm {
                factors,
                factorized,
            });
        }
        Ok(Spec { terms })
    }

    /// The terms of the sum.
    pub fn terms(&self) -> &[SpecTerm] {
        &self.terms
    }

    /// Every operand in spec order (a block in several terms is listed once per term): the
    /// blocks a network records the identity of.
    pub fn operands(&self) -> impl Iterator<Item = &str> {
        self.terms
            .iter()
            .flat_map(|t| &t.factors)
            .map(String::as_str)
    }

    /// Whether a term is trained with a factorizer.
    pub fn is_factorized(&self) -> bool {
        self.terms.iter().any(|t| t.factorized)
    }

    /// The spec without its factorizer marks: the name of the network it trains.
    pub fn plain(&self) -> String {
        let terms: Vec<String> = self.terms.iter().map(|t| t.factors.join("*")).collect();
        terms.join("+")
    }

    /// The number of features, given each operand's size in [`operands`](Self::operands)
    /// order; `None` if `sizes` is too short or a product or the sum overflows `u32`.
    pub fn size(&self, sizes: &[u32]) -> Option<u32> {
        let mut sizes = sizes.iter();
        let mut total = 0u32;
        for term in &self.terms {
            let mut product = 1u32;
            for _ in &term.factors {
                product = product.checked_mul(*sizes.next()?)?;
            }
            total = total.checked_add(product)?;
        }
        Some(total)
    }
}

impl fmt::Display for Spec {
    /// The canonical form: `k*all^+h`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let terms: Vec<String> = self
            .terms
            .iter()
            .map(|t| {
                format!(
                    "{}{}",
                    t.factors.join("*"),
                    if t.factorized { "^" } else { "" }
                )
            })
            .collect();
        f.write_str(&terms.join("+"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_are_canonicalised_and_checked() {
        let names = |s: &str| {
            Spec::parse(s)
                .unwrap()
                .operands()
                .map(String::from)
                .collect::<Vec<_>>()
        };
        assert_eq!(names("hv+h+v"), vec!["all", "h", "v"]);
        assert_eq!(names(" all "), vec!["all"]);
        assert_eq!(Spec::parse("k * hv + h").unwrap().to_string(), "k*all+h");
        for upper in ["hv+H+v", "K * HV + h", "ALL"] {
            let e = Spec::parse(upper).unwrap_err().to_string();
            assert!(e.contains("lower case"), "{upper}: {e}");
        }
        assert_eq!(Spec::parse("k*all+all").unwrap().terms().len(), 2);
        for bad in [
            "",
            "all+",
            "+all",
            "all++h",
            "all+hv",
            "h+h",
            "k*",
            "*all",
            "k**all",
            "k*all+k*hv",
        ] {
            assert!(Spec::parse(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn products_multiply_and_sums_add() {
        let spec = Spec::parse("k*all+h").unwrap();
        assert_eq!(spec.size(&[64, 768, 8]), Some(64 * 768 + 8));
        assert_eq!(spec.size(&[64, 768]), None);
        let huge = Spec::parse("a*b*c").unwrap();
        assert_eq!(huge.size(&[1 << 12, 1 << 12, 1 << 12]), None);
    }
}
