//! Typed errors of building, reading and probing tablebases.

use std::path::PathBuf;

/// Why a tablebase could not be built, opened or used.
#[derive(Debug, thiserror::Error)]
pub enum TablebaseError {
    /// A file or directory could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The directory does not exist or holds no sector files.
    #[error("{0}: no tablebase here (build one with `morris tablebase build --out {0}`)")]
    Missing(PathBuf),
    /// A sector file is damaged: wrong magic, size or checksum.
    #[error("{path}: corrupt sector file ({reason})")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What did not match.
        reason: String,
    },
    /// The files were built under other rules than the ones asked for.
    #[error(
        "{path}: built for flying={flying}, n_move_rule={n_move_rule:?}, but the rules in use have flying={want_flying}, n_move_rule={want_n_move_rule:?}"
    )]
    RulesMismatch {
        /// The sector file.
        path: PathBuf,
        /// Its flying rule.
        flying: bool,
        /// Its N-move rule.
        n_move_rule: Option<u32>,
        /// The flying rule in use.
        want_flying: bool,
        /// The N-move rule in use.
        want_n_move_rule: Option<u32>,
    },
    /// Tables asked for another game of the morris family than nine men's morris, the only one
    /// the tables cover.
    #[error("{path}: tablebases cover nine men's morris only, not {variant}")]
    Variant {
        /// The tablebase directory or sector file.
        path: PathBuf,
        /// The variant asked for.
        variant: crate::Variant,
    },
    /// A whole game has more positions reachable than the solver was allowed to hold.
    #[error(
        "{variant}: more than {limit} positions are reachable from the root; the whole-game solver holds every one in memory (nine men's morris is solved by sectors: `morris tablebase build`)"
    )]
    WholeGameTooLarge {
        /// The variant.
        variant: crate::Variant,
        /// The most positions allowed.
        limit: usize,
    },
    /// A whole-game position key that names no position of the rules (a bug, not bad input).
    #[error("whole-game key {key:#x} is not a position: {reason}")]
    WholeGameKey {
        /// The key.
        key: u64,
        /// Why the position cannot be.
        reason: String,
    },
    /// A solved whole-game position whose value does not follow from its moves' values.
    #[error("whole-game position {key:#x}: {reason}")]
    WholeGameMismatch {
        /// The position's key ([`crate::tablebase::position_key`]).
        key: u64,
        /// What does not follow.
        reason: String,
    },
    /// The file system cannot hold the next sector files (checked before solving them).
    #[error(
        "{dir}: sectors {sectors} need {need_mib} MiB of disk and {available_mib} MiB are free; free space or build fewer pieces (--max-pieces)"
    )]
    DiskFull {
        /// The tablebase directory.
        dir: PathBuf,
        /// The sectors about to be solved, such as `8v7 + 7v8`.
        sectors: String,
        /// MiB the files need.
        need_mib: u64,
        /// MiB free for this process.
        available_mib: u64,
    },
    /// A size outside what the builder supports.
    #[error("--max-pieces {0} is out of range: tablebases cover 3 to 9 pieces per side")]
    MaxPieces(usize),
    /// A distance too long to store (more than 16,383 plies), which would be a bug.
    #[error("sector {0}: a distance of {1} plies does not fit the format")]
    DistanceOverflow(String, u32),
    /// The sector a position needs is not in the directory.
    #[error(
        "sector {sector} is not in {dir}: build it with `morris tablebase build --max-pieces {max_pieces} --out {dir}` (finished sectors are kept)"
    )]
    MissingSector {
        /// The sector, such as `8v7`.
        sector: String,
        /// The table directory.
        dir: PathBuf,
        /// The `--max-pieces` that builds it.
        max_pieces: usize,
    },
    /// The position is not one a tablebase covers.
    #[error("not a tablebase position: {0}")]
    NotCovered(String),
}

impl TablebaseError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> TablebaseError {
        TablebaseError::Io { path: path.into(), source }
    }
}
