//! Self-play: `VecEnv` games advanced together by batched MCTS, one network call per wave for
//! all games, finished games restarted at once, and finished games turned into training samples.

use morris_env::{
    Action, AutoReset, Color, DrawReason, Outcome, Rng, Rules, VecEnv, VecEnvConfig, WinReason,
};

use morris_env::tablebase::{SharedTablebase, Wdl};

use crate::config::SelfPlayConfig;
use crate::error::{ConfigError, Result, TrainError};
use crate::evaluator::Evaluator;
use crate::mcts::{Mcts, MctsConfig, Tree};
use crate::sample::Sample;

/// Stream of [`Rng::derive`] for the generator that draws full or cheap searches.
const SEARCH_STREAM: u64 = 3;

/// A position waiting for its game's result.
struct Pending {
    position: morris_env::Position,
    repetitions: u8,
    policy: Vec<(Action, f32)>,
    full_search: bool,
    search_value: Option<f32>,
}

/// Results of the games finished since the counters were last taken.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GameStats {
    /// Games finished.
    pub games: u64,
    /// Plies played in those games (their lengths summed).
    pub plies: u64,
    /// Wins of White, draws, wins of Black.
    pub white_wins: u64,
    /// Draws.
    pub draws: u64,
    /// Wins of Black.
    pub black_wins: u64,
    /// Wins by reducing the opponent to two pieces.
    pub win_too_few_pieces: u64,
    /// Wins by leaving the opponent without a legal move.
    pub win_blocked: u64,
    /// Wins because the opponent's action was illegal (only with `IllegalActionMode::Lose`).
    pub win_illegal_action: u64,
    /// Wins by a line of three (three men's morris).
    pub win_line: u64,
    /// Draws by threefold repetition.
    pub draw_repetition: u64,
    /// Draws by the N-move rule.
    pub draw_n_move: u64,
    /// Draws by the turn cap.
    pub draw_turn_cap: u64,
    /// Draws by a full board (twelve men's morris).
    pub draw_board_full: u64,
    /// Games ended when they entered the endgame tables (counted with their exact result).
    pub tablebase_adjudicated: u64,
}

impl GameStats {
    fn record(&mut self, outcome: Outcome, plies: usize) {
        self.games += 1;
        self.plies += plies as u64;
        match outcome {
            Outcome::Win { winner, reason } => {
                if winner == Color::White {
                    self.white_wins += 1;
                } else {
                    self.black_wins += 1;
                }
                match reason {
                    WinReason::TooFewPieces => self.win_too_few_pieces += 1,
                    WinReason::Blocked => self.win_blocked += 1,
                    WinReason::IllegalAction => self.win_illegal_action += 1,
                    WinReason::Line => self.win_line += 1,
                }
            }
            Outcome::Draw(reason) => {
                self.draws += 1;
                match reason {
                    DrawReason::ThreefoldRepetition => self.draw_repetition += 1,
                    DrawReason::NMoveRule => self.draw_n_move += 1,
                    DrawReason::TurnCap => self.draw_turn_cap += 1,
                    DrawReason::BoardFull => self.draw_board_full += 1,
                }
            }
            Outcome::Ongoing => {}
        }
    }

    fn record_adjudicated(&mut self, outcome: Outcome, plies: usize) {
        self.games += 1;
        self.plies += plies as u64;
        self.tablebase_adjudicated += 1;
        match outcome {
            Outcome::Win { winner: Color::White, .. } => self.white_wins += 1,
            Outcome::Win { .. } => self.black_wins += 1,
            _ => self.draws += 1,
        }
    }

    /// Adds `other`'s counts to these.
    pub fn merge(&mut self, other: GameStats) {
        self.games += other.games;
        self.plies += other.plies;
        self.white_wins += other.white_wins;
        self.draws += other.draws;
        self.black_wins += other.black_wins;
        self.win_too_few_pieces += other.win_too_few_pieces;
        self.win_blocked += other.win_blocked;
        self.win_illegal_action += other.win_illegal_action;
        self.win_line += other.win_line;
        self.draw_repetition += other.draw_repetition;
        self.draw_n_move += other.draw_n_move;
        self.draw_turn_cap += other.draw_turn_cap;
        self.draw_board_full += other.draw_board_full;
        self.tablebase_adjudicated += other.tablebase_adjudicated;
    }

    /// The scalars to log: mean game length and the fractions of each result and reason.
    pub fn scalars(&self) -> Vec<(&'static str, f32)> {
        if self.games == 0 {
            return Vec::new();
        }
        let g = self.games as f32;
        vec![
            ("selfplay/game_length", self.plies as f32 / g),
            ("selfplay/white_win", self.white_wins as f32 / g),
            ("selfplay/draw", self.draws as f32 / g),
            ("selfplay/black_win", self.black_wins as f32 / g),
            ("selfplay/reason_too_few_pieces", self.win_too_few_pieces as f32 / g),
            ("selfplay/reason_blocked", self.win_blocked as f32 / g),
            ("selfplay/reason_illegal_action", self.win_illegal_action as f32 / g),
            ("selfplay/reason_line", self.win_line as f32 / g),
            ("selfplay/reason_repetition", self.draw_repetition as f32 / g),
            ("selfplay/reason_n_move", self.draw_n_move as f32 / g),
            ("selfplay/reason_turn_cap", self.draw_turn_cap as f32 / g),
            ("selfplay/reason_board_full", self.draw_board_full as f32 / g),
            ("selfplay/tablebase_adjudicated", self.tablebase_adjudicated as f32 / g),
        ]
    }
}

/// Many self-play games advanced in lock step.
pub struct SelfPlay {
    config: SelfPlayConfig,
    env: VecEnv,
    trees: Vec<Tree>,
    full: Mcts,
    cheap: Mcts,
    pending: Vec<Vec<Pending>>,
    actions: Vec<Action>,
    rng: Rng,
    /// Finished games' samples not yet taken.
    ready: Vec<Sample>,
    /// Results since the last [`SelfPlay::take_stats`].
    stats: GameStats,
    /// Positions (moves searched) since the start.
    pub positions: u64,
    /// Games finished since the start.
    pub games: u64,
    /// Seconds spent in [`SelfPlay::step`] since the start.
    pub step_seconds: f64,
    /// Seconds of those spent searching (the network's share: [`SelfPlay::network_seconds`]).
    pub search_seconds: f64,
    /// Endgame tables that end a game once it enters them (see [`SelfPlay::adjudicate_with`]).
    adjudicate: Option<SharedTablebase>,
    /// Scratch: the games to restart after adjudication.
    restart: Vec<bool>,
    /// Whether the next move is searched fully (drawn one move ahead, so that a scheduler can
    /// size other work by it: [`SelfPlay::next_simulations`]).
    next_full: bool,
}

impl SelfPlay {
    /// `config.parallel_games` games under `rules`. `mcts` is the search of a full move (its
    /// `num_simulations` is replaced by `config.simulations`); cheap moves use
    /// `config.cheap_simulations` without root noise.
    ///
    /// # Errors
    /// If `parallel_games` is 0.
    pub fn new(config: &SelfPlayConfig, mcts: &MctsConfig, rules: Rules, seed: u64) -> Result<SelfPlay> {
        let mut env_config = VecEnvConfig::new(config.parallel_games, rules);
        env_config.seed = seed;
        env_config.auto_reset = AutoReset::SameStep;
        env_config.opening_plies = config.opening_plies;
        let env = VecEnv::new(env_config)
            .map_err(|e| ConfigError::value("selfplay.parallel_games", e.to_string()))?;
        let mut rng = Rng::seed_from_u64(Rng::derive(seed, SEARCH_STREAM, 0));
        let trees = (0..env.num_envs()).map(|i| Tree::new(env.game(i), rng.next_u64() ^ i as u64)).collect();
        let full_config = MctsConfig { num_simulations: config.simulations, ..mcts.clone() };
        let cheap_config = MctsConfig {
            num_simulations: config.cheap_simulations,
            root_noise: false,
            gumbel_noise: false,
            ..mcts.clone()
        };
        let n = env.num_envs();
        let next_full = rng.next_f64() < config.full_search_fraction as f64;
        Ok(SelfPlay {
            config: config.clone(),
            env,
            trees,
            full: Mcts::new(full_config),
            cheap: Mcts::new(cheap_config),
            pending: (0..n).map(|_| Vec::with_capacity(256)).collect(),
            actions: vec![Action(0); n],
            rng,
            ready: Vec::new(),
            stats: GameStats::default(),
            positions: 0,
            games: 0,
            step_seconds: 0.0,
            search_seconds: 0.0,
            adjudicate: None,
            restart: vec![false; n],
            next_full,
        })
    }

    /// Ends each game as soon as its position is inside `tablebase` (after a move, with both
    /// hands empty and few enough pieces), with the tables' exact result as the value target of
    /// its positions and in the game statistics (`tablebase_adjudicated` counts them).
    pub fn adjudicate_with(mut self, tablebase: SharedTablebase) -> SelfPlay {
        self.adjudicate = Some(tablebase);
        self
    }

    /// Plays one move in every game: one search over all games (full or cheap, drawn for the
    /// whole batch with probability `full_search_fraction`), records the positions, steps the
    /// env, and turns finished games into samples (see [`SelfPlay::take_samples`]).
    ///
    /// # Errors
    /// If the env rejects a searched action (a bug).
    pub fn step<E: Evaluator + ?Sized>(&mut self, evaluator: &mut E) -> Result<()> {
        let start = std::time::Instant::now();
        let result = self.play_move(evaluator);
        self.step_seconds += start.elapsed().as_secs_f64();
        result
    }

    fn play_move<E: Evaluator + ?Sized>(&mut self, evaluator: &mut E) -> Result<()> {
        let full = self.next_full;
        self.next_full = self.rng.next_f64() < self.config.full_search_fraction as f64;
        let mcts = if full { &mut self.full } else { &mut self.cheap };
        let start = std::time::Instant::now();
        mcts.search(&mut self.trees, evaluator);
        self.search_seconds += start.elapsed().as_secs_f64();
        for (i, tree) in self.trees.iter_mut().enumerate() {
            let game = tree.game();
            let policy = if full { tree.policy_target(&mcts.config) } else { Vec::new() };
            self.pending[i].push(Pending {
                position: *game.position(),
                repetitions: game.repetitions().min(255) as u8,
                policy,
                full_search: full,
                // A mean of values in [−1, 1]; a network that answered NaN leaves none.
                search_value: Some(tree.root_value().1).filter(|q| q.is_finite()).map(|q| q.clamp(-1.0, 1.0)),
            });
            let t = if (game.position().turns() as u32) < self.config.temperature_moves {
                self.config.temperature
            } else {
                self.config.final_temperature
            };
            self.actions[i] = tree.choose_action(&mcts.config, t).ok_or_else(|| {
                TrainError::Internal(format!("self-play: game {i} has no legal action but is not over"))
            })?;
        }
        self.positions += self.trees.len() as u64;
        self.env.step(&self.actions).map_err(|e| TrainError::Internal(format!("self-play: {e}")))?;
        if let Some((i, e)) = self.env.errors().next() {
            return Err(TrainError::Internal(format!(
                "self-play: the env rejected the searched action in game {i}: {e}"
            )));
        }
        let reuse = self.full.config.reuse_tree;
        let (terminated, truncated) = (self.env.terminated(), self.env.truncated());
        let mut any_restart = false;
        for (i, tree) in self.trees.iter_mut().enumerate() {
            let adjudicated = match &self.adjudicate {
                Some(tb) if !(terminated[i] || truncated[i]) => {
                    tb.probe(self.env.game(i).position()).map(|p| {
                        let me = self.env.game(i).current_player();
                        match p.wdl {
                            Wdl::Win => Outcome::Win { winner: me, reason: WinReason::TooFewPieces },
                            Wdl::Loss => {
                                Outcome::Win { winner: me.opponent(), reason: WinReason::TooFewPieces }
                            }
                            Wdl::Draw => Outcome::Draw(DrawReason::NMoveRule),
                        }
                    })
                }
                _ => None,
            };
            self.restart[i] = adjudicated.is_some();
            any_restart |= adjudicated.is_some();
            if terminated[i] || truncated[i] || adjudicated.is_some() {
                let outcome = adjudicated.unwrap_or_else(|| self.env.final_outcome(i));
                let plies = tree.game().actions().len() + 1;
                if adjudicated.is_some() {
                    // The exact result, without a reason of its own: counted apart.
                    self.stats.record_adjudicated(outcome, plies);
                } else {
                    self.stats.record(outcome, plies);
                }
                self.games += 1;
                for p in self.pending[i].drain(..) {
                    self.ready.push(Sample {
                        position: p.position,
                        repetitions: p.repetitions,
                        policy: p.policy,
                        outcome: outcome.reward(p.position.current_player()) as i8,
                        full_search: p.full_search,
                        // The tables' exact result is the one value target of an adjudicated game.
                        search_value: if adjudicated.is_some() { None } else { p.search_value },
                    });
                }
                if adjudicated.is_none() {
                    tree.reset(self.env.game(i));
                }
            } else {
                tree.advance(self.actions[i], reuse)
                    .map_err(|e| TrainError::Internal(format!("self-play tree, game {i}: {e}")))?;
            }
        }
        if any_restart {
            self.env.restart(&self.restart);
            for (i, tree) in self.trees.iter_mut().enumerate() {
                if self.restart[i] {
                    tree.reset(self.env.game(i));
                }
            }
        }
        Ok(())
    }

    /// The simulations per game of the next [`SelfPlay::step`] (full or cheap, already drawn).
    pub fn next_simulations(&self) -> u32 {
        if self.next_full { self.config.simulations } else { self.config.cheap_simulations }
    }

    /// Games played side by side.
    pub fn num_games(&self) -> usize {
        self.trees.len()
    }

    /// Samples of the games finished so far (and not yet taken).
    pub fn take_samples(&mut self) -> Vec<Sample> {
        std::mem::take(&mut self.ready)
    }

    /// Samples waiting to be taken.
    pub fn ready_len(&self) -> usize {
        self.ready.len()
    }

    /// Game results since the last call.
    pub fn take_stats(&mut self) -> GameStats {
        std::mem::take(&mut self.stats)
    }

    /// Seconds spent inside evaluator calls so far (both searches).
    pub fn network_seconds(&self) -> f64 {
        self.full.evaluator_seconds + self.cheap.evaluator_seconds
    }

    /// Network evaluations made so far (leaves of both searches).
    pub fn evaluations(&self) -> u64 {
        self.full.leaves_evaluated + self.cheap.leaves_evaluated
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluator::UniformEvaluator;

    #[test]
    fn games_finish_and_every_sample_replays() {
        let rules = Rules::standard();
        let config = SelfPlayConfig {
            parallel_games: 8,
            simulations: 8,
            cheap_simulations: 2,
            full_search_fraction: 0.5,
            opening_plies: 2,
            ..SelfPlayConfig::default()
        };
        let mut sp = SelfPlay::new(&config, &MctsConfig::default(), rules, 3).unwrap();
        let mut eval = UniformEvaluator;
        while sp.games < 10 {
            sp.step(&mut eval).unwrap();
        }
        let stats = sp.take_stats();
        assert_eq!(stats.games, sp.games);
        assert_eq!(stats.white_wins + stats.draws + stats.black_wins, stats.games);
        let samples = sp.take_samples();
        assert!(samples.len() as u64 <= sp.positions);
        // The uniform evaluator values every leaf at 0: only won or lost ends reached by the
        // searches move a root's value.
        assert!(samples.iter().any(|s| s.search_value != Some(0.0)), "no search saw a decided end");
        let (mut full, mut cheap) = (0, 0);
        for s in &samples {
            let legal = s.position.legal_actions(&rules);
            assert!(!legal.is_empty(), "a sample is a position with a move to choose");
            let q = s.search_value.expect("every position of self-play has its search's value");
            assert!((-1.0..=1.0).contains(&q), "search value {q}");
            if s.full_search {
                full += 1;
                let total: f32 = s.policy.iter().map(|p| p.1).sum();
                assert!((total - 1.0).abs() < 1e-4, "policy sums to {total}");
                assert!(s.policy.iter().all(|(a, _)| legal.has(*a)));
            } else {
                cheap += 1;
                assert!(s.policy.is_empty());
            }
            assert!((-1..=1).contains(&s.outcome));
        }
        assert!(full > 0 && cheap > 0, "{full} full, {cheap} cheap");
        // One sample per searched ply: every ply but the random opening.
        assert_eq!(samples.len() as u64, stats.plies - 2 * stats.games);
        // In a decisive game, the winner's and the loser's samples have opposite signs.
        let decisive = stats.white_wins + stats.black_wins;
        assert_eq!(decisive > 0, samples.iter().any(|s| s.outcome == 1));
        assert_eq!(decisive > 0, samples.iter().any(|s| s.outcome == -1));
    }

    #[test]
    fn games_entering_the_tables_end_with_the_exact_result() {
        let dir = tempfile::tempdir().unwrap();
        let rules = Rules::standard();
        morris_env::tablebase::build(dir.path(), 4, &rules, &|_| {}).unwrap();
        let tb = SharedTablebase::open(dir.path()).unwrap();
        let config = SelfPlayConfig {
            parallel_games: 16,
            simulations: 4,
            cheap_simulations: 2,
            opening_plies: 2,
            ..SelfPlayConfig::default()
        };
        let mcts = MctsConfig { tablebase: Some(tb.clone()), ..MctsConfig::default() };
        let mut sp = SelfPlay::new(&config, &mcts, rules, 5).unwrap().adjudicate_with(tb.clone());
        let mut eval = UniformEvaluator;
        let mut stats = GameStats::default();
        while stats.tablebase_adjudicated < 3 && sp.games < 400 {
            sp.step(&mut eval).unwrap();
            stats.merge(sp.take_stats());
        }
        assert!(stats.tablebase_adjudicated >= 3, "{stats:?}");
        assert_eq!(stats.white_wins + stats.draws + stats.black_wins, stats.games);
        // No game is played on inside the tables: no sample is a table position.
        let samples = sp.take_samples();
        assert!(samples.iter().all(|s| tb.probe(&s.position).is_none()));
        // Every env still plays a live game.
        for i in 0..16 {
            assert!(!sp.env.game(i).outcome().is_terminal());
        }
    }
}
