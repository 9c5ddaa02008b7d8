//! The search tree of one game: nodes in a flat arena (indices, no boxes), children created
//! lazily from the legal mask when a node is expanded, and the game at the root as scratch.

use morris_env::{Action, Game, Rng};

use super::gumbel::GumbelRoot;
use super::node::{Node, NodeState};

/// Index of the root node.
pub(super) const ROOT: u32 = 0;
/// Parent index of the root.
pub(super) const NO_PARENT: u32 = u32::MAX;

/// The search tree of one game. The game at the root (with its full history, for the repetition
/// rule) is also the scratch board: selection plays actions on it and takes them back.
pub struct Tree {
    /// The arena, `[num_nodes]`: the root at [`ROOT`], each node's children contiguous.
    pub(super) nodes: Vec<Node>,
    /// A second arena that rerooting copies the kept subtree into (then the two swap).
    scratch: Vec<Node>,
    /// The game at the root; selection plays a path's actions on it and takes them back.
    pub(super) game: Game,
    /// Root noise, Gumbel noise and action sampling.
    pub(super) rng: Rng,
    /// `[path length]`: node indices from the root to this wave's leaf.
    pub(super) path: Vec<u32>,
    /// The Gumbel candidates and halving schedule of the current search.
    pub(super) gumbel: GumbelRoot,
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
            gumbel: GumbelRoot::default(),
        };
        // Selection plays up to a path's length of actions on this clone.
        t.game.reserve(256);
        t.reset_root();
        t
    }

    /// Empties the arena down to a fresh root for the game's position.
    fn reset_root(&mut self) {
        self.nodes.clear();
        let mut root = Node::new(NO_PARENT, u16::MAX, 1.0);
        root.to_play = Some(self.game.current_player());
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

    /// The root node.
    pub(super) fn root(&self) -> &Node {
        &self.nodes[ROOT as usize]
    }

    /// The arena indices of node `i`'s children.
    pub(super) fn children(&self, i: u32) -> std::ops::Range<usize> {
        let n = &self.nodes[i as usize];
        n.first_child as usize..n.first_child as usize + n.num_children as usize
    }

    /// The root's children, in action order.
    pub(super) fn root_children(&self) -> &[Node] {
        &self.nodes[self.children(ROOT)]
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
            .filter_map(|c| {
                let n = &self.nodes[c];
                n.q_for(self.root().to_play).map(|q| (Action(n.action), n.visits, q))
            })
            .collect()
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
        if root.state == NodeState::Terminal && root.num_children == 0 {
            // Valued exactly without expansion (a finished game, or an endgame-table position):
            // as a root it is searched afresh (a finished game is recognised again).
            root = Node::new(NO_PARENT, root.action, root.net_prior);
        }
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
}
