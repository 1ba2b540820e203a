//! One module per subcommand; each `run` returns a one-line error message on failure.

pub mod bench;
pub mod eval;
pub mod features;
pub mod net;
pub mod plugins;
