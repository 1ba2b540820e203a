//! What a program the integration tests ran printed.

use std::process::Output;

/// Its standard output and then its standard error, as text (for assertions and their
/// messages).
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}
