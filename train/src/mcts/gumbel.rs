//! Gumbel AlphaZero at the root (Danihelka, Guez, Schrittwieser and Silver, "Policy improvement
//! by planning with Gumbel", ICLR 2022): Gumbel-top-k candidates, sequential halving over them,
//! and the completed-Q improved policy `softmax(logits + σ(completed Q))` as the target.
//!
//! Two choices differ from mctx: values, which are already bounded in `[-1, 1]`, are mapped to
//! `[0, 1]` by `(q + 1) / 2` rather than by min-max rescaling over the tree, so `σ` has the same
//! scale in every position; and `max N` in `σ` counts the root visits of the current search, so
//! that a reused subtree does not inflate the first phase of sequential halving.

use morris_env::Action;

use super::config::MctsConfig;
use super::noise;
use super::tree::{ROOT, Tree};

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

/// `σ(q) = (c_visit + max_b N(b)) · c_scale · q`, for `q` in `[0, 1]`.
fn sigma(t: &Tree, config: &MctsConfig, q01: f32) -> f32 {
    let max_visits = t.search_visits.iter().copied().max().unwrap_or(0) as f32;
    (config.gumbel_c_visit + max_visits) * config.gumbel_c_scale * q01
}

/// Completed Q of every root child, mapped to `[0, 1]`, written into `out`: the child's mean
/// value if visited, else the mixed value of the root's network value and the visited
/// children's values (weighted by prior), as mctx `_compute_mixed_value`.
fn completed_q_into(t: &Tree, out: &mut Vec<f32>) {
    let kids = t.children(ROOT);
    let mut visits = 0.0f32;
    let mut weighted = 0.0f32;
    let mut prior_mass = 0.0f32;
    for c in kids.clone() {
        if let Some(q) = t.child_q(c) {
            let n = &t.nodes[c];
            visits += n.visits as f32;
            weighted += n.net_prior * q;
            prior_mass += n.net_prior;
        }
    }
    let raw = t.root().raw_value;
    let mixed = if prior_mass > 0.0 { (raw + visits * weighted / prior_mass) / (1.0 + visits) } else { raw };
    out.clear();
    out.extend(kids.map(|c| (t.child_q(c).unwrap_or(mixed) + 1.0) / 2.0));
}

/// [`completed_q_into`] into a new vector (once per move, not per simulation).
fn completed_q(t: &Tree) -> Vec<f32> {
    let mut out = Vec::new();
    completed_q_into(t, &mut out);
    out
}

fn logit(p: f32) -> f32 {
    p.max(1e-12).ln()
}

/// Samples the Gumbel noise, picks the top-`m` candidates by `g + logits`, and lays out the
/// halving schedule for this search.
pub(super) fn prepare(t: &mut Tree, config: &MctsConfig) {
    let kids = t.children(ROOT);
    let k = kids.len();
    t.gumbel.clear();
    for _ in 0..k {
        let g = if config.gumbel_noise { noise::gumbel(&mut t.rng) } else { 0.0 };
        t.gumbel.push(g);
    }
    let mut order: Vec<usize> = (0..k).collect();
    let score = |i: usize| t.gumbel[i] + logit(t.nodes[kids.start + i].net_prior);
    order.sort_by(|&a, &b| score(b).total_cmp(&score(a)));
    let m = (config.gumbel_max_considered as usize).min(k);
    t.considered.clear();
    t.considered.resize(k, false);
    for &i in &order[..m] {
        t.considered[i] = true;
    }
    t.search_visits.clear();
    t.search_visits.resize(k, 0);
    t.halving = halving_sequence(m, config.num_simulations as usize);
}

/// The root child simulation `sim` explores: among candidates whose visits this search equal
/// the schedule's count, the best by `g + logits + σ(completed Q)`.
pub(super) fn select_root_child(t: &mut Tree, config: &MctsConfig, sim: u32) -> usize {
    let kids = t.children(ROOT);
    let want = t.halving.get(sim as usize).copied().unwrap_or(0);
    // The tree keeps the buffer, so no simulation allocates.
    let mut q = std::mem::take(&mut t.completed_q);
    completed_q_into(t, &mut q);
    let mut best = None;
    let mut best_score = f32::NEG_INFINITY;
    // Fall back to the least-visited candidate if none matches the schedule exactly.
    let min_visits =
        (0..kids.len()).filter(|&i| t.considered[i]).map(|i| t.search_visits[i]).min().unwrap_or(0);
    let target = if (0..kids.len()).any(|i| t.considered[i] && t.search_visits[i] == want) {
        want
    } else {
        min_visits
    };
    for (i, &qi) in q.iter().enumerate() {
        if !t.considered[i] || t.search_visits[i] != target {
            continue;
        }
        let s = t.gumbel[i] + logit(t.nodes[kids.start + i].net_prior) + sigma(t, config, qi);
        if s > best_score {
            best_score = s;
            best = Some(i);
        }
    }
    t.completed_q = q;
    let i = best.unwrap_or(0);
    t.search_visits[i] += 1;
    kids.start + i
}

/// The action Gumbel search plays: among the most-visited candidates, the best by
/// `g + logits + σ(completed Q)`.
pub(super) fn chosen_action(t: &Tree, config: &MctsConfig) -> Option<Action> {
    let kids = t.children(ROOT);
    if t.considered.len() != kids.len() {
        // No Gumbel search ran on this root: fall back to the most visited child.
        return kids.max_by_key(|&c| t.nodes[c].visits).map(|c| Action(t.nodes[c].action));
    }
    let q = completed_q(t);
    let top = (0..kids.len()).filter(|&i| t.considered[i]).map(|i| t.search_visits[i]).max()?;
    (0..kids.len())
        .filter(|&i| t.considered[i] && t.search_visits[i] == top)
        .max_by(|&a, &b| {
            let s =
                |i: usize| t.gumbel[i] + logit(t.nodes[kids.start + i].net_prior) + sigma(t, config, q[i]);
            s(a).total_cmp(&s(b))
        })
        .map(|i| Action(t.nodes[kids.start + i].action))
}

/// The completed-Q improved policy over all root children.
pub(super) fn improved_policy(t: &Tree, config: &MctsConfig) -> Vec<(Action, f32)> {
    let kids = t.children(ROOT);
    if kids.is_empty() {
        return Vec::new();
    }
    let q = completed_q(t);
    let z: Vec<f32> =
        kids.clone().enumerate().map(|(i, c)| logit(t.nodes[c].net_prior) + sigma(t, config, q[i])).collect();
    let max = z.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let e: Vec<f32> = z.iter().map(|x| (x - max).exp()).collect();
    let total: f32 = e.iter().sum();
    kids.zip(e).map(|(c, x)| (Action(t.nodes[c].action), x / total)).collect()
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
