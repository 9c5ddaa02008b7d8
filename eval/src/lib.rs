//! Strength measurement for Nine Men's Morris agents, from the spec that names a player to the
//! Elo that rates it.
//!
//! | module | job |
//! |---|---|
//! | [`accuracy`] | moves against perfect play on endgame-table positions, errors by kind |
//! | [`agents`] | agent specs (`random`, `minimax:depth=4`, `az:model=DIR,sims=N`, …): the one parser |
//! | [`elo`] | the one Elo fit (Bradley–Terry by maximum likelihood, intervals, LOS) |
//! | [`error`] | [`EvalError`], the variants callers match |
//! | [`arena`] | the one match runner: colour-swapped pairs, game records |
//! | [`book`] | opening books: openings with their exact values, replayable without tables |
//! | [`report`] | a match from one side: W/D/L, pair-based score interval, pentanomial |
//! | [`records`] | game record files (JSONL): append, read, rate |
//! | [`ladder`] | the calibrated ladder (`eval/data/ladder.json`), typed |
//! | [`judge`] | the in-training evaluation, handed to `morris-train`'s run |
//! | [`play`] | a terminal game against a model |
//! | [`plot`] | Elo of checkpoints against training time, as a PNG |
#![deny(missing_docs)]

pub mod accuracy;
pub mod agents;
pub mod arena;
pub mod book;
pub mod duration;
pub mod elo;
pub mod error;
pub mod judge;
pub mod ladder;
pub mod play;
pub mod plot;
pub mod records;
pub mod report;
pub mod uci;

pub use agents::{AgentSpec, RulesMismatch, SPEC_FORMS, SpecError};
pub use arena::{GameRecord, MatchConfig, play_match};
pub use elo::{Elo, EloTable, Rating};
pub use error::EvalError;
pub use judge::LadderJudge;
pub use ladder::Ladder;
pub use report::MatchReport;
