//! A game: a position plus its rules and history, which adds threefold repetition, undo and records.

use crate::action::{Action, ActionMask};
use crate::error::ActionError;
use crate::notation::{Move, NotationError};
use crate::outcome::{DrawReason, Outcome};
use crate::position::Position;
use crate::rng::Rng;
use crate::rules::Rules;
use crate::types::Color;

/// History capacity reserved up front, so that ordinary games never reallocate.
const HISTORY_CAPACITY: usize = 256;

/// A game in progress: the current [`Position`], the [`Rules`], and the positions and actions
/// that led to it. This is where the repetition rule lives, and where undo is possible.
///
/// ```
/// use morris_env::{Game, Rules, Outcome};
/// let mut game = Game::from_notation(Rules::standard(), "d6 a1 d5 a4 d7 xa1").unwrap();
/// assert_eq!(game.outcome(), Outcome::Ongoing);
/// assert_eq!(game.record(), "d6 a1 d5 a4 d7 xa1");
/// game.undo();
/// assert!(game.position().is_removal_pending());
/// ```
#[derive(Clone, Debug)]
pub struct Game {
    rules: Rules,
    position: Position,
    /// Positions before each action, oldest first (`history[i]` is the position before `actions[i]`).
    history: Vec<Position>,
    actions: Vec<Action>,
    /// Occurrences of the current position, counting this one (1 when repetition is off).
    repetitions: u32,
}

impl Game {
    /// A new game from the start position.
    pub fn new(rules: Rules) -> Game {
        Game::from_position(rules, Position::start_for(&rules))
    }

    /// A new game from any position (its history starts empty).
    pub fn from_position(rules: Rules, position: Position) -> Game {
        Game {
            rules,
            position,
            history: Vec::with_capacity(HISTORY_CAPACITY),
            actions: Vec::with_capacity(HISTORY_CAPACITY),
            repetitions: 1,
        }
    }

    /// Plays a whitespace-separated list of moves in notation from the start position.
    ///
    /// # Errors
    /// The first move that is malformed or illegal, with its ply number.
    pub fn from_notation(rules: Rules, moves: &str) -> Result<Game, NotationError> {
        let mut game = Game::new(rules);
        for (ply, text) in moves.split_whitespace().enumerate() {
            game.play_notation(text).map_err(|e| NotationError::AtPly { ply, error: Box::new(e) })?;
        }
        Ok(game)
    }

    /// Reserves room for `additional` more actions in the history, so that playing them (as a
    /// search does on a cloned game) does not reallocate.
    pub fn reserve(&mut self, additional: usize) {
        self.history.reserve(additional);
        self.actions.reserve(additional);
    }

    /// Returns to the start position, keeping the allocated history.
    pub fn reset(&mut self) {
        self.reset_to(Position::start_for(&self.rules));
    }

    /// Returns to `position` with an empty history, keeping the allocated buffers.
    pub fn reset_to(&mut self, position: Position) {
        self.position = position;
        self.history.clear();
        self.actions.clear();
        self.repetitions = 1;
    }

    /// The rules in force.
    #[inline]
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// The current position.
    #[inline]
    pub fn position(&self) -> &Position {
        &self.position
    }

    /// The player to move (see [`Position::current_player`]).
    #[inline]
    pub fn current_player(&self) -> Color {
        self.position.current_player()
    }

    /// The actions played so far.
    #[inline]
    pub fn actions(&self) -> &[Action] {
        &self.actions
    }

    /// The positions before each action, oldest first.
    #[inline]
    pub fn history(&self) -> &[Position] {
        &self.history
    }

    /// How many times the current position has occurred, counting now
    /// (always 1 when the repetition rule is off).
    #[inline]
    pub fn repetitions(&self) -> u32 {
        self.repetitions
    }

    /// The outcome under every rule in force. Wins take precedence over draws.
    #[inline]
    pub fn outcome(&self) -> Outcome {
        match self.position.outcome(&self.rules) {
            Outcome::Draw(_) | Outcome::Ongoing
                if self.rules.threefold_repetition && self.repetitions >= 3 =>
            {
                Outcome::Draw(DrawReason::ThreefoldRepetition)
            }
            other => other,
        }
    }

    /// The legal actions; empty once the game is over.
    #[inline(always)]
    pub fn legal_actions(&self) -> ActionMask {
        if self.rules.threefold_repetition && self.repetitions >= 3 {
            ActionMask::EMPTY
        } else {
            self.position.legal_actions(&self.rules)
        }
    }

    /// Applies an action.
    ///
    /// # Errors
    /// [`ActionError::GameOver`] once the game has ended, or why the action is illegal.
    /// The game is unchanged on error.
    pub fn apply(&mut self, action: Action) -> Result<(), ActionError> {
        if self.outcome().is_terminal() {
            return Err(if action.is_in_range_on(self.rules.variant.board()) {
                ActionError::GameOver
            } else {
                ActionError::OutOfRange(action)
            });
        }
        self.position.check(action, &self.rules)?;
        self.apply_unchecked(action);
        Ok(())
    }

    /// Applies an action known to be legal (from [`Game::legal_actions`]).
    #[inline(always)]
    pub fn apply_unchecked(&mut self, action: Action) {
        self.history.push(self.position);
        self.actions.push(action);
        self.position.apply_unchecked(action, &self.rules);
        self.repetitions = self.count_repetitions();
    }

    /// Takes back the last action, returning it, or `None` at the start of the history.
    pub fn undo(&mut self) -> Option<Action> {
        let prev = self.history.pop()?;
        self.position = prev;
        let action = self.actions.pop();
        self.repetitions = self.count_repetitions();
        action
    }

    /// Plays one move in notation.
    ///
    /// # Errors
    /// If it is malformed, of the wrong kind, illegal, or the game is over.
    pub fn play_notation(&mut self, text: &str) -> Result<Action, NotationError> {
        if self.outcome().is_terminal() {
            return Err(NotationError::Illegal {
                text: text.trim().to_string(),
                error: ActionError::GameOver,
                variant: self.rules.variant,
            });
        }
        let action = self.position.parse_action(text, &self.rules)?;
        self.apply_unchecked(action);
        Ok(action)
    }

    /// `action` in the position to move, in notation on the game's board (its point names,
    /// a removal when one is pending); `None` for an action out of the board's range.
    pub fn notation(&self, action: Action) -> Option<String> {
        let m = self.position.move_on(action, &self.rules)?;
        Some(m.on(self.rules.variant.board()).to_string())
    }

    /// The moves played, in notation, separated by spaces.
    pub fn record(&self) -> String {
        let moves: Vec<String> = self
            .history
            .iter()
            .zip(&self.actions)
            .filter_map(|(pos, &a)| {
                pos.move_on(a, &self.rules).map(|m: Move| m.on(self.rules.variant.board()).to_string())
            })
            .collect();
        moves.join(" ")
    }

    /// Plays up to `plies` uniformly random legal actions (fewer if the game ends first).
    pub fn play_random(&mut self, rng: &mut Rng, plies: u32) {
        for _ in 0..plies {
            let mask = self.legal_actions();
            let n = mask.count();
            if n == 0 {
                return;
            }
            if let Some(a) = mask.nth(rng.below(n)) {
                self.apply_unchecked(a);
            }
        }
    }

    /// Resets to the start position and plays `plies` uniformly random legal actions. If the
    /// game ends during the opening, the opening is replayed with the next random numbers
    /// (up to 64 times, then the start position is used).
    pub fn random_opening(&mut self, rng: &mut Rng, plies: u32) {
        for _ in 0..64 {
            self.reset();
            self.play_random(rng, plies);
            if !self.outcome().is_terminal() {
                return;
            }
        }
        self.reset();
    }

    /// Counts earlier occurrences of the current position plus this one.
    ///
    /// Only the positions since the last removal or placement can repeat the current one
    /// (removals and placements change the material for good), and every ply since then is a
    /// slide or flight, counted in `quiet_plies`, which only a removal resets: so the last
    /// `quiet_plies` entries of the history hold them all. In nine men's morris they are
    /// exactly those, since no placement happens once sliding has begun; in Lasker morris,
    /// where slides and placements mix, the stretch may reach back past placements, whose
    /// positions cannot match (between removals each player's count on the board only grows,
    /// so equal boards mean equal hands, and a board before a placement has fewer pieces).
    /// Within that stretch no removal is pending and the side to move alternates, so only
    /// every second entry can match, and comparing boards suffices. A pending position never
    /// repeats, since the removal that follows it is irreversible.
    fn count_repetitions(&self) -> u32 {
        let pos = &self.position;
        if !self.rules.threefold_repetition || pos.is_removal_pending() {
            return 1;
        }
        let len = self.history.len();
        let span = (pos.quiet_plies() as usize).min(len);
        let key = pos.board_key();
        let mut count = 1;
        let mut back = 2;
        while back <= span {
            count += (self.history[len - back].board_key() == key) as u32;
            back += 2;
        }
        count
    }
}
