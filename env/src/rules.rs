//! The rule options in force: the variant (the game of the morris family), flying, the N-move
//! rule, threefold repetition and the turn cap.

use serde::{Deserialize, Serialize};

use crate::board::{Board, NINE, SIX, THREE, TWELVE};

/// The game of the morris family that rules are for: its board, its pieces and the rules that
/// set it apart (docs/rules.md): nine and twelve men's morris, morabaraba, Lasker morris, six
/// men's morris (16 points) and three men's morris (the 3 × 3 grid).
///
/// ```
/// use morris_env::{Rules, Variant};
/// assert_eq!(Rules::standard().variant, Variant::Nine);
/// assert_eq!("twelve".parse::<Variant>(), Ok(Variant::Twelve));
/// assert_eq!("six".parse::<Variant>(), Ok(Variant::Six));
/// assert_eq!("three".parse::<Variant>(), Ok(Variant::Three));
/// assert!("four".parse::<Variant>().is_err());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// Nine men's morris: the 24-point board of three squares, 9 pieces a side.
    #[default]
    Nine,
    /// Twelve men's morris: the nine board with four diagonal lines (and mills) joining the
    /// squares' corners, 12 pieces a side, and a draw when the board fills during placement.
    Twelve,
    /// Morabaraba: twelve men's morris's board, pieces and full-board draw, where closing two
    /// mills with one move earns two removals (each its own action).
    Morabaraba,
    /// Lasker morris: nine men's board, 10 pieces a side, and while a player has pieces in
    /// hand each turn either places one or slides one of their pieces on the board.
    Lasker,
    /// Six men's morris: two concentric squares (16 points) joined at their midpoints, mills
    /// only along the squares' sides, 6 pieces a side, and no flying in its preset. Its actions
    /// are numbered on its own 16 points ([`Board::num_actions`]: 272).
    Six,
    /// Three men's morris: the 3 × 3 grid (9 points; the lines are the rows, the columns and
    /// both diagonals), 3 pieces a side, placing then sliding along the lines, no flying in its
    /// preset; a line of three of one's pieces wins at once (there are no removals), and a
    /// player with no move loses. Its actions are numbered in blocks of 16
    /// ([`Board::num_actions`]: 160).
    Three,
}

impl Variant {
    /// Every variant, in the order of [`Variant::NAMES`].
    pub const ALL: [Variant; 6] =
        [Variant::Nine, Variant::Twelve, Variant::Morabaraba, Variant::Lasker, Variant::Six, Variant::Three];

    /// The names variants are written with (in files and in Python): [`Variant::name`] of each
    /// of [`Variant::ALL`].
    pub const NAMES: [&'static str; Variant::ALL.len()] = {
        let mut names = [""; Variant::ALL.len()];
        let mut i = 0;
        while i < names.len() {
            names[i] = Variant::ALL[i].name();
            i += 1;
        }
        names
    };

    /// Its number in files (shards): nine 0, twelve 1, morabaraba 2, lasker 3, six 4, three 5;
    /// a new variant takes the next.
    pub const fn id(self) -> u8 {
        match self {
            Variant::Nine => 0,
            Variant::Twelve => 1,
            Variant::Morabaraba => 2,
            Variant::Lasker => 3,
            Variant::Six => 4,
            Variant::Three => 5,
        }
    }

    /// The variant numbered `id` in files ([`Variant::id`]), if there is one.
    pub fn from_id(id: u8) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.id() == id)
    }

    /// Its name: `"nine"`, `"twelve"`, `"morabaraba"`, `"lasker"`, `"six"`, `"three"`.
    pub const fn name(self) -> &'static str {
        match self {
            Variant::Nine => "nine",
            Variant::Twelve => "twelve",
            Variant::Morabaraba => "morabaraba",
            Variant::Lasker => "lasker",
            Variant::Six => "six",
            Variant::Three => "three",
        }
    }

    /// Its board: points, lines, mills and symmetries.
    pub const fn board(self) -> &'static Board {
        match self {
            Variant::Nine | Variant::Lasker => &NINE,
            Variant::Twelve | Variant::Morabaraba => &TWELVE,
            Variant::Six => &SIX,
            Variant::Three => &THREE,
        }
    }

    /// Pieces each player starts with in hand.
    pub const fn pieces(self) -> u8 {
        match self {
            Variant::Nine => 9,
            Variant::Lasker => 10,
            Variant::Twelve | Variant::Morabaraba => 12,
            Variant::Six => 6,
            Variant::Three => 3,
        }
    }

    /// The most removals one move earns: 2 in morabaraba (one per mill a move closes, a move
    /// closing three mills earning two), none in three men's morris (a line wins), 1 elsewhere
    /// (a double mill earns one).
    pub const fn max_removals(self) -> u8 {
        match self {
            Variant::Morabaraba => 2,
            Variant::Three => 0,
            Variant::Nine | Variant::Twelve | Variant::Lasker | Variant::Six => 1,
        }
    }

    /// Whether a line of three of a player's pieces wins at once (three men's morris), instead
    /// of earning a removal.
    pub const fn line_wins(self) -> bool {
        matches!(self, Variant::Three)
    }

    /// Whether the game can end by the board itself before the move rules are asked: a full
    /// board drawn ([`Variant::full_board_draws`]) or a line won ([`Variant::line_wins`]). One
    /// test on the outcome's path for both.
    pub const fn ends_on_the_board(self) -> bool {
        self.full_board_draws() || self.line_wins()
    }

    /// Whether the game is drawn when both hands are empty and the board is full (no mill was
    /// closed while placing, so nobody can move).
    pub const fn full_board_draws(self) -> bool {
        matches!(self, Variant::Twelve | Variant::Morabaraba)
    }

    /// Whether a player with pieces in hand may slide a piece on the board instead of placing
    /// (Lasker morris).
    pub const fn slides_while_placing(self) -> bool {
        matches!(self, Variant::Lasker)
    }

    /// Whether the variant's board has fewer points than the 24 of nine men's morris (six and
    /// three men's morris), so that its actions are numbered on its own points
    /// ([`Board::num_actions`]).
    pub const fn is_small_board(self) -> bool {
        matches!(self, Variant::Six | Variant::Three)
    }

    /// Whether this is nine men's morris (files leave the variant out then, so that they read
    /// as they did before variants existed).
    pub const fn is_nine(&self) -> bool {
        matches!(self, Variant::Nine)
    }
}

impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A variant name that is not one of [`Variant::NAMES`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown variant '{name}' (variants: {})", Variant::NAMES.join(", "))]
pub struct UnknownVariant {
    /// The name given.
    pub name: String,
}

impl std::str::FromStr for Variant {
    type Err = UnknownVariant;

    fn from_str(name: &str) -> Result<Variant, UnknownVariant> {
        Variant::ALL
            .into_iter()
            .find(|v| v.name() == name)
            .ok_or_else(|| UnknownVariant { name: name.into() })
    }
}

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
    /// The game of the morris family (left out of files for nine men's morris, the default).
    #[serde(default, skip_serializing_if = "Variant::is_nine")]
    pub variant: Variant,
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
        Rules {
            variant: Variant::Nine,
            flying: true,
            n_move_rule: Some(100),
            threefold_repetition: true,
            turn_cap: None,
        }
    }

    /// OpenSpiel 2.0.2's `nine_mens_morris`: flying on, no repetition or N-move rule,
    /// and a draw after 200 turns.
    pub const fn openspiel() -> Rules {
        Rules {
            variant: Variant::Nine,
            flying: true,
            n_move_rule: None,
            threefold_repetition: false,
            turn_cap: Some(200),
        }
    }

    /// Twelve men's morris under the standard draw rules (flying on, the 100-ply N-move rule,
    /// threefold repetition, no turn cap): the preset `twelve`.
    pub const fn twelve() -> Rules {
        Rules { variant: Variant::Twelve, ..Rules::standard() }
    }

    /// Morabaraba under the standard draw rules: the preset `morabaraba`.
    pub const fn morabaraba() -> Rules {
        Rules { variant: Variant::Morabaraba, ..Rules::standard() }
    }

    /// Lasker morris under the standard draw rules: the preset `lasker`.
    pub const fn lasker() -> Rules {
        Rules { variant: Variant::Lasker, ..Rules::standard() }
    }

    /// Six men's morris under the standard draw rules, without flying (a player with 2 pieces or
    /// no move loses; a player with 3 slides as before): the preset `six`.
    pub const fn six() -> Rules {
        Rules { variant: Variant::Six, flying: false, ..Rules::standard() }
    }

    /// Three men's morris under the standard draw rules, without flying (a piece slides along a
    /// line to an adjacent empty point): the preset `three`.
    pub const fn three() -> Rules {
        Rules { variant: Variant::Three, flying: false, ..Rules::standard() }
    }

    /// A variant's own rules under the standard draw rules: [`Rules::standard`] for nine men's
    /// morris, and the preset of the variant's name for the others (six and three men's morris
    /// without flying, the rest with it).
    pub const fn of(variant: Variant) -> Rules {
        match variant {
            Variant::Six => Rules::six(),
            Variant::Three => Rules::three(),
            _ => Rules { variant, ..Rules::standard() },
        }
    }

    /// These rules' draw rules (the N-move rule, threefold repetition, the turn cap) for
    /// `variant`, which keeps its own flying ([`Rules::of`]): how a variant named on top of a
    /// preset is played.
    ///
    /// ```
    /// use morris_env::{Rules, Variant};
    /// assert_eq!(Rules::standard().for_variant(Variant::Six), Rules::six());
    /// let twelve = Rules::openspiel().for_variant(Variant::Twelve);
    /// assert_eq!((twelve.variant, twelve.turn_cap, twelve.flying), (Variant::Twelve, Some(200), true));
    /// ```
    pub const fn for_variant(self, variant: Variant) -> Rules {
        Rules {
            n_move_rule: self.n_move_rule,
            threefold_repetition: self.threefold_repetition,
            turn_cap: self.turn_cap,
            ..Rules::of(variant)
        }
    }

    /// The preset with this name: `"standard"`, `"openspiel"`, or a variant's name other than
    /// nine's ([`Rules::of`] that variant).
    pub fn preset(name: &str) -> Option<Rules> {
        match name {
            "standard" => Some(Rules::standard()),
            "openspiel" => Some(Rules::openspiel()),
            _ => name.parse::<Variant>().ok().filter(|v| !v.is_nine()).map(Rules::of),
        }
    }

    /// Names accepted by [`Rules::preset`]: nine men's morris's two, then one per other variant
    /// (under the standard draw rules), in the order of [`Variant::ALL`].
    pub const PRESETS: [&'static str; Variant::ALL.len() + 1] = {
        let mut names = [""; Variant::ALL.len() + 1];
        names[0] = "standard";
        names[1] = "openspiel";
        // Nine comes first in `Variant::ALL` and is played by the two above.
        assert!(Variant::ALL[0].is_nine());
        let mut i = 1;
        while i < Variant::ALL.len() {
            names[i + 1] = Variant::ALL[i].name();
            i += 1;
        }
        names
    };
}

impl Default for Rules {
    fn default() -> Rules {
        Rules::standard()
    }
}
