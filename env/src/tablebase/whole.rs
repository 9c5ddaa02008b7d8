//! Whole games of the small boards solved outright: every position reachable from a root (the
//! start, for a game's value) enumerated, and each valued by retrograde analysis, win or loss
//! with its distance in actions, or draw.
//!
//! The value is the game-theoretic one, without draw rules: play that never ends is a draw, and
//! a position is the same whatever its N-move counter or history (the rules' `n_move_rule`,
//! `threefold_repetition` and `turn_cap` are set aside). A position is keyed by its pieces, its
//! hands, the player to move and the removals pending ([`position_key`]), so placement and
//! removal positions are solved with the rest: the whole game of six men's morris (or any
//! variant whose reachable positions fit in memory), not only its moving phase.
//!
//! A removal is its own action by the player who closed the mill, so a position's successor may
//! have the same player to move: its value is then taken as it is, not turned over. Distances
//! count actions (a removal is one), the winner taking the shortest win and the loser the
//! longest loss; values spread from the ended positions in increasing distance, so each is
//! exact.
use std::collections::VecDeque;
use std::time::Instant;

use rustc_hash::FxHashMap;

use super::{JudgedError, JudgedPosition, Probe, TablebaseError, Wdl};
use crate::Rng;
use crate::position::Position;
use crate::rules::Rules;
use crate::types::{BitBoard, Color};

/// A position's key: both players' pieces (bits 0..48, [`Position::board_key`]), the hands
/// (4 bits each from bit 48), the player to move (bit 56) and the removals pending (bits
/// 57..59). Its counters (turns, N-move plies) are not part of it.
pub fn position_key(pos: &Position) -> u64 {
    pos.board_key()
        | u64::from(pos.in_hand(Color::White)) << 48
        | u64::from(pos.in_hand(Color::Black)) << 52
        | (pos.current_player().index() as u64) << 56
        | u64::from(pos.removals_pending()) << 57
}

/// The position of a key ([`position_key`]) under `rules`, with its counters at zero.
fn position_of(key: u64, rules: &Rules) -> Result<Position, TablebaseError> {
    let white = BitBoard((key & 0xff_ffff) as u32);
    let black = BitBoard((key >> 24 & 0xff_ffff) as u32);
    let hands = [(key >> 48 & 0xf) as u8, (key >> 52 & 0xf) as u8];
    let side = if key >> 56 & 1 == 0 { Color::White } else { Color::Black };
    let removals = (key >> 57 & 0b11) as u8;
    Position::from_parts_for(rules, white, black, hands, side, removals)
        .map_err(|e| TablebaseError::WholeGameKey { key, reason: e.to_string() })
}

/// The player to move in a key.
const fn side_of(key: u64) -> u64 {
    key >> 56 & 1
}

/// A solved position's value for the player to move: win or loss in `plies` actions with best
/// play (0 for a position the game has ended in), or a draw (`plies` 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Solved {
    /// Win, draw or loss for the player to move.
    pub wdl: Wdl,
    /// Actions to the end with best play (the winner hastens it, the loser delays it).
    pub plies: u16,
}

/// Stored value: 0 a draw (or not yet decided), `WIN | d` a win in `d`, `LOSS | d` a loss in `d`.
const WIN: u16 = 1 << 14;
const LOSS: u16 = 2 << 14;
const PLIES: u16 = (1 << 14) - 1;

fn decode(v: u16) -> Solved {
    match v & !PLIES {
        WIN => Solved { wdl: Wdl::Win, plies: v & PLIES },
        LOSS => Solved { wdl: Wdl::Loss, plies: v & PLIES },
        _ => Solved { wdl: Wdl::Draw, plies: 0 },
    }
}

/// Figures of a whole-game solution.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct WholeGameSummary {
    /// The variant's name.
    pub variant: String,
    /// Positions reachable from the root (the root included).
    pub positions: u64,
    /// Moves between them (each legal action of each position that has not ended).
    pub moves: u64,
    /// Positions won for the player to move.
    pub wins: u64,
    /// Drawn positions.
    pub draws: u64,
    /// Lost positions.
    pub losses: u64,
    /// Positions in which the game has ended (a win for one side).
    pub ended: u64,
    /// The root's value.
    pub root: Solved,
    /// The longest win and the longest loss, in actions.
    pub longest_win: u16,
    /// The longest loss, in actions.
    pub longest_loss: u16,
    /// Seconds to enumerate the positions and their moves.
    pub enumerate_seconds: f64,
    /// Seconds of the retrograde analysis.
    pub solve_seconds: f64,
}

/// Every position reachable from a root, valued.
#[derive(Debug)]
pub struct WholeGame {
    rules: Rules,
    /// Every position's key, in the order found (the root first).
    keys: Vec<u64>,
    index: FxHashMap<u64, u32>,
    values: Vec<u16>,
    summary: WholeGameSummary,
}

impl WholeGame {
    /// Solves every position reachable from the start of `rules`' variant.
    ///
    /// # Errors
    /// [`TablebaseError::WholeGameTooLarge`] when more than `max_positions` positions are
    /// reachable (nine men's morris's are about 10^10: its tables solve it by sectors).
    pub fn solve(rules: &Rules, max_positions: usize) -> Result<WholeGame, TablebaseError> {
        WholeGame::solve_from(rules, &Position::start_for(rules), max_positions)
    }

    /// Solves every position reachable from `root`.
    ///
    /// # Errors
    /// [`TablebaseError::WholeGameTooLarge`] when more than `max_positions` positions are
    /// reachable.
    pub fn solve_from(
        rules: &Rules,
        root: &Position,
        max_positions: usize,
    ) -> Result<WholeGame, TablebaseError> {
        let rules = Rules { n_move_rule: None, threefold_repetition: false, turn_cap: None, ..*rules };
        let max_positions = max_positions.min(u32::MAX as usize);
        let started = Instant::now();

        // Breadth first from the root: each position's key, its number of moves, and the
        // moves as indices into the key list (`first[i]..first[i + 1]`).
        let mut keys: Vec<u64> = vec![position_key(root)];
        let mut index: FxHashMap<u64, u32> = FxHashMap::default();
        index.insert(keys[0], 0);
        let mut first: Vec<u64> = vec![0];
        let mut to: Vec<u32> = Vec::new();
        let mut values: Vec<u16> = Vec::new();
        let mut i = 0;
        while i < keys.len() {
            let pos = position_of(keys[i], &rules)?;
            let mut value = 0;
            if let crate::Outcome::Win { winner, .. } = pos.outcome(&rules) {
                value = if winner == pos.current_player() { WIN } else { LOSS };
            } else {
                for action in pos.legal_actions_unchecked(&rules).iter() {
                    let mut next = pos;
                    next.apply_unchecked(action, &rules);
                    let key = position_key(&next);
                    let n = keys.len() as u32;
                    let j = *index.entry(key).or_insert(n);
                    if j == n {
                        if keys.len() >= max_positions {
                            return Err(TablebaseError::WholeGameTooLarge {
                                variant: rules.variant,
                                limit: max_positions,
                            });
                        }
                        keys.push(key);
                    }
                    to.push(j);
                }
            }
            values.push(value);
            first.push(to.len() as u64);
            i += 1;
        }
        let enumerate_seconds = started.elapsed().as_secs_f64();

        // The moves into each position, grouped by it.
        let solving = Instant::now();
        let n = keys.len();
        let mut into_first = vec![0u64; n + 1];
        for &j in &to {
            into_first[j as usize + 1] += 1;
        }
        for k in 0..n {
            into_first[k + 1] += into_first[k];
        }
        let mut fill = into_first.clone();
        let mut from = vec![0u32; to.len()];
        for p in 0..n {
            for &c in &to[first[p] as usize..first[p + 1] as usize] {
                from[fill[c as usize] as usize] = p as u32;
                fill[c as usize] += 1;
            }
        }
        drop(fill);
        let moves = to.len() as u64;
        // Moves not yet known to lose, per position (a position all of whose moves lose is lost).
        let mut open: Vec<u32> = (0..n).map(|p| (first[p + 1] - first[p]) as u32).collect();
        drop(to);
        drop(first);

        // Values spread backwards from the ended positions, in increasing distance.
        let mut queue: VecDeque<u32> = (0..n as u32).filter(|&p| values[p as usize] != 0).collect();
        let ended = queue.len() as u64;
        while let Some(c) = queue.pop_front() {
            let c = c as usize;
            let (value, plies) = (values[c] & !PLIES, values[c] & PLIES);
            let next = (plies + 1).min(PLIES);
            for &p in &from[into_first[c] as usize..into_first[c + 1] as usize] {
                let p = p as usize;
                if values[p] != 0 {
                    continue;
                }
                // The move's value for the player to move at `p`.
                let same = side_of(keys[p]) == side_of(keys[c]);
                let wins = (value == WIN) == same;
                if wins {
                    values[p] = WIN | next;
                    queue.push_back(p as u32);
                } else {
                    open[p] -= 1;
                    if open[p] == 0 {
                        values[p] = LOSS | next;
                        queue.push_back(p as u32);
                    }
                }
            }
        }
        let solve_seconds = solving.elapsed().as_secs_f64();

        let (mut wins, mut losses, mut longest_win, mut longest_loss) = (0, 0, 0, 0);
        for &v in &values {
            match v & !PLIES {
                WIN => {
                    wins += 1;
                    longest_win = longest_win.max(v & PLIES);
                }
                LOSS => {
                    losses += 1;
                    longest_loss = longest_loss.max(v & PLIES);
                }
                _ => {}
            }
        }
        let summary = WholeGameSummary {
            variant: rules.variant.name().to_string(),
            positions: n as u64,
            moves,
            wins,
            draws: n as u64 - wins - losses,
            losses,
            ended,
            root: decode(values[0]),
            longest_win,
            longest_loss,
            enumerate_seconds,
            solve_seconds,
        };
        Ok(WholeGame { rules, keys, index, values, summary })
    }

    /// The figures of the solution.
    pub fn summary(&self) -> &WholeGameSummary {
        &self.summary
    }

    /// The rules solved (the variant's, without draw rules).
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// The value of `pos` for the player to move, `None` for a position not reachable from the
    /// root (or of other rules: its key is not among the solved ones).
    pub fn value(&self, pos: &Position) -> Option<Solved> {
        self.index.get(&position_key(pos)).map(|&i| decode(self.values[i as usize]))
    }

    /// Judges a live position by the solution: every legal turn valued
    /// ([`JudgedPosition`]), under `rules` (the solved variant's rules with their draw rules:
    /// the caller keeps to positions whose values hold under them, as [`WholeGame::judged_sample`]
    /// does).
    ///
    /// # Errors
    /// A finished game, or a turn leading to a position the solution does not hold.
    pub fn judge(&self, rules: &Rules, source: &str, pos: &Position) -> Result<JudgedPosition, JudgedError> {
        JudgedPosition::judge_by(rules, source, pos, |after, me| {
            if let Some(v) = Wdl::of_outcome(after.outcome(rules), me) {
                return Ok(v);
            }
            let v = self.value(after).ok_or_else(|| {
                TablebaseError::NotCovered(format!(
                    "a position the whole-game solution does not hold:\n{}",
                    after.display(rules)
                ))
            })?;
            Ok(if after.current_player() == me { v.wdl } else { v.wdl.flip() })
        })
    }

    /// `n` positions drawn uniformly (without repeats) from the live positions reachable from
    /// the root (with `placing`, from those with pieces in hand), each judged turn by turn
    /// ([`WholeGame::judge`]) under `rules` (the solved variant's, draw rules
    /// included). Only positions whose every turn (a move and each removal it allows) leads to
    /// an end, a draw or a win or loss within `rules`' N-move limit are drawn: there the draw rules cannot change a value (no quiet
    /// stretch can reach the limit before the game ends, and a winner who shortens the distance
    /// never repeats a position), so the stored values hold under `rules` exactly. Fewer than
    /// `n` when fewer qualify.
    ///
    /// # Errors
    /// Rules of another variant or flying than the solution's, or a position that cannot be
    /// judged.
    pub fn judged_sample(
        &self,
        rules: &Rules,
        source: &str,
        n: usize,
        seed: u64,
        placing: bool,
    ) -> Result<Vec<JudgedPosition>, JudgedError> {
        if rules.turn_cap.is_some() {
            return Err(TablebaseError::NotCovered(
                "judged values under a turn cap: the solution does not count turns".into(),
            )
            .into());
        }
        if (rules.variant, rules.flying) != (self.rules.variant, self.rules.flying) {
            return Err(TablebaseError::NotCovered(format!(
                "rules of {} (flying {}) for a solution of {} (flying {})",
                rules.variant, rules.flying, self.rules.variant, self.rules.flying
            ))
            .into());
        }
        let limit = rules.n_move_rule.map_or(u16::MAX, |n| n.min(u32::from(PLIES)) as u16);
        let mut rng = Rng::seed_from_u64(seed);
        let mut taken = rustc_hash::FxHashSet::default();
        let mut out = Vec::new();
        // Enough tries to find `n` where they are rare, bounded where they do not exist.
        for _ in 0..n.saturating_mul(1000).max(100_000) {
            if out.len() == n {
                break;
            }
            let i = rng.below(self.keys.len() as u32) as usize;
            if !taken.insert(i) {
                continue;
            }
            let pos = position_of(self.keys[i], rules)?;
            let hands = pos.in_hand(Color::White) + pos.in_hand(Color::Black);
            if pos.outcome(rules).is_terminal() || (placing && hands == 0) {
                continue;
            }
            // Every turn (a move and each removal it allows, as the set records them) leads to
            // an end, a draw or a decided position within the limit.
            let within = super::legal_turns(&pos, rules).iter().all(|(_, after)| {
                after.outcome(rules).is_terminal()
                    || self.value(after).is_some_and(|v| v.wdl == Wdl::Draw || v.plies < limit)
            });
            if within {
                out.push(self.judge(rules, source, &pos)?);
            }
        }
        Ok(out)
    }

    /// Checks every value against the rules, independently of the solver's bookkeeping (its
    /// move lists, counts and queue): each position's moves are generated again with the rules'
    /// `legal_actions` and played with `apply`, and its stored value must be the one its
    /// successors' stored values give by one step: an ended position is lost (or won) in 0; a
    /// win in `d` has a move to a position lost in `d − 1` for the opponent (won, where the
    /// same player moves again) and none shorter; a loss in `d` has only moves to positions won
    /// by the opponent, the longest in `d − 1`; a draw has no winning move and some drawn one.
    ///
    /// Returns the number of positions checked.
    ///
    /// # Errors
    /// [`TablebaseError::WholeGameMismatch`] for the first position whose value does not
    /// follow, or a successor that is not among the solved positions.
    pub fn check(&self) -> Result<u64, TablebaseError> {
        let rules = &self.rules;
        for (&key, &i) in &self.index {
            let pos = position_of(key, rules)?;
            let stored = decode(self.values[i as usize]);
            let derived = match pos.outcome(rules) {
                crate::Outcome::Win { winner, .. } => Solved {
                    wdl: if winner == pos.current_player() { Wdl::Win } else { Wdl::Loss },
                    plies: 0,
                },
                // A full board (twelve's, morabaraba's) ends the game drawn.
                crate::Outcome::Draw(_) => Solved { wdl: Wdl::Draw, plies: 0 },
                _ => {
                    // The best move's value for the player to move at `pos`: the shortest win,
                    // else a draw, else the longest loss.
                    let mut best: Option<Solved> = None;
                    for action in pos.legal_actions(rules).iter() {
                        let mut next = pos;
                        next.apply(action, rules).map_err(|e| TablebaseError::WholeGameKey {
                            key,
                            reason: format!("legal action {} refused: {e}", action.0),
                        })?;
                        let child = self.value(&next).ok_or(TablebaseError::WholeGameMismatch {
                            key,
                            reason: format!("its successor {:#x} is not solved", position_key(&next)),
                        })?;
                        let wdl = if next.current_player() == pos.current_player() {
                            child.wdl
                        } else {
                            child.wdl.flip()
                        };
                        let this = Solved { wdl, plies: if wdl == Wdl::Draw { 0 } else { child.plies + 1 } };
                        if best.is_none_or(|b| preference(this) > preference(b)) {
                            best = Some(this);
                        }
                    }
                    best.unwrap_or(Solved { wdl: Wdl::Loss, plies: 0 })
                }
            };
            if derived != stored {
                return Err(TablebaseError::WholeGameMismatch {
                    key,
                    reason: format!("stored {stored:?}, its moves give {derived:?}"),
                });
            }
        }
        Ok(self.index.len() as u64)
    }
}

/// How good a value is for the player to move, as the tables order their probes
/// ([`Probe::preference`]): quicker wins, then draws, then slower losses.
fn preference(s: Solved) -> i32 {
    Probe { wdl: s.wdl, plies: s.plies }.preference()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Game, Rng};

    /// Six men's morris, 3 against 3 with empty hands (no flying): small enough to solve and
    /// check in a test.
    fn six_endgame() -> (Rules, Position) {
        let rules = Rules::six();
        // White a5 c5 b4, Black a1 c1 d2 (points 0 1 3 and 13 14 12), White to move.
        let pos = Position::from_parts_for(
            &rules,
            BitBoard(0b1011),
            BitBoard((1 << 12) | (1 << 13) | (1 << 14)),
            [0, 0],
            Color::White,
            0,
        )
        .expect("a position");
        (rules, pos)
    }

    #[test]
    fn a_key_gives_back_its_position() {
        let rules = Rules::six();
        let mut game = Game::new(rules);
        let mut rng = Rng::seed_from_u64(7);
        for _ in 0..60 {
            let pos = *game.position();
            let back = position_of(position_key(&pos), &rules).expect("a position");
            assert_eq!(position_key(&back), position_key(&pos));
            assert_eq!(back.legal_actions(&rules), pos.legal_actions(&rules));
            game.play_random(&mut rng, 1);
            if game.outcome().is_terminal() {
                game = Game::new(rules);
            }
        }
    }

    #[test]
    fn a_six_endgame_is_solved_and_every_value_follows_from_its_moves() {
        let (rules, root) = six_endgame();
        let solved = WholeGame::solve_from(&rules, &root, 2_000_000).expect("solved");
        let s = solved.summary();
        assert!(s.positions > 1000 && s.wins > 0 && s.losses > 0 && s.draws > 0, "{s:?}");
        assert_eq!(s.wins + s.draws + s.losses, s.positions);
        assert_eq!(solved.check().expect("consistent"), s.positions);
        assert_eq!(solved.value(&root), Some(s.root));
        // The rules' draw rules are set aside: a position is the same whatever its counters.
        assert_eq!(solved.rules().n_move_rule, None);
        assert_eq!(solved.value(&root.with_counters(40, 30)), Some(s.root));
    }

    #[test]
    fn a_placement_position_is_solved_with_its_removals() {
        // The last placements of six men's morris, with three removed from each side: White
        // a5 c5, Black a1 c1, one in each hand, White to move (a placement at e5 or e1 mills).
        let rules = Rules::six();
        let root = Position::from_parts_for(
            &rules,
            BitBoard(0b11),
            BitBoard((1 << 13) | (1 << 14)),
            [1, 1],
            Color::White,
            0,
        )
        .expect("a position");
        let solved = WholeGame::solve_from(&rules, &root, 5_000_000).expect("solved");
        let s = solved.summary();
        assert_eq!(solved.check().expect("consistent"), s.positions);
        // The root's value is its best move's.
        let best = root
            .legal_actions(&rules)
            .iter()
            .map(|a| {
                let mut next = root;
                next.apply_unchecked(a, &rules);
                let v = solved.value(&next).expect("solved");
                if next.current_player() == root.current_player() { v.wdl } else { v.wdl.flip() }
            })
            .max()
            .expect("moves");
        assert_eq!(best, s.root.wdl);
    }

    #[test]
    fn a_wrong_value_is_found_by_the_check() {
        let (rules, root) = six_endgame();
        let mut solved = WholeGame::solve_from(&rules, &root, 2_000_000).expect("solved");
        let i = solved.values.iter().position(|&v| v & !PLIES == WIN && v & PLIES > 1).expect("a long win");
        solved.values[i] = WIN | 1;
        assert!(matches!(solved.check(), Err(TablebaseError::WholeGameMismatch { .. })));
    }

    #[test]
    fn judged_positions_of_a_solution_load_back_and_judge_an_agent() {
        let (rules, root) = six_endgame();
        let solved = WholeGame::solve_from(&rules, &root, 2_000_000).expect("solved");
        let positions = solved.judged_sample(&rules, "uniform", 20, 1, false).expect("judged");
        assert_eq!(positions.len(), 20);
        // Written with six's point names, and every stored turn is a legal one.
        assert!(
            positions.iter().all(|p| p.white.split(' ').all(|n| crate::board::SIX.point_named(n).is_some()))
        );
        let set = super::super::JudgedSet::new("six", "test", positions).expect("a set");
        let back = super::super::JudgedSet::parse(&set.to_jsonl(), std::path::Path::new("six.jsonl"))
            .expect("loads");
        assert_eq!(back, set);
        // Every turn the agent makes is one of the stored ones (judged, kept or not).
        let mut agent = crate::Minimax::new(crate::MinimaxConfig::depth(6));
        let acc = super::super::measure_judged(&back.positions, &rules, &mut agent).total();
        assert_eq!(acc.positions, 20);
        assert_eq!(acc.kept + acc.win_to_draw + acc.win_to_loss + acc.draw_to_loss, 20, "{acc:?}");
        // Other rules are refused.
        assert!(solved.judged_sample(&Rules { flying: true, ..rules }, "uniform", 1, 1, false).is_err());
    }

    /// Three men's morris, solved whole and checked: without flying, the first player wins (in
    /// 9 actions: the fifth of White's turns makes a line, however Black defends); with every
    /// piece flying once placed, the game is a draw.
    #[test]
    fn three_mens_morris_is_a_first_player_win_and_a_draw_with_flying() {
        let rules = Rules::three();
        let solved = WholeGame::solve(&rules, 100_000).expect("solved");
        let s = solved.summary().clone();
        assert_eq!(solved.check().expect("consistent"), s.positions);
        assert_eq!(s.root, Solved { wdl: Wdl::Win, plies: 9 }, "{s:?}");
        assert_eq!(s.positions, 5_390, "{s:?}");
        let flying = Rules { flying: true, ..rules };
        let solved = WholeGame::solve(&flying, 100_000).expect("solved");
        let s = solved.summary().clone();
        assert_eq!(solved.check().expect("consistent"), s.positions);
        assert_eq!((s.root.wdl, s.positions), (Wdl::Draw, 5_390), "{s:?}");
    }

    #[test]
    fn a_game_too_large_to_hold_is_a_named_error() {
        let err = WholeGame::solve(&Rules::standard(), 10_000).expect_err("too large");
        assert!(matches!(err, TablebaseError::WholeGameTooLarge { limit: 10_000, .. }), "{err}");
        assert!(err.to_string().contains("nine"), "{err}");
    }
}
