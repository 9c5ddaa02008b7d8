//! The MCTS agents play whole games through env's `Agent` trait: the rollout baseline and the
//! AlphaZero agent loaded from a saved model directory.

use morris_env::{Agent, Color, Game, RandomAgent, Rules};
use morris_train::TrainError;
use morris_train::agents::{az_agent, rollout_mcts};
use morris_train::device::device_from_name;
use morris_train::model::NetConfig;
use morris_train::store::save_model;

/// Plays a game; returns the winner, if any.
fn play(white: &mut dyn Agent, black: &mut dyn Agent) -> Option<Color> {
    play_game(white, black).outcome().winner()
}

/// Plays a game to the end and returns it.
fn play_game(white: &mut dyn Agent, black: &mut dyn Agent) -> Game {
    let mut game = Game::new(Rules::standard());
    white.reset();
    black.reset();
    while !game.outcome().is_terminal() {
        let agent: &mut dyn Agent =
            if game.current_player() == Color::White { &mut *white } else { &mut *black };
        let a = agent.choose(&game).expect("a move in an ongoing game");
        game.apply(a).expect("agents play legal moves");
    }
    game
}

#[test]
fn rollout_mcts_beats_random() {
    for seed in 0..2 {
        let mut mcts = rollout_mcts(200, seed);
        let mut random = RandomAgent::new(seed);
        assert_eq!(play(&mut mcts, &mut random), Some(Color::White));
        assert_eq!(play(&mut random, &mut mcts), Some(Color::Black));
    }
}

#[test]
fn az_agent_loads_a_saved_model_and_plays_legal_games() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    let device = device_from_name("flex").unwrap();
    let config = NetConfig { width: 16, blocks: 1, ..NetConfig::default() };
    save_model(&config.init(&device), dir).unwrap();
    let mut az = az_agent(dir, 16, 1).unwrap();
    assert!(az.name().starts_with("az:model="));
    let mut random = RandomAgent::new(3);
    let game = play_game(&mut az, &mut random);
    // Tree reuse across moves: the tree followed the real game, and kept a subtree.
    let tree = az.tree().expect("a tree after searching");
    let seen = tree.game().actions();
    assert!(seen.len() > 10 && game.actions().starts_with(seen), "the tree's game is a prefix of the game");
    assert!(tree.num_nodes() > 1);
    let missing = az_agent(&dir.join("nope"), 16, 1).err().unwrap();
    assert!(
        matches!(&missing, TrainError::Io { path, .. } if path.starts_with(dir.join("nope"))),
        "{missing}"
    );
}
