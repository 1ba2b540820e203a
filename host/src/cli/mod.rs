//! One module per subcommand; each `run` returns a one-line error message on failure.

pub mod features;
pub mod plugins;
