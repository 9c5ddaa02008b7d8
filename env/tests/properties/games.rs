//! Random games and positions for the properties, under fourteen rule sets.

use morris_env::{Action, ActionMask, Game, Position, Rng, Rules, Variant};

/// Rule sets under test: both presets, standard without flying, a short variant whose draw
/// rules fire early, and twelve men's morris, morabaraba and Lasker morris with the standard
/// draw rules and with OpenSpiel's, then six men's morris (its preset, and with flying and
/// OpenSpiel's draw rules), then three men's morris (likewise).
pub(crate) fn rules_of(i: u8) -> Rules {
    match i % RULE_SETS {
        0 => Rules::standard(),
        1 => Rules::openspiel(),
        2 => Rules { flying: false, ..Rules::standard() },
        3 => Rules { n_move_rule: Some(20), turn_cap: Some(60), ..Rules::standard() },
        4 => Rules::twelve(),
        5 => Rules { variant: Variant::Twelve, ..Rules::openspiel() },
        6 => Rules::morabaraba(),
        7 => Rules { variant: Variant::Morabaraba, ..Rules::openspiel() },
        8 => Rules::lasker(),
        9 => Rules { variant: Variant::Lasker, ..Rules::openspiel() },
        10 => Rules::six(),
        11 => Rules { variant: Variant::Six, ..Rules::openspiel() },
        12 => Rules::three(),
        _ => Rules { variant: Variant::Three, ..Rules::openspiel() },
    }
}

/// How many rule sets [`rules_of`] gives.
pub(crate) const RULE_SETS: u8 = 14;

pub(crate) fn pick(mask: &ActionMask, rng: &mut Rng) -> Action {
    mask.nth(rng.below(mask.count())).unwrap()
}

pub(crate) const PLY_BOUND: usize = 5000;

/// Plays a random game from the start, calling `visit` on every state (the final one included),
/// for at most `max_plies` plies. Returns the game.
pub(crate) fn random_game(rules: Rules, seed: u64, max_plies: usize, mut visit: impl FnMut(&Game)) -> Game {
    let mut rng = Rng::seed_from_u64(seed);
    let mut game = Game::new(rules);
    visit(&game);
    for _ in 0..max_plies {
        let mask = game.legal_actions();
        assert_eq!(
            mask.is_empty(),
            game.outcome().is_terminal(),
            "empty mask iff game over\n{}",
            game.position()
        );
        if mask.is_empty() {
            break;
        }
        game.apply(pick(&mask, &mut rng)).unwrap();
        visit(&game);
    }
    game
}

pub(crate) fn random_position(rules: Rules, seed: u64, plies: usize) -> Position {
    *random_game(rules, seed, plies, |_| {}).position()
}
