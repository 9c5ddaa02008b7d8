//! Accuracy against perfect play: how often an agent's move keeps the exact value of a
//! position the tables can value, and its errors by kind and by phase.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::{Tablebase, Wdl};
use crate::agent::Agent;
use crate::game::Game;
use crate::position::{PIECES_PER_PLAYER, Phase, Position};
use crate::rng::Rng;
use crate::tables::MILLS;
use crate::types::{BitBoard, Color, NUM_POINTS, Point};

/// Counts of one accuracy measurement.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Accuracy {
    /// Positions the agent moved in.
    pub positions: u64,
    /// Moves that kept the position's value.
    pub kept: u64,
    /// A won position given away to a draw.
    pub win_to_draw: u64,
    /// A won position turned into a loss.
    pub win_to_loss: u64,
    /// A drawn position turned into a loss.
    pub draw_to_loss: u64,
    /// Positions by their value: won, drawn, lost.
    pub by_value: [u64; 3],
    /// Moves that kept the value, by the position's value: won, drawn, lost.
    pub kept_by_value: [u64; 3],
    /// Seconds the agent took, in all.
    pub seconds: f64,
    /// Positions where the agent gave no move (counted as errors of no kind).
    pub no_move: u64,
}

impl Accuracy {
    /// The fraction of moves that kept the value, with its 95% Wilson interval.
    pub fn kept_fraction(&self) -> (f64, f64, f64) {
        wilson(self.kept, self.positions)
    }

    /// Adds another measurement's counts.
    pub fn add(&mut self, other: &Accuracy) {
        self.positions += other.positions;
        self.kept += other.kept;
        self.win_to_draw += other.win_to_draw;
        self.win_to_loss += other.win_to_loss;
        self.draw_to_loss += other.draw_to_loss;
        for k in 0..3 {
            self.by_value[k] += other.by_value[k];
            self.kept_by_value[k] += other.kept_by_value[k];
        }
        self.seconds += other.seconds;
        self.no_move += other.no_move;
    }

    /// Milliseconds per move.
    pub fn ms_per_move(&self) -> f64 {
        1000.0 * self.seconds / self.positions.max(1) as f64
    }
}

/// Accuracy split by the phase of the player to move ([`Position::phase`]): placing (pieces in
/// hand), moving (sliding) and flying (three pieces, flying rules).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseAccuracy {
    /// Positions where the mover had pieces in hand.
    pub placing: Accuracy,
    /// Positions where the mover slides.
    pub moving: Accuracy,
    /// Positions where the mover flies.
    pub flying: Accuracy,
}

impl PhaseAccuracy {
    /// The phases in order, with their names (`placing`, `moving`, `flying`).
    pub fn phases(&self) -> [(&'static str, &Accuracy); 3] {
        [("placing", &self.placing), ("moving", &self.moving), ("flying", &self.flying)]
    }

    /// The counts of one phase.
    pub fn get_mut(&mut self, phase: Phase) -> &mut Accuracy {
        match phase {
            Phase::Placing => &mut self.placing,
            Phase::Moving => &mut self.moving,
            Phase::Flying => &mut self.flying,
        }
    }

    /// All phases together.
    pub fn total(&self) -> Accuracy {
        let mut t = Accuracy::default();
        for (_, a) in self.phases() {
            t.add(a);
        }
        t
    }

    /// Adds another measurement's counts, phase by phase.
    pub fn add(&mut self, other: &PhaseAccuracy) {
        self.placing.add(&other.placing);
        self.moving.add(&other.moving);
        self.flying.add(&other.flying);
    }
}

/// The Wilson score interval of `k` successes in `n` trials: (estimate, low, high) at 95%.
pub fn wilson(k: u64, n: u64) -> (f64, f64, f64) {
    if n == 0 {
        return (0.0, 0.0, 1.0);
    }
    let z = 1.959964_f64;
    let (k, n) = (k as f64, n as f64);
    let p = k / n;
    let denom = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denom;
    // The interval holds the rate itself: at k = n (or 0) the bound is 1 (or 0) analytically, and
    // its rounding could leave it just short (a JSON reader that rounds correctly then saw a
    // loss rate of 1 above its upper bound 0.9999999999999999).
    (p, (centre - half).clamp(0.0, 1.0).min(p), (centre + half).clamp(0.0, 1.0).max(p))
}

fn slot(w: Wdl) -> usize {
    match w {
        Wdl::Win => 0,
        Wdl::Draw => 1,
        Wdl::Loss => 2,
    }
}

/// The exact value of a live position for the player to move, or `None` where the tables
/// cannot give it (a sector not built): from the tables with both hands empty, else from the
/// placement solver.
fn value_of(tb: &Tablebase, pos: &Position) -> Option<Wdl> {
    tb.value(pos).ok()
}

/// Lets `agent` play one turn in `game`: its move, then the removal it earns (same player),
/// until the turn passes or the game ends. Returns the turn in notation (moves separated by
/// spaces, as [`super::judged::legal_turns`] writes them) with the game after it, or `None`
/// where the agent gives no move or an illegal one; and the seconds the agent took.
pub(crate) fn play_turn(game: &Game, agent: &mut dyn Agent) -> (Option<(String, Game)>, f64) {
    agent.reset();
    let me = game.current_player();
    let mut g = game.clone();
    let mut notation = String::new();
    let start = Instant::now();
    let played = loop {
        let Some(a) = agent.choose(&g) else { break false };
        // In notation on the game's board (six men's morris has its own point names).
        let Some(m) = g.notation(a) else { break false };
        if g.apply(a).is_err() {
            break false;
        }
        if !notation.is_empty() {
            notation.push(' ');
        }
        notation += &m;
        if g.current_player() != me || g.outcome().is_terminal() {
            break true;
        }
    };
    let seconds = start.elapsed().as_secs_f64();
    (played.then_some((notation, g)), seconds)
}

/// Counts one judged turn: the position's value `before`, whether the agent moved, the value
/// its turn led to (`None` where it cannot be told: the position then counts, its move not),
/// and the agent's time.
pub(crate) fn tally(acc: &mut Accuracy, before: Wdl, moved: bool, after: Option<Wdl>, seconds: f64) {
    acc.seconds += seconds;
    acc.positions += 1;
    acc.by_value[slot(before)] += 1;
    if !moved {
        acc.no_move += 1;
        return;
    }
    let Some(after) = after else { return };
    match (before, after) {
        (b, a) if a >= b => {
            acc.kept += 1;
            acc.kept_by_value[slot(b)] += 1;
        }
        (Wdl::Win, Wdl::Draw) => acc.win_to_draw += 1,
        (Wdl::Win, Wdl::Loss) => acc.win_to_loss += 1,
        _ => acc.draw_to_loss += 1,
    }
}

/// Lets `agent` play one turn (a move and, if it closes a mill, the removal) in each game and
/// compares the value after it with the value before, counting by the mover's phase. Positions
/// with pieces in hand are valued by the placement solver ([`Tablebase::value`]); a position
/// the tables cannot value (a sector not built) is skipped. The agent is reset before each
/// position.
pub fn measure(tb: &Tablebase, games: &[Game], agent: &mut dyn Agent) -> PhaseAccuracy {
    let mut out = PhaseAccuracy::default();
    let rules = tb.rules();
    for game in games {
        if game.outcome().is_terminal() {
            continue;
        }
        let Some(before) = value_of(tb, game.position()) else { continue };
        let me = game.current_player();
        let acc = out.get_mut(game.position().phase(me, &rules));
        let (turn, seconds) = play_turn(game, agent);
        let after = turn.as_ref().and_then(|(_, g)| {
            Wdl::of_outcome(g.outcome(), me).or_else(|| value_of(tb, g.position()).map(Wdl::flip))
        });
        tally(acc, before, turn.is_some(), after, seconds);
    }
    out
}

/// One kind of placement position: the side to move, both hands and both counts on the board.
#[derive(Clone, Copy, Debug)]
struct PlacementKind {
    side: Color,
    hands: [u8; 2],
    on_board: [u32; 2],
    arrangements: u64,
}

/// `n` choose `k`.
fn choose(n: u32, k: u32) -> u64 {
    (0..k).fold(1u64, |acc, i| acc * (n - i) as u64 / (i + 1) as u64)
}

/// Every kind of placement position that the counting conditions allow (see
/// [`random_placement_position`]), with its number of arrangements.
fn placement_kinds() -> Vec<PlacementKind> {
    let n = PIECES_PER_PLAYER as u32;
    let mut kinds = Vec::new();
    // White to move has placed as many as Black; Black to move has placed one fewer.
    for (side, lead) in [(Color::White, 0), (Color::Black, 1)] {
        for placed_black in 0..n {
            let placed = [placed_black + lead, placed_black];
            if placed[0] > n || (side == Color::White && placed[0] == n) {
                continue;
            }
            let hands = [(n - placed[0]) as u8, (n - placed[1]) as u8];
            for w in 0..=placed[0] {
                for b in 0..=placed[1] {
                    // Each removal needs a mill the opponent closed, the first with its third
                    // piece; a side with under 3 pieces in all has lost.
                    let removed = [placed[0] - w, placed[1] - b];
                    let mills_possible = |c: usize| placed[c].saturating_sub(2);
                    if removed[0] > mills_possible(1) || removed[1] > mills_possible(0) {
                        continue;
                    }
                    if w + hands[0] as u32 <= 2 || b + hands[1] as u32 <= 2 {
                        continue;
                    }
                    let arrangements = choose(NUM_POINTS as u32, w) * choose(NUM_POINTS as u32 - w, b);
                    kinds.push(PlacementKind { side, hands, on_board: [w, b], arrangements });
                }
            }
        }
    }
    kinds
}

/// A position with pieces in hand drawn uniformly from the candidate placement positions: every
/// arrangement of pieces on the board whose counts the hands allow (the side to move follows
/// from the hands, as placements alternate and White places first), with no more removals of
/// a side's pieces than the opponent could have closed mills (none before its third piece),
/// both sides with at least 3 pieces on the board and in hand, no removal pending, and a side
/// with a mill on the board having removed at least one piece. These are necessary conditions
/// for a position to be reachable, not a proof that it is: a few unreachable positions remain,
/// as in the placement counts of the mill literature.
pub fn random_placement_position(rng: &mut Rng) -> Position {
    let kinds = placement_kinds();
    let total: u64 = kinds.iter().map(|k| k.arrangements).sum();
    loop {
        let mut x = ((rng.next_u64() as u128 * total as u128) >> 64) as u64;
        let Some(kind) = kinds.iter().find(|k| {
            let hit = x < k.arrangements;
            if !hit {
                x -= k.arrangements;
            }
            hit
        }) else {
            continue;
        };
        let mut points: [u8; NUM_POINTS] = std::array::from_fn(|i| i as u8);
        let placed = (kind.on_board[0] + kind.on_board[1]) as usize;
        for i in 0..placed {
            let j = i + rng.below((NUM_POINTS - i) as u32) as usize;
            points.swap(i, j);
        }
        let set = |range: std::ops::Range<usize>| {
            points[range]
                .iter()
                .filter_map(|&p| Point::try_index(p as usize))
                .fold(BitBoard(0), |bb, p| bb | p.bit())
        };
        let w = kind.on_board[0] as usize;
        let pieces = [set(0..w), set(w..placed)];
        let placed_counts = [
            PIECES_PER_PLAYER as u32 - kind.hands[0] as u32,
            PIECES_PER_PLAYER as u32 - kind.hands[1] as u32,
        ];
        // A mill on the board was closed once, and closing it removed an opposing piece.
        let has_mill = |bb: BitBoard| MILLS.iter().any(|&m| bb.contains(m));
        if (has_mill(pieces[0]) && placed_counts[1] == kind.on_board[1])
            || (has_mill(pieces[1]) && placed_counts[0] == kind.on_board[0])
        {
            continue;
        }
        if let Ok(pos) = Position::from_parts(pieces[0], pieces[1], kind.hands, kind.side, false) {
            return pos;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::wilson;

    /// Every interval holds its rate and lies in [0, 1]; all losses (or none) reach 1 (or 0)
    /// exactly, where rounding once left the bound at 0.9999999999999999, below the rate.
    #[test]
    fn wilson_intervals_hold_their_rate() {
        for n in 1..=300 {
            for k in 0..=n {
                let (p, low, high) = wilson(k, n);
                assert!((0.0..=p).contains(&low) && (p..=1.0).contains(&high), "{k}/{n}: {low} {p} {high}");
            }
            assert_eq!(wilson(n, n).2, 1.0);
            assert_eq!(wilson(0, n).1, 0.0);
        }
        assert_eq!(wilson(0, 0), (0.0, 0.0, 1.0));
    }
}
