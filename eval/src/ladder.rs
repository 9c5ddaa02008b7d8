//! The calibrated ladder (`eval/data/ladder.json`): random play and minimax depths 1–6 rated
//! against each other under standard rules, the scale on which checkpoints get their Elo.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::arena::GameRecord;
use crate::elo::{Elo, EloTable};
use crate::error::{EvalError, Result};
use crate::report::MatchReport;

/// The ladder shipped with the lab (written by `eval ladder`, 3,400 games).
const CALIBRATED: &str = include_str!("../data/ladder.json");

/// A ladder file: how it was played, each rung's rating and time per move, and the pairings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ladder {
    /// The rules preset.
    pub rules: String,
    /// Random plies before each pair's games.
    pub opening_plies: u32,
    /// The seed of the matches.
    pub seed: u64,
    /// The rungs, as fitted.
    pub players: Vec<Rung>,
    /// The matches played, from the stronger rung's point of view.
    pub pairings: Vec<MatchReport>,
}

/// One rung of the ladder. In JSON the interval's ends are `lower95` and `upper95`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "RungRecord", into = "RungRecord")]
pub struct Rung {
    /// The agent spec, e.g. `minimax:depth=3`.
    pub name: String,
    /// Its rating (random = 0) with the 95% interval.
    pub elo: Elo,
    /// Standard error of the rating.
    pub std_error: f64,
    /// Games it played.
    pub games: u32,
    /// Mean milliseconds per move.
    pub ms_per_move: f64,
}

/// [`Rung`] as it is written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct RungRecord {
    name: String,
    elo: f64,
    std_error: f64,
    lower95: f64,
    upper95: f64,
    games: u32,
    ms_per_move: f64,
}

impl From<RungRecord> for Rung {
    fn from(r: RungRecord) -> Rung {
        let elo = Elo { elo: r.elo, low95: r.lower95, high95: r.upper95 };
        Rung { name: r.name, elo, std_error: r.std_error, games: r.games, ms_per_move: r.ms_per_move }
    }
}

impl From<Rung> for RungRecord {
    fn from(r: Rung) -> RungRecord {
        RungRecord {
            name: r.name,
            elo: r.elo.elo,
            std_error: r.std_error,
            lower95: r.elo.low95,
            upper95: r.elo.high95,
            games: r.games,
            ms_per_move: r.ms_per_move,
        }
    }
}

impl Ladder {
    /// The ladder shipped with the lab (`eval/data/ladder.json`).
    pub fn calibrated() -> Ladder {
        // The file is part of the source and a test parses it; a broken one is a build defect.
        serde_json::from_str(CALIBRATED)
            .unwrap_or_else(|e| panic!("eval/data/ladder.json is not a ladder: {e}"))
    }

    /// Reads a ladder written by `eval ladder`.
    ///
    /// # Errors
    /// [`EvalError::Io`] if unreadable, [`EvalError::Corrupt`] if it is not a ladder.
    pub fn read(path: &Path) -> Result<Ladder> {
        let text = std::fs::read_to_string(path).map_err(|e| EvalError::io("read", path, e))?;
        serde_json::from_str(&text).map_err(|e| EvalError::Corrupt {
            path: path.to_path_buf(),
            reason: format!("not a ladder: {e}"),
        })
    }

    /// The ladder of a finished calibration: the fitted `table`, the time per move of each
    /// player over `games`, and how the matches were played.
    pub fn new(
        table: &EloTable,
        games: &[GameRecord],
        rules: &str,
        opening_plies: u32,
        seed: u64,
        pairings: Vec<MatchReport>,
    ) -> Ladder {
        let mut time: BTreeMap<&str, (f64, f64)> = BTreeMap::new();
        for g in games {
            for (name, ms) in [(&g.white, g.ms_per_move[0]), (&g.black, g.ms_per_move[1])] {
                let e = time.entry(name.as_str()).or_default();
                e.0 += ms;
                e.1 += 1.0;
            }
        }
        let players = table
            .ratings
            .iter()
            .map(|r| Rung {
                name: r.name.clone(),
                elo: r.elo,
                std_error: r.std_error,
                games: r.games,
                ms_per_move: time.get(r.name.as_str()).map_or(0.0, |(s, n)| s / n.max(1.0)),
            })
            .collect();
        Ladder { rules: rules.into(), opening_plies, seed, players, pairings }
    }

    /// The rating of the rung called `name` (an agent spec), if it is on the ladder.
    pub fn rating(&self, name: &str) -> Option<f64> {
        self.players.iter().find(|p| p.name == name).map(|p| p.elo.elo)
    }

    /// The minimax rungs as `(minimax dD, elo)`, weakest first (reference lines of plots).
    pub fn minimax_levels(&self) -> Vec<(String, f64)> {
        let mut out: Vec<(String, f64)> = self
            .players
            .iter()
            .filter_map(|p| Some((format!("minimax d{}", p.name.strip_prefix("minimax:depth=")?), p.elo.elo)))
            .collect();
        out.sort_by(|a, b| a.1.total_cmp(&b.1));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_calibrated_ladder_reads_and_is_ordered() {
        let ladder = Ladder::calibrated();
        assert_eq!((ladder.rules.as_str(), ladder.opening_plies), ("standard", 6));
        assert_eq!(ladder.rating("random"), Some(0.0));
        let depths: Vec<f64> =
            (1..=6).map(|d| ladder.rating(&format!("minimax:depth={d}")).unwrap()).collect();
        assert!(depths.windows(2).all(|w| w[0] < w[1]), "{depths:?}");
        assert!((depths[2] - 1317.55).abs() < 0.1, "{depths:?}");
        assert_eq!(ladder.minimax_levels().len(), 6);
        assert_eq!(ladder.rating("minimax:depth=7"), None);
        // Written back, it reads the same (the file format round-trips).
        let text = serde_json::to_string(&ladder).unwrap();
        assert!(text.contains("\"lower95\"") && !text.contains("low95"));
        assert_eq!(serde_json::from_str::<Ladder>(&text).unwrap(), ladder);
    }
}
