//! The placement phase solved exactly on top of the moving-phase tables: win, draw or loss of
//! any position with pieces in hand, by an alpha-beta search over whole turns (a placement and
//! the removal it earns) with a symmetry-reduced transposition table.
//!
//! Placement positions only lead to positions with fewer pieces in hand, so the placement
//! phase is a finite tree of at most 18 plies whose leaves, when both hands are empty, are
//! moving-phase positions with a fresh N-move counter (placements do not count towards the
//! rule, and the counter is zero when the last piece is placed). The value of a placement
//! position is the negamax of its turns' values, with a win for a turn that leaves the
//! opponent two pieces and the tables' value at the leaves. Gasser solved the start position
//! the same way (an 18-ply alpha-beta search on top of the moving-phase databases, 1996).
//!
//! Storing every placement position instead would take about 1.8 × 10¹⁰ classes (most of them
//! in the last four plies, 6.7 × 10⁹ in ply 17 alone): see docs/tablebase.md for the figures
//! and the reasons. The search stores what it proves in its transposition table, which a
//! caller keeps across calls (a game, a match), so later positions of the same game are cheap.

use std::sync::atomic::{AtomicU64, Ordering};

use super::{Tablebase, TablebaseError, Wdl};
use crate::action::Action;
use crate::position::Position;
use crate::rules::Rules;
use crate::tables::{ADJACENT, MILLS_THROUGH};
use crate::types::Color;

/// Lower and upper bounds of a value in {−1, 0, 1}, packed with the position's key.
const EMPTY: u64 = 0;

/// The transposition table of a placement search, with its counters: bounds proved on
/// placement positions, valid for any game under the same tables (a placement position has no
/// history that matters: no repetition is possible and the N-move counter starts at the
/// transition), so one table serves every game of a process.
pub(crate) struct TransTable {
    /// Entries `key << 8 | (lo + 1) << 2 | (hi + 1)`, `key` never 0; indexed by a hash of the
    /// key, two entries per bucket.
    table: Vec<AtomicU64>,
    mask: usize,
    nodes: AtomicU64,
    leaves: AtomicU64,
}

impl TransTable {
    /// A table of `2^log2_entries` entries of 8 bytes.
    pub(crate) fn new(log2_entries: u32) -> TransTable {
        let n = 1usize << log2_entries.clamp(4, 34);
        TransTable {
            table: (0..n).map(|_| AtomicU64::new(EMPTY)).collect(),
            mask: n - 1,
            nodes: AtomicU64::new(0),
            leaves: AtomicU64::new(0),
        }
    }
}

/// The table a solver uses: its own, or the one its tablebase shares (see
/// [`Tablebase::placement`]).
enum Tt<'a> {
    Owned(TransTable),
    Shared(&'a TransTable),
}

impl std::ops::Deref for Tt<'_> {
    type Target = TransTable;
    fn deref(&self) -> &TransTable {
        match self {
            Tt::Owned(t) => t,
            Tt::Shared(t) => t,
        }
    }
}

/// Placement-phase solving with a transposition table shared by its threads.
pub struct Placement<'a> {
    tb: &'a Tablebase,
    rules: Rules,
    tt: Tt<'a>,
}

/// What a placement search did: positions searched and tablebase leaves probed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlacementStats {
    /// Positions searched (turn boundaries, transposition hits included).
    pub nodes: u64,
    /// Moving-phase positions probed in the tables.
    pub leaves: u64,
}

impl<'a> Placement<'a> {
    /// A solver over the moving-phase tables `tb` with a transposition table of `2^log2_entries`
    /// entries of 8 bytes (20 gives 8 MiB, 27 gives 1 GiB).
    ///
    /// # Errors
    /// [`TablebaseError::RulesMismatch`] if `rules` are not the tables' rules.
    pub fn new(tb: &'a Tablebase, rules: &Rules, log2_entries: u32) -> Result<Placement<'a>, TablebaseError> {
        tb.check_rules(rules)?;
        Ok(Placement { tb, rules: tb.rules(), tt: Tt::Owned(TransTable::new(log2_entries)) })
    }

    /// A solver using a table that outlives it (the tablebase's shared one).
    pub(crate) fn with_table(tb: &'a Tablebase, tt: &'a TransTable) -> Placement<'a> {
        Placement { tb, rules: tb.rules(), tt: Tt::Shared(tt) }
    }

    /// The tables under the search.
    pub fn tablebase(&self) -> &'a Tablebase {
        self.tb
    }

    /// Counts since the solver was made.
    pub fn stats(&self) -> PlacementStats {
        PlacementStats {
            nodes: self.tt.nodes.load(Ordering::Relaxed),
            leaves: self.tt.leaves.load(Ordering::Relaxed),
        }
    }

    /// The exact value of `pos` for the player to move: from the tables when both hands are
    /// empty, else by search. A pending removal is resolved as the mover's best removal.
    ///
    /// # Errors
    /// [`TablebaseError::MissingSector`] naming a moving-phase sector the search needed and
    /// did not find; `NotCovered` for a game already over.
    pub fn value(&self, pos: &Position) -> Result<Wdl, TablebaseError> {
        if pos.outcome(&self.rules).is_terminal() {
            return Err(TablebaseError::NotCovered("the game is already over".into()));
        }
        let v = if pos.is_removal_pending() {
            let mut best = -1;
            for r in pos.removable(&self.rules) {
                let mut child = *pos;
                child.apply_unchecked(Action::point(r), &self.rules);
                best = best.max(-self.after_turn(&child, -1, 1)?);
            }
            best
        } else {
            self.search(pos, -1, 1)?
        };
        Ok(to_wdl(v))
    }

    /// Whether the value of `pos` for the player to move is at least `v`: a null-window search,
    /// cheaper than [`Placement::value`] when only one bound is needed.
    ///
    /// # Errors
    /// As [`Placement::value`].
    pub fn at_least(&self, pos: &Position, v: Wdl) -> Result<bool, TablebaseError> {
        if pos.outcome(&self.rules).is_terminal() {
            return Err(TablebaseError::NotCovered("the game is already over".into()));
        }
        if v == Wdl::Loss {
            return Ok(true);
        }
        let t = wdl_value(v);
        if pos.is_removal_pending() {
            for r in pos.removable(&self.rules) {
                let mut child = *pos;
                child.apply_unchecked(Action::point(r), &self.rules);
                if -self.after_turn(&child, -t, 1 - t)? >= t {
                    return Ok(true);
                }
            }
            return Ok(false);
        }
        Ok(self.search(pos, t - 1, t)? >= t)
    }

    /// Whether playing `a` in `pos` leaves its mover a value of at least `v` (the game's end
    /// by the action counts as its result; a mill's removal is the mover's best).
    ///
    /// # Errors
    /// As [`Placement::value`]; `NotCovered` for an illegal action.
    pub fn keeps(&self, pos: &Position, a: Action, v: Wdl) -> Result<bool, TablebaseError> {
        if !pos.legal_actions(&self.rules).has(a) {
            return Err(TablebaseError::NotCovered("the action is not legal in this position".into()));
        }
        let me = pos.current_player();
        let mut child = *pos;
        child.apply_unchecked(a, &self.rules);
        if let Some(r) = Wdl::of_outcome(child.outcome(&self.rules), me) {
            return Ok(r >= v);
        }
        if child.current_player() == me {
            return self.at_least(&child, v);
        }
        // The opponent's value must be at most v flipped: not at least the value above it.
        Ok(match v.flip() {
            Wdl::Win => true,
            Wdl::Draw => !self.at_least(&child, Wdl::Win)?,
            Wdl::Loss => !self.at_least(&child, Wdl::Draw)?,
        })
    }

    /// The exact values of `positions` (as [`Placement::value`]), solved in parallel on the
    /// current rayon pool with the shared transposition table.
    ///
    /// # Errors
    /// The first error of any position.
    pub fn values(&self, positions: &[Position]) -> Result<Vec<Wdl>, TablebaseError> {
        use rayon::prelude::*;
        positions.par_iter().map(|p| self.value(p)).collect()
    }

    /// The positions reachable from the start in exactly `k` plies (a removal is its own ply),
    /// one per class under the 16 board symmetries, for every `k` in `0..=plies`, in the order
    /// of the rules' move generation. Games already over are left out.
    pub fn openings(&self, plies: usize) -> Vec<Vec<Position>> {
        let mut out = vec![vec![Position::start()]];
        for _ in 0..plies {
            let mut seen = std::collections::HashSet::new();
            let mut next = Vec::new();
            for pos in out.last().into_iter().flatten() {
                for a in pos.legal_actions(&self.rules).iter() {
                    let mut child = *pos;
                    child.apply_unchecked(a, &self.rules);
                    if !child.outcome(&self.rules).is_terminal()
                        && seen.insert((self.key(&child), child.is_removal_pending()))
                    {
                        next.push(child);
                    }
                }
            }
            out.push(next);
        }
        out
    }

    /// The value for the player to move of the position after a turn (`pos` has the opponent
    /// to move, or the game is over), within the window.
    fn after_turn(&self, pos: &Position, alpha: i8, beta: i8) -> Result<i8, TablebaseError> {
        // Material ends the game at once (a blocked player only arises with empty hands, where
        // the tables have it as lost in 0).
        let me = pos.current_player();
        if pos.num_pieces(me) <= 2 {
            return Ok(-1);
        }
        if pos.num_pieces(me.opponent()) <= 2 {
            return Ok(1);
        }
        self.search(pos, alpha, beta)
    }

    /// Negamax over whole turns with alpha-beta on {−1, 0, 1}, fail-soft.
    fn search(&self, pos: &Position, mut alpha: i8, mut beta: i8) -> Result<i8, TablebaseError> {
        self.tt.nodes.fetch_add(1, Ordering::Relaxed);
        if pos.in_hand(Color::White) == 0 && pos.in_hand(Color::Black) == 0 {
            self.tt.leaves.fetch_add(1, Ordering::Relaxed);
            return Ok(wdl_value(self.tb.require(pos)?.wdl));
        }
        let key = self.key(pos);
        let (lo, hi) = self.lookup(key);
        if lo >= beta || lo == hi {
            return Ok(lo);
        }
        if hi <= alpha {
            return Ok(hi);
        }
        alpha = alpha.max(lo);
        beta = beta.min(hi);
        let (alpha0, beta0) = (alpha, beta);
        let mut best = -2i8;
        // Positions with a piece in hand: the mover has one (hands alternate) and places it.
        let mut order = [0u8; 24];
        let n = self.order(pos, &mut order);
        'turns: for &p in &order[..n] {
            let mut child = *pos;
            child.apply_unchecked(Action(p as u16), &self.rules);
            if child.is_removal_pending() {
                for r in child.removable(&self.rules) {
                    let mut after = child;
                    after.apply_unchecked(Action::point(r), &self.rules);
                    let v = -self.after_turn(&after, -beta, -alpha)?;
                    best = best.max(v);
                    alpha = alpha.max(v);
                    if alpha >= beta {
                        break 'turns;
                    }
                }
            } else {
                let v = -self.after_turn(&child, -beta, -alpha)?;
                best = best.max(v);
                alpha = alpha.max(v);
                if alpha >= beta {
                    break;
                }
            }
        }
        // A bound: below the window, the value is at most `best`; above, at least.
        let (nlo, nhi) = if best <= alpha0 {
            (lo, best)
        } else if best >= beta0 {
            (best, hi)
        } else {
            (best, best)
        };
        self.store(key, nlo, nhi);
        Ok(best)
    }

    /// The placements of the player to move, most promising first: those that close a mill,
    /// then those that stop one of the opponent's, then the rest by the lines they build on
    /// and the neighbours of the point. Returns how many were written.
    fn order(&self, pos: &Position, out: &mut [u8; 24]) -> usize {
        let me = pos.current_player();
        let mine = pos.pieces(me);
        let theirs = pos.pieces(me.opponent());
        let mut scored = [(0i32, 0u8); 24];
        let mut n = 0;
        for p in pos.empty() {
            let mut score = ADJACENT[p.index()].count() as i32;
            for line in MILLS_THROUGH[p.index()] {
                let others = line - p.bit();
                if (others & mine) == others {
                    score += 100;
                } else if (others & theirs) == others {
                    score += 50;
                } else if (others & theirs).is_empty() && !(others & mine).is_empty() {
                    score += 5;
                }
            }
            scored[n] = (score, p.index() as u8);
            n += 1;
        }
        scored[..n].sort_unstable_by_key(|&(s, p)| (std::cmp::Reverse(s), p));
        for (o, &(_, p)) in out.iter_mut().zip(&scored[..n]) {
            *o = p;
        }
        n
    }

    /// The position's key: its smallest image under the 16 symmetries (mover's points, then
    /// the opponent's) with both hands, in 56 bits; never 0 for a searched position, which has
    /// a piece in hand.
    fn key(&self, pos: &Position) -> u64 {
        let me = pos.current_player();
        let boards = self.tb.ix.canonical(pos.pieces(me).0, pos.pieces(me.opponent()).0);
        boards << 8 | (pos.in_hand(me) as u64) << 4 | pos.in_hand(me.opponent()) as u64
    }

    fn bucket(&self, key: u64) -> usize {
        // A multiplicative hash; the bucket is the entry pair (i, i ^ 1).
        ((key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 20) as usize) & self.tt.mask & !1
    }

    fn lookup(&self, key: u64) -> (i8, i8) {
        let i = self.bucket(key);
        for e in [&self.tt.table[i], &self.tt.table[i | 1]] {
            let e = e.load(Ordering::Relaxed);
            if e >> 8 == key {
                return (((e >> 2 & 3) as i8) - 1, ((e & 3) as i8) - 1);
            }
        }
        (-1, 1)
    }

    fn store(&self, key: u64, lo: i8, hi: i8) {
        let entry = key << 8 | ((lo + 1) as u64) << 2 | (hi + 1) as u64;
        let i = self.bucket(key);
        // The first entry of a bucket keeps the position nearer the start (more in hand, more
        // work saved), the second takes whatever comes.
        let first = self.tt.table[i].load(Ordering::Relaxed);
        let hand = |e: u64| (e >> 12 & 0xf) + (e >> 8 & 0xf);
        if first >> 8 == key || first == EMPTY || hand(entry) >= hand(first) {
            if first != EMPTY && first >> 8 != key {
                self.tt.table[i | 1].store(first, Ordering::Relaxed);
            }
            self.tt.table[i].store(entry, Ordering::Relaxed);
        } else {
            self.tt.table[i | 1].store(entry, Ordering::Relaxed);
        }
    }
}

/// A value as a negamax score: loss −1, draw 0, win 1.
pub(crate) fn wdl_value(w: Wdl) -> i8 {
    match w {
        Wdl::Loss => -1,
        Wdl::Draw => 0,
        Wdl::Win => 1,
    }
}

fn to_wdl(v: i8) -> Wdl {
    match v.signum() {
        1 => Wdl::Win,
        0 => Wdl::Draw,
        _ => Wdl::Loss,
    }
}
