//! The fit's likelihood: games aggregated into pairs with the prior's virtual draws, the
//! penalized log-likelihood, its gradient and information, Newton's method, and connectivity.

use std::collections::{BTreeMap, VecDeque};

use super::numeric::{cholesky, cholesky_solve};
use super::{ELO_PER_NAT, EloError, EloOptions, GameResult, MAX_HALVINGS};

/// Aggregated (real plus virtual) games between two players `i < j`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Pair {
    pub(super) i: usize,
    pub(super) j: usize,
    /// Games, virtual draws included.
    pub(super) n: f64,
    /// Points of player `i` in those games.
    pub(super) w: f64,
}

/// The penalized likelihood problem: pairs of players and who is anchored.
#[derive(Clone, Debug)]
pub(super) struct Problem {
    pub(super) players: usize,
    pub(super) pairs: Vec<Pair>,
    /// `free[i]` = index of player `i` among the non-anchor players.
    pub(super) free: Vec<Option<usize>>,
    /// Number of non-anchor players.
    pub(super) m: usize,
}

/// `ln(1 + e^x)`, without overflow.
pub(super) fn softplus(x: f64) -> f64 {
    x.max(0.0) + (-x.abs()).exp().ln_1p()
}

/// The logistic function, without overflow.
pub(super) fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

impl Problem {
    pub(super) fn new(players: usize, anchor: usize, pairs: Vec<Pair>) -> Problem {
        let mut free = vec![None; players];
        let mut m = 0;
        for (i, slot) in free.iter_mut().enumerate() {
            if i != anchor {
                *slot = Some(m);
                m += 1;
            }
        }
        Problem { players, pairs, free, m }
    }

    /// Penalized log-likelihood at `theta` (natural units, one entry per player).
    pub(super) fn log_likelihood(&self, theta: &[f64]) -> f64 {
        self.pairs
            .iter()
            .map(|p| {
                let d = theta[p.i] - theta[p.j];
                // ln σ(d) = -softplus(-d), ln(1 - σ(d)) = -softplus(d)
                -p.w * softplus(-d) - (p.n - p.w) * softplus(d)
            })
            .sum()
    }

    /// Gradient (over the free players) and the negative Hessian at `theta`.
    pub(super) fn gradient_and_information(&self, theta: &[f64]) -> (Vec<f64>, Vec<Vec<f64>>) {
        let mut g = vec![0.0; self.m];
        let mut a = vec![vec![0.0; self.m]; self.m];
        for p in &self.pairs {
            let d = theta[p.i] - theta[p.j];
            let pij = sigmoid(d);
            let c = p.n * pij * sigmoid(-d);
            let r = p.w - p.n * pij;
            let fi = self.free[p.i];
            let fj = self.free[p.j];
            if let Some(fi) = fi {
                g[fi] += r;
                a[fi][fi] += c;
            }
            if let Some(fj) = fj {
                g[fj] -= r;
                a[fj][fj] += c;
            }
            if let (Some(fi), Some(fj)) = (fi, fj) {
                a[fi][fj] -= c;
                a[fj][fi] -= c;
            }
        }
        (g, a)
    }

    /// Maximizes the penalized likelihood; returns `theta` and the iterations used.
    pub(super) fn maximize(
        &self,
        max_iterations: usize,
        tolerance_elo: f64,
    ) -> Result<(Vec<f64>, usize), EloError> {
        let mut theta = vec![0.0; self.players];
        if self.m == 0 {
            return Ok((theta, 0));
        }
        let mut ll = self.log_likelihood(&theta);
        let mut last_step = f64::INFINITY;
        for iter in 1..=max_iterations {
            let (g, a) = self.gradient_and_information(&theta);
            let l = cholesky(&a).ok_or(EloError::Singular)?;
            let delta = cholesky_solve(&l, &g);
            let step = delta.iter().fold(0.0_f64, |acc, d| acc.max(d.abs())) * ELO_PER_NAT;
            if !step.is_finite() {
                return Err(EloError::Singular);
            }
            last_step = step;
            // Step-halving line search: accept the first step that does not lower the
            // likelihood (up to rounding of the likelihood itself).
            let slack = 4.0 * f64::EPSILON * ll.abs().max(1.0);
            let mut t = 1.0;
            let mut accepted = None;
            for _ in 0..MAX_HALVINGS {
                let trial = self.shifted(&theta, &delta, t);
                let ll_trial = self.log_likelihood(&trial);
                if ll_trial.is_finite() && ll_trial >= ll - slack {
                    accepted = Some((trial, ll_trial));
                    break;
                }
                t *= 0.5;
            }
            match accepted {
                Some((trial, ll_trial)) => {
                    theta = trial;
                    ll = ll_trial;
                    if t * step <= tolerance_elo {
                        return Ok((theta, iter));
                    }
                }
                None => {
                    // No step improves the likelihood: we are at its numerical maximum if the
                    // Newton step is already tiny, otherwise something is wrong.
                    if step <= tolerance_elo.max(1e-6) {
                        return Ok((theta, iter));
                    }
                    return Err(EloError::NotConverged { iterations: iter, last_step: step });
                }
            }
        }
        Err(EloError::NotConverged { iterations: max_iterations, last_step })
    }

    pub(super) fn shifted(&self, theta: &[f64], delta: &[f64], t: f64) -> Vec<f64> {
        let mut out = theta.to_vec();
        for (i, x) in out.iter_mut().enumerate() {
            if let Some(f) = self.free[i] {
                *x += t * delta[f];
            }
        }
        out
    }
}

/// Validated games, aggregated by pair.
pub(super) struct Aggregate {
    /// Pairs that met, with the prior's virtual draws added.
    pub(super) pairs: Vec<Pair>,
    /// Each player's real games.
    pub(super) games: Vec<u32>,
    /// Each player's real points.
    pub(super) points: Vec<f64>,
}

/// Checks the inputs and aggregates the games into pairs (with the prior's virtual draws).
pub(super) fn aggregate(
    names: &[String],
    results: &[GameResult],
    options: &EloOptions,
) -> Result<Aggregate, EloError> {
    let n = names.len();
    if n == 0 {
        return Err(EloError::NoPlayers);
    }
    if options.anchor >= n {
        return Err(EloError::AnchorOutOfRange { anchor: options.anchor, players: n });
    }
    if !options.anchor_rating.is_finite() {
        return Err(EloError::InvalidOption { option: "anchor_rating", value: options.anchor_rating });
    }
    if !(options.prior_draws.is_finite() && options.prior_draws >= 0.0) {
        return Err(EloError::InvalidOption { option: "prior_draws", value: options.prior_draws });
    }
    if !(options.tolerance.is_finite() && options.tolerance > 0.0) {
        return Err(EloError::InvalidOption { option: "tolerance", value: options.tolerance });
    }
    let mut games = vec![0u32; n];
    let mut points = vec![0.0; n];
    // (i, j) with i < j  ->  (games, points of i)
    let mut pairs: BTreeMap<(usize, usize), (f64, f64)> = BTreeMap::new();
    for (k, g) in results.iter().enumerate() {
        for player in [g.white, g.black] {
            if player >= n {
                return Err(EloError::PlayerOutOfRange { game: k, player, players: n });
            }
        }
        if g.white == g.black {
            return Err(EloError::SamePlayer { game: k, player: g.white });
        }
        if !(g.score == 0.0 || g.score == 0.5 || g.score == 1.0) {
            return Err(EloError::BadScore { game: k, score: g.score });
        }
        games[g.white] = games[g.white].saturating_add(1);
        games[g.black] = games[g.black].saturating_add(1);
        points[g.white] += g.score;
        points[g.black] += 1.0 - g.score;
        let (i, j, wi) =
            if g.white < g.black { (g.white, g.black, g.score) } else { (g.black, g.white, 1.0 - g.score) };
        let e = pairs.entry((i, j)).or_insert((0.0, 0.0));
        e.0 += 1.0;
        e.1 += wi;
    }
    let pairs = pairs
        .into_iter()
        .map(|((i, j), (games, w))| Pair {
            i,
            j,
            n: games + options.prior_draws,
            w: w + 0.5 * options.prior_draws,
        })
        .collect();
    Ok(Aggregate { pairs, games, points })
}

/// Players with no path of games to `anchor`.
pub(super) fn unreachable_from(players: usize, anchor: usize, pairs: &[Pair]) -> Vec<usize> {
    let mut adjacency = vec![Vec::new(); players];
    for p in pairs {
        adjacency[p.i].push(p.j);
        adjacency[p.j].push(p.i);
    }
    reached(&adjacency, anchor).iter().enumerate().filter(|&(_, &r)| !r).map(|(i, _)| i).collect()
}

/// Players outside the anchor's strongly connected component of the "took points from" graph
/// (edge `i -> j` when `i` scored against `j`, virtual draws included). The maximum-likelihood
/// ratings are finite if and only if this is empty (Zermelo's condition).
pub(super) fn outside_anchor_component(players: usize, anchor: usize, pairs: &[Pair]) -> Vec<usize> {
    let mut forward = vec![Vec::new(); players];
    let mut backward = vec![Vec::new(); players];
    for p in pairs {
        if p.w > 0.0 {
            forward[p.i].push(p.j);
            backward[p.j].push(p.i);
        }
        if p.n - p.w > 0.0 {
            forward[p.j].push(p.i);
            backward[p.i].push(p.j);
        }
    }
    let from = reached(&forward, anchor);
    let to = reached(&backward, anchor);
    (0..players).filter(|&i| !(from[i] && to[i])).collect()
}

/// Which nodes a breadth-first search from `start` reaches.
pub(super) fn reached(adjacency: &[Vec<usize>], start: usize) -> Vec<bool> {
    let mut seen = vec![false; adjacency.len()];
    seen[start] = true;
    let mut queue = VecDeque::from([start]);
    while let Some(u) = queue.pop_front() {
        for &v in &adjacency[u] {
            if !seen[v] {
                seen[v] = true;
                queue.push_back(v);
            }
        }
    }
    seen
}
