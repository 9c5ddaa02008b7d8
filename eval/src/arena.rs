//! The arena: colour-swapped game pairs from shared random openings, run in parallel, with
//! per-game JSON records and a match report (W/D/L, score interval, pentanomial counts).

use std::time::Instant;

use morris_env::{Agent, Color, Game, Outcome, Rng, Rules};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::agents::AgentSpec;

/// One finished game, as written to the JSONL record (one object per line).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRecord {
    /// Spec of the White player.
    pub white: String,
    /// Spec of the Black player.
    pub black: String,
    /// Index of the pair in its match; both games of a pair share the opening.
    pub pair: u32,
    /// Seed of the random opening.
    pub opening_seed: u64,
    /// Number of random opening plies.
    pub opening_plies: u32,
    /// Rules preset name, or `custom`.
    pub rules: String,
    /// All moves in notation, opening included.
    pub moves: Vec<String>,
    /// `1-0`, `0-1` or `1/2-1/2`.
    pub result: String,
    /// Why the game ended, e.g. `White wins (opponent reduced to 2 pieces)`.
    pub reason: String,
    /// Plies played by the agents (after the opening).
    pub plies: u32,
    /// Mean thinking time per move of White and of Black, in milliseconds.
    pub ms_per_move: [f64; 2],
}

impl GameRecord {
    /// White's score: 1, 0.5 or 0; `None` for a malformed result.
    pub fn white_score(&self) -> Option<f64> {
        match self.result.as_str() {
            "1-0" => Some(1.0),
            "0-1" => Some(0.0),
            "1/2-1/2" => Some(0.5),
            _ => None,
        }
    }
}

/// Settings of a match.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchConfig {
    /// Number of colour-swapped pairs.
    pub pairs: u32,
    /// Random plies before the agents take over (the same for both games of a pair).
    pub opening_plies: u32,
    /// Seed of everything random: pair `i` uses openings and agent seeds derived from it.
    pub seed: u64,
    /// Rules of the games.
    pub rules: Rules,
}

/// A stable, well-mixed seed for item `i` of stream `stream` under the match seed.
pub fn derive_seed(seed: u64, stream: u64, i: u64) -> u64 {
    let mut r = Rng::seed_from_u64(seed ^ stream.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ i.rotate_left(32));
    r.next_u64()
}

fn rules_name(rules: &Rules) -> String {
    Rules::PRESETS
        .iter()
        .find(|&&n| Rules::preset(n).as_ref() == Some(rules))
        .map_or_else(|| "custom".to_string(), |n| n.to_string())
}

/// Plays one game between two agents from a random opening of `opening_plies` plies.
pub fn play_game(
    white: &mut dyn Agent,
    black: &mut dyn Agent,
    rules: Rules,
    opening_seed: u64,
    opening_plies: u32,
) -> (Game, [f64; 2], [u32; 2]) {
    let mut game = Game::new(rules);
    game.random_opening(&mut Rng::seed_from_u64(opening_seed), opening_plies);
    white.reset();
    black.reset();
    let mut seconds = [0.0f64; 2];
    let mut moves = [0u32; 2];
    while !game.outcome().is_terminal() {
        let side = game.current_player();
        let agent: &mut dyn Agent = if side == Color::White { &mut *white } else { &mut *black };
        let t = Instant::now();
        let choice = agent.choose(&game);
        seconds[side.index()] += t.elapsed().as_secs_f64();
        moves[side.index()] += 1;
        // An agent that returns nothing or an illegal action forfeits the game.
        let legal = choice.is_some_and(|a| game.apply(a).is_ok());
        if !legal {
            break;
        }
    }
    (game, seconds, moves)
}

/// The result and its reason; a game that stopped while ongoing was forfeited by the player to move.
fn result_and_reason(game: &Game) -> (String, String) {
    match game.outcome() {
        Outcome::Win { winner: Color::White, .. } => ("1-0".into(), game.outcome().to_string()),
        Outcome::Win { winner: Color::Black, .. } => ("0-1".into(), game.outcome().to_string()),
        Outcome::Draw(_) => ("1/2-1/2".into(), game.outcome().to_string()),
        Outcome::Ongoing => {
            // The game stopped early: the player to move made no legal move.
            let loser = game.current_player();
            let result = if loser == Color::White { "0-1" } else { "1-0" };
            (result.into(), format!("{} wins ({loser} made no legal move)", loser.opponent()))
        }
    }
}

/// Plays game `g` (0 or 1) of pair `pair`: in game 0 `a` is White, in game 1 `b` is.
pub fn play_pair_game(a: &AgentSpec, b: &AgentSpec, config: &MatchConfig, pair: u32, g: u32) -> GameRecord {
    let opening_seed = derive_seed(config.seed, 1, pair as u64);
    let (ws, bs) = if g == 0 { (a, b) } else { (b, a) };
    let mut white = ws.build(derive_seed(config.seed, 2, 2 * pair as u64 + g as u64));
    let mut black = bs.build(derive_seed(config.seed, 3, 2 * pair as u64 + g as u64));
    let (game, seconds, moves) =
        play_game(white.as_mut(), black.as_mut(), config.rules, opening_seed, config.opening_plies);
    let (result, reason) = result_and_reason(&game);
    let notation: Vec<String> = game.record().split_whitespace().map(str::to_string).collect();
    let ms = |c: usize| if moves[c] == 0 { 0.0 } else { 1000.0 * seconds[c] / moves[c] as f64 };
    GameRecord {
        white: ws.name(),
        black: bs.name(),
        pair,
        opening_seed,
        opening_plies: config.opening_plies,
        rules: rules_name(&config.rules),
        plies: moves[0] + moves[1],
        moves: notation,
        result,
        reason,
        ms_per_move: [ms(0), ms(1)],
    }
}

/// Summary of a match from the point of view of agent `a`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchReport {
    /// Spec of agent A.
    pub a: String,
    /// Spec of agent B.
    pub b: String,
    /// A's wins, draws and losses.
    pub wins: u32,
    /// Draws.
    pub draws: u32,
    /// A's losses.
    pub losses: u32,
    /// A's score fraction.
    pub score: f64,
    /// 95% interval of A's score fraction, from the variance of pair scores (pentanomial).
    pub score_low: f64,
    /// Upper end of that interval.
    pub score_high: f64,
    /// Pairs in which A scored 0, 0.5, 1, 1.5 and 2 points.
    pub pentanomial: [u32; 5],
    /// Mean plies per game (after the opening).
    pub mean_plies: f64,
    /// Mean thinking time per move of A and of B, in milliseconds.
    pub ms_per_move: [f64; 2],
}

impl MatchReport {
    /// Builds the report from the games of a match (grouped into pairs by `pair`).
    pub fn from_games(a: &str, b: &str, games: &[GameRecord]) -> MatchReport {
        let (mut wins, mut draws, mut losses) = (0, 0, 0);
        let mut pair_points: std::collections::BTreeMap<u32, f64> = Default::default();
        let (mut plies, mut ms_a, mut ms_b) = (0.0, 0.0, 0.0);
        for g in games {
            let a_is_white = g.white == a;
            let Some(ws) = g.white_score() else { continue };
            let s = if a_is_white { ws } else { 1.0 - ws };
            if s > 0.75 {
                wins += 1;
            } else if s < 0.25 {
                losses += 1;
            } else {
                draws += 1;
            }
            *pair_points.entry(g.pair).or_default() += s;
            plies += g.plies as f64;
            let (ma, mb) = if a_is_white {
                (g.ms_per_move[0], g.ms_per_move[1])
            } else {
                (g.ms_per_move[1], g.ms_per_move[0])
            };
            ms_a += ma;
            ms_b += mb;
        }
        let n = games.len().max(1) as f64;
        let mut pentanomial = [0u32; 5];
        for &p in pair_points.values() {
            pentanomial[((p * 2.0).round() as usize).min(4)] += 1;
        }
        // Pair scores as fractions in [0, 1]; their spread gives the interval (pairs, not games,
        // are the independent samples). When every pair scored the same the spread is zero, so
        // the Wilson interval over pairs is used instead, which stays honest at 0% and 100%.
        let fractions: Vec<f64> = pair_points.values().map(|p| p / 2.0).collect();
        let score = (wins as f64 + 0.5 * draws as f64) / n;
        let (score_low, score_high) = score_interval(&fractions, score);
        MatchReport {
            a: a.to_string(),
            b: b.to_string(),
            wins,
            draws,
            losses,
            score,
            score_low,
            score_high,
            pentanomial,
            mean_plies: plies / n,
            ms_per_move: [ms_a / n, ms_b / n],
        }
    }

    /// The report as text lines.
    pub fn to_text(&self) -> String {
        let elo = |s: f64| {
            if s <= 0.0 {
                f64::NEG_INFINITY
            } else if s >= 1.0 {
                f64::INFINITY
            } else {
                -400.0 * (1.0 / s - 1.0).log10()
            }
        };
        format!(
            "{} vs {}\n  games {}  W/D/L {}/{}/{}  score {:.1}% [{:.1}%, {:.1}%] (95%, pair-based)  Elo diff {:+.0} [{:+.0}, {:+.0}]\n  pentanomial (pairs scoring 0, 0.5, 1, 1.5, 2): {:?}\n  mean plies {:.1}  ms/move: {} {:.2}, {} {:.2}",
            self.a,
            self.b,
            self.wins + self.draws + self.losses,
            self.wins,
            self.draws,
            self.losses,
            100.0 * self.score,
            100.0 * self.score_low,
            100.0 * self.score_high,
            elo(self.score),
            elo(self.score_low),
            elo(self.score_high),
            self.pentanomial,
            self.mean_plies,
            self.a,
            self.ms_per_move[0],
            self.b,
            self.ms_per_move[1],
        )
    }
}

/// 95% interval of a score from per-pair score fractions: normal approximation with the sample
/// variance of the pairs, or the Wilson interval when that variance is zero.
fn score_interval(fractions: &[f64], score: f64) -> (f64, f64) {
    const Z: f64 = 1.959964;
    let m = fractions.len() as f64;
    if fractions.is_empty() {
        return (0.0, 1.0);
    }
    let mean = fractions.iter().sum::<f64>() / m;
    let var = if fractions.len() > 1 {
        fractions.iter().map(|f| (f - mean).powi(2)).sum::<f64>() / (m - 1.0)
    } else {
        0.0
    };
    if var > 0.0 {
        let half = Z * (var / m).sqrt();
        return ((score - half).max(0.0), (score + half).min(1.0));
    }
    let z2 = Z * Z;
    let centre = (score + z2 / (2.0 * m)) / (1.0 + z2 / m);
    let half = Z / (1.0 + z2 / m) * (score * (1.0 - score) / m + z2 / (4.0 * m * m)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// Plays a match of `config.pairs` colour-swapped pairs in parallel (rayon's pool). `on_game` is
/// called as each game finishes (from worker threads), e.g. to write records and tick a bar.
/// Returns the games ordered by pair and game.
pub fn play_match<F>(a: &AgentSpec, b: &AgentSpec, config: &MatchConfig, on_game: F) -> Vec<GameRecord>
where
    F: Fn(&GameRecord) + Sync,
{
    (0..config.pairs * 2)
        .into_par_iter()
        .with_max_len(1)
        .map(|i| {
            let rec = play_pair_game(a, b, config, i / 2, i % 2);
            on_game(&rec);
            rec
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(pairs: u32) -> MatchConfig {
        MatchConfig { pairs, opening_plies: 4, seed: 42, rules: Rules::standard() }
    }

    #[test]
    fn pairs_share_openings_and_swap_colours() {
        let a = AgentSpec::parse("random").unwrap();
        let b = AgentSpec::parse("minimax:depth=1").unwrap();
        let games = play_match(&a, &b, &config(3), |_| {});
        assert_eq!(games.len(), 6);
        for pair in games.chunks(2) {
            assert_eq!(pair[0].opening_seed, pair[1].opening_seed);
            assert_eq!(pair[0].moves[..4], pair[1].moves[..4]);
            assert_eq!((pair[0].white.as_str(), pair[1].white.as_str()), ("random", "minimax:depth=1"));
        }
    }

    #[test]
    fn seeds_reproduce_the_same_games() {
        let a = AgentSpec::parse("minimax:depth=2").unwrap();
        let b = AgentSpec::parse("random").unwrap();
        let strip = |g: Vec<GameRecord>| g.into_iter().map(|r| (r.moves, r.result)).collect::<Vec<_>>();
        let one = strip(play_match(&a, &b, &config(2), |_| {}));
        let two = strip(play_match(&a, &b, &config(2), |_| {}));
        assert_eq!(one, two);
        let other = strip(play_match(&a, &b, &MatchConfig { seed: 43, ..config(2) }, |_| {}));
        assert_ne!(one, other);
    }

    #[test]
    fn report_counts_from_a_point_of_view() {
        let rec = |white: &str, black: &str, pair, result: &str| GameRecord {
            white: white.into(),
            black: black.into(),
            pair,
            opening_seed: 0,
            opening_plies: 0,
            rules: "standard".into(),
            moves: vec![],
            result: result.into(),
            reason: String::new(),
            plies: 10,
            ms_per_move: [1.0, 2.0],
        };
        let games = [
            rec("A", "B", 0, "1-0"),
            rec("B", "A", 0, "1-0"),
            rec("A", "B", 1, "1/2-1/2"),
            rec("B", "A", 1, "0-1"),
        ];
        let r = MatchReport::from_games("A", "B", &games);
        assert_eq!((r.wins, r.draws, r.losses), (2, 1, 1));
        assert_eq!(r.pentanomial, [0, 0, 1, 1, 0]);
        assert!((r.score - 0.625).abs() < 1e-12);
        assert!(r.score_low < r.score && r.score < r.score_high);
        // A clean sweep still has an interval of positive width.
        let sweep = [
            rec("A", "B", 0, "1-0"),
            rec("B", "A", 0, "0-1"),
            rec("A", "B", 1, "1-0"),
            rec("B", "A", 1, "0-1"),
        ];
        let r = MatchReport::from_games("A", "B", &sweep);
        assert_eq!(r.score, 1.0);
        assert!(r.score_low > 0.2 && r.score_low < 0.9, "{}", r.score_low);
        assert!(r.to_text().contains("+inf"), "{}", r.to_text());
    }
}
