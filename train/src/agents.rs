//! Agents built on the search: a generic MCTS agent over any evaluator (by simulations or by
//! time, on one thread or several), the random-rollout UCT baseline, and the AlphaZero agent
//! that searches with a trained network.

use std::path::Path;
use std::time::{Duration, Instant};

use morris_env::{Action, Agent, Game};

use crate::error::Result;
use crate::evaluator::{Evaluator, RolloutEvaluator};
use crate::mcts::{Limits, Mcts, MctsConfig, ParallelSearch, Selection, Tree};
use crate::model::PolicyValueNet;
use crate::net_evaluator::NetEvaluator;
use crate::store::load_model;
use burn::prelude::Device;

/// Most simulations of one move when only a time limit is given: a bound on the tree's memory
/// (about 1 KB per simulation), reached after about 40 s at the default network's speed.
pub const TIME_ONLY_SIMULATIONS: u32 = 1_000_000;

/// How an agent spends a move: a simulation budget (in its [`MctsConfig`]), an optional time
/// budget, and how many threads search one tree with how many leaves per network call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlayBudget {
    /// Stop after this much wall-clock time per move (as well as after the simulations).
    pub time: Option<Duration>,
    /// Threads searching one tree (1: the sequential, deterministic search).
    pub threads: u32,
    /// Leaves each thread evaluates per network call, under virtual loss (1: none).
    pub batch: u32,
}

impl Default for PlayBudget {
    fn default() -> PlayBudget {
        PlayBudget { time: None, threads: 1, batch: 1 }
    }
}

impl PlayBudget {
    /// Whether this is the sequential search of one leaf at a time (deterministic for a seed
    /// when no time limit is set either).
    pub fn is_sequential(&self) -> bool {
        self.threads <= 1 && self.batch <= 1
    }
}

/// Plays the action a search chooses, keeping its tree between moves (subtree reuse).
pub struct MctsAgent<E> {
    name: String,
    evaluator: E,
    mcts: Mcts,
    /// The multi-threaded or leaf-batching search, when the budget asks for one.
    parallel: Option<ParallelSearch<E>>,
    time: Option<Duration>,
    tree: Option<Tree>,
    seed: u64,
    temperature: f32,
}

impl<E: Evaluator> MctsAgent<E> {
    /// An agent searching with `config` and `evaluator` on one thread; `temperature` 0 plays the
    /// most visited action (or, with a Gumbel root, the sequential-halving winner).
    pub fn new(name: String, evaluator: E, config: MctsConfig, seed: u64, temperature: f32) -> MctsAgent<E> {
        MctsAgent {
            name,
            evaluator,
            mcts: Mcts::new(config),
            parallel: None,
            time: None,
            tree: None,
            seed,
            temperature,
        }
    }

    /// Also stops each move's search after `time` (checked between waves).
    pub fn with_time(mut self, time: Option<Duration>) -> MctsAgent<E> {
        self.time = time;
        self
    }

    /// Searches with one thread per evaluator in `evaluators`, each evaluating up to `batch`
    /// leaves per call (see [`ParallelSearch`]).
    ///
    /// # Errors
    /// [`TrainError::Internal`](crate::TrainError::Internal) if `evaluators` is empty or the
    /// threads cannot be started.
    pub fn with_parallel(mut self, evaluators: Vec<E>, batch: usize) -> Result<MctsAgent<E>> {
        self.parallel = Some(ParallelSearch::new(self.mcts.config.clone(), evaluators, batch)?);
        Ok(self)
    }

    /// The tree of the last search, if any.
    pub fn tree(&self) -> Option<&Tree> {
        self.tree.as_ref()
    }

    /// The evaluator of the sequential search.
    pub fn evaluator_mut(&mut self) -> &mut E {
        &mut self.evaluator
    }

    /// Brings the tree to `game` (keeping the subtree below the moves played since, if the
    /// settings reuse trees) and searches it within `limits`. Returns the simulations added;
    /// calling it again continues the same search.
    pub fn search(&mut self, game: &Game, limits: &Limits) -> u32
    where
        E: Send + Sync,
    {
        let reuse = self.mcts.config.reuse_tree;
        let tree = match &mut self.tree {
            Some(t) => {
                t.sync(game, reuse);
                t
            }
            None => self.tree.insert(Tree::new(game, self.seed)),
        };
        match &mut self.parallel {
            Some(p) => p.search(tree, limits),
            None => self.mcts.search_within(std::slice::from_mut(tree), &mut self.evaluator, limits),
        }
    }

    /// The action the last search chooses (see [`Tree::choose_action`]); `None` before any
    /// search or when the game is over.
    pub fn best_action(&mut self) -> Option<Action> {
        let config = &self.mcts.config;
        let tree = self.tree.as_mut()?;
        let choice = tree.choose_action(config, self.temperature);
        // With tables for the whole placement phase, the search's choice is played only if it
        // keeps the exact value (else a move that does).
        match &config.tablebase {
            Some(tb) => {
                let pos = tree.game().position();
                let mut rng =
                    morris_env::Rng::seed_from_u64(morris_env::Rng::derive(self.seed, 0x7b, pos.hash()));
                tb.keep_in_placement(pos, choice, &mut rng).or(choice)
            }
            None => choice,
        }
    }
}

impl<E: Evaluator + Sync> Agent for MctsAgent<E> {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn choose(&mut self, game: &Game) -> Option<Action> {
        if game.outcome().is_terminal() {
            return None;
        }
        let deadline = self.time.map(|t| Instant::now() + t);
        let limits = Limits { simulations: self.mcts.config.num_simulations, deadline, stop: None };
        self.search(game, &limits);
        self.best_action()
    }

    fn reset(&mut self) {
        self.tree = None;
    }
}

/// The rollout baseline: UCT (`uct_c = 2`) with uniformly random playouts, as OpenSpiel's `MCTSBot`.
pub type RolloutMcts = MctsAgent<RolloutEvaluator>;

/// A rollout-MCTS agent with `sims` simulations per move and one playout (at most 1000 plies) per leaf.
pub fn rollout_mcts(sims: u32, seed: u64) -> RolloutMcts {
    let config = MctsConfig {
        num_simulations: sims.max(1),
        selection: Selection::Uct,
        uct_c: 2.0,
        ..MctsConfig::default()
    };
    MctsAgent::new(format!("mcts:sims={sims}"), RolloutEvaluator::new(seed, 1, 1000), config, seed, 0.0)
}

/// The AlphaZero agent: a trained network guiding PUCT search, temperature 0.
pub type AzAgent = MctsAgent<NetEvaluator>;

/// Loads the model in `dir` (see [`load_model`]) on the CPU and builds an agent with `sims`
/// simulations per move, on one thread.
///
/// # Errors
/// The model directory's errors (missing or corrupt files, named).
pub fn az_agent(dir: &Path, sims: u32, seed: u64) -> Result<AzAgent> {
    let device = Device::flex();
    let (model, _config) = load_model(dir, &device)?;
    let search = MctsConfig { num_simulations: sims.max(1), ..MctsConfig::default() };
    let name = format!("az:model={},sims={sims}", dir.display());
    az_agent_from_model(model, device, name, search, PlayBudget::default(), seed)
}

/// An AlphaZero agent from an already loaded model (cheap: the weights are shared), searching
/// with `search` within `budget` (root noise is switched off: the agent plays, it does not
/// explore). With more than one thread or leaf, the search runs on its own pool of `threads`
/// threads, each with its own evaluator (sharing the weights).
///
/// # Errors
/// [`TrainError::Internal`](crate::TrainError::Internal) if the search threads cannot be started.
pub fn az_agent_from_model(
    model: PolicyValueNet,
    device: Device,
    name: String,
    search: MctsConfig,
    budget: PlayBudget,
    seed: u64,
) -> Result<AzAgent> {
    let evaluator = NetEvaluator::new(model, device);
    let config = MctsConfig { root_noise: false, ..search };
    let agent = MctsAgent::new(name, evaluator.clone(), config, seed, 0.0).with_time(budget.time);
    if budget.is_sequential() {
        return Ok(agent);
    }
    let evaluators = (0..budget.threads.max(1)).map(|_| evaluator.clone()).collect();
    agent.with_parallel(evaluators, budget.batch as usize)
}
