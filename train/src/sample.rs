//! One training example as self-play produces it, the replay window samples it and a game shard
//! stores it: the position, its policy target, the game's outcome and the search's value.

use morris_env::{Action, Position};

/// One training position.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// The position (with its counters).
    pub position: Position,
    /// Occurrences of the position in its game, counting it.
    pub repetitions: u8,
    /// Sparse policy target over legal actions.
    pub policy: Vec<(Action, f32)>,
    /// Final result for the player to move: 1 win, 0 draw, −1 loss.
    pub outcome: i8,
    /// Whether the move got a full search (so `policy` is a training target); cheap searches
    /// from playout-cap randomization still give a value target.
    pub full_search: bool,
    /// The root's mean value after the move's search, for the player to move (−1 to 1): a value
    /// target that [`crate::config::ReplayConfig::search_value_weight`] can mix with `outcome`.
    /// `None` in shards written before format version 4.
    pub search_value: Option<f32>,
}

impl Sample {
    /// The win/draw/loss target for the player to move: `1 − weight` of the game's outcome
    /// (one-hot) plus `weight` of the search value `q` as `(max(q, 0), 1 − |q|, max(−q, 0))`, the
    /// distribution of mean `q` with the most draw mass. Without a search value (an older shard)
    /// or with `weight` 0 it is the outcome alone.
    pub fn value_target(&self, weight: f32) -> [f32; 3] {
        let mut wdl = [0.0; 3];
        let k = match self.outcome {
            1 => 0,
            0 => 1,
            _ => 2,
        };
        wdl[k] = 1.0;
        match self.search_value {
            Some(q) if weight > 0.0 => {
                let q = q.clamp(-1.0, 1.0);
                let searched = [q.max(0.0), 1.0 - q.abs(), (-q).max(0.0)];
                std::array::from_fn(|i| (1.0 - weight) * wdl[i] + weight * searched[i])
            }
            _ => wdl,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(outcome: i8, search_value: Option<f32>) -> Sample {
        Sample {
            position: Position::default(),
            repetitions: 1,
            policy: Vec::new(),
            outcome,
            full_search: false,
            search_value,
        }
    }

    #[test]
    fn the_value_target_mixes_the_outcome_with_the_search_value() {
        assert_eq!(sample(1, Some(-0.5)).value_target(0.0), [1.0, 0.0, 0.0]);
        assert_eq!(sample(-1, None).value_target(0.5), [0.0, 0.0, 1.0]);
        assert_eq!(sample(0, Some(0.5)).value_target(1.0), [0.5, 0.5, 0.0]);
        assert_eq!(sample(0, Some(-1.0)).value_target(1.0), [0.0, 0.0, 1.0]);
        let t = sample(1, Some(-0.5)).value_target(0.5);
        assert_eq!(t, [0.5, 0.25, 0.25]);
        // A distribution whose mean is the mix of the two values.
        assert!((t.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!((t[0] - t[2] - (0.5 * 1.0 + 0.5 * -0.5)).abs() < 1e-6);
    }
}
