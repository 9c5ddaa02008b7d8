//! The rule options in force: flying, the N-move rule, threefold repetition and the turn cap.

use serde::{Deserialize, Serialize};

/// Rule options. Everything not listed here is fixed (see `docs/rules.md`).
///
/// ```
/// use morris_env::Rules;
/// let r: Rules = toml::from_str("flying = true\nn_move_rule = 50\nthreefold_repetition = true\nturn_cap = 300").unwrap();
/// assert_eq!(r.n_move_rule, Some(50));
/// assert_eq!(Rules::openspiel().turn_cap, Some(200));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rules {
    /// A player with exactly 3 pieces on the board and none in hand may move a piece to any empty point.
    pub flying: bool,
    /// Draw after this many consecutive plies of sliding or flying with no removal; `None` turns it off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n_move_rule: Option<u32>,
    /// Draw when the same position (board, side to move, pending removal) occurs for the third time.
    pub threefold_repetition: bool,
    /// Draw once this many turns have been played (a placement or move plus its removal is one turn);
    /// `None` turns it off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_cap: Option<u32>,
}

impl Rules {
    /// The standard rules: flying on, the 100-ply N-move rule, threefold repetition, no turn cap.
    pub const fn standard() -> Rules {
        Rules { flying: true, n_move_rule: Some(100), threefold_repetition: true, turn_cap: None }
    }

    /// OpenSpiel 2.0.2's `nine_mens_morris`: flying on, no repetition or N-move rule,
    /// and a draw after 200 turns.
    pub const fn openspiel() -> Rules {
        Rules { flying: true, n_move_rule: None, threefold_repetition: false, turn_cap: Some(200) }
    }

    /// The preset with this name: `"standard"` or `"openspiel"`.
    pub fn preset(name: &str) -> Option<Rules> {
        match name {
            "standard" => Some(Rules::standard()),
            "openspiel" => Some(Rules::openspiel()),
            _ => None,
        }
    }

    /// Names accepted by [`Rules::preset`].
    pub const PRESETS: [&'static str; 2] = ["standard", "openspiel"];
}

impl Default for Rules {
    fn default() -> Rules {
        Rules::standard()
    }
}
