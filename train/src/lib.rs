//! AlphaZero-style learning for Nine Men's Morris: the burn policy/value network, evaluators,
//! batched MCTS (PUCT and Gumbel) across many games, and the agents built on them.
#![deny(missing_docs)]

pub mod agents;
pub mod checkpoint;
pub mod config;
pub mod device;
pub mod evaluate;
pub mod evaluator;
pub mod export;
pub mod files;
pub mod learner;
pub mod logging;
pub mod mcts;
pub mod model;
pub mod net_evaluator;
pub mod replay;
pub mod run;
pub mod selfplay;
pub mod shard;
