//! A setting refused by a check that the types alone cannot make (a ply window that keeps
//! nothing, a loss power below 1, a shard index beyond the count).

/// A refused setting, in a clause that starts with the key it is about where the setting has
/// one (`min_ply: 40 is after max_ply 20: no position would be used`). The manifest reader and
/// the command lines print it as it is.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidSetting(pub String);

impl From<String> for InvalidSetting {
    fn from(reason: String) -> Self {
        InvalidSetting(reason)
    }
}

impl From<&str> for InvalidSetting {
    fn from(reason: &str) -> Self {
        InvalidSetting(reason.to_string())
    }
}
