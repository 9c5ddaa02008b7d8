//! Agent specs: strings such as `random` or `minimax:depth=4` that name a player and build it.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use burn::prelude::Device;
use morris_env::minimax::{ARENA_TT_BITS, EvalWeights};
use morris_env::tablebase::{PerfectPlayer, Pick, SharedTablebase, TablebaseError};
use morris_env::{Agent, Minimax, MinimaxConfig, RandomAgent, Rules, Variant};
use morris_train::TrainError;
use morris_train::agents::{AzAgent, PlayBudget, TIME_ONLY_SIMULATIONS, az_agent_from_model, rollout_mcts};
use morris_train::mcts::MctsConfig;
use morris_train::model::PolicyValueNet;
use morris_train::store::{load_model, load_model_for};
use thiserror::Error;

use crate::duration::parse_duration;
use crate::uci::UciSpec;

/// The forms an agent spec may take, for error messages and `--help`.
pub const SPEC_FORMS: &str = "random | minimax:depth=D | minimax:time=T (e.g. 100ms, 2s) | minimax:nodes=N \
(options combine, e.g. minimax:depth=8,time=1s; add tt=BITS for the table size, default 18) | mcts:sims=N \
(UCT with random rollouts) | az:model=DIR,sims=N or az:model=DIR,time=T (a trained network with PUCT search; \
add threads=N for N search threads, batch=K for K leaves per network call) | \
add tb=DIR to minimax or az for exact endgame values from tablebases built by `morris tablebase build` | \
perfect:tb=DIR[,pick=best|random] (perfect play from the tables: the quickest win, the slowest loss and the \
draw with the most winning chances, or a seeded random value-keeping move) | \
uci:cmd=PATH[,arg=A]...[,movetime=T|depth=N|nodes=N][,option.NAME=VALUE]...[,timeout=T] (an external UCI engine)";

/// A loaded network, shared by every agent built from one spec.
#[derive(Clone)]
pub struct LoadedModel {
    /// Directory it was loaded from (or a label for a network held in memory).
    pub dir: PathBuf,
    model: Arc<PolicyValueNet>,
    device: Device,
}

impl LoadedModel {
    /// Opens the exported model in `dir` on the CPU backend: its manifest verified, its config
    /// read and, when `variant` is given, checked to play that variant before the weights are
    /// read. The one way the agent specs, the UCI engine, `eval play`, the web board and
    /// Python open a model.
    ///
    /// # Errors
    /// A missing, corrupt or unverifiable directory, as [`load_model`] reports it;
    /// [`TrainError::Variant`] naming the directory if its network plays another variant.
    pub fn open(dir: &Path, variant: Option<Variant>) -> Result<LoadedModel, TrainError> {
        let device = Device::flex();
        let (net, _) = match variant {
            Some(variant) => load_model_for(dir, &device, variant)?,
            None => load_model(dir, &device)?,
        };
        Ok(LoadedModel::from_network(dir, net, device))
    }

    /// The variant of the morris family its network plays.
    pub fn variant(&self) -> Variant {
        self.model.config().variant
    }

    /// The network (unshared if this is its only holder, else a copy) and its device.
    pub fn into_parts(self) -> (PolicyValueNet, Device) {
        (Arc::try_unwrap(self.model).unwrap_or_else(|shared| (*shared).clone()), self.device)
    }

    /// A network already in memory (the learner's, say), named `label` in specs and records.
    pub fn from_network(label: impl Into<PathBuf>, model: PolicyValueNet, device: Device) -> LoadedModel {
        LoadedModel { dir: label.into(), model: Arc::new(model), device }
    }

    /// The network.
    pub fn network(&self) -> &PolicyValueNet {
        &self.model
    }

    /// The device it runs on.
    pub fn device(&self) -> &Device {
        &self.device
    }
}

impl fmt::Debug for LoadedModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LoadedModel({})", self.dir.display())
    }
}

/// An agent built from a spec ([`AgentSpec::searcher`]) with its kind kept, for the surfaces
/// that read more than its move (the UCI engine's `info` lines: the network's tree, minimax's
/// iterations, the tables' values).
pub enum Searcher {
    /// A network guiding the search.
    Az(Box<AzAgent>),
    /// The alpha-beta baseline.
    Minimax(Box<Minimax>),
    /// The perfect player and the tables it reads.
    Perfect(Box<PerfectPlayer>, SharedTablebase),
    /// Any other agent (random, rollout MCTS, an external UCI engine).
    Other(Box<dyn Agent>),
}

impl Searcher {
    /// The agent, as a player and nothing more.
    pub fn into_agent(self) -> Box<dyn Agent> {
        match self {
            Searcher::Az(a) => a,
            Searcher::Minimax(a) => a,
            Searcher::Perfect(a, _) => a,
            Searcher::Other(a) => a,
        }
    }
}

/// A parsed agent spec. It can build any number of independent agents (one per game, so games
/// can run in parallel), each seeded for reproducibility.
#[derive(Clone, Debug)]
pub enum AgentSpec {
    /// Uniformly random legal moves.
    Random,
    /// The alpha-beta baseline with these limits (its seed is set per game).
    Minimax(MinimaxConfig),
    /// UCT with one random playout per leaf and `sims` simulations per move.
    Mcts {
        /// Simulations per move.
        sims: u32,
    },
    /// A trained network guiding PUCT search, temperature 0, no root noise.
    Az {
        /// The network.
        model: LoadedModel,
        /// The search; `num_simulations` is the spec's `sims` (with only `time` given,
        /// [`TIME_ONLY_SIMULATIONS`]).
        search: MctsConfig,
        /// Time per move, threads and leaves per network call.
        budget: PlayBudget,
    },
    /// An external engine spoken to over UCI (its processes are shared by the agents built
    /// from one spec).
    Uci(Arc<UciSpec>),
    /// Perfect play from the tables (and the placement solver while pieces are in hand).
    Perfect {
        /// The tables.
        tablebase: SharedTablebase,
        /// How it chooses among the moves that keep the value.
        pick: Pick,
    },
}

/// Specs are equal when their canonical names are.
impl PartialEq for AgentSpec {
    fn eq(&self, other: &AgentSpec) -> bool {
        self.name() == other.name()
    }
}

/// Why a spec could not be read.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error(
    "bad agent spec '{spec}': {reason}{}",
    if *syntax { format!(". Valid forms: {SPEC_FORMS}") } else { String::new() }
)]
pub struct SpecError {
    /// The spec as given.
    pub spec: String,
    /// What is wrong with it.
    pub reason: String,
    /// Whether the spec itself is malformed (then the valid forms are listed), rather than
    /// naming something that cannot be used (a missing or corrupt model).
    pub syntax: bool,
}

/// Why an agent cannot play under a game's rules ([`AgentSpec::check_rules`]).
#[derive(Debug, Error)]
pub enum RulesMismatch {
    /// An agent whose network plays another variant of the morris family than the game's.
    #[error("'{spec}' plays the '{model}' variant, but the game is '{rules}'")]
    Variant {
        /// The agent's spec.
        spec: String,
        /// The variant its network was trained on.
        model: Variant,
        /// The variant of the game's rules.
        rules: Variant,
    },
    /// Endgame tables built for other rules (or another variant).
    #[error(transparent)]
    Tablebase(#[from] TablebaseError),
}

impl AgentSpec {
    /// Parses a spec string.
    ///
    /// # Errors
    /// A [`SpecError`] that names the problem and lists the valid forms.
    pub fn parse(spec: &str) -> Result<AgentSpec, SpecError> {
        let err = |reason: String| SpecError { spec: spec.to_string(), reason, syntax: true };
        let open_tb = |dir: &str| {
            SharedTablebase::open(std::path::Path::new(dir)).map_err(|e| SpecError {
                spec: spec.to_string(),
                reason: e.to_string(),
                syntax: false,
            })
        };
        // Each option once: `minimax:depth=2,depth=3` is a mistake, not a choice.
        let mut seen = std::collections::HashSet::new();
        let mut once = |key: &str| {
            if seen.insert(key.to_string()) { Ok(()) } else { Err(err(format!("'{key}' is given twice"))) }
        };
        let (kind, args) = match spec.trim().split_once(':') {
            Some((k, a)) => (k, Some(a)),
            None => (spec.trim(), None),
        };
        match kind {
            "random" => match args {
                None => Ok(AgentSpec::Random),
                Some(_) => Err(err("random takes no options".into())),
            },
            "minimax" => {
                let args = args.ok_or_else(|| err("minimax needs a limit: depth, time or nodes".into()))?;
                let mut c = MinimaxConfig {
                    depth: None,
                    time: None,
                    nodes: None,
                    tt_bits: ARENA_TT_BITS,
                    seed: 0,
                    weights: EvalWeights::default(),
                    tablebase: None,
                };
                for kv in args.split(',') {
                    let (k, v) = kv.split_once('=').ok_or_else(|| err(format!("'{kv}' is not key=value")))?;
                    once(k.trim())?;
                    match k.trim() {
                        "depth" => {
                            let d: u32 =
                                v.parse().map_err(|_| err(format!("depth '{v}' is not a whole number")))?;
                            if !(1..=64).contains(&d) {
                                return Err(err(format!("depth {d} is outside 1..=64")));
                            }
                            c.depth = Some(d);
                        }
                        "time" => {
                            c.time = Some(parse_duration(v.trim()).ok_or_else(|| {
                                err(format!("time '{v}' is not a positive duration such as 100ms or 2s"))
                            })?);
                        }
                        "nodes" => {
                            let n: u64 =
                                v.parse().map_err(|_| err(format!("nodes '{v}' is not a whole number")))?;
                            if n == 0 {
                                return Err(err("nodes must be positive".into()));
                            }
                            c.nodes = Some(n);
                        }
                        "tt" => {
                            let b: u32 =
                                v.parse().map_err(|_| err(format!("tt '{v}' is not a whole number")))?;
                            if !(10..=30).contains(&b) {
                                return Err(err(format!("tt {b} is outside 10..=30 (bits)")));
                            }
                            c.tt_bits = b;
                        }
                        "tb" => c.tablebase = Some(open_tb(v.trim())?),
                        other => return Err(err(format!("unknown minimax option '{other}'"))),
                    }
                }
                if c.depth.is_none() && c.time.is_none() && c.nodes.is_none() {
                    return Err(err("minimax needs a limit: depth, time or nodes".into()));
                }
                Ok(AgentSpec::Minimax(c))
            }
            "mcts" | "az" => {
                let args = args.ok_or_else(|| err(format!("{kind} needs options, e.g. {kind}:sims=200")))?;
                let (mut sims, mut model, mut tablebase) = (None, None, None);
                let mut budget = PlayBudget::default();
                for kv in args.split(',') {
                    let (k, v) = kv.split_once('=').ok_or_else(|| err(format!("'{kv}' is not key=value")))?;
                    once(k.trim())?;
                    let v = v.trim();
                    let whole = |name: &str, range: std::ops::RangeInclusive<u32>| {
                        let n: u32 =
                            v.parse().map_err(|_| err(format!("{name} '{v}' is not a whole number")))?;
                        if range.contains(&n) {
                            Ok(n)
                        } else {
                            Err(err(format!("{name} {n} is outside {}..={}", range.start(), range.end())))
                        }
                    };
                    match (kind, k.trim()) {
                        (_, "sims") => sims = Some(whole("sims", 1..=1_000_000)?),
                        ("az", "model") => model = Some(PathBuf::from(v)),
                        ("az", "time") => {
                            budget.time = Some(parse_duration(v).ok_or_else(|| {
                                err(format!("time '{v}' is not a positive duration such as 100ms or 2s"))
                            })?);
                        }
                        ("az", "threads") => budget.threads = whole("threads", 1..=64)?,
                        ("az", "batch") => budget.batch = whole("batch", 1..=256)?,
                        ("az", "tb") => tablebase = Some(open_tb(v)?),
                        (_, other) => return Err(err(format!("unknown {kind} option '{other}'"))),
                    }
                }
                if kind == "mcts" {
                    let sims = sims.ok_or_else(|| err("mcts needs sims=N".into()))?;
                    return Ok(AgentSpec::Mcts { sims });
                }
                let sims = match (sims, budget.time) {
                    (Some(n), _) => n,
                    (None, Some(_)) => TIME_ONLY_SIMULATIONS,
                    (None, None) => return Err(err("az needs sims=N or time=T (or both)".into())),
                };
                let dir =
                    model.ok_or_else(|| err("az needs model=DIR (an exported model directory)".into()))?;
                // Any variant's model: `check_rules` refuses a game of another.
                let model = LoadedModel::open(&dir, None).map_err(|e| SpecError {
                    spec: spec.to_string(),
                    reason: e.to_string(),
                    syntax: false,
                })?;
                let search = MctsConfig { num_simulations: sims, tablebase, ..MctsConfig::default() };
                Ok(AgentSpec::Az { model, search, budget })
            }
            "perfect" => {
                let args = args.ok_or_else(|| err("perfect needs tb=DIR".into()))?;
                let (mut tablebase, mut pick) = (None, Pick::default());
                for kv in args.split(',') {
                    let (k, v) = kv.split_once('=').ok_or_else(|| err(format!("'{kv}' is not key=value")))?;
                    once(k.trim())?;
                    match (k.trim(), v.trim()) {
                        ("tb", dir) => tablebase = Some(dir.to_string()),
                        ("pick", "best") => pick = Pick::Best,
                        ("pick", "random") => pick = Pick::Random,
                        ("pick", other) => return Err(err(format!("pick '{other}' is not best or random"))),
                        (other, _) => return Err(err(format!("unknown perfect option '{other}'"))),
                    }
                }
                let dir = tablebase.ok_or_else(|| err("perfect needs tb=DIR".into()))?;
                Ok(AgentSpec::Perfect { tablebase: open_tb(&dir)?, pick })
            }
            "uci" => {
                let args = args.ok_or_else(|| err("uci needs cmd=PATH".into()))?;
                UciSpec::parse(args).map(|u| AgentSpec::Uci(Arc::new(u))).map_err(err)
            }
            "" => Err(err("empty spec".into())),
            other => Err(err(format!("unknown agent '{other}'"))),
        }
    }

    /// The endgame tables the agent consults, if any.
    pub fn tablebase(&self) -> Option<&SharedTablebase> {
        match self {
            AgentSpec::Minimax(c) => c.tablebase.as_ref(),
            AgentSpec::Az { search, .. } => search.tablebase.as_ref(),
            AgentSpec::Perfect { tablebase, .. } => Some(tablebase),
            _ => None,
        }
    }

    /// The variant of the morris family the agent's network plays, if it has one (the other
    /// agents play any variant).
    pub fn variant(&self) -> Option<Variant> {
        match self {
            AgentSpec::Az { model, .. } => Some(model.network().config().variant),
            _ => None,
        }
    }

    /// Checks that the agent can play under `rules`: its network (if any) plays their variant
    /// and its endgame tables (if any) were built for them.
    ///
    /// # Errors
    /// [`RulesMismatch::Variant`] naming the spec and both variants; [`RulesMismatch::Tablebase`]
    /// with the tables' refusal of these rules.
    pub fn check_rules(&self, rules: &Rules) -> Result<(), RulesMismatch> {
        if let Some(model) = self.variant().filter(|&v| v != rules.variant) {
            return Err(RulesMismatch::Variant { spec: self.name(), model, rules: rules.variant });
        }
        Ok(self.tablebase().map_or(Ok(()), |tb| tb.check_rules(rules))?)
    }

    /// A depth-limited minimax spec with the default table size (as `minimax:depth=D`).
    pub fn minimax_depth(depth: u32) -> AgentSpec {
        AgentSpec::Minimax(MinimaxConfig { tt_bits: ARENA_TT_BITS, ..MinimaxConfig::depth(depth) })
    }

    /// A new agent with the given seed (for the random moves or the tie-break).
    ///
    /// # Errors
    /// [`SpecError`] if the agent's search threads cannot be started.
    pub fn build(&self, seed: u64) -> Result<Box<dyn Agent>, SpecError> {
        self.searcher(seed).map(Searcher::into_agent)
    }

    /// A new agent with the given seed, its kind kept ([`Searcher`]): what [`AgentSpec::build`]
    /// builds, for a surface that reads more of it than its move.
    ///
    /// # Errors
    /// [`SpecError`] if the agent's search threads cannot be started.
    pub fn searcher(&self, seed: u64) -> Result<Searcher, SpecError> {
        Ok(match self {
            AgentSpec::Random => Searcher::Other(Box::new(RandomAgent::new(seed))),
            AgentSpec::Minimax(c) => {
                Searcher::Minimax(Box::new(Minimax::new(MinimaxConfig { seed, ..c.clone() })))
            }
            AgentSpec::Mcts { sims } => Searcher::Other(Box::new(rollout_mcts(*sims, seed))),
            AgentSpec::Az { model, search, budget } => Searcher::Az(Box::new(
                az_agent_from_model(
                    (*model.model).clone(),
                    model.device.clone(),
                    self.name(),
                    search.clone(),
                    *budget,
                    seed,
                )
                .map_err(|e| SpecError {
                    spec: self.name(),
                    reason: e.to_string(),
                    syntax: false,
                })?,
            )),
            AgentSpec::Uci(spec) => Searcher::Other(Box::new(spec.agent(seed))),
            AgentSpec::Perfect { tablebase, pick } => Searcher::Perfect(
                Box::new(PerfectPlayer::new(tablebase.clone(), *pick, seed)),
                tablebase.clone(),
            ),
        })
    }

    /// The canonical spec string, such as `minimax:depth=4`.
    pub fn name(&self) -> String {
        match self {
            AgentSpec::Random => "random".into(),
            AgentSpec::Minimax(c) => {
                let tt =
                    if c.tt_bits != ARENA_TT_BITS { format!(",tt={}", c.tt_bits) } else { String::new() };
                format!("minimax:{}{tt}{}", c.limits_text(), tb_suffix(c.tablebase.as_ref()))
            }
            AgentSpec::Mcts { sims } => format!("mcts:sims={sims}"),
            AgentSpec::Az { model, search, budget } => {
                let mut name = format!("az:model={}", model.dir.display());
                if budget.time.is_none() || search.num_simulations != TIME_ONLY_SIMULATIONS {
                    name += &format!(",sims={}", search.num_simulations);
                }
                if let Some(t) = budget.time {
                    name += &format!(",time={}ms", t.as_millis());
                }
                if budget.threads != 1 {
                    name += &format!(",threads={}", budget.threads);
                }
                if budget.batch != 1 {
                    name += &format!(",batch={}", budget.batch);
                }
                name + &tb_suffix(search.tablebase.as_ref())
            }
            AgentSpec::Uci(spec) => spec.name(),
            AgentSpec::Perfect { tablebase, pick } => {
                let pick = if *pick == Pick::Best { String::new() } else { format!(",pick={}", pick.name()) };
                format!("perfect:tb={}{pick}", tablebase.dir().display())
            }
        }
    }
}

/// `,tb=DIR` for an agent with endgame tables.
fn tb_suffix(tb: Option<&SharedTablebase>) -> String {
    tb.map(|t| format!(",tb={}", t.dir().display())).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A network trained for twelve men's morris plays under twelve's rules and is refused under
    /// nine's, naming the spec and both variants; the other agents play any variant.
    #[test]
    fn an_agent_whose_network_plays_another_variant_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let net = morris_train::model::NetConfig {
            width: 8,
            blocks: 1,
            variant: Variant::Twelve,
            ..Default::default()
        };
        morris_train::store::save_model(&net.init(&Device::flex()), dir.path()).unwrap();
        let az = AgentSpec::parse(&format!("az:model={},sims=2", dir.path().display())).unwrap();
        assert_eq!(az.variant(), Some(Variant::Twelve));
        assert!(az.check_rules(&Rules::twelve()).is_ok());
        let e = az.check_rules(&Rules::standard()).unwrap_err();
        assert!(
            matches!(&e, RulesMismatch::Variant { model: Variant::Twelve, rules: Variant::Nine, spec } if spec == &az.name()),
            "{e}"
        );
        for other in ["random", "minimax:depth=2", "mcts:sims=4"] {
            let s = AgentSpec::parse(other).unwrap();
            assert!(s.check_rules(&Rules::twelve()).is_ok() && s.check_rules(&Rules::standard()).is_ok());
        }
        // The one loader: any variant without one asked for, the asked variant's only with one.
        let model = LoadedModel::open(dir.path(), None).unwrap();
        assert_eq!(model.variant(), Variant::Twelve);
        assert!(LoadedModel::open(dir.path(), Some(Variant::Twelve)).is_ok());
        let e = LoadedModel::open(dir.path(), Some(Variant::Six)).unwrap_err();
        assert!(
            matches!(&e, TrainError::Variant { found: Variant::Twelve, expected: Variant::Six, path, .. } if path == dir.path()),
            "{e}"
        );
        let (net, _) = model.into_parts();
        assert_eq!(net.config().variant, Variant::Twelve);
        // A spec builds its agent with its kind kept, or as a plain player.
        assert!(matches!(az.searcher(1), Ok(Searcher::Az(_))));
        assert!(matches!(AgentSpec::parse("minimax:depth=2").unwrap().searcher(1), Ok(Searcher::Minimax(_))));
        assert!(matches!(AgentSpec::parse("random").unwrap().searcher(1), Ok(Searcher::Other(_))));
        let game = morris_env::Game::new(Rules::twelve());
        let mut agent = az.searcher(1).unwrap().into_agent();
        assert!(game.legal_actions().has(agent.choose(&game).unwrap()));
    }

    #[test]
    fn parses_the_documented_forms() {
        assert_eq!(AgentSpec::parse("random"), Ok(AgentSpec::Random));
        let s = AgentSpec::parse("minimax:depth=4").unwrap();
        assert_eq!(s.name(), "minimax:depth=4");
        let s = AgentSpec::parse("minimax:time=100ms").unwrap();
        assert_eq!(s.name(), "minimax:time=100ms");
        let s = AgentSpec::parse("minimax:depth=8,time=1.5s,tt=16").unwrap();
        assert_eq!(s.name(), "minimax:depth=8,time=1500ms,tt=16");
        assert_eq!(AgentSpec::parse("minimax:nodes=5000").unwrap().name(), "minimax:nodes=5000");
        assert_eq!(AgentSpec::parse("mcts:sims=200").unwrap().name(), "mcts:sims=200");
    }

    #[test]
    fn bad_specs_name_the_problem_and_list_the_forms() {
        for (spec, needle) in [
            ("", "empty"),
            ("alphago", "unknown agent 'alphago'"),
            ("minimax", "needs a limit"),
            ("minimax:depth=x", "not a whole number"),
            ("minimax:depth=0", "outside"),
            ("minimax:time=fast", "not a positive duration"),
            ("minimax:time=-1s", "not a positive duration"),
            ("minimax:speed=3", "unknown minimax option"),
            ("minimax:depth", "not key=value"),
            ("random:seed=1", "no options"),
            ("mcts", "needs options"),
            ("mcts:sims=0", "outside"),
            ("mcts:depth=3", "unknown mcts option"),
            ("az:sims=10", "needs model=DIR"),
            ("az:model=m", "needs sims=N or time=T"),
            ("az:model=m,time=soon", "not a positive duration"),
            ("az:model=m,sims=8,threads=0", "threads 0 is outside 1..=64"),
            ("az:model=m,sims=8,batch=999", "batch 999 is outside 1..=256"),
            ("mcts:sims=8,time=1s", "unknown mcts option 'time'"),
            ("minimax:depth=2,depth=3", "'depth' is given twice"),
            ("az:sims=4,model=a,sims=8", "'sims' is given twice"),
            ("perfect", "perfect needs tb=DIR"),
            ("perfect:pick=best", "perfect needs tb=DIR"),
            ("perfect:tb=x,pick=fast", "pick 'fast' is not best or random"),
            ("perfect:tb=x,depth=3", "unknown perfect option 'depth'"),
        ] {
            let e = AgentSpec::parse(spec).unwrap_err();
            assert!(e.syntax, "{spec}");
            let e = e.to_string();
            assert!(e.contains(needle), "{spec}: {e}");
            assert!(e.contains("Valid forms"), "{e}");
        }
        // A model that cannot be loaded is named, without the list of forms.
        let e = AgentSpec::parse("az:model=/nonexistent/model,sims=10").unwrap_err();
        assert!(!e.syntax && e.to_string().contains("/nonexistent/model"), "{e}");
        assert!(!e.to_string().contains("Valid forms"), "{e}");
        // So are missing tables.
        let e = AgentSpec::parse("perfect:tb=/nonexistent/tables").unwrap_err();
        assert!(!e.syntax && e.to_string().contains("/nonexistent/tables"), "{e}");
    }

    #[test]
    fn the_perfect_player_is_a_spec_that_keeps_its_options() {
        let dir = tempfile::tempdir().unwrap();
        morris_env::tablebase::build(dir.path(), 3, &Rules::standard(), &|_| {}).unwrap();
        let d = dir.path().display();
        let s = AgentSpec::parse(&format!("perfect:tb={d}")).unwrap();
        assert_eq!(s.name(), format!("perfect:tb={d}"));
        assert!(s.tablebase().is_some() && s.check_rules(&Rules::standard()).is_ok());
        assert!(s.check_rules(&Rules::openspiel()).is_err());
        let r = AgentSpec::parse(&format!("perfect:tb={d},pick=random")).unwrap();
        assert_eq!(r.name(), format!("perfect:tb={d},pick=random"));
        assert_eq!(AgentSpec::parse(&r.name()).unwrap(), r);
        // Outside the 3v3 tables it forfeits, naming the sector it needs.
        let mut agent = s.build(1).unwrap();
        let game = morris_env::Game::new(Rules::standard());
        assert_eq!(agent.choose(&game), None);
        let why = agent.forfeit_reason().unwrap();
        assert!(why.contains("--max-pieces"), "{why}");
    }
}
