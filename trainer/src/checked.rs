//! Numbers checked on the way in: the bounded types of the settings, read from a manifest
//! (serde) or a command line (`FromStr`, which clap uses) through the same check, so a typo
//! is refused in both places with the same words instead of asking for centuries of work or an
//! allocation beyond any machine.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Implements, for a checked newtype over `$inner` read as `$raw`: `FromStr` (parse the raw
/// number, then the type's `TryFrom` check), `Display` (the number) and `From` into `$inner`
/// (how serde writes it).
macro_rules! number_forms {
    ($raw:ty => $name:ident $(<const $c:ident: u64>)? => $inner:ty) => {
        impl$(<const $c: u64>)? FromStr for $name$(<$c>)? {
            type Err = String;

            fn from_str(text: &str) -> Result<Self, String> {
                let v: $raw = text
                    .trim()
                    .parse()
                    .map_err(|_| format!("'{text}' is not a number"))?;
                Self::try_from(v)
            }
        }

        impl$(<const $c: u64>)? fmt::Display for $name$(<$c>)? {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}", self.0)
            }
        }

        impl$(<const $c: u64>)? From<$name$(<$c>)?> for $inner {
            fn from(v: $name$(<$c>)?) -> $inner {
                v.0
            }
        }

        impl$(<const $c: u64>)? $name$(<$c>)? {
            /// The number.
            pub const fn get(self) -> $inner {
                self.0
            }
        }
    };
}

/// Whether a setting holds its zero: settings that are off at zero are left out of stored
/// configurations (`#[serde(skip_serializing_if = "crate::checked::is_zero")]`), so that the
/// keys of runs without them stay what they were.
pub fn is_zero<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// A positive integer (the widths, sizes and counts of the manifest).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "i64", into = "u64")]
pub struct Positive(u64);

impl TryFrom<i64> for Positive {
    type Error = String;

    fn try_from(v: i64) -> Result<Self, String> {
        if v <= 0 {
            return Err(format!("must be a positive integer, not {v}"));
        }
        Ok(Positive(v as u64))
    }
}

number_forms!(i64 => Positive => u64);

impl Positive {
    /// `v`, which must be positive: for numbers the code writes (a default, a constant); what
    /// a user writes goes through [`TryFrom`] and its message.
    pub const fn new(v: u64) -> Positive {
        assert!(v > 0, "a Positive must be above 0");
        Positive(v)
    }
}

/// A first-layer width: a positive multiple of 32 (the inference kernels' block) up to
/// [`nnue::MAX_L1`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "i64", into = "u64")]
pub struct L1Width(u64);

impl TryFrom<i64> for L1Width {
    type Error = String;

    fn try_from(v: i64) -> Result<Self, String> {
        let max = nnue::MAX_L1;
        let multiple = nnue::L1_MULTIPLE as i64;
        if v <= 0 || v % multiple != 0 || v as u64 > max as u64 {
            return Err(format!(
                "l1 must be a positive multiple of {multiple} up to {max}, not {v}"
            ));
        }
        Ok(L1Width(v as u64))
    }
}

number_forms!(i64 => L1Width => u64);

impl L1Width {
    /// `v`, which must be a valid width (see [`Positive::new`] for when to use it).
    pub const fn new(v: u64) -> L1Width {
        assert!(
            v > 0 && v.is_multiple_of(nnue::L1_MULTIPLE as u64) && v <= nnue::MAX_L1 as u64,
            "not an L1 width"
        );
        L1Width(v)
    }
}

/// A positive count with an upper bound (epochs, batch sizes, positions, hidden widths).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "i64", into = "u64")]
pub struct Count<const MAX: u64>(u64);

impl<const MAX: u64> TryFrom<i64> for Count<MAX> {
    type Error = String;

    fn try_from(v: i64) -> Result<Self, String> {
        if v <= 0 || v as u64 > MAX {
            return Err(format!("must be between 1 and {MAX}, not {v}"));
        }
        Ok(Count(v as u64))
    }
}

number_forms!(i64 => Count<const MAX: u64> => u64);

impl<const MAX: u64> Count<MAX> {
    /// `v`, which must be in `1..=MAX` (see [`Positive::new`] for when to use it).
    pub const fn new(v: u64) -> Count<MAX> {
        assert!(v > 0 && v <= MAX, "a Count out of its range");
        Count(v)
    }
}

/// A number above 0 and at most 1: a learning rate (Adam's steps are about `lr` per weight;
/// beyond 1 every weight would leave the quantized range in one step) or a decay factor per
/// epoch (0 would stop learning after the first epoch).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct PositiveFraction(f64);

impl TryFrom<f64> for PositiveFraction {
    type Error = String;

    fn try_from(v: f64) -> Result<Self, String> {
        if !(v > 0.0 && v <= 1.0) {
            return Err(format!(
                "must be between 0 and 1 (above 0, at most 1), not {v}"
            ));
        }
        Ok(PositiveFraction(v))
    }
}

number_forms!(f64 => PositiveFraction => f64);

impl PositiveFraction {
    /// `v`, which must be in `(0, 1]` (see [`Positive::new`] for when to use it).
    pub const fn new(v: f64) -> PositiveFraction {
        assert!(v > 0.0 && v <= 1.0, "a PositiveFraction out of (0, 1]");
        PositiveFraction(v)
    }
}

/// A finite number strictly above zero (scales, exponents).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct PositiveReal(f64);

impl TryFrom<f64> for PositiveReal {
    type Error = String;

    fn try_from(v: f64) -> Result<Self, String> {
        if !(v.is_finite() && v > 0.0) {
            return Err(format!("must be a number above 0, not {v}"));
        }
        Ok(PositiveReal(v))
    }
}

number_forms!(f64 => PositiveReal => f64);

impl PositiveReal {
    /// `v`, which must be finite and above 0 (see [`Positive::new`] for when to use it).
    pub const fn new(v: f64) -> PositiveReal {
        assert!(
            v.is_finite() && v > 0.0,
            "a PositiveReal must be finite and above 0"
        );
        PositiveReal(v)
    }
}

/// A number in `0..=1` (lambda, skip rates).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct UnitReal(f64);

impl TryFrom<f64> for UnitReal {
    type Error = String;

    fn try_from(v: f64) -> Result<Self, String> {
        if !(0.0..=1.0).contains(&v) {
            return Err(format!("must be between 0 and 1, not {v}"));
        }
        Ok(UnitReal(v))
    }
}

number_forms!(f64 => UnitReal => f64);

impl UnitReal {
    /// `v`, which must be in `[0, 1]` (see [`Positive::new`] for when to use it).
    pub const fn new(v: f64) -> UnitReal {
        assert!(v >= 0.0 && v <= 1.0, "a UnitReal out of [0, 1]");
        UnitReal(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_manifest_values_pass_the_same_check() {
        assert_eq!("512".parse::<L1Width>(), Ok(L1Width(512)));
        assert!(
            "100"
                .parse::<L1Width>()
                .unwrap_err()
                .contains("multiple of 32")
        );
        let toml_err = toml::from_str::<std::collections::BTreeMap<String, L1Width>>("l1 = 100")
            .unwrap_err()
            .to_string();
        assert!(toml_err.contains("multiple of 32"), "{toml_err}");
        assert!("0".parse::<Count<4>>().is_err());
        assert!(
            "5".parse::<Count<4>>()
                .unwrap_err()
                .contains("between 1 and 4")
        );
        assert!("1.5".parse::<PositiveFraction>().is_err());
        assert_eq!("1".parse::<PositiveFraction>(), Ok(PositiveFraction(1.0)));
        assert!(
            "wide"
                .parse::<Positive>()
                .unwrap_err()
                .contains("not a number")
        );
        assert_eq!(
            serde_json::to_string(&Count::<9>(3)).unwrap(),
            "3",
            "written as the plain number"
        );
    }
}
