//! Agents built on the search: a generic MCTS agent over any evaluator, the random-rollout UCT
//! baseline, and the AlphaZero agent that searches with a trained network.

use std::path::Path;

use morris_env::{Action, Agent, Game};

use crate::error::Result;
use crate::evaluator::{Evaluator, RolloutEvaluator};
use crate::mcts::{Mcts, MctsConfig, Selection, Tree};
use crate::model::PolicyValueNet;
use crate::net_evaluator::NetEvaluator;
use crate::store::load_model;
use burn::prelude::Device;

/// Plays the action a search chooses, keeping its tree between moves (subtree reuse).
pub struct MctsAgent<E> {
    name: String,
    evaluator: E,
    mcts: Mcts,
    tree: Option<Tree>,
    seed: u64,
    temperature: f32,
}

impl<E: Evaluator> MctsAgent<E> {
    /// An agent searching with `config` and `evaluator`; `temperature` 0 plays the most visited
    /// action (or, with a Gumbel root, the sequential-halving winner).
    pub fn new(name: String, evaluator: E, config: MctsConfig, seed: u64, temperature: f32) -> MctsAgent<E> {
        MctsAgent { name, evaluator, mcts: Mcts::new(config), tree: None, seed, temperature }
    }

    /// The tree of the last search, if any.
    pub fn tree(&self) -> Option<&Tree> {
        self.tree.as_ref()
    }
}

impl<E: Evaluator> Agent for MctsAgent<E> {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn choose(&mut self, game: &Game) -> Option<Action> {
        if game.outcome().is_terminal() {
            return None;
        }
        let reuse = self.mcts.config.reuse_tree;
        let tree = match &mut self.tree {
            Some(t) => {
                t.sync(game, reuse);
                t
            }
            None => self.tree.insert(Tree::new(game, self.seed)),
        };
        self.mcts.search(std::slice::from_mut(tree), &mut self.evaluator);
        tree.choose_action(&self.mcts.config, self.temperature)
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
/// simulations per move.
///
/// # Errors
/// The model directory's errors (missing or corrupt files, named).
pub fn az_agent(dir: &Path, sims: u32, seed: u64) -> Result<AzAgent> {
    let device = Device::flex();
    let (model, _config) = load_model(dir, &device)?;
    let search = MctsConfig { num_simulations: sims.max(1), ..MctsConfig::default() };
    Ok(az_agent_from_model(model, device, format!("az:model={},sims={sims}", dir.display()), search, seed))
}

/// An AlphaZero agent from an already loaded model (cheap: the weights are shared), searching
/// with `search` (root noise is switched off: the agent plays, it does not explore).
pub fn az_agent_from_model(
    model: PolicyValueNet,
    device: Device,
    name: String,
    search: MctsConfig,
    seed: u64,
) -> AzAgent {
    let evaluator = NetEvaluator::new(model, device);
    let config = MctsConfig { root_noise: false, ..search };
    MctsAgent::new(name, evaluator, config, seed, 0.0)
}
