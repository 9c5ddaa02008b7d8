//! Gumbel AlphaZero at the root (Danihelka, Guez, Schrittwieser and Silver, "Policy improvement
//! by planning with Gumbel", ICLR 2022): Gumbel-top-k candidates, sequential halving over them,
//! and the completed-Q improved policy `softmax(logits + σ(completed Q))` as the target.
//!
//! Two choices differ from mctx: values, which are already bounded in `[-1, 1]`, are mapped to
//! `[0, 1]` by `(q + 1) / 2` rather than by min-max rescaling over the tree, so `σ` has the same
//! scale in every position; and `max N` in `σ` counts the root visits of the current search, so
//! that a reused subtree does not inflate the first phase of sequential halving.

use morris_env::Rng;

use super::config::MctsConfig;
use super::node::Node;
use super::noise;

/// The Gumbel state of one root for one search. All vectors are indexed like the root's
/// children (`[num_children]`, in action order); they keep their allocations between searches.
#[derive(Clone, Debug, Default)]
pub(super) struct GumbelRoot {
    /// Gumbel noise of each root child (0 without noise).
    gumbel: Vec<f32>,
    /// Whether each root child is a candidate (the top `m` by `g + logits`).
    considered: Vec<bool>,
    /// Visits of each root child during the current search (sequential halving counts these).
    search_visits: Vec<u32>,
    /// `[num_simulations]`: the visit count sequential halving asks for at each simulation.
    halving: Vec<u32>,
    /// Scratch for the completed Q values of the root children.
    completed_q: Vec<f32>,
}

/// The root visit count each simulation asks for under sequential halving of `m` candidates
/// with `n` simulations (as mctx `get_sequence_of_considered_visits`).
pub(super) fn halving_sequence(m: usize, n: usize) -> Vec<u32> {
    if m <= 1 {
        return (0..n as u32).collect();
    }
    let log2max = (m as f64).log2().ceil().max(1.0) as usize;
    let mut seq = Vec::with_capacity(n);
    let mut visits = vec![0u32; m];
    let mut considered = m;
    while seq.len() < n {
        let extra = (n / (log2max * considered)).max(1);
        for _ in 0..extra {
            seq.extend_from_slice(&visits[..considered]);
            for v in &mut visits[..considered] {
                *v += 1;
            }
        }
        considered = (considered / 2).max(2);
    }
    seq.truncate(n);
    seq
}

/// Completed Q of every root child, mapped to `[0, 1]`, written into `out`: the child's mean
/// value if visited, else the mixed value of the root's network value and the visited
/// children's values (weighted by prior), as mctx `_compute_mixed_value`.
fn completed_q_into(root: &Node, kids: &[Node], out: &mut Vec<f32>) {
    let mut visits = 0.0f32;
    let mut weighted = 0.0f32;
    let mut prior_mass = 0.0f32;
    for n in kids {
        if let Some(q) = n.q_for(root.to_play) {
            visits += n.visits as f32;
            weighted += n.net_prior * q;
            prior_mass += n.net_prior;
        }
    }
    let raw = root.raw_value;
    let mixed = if prior_mass > 0.0 { (raw + visits * weighted / prior_mass) / (1.0 + visits) } else { raw };
    out.clear();
    out.extend(kids.iter().map(|n| (n.q_for(root.to_play).unwrap_or(mixed) + 1.0) / 2.0));
}

fn logit(p: f32) -> f32 {
    p.max(1e-12).ln()
}

impl GumbelRoot {
    /// `σ(q) = (c_visit + max_b N(b)) · c_scale · q`, for `q` in `[0, 1]`.
    fn sigma(&self, config: &MctsConfig, q01: f32) -> f32 {
        let max_visits = self.search_visits.iter().copied().max().unwrap_or(0) as f32;
        (config.gumbel_c_visit + max_visits) * config.gumbel_c_scale * q01
    }

    /// `g + logits + σ(completed Q)` of root child `i`.
    fn score(&self, config: &MctsConfig, kids: &[Node], q: &[f32], i: usize) -> f32 {
        self.gumbel[i] + logit(kids[i].net_prior) + self.sigma(config, q[i])
    }

    /// Samples the Gumbel noise for the root's children `kids`, picks the top-`m` candidates by
    /// `g + logits`, and lays out the halving schedule for this search.
    pub(super) fn prepare(&mut self, kids: &[Node], rng: &mut Rng, config: &MctsConfig) {
        let k = kids.len();
        self.gumbel.clear();
        for _ in 0..k {
            let g = if config.gumbel_noise { noise::gumbel(rng) } else { 0.0 };
            self.gumbel.push(g);
        }
        let mut order: Vec<usize> = (0..k).collect();
        let score = |i: usize| self.gumbel[i] + logit(kids[i].net_prior);
        order.sort_by(|&a, &b| score(b).total_cmp(&score(a)));
        let m = (config.gumbel_max_considered as usize).min(k);
        self.considered.clear();
        self.considered.resize(k, false);
        for &i in &order[..m] {
            self.considered[i] = true;
        }
        self.search_visits.clear();
        self.search_visits.resize(k, 0);
        self.halving = halving_sequence(m, config.num_simulations as usize);
    }

    /// The root child (an index into `kids`) that simulation `sim` explores: among candidates
    /// whose visits this search equal the schedule's count, the best by
    /// `g + logits + σ(completed Q)`.
    pub(super) fn select(&mut self, root: &Node, kids: &[Node], config: &MctsConfig, sim: u32) -> usize {
        let want = self.halving.get(sim as usize).copied().unwrap_or(0);
        // The root keeps the buffer, so no simulation allocates.
        let mut q = std::mem::take(&mut self.completed_q);
        completed_q_into(root, kids, &mut q);
        let mut best = None;
        let mut best_score = f32::NEG_INFINITY;
        // Fall back to the least-visited candidate if none matches the schedule exactly.
        let candidates = || (0..kids.len()).filter(|&i| self.considered[i]);
        let min_visits = candidates().map(|i| self.search_visits[i]).min().unwrap_or(0);
        let target = if candidates().any(|i| self.search_visits[i] == want) { want } else { min_visits };
        for i in 0..q.len() {
            if !self.considered[i] || self.search_visits[i] != target {
                continue;
            }
            let s = self.score(config, kids, &q, i);
            if s > best_score {
                best_score = s;
                best = Some(i);
            }
        }
        self.completed_q = q;
        let i = best.unwrap_or(0);
        self.search_visits[i] += 1;
        i
    }

    /// The root child (an index into `kids`) Gumbel search plays: among the most-visited
    /// candidates, the best by `g + logits + σ(completed Q)`.
    pub(super) fn chosen(&self, root: &Node, kids: &[Node], config: &MctsConfig) -> Option<usize> {
        if self.considered.len() != kids.len() {
            // No Gumbel search ran on this root: fall back to the most visited child.
            return (0..kids.len()).max_by_key(|&i| kids[i].visits);
        }
        let mut q = Vec::new();
        completed_q_into(root, kids, &mut q);
        let candidates = || (0..kids.len()).filter(|&i| self.considered[i]);
        let top = candidates().map(|i| self.search_visits[i]).max()?;
        candidates()
            .filter(|&i| self.search_visits[i] == top)
            .max_by(|&a, &b| self.score(config, kids, &q, a).total_cmp(&self.score(config, kids, &q, b)))
    }

    /// The completed-Q improved policy `softmax(logits + σ(completed Q))` over all root
    /// children, one probability per child.
    pub(super) fn improved_policy(&self, root: &Node, kids: &[Node], config: &MctsConfig) -> Vec<f32> {
        if kids.is_empty() {
            return Vec::new();
        }
        let mut q = Vec::new();
        completed_q_into(root, kids, &mut q);
        let z: Vec<f32> =
            kids.iter().zip(&q).map(|(n, &qi)| logit(n.net_prior) + self.sigma(config, qi)).collect();
        let max = z.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let e: Vec<f32> = z.iter().map(|x| (x - max).exp()).collect();
        let total: f32 = e.iter().sum();
        e.into_iter().map(|x| x / total).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halving_sequence_matches_mctx() {
        // mctx: get_sequence_of_considered_visits(4, 10) == (0, 0, 0, 0, 1, 1, 1, 1, 2, 2)? With
        // log2(4) = 2 phases: 10 / (2 * 4) = 1 visit each, then 10 / (2 * 2) = 2 visits each of two.
        assert_eq!(halving_sequence(4, 10), vec![0, 0, 0, 0, 1, 1, 2, 2, 3, 3]);
        assert_eq!(halving_sequence(2, 4), vec![0, 0, 1, 1]);
        assert_eq!(halving_sequence(1, 3), vec![0, 1, 2]);
    }
}
