//! The `Agent` trait that every player implements (random, minimax, and later MCTS and AlphaZero),
//! and the seeded uniform-random agent.

use crate::action::Action;
use crate::game::Game;
use crate::rng::Rng;

/// A player: chooses an action for the game's current position. The whole [`Game`] is given,
/// not just the position, because the repetition rule depends on the history.
pub trait Agent: Send {
    /// A short name for tables and game records, such as `"minimax:depth=4"`.
    fn name(&self) -> String;

    /// Chooses a legal action for the player to move, or `None` if the game is over.
    fn choose(&mut self, game: &Game) -> Option<Action>;

    /// Forgets anything carried between moves of one game (search trees, tables).
    /// Called before each new game.
    fn reset(&mut self) {}

    /// Why the last [`choose`](Agent::choose) gave no move in a live game (an external engine
    /// that crashed, hung or answered an illegal move, say); `None` if it has no reason to give.
    fn forfeit_reason(&self) -> Option<String> {
        None
    }
}

/// Plays a uniformly random legal action, from a seeded generator.
///
/// ```
/// use morris_env::{Agent, Game, RandomAgent, Rules};
/// let mut a = RandomAgent::new(7);
/// let game = Game::new(Rules::standard());
/// let action = a.choose(&game).unwrap();
/// assert!(game.legal_actions().has(action));
/// ```
#[derive(Clone, Debug)]
pub struct RandomAgent {
    rng: Rng,
}

impl RandomAgent {
    /// A random agent whose choices are determined by `seed`.
    pub fn new(seed: u64) -> RandomAgent {
        RandomAgent { rng: Rng::seed_from_u64(seed) }
    }
}

impl Agent for RandomAgent {
    fn name(&self) -> String {
        "random".to_string()
    }

    fn choose(&mut self, game: &Game) -> Option<Action> {
        game.legal_actions().sample(&mut self.rng)
    }
}
