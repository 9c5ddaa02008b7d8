//! Retrograde analysis of one pair of sectors, (a, b) and (b, a): removals lead into solved
//! lower sectors, quiet moves stay inside the pair, and values spread backwards layer by layer
//! from the decided positions, so every distance is exact.
//!
//! A turn here is a slide or fly together with the removal it earns, so every stored position
//! is one where the mover is about to slide or fly. For each slot the forward pass looks at
//! every move: a removal that wins outright or leads to a lost position for the opponent makes
//! a win in 1; a removal into a drawn (or rule-drawn) position is an escape that rules out a
//! loss; quiet moves are counted (distinct successor slots). Blocked positions are lost in 0.
//! Then, layer by layer (distance d = 0, 1, 2, …), the predecessors of each lost position
//! become wins in d + 1, and each won position takes one from its predecessors' counters; a
//! counter that reaches zero, with no escape, makes a loss in d + 1. Predecessors come from
//! un-moves: a piece of the player who just moved goes back from a point where it stands
//! outside a mill (arriving in a mill would have earned a removal) to an empty point it could
//! have come from.
//!
//! Under the N-move rule, a lower sector's win or loss only counts as one if its distance fits
//! in the N plies that follow a removal; longer ones count as draws. Stored distances are
//! unbounded, so a prober can compare them with the counter (see `entry::read`).

use std::sync::atomic::{AtomicU8, AtomicU16, Ordering};

use rayon::prelude::*;

use super::entry::{DIST, LOSS, WIN};
use super::index::Indexer;
use crate::tables::{ADJACENT, closes_mill, pieces_in_mills};
use crate::types::{BitBoard, Point};

/// Counter value of a slot that can never become a loss (an escape, a final value or an
/// unused duplicate slot).
const NEVER: u8 = u8::MAX;

/// The solved values of a pair of sectors.
pub(crate) struct Solved {
    /// Values of sector (a, b), then of (b, a) when a ≠ b.
    pub(crate) values: Vec<Vec<u16>>,
}

/// The inputs of a solve.
pub(crate) struct Pair<'a> {
    pub(crate) ix: &'a Indexer,
    pub(crate) flying: bool,
    pub(crate) n_move_rule: Option<u32>,
    /// Mover and opponent piece counts of the first sector (the second is the swap).
    pub(crate) a: usize,
    pub(crate) b: usize,
    /// The solved sector that removals from sector (a, b) lead to, (b − 1, a), and the one
    /// from (b, a), (a − 1, b): `None` where the opponent is left with 2 pieces.
    pub(crate) lower: [Option<&'a [u16]>; 2],
}

struct State<'a> {
    pair: &'a Pair<'a>,
    dims: Vec<(usize, usize)>,
    values: Vec<Vec<AtomicU16>>,
    counters: Vec<Vec<AtomicU8>>,
}

impl State<'_> {
    /// The sector that quiet moves from sector `s` lead to.
    fn other(&self, s: usize) -> usize {
        if self.dims.len() == 1 { 0 } else { 1 - s }
    }

    fn decided(&self, stored: u16, win: bool) -> bool {
        let flag = if win { WIN } else { LOSS };
        stored & flag != 0 && self.pair.n_move_rule.is_none_or(|n| (stored & DIST) as u32 <= n)
    }

    /// Forward pass over one slot: its initial value (0 if undecided), its counter, and
    /// whether it starts a layer.
    fn init(&self, s: usize, index: usize) -> (u16, u8) {
        let (a, b) = self.dims[s];
        let (mover, opp, canonical) = self.pair.ix.position(a, b, index);
        if !canonical {
            return (0, NEVER);
        }
        let flying = self.pair.flying && a == 3;
        let empty = BitBoard::FULL.0 & !(mover | opp);
        let removable = {
            let free = opp & !pieces_in_mills(BitBoard(opp)).0;
            if free == 0 { opp } else { free }
        };
        let lower = self.pair.lower[s];
        let mut successors = [0u32; 128];
        let mut n = 0;
        let mut any_move = false;
        let mut escape = false;
        let mut from_bits = mover;
        while from_bits != 0 {
            let from = from_bits.trailing_zeros();
            from_bits &= from_bits - 1;
            let mut targets = if flying { empty } else { ADJACENT[from as usize].0 & empty };
            while targets != 0 {
                let to = targets.trailing_zeros();
                targets &= targets - 1;
                any_move = true;
                let after = mover ^ (1 << from) ^ (1 << to);
                if closes_mill(BitBoard(after), Point::from_index_unchecked(to as usize)) {
                    let Some(lower) = lower else {
                        // The opponent is left with 2 pieces: the game is won.
                        return (WIN | 1, NEVER);
                    };
                    let mut r_bits = removable;
                    while r_bits != 0 {
                        let r = r_bits.trailing_zeros();
                        r_bits &= r_bits - 1;
                        let stored = lower[self.pair.ix.index(opp ^ (1 << r), after)];
                        if self.decided(stored, false) {
                            return (WIN | 1, NEVER);
                        }
                        if !self.decided(stored, true) {
                            escape = true;
                        }
                    }
                } else {
                    successors[n] = self.pair.ix.index(opp, after) as u32;
                    n += 1;
                }
            }
        }
        if !any_move {
            return (LOSS, NEVER);
        }
        let distinct = distinct(&mut successors[..n]);
        match (distinct, escape) {
            (0, true) => (0, NEVER),
            (0, false) => (LOSS | 1, NEVER),
            (_, true) => (0, NEVER),
            (k, false) => (0, k as u8),
        }
    }

    /// The distinct predecessor slots (in the other sector) of the position in slot `index`
    /// of sector `s`, written to `out`; returns how many.
    fn predecessors(&self, s: usize, index: usize, out: &mut [u32; 256]) -> usize {
        let (a, b) = self.dims[s];
        let (mover, opp, _) = self.pair.ix.position(a, b, index);
        // `opp` just moved: it flies if it has 3 pieces.
        let flying = self.pair.flying && b == 3;
        let empty = BitBoard::FULL.0 & !(mover | opp);
        let mut n = 0;
        let mut to_bits = opp;
        while to_bits != 0 {
            let to = to_bits.trailing_zeros();
            to_bits &= to_bits - 1;
            if closes_mill(BitBoard(opp), Point::from_index_unchecked(to as usize)) {
                continue;
            }
            let mut sources = if flying { empty } else { ADJACENT[to as usize].0 & empty };
            while sources != 0 {
                let from = sources.trailing_zeros();
                sources &= sources - 1;
                out[n] = self.pair.ix.index(opp ^ (1 << to) ^ (1 << from), mover) as u32;
                n += 1;
            }
        }
        distinct(&mut out[..n])
    }
}

/// A layer entry: sector `s` (0 or 1) in the top bit, the slot below.
#[inline]
fn pack(s: usize, i: usize) -> u32 {
    debug_assert!(i < 1 << 31);
    (s as u32) << 31 | i as u32
}

/// The sector and slot of a layer entry.
#[inline]
fn unpack(e: u32) -> (usize, usize) {
    ((e >> 31) as usize, (e & 0x7fff_ffff) as usize)
}

/// Sorts and deduplicates in place; returns the number of distinct values (now at the front).
fn distinct(v: &mut [u32]) -> usize {
    v.sort_unstable();
    let mut k = 0;
    for i in 0..v.len() {
        if i == 0 || v[i] != v[i - 1] {
            v[k] = v[i];
            k += 1;
        }
    }
    k
}

/// Solves a pair of sectors. `progress` is called with the number of slots or layer entries
/// just processed.
pub(crate) fn solve(pair: &Pair<'_>, progress: &(dyn Fn(u64) + Sync)) -> Result<Solved, u32> {
    let mut dims = vec![(pair.a, pair.b)];
    if pair.a != pair.b {
        dims.push((pair.b, pair.a));
    }
    let values: Vec<Vec<AtomicU16>> = dims
        .iter()
        .map(|&(a, b)| (0..pair.ix.len(a, b)).into_par_iter().map(|_| AtomicU16::new(0)).collect())
        .collect();
    let counters: Vec<Vec<AtomicU8>> = dims
        .iter()
        .map(|&(a, b)| (0..pair.ix.len(a, b)).into_par_iter().map(|_| AtomicU8::new(NEVER)).collect())
        .collect();
    let state = State { pair, dims, values, counters };

    // Forward pass: immediate results and counters. The decided slots form the first two
    // layers: blocked positions (lost in 0) and positions decided by a removal (in 1). Layer
    // entries are packed as `sector << 31 | slot` (slots stay below 2^31), 4 bytes each.
    const CHUNK: usize = 1 << 14;
    let mut layer: Vec<u32> = Vec::new();
    let mut pending: Vec<u32> = Vec::new();
    for s in 0..state.dims.len() {
        let len = state.values[s].len();
        let found: Vec<u32> = (0..len.div_ceil(CHUNK))
            .into_par_iter()
            .flat_map_iter(|c| {
                let mut out = Vec::new();
                for i in c * CHUNK..((c + 1) * CHUNK).min(len) {
                    let (v, k) = state.init(s, i);
                    state.counters[s][i].store(k, Ordering::Relaxed);
                    if v != 0 {
                        state.values[s][i].store(v, Ordering::Relaxed);
                        out.push(pack(s, i));
                    }
                }
                progress((((c + 1) * CHUNK).min(len) - c * CHUNK) as u64);
                out.into_iter()
            })
            .collect();
        for e in found {
            let (s, i) = unpack(e);
            if state.values[s][i].load(Ordering::Relaxed) & DIST == 0 {
                layer.push(e)
            } else {
                pending.push(e)
            }
        }
    }

    // Backward passes, one distance at a time: `layer` holds the entries at distance `d`,
    // `pending` those the forward pass decided at distance 1 (only while `d` is 0).
    let mut d: u16 = 0;
    loop {
        if d == 1 {
            layer.append(&mut pending);
            pending.shrink_to_fit();
        }
        if layer.is_empty() && pending.is_empty() {
            break;
        }
        if d == DIST {
            return Err(d as u32);
        }
        let next = d + 1;
        layer = layer
            .par_chunks(1024)
            .flat_map_iter(|chunk| {
                let mut out = Vec::new();
                let mut preds = [0u32; 256];
                for &e in chunk {
                    let (s, i) = unpack(e);
                    let won = state.values[s][i].load(Ordering::Relaxed) & WIN != 0;
                    let t = state.other(s);
                    let n = state.predecessors(s, i, &mut preds);
                    for &j in &preds[..n] {
                        let j = j as usize;
                        if won {
                            let c = &state.counters[t][j];
                            if c.load(Ordering::Relaxed) != NEVER && c.fetch_sub(1, Ordering::Relaxed) == 1 {
                                state.values[t][j].store(LOSS | next, Ordering::Relaxed);
                                out.push(pack(t, j));
                            }
                        } else if state.values[t][j]
                            .compare_exchange(0, WIN | next, Ordering::Relaxed, Ordering::Relaxed)
                            .is_ok()
                        {
                            // A win can no longer become a loss.
                            state.counters[t][j].store(NEVER, Ordering::Relaxed);
                            out.push(pack(t, j));
                        }
                    }
                }
                progress(chunk.len() as u64);
                out.into_iter()
            })
            .collect();
        d = next;
    }
    let values =
        state.values.into_iter().map(|v| v.into_iter().map(AtomicU16::into_inner).collect()).collect();
    Ok(Solved { values })
}
