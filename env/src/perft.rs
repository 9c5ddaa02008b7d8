//! Perft: counting the leaf nodes of the game tree to a fixed depth, for checking move generation.

use crate::action::Action;
use crate::game::Game;

/// Number of action sequences of exactly `depth` plies from the game's current state (a removal
/// is its own ply). Finished games have no continuations. Uses bulk counting at the last ply.
///
/// ```
/// use morris_env::{perft, Game, Rules};
/// assert_eq!(perft(&mut Game::new(Rules::openspiel()), 3), 12_144);
/// ```
pub fn perft(game: &mut Game, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mask = game.legal_actions();
    if depth == 1 {
        return mask.count() as u64;
    }
    let mut nodes = 0;
    for a in mask.iter() {
        game.apply_unchecked(a);
        nodes += perft(game, depth - 1);
        game.undo();
    }
    nodes
}

/// Perft split by first action: `(action, nodes below it)` in increasing action order.
pub fn perft_divide(game: &mut Game, depth: u32) -> Vec<(Action, u64)> {
    if depth == 0 {
        return Vec::new();
    }
    let mask = game.legal_actions();
    mask.iter()
        .map(|a| {
            game.apply_unchecked(a);
            let n = perft(game, depth - 1);
            game.undo();
            (a, n)
        })
        .collect()
}
