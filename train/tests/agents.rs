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

#[test]
fn budgets_time_threads_and_batches() {
    use morris_train::agents::{PlayBudget, az_agent_from_model};
    use morris_train::mcts::{Limits, MctsConfig};
    use std::time::{Duration, Instant};
    let device = device_from_name("flex").unwrap();
    let model = NetConfig { width: 16, blocks: 1, ..NetConfig::default() }.init(&device);
    let agent = |sims: u32, budget: PlayBudget| {
        let search = MctsConfig { num_simulations: sims, ..MctsConfig::default() };
        az_agent_from_model(model.clone(), device.clone(), "az".into(), search, budget, 5).unwrap()
    };
    let game = Game::from_notation(Rules::standard(), "d6 a1 d5 g1").unwrap();

    // One thread, one leaf, by simulations: the same search every time, whatever the seed of
    // other agents, and exactly the simulations asked for.
    let sequential = PlayBudget::default();
    let (mut a, mut b) = (agent(48, sequential), agent(48, sequential));
    let (ma, mb) = (a.choose(&game), b.choose(&game));
    assert_eq!(ma, mb);
    assert_eq!(a.tree().unwrap().visit_counts(), b.tree().unwrap().visit_counts());
    assert_eq!(a.tree().unwrap().root_value().0, 49, "48 simulations and the root's evaluation");

    // Leaf batching on one thread is deterministic too; two threads count every simulation.
    let batched = PlayBudget { batch: 8, ..sequential };
    let (mut a, mut b) = (agent(64, batched), agent(64, batched));
    a.choose(&game);
    b.choose(&game);
    assert_eq!(a.tree().unwrap().visit_counts(), b.tree().unwrap().visit_counts());
    let mut two = agent(64, PlayBudget { threads: 2, batch: 4, ..sequential });
    let mv = two.choose(&game).unwrap();
    assert!(game.legal_actions().has(mv));
    assert_eq!(two.tree().unwrap().root_value().0, 65);

    // A time budget ends the search (far below the simulation cap); a set stop flag after the
    // first wave.
    for threads in [1, 2] {
        let mut timed =
            agent(1_000_000, PlayBudget { time: Some(Duration::from_millis(30)), threads, batch: 2 });
        let t = Instant::now();
        assert!(timed.choose(&game).is_some());
        assert!(t.elapsed() < Duration::from_secs(5), "threads {threads}: {:?}", t.elapsed());
        assert!(timed.tree().unwrap().root_value().0 < 1_000_000);
    }
    let stop = std::sync::atomic::AtomicBool::new(true);
    let mut stopped = agent(1_000_000, sequential);
    let done = stopped.search(&game, &Limits { simulations: 1_000_000, deadline: None, stop: Some(&stop) });
    assert_eq!(done, 1, "one wave, then the flag is seen");
    assert!(stopped.best_action().is_some());
    // The principal variation starts with the move chosen, and depths are counted.
    let mut az = agent(200, sequential);
    let best = az.choose(&game).unwrap();
    let tree = az.tree().unwrap();
    assert_eq!(tree.principal_variation(10).first(), Some(&best));
    let (mean, max) = tree.depth_stats();
    assert!(mean >= 1.0 && max as f32 >= mean, "{mean} {max}");
}
