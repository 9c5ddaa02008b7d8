//! Strength measurement: agent specs, the arena (colour-swapped game pairs), and Elo ratings
//! fitted by maximum likelihood with confidence intervals.
#![deny(missing_docs)]

pub mod agents;
pub mod arena;
pub mod elo;
pub mod play;
pub mod plot;
