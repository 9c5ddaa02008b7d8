//! `VecEnv` against N single games stepped by hand: buffers, auto-reset, illegal actions and
//! thread counts.

use std::sync::Arc;

use morris_env::features::encode;
use morris_env::{
    Action, ActionMask, AutoReset, Color, Game, IllegalActionMode, NUM_ACTIONS, Outcome, Rng, Rules, VecEnv,
    VecEnvConfig, WinReason, obs_len_on,
};
use proptest::prelude::*;

use super::config;
use super::games::*;

/// One env of the reference: a plain `Game` stepped by hand.
struct RefEnv {
    game: Game,
    rng: Rng,
    /// The game has ended and has not been restarted.
    done: bool,
    /// The current game's outcome (a loss by illegal action included).
    outcome: Outcome,
    final_outcome: Outcome,
}

/// What the reference expects of one env's rows after a step.
struct Expected {
    obs: Vec<f32>,
    final_obs: Option<Vec<f32>>,
    mask: ActionMask,
    player: u8,
    reward: [f32; 2],
    terminated: bool,
    truncated: bool,
    error: bool,
}

fn rewards_of(outcome: Outcome) -> [f32; 2] {
    match outcome.winner() {
        Some(Color::White) => [1.0, -1.0],
        Some(Color::Black) => [-1.0, 1.0],
        None => [0.0, 0.0],
    }
}

fn encode_game(game: &Game) -> Vec<f32> {
    let mut obs = vec![0.0f32; obs_len_on(game.rules().variant.board())];
    encode(game.position(), game.rules(), game.repetitions(), &mut obs);
    obs
}

impl RefEnv {
    fn new(rules: Rules, seed: u64, opening_plies: u32) -> RefEnv {
        let mut env = RefEnv {
            game: Game::new(rules),
            rng: Rng::seed_from_u64(seed),
            done: false,
            outcome: Outcome::Ongoing,
            final_outcome: Outcome::Ongoing,
        };
        env.new_game(opening_plies);
        env
    }

    fn new_game(&mut self, opening_plies: u32) {
        self.game.random_opening(&mut self.rng, opening_plies);
        self.done = false;
        self.outcome = self.game.outcome();
    }
}

/// `Game::random_opening` as its documentation describes it: reset, play `plies` uniformly
/// random legal actions, and replay with the next random numbers while that ends the game
/// (64 tries, then the start position).
fn spelled_out_opening(rules: Rules, rng: &mut Rng, plies: u32) -> Game {
    for _ in 0..64 {
        let mut game = Game::new(rules);
        for _ in 0..plies {
            let mask = game.legal_actions();
            if mask.is_empty() {
                break;
            }
            game.apply(pick(&mask, rng)).unwrap();
        }
        if !game.outcome().is_terminal() {
            return game;
        }
    }
    Game::new(rules)
}

impl RefEnv {
    fn mask(&self) -> ActionMask {
        if self.done || self.outcome.is_terminal() { ActionMask::EMPTY } else { self.game.legal_actions() }
    }

    fn expected(&self, reward: [f32; 2], ended: Option<Outcome>, final_obs: Option<Vec<f32>>) -> Expected {
        Expected {
            obs: encode_game(&self.game),
            final_obs,
            mask: self.mask(),
            player: self.game.current_player().index() as u8,
            reward,
            terminated: ended.is_some_and(|o| !o.is_truncation()),
            truncated: ended.is_some_and(|o| o.is_truncation()),
            error: false,
        }
    }

    /// One step; returns what the env's rows must hold and whether a game ended.
    fn step(&mut self, action: Action, config: &VecEnvConfig) -> (Expected, bool) {
        let plies = config.opening_plies;
        if self.done {
            if config.auto_reset == AutoReset::Off {
                // A finished game stays finished: zero rewards, flags kept.
                return (self.expected([0.0; 2], Some(self.final_outcome), None), false);
            }
            self.new_game(plies);
            return (self.expected([0.0; 2], None, None), false);
        }
        let mover = self.game.current_player();
        let outcome = match self.game.apply(action) {
            Ok(()) => self.game.outcome(),
            Err(_) if config.illegal_action == IllegalActionMode::Error => {
                // Rejected: nothing changes, and the flags of an ongoing game are clear.
                let mut e = self.expected([0.0; 2], None, None);
                e.error = true;
                return (e, false);
            }
            Err(_) => Outcome::Win { winner: mover.opponent(), reason: WinReason::IllegalAction },
        };
        self.outcome = outcome;
        if !outcome.is_terminal() {
            return (self.expected([0.0; 2], None, None), false);
        }
        self.final_outcome = outcome;
        let reward = rewards_of(outcome);
        if config.auto_reset == AutoReset::SameStep {
            let final_obs = encode_game(&self.game);
            self.new_game(plies);
            (self.expected(reward, Some(outcome), Some(final_obs)), true)
        } else {
            self.done = true;
            (self.expected(reward, Some(outcome), None), true)
        }
    }
}

fn assert_env_row(env: &VecEnv, i: usize, e: &Expected, step: usize) {
    let board = env.config().rules.variant.board();
    let len = obs_len_on(board);
    let row = i * len..(i + 1) * len;
    assert_eq!(&env.observations()[row.clone()], &e.obs[..], "env {i}, step {step}: observation");
    if let Some(f) = &e.final_obs {
        assert_eq!(&env.final_observations()[row], &f[..], "env {i}, step {step}: final observation");
    }
    assert_eq!(env.masks()[i], e.mask, "env {i}, step {step}: mask");
    if let Some(dense) = env.masks_view() {
        let expanded: Vec<bool> = (0..env.num_actions()).map(|a| e.mask.has(Action(a as u16))).collect();
        assert_eq!(dense.row(i).to_vec(), expanded, "env {i}, step {step}: expanded mask");
    }
    assert_eq!(env.observations_view().shape(), &[env.num_envs(), 15, board.num_points]);
    assert_eq!(
        env.observations_view().index_axis(ndarray::Axis(0), i).iter().copied().collect::<Vec<f32>>(),
        e.obs,
        "env {i}, step {step}: observation view"
    );
    assert_eq!(env.rewards_view().row(i).to_vec(), e.reward.to_vec(), "env {i}, step {step}: rewards view");
    assert_eq!(env.current_player()[i], e.player, "env {i}, step {step}: current player");
    assert_eq!(env.rewards()[i], e.reward, "env {i}, step {step}: rewards");
    assert_eq!(env.terminated()[i], e.terminated, "env {i}, step {step}: terminated");
    assert_eq!(env.truncated()[i], e.truncated, "env {i}, step {step}: truncated");
    assert_eq!(env.error(i).is_some(), e.error, "env {i}, step {step}: error {:?}", env.error(i));
}

fn auto_reset_of(i: u8) -> AutoReset {
    [AutoReset::NextStep, AutoReset::SameStep, AutoReset::Off][i as usize % 3]
}

fn vec_config(n: usize, rules: Rules, seed: u64, mode: AutoReset, opening_plies: u32) -> VecEnvConfig {
    VecEnvConfig {
        num_envs: n,
        rules,
        seed,
        auto_reset: mode,
        opening_plies,
        illegal_action: IllegalActionMode::Error,
        // Half the cases also keep the dense masks, checked against the packed ones.
        expand_masks: seed % 2 == 1,
    }
}

/// An action outside `mask` (out of range or illegal).
fn illegal_action(mask: &ActionMask, rng: &mut Rng) -> Action {
    loop {
        let a = if rng.below(2) == 0 {
            Action(rng.below(NUM_ACTIONS as u32) as u16)
        } else {
            Action(rng.next_u64() as u16)
        };
        if !mask.has(a) {
            return a;
        }
    }
}

/// Property 5: a `VecEnv` equals N games stepped one after another by hand. Actions are legal,
/// except that with `illegal_rate > 0` about one in `illegal_rate` is not.
fn check_vec_env_against_games(config: VecEnvConfig, action_seed: u64, steps: usize, illegal_rate: u32) {
    let n = config.num_envs;
    let mut env = VecEnv::new(config.clone()).unwrap();
    let mut refs: Vec<RefEnv> = (0..n)
        .map(|i| RefEnv::new(config.rules, config.seed.wrapping_add(i as u64), config.opening_plies))
        .collect();
    for (i, r) in refs.iter().enumerate() {
        // `Game::random_opening` does what its documentation says, and leaves the generator
        // where the documented procedure does.
        let mut rng = Rng::seed_from_u64(config.seed.wrapping_add(i as u64));
        let game = spelled_out_opening(config.rules, &mut rng, config.opening_plies);
        assert_eq!(game.position(), r.game.position());
        assert_eq!(game.actions(), r.game.actions());
        assert_eq!(rng, r.rng);
        assert_env_row(&env, i, &r.expected([0.0; 2], None, None), 0);
    }
    let mut action_rng = Rng::seed_from_u64(action_seed);
    for step in 1..=steps {
        let actions: Vec<Action> = refs
            .iter()
            .map(|r| {
                let mask = r.mask();
                if mask.is_empty() {
                    Action(action_rng.next_u64() as u16)
                } else if illegal_rate > 0 && action_rng.below(illegal_rate) == 0 {
                    illegal_action(&mask, &mut action_rng)
                } else {
                    pick(&mask, &mut action_rng)
                }
            })
            .collect();
        let info = env.step(&actions).unwrap();
        let (mut ended, mut errors) = (0, 0);
        for (i, r) in refs.iter_mut().enumerate() {
            let (e, end) = r.step(actions[i], &config);
            assert_env_row(&env, i, &e, step);
            assert_eq!(env.outcome(i), r.outcome, "env {i}, step {step}: outcome");
            assert_eq!(env.final_outcome(i), r.final_outcome, "env {i}, step {step}: final outcome");
            assert_eq!(env.game(i).position(), r.game.position(), "env {i}, step {step}: position");
            assert_eq!(env.game(i).actions(), r.game.actions(), "env {i}, step {step}: actions");
            ended += end as usize;
            errors += e.error as usize;
        }
        assert_eq!(info.num_errors, errors, "step {step}");
        assert_eq!(info.num_finished, ended, "step {step}");
    }
}

fn pool(threads: usize) -> Arc<rayon::ThreadPool> {
    Arc::new(rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap())
}

/// Property 5b: the thread count does not change a single byte of the buffers.
fn check_threads_agree(n: usize, rules: Rules, seed: u64, opening_plies: u32, mode: AutoReset, steps: usize) {
    let config = vec_config(n, rules, seed, mode, opening_plies);
    let mut one = VecEnv::new(config.clone()).unwrap().with_thread_pool(pool(1));
    let mut two = VecEnv::new(config.clone()).unwrap().with_thread_pool(pool(2));
    let mut four = VecEnv::new(config.clone()).unwrap().with_thread_pool(pool(4));
    // The caller stepping one share itself (as the Python package runs it), with 2 and 3 shares.
    let mut shared2 = VecEnv::new(config.clone()).unwrap().with_threads(2).unwrap();
    let mut shared3 = VecEnv::new(config).unwrap().with_threads(3).unwrap();
    let mut rng = Rng::seed_from_u64(seed ^ 0xabcd);
    for step in 0..steps {
        for other in [&two, &four, &shared2, &shared3] {
            assert_eq!(one.observations(), other.observations(), "step {step}");
            assert_eq!(one.final_observations(), other.final_observations(), "step {step}");
            assert_eq!(one.masks(), other.masks(), "step {step}");
            assert_eq!(one.current_player(), other.current_player(), "step {step}");
            assert_eq!(one.rewards(), other.rewards(), "step {step}");
            assert_eq!(one.terminated(), other.terminated(), "step {step}");
            assert_eq!(one.truncated(), other.truncated(), "step {step}");
        }
        let actions: Vec<Action> =
            one.masks()
                .iter()
                .map(|m| {
                    if m.is_empty() {
                        Action(rng.below(NUM_ACTIONS as u32) as u16)
                    } else {
                        pick(m, &mut rng)
                    }
                })
                .collect();
        let a = one.step(&actions).unwrap();
        let b = two.step(&actions).unwrap();
        let c = four.step(&actions).unwrap();
        assert_eq!(a, b);
        assert_eq!(a, c);
        assert_eq!(a, shared2.step(&actions).unwrap());
        assert_eq!(a, shared3.step(&actions).unwrap());
    }
}

/// Found by `vec_env_matches_single_games_with_illegal_actions`: in `SameStep` mode, the step
/// after a game ended keeps that game's `terminated`/`truncated` flags when its action is
/// rejected (`IllegalActionMode::Error`), although it zeroes the rewards and the env already holds
/// a new, ongoing game. An RL loop would count the old episode as ending twice.
#[test]
fn same_step_flags_are_cleared_on_a_rejected_action() {
    let rules = Rules { turn_cap: Some(1), ..Rules::openspiel() };
    let mut env = VecEnv::new(vec_config(1, rules, 0, AutoReset::SameStep, 0)).unwrap();
    env.step(&[Action(0)]).unwrap(); // one turn: the game ends by the turn cap, a new one starts
    assert_eq!((env.terminated()[0], env.truncated()[0]), (false, true));
    assert_eq!(env.masks()[0].count(), 24, "a new game is running");
    let info = env.step(&[Action(600)]).unwrap(); // rejected
    assert_eq!(info.num_errors, 1);
    assert_eq!(env.rewards()[0], [0.0, 0.0]);
    assert!(!env.truncated()[0], "no game ended on this step, yet the flag of the previous one is kept");
    assert!(!env.terminated()[0]);
}

proptest! {
    #![proptest_config(config(32))]

    /// 5. `VecEnv` equals N games stepped one by one with the same seeds and actions.
    #[test]
    fn vec_env_matches_single_games(
        n in 1usize..40,
        seed in any::<u64>(),
        opening_plies in 0u32..10,
        auto_reset in 0u8..2,
        rules in 0u8..RULE_SETS,
        action_seed in any::<u64>(),
    ) {
        let config = vec_config(n, rules_of(rules), seed, auto_reset_of(auto_reset), opening_plies);
        check_vec_env_against_games(config, action_seed, 150, 0);
    }

    /// 5a. The same with auto-reset off and some illegal actions, under both illegal-action modes.
    #[test]
    fn vec_env_matches_single_games_with_illegal_actions(
        n in 1usize..40,
        seed in any::<u64>(),
        opening_plies in 0u32..10,
        auto_reset in 0u8..3,
        loss in any::<bool>(),
        rules in 0u8..RULE_SETS,
        action_seed in any::<u64>(),
    ) {
        let mut config = vec_config(n, rules_of(rules), seed, auto_reset_of(auto_reset), opening_plies);
        config.illegal_action = if loss { IllegalActionMode::Loss } else { IllegalActionMode::Error };
        check_vec_env_against_games(config, action_seed, 100, 25);
    }

    /// 5b. The thread count does not change the buffers.
    #[test]
    fn vec_env_is_independent_of_thread_count(
        n in 1usize..100,
        seed in any::<u64>(),
        opening_plies in 0u32..10,
        auto_reset in 0u8..3,
        rules in 0u8..RULE_SETS,
    ) {
        check_threads_agree(n, rules_of(rules), seed, opening_plies, auto_reset_of(auto_reset), 120);
    }
}
