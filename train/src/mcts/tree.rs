//! The search tree of one game: nodes in a flat arena (indices, no boxes), children created
//! lazily from the legal mask when a node is expanded, and the game at the root as scratch.

use morris_env::{Action, Color, Game, Rng};

use super::config::{MctsConfig, RootSelection};

/// Index of the root node.
pub const ROOT: u32 = 0;
/// Parent index of the root.
pub const NO_PARENT: u32 = u32::MAX;

pub(super) const UNEXPANDED: u8 = 0;
pub(super) const EXPANDED: u8 = 1;
pub(super) const TERMINAL: u8 = 2;
/// `to_play` of a child that has never been reached (its player is known once its action is played).
pub(super) const UNKNOWN_PLAYER: u8 = 2;

/// One node. Values are sums of results from the point of view of the node's own player to move.
#[derive(Clone, Copy, Debug)]
pub(super) struct Node {
    // Constant once created.
    pub parent: u32,
    pub action: u16,
    /// The network's prior of the edge into this node.
    pub net_prior: f32,
    // Set on first visit / expansion.
    pub to_play: u8,
    pub state: u8,
    pub num_children: u16,
    pub first_child: u32,
    /// Evaluation at expansion, or the exact value of a terminal node (own point of view).
    pub raw_value: f32,
    // Mutable during search.
    /// Prior used by selection (the network prior, plus root noise at the root's children).
    pub prior: f32,
    pub visits: u32,
    pub value_sum: f32,
}

impl Node {
    pub(super) fn new(parent: u32, action: u16, prior: f32) -> Node {
        Node {
            parent,
            action,
            net_prior: prior,
            to_play: UNKNOWN_PLAYER,
            state: UNEXPANDED,
            num_children: 0,
            first_child: 0,
            raw_value: 0.0,
            prior,
            visits: 0,
            value_sum: 0.0,
        }
    }

    /// Mean value from this node's own point of view.
    pub(super) fn q(&self) -> f32 {
        if self.visits == 0 { 0.0 } else { self.value_sum / self.visits as f32 }
    }
}

/// The search tree of one game. The game at the root (with its full history, for the repetition
/// rule) is also the scratch board: selection plays actions on it and takes them back.
pub struct Tree {
    pub(super) nodes: Vec<Node>,
    scratch: Vec<Node>,
    pub(super) game: Game,
    pub(super) rng: Rng,
    /// Node indices from the root to this wave's leaf.
    pub(super) path: Vec<u32>,
    /// Gumbel noise of each root child (0 without noise), in child order.
    pub(super) gumbel: Vec<f32>,
    /// Whether each root child is a Gumbel candidate.
    pub(super) considered: Vec<bool>,
    /// Visits of each root child during the current search (sequential halving counts these).
    pub(super) search_visits: Vec<u32>,
    /// The root visit required by sequential halving at each simulation.
    pub(super) halving: Vec<u32>,
    /// Scratch for the completed Q values of the root children.
    pub(super) completed_q: Vec<f32>,
}

impl Tree {
    /// A tree for the game's current position; `seed` drives root noise and sampling.
    pub fn new(game: &Game, seed: u64) -> Tree {
        let mut t = Tree {
            nodes: Vec::with_capacity(4096),
            scratch: Vec::new(),
            game: game.clone(),
            rng: Rng::seed_from_u64(seed),
            path: Vec::with_capacity(64),
            gumbel: Vec::new(),
            considered: Vec::new(),
            search_visits: Vec::new(),
            halving: Vec::new(),
            completed_q: Vec::new(),
        };
        // Selection plays up to a path's length of actions on this clone.
        t.game.reserve(256);
        t.reset_root();
        t
    }

    fn reset_root(&mut self) {
        self.nodes.clear();
        let mut root = Node::new(NO_PARENT, u16::MAX, 1.0);
        root.to_play = self.game.current_player() as u8;
        self.nodes.push(root);
    }

    /// Starts over from `game` (dropping the tree).
    pub fn reset(&mut self, game: &Game) {
        self.game.clone_from(game);
        self.game.reserve(256);
        self.reset_root();
    }

    /// The game at the root.
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// Number of nodes in the arena.
    pub fn num_nodes(&self) -> usize {
        self.nodes.len()
    }

    pub(super) fn root(&self) -> &Node {
        &self.nodes[ROOT as usize]
    }

    pub(super) fn children(&self, i: u32) -> std::ops::Range<usize> {
        let n = &self.nodes[i as usize];
        n.first_child as usize..n.first_child as usize + n.num_children as usize
    }

    /// Root visits and mean value for the player to move at the root.
    pub fn root_value(&self) -> (u32, f32) {
        let r = self.root();
        (r.visits, r.q())
    }

    /// `(action, visits)` of each root child, in increasing action order.
    pub fn visit_counts(&self) -> Vec<(Action, u32)> {
        self.children(ROOT).map(|c| (Action(self.nodes[c].action), self.nodes[c].visits)).collect()
    }

    /// `(action, visits, mean value from the root player's point of view)` of each visited root child.
    pub fn child_values(&self) -> Vec<(Action, u32, f32)> {
        self.children(ROOT)
            .filter_map(|c| self.child_q(c).map(|q| (Action(self.nodes[c].action), self.nodes[c].visits, q)))
            .collect()
    }

    /// `(action, network prior)` of each root child.
    pub fn priors(&self) -> Vec<(Action, f32)> {
        self.children(ROOT).map(|c| (Action(self.nodes[c].action), self.nodes[c].net_prior)).collect()
    }

    /// Mean value of a root child from the root player's point of view (`None` if unvisited).
    pub(super) fn child_q(&self, c: usize) -> Option<f32> {
        let n = &self.nodes[c];
        if n.visits == 0 {
            return None;
        }
        let sign = if n.to_play == self.root().to_play { 1.0 } else { -1.0 };
        Some(sign * n.q())
    }

    /// The training target: normalised root visit counts (PUCT), or the completed-Q improved
    /// policy (Gumbel). Sparse `(action, probability)` pairs over the legal actions.
    pub fn policy_target(&self, config: &MctsConfig) -> Vec<(Action, f32)> {
        match config.root_selection {
            RootSelection::Gumbel => super::gumbel::improved_policy(self, config),
            RootSelection::Puct => {
                let total: u32 = self.children(ROOT).map(|c| self.nodes[c].visits).sum();
                self.children(ROOT)
                    .map(|c| {
                        let n = &self.nodes[c];
                        (
                            Action(n.action),
                            if total == 0 { n.net_prior } else { n.visits as f32 / total as f32 },
                        )
                    })
                    .collect()
            }
        }
    }

    /// Chooses the action to play. Gumbel: the sequential-halving winner. PUCT: with
    /// `temperature == 0` the most visited action (ties to the higher prior), otherwise sampled
    /// with probability proportional to `visits^(1/temperature)`. `None` if the root has no children.
    pub fn choose_action(&mut self, config: &MctsConfig, temperature: f32) -> Option<Action> {
        if self.root().num_children == 0 {
            return None;
        }
        if config.root_selection == RootSelection::Gumbel && temperature <= 0.0 {
            return super::gumbel::chosen_action(self, config);
        }
        let kids = self.children(ROOT);
        if temperature <= 0.0 {
            let best = kids.max_by(|&a, &b| {
                let (na, nb) = (&self.nodes[a], &self.nodes[b]);
                na.visits.cmp(&nb.visits).then(na.net_prior.total_cmp(&nb.net_prior))
            })?;
            return Some(Action(self.nodes[best].action));
        }
        let max_visits = kids.clone().map(|c| self.nodes[c].visits).max().unwrap_or(0).max(1) as f32;
        let weights: Vec<f32> = kids
            .clone()
            .map(|c| (self.nodes[c].visits as f32 / max_visits).powf(1.0 / temperature))
            .collect();
        let total: f32 = weights.iter().sum();
        if total <= 0.0 {
            return Some(Action(self.nodes[kids.start].action));
        }
        let mut x = self.rng.next_f64() as f32 * total;
        for (c, w) in kids.clone().zip(&weights) {
            if x < *w {
                return Some(Action(self.nodes[c].action));
            }
            x -= w;
        }
        Some(Action(self.nodes[kids.end - 1].action))
    }

    /// Plays `action` at the root. With `reuse`, the subtree below it becomes the new tree
    /// (copied to the front of the arena); otherwise the tree restarts from the new position.
    ///
    /// # Errors
    /// If the action is illegal in the root position; the tree is unchanged then.
    pub fn advance(&mut self, action: Action, reuse: bool) -> Result<(), morris_env::ActionError> {
        self.game.apply(action)?;
        let child = self.children(ROOT).find(|&c| self.nodes[c].action == action.0);
        match child {
            Some(c) if reuse && self.nodes[c].visits > 0 => self.reroot(c as u32),
            _ => self.reset_root(),
        }
        Ok(())
    }

    /// Brings the tree to `game`, which must extend the tree's game by some actions (as when the
    /// opponent has moved); otherwise the tree restarts from `game`.
    pub fn sync(&mut self, game: &Game, reuse: bool) {
        let mine = self.game.actions().len();
        let theirs = game.actions();
        let same_start = self.game.history().first().or(Some(self.game.position()))
            == game.history().first().or(Some(game.position()));
        if same_start && theirs.len() >= mine && theirs[..mine] == *self.game.actions() {
            for &a in &theirs[mine..] {
                if self.advance(a, reuse).is_err() {
                    self.reset(game);
                    return;
                }
            }
            if self.game.position() == game.position() {
                return;
            }
        }
        self.reset(game);
    }

    /// Makes node `c` the root: copies its subtree breadth-first into the scratch arena, which
    /// then becomes the arena (both keep their allocations).
    fn reroot(&mut self, c: u32) {
        self.scratch.clear();
        let mut root = self.nodes[c as usize];
        root.parent = NO_PARENT;
        root.prior = root.net_prior;
        self.scratch.push(root);
        let mut next = 0;
        while next < self.scratch.len() {
            let old = self.scratch[next];
            if old.num_children > 0 {
                let first = self.scratch.len() as u32;
                for k in 0..old.num_children as usize {
                    let mut child = self.nodes[old.first_child as usize + k];
                    child.parent = next as u32;
                    child.prior = child.net_prior;
                    self.scratch.push(child);
                }
                self.scratch[next].first_child = first;
            }
            next += 1;
        }
        std::mem::swap(&mut self.nodes, &mut self.scratch);
    }

    /// The player to move at the root.
    pub fn to_play(&self) -> Color {
        self.game.current_player()
    }
}
