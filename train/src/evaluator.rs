//! The `Evaluator` trait: priors and values for a batch of leaf positions in one call, plus the
//! uniform-prior random-rollout evaluator and a cache keyed by what the network sees.

use std::collections::HashMap;

use morris_env::features::encode;
use morris_env::{ActionMask, Game, NUM_ACTIONS, Position, Rng, Rules};

/// A position to evaluate: the position itself and how often it has occurred (an input plane).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Leaf {
    /// The position, with the player to move.
    pub position: Position,
    /// Occurrences of this position in its game, counting now.
    pub repetitions: u32,
}

impl Leaf {
    /// `n` leaves from seeded random games of 0 to 79 plies under `rules` (finished games
    /// skipped), with their legal moves: the batches of benchmarks and backend comparisons.
    pub fn random_batch(rules: Rules, n: usize, seed: u64) -> (Vec<Leaf>, Vec<ActionMask>) {
        let mut rng = Rng::seed_from_u64(seed);
        let (mut leaves, mut masks) = (Vec::with_capacity(n), Vec::with_capacity(n));
        while leaves.len() < n {
            let mut game = Game::new(rules);
            let plies = rng.below(80);
            game.play_random(&mut rng, plies);
            let mask = game.legal_actions();
            if mask.is_empty() {
                continue;
            }
            leaves.push(Leaf { position: *game.position(), repetitions: game.repetitions() });
            masks.push(mask);
        }
        (leaves, masks)
    }
}

/// Evaluations of a batch of `B` leaves.
///
/// # Shapes
/// * `priors`: `[B, 600]`, a probability distribution over each leaf's legal actions (0 on
///   illegal ones);
/// * `values`: `[B]`, the expected result in `[-1, 1]` for the leaf's player to move
///   (`P(win) − P(loss)`);
/// * `wdl`: `[B, 3]`, win/draw/loss probabilities for the player to move (evaluators without a
///   WDL head report `[(1+v)/2, 0, (1-v)/2]`).
#[derive(Clone, Debug, Default)]
pub struct EvalBatch {
    /// `[B, 600]` priors.
    pub priors: Vec<f32>,
    /// `[B]` values.
    pub values: Vec<f32>,
    /// `[B, 3]` win/draw/loss probabilities.
    pub wdl: Vec<[f32; 3]>,
}

impl EvalBatch {
    /// Resizes the buffers for `b` leaves (keeping their allocations) and zeroes the priors.
    pub fn reset(&mut self, b: usize) {
        self.priors.clear();
        self.priors.resize(b * NUM_ACTIONS, 0.0);
        self.values.clear();
        self.values.resize(b, 0.0);
        self.wdl.clear();
        self.wdl.resize(b, [0.0; 3]);
    }

    /// The priors of leaf `i`.
    pub fn prior_row(&self, i: usize) -> &[f32] {
        &self.priors[i * NUM_ACTIONS..(i + 1) * NUM_ACTIONS]
    }
}

/// Anything that can score a batch of positions in one call: the network, or rollouts.
pub trait Evaluator: Send {
    /// Evaluates `leaves` (with their legal masks, which are never empty) under `rules`,
    /// writing `out` for exactly `leaves.len()` leaves.
    fn evaluate(&mut self, rules: &Rules, leaves: &[Leaf], masks: &[ActionMask], out: &mut EvalBatch);

    /// A short description for logs.
    fn name(&self) -> String;
}

/// Writes the observations of `leaves` into `obs` (`[B, C*N]`, `N` the points of `rules`'
/// board), for network evaluators.
pub fn encode_batch(rules: &Rules, leaves: &[Leaf], obs: &mut Vec<f32>) {
    let len = morris_env::obs_len_on(rules.variant.board());
    obs.clear();
    obs.resize(leaves.len() * len, 0.0);
    for (leaf, row) in leaves.iter().zip(obs.chunks_exact_mut(len)) {
        encode(&leaf.position, rules, leaf.repetitions, row);
    }
}

/// Writes uniform priors over each leaf's legal actions.
fn uniform_priors(masks: &[ActionMask], out: &mut EvalBatch) {
    for (i, mask) in masks.iter().enumerate() {
        let n = mask.count().max(1) as f32;
        let row = &mut out.priors[i * NUM_ACTIONS..(i + 1) * NUM_ACTIONS];
        for a in mask.iter() {
            row[a.index()] = 1.0 / n;
        }
    }
}

/// Uniform priors and a value of 0 for every leaf: search guided by terminal results alone
/// (tests and benchmarks of the search itself).
#[derive(Clone, Copy, Debug, Default)]
pub struct UniformEvaluator;

impl Evaluator for UniformEvaluator {
    fn evaluate(&mut self, _rules: &Rules, leaves: &[Leaf], masks: &[ActionMask], out: &mut EvalBatch) {
        out.reset(leaves.len());
        uniform_priors(masks, out);
        for w in &mut out.wdl {
            *w = [0.5, 0.0, 0.5];
        }
    }

    fn name(&self) -> String {
        "uniform".into()
    }
}

/// Uniform priors over the legal actions, and the value of `rollouts` uniformly random
/// playouts from the leaf (each to the end of the game, or to `max_plies`, counted a draw).
///
/// The playouts of a leaf are seeded from the evaluator's seed and the leaf itself, so the same
/// leaf always gets the same value: results do not depend on how leaves are batched.
/// Rollouts run on the position alone: the repetition history of the game is not carried into
/// them (the N-move counter and the turn cap are, being part of the position).
#[derive(Clone, Debug)]
pub struct RolloutEvaluator {
    seed: u64,
    rollouts: u32,
    max_plies: u32,
}

impl RolloutEvaluator {
    /// `rollouts` playouts per leaf, each at most `max_plies` plies.
    pub fn new(seed: u64, rollouts: u32, max_plies: u32) -> RolloutEvaluator {
        RolloutEvaluator { seed, rollouts: rollouts.max(1), max_plies }
    }

    /// One playout's result for the player to move at `start`.
    pub fn rollout(&self, rules: &Rules, start: &Position, rng: &mut Rng) -> f32 {
        // Repetition needs history, which rollouts do not keep.
        let rules = Rules { threefold_repetition: false, ..*rules };
        let me = start.current_player();
        let mut pos = *start;
        for _ in 0..self.max_plies {
            match pos.legal_actions(&rules).sample(rng) {
                Some(a) => pos.apply_unchecked(a, &rules),
                None => return pos.outcome(&rules).reward(me),
            }
        }
        0.0
    }
}

impl Evaluator for RolloutEvaluator {
    fn evaluate(&mut self, rules: &Rules, leaves: &[Leaf], masks: &[ActionMask], out: &mut EvalBatch) {
        out.reset(leaves.len());
        uniform_priors(masks, out);
        for (i, leaf) in leaves.iter().enumerate() {
            let p = &leaf.position;
            let mut rng = Rng::seed_from_u64(
                self.seed ^ p.hash() ^ ((p.quiet_plies() as u64) << 48 | (p.turns() as u64) << 32),
            );
            let mut total = 0.0;
            for _ in 0..self.rollouts {
                total += self.rollout(rules, p, &mut rng);
            }
            let v = total / self.rollouts as f32;
            out.values[i] = v;
            out.wdl[i] = [(1.0 + v) / 2.0, 0.0, (1.0 - v) / 2.0];
        }
    }

    fn name(&self) -> String {
        format!("rollouts:{}", self.rollouts)
    }
}

/// Key of everything a network sees: the position hash, the counters and the repetitions.
fn cache_key(rules: &Rules, leaf: &Leaf) -> u64 {
    let p = &leaf.position;
    let mut k = p.hash();
    if rules.n_move_rule.is_some() {
        k ^= (p.quiet_plies() as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    if rules.turn_cap.is_some() {
        k ^= (p.turns() as u64).wrapping_mul(0xc2b2_ae3d_27d4_eb4f);
    }
    if rules.threefold_repetition {
        k ^= (leaf.repetitions.min(3) as u64).wrapping_mul(0x1656_67b1_9e37_79f9);
    }
    k
}

/// A cached evaluation: sparse priors `(action, probability)`, the value and the WDL.
type CachedResult = (Vec<(u16, f32)>, f32, [f32; 3]);

/// Wraps an evaluator with a cache of results keyed by the position hash and the counters the
/// network sees. Priors are stored sparsely (legal actions only). The cache is cleared when it
/// reaches its capacity.
///
/// Limits: the key is a 64-bit hash and a hit is not verified against the board (a collision,
/// about one in 2^64 per pair of positions, would return another position's evaluation); and
/// one cache serves one rule set, since the key does not include the rules.
pub struct CachedEvaluator<E> {
    inner: E,
    capacity: usize,
    map: HashMap<u64, CachedResult>,
    miss_leaves: Vec<Leaf>,
    miss_masks: Vec<ActionMask>,
    miss_index: Vec<usize>,
    miss_out: EvalBatch,
    /// Lookups answered from the cache.
    pub hits: u64,
    /// Lookups passed to the inner evaluator.
    pub misses: u64,
}

impl<E: Evaluator> CachedEvaluator<E> {
    /// A cache of at most `capacity` positions in front of `inner`.
    pub fn new(inner: E, capacity: usize) -> CachedEvaluator<E> {
        CachedEvaluator {
            inner,
            capacity: capacity.max(1),
            map: HashMap::new(),
            miss_leaves: Vec::new(),
            miss_masks: Vec::new(),
            miss_index: Vec::new(),
            miss_out: EvalBatch::default(),
            hits: 0,
            misses: 0,
        }
    }

    /// The wrapped evaluator.
    pub fn inner_mut(&mut self) -> &mut E {
        &mut self.inner
    }

    /// Forgets every cached result (for example after the network's weights change).
    pub fn clear(&mut self) {
        self.map.clear();
    }
}

impl<E: Evaluator> Evaluator for CachedEvaluator<E> {
    fn evaluate(&mut self, rules: &Rules, leaves: &[Leaf], masks: &[ActionMask], out: &mut EvalBatch) {
        out.reset(leaves.len());
        self.miss_leaves.clear();
        self.miss_masks.clear();
        self.miss_index.clear();
        for (i, leaf) in leaves.iter().enumerate() {
            match self.map.get(&cache_key(rules, leaf)) {
                Some((priors, v, wdl)) => {
                    self.hits += 1;
                    for &(a, p) in priors {
                        out.priors[i * NUM_ACTIONS + a as usize] = p;
                    }
                    out.values[i] = *v;
                    out.wdl[i] = *wdl;
                }
                None => {
                    self.misses += 1;
                    self.miss_leaves.push(*leaf);
                    self.miss_masks.push(masks[i]);
                    self.miss_index.push(i);
                }
            }
        }
        if self.miss_leaves.is_empty() {
            return;
        }
        self.inner.evaluate(rules, &self.miss_leaves, &self.miss_masks, &mut self.miss_out);
        if self.map.len() + self.miss_leaves.len() > self.capacity {
            self.map.clear();
        }
        for (j, &i) in self.miss_index.iter().enumerate() {
            let row = self.miss_out.prior_row(j);
            out.priors[i * NUM_ACTIONS..(i + 1) * NUM_ACTIONS].copy_from_slice(row);
            out.values[i] = self.miss_out.values[j];
            out.wdl[i] = self.miss_out.wdl[j];
            let sparse = self.miss_masks[j].iter().map(|a| (a.0, row[a.index()])).collect();
            self.map.insert(cache_key(rules, &self.miss_leaves[j]), (sparse, out.values[i], out.wdl[i]));
        }
    }

    fn name(&self) -> String {
        format!("cached({})", self.inner.name())
    }
}
