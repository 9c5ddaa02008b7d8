//! Every on-disk format of a training run in one place, as KataGo keeps its `dataio/`: each
//! file is read and written through a typed struct here, and every write goes through the
//! atomic helpers of [`files`].
//!
//! | module | files |
//! |---|---|
//! | [`files`] | atomic file and directory writes, append-only opens, typed JSON |
//! | `rating` | [`Elo`], the one shape of a rating with its 95% interval |
//! | `shard` | `games/*.shard`: self-play positions with policy and outcome |
//! | `model_dir` | `model.safetensors` + `config.json`, or + the `model.json` [`ModelCard`] |
//! | [`checkpoint`] | `checkpoints/step-N/` (`meta.json`, `train.toml`, `optimizer.bpk`, `eval.json`), `best.json` |
//! | `export` | an exported model directory made from a checkpoint |
//! | `lock` | `locks/*.lock`: one learner per run, one self-play worker per name |
//! | `manifest` | `manifest.json`: the SHA-256 of each file of a model directory or checkpoint |
//! | `run_dir` | the run directory: its paths, `models/LATEST`, shard naming, `FINISHED` |

pub mod checkpoint;
pub(crate) mod export;
pub mod files;
pub(crate) mod lock;
pub(crate) mod manifest;
pub(crate) mod model_dir;
pub(crate) mod rating;
pub(crate) mod run_dir;
pub(crate) mod shard;

pub use crate::sample::Sample;
pub use checkpoint::{BestCheckpoint, CheckpointEval, CheckpointMeta, OpponentScore};
pub use export::export_checkpoint;
pub use lock::{RoleLock, host_name};
pub use manifest::{
    MANIFEST_FILE, Verification, sha256_file, sha256_hex, verify as verify_manifest, write_manifest,
};
pub use model_dir::{
    CONFIG_FILE, EloAt, MODEL_CARD_FILE, MODEL_CARD_VERSION, MODEL_FILE, ModelCard, TrainingRecord,
    load_model, load_model_for, model_from_bytes, model_to_bytes, read_net_config, save_model,
};
pub use rating::Elo;
pub use run_dir::{MODELS_KEPT, RunDir, ShardSink, ShardWriter, sanitize_worker};
pub use shard::{EncodedShard, Shard, decode_shard, encode_shard, read_shard, write_shard};
