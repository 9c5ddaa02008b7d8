//! `VecEnv`: N independent games stepped in parallel, writing struct-of-arrays buffers for tensors.
//!
//! Rewards and observations follow one convention: observations are from the point of view of
//! the player to move, and `rewards[i] = [white, black]` holds each player's final result
//! (+1 win, −1 loss, 0 draw) on the step that ends a game and 0 on every other step.

use std::fmt;
use std::sync::Arc;

use ndarray::{ArrayView2, ArrayView3};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::action::{Action, ActionMask, MASK_WORDS};
use crate::error::ActionError;
use crate::features::{NUM_PLANES, encode, obs_len_on};
use crate::game::Game;
use crate::outcome::{Outcome, WinReason};
use crate::rng::Rng;
use crate::rules::Rules;
use crate::types::Color;

/// What happens to a game that has ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum AutoReset {
    /// The game stays finished. Stepping it is a no-op with zero rewards; `terminated` or
    /// `truncated` stays set and its mask stays all-zero, until [`VecEnv::reset`].
    Off,
    /// The step that ends a game reports it (final observation, all-zero mask, flags, rewards).
    /// The next step ignores that env's action and starts a new game instead.
    #[default]
    NextStep,
    /// The step that ends a game starts a new one at once: the buffers show the new game, the
    /// flags and rewards describe the finished one, and its last observation is kept in
    /// [`VecEnv::final_observations`] and its result in [`VecEnv::final_outcome`].
    SameStep,
}

/// What an illegal action does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum IllegalActionMode {
    /// The env records the error in [`VecEnv::errors`] and does not change.
    #[default]
    Error,
    /// The player who made it loses at once ([`WinReason::IllegalAction`]).
    Loss,
}

/// Settings of a [`VecEnv`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VecEnvConfig {
    /// Number of games `N`.
    pub num_envs: usize,
    /// Rules of every game.
    pub rules: Rules,
    /// Env `i` is seeded with `seed + i` (wrapping).
    pub seed: u64,
    /// What happens to finished games.
    pub auto_reset: AutoReset,
    /// Uniformly random plies played at the start of each game, for diverse openings.
    pub opening_plies: u32,
    /// What an illegal action does.
    pub illegal_action: IllegalActionMode,
    /// Also keep the masks expanded to `[N, A]` booleans (`A` = [`VecEnv::num_actions`]), written in the same parallel pass as
    /// the observations ([`VecEnv::masks_view`]); for callers that hand the masks on as a dense
    /// array (the Python package). Each step stores only the entries that changed since the
    /// env's previous mask, not all 600. Off by default: the packed masks are enough in Rust.
    #[serde(default)]
    pub expand_masks: bool,
}

impl VecEnvConfig {
    /// `num_envs` games under `rules`, seed 0, next-step auto-reset, no random opening,
    /// illegal actions reported as errors.
    pub fn new(num_envs: usize, rules: Rules) -> VecEnvConfig {
        VecEnvConfig {
            num_envs,
            rules,
            seed: 0,
            auto_reset: AutoReset::NextStep,
            opening_plies: 0,
            illegal_action: IllegalActionMode::Error,
            expand_masks: false,
        }
    }
}

/// Errors of [`VecEnv`] as a whole (per-env illegal actions are in [`VecEnv::errors`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VecEnvError {
    /// `num_envs` was zero.
    NoEnvs,
    /// [`VecEnv::with_threads`] was asked for 0 threads.
    NoThreads,
    /// The threads of [`VecEnv::with_threads`] could not be started.
    Threads(String),
    /// The action slice does not have one action per env.
    WrongActionCount {
        /// `N`.
        expected: usize,
        /// The slice length.
        got: usize,
    },
    /// An output slice has the wrong length.
    WrongBufferLength {
        /// The required length.
        expected: usize,
        /// The given length.
        got: usize,
    },
}

impl fmt::Display for VecEnvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VecEnvError::NoEnvs => write!(f, "a VecEnv needs at least one env (num_envs = 0)"),
            VecEnvError::NoThreads => write!(f, "a VecEnv needs at least one thread (threads = 0)"),
            VecEnvError::Threads(e) => write!(f, "cannot start the VecEnv's threads: {e}"),
            VecEnvError::WrongActionCount { expected, got } => {
                write!(f, "step needs one action per env: expected {expected}, got {got}")
            }
            VecEnvError::WrongBufferLength { expected, got } => {
                write!(f, "output buffer has length {got}, expected {expected}")
            }
        }
    }
}

impl std::error::Error for VecEnvError {}

/// Counts from one [`VecEnv::step`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepInfo {
    /// Envs that rejected their action (see [`VecEnv::errors`]).
    pub num_errors: usize,
    /// Games that ended on this step.
    pub num_finished: usize,
}

/// Per-env state that is not exposed as a tensor.
#[derive(Clone, Debug)]
struct Slot {
    game: Game,
    rng: Rng,
    /// The current game's outcome (a loss by illegal action included).
    outcome: Outcome,
    /// The outcome of the last game that ended in this env.
    final_outcome: Outcome,
    /// The game has ended and has not been restarted.
    done: bool,
    error: Option<ActionError>,
}

/// Mutable views of one env's rows in the output buffers.
struct Row<'a> {
    obs: &'a mut [f32],
    final_obs: &'a mut [f32],
    mask: &'a mut ActionMask,
    /// The expanded mask (`[A]`), or one unused entry when masks are not expanded.
    mask_row: &'a mut [bool],
    player: &'a mut u8,
    reward: &'a mut [f32; 2],
    terminated: &'a mut bool,
    truncated: &'a mut bool,
}

/// N independent games with struct-of-arrays output buffers.
///
/// # Shapes
/// * `observations`: `[N, C*P]` f32 (`P` the board's points, 24 or six men's morris's 16: [`OBS_LEN`](crate::OBS_LEN)
///   per env on the 24-point boards; layout in [`features`](crate::features));
/// * `masks`: `[N]` packed [`ActionMask`]s (600 bits each); [`VecEnv::masks_u8`] and
///   [`VecEnv::masks_bool`] expand them to `[N, A]` (`A` = [`VecEnv::num_actions`], 600 on the
///   24-point boards);
/// * `current_player`: `[N]` u8 (0 White, 1 Black);
/// * `rewards`: `[N, 2]` f32, one column per player;
/// * `terminated`, `truncated`: `[N]` bool. A game cut off by the turn cap is `truncated`;
///   every other end (win, repetition, N-move rule) is `terminated`.
///
/// A finished game's mask is all-zero, with `terminated` or `truncated` set.
///
/// ```
/// use morris_env::{VecEnv, VecEnvConfig, Rules, Action};
/// let mut env = VecEnv::new(VecEnvConfig::new(4, Rules::standard())).unwrap();
/// let actions: Vec<Action> = env.masks().iter().map(|m| m.nth(0).unwrap()).collect();
/// let info = env.step(&actions).unwrap();
/// assert_eq!(info.num_errors, 0);
/// assert_eq!(env.current_player(), &[1, 1, 1, 1]);
/// ```
pub struct VecEnv {
    config: VecEnvConfig,
    slots: Vec<Slot>,
    observations: Vec<f32>,
    final_observations: Vec<f32>,
    masks: Vec<ActionMask>,
    /// `[N, A]` when `config.expand_masks`, else `[N]` unused entries (so rows still zip).
    mask_rows: Vec<bool>,
    current_player: Vec<u8>,
    rewards: Vec<[f32; 2]>,
    terminated: Vec<bool>,
    truncated: Vec<bool>,
    pool: Option<Arc<rayon::ThreadPool>>,
    /// The caller steps one share of the envs itself, the pool's threads the others
    /// ([`VecEnv::with_threads`]).
    caller_shares: bool,
}

impl VecEnv {
    /// Creates the envs and resets them with `config.seed`.
    ///
    /// # Errors
    /// [`VecEnvError::NoEnvs`] if `num_envs` is 0.
    pub fn new(config: VecEnvConfig) -> Result<VecEnv, VecEnvError> {
        let n = config.num_envs;
        if n == 0 {
            return Err(VecEnvError::NoEnvs);
        }
        let slot = Slot {
            game: Game::new(config.rules),
            rng: Rng::seed_from_u64(0),
            outcome: Outcome::Ongoing,
            final_outcome: Outcome::Ongoing,
            done: false,
            error: None,
        };
        let mut env = VecEnv {
            slots: vec![slot; n],
            observations: vec![0.0; n * obs_len(&config)],
            final_observations: vec![0.0; n * obs_len(&config)],
            masks: vec![ActionMask::EMPTY; n],
            mask_rows: vec![false; n * mask_row_len(&config)],
            current_player: vec![0; n],
            rewards: vec![[0.0; 2]; n],
            terminated: vec![false; n],
            truncated: vec![false; n],
            pool: None,
            caller_shares: false,
            config,
        };
        let seed = env.config.seed;
        env.reset(seed);
        Ok(env)
    }

    /// Runs [`VecEnv::step`] and [`VecEnv::reset`] on `pool` instead of rayon's global pool.
    pub fn with_thread_pool(mut self, pool: Arc<rayon::ThreadPool>) -> VecEnv {
        self.pool = Some(pool);
        self.caller_shares = false;
        self
    }

    /// Steps on `threads` threads in all, the calling thread being one of them: the envs are
    /// split into `threads` contiguous shares, the caller steps the first and a private pool of
    /// `threads - 1` threads the others (with 1, everything runs inline). The results do not
    /// depend on the thread count.
    ///
    /// Compared with [`VecEnv::with_thread_pool`], the caller does not wait idle while sleeping
    /// pool threads wake up: when the caller does other work between steps (Python drawing the
    /// next actions with NumPy), that wake-up made a 4096-env step on 2 threads 2-3× slower.
    /// Each step hands every share but the caller's to the pool as one small boxed job (rayon's
    /// `spawn`): the only allocation of a step, one per extra thread.
    ///
    /// # Errors
    /// If `threads` is 0 or the pool's threads cannot be started.
    pub fn with_threads(mut self, threads: usize) -> Result<VecEnv, VecEnvError> {
        if threads == 0 {
            return Err(VecEnvError::NoThreads);
        }
        self.pool = if threads == 1 {
            None
        } else {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads - 1)
                .thread_name(|i| format!("morris-vec-env-{i}"))
                .build()
                .map_err(|e| VecEnvError::Threads(e.to_string()))?;
            Some(Arc::new(pool))
        };
        self.caller_shares = true;
        Ok(self)
    }

    /// The configuration.
    pub fn config(&self) -> &VecEnvConfig {
        &self.config
    }

    /// Number of envs `N`.
    pub fn num_envs(&self) -> usize {
        self.slots.len()
    }

    /// Reseeds env `i` with `seed + i`, starts new games (with the random opening, if any) and
    /// clears rewards, flags and errors.
    pub fn reset(&mut self, seed: u64) {
        self.config.seed = seed;
        let config = self.config.clone();
        self.for_each_env(|i, slot, mut row| {
            slot.rng = Rng::seed_from_u64(seed.wrapping_add(i as u64));
            new_game(&config, slot);
            slot.final_outcome = Outcome::Ongoing;
            *row.reward = [0.0; 2];
            *row.terminated = false;
            *row.truncated = false;
            write_state(&config, slot, &mut row);
            StepInfo::default()
        });
    }

    /// Starts a new game (with the random opening, from each env's own generator) in every env
    /// `i` with `which[i]` set, clearing its reward, flags and error; the others are untouched.
    /// For callers that end games by their own judgement (a tablebase result, say).
    ///
    /// # Panics
    /// If `which` is not N long.
    pub fn restart(&mut self, which: &[bool]) {
        assert_eq!(which.len(), self.slots.len(), "restart needs one flag per env");
        let config = self.config.clone();
        self.for_each_env(|i, slot, mut row| {
            if which[i] {
                new_game(&config, slot);
                slot.final_outcome = Outcome::Ongoing;
                *row.reward = [0.0; 2];
                *row.terminated = false;
                *row.truncated = false;
                write_state(&config, slot, &mut row);
            }
            StepInfo::default()
        });
    }

    /// Steps every env with its action (`actions[i]` for env `i`).
    ///
    /// # Errors
    /// Only if `actions.len() != N`; nothing is stepped then. Illegal actions are per env:
    /// see [`IllegalActionMode`] and [`VecEnv::errors`].
    pub fn step(&mut self, actions: &[Action]) -> Result<StepInfo, VecEnvError> {
        if actions.len() != self.slots.len() {
            return Err(VecEnvError::WrongActionCount { expected: self.slots.len(), got: actions.len() });
        }
        let config = self.config.clone();
        Ok(self.for_each_env(|i, slot, row| step_env(&config, slot, actions[i], row)))
    }

    /// Steps every env with a uniformly random legal action drawn from the env's own generator,
    /// in the same parallel pass as the step: what [`VecEnv::sample_legal`] then
    /// [`VecEnv::step`] does, with the same games, without an action buffer. Finished games are
    /// handled as by `step` (an env waiting for its next-step reset draws nothing).
    ///
    /// ```
    /// use morris_env::{Action, VecEnv, VecEnvConfig, Rules};
    /// let config = VecEnvConfig::new(8, Rules::standard());
    /// let (mut a, mut b) = (VecEnv::new(config.clone()).unwrap(), VecEnv::new(config).unwrap());
    /// let mut actions = vec![Action(0); 8];
    /// for _ in 0..50 {
    ///     a.step_random();
    ///     b.sample_legal(&mut actions).unwrap();
    ///     b.step(&actions).unwrap();
    /// }
    /// assert_eq!(a.observations(), b.observations());
    /// ```
    pub fn step_random(&mut self) -> StepInfo {
        let config = self.config.clone();
        self.for_each_env(|_, slot, row| {
            let action = row.mask.sample(&mut slot.rng).unwrap_or(Action(0));
            step_env(&config, slot, action, row)
        })
    }

    /// Steps only the envs `i` with `active[i]` set, with `actions[i]`; the others are not
    /// touched at all (state, buffers, rewards and flags stay those of their last step). For
    /// callers that move some games and not others, such as an opponent replying in the games
    /// where it is to move.
    ///
    /// # Errors
    /// If `actions` or `active` is not N long; nothing is stepped then.
    pub fn step_where(&mut self, actions: &[Action], active: &[bool]) -> Result<StepInfo, VecEnvError> {
        let n = self.slots.len();
        for got in [actions.len(), active.len()] {
            if got != n {
                return Err(VecEnvError::WrongActionCount { expected: n, got });
            }
        }
        let config = self.config.clone();
        Ok(self.for_each_env(|i, slot, row| {
            if active[i] { step_env(&config, slot, actions[i], row) } else { StepInfo::default() }
        }))
    }

    /// Draws one uniformly random legal action per env into `out` (`[N]`) from each env's own
    /// generator, the one [`VecEnv::reset`] seeds with `seed + i` and that also draws the random
    /// openings: the draws are reproducible from the reset seed, whatever the thread count. An
    /// env without a legal action (a finished game, whose action the next step ignores) gets
    /// `Action(0)` and draws nothing, as Gymnasium's `Discrete.sample` does with an all-zero
    /// mask. No allocation.
    ///
    /// # Errors
    /// If `out.len() != N`.
    pub fn sample_legal(&mut self, out: &mut [Action]) -> Result<(), VecEnvError> {
        self.check_len(out.len(), 1)?;
        for ((a, mask), slot) in out.iter_mut().zip(&self.masks).zip(&mut self.slots) {
            *a = mask.sample(&mut slot.rng).unwrap_or(Action(0));
        }
        Ok(())
    }

    /// As [`VecEnv::sample_legal`], but env `i` draws from a generator seeded from `(seed, i)`
    /// ([`Rng::derive`]) instead of its own, which is left as it is: the same seed and masks
    /// always give the same actions, and different seeds or envs give unrelated draws.
    ///
    /// # Errors
    /// If `out.len() != N`.
    pub fn sample_legal_seeded(&self, seed: u64, out: &mut [Action]) -> Result<(), VecEnvError> {
        self.check_len(out.len(), 1)?;
        for (i, (a, mask)) in out.iter_mut().zip(&self.masks).enumerate() {
            let mut rng = Rng::seed_from_u64(Rng::derive(seed, SAMPLE_STREAM, i as u64));
            *a = mask.sample(&mut rng).unwrap_or(Action(0));
        }
        Ok(())
    }

    /// Runs `f` on every env in parallel chunks (on the configured pool) and sums the counts.
    fn for_each_env<F>(&mut self, f: F) -> StepInfo
    where
        F: Fn(usize, &mut Slot, Row<'_>) -> StepInfo + Sync + Send,
    {
        let pool = self.pool.clone();
        let row_len = mask_row_len(&self.config);
        let obs_len = obs_len(&self.config);
        let buffers = Buffers {
            slots: &mut self.slots,
            obs_len,
            obs: &mut self.observations,
            final_obs: &mut self.final_observations,
            masks: &mut self.masks,
            mask_rows: &mut self.mask_rows,
            row_len,
            players: &mut self.current_player,
            rewards: &mut self.rewards,
            terminated: &mut self.terminated,
            truncated: &mut self.truncated,
        };
        let add = |a: StepInfo, b: StepInfo| StepInfo {
            num_errors: a.num_errors + b.num_errors,
            num_finished: a.num_finished + b.num_finished,
        };
        if self.caller_shares {
            return step_in_shares(pool.as_deref(), buffers, &f, add);
        }
        match pool {
            // One thread: step inline on the caller. Handing the work to the pool's thread and
            // waiting for it costs a wake-up each step (measured from Python, where the pool's
            // thread falls asleep while NumPy draws the next actions).
            Some(p) if p.current_num_threads() == 1 => {
                buffers.rows().map(|(i, slot, row)| f(i, slot, row)).fold(StepInfo::default(), add)
            }
            Some(p) => p.install(move || {
                buffers.par_rows().map(|(i, slot, row)| f(i, slot, row)).reduce(StepInfo::default, add)
            }),
            None => buffers.par_rows().map(|(i, slot, row)| f(i, slot, row)).reduce(StepInfo::default, add),
        }
    }

    /// Observations, `[N, C*P]` row-major (`P` the board's points).
    pub fn observations(&self) -> &[f32] {
        &self.observations
    }

    /// In [`AutoReset::SameStep`] mode, the last observation of each game that ended on the
    /// latest step (`[N, C*P]`; rows of other envs are stale).
    pub fn final_observations(&self) -> &[f32] {
        &self.final_observations
    }

    /// Legal-action masks, `[N]` packed.
    pub fn masks(&self) -> &[ActionMask] {
        &self.masks
    }

    /// [`VecEnv::observations`] as an array view of shape `[N, C, P]` (planes, then points).
    pub fn observations_view(&self) -> ArrayView3<'_, f32> {
        obs_view(&self.observations, self.config.rules.variant.board().num_points)
    }

    /// [`VecEnv::final_observations`] as an array view of shape `[N, C, P]`.
    pub fn final_observations_view(&self) -> ArrayView3<'_, f32> {
        obs_view(&self.final_observations, self.config.rules.variant.board().num_points)
    }

    /// The masks expanded to booleans, `[N, A]`, written by every step and reset when
    /// [`VecEnvConfig::expand_masks`] is set; `None` otherwise (use [`VecEnv::masks_bool`]).
    pub fn masks_view(&self) -> Option<ArrayView2<'_, bool>> {
        if !self.config.expand_masks {
            return None;
        }
        ArrayView2::from_shape((self.slots.len(), self.num_actions()), &self.mask_rows).ok()
    }

    /// The packed masks as one `[N, MASK_WORDS]` array of `u64` words, the buffer behind
    /// [`VecEnv::masks`] without a copy: action `a` is bit `a % 64` of word `a / 64`, and the
    /// bits from the board's action count on (600..640 on the 24-point boards) are zero. On a
    /// little-endian machine its bytes are the masks as 80 bytes per env, action `a` in bit
    /// `a % 8` of byte `a / 8`.
    pub fn packed_masks_view(&self) -> ArrayView2<'_, u64> {
        let n = self.masks.len();
        let words: &[u64] = bytemuck::cast_slice(&self.masks);
        ArrayView2::from_shape((n, MASK_WORDS), words).expect("N masks of MASK_WORDS words")
    }

    /// [`VecEnv::rewards`] as an array view of shape `[N, 2]` (White, Black).
    pub fn rewards_view(&self) -> ArrayView2<'_, f32> {
        ArrayView2::from(self.rewards.as_slice())
    }

    /// Expands the masks into `out`, `[N, A]` of 0/1 bytes.
    ///
    /// # Errors
    /// If `out.len() != N * A`.
    pub fn masks_u8(&self, out: &mut [u8]) -> Result<(), VecEnvError> {
        let actions = self.num_actions();
        self.check_len(out.len(), actions)?;
        for (m, row) in self.masks.iter().zip(out.chunks_exact_mut(actions)) {
            m.write_u8(row);
        }
        Ok(())
    }

    /// Expands the masks into `out`, `[N, A]` of booleans.
    ///
    /// # Errors
    /// If `out.len() != N * A`.
    pub fn masks_bool(&self, out: &mut [bool]) -> Result<(), VecEnvError> {
        let actions = self.num_actions();
        self.check_len(out.len(), actions)?;
        for (m, row) in self.masks.iter().zip(out.chunks_exact_mut(actions)) {
            m.write_bool(row);
        }
        Ok(())
    }

    /// The size of the rules' action space: 600 on the 24-point boards, 272 on six men's
    /// morris's ([`Board::num_actions`](crate::board::Board::num_actions)), the width of the
    /// expanded masks.
    pub fn num_actions(&self) -> usize {
        self.config.rules.variant.board().num_actions()
    }

    fn check_len(&self, got: usize, per_env: usize) -> Result<(), VecEnvError> {
        let expected = self.slots.len() * per_env;
        if got == expected { Ok(()) } else { Err(VecEnvError::WrongBufferLength { expected, got }) }
    }

    /// The player to move in each env, `[N]` (0 White, 1 Black).
    pub fn current_player(&self) -> &[u8] {
        &self.current_player
    }

    /// Rewards of the latest step, `[N, 2]`: `[white, black]` per env.
    pub fn rewards(&self) -> &[[f32; 2]] {
        &self.rewards
    }

    /// Whether each game ended by the rules on the latest step (or, with auto-reset off, earlier).
    pub fn terminated(&self) -> &[bool] {
        &self.terminated
    }

    /// Whether each game was cut off by the turn cap.
    pub fn truncated(&self) -> &[bool] {
        &self.truncated
    }

    /// The illegal action, if any, that env `i` rejected on the latest step.
    ///
    /// # Panics
    /// If `i >= N`.
    pub fn error(&self, i: usize) -> Option<ActionError> {
        self.slots[i].error
    }

    /// Iterates `(env, error)` for the envs that rejected their action on the latest step.
    pub fn errors(&self) -> impl Iterator<Item = (usize, ActionError)> + '_ {
        self.slots.iter().enumerate().filter_map(|(i, s)| s.error.map(|e| (i, e)))
    }

    /// The outcome of env `i`'s current game (a loss by illegal action included).
    ///
    /// # Panics
    /// If `i >= N`.
    pub fn outcome(&self, i: usize) -> Outcome {
        self.slots[i].outcome
    }

    /// The outcome of the last game that ended in env `i` ([`Outcome::Ongoing`] if none has).
    /// In [`AutoReset::SameStep`] mode this is how the result of a game that ended on the
    /// latest step is read, since the env already holds the next game.
    ///
    /// # Panics
    /// If `i >= N`.
    pub fn final_outcome(&self, i: usize) -> Outcome {
        self.slots[i].final_outcome
    }

    /// The game in env `i`.
    ///
    /// # Panics
    /// If `i >= N`.
    pub fn game(&self, i: usize) -> &Game {
        &self.slots[i].game
    }
}

/// An `[N * C * P]` observation buffer as `[N, C, P]`, `P` the board's points.
fn obs_view(flat: &[f32], points: usize) -> ArrayView3<'_, f32> {
    let n = flat.len() / (NUM_PLANES * points);
    ArrayView3::from_shape((n, NUM_PLANES, points), flat).expect("observation buffers hold N rows of C * P")
}

/// Entries per env of the observation buffers: `C × P`, `P` the points of the rules' board
/// ([`OBS_LEN`](crate::OBS_LEN) on the 24-point boards).
fn obs_len(config: &VecEnvConfig) -> usize {
    obs_len_on(config.rules.variant.board())
}

/// Every per-env buffer, borrowed for one pass over the envs.
struct Buffers<'a> {
    slots: &'a mut [Slot],
    obs: &'a mut [f32],
    final_obs: &'a mut [f32],
    masks: &'a mut [ActionMask],
    mask_rows: &'a mut [bool],
    /// Entries per env of `obs` and `final_obs` ([`obs_len`]).
    obs_len: usize,
    /// Entries per env of `mask_rows` ([`mask_row_len`]).
    row_len: usize,
    players: &'a mut [u8],
    rewards: &'a mut [[f32; 2]],
    terminated: &'a mut [bool],
    truncated: &'a mut [bool],
}

impl<'a> Buffers<'a> {
    /// Zips the per-env state with its rows of every buffer, in parallel chunks.
    fn par_rows(self) -> impl IndexedParallelIterator<Item = (usize, &'a mut Slot, Row<'a>)> {
        (
            self.slots.par_iter_mut(),
            self.obs.par_chunks_mut(self.obs_len),
            self.final_obs.par_chunks_mut(self.obs_len),
            self.masks.par_iter_mut(),
            self.mask_rows.par_chunks_mut(self.row_len),
            self.players.par_iter_mut(),
            self.rewards.par_iter_mut(),
            self.terminated.par_iter_mut(),
            self.truncated.par_iter_mut(),
        )
            .into_par_iter()
            .with_min_len(32)
            .enumerate()
            .map(
                |(i, (slot, obs, final_obs, mask, mask_row, player, reward, terminated, truncated))| {
                    (i, slot, Row { obs, final_obs, mask, mask_row, player, reward, terminated, truncated })
                },
            )
    }

    /// The first `mid` envs and the rest.
    fn split_at(self, mid: usize) -> (Buffers<'a>, Buffers<'a>) {
        let (slots_a, slots_b) = self.slots.split_at_mut(mid);
        let obs_len = self.obs_len;
        let (obs_a, obs_b) = self.obs.split_at_mut(mid * obs_len);
        let (final_a, final_b) = self.final_obs.split_at_mut(mid * obs_len);
        let (masks_a, masks_b) = self.masks.split_at_mut(mid);
        let (rows_a, rows_b) = self.mask_rows.split_at_mut(mid * self.row_len);
        let (players_a, players_b) = self.players.split_at_mut(mid);
        let (rewards_a, rewards_b) = self.rewards.split_at_mut(mid);
        let (term_a, term_b) = self.terminated.split_at_mut(mid);
        let (trunc_a, trunc_b) = self.truncated.split_at_mut(mid);
        let row_len = self.row_len;
        (
            Buffers {
                slots: slots_a,
                obs_len,
                obs: obs_a,
                final_obs: final_a,
                masks: masks_a,
                mask_rows: rows_a,
                row_len,
                players: players_a,
                rewards: rewards_a,
                terminated: term_a,
                truncated: trunc_a,
            },
            Buffers {
                slots: slots_b,
                obs_len,
                obs: obs_b,
                final_obs: final_b,
                masks: masks_b,
                mask_rows: rows_b,
                row_len,
                players: players_b,
                rewards: rewards_b,
                terminated: term_b,
                truncated: trunc_b,
            },
        )
    }

    /// The same rows, in order on the calling thread.
    fn rows(self) -> impl Iterator<Item = (usize, &'a mut Slot, Row<'a>)> {
        let mut obs = self.obs.chunks_mut(self.obs_len);
        let mut final_obs = self.final_obs.chunks_mut(self.obs_len);
        let mut masks = self.masks.iter_mut();
        let mut mask_rows = self.mask_rows.chunks_mut(self.row_len);
        let mut players = self.players.iter_mut();
        let mut rewards = self.rewards.iter_mut();
        let mut terminated = self.terminated.iter_mut();
        let mut truncated = self.truncated.iter_mut();
        self.slots.iter_mut().enumerate().map_while(move |(i, slot)| {
            let row = Row {
                obs: obs.next()?,
                final_obs: final_obs.next()?,
                mask: masks.next()?,
                mask_row: mask_rows.next()?,
                player: players.next()?,
                reward: rewards.next()?,
                terminated: terminated.next()?,
                truncated: truncated.next()?,
            };
            Some((i, slot, row))
        })
    }
}

/// [`VecEnv::with_threads`]: one contiguous share of the envs per thread, the first stepped by
/// the caller, the others spawned into `pool`; env indices stay global.
fn step_in_shares<F>(
    pool: Option<&rayon::ThreadPool>,
    buffers: Buffers<'_>,
    f: &F,
    add: impl Fn(StepInfo, StepInfo) -> StepInfo + Sync,
) -> StepInfo
where
    F: Fn(usize, &mut Slot, Row<'_>) -> StepInfo + Sync + Send,
{
    let n = buffers.slots.len();
    let run = |offset: usize, part: Buffers<'_>| {
        part.rows().map(|(i, slot, row)| f(offset + i, slot, row)).fold(StepInfo::default(), &add)
    };
    let Some(pool) = pool else { return run(0, buffers) };
    let shares = pool.current_num_threads() + 1;
    let per_share = n.div_ceil(shares);
    let (mine, mut rest) = buffers.split_at(per_share.min(n));
    let totals = std::sync::Mutex::new(StepInfo::default());
    let own = pool.in_place_scope(|scope| {
        let mut offset = per_share.min(n);
        while !rest.slots.is_empty() {
            let take = per_share.min(rest.slots.len());
            let (part, tail) = rest.split_at(take);
            rest = tail;
            let (totals, run) = (&totals, &run);
            scope.spawn(move |_| {
                let info = run(offset, part);
                let mut t = totals.lock().unwrap_or_else(|e| e.into_inner());
                *t = StepInfo {
                    num_errors: t.num_errors + info.num_errors,
                    num_finished: t.num_finished + info.num_finished,
                };
            });
            offset += take;
        }
        run(0, mine)
    });
    add(own, totals.into_inner().unwrap_or_else(|e| e.into_inner()))
}

/// The stream of [`Rng::derive`] behind [`VecEnv::sample_legal_seeded`].
const SAMPLE_STREAM: u64 = 0x5a3d_1e6a_7c0b_42f1;

/// Entries per env of the expanded-mask buffer: the board's actions (600 on the 24-point
/// boards), or 1 (unused) when masks are not expanded.
fn mask_row_len(config: &VecEnvConfig) -> usize {
    if config.expand_masks { config.rules.variant.board().num_actions() } else { 1 }
}

/// Starts a new game in `slot`, with the configured random opening. If the opening happens to
/// end the game, it is replayed with the next random numbers (a bounded number of times).
fn new_game(config: &VecEnvConfig, slot: &mut Slot) {
    slot.game.random_opening(&mut slot.rng, config.opening_plies);
    slot.outcome = slot.game.outcome();
    slot.done = false;
    slot.error = None;
}

/// Writes the observation, mask and player of the slot's current state.
fn write_state(config: &VecEnvConfig, slot: &Slot, row: &mut Row<'_>) {
    let game = &slot.game;
    encode(game.position(), &config.rules, game.repetitions(), row.obs);
    // A game lost by an illegal action is over although its position is not.
    let mask = if slot.done || slot.outcome.is_terminal() { ActionMask::EMPTY } else { game.legal_actions() };
    if config.expand_masks {
        update_dense(row.mask, &mask, row.mask_row);
    }
    *row.mask = mask;
    *row.player = game.current_player() as u8;
}

/// Rewrites the dense `row` (`[A]`), which holds `old` expanded, to hold `new`: a store per
/// action that changed (typically a few dozen; consecutive masks share most of their actions)
/// instead of 600. The invariant holds because only this function writes the dense rows, and
/// every row starts all false beside an empty mask.
#[inline]
fn update_dense(old: &ActionMask, new: &ActionMask, row: &mut [bool]) {
    for (w, (&o, &n)) in old.0.iter().zip(&new.0).enumerate() {
        let mut changed = o ^ n;
        while changed != 0 {
            let bit = changed.trailing_zeros() as usize;
            if let Some(entry) = row.get_mut(w * 64 + bit) {
                *entry = (n >> bit) & 1 != 0;
            }
            changed &= changed - 1;
        }
    }
}

/// One env's step; returns the counts it contributes.
fn step_env(config: &VecEnvConfig, slot: &mut Slot, action: Action, mut row: Row<'_>) -> StepInfo {
    *row.reward = [0.0; 2];
    slot.error = None;
    if slot.done {
        if config.auto_reset == AutoReset::Off {
            return StepInfo::default();
        }
        new_game(config, slot);
        *row.terminated = false;
        *row.truncated = false;
        write_state(config, slot, &mut row);
        return StepInfo::default();
    }
    // The flags describe this step only: a game running now has not ended (yet).
    *row.terminated = false;
    *row.truncated = false;
    let mover = slot.game.current_player();
    slot.outcome = match slot.game.apply(action) {
        Ok(()) => slot.game.outcome(),
        Err(e) => match config.illegal_action {
            IllegalActionMode::Error => {
                slot.error = Some(e);
                return StepInfo { num_errors: 1, num_finished: 0 };
            }
            IllegalActionMode::Loss => {
                Outcome::Win { winner: mover.opponent(), reason: WinReason::IllegalAction }
            }
        },
    };
    let outcome = slot.outcome;
    if !outcome.is_terminal() {
        write_state(config, slot, &mut row);
        return StepInfo::default();
    }
    slot.final_outcome = outcome;
    *row.reward = [outcome.reward(Color::White), outcome.reward(Color::Black)];
    *row.truncated = outcome.is_truncation();
    *row.terminated = !outcome.is_truncation();
    if config.auto_reset == AutoReset::SameStep {
        let game = &slot.game;
        encode(game.position(), &config.rules, game.repetitions(), row.final_obs);
        new_game(config, slot);
        write_state(config, slot, &mut row);
    } else {
        slot.done = true;
        write_state(config, slot, &mut row);
    }
    StepInfo { num_errors: 0, num_finished: 1 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::NUM_ACTIONS;
    use crate::features::OBS_LEN;
    use crate::outcome::DrawReason;

    /// Rules under which every game ends after one turn (a draw by the turn cap).
    fn one_turn() -> Rules {
        Rules { turn_cap: Some(1), ..Rules::openspiel() }
    }

    fn env(n: usize, rules: Rules, auto_reset: AutoReset) -> VecEnv {
        let mut c = VecEnvConfig::new(n, rules);
        c.auto_reset = auto_reset;
        VecEnv::new(c).unwrap()
    }

    #[test]
    fn zero_envs_and_wrong_action_count_are_errors() {
        assert_eq!(VecEnv::new(VecEnvConfig::new(0, Rules::standard())).err(), Some(VecEnvError::NoEnvs));
        let mut e = env(3, Rules::standard(), AutoReset::Off);
        assert_eq!(e.step(&[Action(0)]), Err(VecEnvError::WrongActionCount { expected: 3, got: 1 }));
        let mut small = vec![0u8; 10];
        assert!(e.masks_u8(&mut small).is_err());
    }

    #[test]
    fn auto_reset_off_keeps_finished_games_with_empty_masks() {
        let mut e = env(2, one_turn(), AutoReset::Off);
        let info = e.step(&[Action(0), Action(1)]).unwrap();
        assert_eq!(info.num_finished, 2);
        assert_eq!(e.truncated(), &[true, true]);
        assert_eq!(e.terminated(), &[false, false]);
        assert_eq!(e.outcome(0), Outcome::Draw(DrawReason::TurnCap));
        assert!(e.masks().iter().all(|m| m.is_empty()));
        let before = e.observations().to_vec();
        // Stepping finished games is a no-op with zero rewards.
        let info = e.step(&[Action(5), Action(599)]).unwrap();
        assert_eq!(info, StepInfo::default());
        assert_eq!(e.rewards(), &[[0.0, 0.0], [0.0, 0.0]]);
        assert_eq!(e.truncated(), &[true, true]);
        assert_eq!(e.observations(), &before[..]);
        assert_eq!(e.game(0).actions().len(), 1);
        e.reset(9);
        assert_eq!(e.truncated(), &[false, false]);
        assert_eq!(e.masks()[0].count(), 24);
    }

    #[test]
    fn next_step_reset_ignores_the_action_after_a_game_ends() {
        let mut e = env(1, one_turn(), AutoReset::NextStep);
        e.step(&[Action(3)]).unwrap();
        assert!(e.truncated()[0] && e.masks()[0].is_empty());
        e.step(&[Action(599)]).unwrap();
        assert!(!e.truncated()[0]);
        assert_eq!(e.error(0), None);
        assert_eq!(e.game(0).actions().len(), 0);
        assert_eq!(e.masks()[0].count(), 24);
        assert_eq!(e.final_outcome(0), Outcome::Draw(DrawReason::TurnCap));
    }

    #[test]
    fn same_step_reset_keeps_the_final_observation() {
        let mut e = env(1, one_turn(), AutoReset::SameStep);
        let info = e.step(&[Action(3)]).unwrap();
        assert_eq!(info.num_finished, 1);
        assert!(e.truncated()[0]);
        // The buffers already show a new game...
        assert_eq!(e.masks()[0].count(), 24);
        assert_eq!(e.current_player(), &[0]);
        // ...and the final observation is Black's view with White's piece on b6.
        let fin = e.final_observations();
        assert_eq!(fin[crate::NUM_POINTS + 3], 1.0);
        assert_eq!(e.final_outcome(0), Outcome::Draw(DrawReason::TurnCap));
        assert_eq!(e.outcome(0), Outcome::Ongoing);
    }

    #[test]
    fn illegal_action_as_error_changes_nothing() {
        let mut e = env(2, Rules::standard(), AutoReset::NextStep);
        e.step(&[Action(4), Action(4)]).unwrap();
        let obs = e.observations().to_vec();
        let info = e.step(&[Action(4), Action(5)]).unwrap();
        assert_eq!(info.num_errors, 1);
        assert_eq!(e.error(0), Some(ActionError::PointOccupied(crate::Point::ALL[4])));
        assert_eq!(e.error(1), None);
        assert_eq!(e.errors().count(), 1);
        assert_eq!(&e.observations()[..OBS_LEN], &obs[..OBS_LEN]);
        assert_eq!(e.game(0).actions().len(), 1);
        assert_eq!(e.rewards()[0], [0.0, 0.0]);
    }

    #[test]
    fn illegal_action_as_loss_ends_the_game_for_the_mover() {
        let mut c = VecEnvConfig::new(1, Rules::standard());
        c.illegal_action = IllegalActionMode::Loss;
        c.auto_reset = AutoReset::Off;
        let mut e = VecEnv::new(c).unwrap();
        e.step(&[Action(4)]).unwrap();
        // Black plays onto the occupied d6 and loses.
        let info = e.step(&[Action(4)]).unwrap();
        assert_eq!(info.num_finished, 1);
        assert_eq!(e.rewards()[0], [1.0, -1.0]);
        assert!(e.terminated()[0]);
        assert!(e.masks()[0].is_empty());
        assert_eq!(e.outcome(0), Outcome::Win { winner: Color::White, reason: WinReason::IllegalAction });
    }

    #[test]
    fn step_random_plays_the_games_of_sample_legal_then_step() {
        let mut c = VecEnvConfig::new(64, Rules::standard());
        c.opening_plies = 3;
        c.seed = 5;
        c.auto_reset = AutoReset::SameStep;
        let mut fused = VecEnv::new(c.clone()).unwrap().with_threads(2).unwrap();
        let mut split = VecEnv::new(c).unwrap();
        let mut actions = vec![Action(0); 64];
        let mut finished = 0;
        for _ in 0..400 {
            finished += fused.step_random().num_finished;
            split.sample_legal(&mut actions).unwrap();
            for (a, m) in actions.iter().zip(split.masks()) {
                assert!(m.has(*a));
            }
            split.step(&actions).unwrap();
            assert_eq!(fused.observations(), split.observations());
            assert_eq!(fused.rewards(), split.rewards());
        }
        assert!(finished > 0, "some games end in 400 random plies");
        assert!(fused.errors().next().is_none());
    }

    #[test]
    fn sampling_a_finished_env_gives_action_zero_and_draws_nothing() {
        let mut e = env(2, one_turn(), AutoReset::NextStep);
        e.step(&[Action(3), Action(4)]).unwrap();
        assert!(e.masks().iter().all(|m| m.is_empty()));
        let rng_before = e.slots[0].rng.clone();
        let mut out = [Action(7); 2];
        e.sample_legal(&mut out).unwrap();
        assert_eq!(out, [Action(0); 2]);
        assert_eq!(e.slots[0].rng, rng_before);
        e.sample_legal_seeded(1, &mut out).unwrap();
        assert_eq!(out, [Action(0); 2]);
        // The ignored action starts new games, as any action would.
        e.step(&out).unwrap();
        assert_eq!(e.masks()[0].count(), 24);
        assert!(e.sample_legal(&mut [Action(0); 3]).is_err());
        assert!(e.sample_legal_seeded(0, &mut [Action(0); 1]).is_err());
    }

    #[test]
    fn seeded_sampling_is_a_function_of_the_seed_and_leaves_the_env_generators() {
        let e = env(256, Rules::standard(), AutoReset::NextStep);
        let (mut a, mut b, mut c) = (vec![Action(0); 256], vec![Action(0); 256], vec![Action(0); 256]);
        e.sample_legal_seeded(9, &mut a).unwrap();
        e.sample_legal_seeded(9, &mut b).unwrap();
        e.sample_legal_seeded(10, &mut c).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        // Neighbouring envs do not share a stream (seed + i would make env i of seed 10 the
        // env i + 1 of seed 9).
        assert_ne!(&a[1..], &c[..255]);
        let mut counts = [0u32; 24];
        for x in &a {
            counts[x.index()] += 1;
        }
        assert!(counts.iter().all(|&k| k > 0), "every placement drawn: {counts:?}");
    }

    #[test]
    fn step_where_leaves_inactive_envs_untouched() {
        let mut e = env(3, Rules::standard(), AutoReset::NextStep);
        e.step(&[Action(0), Action(1), Action(2)]).unwrap();
        let obs = e.observations().to_vec();
        let info = e.step_where(&[Action(5), Action(599), Action(6)], &[true, false, true]).unwrap();
        assert_eq!(info, StepInfo::default());
        assert_eq!(e.game(0).actions(), &[Action(0), Action(5)]);
        assert_eq!(e.game(1).actions(), &[Action(1)]);
        assert_eq!(e.error(1), None);
        assert_eq!(&e.observations()[OBS_LEN..2 * OBS_LEN], &obs[OBS_LEN..2 * OBS_LEN]);
        assert_eq!(e.current_player(), &[0, 1, 0]);
        assert_eq!(
            e.step_where(&[Action(0); 3], &[true; 2]),
            Err(VecEnvError::WrongActionCount { expected: 3, got: 2 })
        );
        assert_eq!(e.game(0).actions().len(), 2);
    }

    #[test]
    fn packed_and_dense_masks_agree_through_games_and_resets() {
        for auto_reset in [AutoReset::NextStep, AutoReset::SameStep, AutoReset::Off] {
            let mut c = VecEnvConfig::new(32, Rules { turn_cap: Some(30), ..Rules::standard() });
            c.auto_reset = auto_reset;
            c.expand_masks = true;
            let mut e = VecEnv::new(c).unwrap();
            let mut expanded = vec![false; 32 * NUM_ACTIONS];
            for step in 0..200 {
                if step == 100 {
                    e.reset(3);
                }
                e.step_random();
                e.masks_bool(&mut expanded).unwrap();
                assert_eq!(e.masks_view().unwrap().as_slice().unwrap(), &expanded[..], "{auto_reset:?}");
                let packed = e.packed_masks_view();
                assert_eq!(packed.dim(), (32, MASK_WORDS));
                for (row, m) in packed.outer_iter().zip(e.masks()) {
                    assert_eq!(row.as_slice().unwrap(), &m.0[..]);
                }
            }
        }
    }

    #[test]
    fn random_openings_are_seeded_per_env() {
        let mut c = VecEnvConfig::new(4, Rules::standard());
        c.opening_plies = 6;
        c.seed = 11;
        let a = VecEnv::new(c.clone()).unwrap();
        let b = VecEnv::new(c).unwrap();
        assert_eq!(a.observations(), b.observations());
        assert!((0..4).all(|i| a.game(i).actions().len() == 6));
        assert_ne!(a.game(0).actions(), a.game(1).actions());
        let mut bytes = vec![0u8; 4 * NUM_ACTIONS];
        a.masks_u8(&mut bytes).unwrap();
        assert_eq!(
            bytes.iter().map(|&x| x as u32).sum::<u32>(),
            a.masks().iter().map(|m| m.count()).sum::<u32>()
        );
    }
}
