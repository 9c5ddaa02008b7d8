//! The replay window: the most recent training positions, a cap on how often each can be drawn
//! (KataGo's reuse limit), and batches augmented with a random one of the 16 board symmetries.

use std::collections::VecDeque;

use morris_env::features::{NUM_PLANES, encode, obs_len_on};
use morris_env::ndarray::{Array1, Array2, Array3, ArrayView1, ArrayView2, ArrayView3};
use morris_env::{NUM_ACTIONS, NUM_POINTS, Rng, Rules, Symmetry};

use crate::sample::Sample;

/// A training batch, struct-of-arrays.
///
/// # Shapes
/// `P` is the board's points and `A` its actions ([`TrainBatch::points`],
/// [`TrainBatch::actions`]): 24 and 600 on the 24-point boards, 16 and 272 on six men's morris's.
/// * `obs`: `[B, C*P]` observations (after the symmetry);
/// * `legal`: `[B, A]` legal-action mask;
/// * `policy`: `[B, A]` policy target (0 on illegal actions; all 0 where `policy_weight` is 0);
/// * `wdl`: `[B, 3]` win/draw/loss target for the player to move (one-hot, or mixed with the
///   search value: [`Sample::value_target`]);
/// * `policy_weight`: `[B]`, 1 for positions with a full search, 0 for cheap ones.
#[derive(Clone, Debug, Default)]
pub struct TrainBatch {
    /// `[B, C*P]`
    pub obs: Vec<f32>,
    /// `[B, A]`
    pub legal: Vec<bool>,
    /// `[B, A]`
    pub policy: Vec<f32>,
    /// `[B, 3]`
    pub wdl: Vec<f32>,
    /// `[B]`
    pub policy_weight: Vec<f32>,
}

impl TrainBatch {
    /// Number of samples.
    pub fn len(&self) -> usize {
        self.policy_weight.len()
    }

    /// Whether the batch is empty.
    pub fn is_empty(&self) -> bool {
        self.policy_weight.is_empty()
    }

    /// Points per observation plane, `P`: the board's (24 for an empty batch), read from the
    /// buffers' widths.
    pub fn points(&self) -> usize {
        match self.len() {
            0 => NUM_POINTS,
            b => self.obs.len() / (NUM_PLANES * b),
        }
    }

    /// Actions per row of `legal` and `policy`, `A`: the board's (600 for an empty batch).
    pub fn actions(&self) -> usize {
        match self.len() {
            0 => NUM_ACTIONS,
            b => self.legal.len() / b,
        }
    }

    /// Every sample of `samples`, in order, under the symmetries `augment` asks for (all 16 of
    /// one sample are consecutive rows with [`Augment::All`]), as a batch to train on elsewhere.
    /// The value target is the game's outcome alone.
    pub fn from_samples(samples: &[Sample], rules: &Rules, augment: Augment) -> TrainBatch {
        let board = rules.variant.board();
        let symmetries = board.num_symmetries;
        let per_sample = if augment == Augment::All { symmetries } else { 1 };
        let rows = samples.len() * per_sample;
        let mut out = TrainBatch {
            obs: vec![0.0; rows * obs_len_on(board)],
            legal: vec![false; rows * board.num_actions()],
            policy: vec![0.0; rows * board.num_actions()],
            wdl: vec![0.0; rows * 3],
            policy_weight: Vec::with_capacity(rows),
        };
        let mut rng = Rng::seed_from_u64(match augment {
            Augment::Random { seed } => seed,
            _ => 0,
        });
        let mut i = 0;
        for s in samples {
            for k in 0..per_sample {
                let sym = match augment {
                    Augment::None => Symmetry::IDENTITY,
                    Augment::All => Symmetry::try_index(k).unwrap_or(Symmetry::IDENTITY),
                    Augment::Random { .. } => Symmetry::try_index(rng.below(symmetries as u32) as usize)
                        .unwrap_or(Symmetry::IDENTITY),
                };
                out.write_row(i, s, sym, rules, 0.0);
                i += 1;
            }
        }
        out
    }

    /// Writes `s` under `sym` into row `i` (zeroed) and appends its policy weight: the
    /// observation, mask and policy of [`write_sample`], and the value target with
    /// `search_value_weight` of the search value ([`Sample::value_target`]).
    fn write_row(&mut self, i: usize, s: &Sample, sym: Symmetry, rules: &Rules, search_value_weight: f32) {
        let board = rules.variant.board();
        let (len, actions) = (obs_len_on(board), board.num_actions());
        let weight = write_sample(
            s,
            sym,
            rules,
            &mut self.obs[i * len..(i + 1) * len],
            &mut self.legal[i * actions..(i + 1) * actions],
            &mut self.policy[i * actions..(i + 1) * actions],
        );
        self.wdl[i * 3..i * 3 + 3].copy_from_slice(&s.value_target(search_value_weight));
        self.policy_weight.push(weight);
    }

    /// The observations as `[B, C, P]`.
    pub fn obs_view(&self) -> ArrayView3<'_, f32> {
        ArrayView3::from_shape((self.len(), NUM_PLANES, self.points()), &self.obs)
            .expect("obs holds B rows of C * P")
    }

    /// The legal-action masks as `[B, A]`.
    pub fn legal_view(&self) -> ArrayView2<'_, bool> {
        ArrayView2::from_shape((self.len(), self.actions()), &self.legal).expect("legal holds B rows of A")
    }

    /// The policy targets as `[B, A]`.
    pub fn policy_view(&self) -> ArrayView2<'_, f32> {
        ArrayView2::from_shape((self.len(), self.actions()), &self.policy).expect("policy holds B rows of A")
    }

    /// The win/draw/loss targets as `[B, 3]`.
    pub fn wdl_view(&self) -> ArrayView2<'_, f32> {
        ArrayView2::from_shape((self.len(), 3), &self.wdl).expect("wdl holds B rows of 3")
    }

    /// The policy weights as `[B]`.
    pub fn policy_weight_view(&self) -> ArrayView1<'_, f32> {
        ArrayView1::from(&self.policy_weight)
    }

    /// The batch as owned arrays of the shapes of the views, without copying the buffers.
    pub fn into_arrays(self) -> TrainArrays {
        let (b, points, actions) = (self.len(), self.points(), self.actions());
        let shaped = "buffers hold B rows";
        TrainArrays {
            obs: Array3::from_shape_vec((b, NUM_PLANES, points), self.obs).expect(shaped),
            legal: Array2::from_shape_vec((b, actions), self.legal).expect(shaped),
            policy: Array2::from_shape_vec((b, actions), self.policy).expect(shaped),
            wdl: Array2::from_shape_vec((b, 3), self.wdl).expect(shaped),
            policy_weight: Array1::from_vec(self.policy_weight),
        }
    }
}

/// Which board symmetries [`TrainBatch::from_samples`] applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Augment {
    /// Each sample once, as it was played.
    None,
    /// Each sample under every symmetry of the board (16 times; in [`Symmetry::all_on`] order).
    All,
    /// Each sample once, under a symmetry drawn from a generator seeded with `seed`.
    Random {
        /// Seed of the draws.
        seed: u64,
    },
}

/// A [`TrainBatch`] as owned `ndarray` arrays.
#[derive(Clone, Debug)]
pub struct TrainArrays {
    /// `[B, C, P]` observations.
    pub obs: Array3<f32>,
    /// `[B, A]` legal-action masks.
    pub legal: Array2<bool>,
    /// `[B, A]` policy targets (all 0 where the policy weight is 0).
    pub policy: Array2<f32>,
    /// `[B, 3]` win/draw/loss targets for the player to move.
    pub wdl: Array2<f32>,
    /// `[B]` policy weights: 1 after a full search, 0 after a cheap one.
    pub policy_weight: Array1<f32>,
}

/// The replay window.
pub struct Replay {
    window: usize,
    max_reuse: f32,
    search_value_weight: f32,
    samples: VecDeque<Sample>,
    added: u64,
    drawn: u64,
    rng: Rng,
}

impl Replay {
    /// A window of at most `window` positions, each drawn at most about `max_reuse` times on
    /// average (draws are capped at `max_reuse` × positions added), sampled with `seed`.
    pub fn new(window: usize, max_reuse: f32, seed: u64) -> Replay {
        Replay {
            window: window.max(1),
            max_reuse: max_reuse.max(0.0),
            search_value_weight: 0.0,
            samples: VecDeque::new(),
            added: 0,
            drawn: 0,
            rng: Rng::seed_from_u64(seed),
        }
    }

    /// The window with value targets that mix `weight` (0 to 1) of each position's search value
    /// into its game outcome ([`Sample::value_target`]); 0, the default, is the outcome alone.
    pub fn with_search_value_weight(mut self, weight: f32) -> Replay {
        self.search_value_weight = weight.clamp(0.0, 1.0);
        self
    }

    /// Adds positions, dropping the oldest beyond the window.
    pub fn extend<I: IntoIterator<Item = Sample>>(&mut self, samples: I) {
        for s in samples {
            if self.samples.len() == self.window {
                self.samples.pop_front();
            }
            self.samples.push_back(s);
            self.added += 1;
        }
    }

    /// Positions in the window.
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// Whether the window is empty.
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// Positions added since the start (including those that left the window).
    pub fn added(&self) -> u64 {
        self.added
    }

    /// Samples drawn so far.
    pub fn drawn(&self) -> u64 {
        self.drawn
    }

    /// Whether a batch of `batch` samples may be drawn without exceeding the reuse cap.
    pub fn can_draw(&self, batch: usize) -> bool {
        !self.samples.is_empty()
            && self.drawn + batch as u64 <= (self.added as f64 * self.max_reuse as f64) as u64
    }

    /// The sampling generator's state (saved with a checkpoint).
    pub fn rng(&self) -> &Rng {
        &self.rng
    }

    /// Restores the sampling generator (for resuming a run).
    pub fn set_rng(&mut self, rng: Rng) {
        self.rng = rng;
    }

    /// Restores the counters (for resuming a run).
    pub fn set_counters(&mut self, added: u64, drawn: u64) {
        self.added = added;
        self.drawn = drawn;
    }

    /// Draws `batch` samples uniformly from the window (with replacement), each transformed by a
    /// random board symmetry, into `out` (reusing its buffers). Returns `false`, drawing nothing,
    /// if the reuse cap does not allow it.
    pub fn draw(&mut self, batch: usize, rules: &Rules, out: &mut TrainBatch) -> bool {
        if !self.can_draw(batch) {
            return false;
        }
        let board = rules.variant.board();
        out.obs.clear();
        out.obs.resize(batch * obs_len_on(board), 0.0);
        out.legal.clear();
        out.legal.resize(batch * board.num_actions(), false);
        out.policy.clear();
        out.policy.resize(batch * board.num_actions(), 0.0);
        out.wdl.clear();
        out.wdl.resize(batch * 3, 0.0);
        out.policy_weight.clear();
        for i in 0..batch {
            let s = &self.samples[self.rng.below(self.samples.len() as u32) as usize];
            let sym = Symmetry::try_index(self.rng.below(board.num_symmetries as u32) as usize)
                .unwrap_or(Symmetry::IDENTITY);
            out.write_row(i, s, sym, rules, self.search_value_weight);
        }
        self.drawn += batch as u64;
        true
    }
}

/// Writes one sample, transformed by `sym` (a symmetry of `rules`' board), into its rows of a
/// batch (rows must be zeroed): observation `[C*P]`, legal mask `[A]` and policy `[A]` (its value
/// target, which no symmetry changes, is [`Sample::value_target`]). Returns the policy
/// weight (1 after a full search, 0 after a cheap one, whose policy is left at zero).
pub fn write_sample(
    s: &Sample,
    sym: Symmetry,
    rules: &Rules,
    obs: &mut [f32],
    legal: &mut [bool],
    policy: &mut [f32],
) -> f32 {
    let board = rules.variant.board();
    let position = sym.position_on(board, &s.position);
    encode(&position, rules, s.repetitions as u32, obs);
    position.legal_actions(rules).write_bool(legal);
    if s.full_search {
        for &(a, p) in &s.policy {
            policy[sym.action_on(board, a).index()] = p;
        }
    }
    if s.full_search { 1.0 } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use morris_env::OBS_LEN;

    use crate::store::shard::tests::random_game_samples as game_samples;

    #[test]
    fn batches_from_samples_keep_order_and_cover_every_symmetry() {
        let s = game_samples(3);
        let rules = Rules::standard();
        let plain = TrainBatch::from_samples(&s, &rules, Augment::None);
        assert_eq!(plain.len(), s.len());
        let all = TrainBatch::from_samples(&s, &rules, Augment::All);
        assert_eq!(all.len(), 16 * s.len());
        // Row 16 i of the augmented batch is sample i under the identity, as in the plain one.
        for i in 0..s.len() {
            assert_eq!(
                all.obs_view().index_axis(morris_env::ndarray::Axis(0), 16 * i),
                plain.obs_view().index_axis(morris_env::ndarray::Axis(0), i)
            );
            assert_eq!(all.policy_view().row(16 * i), plain.policy_view().row(i));
        }
        for (i, sample) in s.iter().enumerate() {
            let legal = sample.position.legal_actions(&rules);
            let row: Vec<bool> = plain.legal_view().row(i).to_vec();
            assert_eq!(row.iter().filter(|&&x| x).count() as u32, legal.count());
            let wdl = plain.wdl_view().row(i).to_vec();
            assert_eq!(wdl.iter().sum::<f32>(), 1.0);
            assert_eq!(wdl[0] - wdl[2], sample.outcome as f32);
            assert_eq!(plain.policy_weight_view()[i], if sample.full_search { 1.0 } else { 0.0 });
        }
        let random = TrainBatch::from_samples(&s, &rules, Augment::Random { seed: 5 });
        assert_eq!(random.obs, TrainBatch::from_samples(&s, &rules, Augment::Random { seed: 5 }).obs);
        assert_ne!(random.obs, plain.obs);
        let arrays = all.clone().into_arrays();
        assert_eq!(arrays.obs.shape(), &[16 * s.len(), 15, 24]);
        assert_eq!(arrays.obs.as_slice(), Some(&all.obs[..]));
        assert_eq!(arrays.wdl.shape(), &[16 * s.len(), 3]);
    }

    #[test]
    fn the_window_keeps_the_newest_positions() {
        let mut r = Replay::new(10, 4.0, 1);
        let s = game_samples(1);
        r.extend(s.iter().cloned());
        assert_eq!(r.len(), 10);
        assert_eq!(r.added(), s.len() as u64);
        assert_eq!(r.samples.back().map(|x| x.position), s.last().map(|x| x.position));
    }

    #[test]
    fn reuse_is_capped() {
        let mut r = Replay::new(1000, 2.0, 1);
        r.extend(game_samples(2).into_iter().take(50));
        let mut b = TrainBatch::default();
        let rules = Rules::standard();
        assert!(r.draw(64, &rules, &mut b));
        assert!(!r.draw(64, &rules, &mut b), "100 draws allowed for 50 positions at reuse 2");
        assert_eq!(r.drawn(), 64);
        assert!(r.draw(36, &rules, &mut b));
    }

    /// With a search-value weight, drawn value targets are the samples' mixed targets: still
    /// distributions, no longer all one-hot; without one they are the outcomes.
    #[test]
    fn drawn_value_targets_mix_in_the_search_value_by_its_weight() {
        let rules = Rules::standard();
        let samples = game_samples(6);
        assert!(samples.iter().any(|s| s.search_value.is_some()));
        for weight in [0.0, 0.5] {
            let mut r = Replay::new(1000, 100.0, 9).with_search_value_weight(weight);
            r.extend(samples.clone());
            let mut b = TrainBatch::default();
            assert!(r.draw(200, &rules, &mut b));
            let rows: Vec<&[f32]> = b.wdl.chunks(3).collect();
            assert!(rows.iter().all(|t| (t.iter().sum::<f32>() - 1.0).abs() < 1e-6));
            let one_hot = rows.iter().filter(|t| t.contains(&1.0)).count();
            if weight == 0.0 {
                assert_eq!(one_hot, rows.len());
            } else {
                assert!(one_hot < rows.len(), "{one_hot} one-hot rows of {}", rows.len());
            }
        }
    }

    #[test]
    fn every_symmetry_maps_observation_mask_and_policy_together() {
        let rules = Rules::standard();
        for s in game_samples(4).iter().step_by(7).filter(|s| s.full_search) {
            let (mut obs0, mut legal0, mut pol0) = (vec![0.0; OBS_LEN], vec![false; 600], vec![0.0; 600]);
            write_sample(s, Symmetry::IDENTITY, &rules, &mut obs0, &mut legal0, &mut pol0);
            for sym in Symmetry::all() {
                let (mut obs, mut legal, mut pol) = (vec![0.0; OBS_LEN], vec![false; 600], vec![0.0; 600]);
                write_sample(s, sym, &rules, &mut obs, &mut legal, &mut pol);
                let mut mapped_obs = vec![0.0; OBS_LEN];
                sym.observation(&obs0, &mut mapped_obs);
                assert_eq!(obs, mapped_obs, "{sym:?}");
                let mut mapped_pol = vec![0.0; 600];
                sym.policy(&pol0, &mut mapped_pol);
                assert_eq!(pol, mapped_pol, "{sym:?}");
                for (a, &was_legal) in legal0.iter().enumerate() {
                    let action = morris_env::Action(a as u16);
                    assert_eq!(legal[sym.action(action).index()], was_legal, "{sym:?}");
                }
            }
        }
    }

    /// Six men's morris's batches have its board's widths (`[B, 240]` observations, `[B, 272]`
    /// masks and policies), and its 16 symmetries map observation, mask and policy together.
    #[test]
    fn six_mens_morris_batches_follow_its_board() {
        let rules = Rules::six();
        let board = rules.variant.board();
        let (len, actions) = (obs_len_on(board), board.num_actions());
        let samples = crate::store::shard::tests::random_game_samples_for(rules, 5);
        let b = TrainBatch::from_samples(&samples[..4], &rules, Augment::All);
        assert_eq!((b.len(), b.points(), b.actions()), (64, 16, 272));
        assert_eq!((b.obs.len(), b.legal.len(), b.policy.len()), (64 * len, 64 * actions, 64 * actions));
        assert_eq!(b.obs_view().dim(), (64, 15, 16));
        for s in samples.iter().filter(|s| s.full_search).take(5) {
            let (mut obs0, mut legal0, mut pol0) = (vec![0.0; len], vec![false; actions], vec![0.0; actions]);
            write_sample(s, Symmetry::IDENTITY, &rules, &mut obs0, &mut legal0, &mut pol0);
            assert!((pol0.iter().sum::<f32>() - 1.0).abs() < 1e-4);
            for sym in Symmetry::all_on(board) {
                let (mut obs, mut legal, mut pol) =
                    (vec![0.0; len], vec![false; actions], vec![0.0; actions]);
                write_sample(s, sym, &rules, &mut obs, &mut legal, &mut pol);
                let mut mapped_obs = vec![0.0; len];
                sym.observation_on(board, &obs0, &mut mapped_obs);
                assert_eq!(obs, mapped_obs, "{sym:?}");
                let mut mapped_pol = vec![0.0; actions];
                sym.policy_on(board, &pol0, &mut mapped_pol);
                assert_eq!(pol, mapped_pol, "{sym:?}");
                for (a, &was_legal) in legal0.iter().enumerate() {
                    assert_eq!(legal[sym.action_on(board, morris_env::Action(a as u16)).index()], was_legal);
                }
            }
        }
        let mut r = Replay::new(1_000, 100.0, 3);
        r.extend(samples);
        let mut drawn = TrainBatch::default();
        assert!(r.draw(32, &rules, &mut drawn));
        assert_eq!((drawn.points(), drawn.actions(), drawn.into_arrays().policy.dim()), (16, 272, (32, 272)));
    }

    #[test]
    fn batches_are_consistent_under_the_symmetries() {
        let rules = Rules::standard();
        let mut r = Replay::new(10_000, 100.0, 3);
        r.extend(game_samples(3));
        let mut b = TrainBatch::default();
        assert!(r.draw(256, &rules, &mut b));
        assert_eq!(
            (b.obs.len(), b.legal.len(), b.policy.len(), b.wdl.len(), b.len()),
            (256 * OBS_LEN, 256 * 600, 256 * 600, 256 * 3, 256)
        );
        let mut saw_full = false;
        for i in 0..256 {
            let legal = &b.legal[i * 600..(i + 1) * 600];
            let policy = &b.policy[i * 600..(i + 1) * 600];
            assert!(policy.iter().zip(legal).all(|(&p, &l)| p == 0.0 || l), "policy only on legal actions");
            let mass: f32 = policy.iter().sum();
            if b.policy_weight[i] == 1.0 {
                saw_full = true;
                assert!((mass - 1.0).abs() < 1e-4);
            } else {
                assert_eq!(mass, 0.0);
            }
            assert_eq!(b.wdl[i * 3..i * 3 + 3].iter().sum::<f32>(), 1.0);
            // The own-pieces plane and the mask describe the same (transformed) position.
            let own = &b.obs[i * OBS_LEN..i * OBS_LEN + 24];
            assert!(own.iter().all(|&x| x == 0.0 || x == 1.0));
        }
        assert!(saw_full);
    }
}
