//! The errors of strength measurement: a bad agent spec, a bad command-line value, an unreadable
//! or malformed game record, a failed fit or plot, and the training crate's file errors.

use std::path::PathBuf;

use morris_train::TrainError;
use thiserror::Error;

use crate::agents::{RulesMismatch, SpecError};
use crate::elo::EloError;

/// Everything that can go wrong in the arena, the ratings, export, play and plots.
#[derive(Debug, Error)]
pub enum EvalError {
    /// An agent spec that cannot be read.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// An agent that cannot play under the game's rules (another variant's network, other rules'
    /// tables).
    #[error(transparent)]
    Rules(#[from] RulesMismatch),
    /// A command-line value out of range or inconsistent with another, e.g. `--pairs 0`.
    #[error("{0}")]
    Usage(String),
    /// A file error from the training crate's formats (models, checkpoints, atomic writes).
    #[error(transparent)]
    Train(#[from] TrainError),
    /// A file that cannot be read or written.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A line of a game record file that is not a game record.
    #[error("{}:{line}: {reason}", path.display())]
    Record {
        /// The file.
        path: PathBuf,
        /// The line number, from 1.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// A line of an opening book that is not a playable, valued opening.
    #[error("{}:{line}: {reason}", path.display())]
    Book {
        /// The file.
        path: PathBuf,
        /// The line number, from 1 (0 for the book as a whole).
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// A file that is not what it should be (a ratings table, a ladder).
    #[error("{}: {reason}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The ratings could not be fitted.
    #[error(transparent)]
    Elo(#[from] EloError),
    /// The rating anchor is not among the players.
    #[error("anchor '{anchor}' is not among the players ({}); choose one with --anchor", players.join(", "))]
    UnknownAnchor {
        /// The anchor asked for.
        anchor: String,
        /// The players there are.
        players: Vec<String>,
    },
    /// There is nothing to rate or plot.
    #[error("{0}")]
    Nothing(String),
    /// A game could not be played (an agent broke an invariant; a bug, reported, not a panic).
    #[error("internal error: {0}")]
    Internal(String),
}

impl EvalError {
    /// An [`EvalError::Io`] for `path`.
    pub fn io(action: &'static str, path: &std::path::Path, source: std::io::Error) -> EvalError {
        EvalError::Io { action, path: path.to_path_buf(), source }
    }
}

/// The result type of this crate.
pub type Result<T, E = EvalError> = std::result::Result<T, E>;
