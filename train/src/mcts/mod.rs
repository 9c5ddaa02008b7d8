//! Batched Monte Carlo tree search: one `search` call advances B independent trees in waves;
//! each wave selects one leaf per tree, evaluates all leaves in one evaluator call, then expands
//! and backs up. PUCT or UCT selection, first-play urgency, Dirichlet root noise, Gumbel root
//! selection with sequential halving, and subtree reuse.
//!
//! The parts, in dependency order: `config` (settings), `node` (one node, plain
//! data), `noise` (Dirichlet and Gumbel samples), `gumbel` (the Gumbel root state and sequential
//! halving), `tree` (the arena of one game, rerooting), `policy` (training target and action
//! choice), and this file (the batched select–evaluate–expand–backup loop).
//!
//! # Value convention
//!
//! Every node stores values from the point of view of its own player to move, and a result is
//! backed up to each node on the path with the sign given by comparing that node's player with
//! the leaf's player. Ply parity is never used: after a mill, the same player moves again to
//! remove, and the sign does not flip across that edge.

mod config;
mod gumbel;
mod limits;
mod node;
mod noise;
mod parallel;
mod policy;
mod tree;

use morris_env::tablebase::Tablebase;
use morris_env::{ActionMask, NUM_ACTIONS};
use rayon::prelude::*;

pub use config::{MctsConfig, RootSelection, Selection};
pub use limits::Limits;
pub use parallel::ParallelSearch;
use tree::ROOT;
pub use tree::Tree;

use crate::evaluator::{EvalBatch, Evaluator, Leaf};
use node::{Node, NodeState};

/// What one tree's selection reached in a wave.
#[derive(Clone, Copy, Debug)]
enum Reached {
    /// A node to evaluate, with its legal actions.
    Leaf(Leaf, ActionMask),
    /// A finished game, with its exact value for the leaf's player to move.
    Terminal(f32),
}

/// The searcher: settings plus reusable batch buffers (nothing is allocated per simulation once
/// they have grown).
pub struct Mcts {
    /// The settings.
    pub config: MctsConfig,
    /// Use rayon for selection and backup when at least this many trees are searched together.
    pub parallel_threshold: usize,
    reached: Vec<Option<Reached>>,
    leaves: Vec<Leaf>,
    masks: Vec<ActionMask>,
    slots: Vec<Option<usize>>,
    out: EvalBatch,
    /// Evaluator calls made so far (one per wave with something to evaluate).
    pub evaluator_calls: u64,
    /// Leaves evaluated so far.
    pub leaves_evaluated: u64,
    /// Seconds spent inside evaluator calls so far (the rest of a search is tree work).
    pub evaluator_seconds: f64,
}

impl Mcts {
    /// A searcher with these settings.
    pub fn new(config: MctsConfig) -> Mcts {
        Mcts {
            config,
            parallel_threshold: 16,
            reached: Vec::new(),
            leaves: Vec::new(),
            masks: Vec::new(),
            slots: Vec::new(),
            out: EvalBatch::default(),
            evaluator_calls: 0,
            leaves_evaluated: 0,
            evaluator_seconds: 0.0,
        }
    }

    /// Runs `num_simulations` simulations on every tree, evaluating the leaves of all trees
    /// together in one evaluator call per wave. Trees whose root game is over are left alone.
    /// All trees must play under the same rules (those of the first tree are passed to the
    /// evaluator).
    pub fn search<E: Evaluator + ?Sized>(&mut self, trees: &mut [Tree], evaluator: &mut E) {
        let limits = Limits::simulations(self.config.num_simulations);
        self.search_within(trees, evaluator, &limits);
    }

    /// As [`Mcts::search`], but within `limits` (simulations, deadline, stop flag; checked
    /// between waves, after the first). Returns the number of waves run: the simulations added
    /// to each live tree. Calling it again on the same trees continues the search (with a PUCT
    /// root; a Gumbel root restarts its halving schedule at each call).
    pub fn search_within<E: Evaluator + ?Sized>(
        &mut self,
        trees: &mut [Tree],
        evaluator: &mut E,
        limits: &Limits,
    ) -> u32 {
        let n = trees.len();
        self.reached.clear();
        self.reached.resize(n, None);
        self.slots.clear();
        self.slots.resize(n, None);
        // Roots that were never evaluated are expanded first (this is not a simulation).
        let config = self.config.clone();
        self.for_trees(trees, |t, r| {
            *r = (t.root().state == NodeState::Unexpanded).then(|| select_root(t)).flatten()
        });
        self.evaluate_and_backup(trees, evaluator);
        self.for_trees(trees, |t, _| prepare_root(t, &config));
        let mut sims = 0;
        while sims < limits.simulations && !(sims > 0 && limits.interrupted()) {
            self.for_trees(trees, |t, r| *r = select(t, &config, sims));
            self.evaluate_and_backup(trees, evaluator);
            sims += 1;
        }
        sims
    }

    /// Runs `f` on every tree with its `reached` slot, in parallel when there are many trees.
    fn for_trees<F>(&mut self, trees: &mut [Tree], f: F)
    where
        F: Fn(&mut Tree, &mut Option<Reached>) + Sync + Send,
    {
        if trees.len() >= self.parallel_threshold {
            trees.par_iter_mut().zip(self.reached.par_iter_mut()).for_each(|(t, r)| f(t, r));
        } else {
            trees.iter_mut().zip(self.reached.iter_mut()).for_each(|(t, r)| f(t, r));
        }
    }

    /// Evaluates the leaves in `reached` in one call, then expands and backs up every tree.
    fn evaluate_and_backup<E: Evaluator + ?Sized>(&mut self, trees: &mut [Tree], evaluator: &mut E) {
        self.leaves.clear();
        self.masks.clear();
        for (i, r) in self.reached.iter().enumerate() {
            self.slots[i] = None;
            if let Some(Reached::Leaf(leaf, mask)) = r {
                self.slots[i] = Some(self.leaves.len());
                self.leaves.push(*leaf);
                self.masks.push(*mask);
            }
        }
        if let Some(first) = trees.first()
            && !self.leaves.is_empty()
        {
            let rules = *first.game.rules();
            let t = std::time::Instant::now();
            evaluator.evaluate(&rules, &self.leaves, &self.masks, &mut self.out);
            self.evaluator_seconds += t.elapsed().as_secs_f64();
            self.evaluator_calls += 1;
            self.leaves_evaluated += self.leaves.len() as u64;
        }
        let out = &self.out;
        let masks = &self.masks;
        let work = |((t, r), slot): ((&mut Tree, &mut Option<Reached>), &Option<usize>)| match r.take() {
            Some(Reached::Leaf(..)) => {
                if let Some(j) = *slot {
                    let row = &out.priors[j * NUM_ACTIONS..(j + 1) * NUM_ACTIONS];
                    expand(t, &masks[j], row, out.values[j]);
                    backup(t, out.values[j]);
                }
            }
            Some(Reached::Terminal(v)) => backup(t, v),
            None => {}
        };
        if trees.len() >= self.parallel_threshold {
            trees.par_iter_mut().zip(self.reached.par_iter_mut()).zip(self.slots.par_iter()).for_each(work);
        } else {
            trees.iter_mut().zip(self.reached.iter_mut()).zip(self.slots.iter()).for_each(work);
        }
    }
}

/// The root as a leaf to evaluate, or `None` if the game is over.
fn select_root(t: &mut Tree) -> Option<Reached> {
    t.path.clear();
    t.path.push(ROOT);
    reach(t, ROOT, None)
}

/// What node `i` (just reached, unexpanded) needs: evaluation, or its exact value (a finished
/// game, or a position inside the endgame tables `tb`; the root is always searched).
fn reach(t: &mut Tree, i: u32, tb: Option<&Tablebase>) -> Option<Reached> {
    let node = &mut t.nodes[i as usize];
    let outcome = t.game.outcome();
    let me = t.game.current_player();
    node.to_play = Some(me);
    if outcome.is_terminal() {
        node.state = NodeState::Terminal;
        node.raw_value = outcome.reward(me);
        return Some(Reached::Terminal(node.raw_value));
    }
    if i != ROOT
        && let Some(p) = tb.and_then(|tb| tb.probe(t.game.position()))
    {
        node.state = NodeState::Terminal;
        node.raw_value = p.wdl.score();
        return Some(Reached::Terminal(node.raw_value));
    }
    let leaf = Leaf { position: *t.game.position(), repetitions: t.game.repetitions() };
    Some(Reached::Leaf(leaf, t.game.legal_actions()))
}

/// Root noise (PUCT) or the Gumbel candidates and halving schedule, once per search.
fn prepare_root(t: &mut Tree, config: &MctsConfig) {
    if t.root().state != NodeState::Expanded {
        return;
    }
    match config.root_selection {
        RootSelection::Puct => {
            let kids = t.children(ROOT);
            for c in kids.clone() {
                t.nodes[c].prior = t.nodes[c].net_prior;
            }
            if config.root_noise && kids.len() > 1 {
                let noise = noise::dirichlet(&mut t.rng, config.dirichlet_alpha, kids.len());
                let eps = config.dirichlet_fraction;
                for (c, eta) in kids.zip(noise) {
                    let n = &mut t.nodes[c];
                    n.prior = (1.0 - eps) * n.net_prior + eps * eta;
                }
            }
        }
        RootSelection::Gumbel => {
            let kids = t.children(ROOT);
            t.gumbel.prepare(&t.nodes[kids], &mut t.rng, config);
        }
    }
}

/// Descends from the root to a leaf, playing the path's actions on the tree's game.
fn select(t: &mut Tree, config: &MctsConfig, sim: u32) -> Option<Reached> {
    t.path.clear();
    t.path.push(ROOT);
    let mut i = ROOT;
    loop {
        let node = t.nodes[i as usize];
        match node.state {
            NodeState::Terminal => return Some(Reached::Terminal(node.raw_value)),
            NodeState::Unexpanded => return reach(t, i, config.tablebase.as_deref()),
            NodeState::Expanded => {}
        }
        if node.num_children == 0 {
            return Some(Reached::Terminal(node.raw_value));
        }
        let c = if i == ROOT && config.root_selection == RootSelection::Gumbel {
            let kids = t.children(ROOT);
            kids.start + t.gumbel.select(&t.nodes[ROOT as usize], &t.nodes[kids.clone()], config, sim)
        } else {
            select_child(t, i, config)
        };
        let action = morris_env::Action(t.nodes[c].action);
        t.game.apply_unchecked(action);
        if t.nodes[c].to_play.is_none() {
            t.nodes[c].to_play = Some(t.game.current_player());
        }
        t.path.push(c as u32);
        i = c as u32;
    }
}

/// The child of `i` with the best PUCT (or UCT) score.
fn select_child(t: &Tree, i: u32, config: &MctsConfig) -> usize {
    let parent = &t.nodes[i as usize];
    let kids = t.children(i);
    let n = parent.visits.max(1) as f32;
    let fpu_value = parent.q() - config.fpu_reduction;
    let value = |c: &Node| {
        if c.visits == 0 {
            fpu_value
        } else if c.to_play == parent.to_play {
            c.q()
        } else {
            -c.q()
        }
    };
    let mut best = kids.start;
    let mut best_score = f32::NEG_INFINITY;
    match config.selection {
        Selection::Puct => {
            let c_puct = config.pb_c_init + ((n + config.pb_c_base + 1.0) / config.pb_c_base).ln();
            let sqrt_n = n.sqrt();
            for k in kids {
                let c = &t.nodes[k];
                let score = value(c) + c_puct * c.prior * sqrt_n / (1.0 + c.visits as f32);
                if score > best_score {
                    best_score = score;
                    best = k;
                }
            }
        }
        Selection::Uct => {
            let ln_n = n.ln();
            for k in kids {
                let c = &t.nodes[k];
                if c.visits == 0 {
                    return k;
                }
                let score = value(c) + config.uct_c * (ln_n / c.visits as f32).sqrt();
                if score > best_score {
                    best_score = score;
                    best = k;
                }
            }
        }
    }
    best
}

/// Creates the children of the path's leaf from its legal mask and priors.
fn expand(t: &mut Tree, mask: &ActionMask, priors: &[f32], value: f32) {
    if let Some(&leaf) = t.path.last() {
        expand_node(&mut t.nodes, leaf, mask, priors, value);
    }
}

/// Creates the children of node `leaf` from its legal mask and priors, and records its value.
fn expand_node(nodes: &mut Vec<Node>, leaf: u32, mask: &ActionMask, priors: &[f32], value: f32) {
    let first = nodes.len() as u32;
    let mut count = 0u16;
    for a in mask.iter() {
        nodes.push(Node::new(leaf, a.0, priors[a.index()]));
        count += 1;
    }
    let node = &mut nodes[leaf as usize];
    node.first_child = first;
    node.num_children = count;
    node.state = NodeState::Expanded;
    node.raw_value = value;
}

/// Adds the leaf's value to every node on the path, signed for each node's player to move,
/// and takes the path's actions back on the game.
fn backup(t: &mut Tree, value: f32) {
    backup_path(&mut t.nodes, &t.path, value);
    take_back_path(t);
}

/// Takes the actions of the selected path back on the tree's game (back to the root).
fn take_back_path(t: &mut Tree) {
    for _ in 1..t.path.len() {
        t.game.undo();
    }
}

/// Adds `value` (for the player to move at the path's last node) to every node of `path`,
/// signed for each node's player to move.
fn backup_path(nodes: &mut [Node], path: &[u32], value: f32) {
    let Some(&leaf) = path.last() else { return };
    let leaf_player = nodes[leaf as usize].to_play;
    for &i in path {
        let node = &mut nodes[i as usize];
        node.visits += 1;
        node.value_sum += if node.to_play == leaf_player { value } else { -value };
    }
}
