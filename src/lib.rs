//! Command-line tools of the Nine Men's Morris lab (the binaries live in `src/bin/`).
//!
//! The README is included below so that its code examples are compiled and run by `cargo test`.
#![doc = include_str!("../README.md")]

/// The Rust examples of `docs/environment.md`, compiled and run as doctests (this item exists
/// only while doctests are collected).
#[doc = include_str!("../docs/environment.md")]
#[cfg(doctest)]
pub struct EnvironmentDocs;

use std::process::ExitCode;

/// The allocator of every binary of the lab (they all link this crate). burn allocates and frees
/// each tensor of every training step; with glibc's allocator the large ones (a `[256, 600]`
/// batch of policy logits is 600 KB) come from fresh `mmap`s, paid in page faults and page
/// zeroing, and mimalloc reuses them instead (docs/performance.md, "Training throughput").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use morris_env::Rules;

/// Maps a command's result to the process exit code, printing the error to stderr. Every binary's
/// `main` ends with this, so errors look the same everywhere and never panic.
pub fn exit_code<E: std::fmt::Display>(result: Result<(), E>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("error: {msg}");
            ExitCode::FAILURE
        }
    }
}

/// The command line as a user types it, `binary` and its arguments whatever the binary's path:
/// what a file written by a command records as `made_by`.
pub fn command_line(binary: &str) -> String {
    std::iter::once(binary.to_string())
        .chain(std::env::args_os().skip(1).map(|a| a.to_string_lossy().into_owned()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Rules presets as a command-line value (`--rules standard|openspiel|twelve|morabaraba|lasker|six|three`), shared by the
/// binaries: [`Rules::PRESETS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Preset {
    /// Flying, 100-ply N-move rule, threefold repetition, no turn cap.
    Standard,
    /// OpenSpiel 2.0.2: flying, no repetition or N-move rule, draw after 200 turns.
    Openspiel,
    /// Twelve men's morris (diagonal lines, 12 pieces, a full board draws) under the standard
    /// draw rules.
    Twelve,
    /// Morabaraba (twelve's board and pieces, two removals for a double mill) under the
    /// standard draw rules.
    Morabaraba,
    /// Lasker morris (nine's board, 10 pieces, a turn with pieces in hand may slide instead
    /// of placing) under the standard draw rules.
    Lasker,
    /// Six men's morris (two squares of 16 points, 6 pieces, mills only along the sides, no
    /// flying) under the standard draw rules.
    Six,
    /// Three men's morris (the 3 × 3 grid, 3 pieces, a line of three wins, no flying) under the
    /// standard draw rules.
    Three,
}

impl Preset {
    /// The rules of this preset.
    pub fn rules(self) -> Rules {
        match self {
            Preset::Standard => Rules::standard(),
            Preset::Openspiel => Rules::openspiel(),
            Preset::Twelve => Rules::twelve(),
            Preset::Morabaraba => Rules::morabaraba(),
            Preset::Lasker => Rules::lasker(),
            Preset::Six => Rules::six(),
            Preset::Three => Rules::three(),
        }
    }

    /// The preset's name.
    pub fn name(self) -> &'static str {
        match self {
            Preset::Standard => "standard",
            Preset::Openspiel => "openspiel",
            Preset::Twelve => "twelve",
            Preset::Morabaraba => "morabaraba",
            Preset::Lasker => "lasker",
            Preset::Six => "six",
            Preset::Three => "three",
        }
    }
}
