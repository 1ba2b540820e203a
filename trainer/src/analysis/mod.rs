//! Looking at data and results: dataset statistics ([`stats`]) and scans of whole files
//! ([`scan`]), the win-rate model fit ([`wdl`]) and the SVG plots every stage draws ([`plot`]).

pub mod plot;
pub mod scan;
pub mod stats;
pub mod wdl;
