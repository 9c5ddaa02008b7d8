//! The perfect player: an agent that keeps the exact value of every position, from the tables
//! in the moving phase and from the placement solver while pieces are in hand.

use super::{NINE, Placement, SharedTablebase, Tablebase, TablebaseError, Wdl};
use crate::action::Action;
use crate::agent::Agent;
use crate::game::Game;
use crate::outcome::Outcome;
use crate::position::Position;
use crate::rng::Rng;

/// How the perfect player chooses among the moves that keep the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Pick {
    /// The quickest win, the slowest loss, and among drawing moves the one that leaves the
    /// opponent the largest share of losing replies (the most winning chances); ties are drawn
    /// with the seed. With pieces in hand the solver has no distances: a seeded draw among the
    /// moves that keep the value, as with [`Pick::Random`].
    #[default]
    Best,
    /// A seeded draw among the moves that keep the value. A won position still takes one of
    /// its quickest wins, since only a move that brings the next removal closer is sure to
    /// win under the N-move and repetition rules.
    Random,
}

impl Pick {
    /// `"best"` or `"random"`, as in agent specs.
    pub const fn name(self) -> &'static str {
        match self {
            Pick::Best => "best",
            Pick::Random => "random",
        }
    }
}

/// An agent that never gives away the value of a position: with complete tables (every sector
/// up to 9 pieces a side) it never loses a drawn or won game, and wins every won one.
///
/// Outside what the tables cover (a sector not built), it gives no move and names the missing
/// sector in [`Agent::forfeit_reason`].
pub struct PerfectPlayer {
    tb: SharedTablebase,
    pick: Pick,
    rng: Rng,
    error: Option<String>,
}

impl PerfectPlayer {
    /// A perfect player on `tb`, choosing among value-keeping moves by `pick` with the seed.
    pub fn new(tb: SharedTablebase, pick: Pick, seed: u64) -> PerfectPlayer {
        PerfectPlayer { tb, pick, rng: Rng::seed_from_u64(seed), error: None }
    }

    /// The action to play, `Ok(None)` in a finished game.
    ///
    /// # Errors
    /// [`TablebaseError::RulesMismatch`] if the game's rules are not the tables',
    /// `MissingSector` or `NotCovered` for a position the tables cannot solve.
    pub fn select(&mut self, game: &Game) -> Result<Option<Action>, TablebaseError> {
        if game.outcome().is_terminal() {
            return Ok(None);
        }
        self.tb.check_rules(game.rules())?;
        let pos = *game.position();
        let tb: &Tablebase = &self.tb;
        let choice = if pos.in_hand(crate::Color::White) == 0 && pos.in_hand(crate::Color::Black) == 0 {
            tb.require(&pos)?;
            moving_choice(tb, game, self.pick, &mut self.rng)?
        } else {
            placement_choice(&tb.placement(), &pos, None, &mut self.rng)?
        };
        Ok(Some(choice))
    }
}

impl Agent for PerfectPlayer {
    fn name(&self) -> String {
        format!("perfect:tb={},pick={}", self.tb.dir().display(), self.pick.name())
    }

    fn choose(&mut self, game: &Game) -> Option<Action> {
        match self.select(game) {
            Ok(a) => {
                self.error = None;
                a
            }
            Err(e) => {
                self.error = Some(e.to_string());
                None
            }
        }
    }

    fn forfeit_reason(&self) -> Option<String> {
        self.error.clone()
    }
}

/// A moving-phase choice from the tables' values of every move.
fn moving_choice(tb: &Tablebase, game: &Game, pick: Pick, rng: &mut Rng) -> Result<Action, TablebaseError> {
    let pos = game.position();
    let moves = tb.moves(pos).ok_or_else(|| TablebaseError::NotCovered("a move leaves the tables".into()))?;
    let best = moves.first().ok_or_else(|| TablebaseError::NotCovered("no legal move".into()))?.1;
    let mut tied: Vec<Action> = match (best.wdl, pick) {
        // The quickest wins, the slowest losses (Best); every drawing or losing move (Random).
        (Wdl::Win, _) | (Wdl::Loss, Pick::Best) => {
            moves.iter().take_while(|(_, p)| p.preference() == best.preference()).map(|m| m.0).collect()
        }
        _ => moves.iter().filter(|(_, p)| p.wdl == best.wdl).map(|m| m.0).collect(),
    };
    if best.wdl == Wdl::Win {
        // A quickest win never repeats a position of its own line, but it may meet one from
        // earlier in the game a third time: keep the moves that do not end the game drawn.
        let mut g = game.clone();
        let open: Vec<Action> = tied
            .iter()
            .copied()
            .filter(|&a| {
                g.apply_unchecked(a);
                let drawn = matches!(g.outcome(), Outcome::Draw(_));
                g.undo();
                !drawn
            })
            .collect();
        if !open.is_empty() {
            tied = open;
        }
    }
    if best.wdl == Wdl::Draw && pick == Pick::Best {
        let me = pos.current_player();
        let scored: Vec<(f64, Action)> = tied
            .iter()
            .map(|&a| {
                let mut child = *pos;
                child.apply_unchecked(a, &NINE);
                (winning_chances(tb, &child, me), a)
            })
            .collect();
        let top = scored.iter().map(|s| s.0).fold(f64::MIN, f64::max);
        tied = scored.iter().filter(|s| s.0 == top).map(|s| s.1).collect();
    }
    Ok(tied[rng.below(tied.len() as u32) as usize])
}

/// The share of the opponent's replies in `child` that lose for them (after `me`'s best
/// drawing removal, when `child` has one pending).
fn winning_chances(tb: &Tablebase, child: &Position, me: crate::Color) -> f64 {
    if child.outcome(&tb.rules()).is_terminal() {
        return 0.0;
    }
    let Some(moves) = tb.moves(child) else { return 0.0 };
    if child.current_player() == me {
        // A removal to make: the best chances among the removals that keep the draw.
        return moves
            .iter()
            .filter(|(_, p)| p.wdl == Wdl::Draw)
            .map(|&(r, _)| {
                let mut after = *child;
                after.apply_unchecked(r, &NINE);
                winning_chances(tb, &after, me)
            })
            .fold(0.0, f64::max);
    }
    let losing = moves.iter().filter(|(_, p)| p.wdl == Wdl::Loss).count();
    losing as f64 / moves.len().max(1) as f64
}

/// A choice with pieces in hand: `prefer` if it keeps the position's value, else the actions in
/// a seeded random order, each tested against the value with a null-window search, and the
/// first that keeps it played. The first keeper of a uniformly random order is a uniformly
/// random keeper, so this is the same choice as testing every action and drawing among the
/// keepers, at the cost of one or two searches when most actions keep the value (as in most
/// drawn placement positions). The placement solver has no distances, so [`Pick::Best`] plays
/// the same way here: a won position is won by any winning action, and it converts in the
/// moving phase, where the tables have distances.
pub(crate) fn placement_choice(
    solver: &Placement<'_>,
    pos: &Position,
    prefer: Option<Action>,
    rng: &mut Rng,
) -> Result<Action, TablebaseError> {
    let value = solver.value(pos)?;
    let rules = solver.tablebase().rules();
    let legal = pos.legal_actions(&rules);
    if let Some(a) = prefer.filter(|&a| legal.has(a))
        && solver.keeps(pos, a, value)?
    {
        return Ok(a);
    }
    let mut actions: Vec<Action> = legal.iter().filter(|&a| Some(a) != prefer).collect();
    for i in (1..actions.len()).rev() {
        actions.swap(i, rng.below(i as u32 + 1) as usize);
    }
    for a in actions {
        if solver.keeps(pos, a, value)? {
            return Ok(a);
        }
    }
    Err(TablebaseError::NotCovered(format!(
        "no move keeps the position's value ({value}): the search is inconsistent"
    )))
}
