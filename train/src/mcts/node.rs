//! One search-tree node: plain data (an edge's action and prior, visit statistics, and what is
//! known about the position it leads to), with values from its own player's point of view.

use morris_env::Color;

/// What the search knows about the position a node leads to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum NodeState {
    /// Created with its parent's expansion; never evaluated.
    Unexpanded,
    /// Evaluated by the network; its children exist (one per legal action).
    Expanded,
    /// The game is over here; `raw_value` is the exact result.
    Terminal,
}

/// One node of the flat arena. Indices (`parent`, `first_child`) point into the same arena; the
/// children of a node are the `num_children` consecutive nodes from `first_child`, in increasing
/// action order. Values are sums of results from the point of view of the node's own player to
/// move.
#[derive(Clone, Copy, Debug)]
pub(super) struct Node {
    // Constant once created.
    /// Index of the parent (`NO_PARENT` at the root).
    pub parent: u32,
    /// The action on the edge into this node (an action number, `u16::MAX` at the root).
    pub action: u16,
    /// The network's prior of the edge into this node.
    pub net_prior: f32,
    // Set on first visit / expansion.
    /// The player to move here; `None` until the edge's action has been played once (after a
    /// mill the same player moves again to remove, so it cannot be told from ply parity).
    pub to_play: Option<Color>,
    /// Unexpanded, expanded or terminal.
    pub state: NodeState,
    /// Number of children (legal actions), 0 until expanded.
    pub num_children: u16,
    /// Index of the first child.
    pub first_child: u32,
    /// Evaluation at expansion, or the exact value of a terminal node (own point of view).
    pub raw_value: f32,
    // Mutable during search.
    /// Prior used by selection (the network prior, plus root noise at the root's children).
    pub prior: f32,
    /// Completed simulations through this node.
    pub visits: u32,
    /// Sum of their results, from this node's player's point of view.
    pub value_sum: f32,
}

impl Node {
    /// A fresh, unexpanded node for the edge `action` out of `parent`.
    pub(super) fn new(parent: u32, action: u16, prior: f32) -> Node {
        Node {
            parent,
            action,
            net_prior: prior,
            to_play: None,
            state: NodeState::Unexpanded,
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

    /// Mean value from the point of view of `player` (`None` if unvisited).
    pub(super) fn q_for(&self, player: Option<Color>) -> Option<f32> {
        if self.visits == 0 {
            return None;
        }
        let sign = if self.to_play == player { 1.0 } else { -1.0 };
        Some(sign * self.q())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_is_36_bytes() {
        // The memory bound of the config (`limits::SEARCH_NODES`) counts nodes of this size.
        assert_eq!(std::mem::size_of::<Node>(), 36);
    }
}
