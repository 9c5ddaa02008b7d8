//! Nine Men's Morris: exact rules on bitboards, a 600-action legal mask, symmetries, observations
//! and a vectorized environment. Everything else in the project (search, self-play, baselines,
//! Elo) stands on this crate.
//!
//! # Brief overview
//!
//! * [`Position`]: a 24-byte `Copy` value (bitboards, hands, side to move, pending removal,
//!   draw counters, Zobrist hash) with [`Position::legal_actions`], [`Position::apply`] and
//!   [`Position::outcome`].
//! * [`Game`]: a position plus [`Rules`] and history, adding threefold repetition, undo and
//!   game records in notation (`d6`, `a1-a4`, `xg7`).
//! * [`Action`] and [`ActionMask`]: OpenSpiel's fixed 600-action encoding and a packed bitset.
//! * [`features`]: the versioned `[C, 24]` observation from the mover's point of view.
//! * [`board`]: board geometries as data (names, mills, lines), the tables derived from them.
//! * [`Symmetry`]: the 16 board symmetries, mapping points, actions, masks and observations.
//! * [`VecEnv`]: N games stepped in parallel with rayon into struct-of-arrays buffers.
//! * [`perft()`]: node counts for checking move generation.
//!
//! Values and rewards are always from the point of view of the player to move, and the player
//! to move is [`Position::current_player`], not ply parity: after closing a mill the same
//! player moves again to remove a piece.
//!
//! # Example
//!
//! ```
//! use morris_env::{Game, Rules, Outcome, Rng};
//!
//! let mut game = Game::from_notation(Rules::standard(), "d6 a1 d5 a4 d7").unwrap();
//! assert!(game.position().is_removal_pending()); // d7-d6-d5 is a mill: White removes
//! game.play_notation("xa1").unwrap();
//! println!("{}", game.position());
//!
//! // Random playout to the end.
//! let mut rng = Rng::seed_from_u64(1);
//! while game.outcome() == Outcome::Ongoing {
//!     let mask = game.legal_actions();
//!     let a = mask.nth(rng.below(mask.count())).unwrap();
//!     game.apply(a).unwrap();
//! }
//! assert!(game.outcome().is_terminal());
//! ```
#![deny(missing_docs)]

mod action;
mod agent;
pub mod board;
mod error;
pub mod features;
mod game;
pub mod minimax;
mod notation;
mod outcome;
mod perft;
mod position;
mod rng;
mod rules;
mod symmetry;
pub mod tablebase;
pub mod tables;
mod types;
mod vec_env;

pub use action::{Action, ActionMask, ActionMaskIter, MASK_WORDS, NUM_ACTIONS};
pub use agent::{Agent, RandomAgent};
pub use error::{ActionError, ActionErrorOn, PositionError};
pub use features::{NUM_PLANES, OBS_LEN, OBS_VERSION, obs_len_on};
pub use game::Game;
pub use minimax::{Minimax, MinimaxConfig, SearchResult};
/// The `ndarray` crate this one's array views ([`VecEnv::observations_view`]) come from.
pub use ndarray;
pub use notation::{Move, MoveOn, NotationError};
pub use outcome::{DrawReason, Outcome, WinReason};
pub use perft::{perft, perft_divide};
pub use position::{PIECES_PER_PLAYER, Phase, Position, PositionOn};
pub use rng::Rng;
pub use rules::{Rules, UnknownVariant, Variant};
pub use symmetry::{NUM_SYMMETRIES, Symmetry};
pub use types::{BitBoard, BitBoardIter, Color, NUM_POINTS, Point};
pub use vec_env::{AutoReset, IllegalActionMode, StepInfo, VecEnv, VecEnvConfig, VecEnvError};
