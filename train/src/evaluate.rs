//! Periodic evaluation during training: the network (PUCT search, temperature 0) against fixed
//! opponents in colour-swapped pairs, all games batched into one search, and the Elo this
//! implies on the calibrated minimax ladder.

use burn::prelude::Device;
use morris_env::{Agent, Color, Game, Minimax, MinimaxConfig, RandomAgent, Rng, Rules};
use rayon::prelude::*;

use crate::mcts::{Mcts, MctsConfig, Tree};
use crate::model::PolicyValueNet;
use crate::net_evaluator::NetEvaluator;

/// Ladder ratings of the baselines under standard rules, from `eval/data/ladder.json` (random
/// anchored at 0; 3,400 games; `eval`'s tests check that the two agree).
pub const LADDER_ELO: [(&str, f64); 7] = [
    ("random", 0.0),
    ("minimax:depth=1", 947.9),
    ("minimax:depth=2", 1136.0),
    ("minimax:depth=3", 1317.6),
    ("minimax:depth=4", 1457.5),
    ("minimax:depth=5", 1539.9),
    ("minimax:depth=6", 1622.1),
];

/// Random plies before each evaluation pair, as in the ladder.
pub const OPENING_PLIES: u32 = 6;

/// A fixed evaluation opponent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opponent {
    /// Uniformly random moves.
    Random,
    /// Alpha-beta minimax to this depth (in turns).
    Minimax(u32),
}

impl Opponent {
    /// Parses `random` or `minimax:depth=D` (D in 1..=12).
    ///
    /// # Errors
    /// A message quoting the spec and the accepted forms.
    pub fn parse(spec: &str) -> Result<Opponent, String> {
        let bad = || {
            format!(
                "eval.opponents: '{spec}' is not an opponent; use random or minimax:depth=D (D in 1..=12)"
            )
        };
        if spec == "random" {
            return Ok(Opponent::Random);
        }
        let d: u32 = spec.strip_prefix("minimax:depth=").ok_or_else(bad)?.parse().map_err(|_| bad())?;
        if !(1..=12).contains(&d) {
            return Err(bad());
        }
        Ok(Opponent::Minimax(d))
    }

    /// The spec string (as `eval` writes it).
    pub fn name(&self) -> String {
        match self {
            Opponent::Random => "random".into(),
            Opponent::Minimax(d) => format!("minimax:depth={d}"),
        }
    }

    /// The opponent's ladder rating, if it is on the ladder.
    pub fn ladder_elo(&self) -> Option<f64> {
        let name = self.name();
        LADDER_ELO.iter().find(|(n, _)| *n == name).map(|&(_, e)| e)
    }

    fn agent(&self, seed: u64) -> Box<dyn Agent + Send> {
        match self {
            Opponent::Random => Box::new(RandomAgent::new(seed)),
            Opponent::Minimax(d) => {
                Box::new(Minimax::new(MinimaxConfig { seed, tt_bits: 18, ..MinimaxConfig::depth(*d) }))
            }
        }
    }
}

/// The network's results against one opponent.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchResult {
    /// The opponent.
    pub opponent: Opponent,
    /// Games the network won.
    pub wins: u32,
    /// Drawn games.
    pub draws: u32,
    /// Games the network lost.
    pub losses: u32,
    /// Mean milliseconds per network move.
    pub ms_per_move: f64,
}

impl MatchResult {
    /// Games played.
    pub fn games(&self) -> u32 {
        self.wins + self.draws + self.losses
    }

    /// The network's score: (wins + draws / 2) / games.
    pub fn score(&self) -> f64 {
        (self.wins as f64 + 0.5 * self.draws as f64) / self.games().max(1) as f64
    }
}

/// How an evaluation match is played.
#[derive(Clone, Debug)]
pub struct MatchSettings {
    /// The network's search (noise is switched off, `num_simulations` replaced by `sims`).
    pub mcts: MctsConfig,
    /// The rules.
    pub rules: Rules,
    /// Colour-swapped pairs of games.
    pub pairs: u32,
    /// Simulations per network move.
    pub sims: u32,
    /// Seed of the openings and the opponents' tie-breaks.
    pub seed: u64,
}

/// Plays `pairs` colour-swapped pairs of games, each pair from its own random opening, between
/// `model` (PUCT search with `sims` simulations, no noise, most-visited move) and `opponent`.
/// All games advance together, so each search wave is one network call.
///
/// # Errors
/// If a chosen action is illegal (a bug).
pub fn play_match(
    model: &PolicyValueNet,
    device: &Device,
    opponent: Opponent,
    settings: &MatchSettings,
) -> Result<MatchResult, String> {
    let MatchSettings { mcts, rules, pairs, sims, seed } = settings.clone();
    let n = 2 * pairs as usize;
    let mut games = Vec::with_capacity(n);
    let mut net_color = Vec::with_capacity(n);
    let mut agents = Vec::with_capacity(n);
    for p in 0..pairs as u64 {
        let mut rng = Rng::seed_from_u64(seed ^ p.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let mut g = Game::new(rules);
        g.random_opening(&mut rng, OPENING_PLIES);
        for color in [Color::White, Color::Black] {
            games.push(g.clone());
            net_color.push(color);
            agents.push(opponent.agent(rng.next_u64()));
        }
    }
    let config = MctsConfig { num_simulations: sims, root_noise: false, gumbel_noise: false, ..mcts.clone() };
    let mut trees: Vec<Tree> = games.iter().enumerate().map(|(i, g)| Tree::new(g, seed ^ i as u64)).collect();
    let mut search = Mcts::new(config.clone());
    let mut evaluator = NetEvaluator::new(model.clone(), device.clone());
    let (mut net_moves, mut net_time) = (0u64, 0.0f64);
    loop {
        // The opponents move until it is the network's turn (or the game is over).
        games.par_iter_mut().zip(agents.par_iter_mut()).zip(net_color.par_iter()).try_for_each(
            |((g, a), &c)| {
                while !g.outcome().is_terminal() && g.current_player() != c {
                    let action = a.choose(g).ok_or("the opponent found no move in an unfinished game")?;
                    g.apply(action).map_err(|e| format!("the opponent played an illegal action: {e}"))?;
                }
                Ok::<(), String>(())
            },
        )?;
        let live = games.iter().filter(|g| !g.outcome().is_terminal()).count();
        if live == 0 {
            break;
        }
        for (t, g) in trees.iter_mut().zip(&games) {
            t.sync(g, config.reuse_tree);
        }
        let start = std::time::Instant::now();
        search.search(&mut trees, &mut evaluator);
        for (t, g) in trees.iter_mut().zip(games.iter_mut()) {
            if g.outcome().is_terminal() {
                continue;
            }
            let a = t.choose_action(&config, 0.0).ok_or("the search found no move in an unfinished game")?;
            g.apply(a).map_err(|e| format!("the network chose an illegal action: {e}"))?;
        }
        net_time += start.elapsed().as_secs_f64() * 1e3 / live as f64;
        net_moves += 1;
    }
    let mut r = MatchResult {
        opponent,
        wins: 0,
        draws: 0,
        losses: 0,
        ms_per_move: net_time / net_moves.max(1) as f64,
    };
    for (g, &c) in games.iter().zip(&net_color) {
        match g.outcome().winner() {
            Some(w) if w == c => r.wins += 1,
            Some(_) => r.losses += 1,
            None => r.draws += 1,
        }
    }
    Ok(r)
}

/// The rating that best explains `results` against opponents of known ladder rating (maximum
/// likelihood under the logistic Elo model, with one virtual draw per opponent so that clean
/// sweeps stay finite), with its 95% interval from the curvature. The interval is relative to
/// the ladder's ratings (their own uncertainty is not added). `None` if no opponent is rated.
pub fn implied_elo(results: &[MatchResult]) -> Option<(f64, f64, f64)> {
    let data: Vec<(f64, f64, f64)> = results
        .iter()
        .filter_map(|r| {
            r.opponent
                .ladder_elo()
                .map(|e| (e, r.wins as f64 + 0.5 * r.draws as f64 + 0.5, r.games() as f64 + 1.0))
        })
        .collect();
    if data.is_empty() {
        return None;
    }
    let expected = |r: f64, e: f64| 1.0 / (1.0 + 10f64.powf((e - r) / 400.0));
    // The derivative of the log-likelihood is decreasing in r: bisect for its zero.
    let slope = |r: f64| data.iter().map(|&(e, s, n)| s - n * expected(r, e)).sum::<f64>();
    let (mut lo, mut hi) = (-2000.0, 5000.0);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if slope(mid) > 0.0 { lo = mid } else { hi = mid }
    }
    let r = 0.5 * (lo + hi);
    let k = 10f64.ln() / 400.0;
    let info: f64 = data.iter().map(|&(e, _, n)| n * expected(r, e) * (1.0 - expected(r, e)) * k * k).sum();
    let half = 1.96 / info.sqrt();
    Some((r, r - half, r + half))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::NetConfig;

    #[test]
    fn opponents_parse_and_reject() {
        assert_eq!(Opponent::parse("random"), Ok(Opponent::Random));
        assert_eq!(Opponent::parse("minimax:depth=3"), Ok(Opponent::Minimax(3)));
        for bad in ["minimax", "minimax:depth=0", "minimax:depth=x", "alphabeta:depth=2", "minimax:depth=99"]
        {
            assert!(Opponent::parse(bad).unwrap_err().contains(bad));
        }
        assert_eq!(Opponent::Minimax(3).ladder_elo(), Some(1317.6));
        assert_eq!(Opponent::Minimax(9).ladder_elo(), None);
    }

    #[test]
    fn implied_elo_matches_the_logistic_model() {
        let r = |d, w, dr, l| MatchResult {
            opponent: Opponent::Minimax(d),
            wins: w,
            draws: dr,
            losses: l,
            ms_per_move: 0.0,
        };
        // An even score against one opponent puts the rating on the opponent's.
        let (e, lo, hi) = implied_elo(&[r(3, 50, 0, 50)]).unwrap();
        assert!((e - 1317.6).abs() < 0.5 && lo < e && e < hi, "{e} [{lo}, {hi}]");
        // 76% (with the virtual draw) is about +200.
        let (e, ..) = implied_elo(&[r(3, 75, 1, 24)]).unwrap();
        assert!((e - 1317.6 - 200.0).abs() < 10.0, "{e}");
        // More games, narrower interval; a sweep stays finite.
        let (_, lo1, hi1) = implied_elo(&[r(2, 10, 0, 10)]).unwrap();
        let (_, lo2, hi2) = implied_elo(&[r(2, 100, 0, 100)]).unwrap();
        assert!(hi2 - lo2 < hi1 - lo1);
        assert!(implied_elo(&[r(1, 20, 0, 0)]).unwrap().0.is_finite());
        assert_eq!(implied_elo(&[r(9, 1, 0, 0)]), None);
    }

    #[test]
    fn an_untrained_network_plays_complete_games() {
        let device = Device::flex();
        let net = NetConfig { width: 16, blocks: 1, ..NetConfig::default() }.init(&device);
        let settings = MatchSettings {
            mcts: MctsConfig::default(),
            rules: Rules::standard(),
            pairs: 2,
            sims: 4,
            seed: 1,
        };
        let r = play_match(&net, &device, Opponent::Random, &settings).unwrap();
        assert_eq!(r.games(), 4);
        assert!(r.ms_per_move > 0.0);
    }
}
