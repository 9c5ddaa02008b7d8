//! What a finished search yields: the policy target for training, the action to play, and the
//! expected line with the depth statistics that progress reports show.

use morris_env::Action;

use super::config::{MctsConfig, RootSelection};
use super::tree::{ROOT, Tree};

impl Tree {
    /// The training target: normalised root visit counts (PUCT), or the completed-Q improved
    /// policy (Gumbel). Sparse `(action, probability)` pairs over the legal actions.
    pub fn policy_target(&self, config: &MctsConfig) -> Vec<(Action, f32)> {
        let kids = self.root_children();
        match config.root_selection {
            RootSelection::Gumbel => {
                let policy = self.gumbel.improved_policy(self.root(), kids, config);
                kids.iter().zip(policy).map(|(n, p)| (Action(n.action), p)).collect()
            }
            RootSelection::Puct => {
                let total: u32 = kids.iter().map(|n| n.visits).sum();
                kids.iter()
                    .map(|n| {
                        let p = if total == 0 { n.net_prior } else { n.visits as f32 / total as f32 };
                        (Action(n.action), p)
                    })
                    .collect()
            }
        }
    }

    /// Chooses the action to play. Gumbel: the sequential-halving winner. PUCT: with
    /// `temperature == 0` the most visited action (ties to the higher prior), otherwise sampled
    /// with probability proportional to `visits^(1/temperature)`. `None` if the root has no children.
    /// With endgame tables and a root inside them, a move that keeps the root's exact value
    /// (the search's choice if it does; see [`Tablebase::choose`](morris_env::tablebase::Tablebase::choose)).
    pub fn choose_action(&mut self, config: &MctsConfig, temperature: f32) -> Option<Action> {
        let choice = self.search_choice(config, temperature);
        match &config.tablebase {
            Some(tb) if choice.is_some() => {
                let rng = &mut self.rng;
                tb.choose(self.game.position(), choice, |n| rng.below(n)).or(choice)
            }
            _ => choice,
        }
    }

    fn search_choice(&mut self, config: &MctsConfig, temperature: f32) -> Option<Action> {
        if self.root().num_children == 0 {
            return None;
        }
        if config.root_selection == RootSelection::Gumbel && temperature <= 0.0 {
            let kids = self.root_children();
            return self.gumbel.chosen(self.root(), kids, config).map(|i| Action(kids[i].action));
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

    /// The expected line: from the root, the most visited child of each node while it has
    /// visits, at most `max` actions.
    pub fn principal_variation(&self, max: usize) -> Vec<Action> {
        let mut line = Vec::new();
        let mut i = ROOT;
        while line.len() < max {
            let best = self.children(i).filter(|&c| self.nodes[c].visits > 0).max_by(|&a, &b| {
                let (na, nb) = (&self.nodes[a], &self.nodes[b]);
                na.visits.cmp(&nb.visits).then(na.net_prior.total_cmp(&nb.net_prior))
            });
            let Some(c) = best else { break };
            line.push(Action(self.nodes[c].action));
            i = c as u32;
        }
        line
    }

    /// `(mean, max)` depth of the simulations that reached the tree's nodes: the mean is the
    /// visits of all non-root nodes over the root's (each simulation visits one node per ply of
    /// its path), the max the deepest visited node.
    pub fn depth_stats(&self) -> (f32, u32) {
        let root_visits = self.root().visits.max(1);
        let mut depth = vec![0u32; self.nodes.len()];
        let (mut sum, mut max) = (0u64, 0u32);
        for i in 1..self.nodes.len() {
            let n = &self.nodes[i];
            // Children are always created after their parent, so its depth is known.
            depth[i] = depth[n.parent as usize] + 1;
            if n.visits > 0 {
                sum += n.visits as u64;
                max = max.max(depth[i]);
            }
        }
        (sum as f32 / root_visits as f32, max)
    }
}
