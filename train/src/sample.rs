//! One training example as self-play produces it, the replay window samples it and a game shard
//! stores it: the position, its policy target and the game's outcome.

use morris_env::{Action, Position};

/// One training position.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// The position (with its counters).
    pub position: Position,
    /// Occurrences of the position in its game, counting it.
    pub repetitions: u8,
    /// Sparse policy target over legal actions.
    pub policy: Vec<(Action, f32)>,
    /// Final result for the player to move: 1 win, 0 draw, −1 loss.
    pub outcome: i8,
    /// Whether the move got a full search (so `policy` is a training target); cheap searches
    /// from playout-cap randomization still give a value target.
    pub full_search: bool,
}
