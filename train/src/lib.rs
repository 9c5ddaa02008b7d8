//! AlphaZero-style learning for Nine Men's Morris, in the order of the pipeline: the network
//! and its evaluators, batched MCTS, self-play, the replay window, the learner, the on-disk
//! formats, and the run that ties them together. Modules are listed in dependency order: each
//! uses only those above it.
//!
//! | module | job |
//! |---|---|
//! | [`error`] | [`TrainError`] and [`ConfigError`], the variants callers match |
//! | [`device`] | burn devices by name (`flex`, `cuda`, `wgpu`) |
//! | [`model`] | the policy/value network (res-mlp or graph-conv trunk, WDL value head) and its loss |
//! | [`evaluator`] | the [`Evaluator`](evaluator::Evaluator) trait and the uniform and rollout evaluators |
//! | [`net_evaluator`] | batched network inference as an evaluator |
//! | [`mcts`] | batched PUCT/UCT/Gumbel search over many trees |
//! | [`config`] | the training config (`configs/*.toml`): sections, defaults, validation, `--set` |
//! | [`sample`] | one training example: position, policy target, outcome, search value |
//! | [`selfplay`] | self-play games on a `VecEnv`, with playout-cap randomization |
//! | [`replay`] | the replay window: sampling with a reuse cap, symmetries, training batches |
//! | [`learner`] | AdamW steps, the learning-rate schedule, optimizer state |
//! | [`store`] | every on-disk format: shards, model directories, checkpoints, exports, the run directory |
//! | [`logging`] | TensorBoard event files and `metrics.jsonl` |
//! | [`agents`] | agents that play by search: the rollout baseline and the AlphaZero agent |
//! | [`run`] | a training run: start or resume, self-play beside the learner, workers, periodic judging |
#![deny(missing_docs)]

pub mod agents;
pub mod config;
pub mod cpu_forward;
pub mod device;
pub mod error;
pub mod evaluator;
pub mod learner;
pub mod logging;
pub mod mcts;
pub mod model;
pub mod net_evaluator;
pub mod replay;
pub mod run;
pub mod sample;
pub mod selfplay;
pub mod store;

pub use config::TrainConfig;
pub use error::{ConfigError, TrainError};
pub use model::{NetConfig, PolicyValueNet};
pub use net_evaluator::NetEvaluator;
pub use run::{Judge, Judgement, OpponentResult, Options, Role, Start, start_run};
pub use store::{Elo, ModelCard, RunDir, export_checkpoint, load_model, load_model_for};
