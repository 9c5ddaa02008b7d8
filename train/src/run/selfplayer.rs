//! Self-play for one process: the games split into groups (one per thread), each with its own
//! network evaluator, stepped concurrently, their positions written out as game shards.

use burn::prelude::Device;
use morris_env::{Rng, Rules, Variant};
use rayon::prelude::*;

use crate::config::TrainConfig;
use crate::error::Result;
use crate::model::PolicyValueNet;
use crate::net_evaluator::NetEvaluator;
use crate::sample::Sample;
use crate::selfplay::{GameStats, SelfPlay};
use crate::store::{EncodedShard, ShardSink};

/// Stream of [`Rng::derive`] for the seeds of self-play groups.
const GROUP_STREAM: u64 = 1;

/// Self-play for one process. At the default sizes one network call uses about one core (the
/// matrix products are below flex's threshold for splitting), so a single group would leave
/// the other cores mostly idle.
pub(crate) struct SelfPlayer {
    groups: Vec<(SelfPlay, NetEvaluator)>,
    sink: ShardSink,
    /// The variant its games are of, recorded in every shard.
    variant: Variant,
    ready: Vec<Sample>,
    games_written: u64,
    shard_positions: usize,
}

/// What one [`SelfPlayer::step`] did.
pub(crate) struct Progress {
    /// Positions recorded.
    pub(crate) positions: u64,
    /// Network evaluations made.
    pub(crate) evaluations: u64,
    /// Whether a shard was written.
    pub(crate) wrote_shard: bool,
    /// Where the groups' time went, in seconds summed over the groups (threads).
    pub(crate) time: SelfPlayTime,
}

/// Seconds of self-play summed over its groups: in the network, in the rest of the search (the
/// trees), and outside the search (env steps, training targets, finished games, shards).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct SelfPlayTime {
    pub(crate) network_s: f64,
    pub(crate) tree_s: f64,
    pub(crate) other_s: f64,
}

impl SelfPlayTime {
    fn of(groups: &[(SelfPlay, NetEvaluator)]) -> SelfPlayTime {
        let (mut network_s, mut search_s, mut step_s) = (0.0, 0.0, 0.0);
        for (play, _) in groups {
            network_s += play.network_seconds();
            search_s += play.search_seconds;
            step_s += play.step_seconds;
        }
        SelfPlayTime { network_s, tree_s: search_s - network_s, other_s: step_s - search_s }
    }

    /// Adds `other`'s seconds to these.
    pub(crate) fn add(&mut self, other: SelfPlayTime) {
        self.network_s += other.network_s;
        self.tree_s += other.tree_s;
        self.other_s += other.other_s;
    }

    fn since(self, earlier: SelfPlayTime) -> SelfPlayTime {
        SelfPlayTime {
            network_s: self.network_s - earlier.network_s,
            tree_s: self.tree_s - earlier.tree_s,
            other_s: self.other_s - earlier.other_s,
        }
    }
}

impl SelfPlayer {
    /// `config.selfplay.parallel_games` games in `groups` groups (at most one per game), all
    /// seeded from `seed`, playing with `model`.
    ///
    /// # Errors
    /// A self-play config that cannot be used.
    pub(crate) fn new(
        config: &TrainConfig,
        rules: Rules,
        model: PolicyValueNet,
        device: &Device,
        sink: impl Into<ShardSink>,
        seed: u64,
        groups: usize,
    ) -> Result<SelfPlayer> {
        let total = config.selfplay.parallel_games;
        let n = groups.clamp(1, total);
        let tablebase = config.open_tablebase()?;
        let mcts = crate::mcts::MctsConfig {
            tablebase: tablebase.clone().filter(|_| config.tablebase.search),
            ..config.mcts.clone()
        };
        let mut out = Vec::with_capacity(n);
        for g in 0..n {
            let games = total / n + usize::from(g < total % n);
            let sp_config =
                crate::config::SelfPlayConfig { parallel_games: games, ..config.selfplay.clone() };
            let group_seed = Rng::derive(seed, GROUP_STREAM, g as u64);
            let mut play = SelfPlay::new(&sp_config, &mcts, rules, group_seed)?;
            if let Some(tb) = tablebase.clone().filter(|_| config.tablebase.adjudicate) {
                play = play.adjudicate_with(tb);
            }
            out.push((play, NetEvaluator::new(model.clone(), device.clone())));
        }
        Ok(SelfPlayer {
            groups: out,
            sink: sink.into(),
            variant: rules.variant,
            ready: Vec::new(),
            games_written: 0,
            shard_positions: config.selfplay.shard_positions,
        })
    }

    /// Plays one move in every game; writes a shard when enough positions are ready.
    ///
    /// # Errors
    /// A search that broke an invariant, or a shard that cannot be written.
    pub(crate) fn step(&mut self) -> Result<Progress> {
        let (p0, e0, t0) = (self.positions(), self.evaluations(), SelfPlayTime::of(&self.groups));
        self.groups.par_iter_mut().try_for_each(|(play, evaluator)| play.step(evaluator))?;
        let time = SelfPlayTime::of(&self.groups).since(t0);
        for (play, _) in &mut self.groups {
            self.ready.append(&mut play.take_samples());
        }
        let wrote_shard = self.ready.len() >= self.shard_positions;
        if wrote_shard {
            self.flush()?;
        }
        Ok(Progress {
            positions: self.positions() - p0,
            evaluations: self.evaluations() - e0,
            wrote_shard,
            time,
        })
    }

    /// The simulations the next [`SelfPlayer::step`] runs, summed over its games: the size of
    /// its work, known before it starts.
    pub(crate) fn next_simulations(&self) -> u64 {
        self.groups.iter().map(|(play, _)| play.next_simulations() as u64 * play.num_games() as u64).sum()
    }

    /// Positions recorded so far.
    pub(crate) fn positions(&self) -> u64 {
        self.groups.iter().map(|g| g.0.positions).sum()
    }

    fn evaluations(&self) -> u64 {
        self.groups.iter().map(|g| g.0.evaluations()).sum()
    }

    /// Games finished so far.
    pub(crate) fn games(&self) -> u64 {
        self.groups.iter().map(|g| g.0.games).sum()
    }

    /// The statistics of the games finished since the last call.
    pub(crate) fn take_stats(&mut self) -> GameStats {
        let mut stats = GameStats::default();
        for (play, _) in &mut self.groups {
            stats.merge(play.take_stats());
        }
        stats
    }

    /// Plays on with new weights.
    pub(crate) fn set_model(&mut self, model: &PolicyValueNet) {
        for (_, evaluator) in &mut self.groups {
            evaluator.set_model(model);
        }
    }

    /// The shards kept in memory since the last call (none when they go to files).
    pub(crate) fn take_shards(&mut self) -> Vec<EncodedShard> {
        self.sink.take()
    }

    /// Writes the positions not yet written as a shard.
    ///
    /// # Errors
    /// If the shard cannot be written.
    pub(crate) fn flush(&mut self) -> Result<()> {
        if self.ready.is_empty() {
            return Ok(());
        }
        let games = self.games() - self.games_written;
        self.games_written = self.games();
        let samples = std::mem::take(&mut self.ready);
        self.sink.write(&samples, games as u32, self.variant)
    }
}
