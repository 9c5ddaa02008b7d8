//! Property tests of the rules, the legal-action mask, the symmetries and `VecEnv`.
//!
//! Random states come from random legal playouts seeded by proptest. The legal mask, the
//! successor of every legal action and the outcome are checked against a slow reference model
//! written here from `rules.md` alone: its own adjacency list, mill list, "in mill" test,
//! flying condition, removal rule and placement rule. It never reads the crate's tables or its
//! move generator.
//!
//! The suite is one test crate in modules by subject: `reference` (the model), `games` (random
//! games and positions), `rules`, `symmetry` and `vec_env` (the properties).

mod games;
mod reference;
mod rules;
mod symmetry;
mod vec_env;

use proptest::prelude::*;

pub(crate) fn config(cases: u32) -> ProptestConfig {
    // No regression files: this suite must not write into the source tree.
    ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(cases) }
}
