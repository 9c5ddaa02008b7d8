//! The report of a match from one agent's point of view: W/D/L, the score with a pair-based 95%
//! interval, the pentanomial counts of pairs, and the time per move of both sides.

use serde::{Deserialize, Serialize};

use crate::arena::GameRecord;

/// The two-sided 95% quantile of the standard normal distribution.
const Z95: f64 = crate::elo::Z95;

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
    /// For matches whose openings were valued (see `OpeningFilter`): games by the opening's
    /// value for A (won, drawn, lost) and A's result in them (win, draw, loss).
    #[serde(default)]
    pub by_opening: [[u32; 3]; 3],
}

impl MatchReport {
    /// Builds the report from the games of a match (grouped into pairs by `pair`).
    pub fn from_games(a: &str, b: &str, games: &[GameRecord]) -> MatchReport {
        let (mut wins, mut draws, mut losses) = (0, 0, 0);
        let mut pair_points: std::collections::BTreeMap<u32, f64> = Default::default();
        let (mut plies, mut ms_a, mut ms_b) = (0.0, 0.0, 0.0);
        let mut by_opening = [[0u32; 3]; 3];
        let slot = |s: f64| {
            if s > 0.75 {
                0
            } else if s < 0.25 {
                2
            } else {
                1
            }
        };
        for g in games {
            let a_is_white = g.white == a;
            let Some(ws) = g.white_score() else { continue };
            let s = if a_is_white { ws } else { 1.0 - ws };
            let opening = g.opening_value.as_deref().and_then(|v| match v {
                "1-0" => Some(1.0),
                "0-1" => Some(0.0),
                "1/2-1/2" => Some(0.5),
                _ => None,
            });
            if let Some(ow) = opening {
                let o = if a_is_white { ow } else { 1.0 - ow };
                by_opening[slot(o)][slot(s)] += 1;
            }
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
            by_opening,
        }
    }

    /// The report as text lines (with a line by the openings' values when they were valued).
    pub fn to_text(&self) -> String {
        let mut text = self.summary_text();
        if self.by_opening.iter().flatten().any(|&n| n > 0) {
            let row = |k: usize, name: &str| {
                let r = self.by_opening[k];
                format!("{name} {} (W/D/L {}/{}/{})", r.iter().sum::<u32>(), r[0], r[1], r[2])
            };
            text += &format!(
                "\n  by the opening's value for {}: {}, {}, {}",
                self.a,
                row(0, "won"),
                row(1, "drawn"),
                row(2, "lost")
            );
        }
        text
    }

    fn summary_text(&self) -> String {
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
        let half = Z95 * (var / m).sqrt();
        return ((score - half).max(0.0), (score + half).min(1.0));
    }
    let z2 = Z95 * Z95;
    let centre = (score + z2 / (2.0 * m)) / (1.0 + z2 / m);
    let half = Z95 / (1.0 + z2 / m) * (score * (1.0 - score) / m + z2 / (4.0 * m * m)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_counts_from_a_point_of_view() {
        let rec = |white: &str, black: &str, pair, result: &str| GameRecord {
            white: white.into(),
            black: black.into(),
            pair,
            opening_seed: 0,
            opening_plies: 0,
            opening_value: None,
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
        assert!(!r.to_text().contains("by the opening"), "{}", r.to_text());
        // Valued openings: counted by their value for A, with A's result in them.
        let valued = |white: &str, black: &str, pair, result: &str, value: &str| GameRecord {
            opening_value: Some(value.into()),
            ..rec(white, black, pair, result)
        };
        let games = [
            valued("A", "B", 0, "1-0", "1-0"),         // A won a won opening
            valued("B", "A", 0, "1/2-1/2", "1-0"),     // A drew a lost one
            valued("A", "B", 1, "1/2-1/2", "1/2-1/2"), // a drawn opening drawn
            valued("B", "A", 1, "1-0", "1/2-1/2"),     // A lost a drawn one
        ];
        let r = MatchReport::from_games("A", "B", &games);
        assert_eq!(r.by_opening, [[1, 0, 0], [0, 1, 1], [0, 1, 0]]);
        let text = r.to_text();
        assert!(text.contains("won 1 (W/D/L 1/0/0), drawn 2 (W/D/L 0/1/1), lost 1 (W/D/L 0/1/0)"), "{text}");
    }
}
