//! Running third-party decoding code that may panic on corrupt input, as a `Result`.
//!
//! The `sfbinpack` crate indexes slices and unwraps freely; on a corrupt chunk it panics.
//! [`quietly`] catches such a panic and returns its message; while it runs, the panic hook
//! stays silent on this thread (other threads' panics are reported as usual).

use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

static HOOK: Once = Once::new();

fn install_hook() {
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !QUIET.with(Cell::get) {
                previous(info);
            }
        }));
    });
}

/// A panic of third-party decoding code, caught: its message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DecoderPanic(pub String);

/// Runs `f`; a panic inside it becomes `Err` with its message.
pub fn quietly<T>(f: impl FnOnce() -> T) -> Result<T, DecoderPanic> {
    install_hook();
    let was = QUIET.with(|q| q.replace(true));
    let r = panic::catch_unwind(AssertUnwindSafe(f));
    QUIET.with(|q| q.set(was));
    r.map_err(|payload| {
        DecoderPanic(
            payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "decoder panicked".to_string()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_errors() {
        assert_eq!(quietly(|| 3), Ok(3));
        let v: Vec<u8> = Vec::new();
        let r = quietly(|| v[std::hint::black_box(5)]);
        assert!(r.unwrap_err().0.contains("index out of bounds"));
        let r: Result<(), DecoderPanic> = quietly(|| panic!("custom {}", 7));
        assert_eq!(r, Err(DecoderPanic("custom 7".to_string())));
    }
}
