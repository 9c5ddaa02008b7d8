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
//! assert_eq!(table.get("a").unwrap().elo.elo, 0.0);
//! assert!(table.get("b").unwrap().elo.elo.abs() < 1e-6);
//! ```

mod numeric;
mod problem;
mod table;
#[cfg(test)]
mod tests;

use std::fmt;

pub use morris_train::Elo;
use serde::{Deserialize, Serialize};

use numeric::{cholesky, cholesky_inverse, normal_cdf};
use problem::{Aggregate, Problem, aggregate, outside_anchor_component, unreachable_from};

/// Elo points per natural unit of the logistic scale: `400 / ln 10`.
pub(crate) const ELO_PER_NAT: f64 = 400.0 / std::f64::consts::LN_10;

/// The two-sided 95% quantile of the standard normal distribution.
pub const Z95: f64 = 1.959964;

/// Halvings tried by the line search before giving up on a Newton direction.
pub(crate) const MAX_HALVINGS: usize = 60;

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

/// One player's fitted rating. In JSON (`eval rate --json`, `ladder.json`) the rating and its
/// interval are the flat fields `elo`, `lower95`, `upper95`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "RatingRecord", into = "RatingRecord")]
pub struct Rating {
    /// The player's name.
    pub name: String,
    /// The maximum-likelihood rating with its 95% confidence interval.
    pub elo: Elo,
    /// Standard error of the rating (0 for the anchor).
    pub std_error: f64,
    /// Number of real games played.
    pub games: u32,
    /// Points scored in real games (not virtual draws).
    pub points: f64,
    /// `points / games` (0 for a player without games).
    pub score_fraction: f64,
}

/// [`Rating`] as it is written: the interval's ends as `lower95` and `upper95`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct RatingRecord {
    name: String,
    elo: f64,
    std_error: f64,
    lower95: f64,
    upper95: f64,
    games: u32,
    points: f64,
    score_fraction: f64,
}

impl From<RatingRecord> for Rating {
    fn from(r: RatingRecord) -> Rating {
        Rating {
            name: r.name,
            elo: Elo { elo: r.elo, low95: r.lower95, high95: r.upper95 },
            std_error: r.std_error,
            games: r.games,
            points: r.points,
            score_fraction: r.score_fraction,
        }
    }
}

impl From<Rating> for RatingRecord {
    fn from(r: Rating) -> RatingRecord {
        RatingRecord {
            name: r.name,
            elo: r.elo.elo,
            std_error: r.std_error,
            lower95: r.elo.low95,
            upper95: r.elo.high95,
            games: r.games,
            points: r.points,
            score_fraction: r.score_fraction,
        }
    }
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
                elo: Elo { elo, low95: elo - Z95 * std_error, high95: elo + Z95 * std_error },
                std_error,
                games: games[i],
                points: points[i],
                score_fraction,
            }
        })
        .collect();
    if ratings.iter().any(|r| !r.elo.elo.is_finite()) {
        return Err(EloError::Singular);
    }

    let mut los = vec![vec![0.5; n]; n];
    for i in 0..n {
        for j in i + 1..n {
            let diff = ratings[i].elo.elo - ratings[j].elo.elo;
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

/// One opponent of known rating and the results against it, for [`rate_against`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FixedOpponent {
    /// The opponent's rating (taken as exact).
    pub elo: f64,
    /// Points scored against it (wins + draws / 2).
    pub points: f64,
    /// Games played against it.
    pub games: u32,
}

/// The rating of one player from its results against opponents of fixed, known ratings (a
/// checkpoint against the calibrated ladder): the same model and prior as [`fit`] (the
/// logistic Elo scale, [`EloOptions::default`]'s `prior_draws` virtual draws against each
/// opponent met), maximized by bisection on the score equation, with the 95% interval from the
/// observed information. The interval is relative to the opponents' ratings: their own
/// uncertainty is not added. `None` without games.
pub fn rate_against(opponents: &[FixedOpponent]) -> Option<Elo> {
    let prior = EloOptions::default().prior_draws;
    let data: Vec<(f64, f64, f64)> = opponents
        .iter()
        .filter(|o| o.games > 0)
        .map(|o| (o.elo, o.points + 0.5 * prior, o.games as f64 + prior))
        .collect();
    if data.is_empty() {
        return None;
    }
    let expected = |r: f64, e: f64| 1.0 / (1.0 + 10f64.powf((e - r) / 400.0));
    // The derivative of the log-likelihood decreases in r: bisect for its zero.
    let slope = |r: f64| data.iter().map(|&(e, s, n)| s - n * expected(r, e)).sum::<f64>();
    let lowest = data.iter().map(|d| d.0).fold(f64::INFINITY, f64::min);
    let highest = data.iter().map(|d| d.0).fold(f64::NEG_INFINITY, f64::max);
    let (mut lo, mut hi) = (lowest - 4000.0, highest + 4000.0);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if slope(mid) > 0.0 { lo = mid } else { hi = mid }
    }
    let r = 0.5 * (lo + hi);
    let k = 1.0 / ELO_PER_NAT;
    let info: f64 = data.iter().map(|&(e, _, n)| n * expected(r, e) * (1.0 - expected(r, e)) * k * k).sum();
    let half = Z95 / info.sqrt();
    Some(Elo { elo: r, low95: r - half, high95: r + half })
}
