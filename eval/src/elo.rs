//! Elo ratings with confidence intervals, fitted by maximum likelihood of a Bradley–Terry model.
//!
//! The model is the usual logistic Elo scale: player `i` beats player `j` with probability
//! `1 / (1 + 10^((r_j - r_i) / 400))`. A draw counts as half a win and half a loss. To keep a
//! player with a perfect (or zero) score finite, every pair of players that met at least once
//! gets [`EloOptions::prior_draws`] extra virtual draws (a weak prior, as in BayesElo).
//!
//! The ratings are found by Newton's method with a step-halving line search, one player being
//! anchored at a fixed rating. Standard errors come from the observed information (the inverse
//! of the negative Hessian at the optimum), and the likelihood of superiority between two
//! players from the normal approximation of their rating difference.
//!
//! ```
//! use morris_eval::elo::{fit, EloOptions, GameResult};
//! let names = vec!["a".to_string(), "b".to_string()];
//! let games = vec![
//!     GameResult { white: 0, black: 1, score: 1.0 },
//!     GameResult { white: 1, black: 0, score: 0.5 },
//!     GameResult { white: 0, black: 1, score: 0.0 },
//! ];
//! let table = fit(&names, &games, &EloOptions::default()).unwrap();
//! assert_eq!(table.get("a").unwrap().elo, 0.0);
//! assert!(table.get("b").unwrap().elo.abs() < 1e-6);
//! ```

use std::collections::{BTreeMap, VecDeque};
use std::fmt;

use serde::{Deserialize, Serialize};

/// Elo points per natural unit of the logistic scale: `400 / ln 10`.
const ELO_PER_NAT: f64 = 400.0 / std::f64::consts::LN_10;

/// The two-sided 95% quantile of the standard normal distribution.
const Z95: f64 = 1.959964;

/// Halvings tried by the line search before giving up on a Newton direction.
const MAX_HALVINGS: usize = 60;

/// One game's result between two players (indices into the player list).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameResult {
    /// Index of the player with the white (first-moving) pieces.
    pub white: usize,
    /// Index of the player with the black pieces.
    pub black: usize,
    /// White's score: 1.0 win, 0.5 draw, 0.0 loss.
    pub score: f64,
}

/// Settings of the fit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EloOptions {
    /// Index of the anchored player, whose rating is fixed at `anchor_rating`.
    pub anchor: usize,
    /// The anchored player's rating.
    pub anchor_rating: f64,
    /// Virtual draws added between every pair of players that met (the weak prior); default 2.0.
    pub prior_draws: f64,
    /// Cap on the number of Newton iterations.
    pub max_iterations: usize,
    /// Convergence tolerance, in Elo: the fit stops once a Newton step moves no rating by more.
    pub tolerance: f64,
}

impl Default for EloOptions {
    fn default() -> Self {
        EloOptions { anchor: 0, anchor_rating: 0.0, prior_draws: 2.0, max_iterations: 100, tolerance: 1e-9 }
    }
}

/// One player's fitted rating.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    /// The player's name.
    pub name: String,
    /// The maximum-likelihood rating.
    pub elo: f64,
    /// Standard error of the rating (0 for the anchor).
    pub std_error: f64,
    /// Lower end of the 95% confidence interval.
    pub lower95: f64,
    /// Upper end of the 95% confidence interval.
    pub upper95: f64,
    /// Number of real games played.
    pub games: u32,
    /// Points scored in real games (not virtual draws).
    pub points: f64,
    /// `points / games` (0 for a player without games).
    pub score_fraction: f64,
}

/// The result of a fit: ratings, their covariance and the likelihood of superiority.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EloTable {
    /// One rating per player, in the order of the names given to [`fit`].
    pub ratings: Vec<Rating>,
    /// Covariance of the ratings in Elo², players in the same order (anchor row/col zero).
    pub covariance: Vec<Vec<f64>>,
    /// `los[i][j]` = probability that player `i` is stronger than player `j`.
    pub los: Vec<Vec<f64>>,
    /// Newton iterations used.
    pub iterations: usize,
}

/// Why a fit failed.
#[derive(Clone, Debug, PartialEq)]
pub enum EloError {
    /// The list of players is empty.
    NoPlayers,
    /// The anchor index is not a player.
    AnchorOutOfRange {
        /// The anchor index given.
        anchor: usize,
        /// The number of players.
        players: usize,
    },
    /// A game names a player index that does not exist.
    PlayerOutOfRange {
        /// Index of the game in the results list.
        game: usize,
        /// The offending player index.
        player: usize,
        /// The number of players.
        players: usize,
    },
    /// A game has the same player on both sides.
    SamePlayer {
        /// Index of the game in the results list.
        game: usize,
        /// The player index.
        player: usize,
    },
    /// A game's score is not 0, 0.5 or 1.
    BadScore {
        /// Index of the game in the results list.
        game: usize,
        /// The score given.
        score: f64,
    },
    /// An option has an unusable value (non-finite, negative, or zero where it must be positive).
    InvalidOption {
        /// The option's field name in [`EloOptions`].
        option: &'static str,
        /// The value given.
        value: f64,
    },
    /// Some players have no path of games to the anchor, so their ratings are undefined.
    Disconnected {
        /// Names of the players not connected to the anchor.
        players: Vec<String>,
    },
    /// Without a prior, some players' ratings have no finite maximum-likelihood value: they
    /// won (or lost) every game against everybody else. A positive `prior_draws` avoids this.
    NoFiniteMaximum {
        /// Names of the players outside the anchor's group (those whose ratings diverge).
        players: Vec<String>,
    },
    /// Newton's method did not converge within the iteration cap.
    NotConverged {
        /// Iterations performed.
        iterations: usize,
        /// The largest rating change of the last Newton step, in Elo.
        last_step: f64,
    },
    /// The information matrix could not be factorized (numerically singular).
    Singular,
}

impl fmt::Display for EloError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EloError::NoPlayers => write!(f, "no players to rate"),
            EloError::AnchorOutOfRange { anchor, players } => {
                write!(f, "anchor index {anchor} is out of range for {players} players")
            }
            EloError::PlayerOutOfRange { game, player, players } => {
                write!(f, "game {game} names player index {player}, out of range for {players} players")
            }
            EloError::SamePlayer { game, player } => {
                write!(f, "game {game} has player {player} on both sides")
            }
            EloError::BadScore { game, score } => {
                write!(f, "game {game} has score {score}; expected 0, 0.5 or 1")
            }
            EloError::InvalidOption { option, value } => {
                write!(f, "invalid Elo option {option} = {value}")
            }
            EloError::Disconnected { players } => write!(
                f,
                "players not connected to the anchor by games (their ratings are undefined): {}",
                players.join(", ")
            ),
            EloError::NoFiniteMaximum { players } => write!(
                f,
                "ratings have no finite maximum (perfect or zero scores against the rest; \
                 use a positive prior_draws) for: {}",
                players.join(", ")
            ),
            EloError::NotConverged { iterations, last_step } => write!(
                f,
                "Elo fit did not converge after {iterations} iterations (last step {last_step:.3e} Elo)"
            ),
            EloError::Singular => write!(f, "the information matrix of the Elo fit is singular"),
        }
    }
}

impl std::error::Error for EloError {}

/// Aggregated (real plus virtual) games between two players `i < j`.
#[derive(Clone, Copy, Debug)]
struct Pair {
    i: usize,
    j: usize,
    /// Games, virtual draws included.
    n: f64,
    /// Points of player `i` in those games.
    w: f64,
}

/// The penalized likelihood problem: pairs of players and who is anchored.
#[derive(Clone, Debug)]
struct Problem {
    players: usize,
    pairs: Vec<Pair>,
    /// `free[i]` = index of player `i` among the non-anchor players.
    free: Vec<Option<usize>>,
    /// Number of non-anchor players.
    m: usize,
}

/// `ln(1 + e^x)`, without overflow.
fn softplus(x: f64) -> f64 {
    x.max(0.0) + (-x.abs()).exp().ln_1p()
}

/// The logistic function, without overflow.
fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

impl Problem {
    fn new(players: usize, anchor: usize, pairs: Vec<Pair>) -> Problem {
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
    fn log_likelihood(&self, theta: &[f64]) -> f64 {
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
    fn gradient_and_information(&self, theta: &[f64]) -> (Vec<f64>, Vec<Vec<f64>>) {
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
    fn maximize(&self, max_iterations: usize, tolerance_elo: f64) -> Result<(Vec<f64>, usize), EloError> {
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

    fn shifted(&self, theta: &[f64], delta: &[f64], t: f64) -> Vec<f64> {
        let mut out = theta.to_vec();
        for (i, x) in out.iter_mut().enumerate() {
            if let Some(f) = self.free[i] {
                *x += t * delta[f];
            }
        }
        out
    }
}

/// Cholesky factor `L` (lower triangular, `A = L Lᵀ`) of a symmetric positive-definite matrix,
/// or `None` if the matrix is not (numerically) positive definite.
#[allow(clippy::needless_range_loop)] // index-heavy linear algebra reads best with indices
fn cholesky(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let mut l = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..=i {
            let mut s = a[i][j];
            for k in 0..j {
                s -= l[i][k] * l[j][k];
            }
            if i == j {
                if s.is_nan() || s <= 0.0 || s.is_infinite() {
                    return None;
                }
                l[i][i] = s.sqrt();
            } else {
                l[i][j] = s / l[j][j];
            }
        }
    }
    Some(l)
}

/// Solves `L Lᵀ x = b`.
fn cholesky_solve(l: &[Vec<f64>], b: &[f64]) -> Vec<f64> {
    let n = l.len();
    let mut y = b.to_vec();
    for i in 0..n {
        let mut s = y[i];
        for k in 0..i {
            s -= l[i][k] * y[k];
        }
        y[i] = s / l[i][i];
    }
    for i in (0..n).rev() {
        let mut s = y[i];
        for k in i + 1..n {
            s -= l[k][i] * y[k];
        }
        y[i] = s / l[i][i];
    }
    y
}

/// Inverse of a symmetric positive-definite matrix from its Cholesky factor (symmetrized).
#[allow(clippy::needless_range_loop)]
fn cholesky_inverse(l: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let n = l.len();
    let mut inv = vec![vec![0.0; n]; n];
    let mut e = vec![0.0; n];
    for c in 0..n {
        e.iter_mut().for_each(|x| *x = 0.0);
        e[c] = 1.0;
        let col = cholesky_solve(l, &e);
        for (r, v) in col.into_iter().enumerate() {
            inv[r][c] = v;
        }
    }
    for i in 0..n {
        for j in 0..i {
            let avg = 0.5 * (inv[i][j] + inv[j][i]);
            inv[i][j] = avg;
            inv[j][i] = avg;
        }
    }
    inv
}

/// The error function for `x >= 0`, by its everywhere-convergent series of positive terms
/// `erf(x) = 2/√π · e^{-x²} · Σ 2ⁿ x^{2n+1} / (1·3·…·(2n+1))` (no cancellation).
fn erf_series(x: f64) -> f64 {
    let mut term = x;
    let mut sum = x;
    let x2 = x * x;
    for n in 1..400 {
        term *= 2.0 * x2 / (2 * n + 1) as f64;
        sum += term;
        if term < 1e-17 * sum {
            break;
        }
    }
    2.0 / std::f64::consts::PI.sqrt() * (-x2).exp() * sum
}

/// The complementary error function for `x >= 2.5`, by its continued fraction
/// `erfc(x) = e^{-x²}/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …))))`, evaluated backwards.
fn erfc_continued_fraction(x: f64) -> f64 {
    let mut f = x;
    for k in (1..=80).rev() {
        f = x + (k as f64 / 2.0) / f;
    }
    (-x * x).exp() / (std::f64::consts::PI.sqrt() * f)
}

/// The complementary error function, accurate to about 1e-15 relative.
fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    if x < 2.5 { 1.0 - erf_series(x) } else { erfc_continued_fraction(x) }
}

/// The standard normal cumulative distribution function Φ.
fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// Validated games, aggregated by pair.
struct Aggregate {
    /// Pairs that met, with the prior's virtual draws added.
    pairs: Vec<Pair>,
    /// Each player's real games.
    games: Vec<u32>,
    /// Each player's real points.
    points: Vec<f64>,
}

/// Checks the inputs and aggregates the games into pairs (with the prior's virtual draws).
fn aggregate(names: &[String], results: &[GameResult], options: &EloOptions) -> Result<Aggregate, EloError> {
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
fn unreachable_from(players: usize, anchor: usize, pairs: &[Pair]) -> Vec<usize> {
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
fn outside_anchor_component(players: usize, anchor: usize, pairs: &[Pair]) -> Vec<usize> {
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
fn reached(adjacency: &[Vec<usize>], start: usize) -> Vec<bool> {
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

/// Fits Elo ratings to `results` by maximum (penalized) likelihood.
///
/// `names[i]` names player `i`; games refer to players by index. The anchor player's rating
/// is fixed at `options.anchor_rating`; all others are estimated relative to it, with their
/// standard errors, 95% confidence intervals, covariance matrix and likelihood of superiority.
///
/// # Errors
/// [`EloError::NoPlayers`], [`EloError::AnchorOutOfRange`], [`EloError::PlayerOutOfRange`],
/// [`EloError::SamePlayer`], [`EloError::BadScore`] or [`EloError::InvalidOption`] for bad input;
/// [`EloError::Disconnected`] if some player has no path of games to the anchor (a player
/// without games included); [`EloError::NoFiniteMaximum`] if the maximum does not exist (only
/// possible with `prior_draws = 0`, e.g. a perfect score); [`EloError::NotConverged`] or
/// [`EloError::Singular`] if it cannot be found numerically.
pub fn fit(names: &[String], results: &[GameResult], options: &EloOptions) -> Result<EloTable, EloError> {
    let Aggregate { pairs, games, points } = aggregate(names, results, options)?;
    let n = names.len();
    let anchor = options.anchor;
    let lost = unreachable_from(n, anchor, &pairs);
    if !lost.is_empty() {
        return Err(EloError::Disconnected { players: lost.into_iter().map(|i| names[i].clone()).collect() });
    }
    let unbounded = outside_anchor_component(n, anchor, &pairs);
    if !unbounded.is_empty() {
        return Err(EloError::NoFiniteMaximum {
            players: unbounded.into_iter().map(|i| names[i].clone()).collect(),
        });
    }
    let problem = Problem::new(n, anchor, pairs);
    let (theta, iterations) = problem.maximize(options.max_iterations, options.tolerance)?;

    // Covariance from the observed information at the optimum.
    let (_, information) = problem.gradient_and_information(&theta);
    let l = cholesky(&information).ok_or(EloError::Singular)?;
    let inverse = cholesky_inverse(&l);
    let scale = ELO_PER_NAT * ELO_PER_NAT;
    let covariance: Vec<Vec<f64>> = problem
        .free
        .iter()
        .map(|fi| {
            problem
                .free
                .iter()
                .map(|fj| match (fi, fj) {
                    (Some(fi), Some(fj)) => inverse[*fi][*fj] * scale,
                    _ => 0.0,
                })
                .collect()
        })
        .collect();
    if covariance.iter().flatten().any(|v| !v.is_finite()) {
        return Err(EloError::Singular);
    }

    let ratings: Vec<Rating> = (0..n)
        .map(|i| {
            let elo = if i == anchor {
                options.anchor_rating
            } else {
                options.anchor_rating + theta[i] * ELO_PER_NAT
            };
            let std_error = covariance[i][i].max(0.0).sqrt();
            let score_fraction = if games[i] > 0 { points[i] / f64::from(games[i]) } else { 0.0 };
            Rating {
                name: names[i].clone(),
                elo,
                std_error,
                lower95: elo - Z95 * std_error,
                upper95: elo + Z95 * std_error,
                games: games[i],
                points: points[i],
                score_fraction,
            }
        })
        .collect();
    if ratings.iter().any(|r| !r.elo.is_finite()) {
        return Err(EloError::Singular);
    }

    let mut los = vec![vec![0.5; n]; n];
    for i in 0..n {
        for j in i + 1..n {
            let diff = ratings[i].elo - ratings[j].elo;
            let var = covariance[i][i] + covariance[j][j] - 2.0 * covariance[i][j];
            let p = if var > 0.0 {
                normal_cdf(diff / var.sqrt())
            } else if diff > 0.0 {
                1.0
            } else if diff < 0.0 {
                0.0
            } else {
                0.5
            };
            los[i][j] = p;
            los[j][i] = 1.0 - p;
        }
    }

    Ok(EloTable { ratings, covariance, los, iterations })
}

/// Quotes a CSV field if it needs it (RFC 4180).
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
}

impl EloTable {
    /// Player indices sorted by Elo, strongest first (ties keep the input order).
    pub fn order_by_elo(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.ratings.len()).collect();
        order.sort_by(|&a, &b| self.ratings[b].elo.total_cmp(&self.ratings[a].elo));
        order
    }

    /// An aligned text table sorted by Elo descending: rank, name, Elo, ± (half-width of the
    /// 95% confidence interval), [lower, upper], games and score percentage.
    pub fn to_text(&self) -> String {
        let name_width = self.ratings.iter().map(|r| r.name.chars().count()).max().unwrap_or(0).max(4);
        let mut out = format!(
            "{:>4}  {:<name_width$}  {:>8}  {:>6}  {:>21}  {:>7}  {:>6}\n",
            "Rank", "Name", "Elo", "±", "95% interval", "Games", "Score"
        );
        for (rank, &i) in self.order_by_elo().iter().enumerate() {
            let r = &self.ratings[i];
            let interval = format!("[{:.1}, {:.1}]", r.lower95, r.upper95);
            out.push_str(&format!(
                "{:>4}  {:<name_width$}  {:>8.1}  {:>6.1}  {:>21}  {:>7}  {:>5.1}%\n",
                rank + 1,
                r.name,
                r.elo,
                Z95 * r.std_error,
                interval,
                r.games,
                100.0 * r.score_fraction
            ));
        }
        out
    }

    /// The ratings as CSV (players in the table's order), with the header
    /// `name,elo,std_error,lower95,upper95,games,points,score`; `score` is the score fraction.
    pub fn to_csv(&self) -> String {
        let mut out = String::from("name,elo,std_error,lower95,upper95,games,points,score\n");
        for r in &self.ratings {
            out.push_str(&format!(
                "{},{},{},{},{},{},{},{}\n",
                csv_field(&r.name),
                r.elo,
                r.std_error,
                r.lower95,
                r.upper95,
                r.games,
                r.points,
                r.score_fraction
            ));
        }
        out
    }

    /// The likelihood-of-superiority matrix as text: players sorted by Elo (strongest first),
    /// entry in row `i`, column `j` = chance in percent that `i` is stronger than `j`.
    pub fn los_text(&self) -> String {
        let order = self.order_by_elo();
        let name_width = self.ratings.iter().map(|r| r.name.chars().count()).max().unwrap_or(0).max(3);
        let col_width = name_width.max(6);
        let mut out = format!("{:<name_width$}", "LOS");
        for &j in &order {
            out.push_str(&format!("  {:>col_width$}", self.ratings[j].name));
        }
        out.push('\n');
        for &i in &order {
            out.push_str(&format!("{:<name_width$}", self.ratings[i].name));
            for &j in &order {
                let cell = if i == j {
                    "-".to_string()
                } else {
                    let p = self.los.get(i).and_then(|row| row.get(j)).copied().unwrap_or(f64::NAN);
                    format!("{:.1}%", 100.0 * p)
                };
                out.push_str(&format!("  {cell:>col_width$}"));
            }
            out.push('\n');
        }
        out
    }

    /// The rating of the (first) player called `name`.
    pub fn get(&self, name: &str) -> Option<&Rating> {
        self.ratings.iter().find(|r| r.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use morris_env::Rng;
    use proptest::prelude::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("p{i}")).collect()
    }

    /// A round robin with `per_pair` games per pair, colours alternating, drawn from the model
    /// with draws (draw chance 0.3 at equal strength, scaled so the expected score matches).
    fn simulate(truth: &[f64], per_pair: usize, seed: u64) -> Vec<GameResult> {
        let mut rng = Rng::seed_from_u64(seed);
        let mut out = Vec::new();
        for i in 0..truth.len() {
            for j in i + 1..truth.len() {
                for k in 0..per_pair {
                    let (white, black) = if k % 2 == 0 { (i, j) } else { (j, i) };
                    let e = 1.0 / (1.0 + 10f64.powf((truth[black] - truth[white]) / 400.0));
                    let draw = 0.3 * 2.0 * e.min(1.0 - e);
                    let win = e - draw / 2.0;
                    let u = rng.next_f64();
                    let score = if u < win {
                        1.0
                    } else if u < win + draw {
                        0.5
                    } else {
                        0.0
                    };
                    out.push(GameResult { white, black, score });
                }
            }
        }
        out
    }

    const TRUTH: [f64; 5] = [0.0, 150.0, 300.0, 500.0, 800.0];

    #[test]
    fn recovers_synthetic_ratings() {
        for seed in [1, 2, 3] {
            let results = simulate(&TRUTH, 400, seed);
            let table = fit(&names(5), &results, &EloOptions::default()).unwrap();
            let mut outside95 = 0;
            for (r, &t) in table.ratings.iter().zip(&TRUTH) {
                assert!((r.elo - t).abs() <= 3.0 * r.std_error + 1e-9, "seed {seed}: {r:?} vs {t}");
                if t < r.lower95 || t > r.upper95 {
                    outside95 += 1;
                }
            }
            assert!(outside95 <= 1, "seed {seed}: {outside95} outside 95%\n{}", table.to_text());
            assert!(table.iterations >= 2 && table.iterations < 30);
        }
    }

    #[test]
    fn intervals_shrink_with_more_games() {
        let small = fit(&names(5), &simulate(&TRUTH, 100, 7), &EloOptions::default()).unwrap();
        let large = fit(&names(5), &simulate(&TRUTH, 400, 8), &EloOptions::default()).unwrap();
        for i in 1..5 {
            let ratio = large.ratings[i].std_error / small.ratings[i].std_error;
            assert!((0.4..=0.6).contains(&ratio), "player {i}: ratio {ratio}");
        }
    }

    #[test]
    fn standard_error_matches_two_player_formula() {
        // Two players, 50 wins and 50 losses, no prior: se = 1/sqrt(n p (1-p)) nats = 0.2 nats.
        let results: Vec<_> =
            (0..100).map(|k| GameResult { white: 0, black: 1, score: (k % 2) as f64 }).collect();
        let options = EloOptions { prior_draws: 0.0, ..EloOptions::default() };
        let table = fit(&names(2), &results, &options).unwrap();
        assert!(table.ratings[1].elo.abs() < 1e-9);
        assert!((table.ratings[1].std_error - 0.2 * ELO_PER_NAT).abs() < 1e-9);
        assert!((table.covariance[1][1] - (0.2 * ELO_PER_NAT).powi(2)).abs() < 1e-6);
        // 75% score: r = 400 log10(3).
        let results: Vec<_> =
            (0..100).map(|k| GameResult { white: 0, black: 1, score: f64::from(k % 4 != 0) }).collect();
        let table = fit(&names(2), &results, &options).unwrap();
        assert!((table.ratings[1].elo + 400.0 * 3f64.log10()).abs() < 1e-6, "{:?}", table.ratings[1]);
    }

    /// Player 0 wins every game against 1 (with both colours); 1 and 2 trade wins.
    fn perfect_score_games() -> Vec<GameResult> {
        let mut results = Vec::new();
        for k in 0..20 {
            if k % 2 == 0 {
                results.push(GameResult { white: 0, black: 1, score: 1.0 });
            } else {
                results.push(GameResult { white: 1, black: 0, score: 0.0 });
            }
            results.push(GameResult { white: 1, black: 2, score: (k % 2) as f64 });
        }
        results
    }

    #[test]
    fn perfect_score_stays_finite_with_prior() {
        let results = perfect_score_games();
        assert!(results.iter().all(|g| (g.white != 0 || g.score == 1.0) && (g.black != 0 || g.score == 0.0)));
        let options = EloOptions { anchor: 1, ..EloOptions::default() };
        let table = fit(&names(3), &results, &options).unwrap();
        let top = &table.ratings[0];
        assert!(top.elo.is_finite() && top.std_error.is_finite());
        assert!(top.elo > 300.0 && top.elo < 2000.0, "{top:?}");
        assert_eq!(top.points, 20.0);
        assert_eq!(top.score_fraction, 1.0);

        let no_prior = EloOptions { prior_draws: 0.0, ..options };
        assert_eq!(
            fit(&names(3), &results, &no_prior),
            Err(EloError::NoFiniteMaximum { players: vec!["p0".into()] })
        );
        // Newton's method alone would run off to a huge rating: the likelihood keeps growing.
        let pairs = aggregate(&names(3), &results, &no_prior).unwrap().pairs;
        let problem = Problem::new(3, 1, pairs);
        let mut theta = vec![0.0, 0.0, 0.0];
        let mut last = problem.log_likelihood(&theta);
        for elo in [1000.0, 2000.0, 4000.0] {
            theta[0] = elo / ELO_PER_NAT;
            let ll = problem.log_likelihood(&theta);
            assert!(ll > last);
            last = ll;
        }
        // Without the prior but with one draw, the maximum exists again.
        let mut drawn = results.clone();
        drawn.push(GameResult { white: 0, black: 1, score: 0.5 });
        let t = fit(&names(3), &drawn, &no_prior).unwrap();
        assert!(t.ratings[0].elo > top.elo && t.ratings[0].elo < 2000.0, "{:?}", t.ratings[0]);
    }

    #[test]
    fn symmetric_results_give_equal_ratings_and_anchor_is_fixed() {
        // 1 and 2 both score 3/4 against the anchor 0 and draw each other.
        let mut results = Vec::new();
        for k in 0..8 {
            let s = f64::from(k % 4 == 0);
            results.push(GameResult { white: 0, black: 1, score: s });
            results.push(GameResult { white: 2, black: 0, score: 1.0 - s });
            results.push(GameResult { white: 1, black: 2, score: 0.5 });
        }
        let options = EloOptions { anchor: 0, anchor_rating: 1500.0, ..EloOptions::default() };
        let table = fit(&names(3), &results, &options).unwrap();
        assert_eq!(table.ratings[0].elo, 1500.0);
        assert_eq!(table.ratings[0].std_error, 0.0);
        assert_eq!(table.ratings[0].lower95, 1500.0);
        assert!(table.covariance[0].iter().all(|&v| v == 0.0));
        assert!(table.covariance.iter().all(|row| row[0] == 0.0));
        assert!(table.ratings[1].elo > 1500.0);
        assert!((table.ratings[1].elo - table.ratings[2].elo).abs() < 1e-6);
        assert!((table.ratings[1].std_error - table.ratings[2].std_error).abs() < 1e-6);
        assert!((table.los[1][2] - 0.5).abs() < 1e-6);

        // Moving the anchor shifts everything by a constant.
        let moved = EloOptions { anchor: 2, anchor_rating: 0.0, ..EloOptions::default() };
        let other = fit(&names(3), &results, &moved).unwrap();
        assert_eq!(other.ratings[2].elo, 0.0);
        assert_eq!(other.ratings[2].std_error, 0.0);
        let shift = table.ratings[2].elo - other.ratings[2].elo;
        for (a, b) in table.ratings.iter().zip(&other.ratings) {
            assert!((a.elo - b.elo - shift).abs() < 1e-6);
        }
    }

    #[test]
    fn bad_input_is_reported() {
        let ok = GameResult { white: 0, black: 1, score: 1.0 };
        let d = EloOptions::default();
        assert_eq!(fit(&[], &[], &d), Err(EloError::NoPlayers));
        assert_eq!(fit(&[], &[ok], &d), Err(EloError::NoPlayers));
        assert_eq!(
            fit(&names(2), &[ok], &EloOptions { anchor: 2, ..d.clone() }),
            Err(EloError::AnchorOutOfRange { anchor: 2, players: 2 })
        );
        assert_eq!(
            fit(&names(2), &[ok, GameResult { white: 0, black: 5, score: 0.5 }], &d),
            Err(EloError::PlayerOutOfRange { game: 1, player: 5, players: 2 })
        );
        assert_eq!(
            fit(&names(2), &[GameResult { white: usize::MAX, black: 0, score: 0.5 }], &d),
            Err(EloError::PlayerOutOfRange { game: 0, player: usize::MAX, players: 2 })
        );
        assert_eq!(
            fit(&names(2), &[GameResult { white: 1, black: 1, score: 0.5 }], &d),
            Err(EloError::SamePlayer { game: 0, player: 1 })
        );
        for score in [0.25, -1.0, 2.0, f64::INFINITY] {
            assert_eq!(
                fit(&names(2), &[ok, GameResult { white: 1, black: 0, score }], &d),
                Err(EloError::BadScore { game: 1, score })
            );
        }
        match fit(&names(2), &[GameResult { white: 1, black: 0, score: f64::NAN }], &d) {
            Err(EloError::BadScore { game: 0, score }) => assert!(score.is_nan()),
            other => panic!("expected BadScore, got {other:?}"),
        }
        // Player 2 has no games; players 3 and 4 only play each other.
        let games = [ok, GameResult { white: 3, black: 4, score: 0.5 }];
        assert_eq!(
            fit(&names(5), &games, &d),
            Err(EloError::Disconnected { players: vec!["p2".into(), "p3".into(), "p4".into()] })
        );
        // Anchor without games.
        assert_eq!(
            fit(&names(3), &[GameResult { white: 1, black: 2, score: 1.0 }], &d),
            Err(EloError::Disconnected { players: vec!["p1".into(), "p2".into()] })
        );
        assert_eq!(fit(&names(2), &[], &d), Err(EloError::Disconnected { players: vec!["p1".into()] }));
        for (opts, option) in [
            (EloOptions { prior_draws: -1.0, ..d.clone() }, "prior_draws"),
            (EloOptions { prior_draws: f64::NAN, ..d.clone() }, "prior_draws"),
            (EloOptions { tolerance: 0.0, ..d.clone() }, "tolerance"),
            (EloOptions { anchor_rating: f64::INFINITY, ..d.clone() }, "anchor_rating"),
        ] {
            match fit(&names(2), &[ok], &opts) {
                Err(EloError::InvalidOption { option: o, .. }) => assert_eq!(o, option),
                other => panic!("expected InvalidOption for {option}, got {other:?}"),
            }
        }
        // No iterations allowed.
        let results = simulate(&TRUTH, 4, 1);
        assert!(matches!(
            fit(&names(5), &results, &EloOptions { max_iterations: 0, ..d.clone() }),
            Err(EloError::NotConverged { iterations: 0, .. })
        ));
        // Messages are readable.
        let msg = EloError::Disconnected { players: vec!["x".into()] }.to_string();
        assert!(msg.contains("x") && msg.contains("anchor"));
    }

    #[test]
    fn single_player_is_its_anchor() {
        let table =
            fit(&names(1), &[], &EloOptions { anchor_rating: 1000.0, ..EloOptions::default() }).unwrap();
        assert_eq!(table.ratings[0].elo, 1000.0);
        assert_eq!(table.ratings[0].games, 0);
        assert_eq!(table.los, vec![vec![0.5]]);
        assert_eq!(table.iterations, 0);
    }

    #[test]
    fn los_is_complementary_and_decisive() {
        let results = simulate(&TRUTH, 100, 11);
        let table = fit(&names(5), &results, &EloOptions::default()).unwrap();
        for i in 0..5 {
            assert_eq!(table.los[i][i], 0.5);
            for j in 0..5 {
                assert!((table.los[i][j] + table.los[j][i] - 1.0).abs() < 1e-9);
                assert!((0.0..=1.0).contains(&table.los[i][j]));
            }
        }
        assert!(table.los[4][0] > 0.99, "{}", table.los[4][0]);
        assert!(table.los[0][4] < 0.01);
        assert!(table.los[4][3] > 0.99);
        // LOS agrees with the covariance.
        let (i, j) = (2, 1);
        let c = &table.covariance;
        let z = (table.ratings[i].elo - table.ratings[j].elo) / (c[i][i] + c[j][j] - 2.0 * c[i][j]).sqrt();
        assert!((table.los[i][j] - normal_cdf(z)).abs() < 1e-12);
    }

    #[test]
    fn normal_cdf_is_accurate() {
        let cases = [
            (0.0, 0.5),
            (1.0, 0.841_344_746_068_542_9),
            (-1.0, 0.158_655_253_931_457_05),
            (1.959964, 0.975_000_0),
            (3.0, 0.998_650_101_968_369_9),
            (-3.0, 0.001_349_898_031_630_094_6),
            (-5.0, 2.866_515_718_791_939e-7),
            (-10.0, 7.619_853_024_160_527e-24),
        ];
        for (x, want) in cases {
            let got = normal_cdf(x);
            assert!(((got - want) / want).abs() < 1e-6, "Φ({x}) = {got}, want {want}");
        }
        assert!((normal_cdf(1.0) - 0.841_344_746_068_542_9).abs() < 1e-14);
        assert!((erfc(2.5) - 4.069_520_174_449_59e-4).abs() < 1e-17);
        assert!((erfc(3.0) - 2.209_049_699_858_544e-5).abs() < 1e-19);
        assert!((erfc(0.5) - (1.0 - 0.520_499_877_813_046_5)).abs() < 1e-15);
        assert!((erfc(2.49) + erfc(-2.49) - 2.0).abs() < 1e-15);
        assert_eq!(normal_cdf(f64::INFINITY), 1.0);
        assert_eq!(normal_cdf(f64::NEG_INFINITY), 0.0);
    }

    #[test]
    fn optimum_is_a_maximum_of_the_penalized_likelihood() {
        let results = simulate(&TRUTH, 50, 5);
        let options = EloOptions::default();
        let table = fit(&names(5), &results, &options).unwrap();
        let pairs = aggregate(&names(5), &results, &options).unwrap().pairs;
        let problem = Problem::new(5, options.anchor, pairs);
        let theta: Vec<f64> =
            table.ratings.iter().map(|r| (r.elo - options.anchor_rating) / ELO_PER_NAT).collect();
        let best = problem.log_likelihood(&theta);
        let (g, _) = problem.gradient_and_information(&theta);
        assert!(g.iter().all(|x| x.abs() < 1e-8), "{g:?}");
        for i in 1..5 {
            for delta in [-1.0, 1.0] {
                let mut t = theta.clone();
                t[i] += delta / ELO_PER_NAT;
                assert!(problem.log_likelihood(&t) < best, "player {i} {delta:+}");
            }
        }
    }

    #[test]
    fn text_and_csv_list_every_player() {
        let mut names = names(5);
        names[3] = "odd, \"name\"".to_string();
        let table = fit(&names, &simulate(&TRUTH, 20, 3), &EloOptions::default()).unwrap();
        let text = table.to_text();
        let csv = table.to_csv();
        let los = table.los_text();
        assert!(text.starts_with("Rank") && text.contains("Elo") && text.contains("Games"));
        assert!(csv.starts_with("name,elo,std_error,lower95,upper95,games,points,score\n"));
        assert!(los.starts_with("LOS"));
        assert_eq!(text.lines().count(), 6);
        assert_eq!(csv.lines().count(), 6);
        assert_eq!(los.lines().count(), 6);
        for n in &names {
            assert!(text.contains(n.as_str()) && los.contains(n.as_str()), "{n}");
        }
        assert!(csv.contains("\"odd, \"\"name\"\"\""));
        for n in ["p0", "p1", "p2", "p4"] {
            assert!(csv.lines().any(|l| l.starts_with(&format!("{n},"))));
        }
        // sorted by Elo: the strongest (p4) first
        let first = text.lines().nth(1).unwrap_or_default();
        assert!(first.contains("p4") && first.trim_start().starts_with('1'));
        assert_eq!(table.get("p4").map(|r| r.games), Some(80));
        assert!(table.get("nobody").is_none());
        // the table round-trips through JSON
        let json = serde_json::to_string(&table).unwrap();
        let back: EloTable = serde_json::from_str(&json).unwrap();
        assert_eq!(back.ratings.len(), 5);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn arbitrary_results_never_panic(
            players in 1usize..6,
            anchor in 0usize..7,
            games in proptest::collection::vec((0usize..7, 0usize..7, 0u8..4), 0..40),
            prior in 0.0f64..3.0,
        ) {
            let results: Vec<GameResult> = games
                .iter()
                .map(|&(w, b, s)| GameResult { white: w, black: b, score: [0.0, 0.5, 1.0, 0.3][s as usize] })
                .collect();
            let options = EloOptions { anchor, prior_draws: prior, ..EloOptions::default() };
            if let Ok(table) = fit(&names(players), &results, &options) {
                prop_assert_eq!(table.ratings.len(), players);
                for i in 0..players {
                    prop_assert!(table.ratings[i].elo.is_finite());
                    prop_assert!(table.ratings[i].std_error.is_finite());
                    for j in 0..players {
                        prop_assert!((table.los[i][j] + table.los[j][i] - 1.0).abs() < 1e-9);
                    }
                }
                let _ = (table.to_text(), table.to_csv(), table.los_text());
            }
        }
    }
}
