//! The errors of training: a bad config, file I/O, a corrupt or incompatible file, a taken run
//! directory, a diverging learner, and a failed evaluation, as variants callers can match.

use std::path::{Path, PathBuf};

use thiserror::Error;

/// A config value that cannot be used. [`TrainError::Config`] adds the file it came from.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ConfigError {
    /// The TOML is malformed, or a key is unknown or of the wrong type (serde's message names it).
    #[error("config: {0}")]
    Parse(String),
    /// A `--set section.key=value` override is malformed.
    #[error("--set '{text}': {reason}")]
    Override {
        /// The override as given.
        text: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The config file sets nothing at all (an empty file would silently train on defaults).
    #[error("config: the file is empty; start from configs/tiny.toml or configs/default.toml")]
    Empty,
    /// A value is out of range or unknown.
    #[error("{key} {reason}")]
    Value {
        /// The key, as `section.key`.
        key: String,
        /// What is wrong and what is allowed, e.g. `must be at least 1`.
        reason: String,
    },
}

impl ConfigError {
    /// A [`ConfigError::Value`] for `key`.
    pub fn value(key: impl Into<String>, reason: impl Into<String>) -> ConfigError {
        ConfigError::Value { key: key.into(), reason: reason.into() }
    }

    /// The key this error is about, for [`ConfigError::Value`].
    pub fn key(&self) -> Option<&str> {
        match self {
            ConfigError::Value { key, .. } => Some(key),
            _ => None,
        }
    }
}

/// Everything that can go wrong in training, checkpointing and model files.
#[derive(Debug, Error)]
pub enum TrainError {
    /// A bad config, with the file it came from when known.
    #[error("{}{source}", file.as_ref().map(|f| format!("{}: ", f.display())).unwrap_or_default())]
    Config {
        /// The config file (or the checkpoint's `train.toml`), if the config came from a file.
        file: Option<PathBuf>,
        /// What is wrong.
        source: ConfigError,
    },
    /// A file or directory could not be read, written, created or moved.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done: `read`, `write`, `create`, `open`, `move`, `list`.
        action: &'static str,
        /// The path.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A file exists but its content is not what it should be.
    #[error("corrupt {what} {}: {reason}", path.display())]
    Corrupt {
        /// The kind of file, e.g. `checkpoint metadata`, `model weights`, `game shard`.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// Something that must not be overwritten is already there.
    #[error("{} already {hint}", path.display())]
    AlreadyExists {
        /// The path that is taken.
        path: PathBuf,
        /// The rest of the message: what is there and what to do instead.
        hint: String,
    },
    /// Another live process holds the role (the learner of a run, a worker name).
    #[error("{} is locked: the {role} of this run is already running ({holder}); {hint}", path.display())]
    Locked {
        /// The lock file.
        path: PathBuf,
        /// The role that was asked for.
        role: String,
        /// Who holds it, as written in the lock file (role, pid, host).
        holder: String,
        /// What to do instead.
        hint: String,
    },
    /// A required file or directory is not there.
    #[error("{what} {} {hint}", path.display())]
    NotFound {
        /// What was looked for, e.g. `cannot resume from`.
        what: &'static str,
        /// The path.
        path: PathBuf,
        /// Why it does not qualify, or what to do.
        hint: String,
    },
    /// A file is well formed but cannot be used by this build or with this network
    /// (another format version, observation layout or network shape).
    #[error("{}: {reason}", path.display())]
    Incompatible {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A model or game shard of one variant of the morris family, where another is played.
    #[error("{}: {what} of the '{found}' variant, but the game here is '{expected}'", path.display())]
    Variant {
        /// What it is: `model`, `game shard`.
        what: &'static str,
        /// Its file or directory.
        path: PathBuf,
        /// The variant it is of.
        found: morris_env::Variant,
        /// The variant played.
        expected: morris_env::Variant,
    },
    /// The training loss stopped being finite.
    #[error(
        "step {step}: the loss is not finite ({loss}); lower optimizer.learning_rate or set optimizer.grad_clip_norm"
    )]
    NonFiniteLoss {
        /// The optimizer step.
        step: u64,
        /// The loss.
        loss: f32,
    },
    /// A signal asked the run or worker to stop; it stopped cleanly.
    #[error("stopped by {}: {done}", crate::run::signal_name(*signal))]
    Interrupted {
        /// The signal number (2 for SIGINT, 15 for SIGTERM); the process exits with 128 + it.
        signal: i32,
        /// What was saved and how to go on.
        done: String,
    },
    /// The weights stopped being finite (a diverged step or a corrupt optimizer state); nothing
    /// of them was written.
    #[error(
        "step {step}: the network's weights are not finite numbers, so no checkpoint or model of them was written; resume from an earlier checkpoint with a lower optimizer.learning_rate"
    )]
    NonFiniteWeights {
        /// The optimizer step.
        step: u64,
    },
    /// A device name that this build cannot use.
    #[error("{0}")]
    Device(String),
    /// The periodic evaluation failed.
    #[error("evaluation failed: {0}")]
    Evaluation(String),
    /// A search or a game broke an invariant (a bug, reported instead of a panic).
    #[error("internal error: {0}")]
    Internal(String),
}

impl TrainError {
    /// An [`TrainError::Io`] error for `path`.
    pub fn io(action: &'static str, path: &Path, source: std::io::Error) -> TrainError {
        TrainError::Io { action, path: path.to_path_buf(), source }
    }

    /// A [`TrainError::Corrupt`] error for `path`.
    pub fn corrupt(what: &'static str, path: &Path, reason: impl ToString) -> TrainError {
        TrainError::Corrupt { what, path: path.to_path_buf(), reason: reason.to_string() }
    }

    /// A [`TrainError::Incompatible`] error for `path`.
    pub fn incompatible(path: &Path, reason: impl Into<String>) -> TrainError {
        TrainError::Incompatible { path: path.to_path_buf(), reason: reason.into() }
    }

    /// Attaches `file` to a config error that has none yet; other errors are returned as they are.
    pub fn in_file(self, file: &Path) -> TrainError {
        match self {
            TrainError::Config { file: None, source } => {
                TrainError::Config { file: Some(file.to_path_buf()), source }
            }
            other => other,
        }
    }
}

impl From<ConfigError> for TrainError {
    fn from(source: ConfigError) -> TrainError {
        TrainError::Config { file: None, source }
    }
}

/// The result type of this crate.
pub type Result<T, E = TrainError> = std::result::Result<T, E>;
