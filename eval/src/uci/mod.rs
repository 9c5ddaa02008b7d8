//! UCI for mill engines: this lab's players served as an engine (`morris uci`), and external
//! engines played in the arena through the `uci:` agent spec.
//!
//! The dialect is chess UCI with this project's move notation (`d6`, `a1-a4`, `xg7`; a removal
//! is its own move) and `position startpos moves ...` as the only way to give a position. See
//! `docs/uci.md` for the whole protocol, the options and the time-management rule.

mod client;
mod engine;
mod protocol;

pub use client::{UciLimit, UciSpec, bestmove_in};
pub use engine::{EngineKind, EngineOptions, notation_line, root_draw, serve};
pub use protocol::{
    Command, DEFAULT_MOVES_TO_GO, GoLimits, UciError, centipawns, clock_budget, parse, wdl_per_mille,
};
