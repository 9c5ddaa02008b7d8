//! The training configuration: TOML sections with defaults, `--set section.key=value`
//! overrides, and validation that names the offending key.

use std::path::PathBuf;

use morris_env::tablebase::SharedTablebase;
use morris_env::{Rules, Variant};
use serde::{Deserialize, Serialize};

use crate::error::ConfigError;
use crate::mcts::MctsConfig;
use crate::model::NetConfig;

/// The largest values the config accepts, so that a typo cannot ask for more threads, games or
/// memory than a 24 GiB machine holds (the error names the key and the range).
pub mod limits {
    /// `run.threads` (0 = all cores).
    pub const THREADS: u64 = 256;
    /// `selfplay.parallel_games`: games (and search trees) kept in memory at once.
    pub const PARALLEL_GAMES: u64 = 65_536;
    /// Simulations per move (`mcts.num_simulations`, `selfplay.simulations`,
    /// `selfplay.cheap_simulations`, `eval.simulations`).
    pub const SIMULATIONS: u64 = 100_000;
    /// `selfplay.shard_positions`.
    pub const SHARD_POSITIONS: u64 = 1_000_000;
    /// `replay.window`, in positions (about 200 bytes each).
    pub const WINDOW: u64 = 20_000_000;
    /// `optimizer.batch_size`.
    pub const BATCH_SIZE: u64 = 65_536;
    /// `eval.pairs`.
    pub const EVAL_PAIRS: u64 = 100_000;
    /// Games searched at once times simulations per move (`selfplay.parallel_games` ×
    /// `selfplay.simulations`, and `2 × eval.pairs` × `eval.simulations`): a simulation adds at
    /// most about 26 tree nodes of 36 bytes (9 on average; measured over 300 random positions at
    /// 200 simulations), so this bounds the search trees to about 5 GB at worst.
    pub const SEARCH_NODES: u64 = 5_000_000;
    /// `tablebase.accuracy_positions`: searched by the evaluation thread at each evaluation.
    pub const TABLEBASE_POSITIONS: u64 = 100_000;
}

/// Run identity and resources.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// Run name; the run directory is `output_dir/name` unless `--run-dir` is given.
    pub name: String,
    /// Seed of everything random in the run.
    pub seed: u64,
    /// Parent directory of run directories.
    pub output_dir: PathBuf,
    /// Worker threads (0: all cores).
    pub threads: usize,
    /// The learner's device: `flex` (CPU), or `cuda`, `cuda:N`, `wgpu` when built with those
    /// features. Also self-play's and the evaluation's, unless `selfplay.device` names another.
    pub device: String,
}

impl Default for RunConfig {
    fn default() -> RunConfig {
        RunConfig {
            name: "run".into(),
            seed: 0,
            output_dir: "checkpoints".into(),
            threads: 0,
            device: "flex".into(),
        }
    }
}

/// Which rules the games follow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RulesConfig {
    /// A preset of [`Rules::PRESETS`]: `standard`, `openspiel` (nine men's morris), `twelve`,
    /// `morabaraba`, `lasker` or `six` (those games under the standard draw rules).
    pub preset: String,
    /// The game of the morris family, when not the preset's: `nine`, `twelve`, `morabaraba`,
    /// `lasker` or `six` (the preset's draw rules stay; flying is the variant's own,
    /// [`Rules::for_variant`]). The network follows it (`model.variant`, when `[model]` does not
    /// name it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<Variant>,
}

impl Default for RulesConfig {
    fn default() -> RulesConfig {
        RulesConfig { preset: "standard".into(), variant: None }
    }
}

/// Self-play settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SelfPlayConfig {
    /// Games played in parallel (the MCTS batch).
    pub parallel_games: usize,
    /// Simulations of a full search (its visits are a policy target).
    pub simulations: u32,
    /// Playout-cap randomization (KataGo): simulations of a cheap search, whose move is played
    /// but which is not used as a policy target.
    pub cheap_simulations: u32,
    /// Fraction of moves that get a full search.
    pub full_search_fraction: f32,
    /// Move-selection temperature for the first `temperature_moves` turns.
    pub temperature: f32,
    /// Turns played at `temperature` before switching to `final_temperature`.
    pub temperature_moves: u32,
    /// Temperature after that.
    pub final_temperature: f32,
    /// Uniformly random plies at the start of each game.
    pub opening_plies: u32,
    /// Positions per game shard written to `RUN/games/`.
    pub shard_positions: usize,
    /// Device of self-play's (and the periodic evaluation's) network inference, when it is not
    /// the learner's `run.device` (empty: the same). Weights reach it only through the model
    /// versions the learner publishes to `RUN/models/`.
    pub device: String,
}

impl Default for SelfPlayConfig {
    fn default() -> SelfPlayConfig {
        SelfPlayConfig {
            parallel_games: 128,
            simulations: 100,
            cheap_simulations: 25,
            full_search_fraction: 0.25,
            temperature: 1.0,
            temperature_moves: 16,
            final_temperature: 0.0,
            opening_plies: 0,
            shard_positions: 2048,
            device: String::new(),
        }
    }
}

/// Replay buffer settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReplayConfig {
    /// Positions kept (the most recent ones).
    pub window: usize,
    /// Most training samples drawn per new position (KataGo's cap on reuse).
    pub max_reuse: f32,
    /// Positions collected before the first optimizer step.
    pub min_positions: usize,
    /// Weight (0 to 1) of the root search's value in each position's value target, the rest
    /// being the game's outcome (0: the outcome alone). Mixing the two is the "z and q" target
    /// of small-game AlphaZero work; see `Sample::value_target` for how `q` becomes a WDL.
    pub search_value_weight: f32,
}

impl Default for ReplayConfig {
    fn default() -> ReplayConfig {
        ReplayConfig { window: 100_000, max_reuse: 4.0, min_positions: 2_000, search_value_weight: 0.0 }
    }
}

/// Learning-rate schedule shapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LrSchedule {
    /// The same rate throughout (after warm-up).
    Constant,
    /// Cosine decay to 10% over the run's steps (after warm-up).
    Cosine,
}

/// Optimizer settings (AdamW).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OptimizerConfig {
    /// Peak learning rate.
    pub learning_rate: f64,
    /// Schedule shape.
    pub schedule: LrSchedule,
    /// Linear warm-up steps.
    pub warmup_steps: u64,
    /// Decoupled weight decay.
    pub weight_decay: f32,
    /// Samples per step.
    pub batch_size: usize,
    /// Clip the global gradient norm to this (0: no clipping).
    pub grad_clip_norm: f32,
}

impl Default for OptimizerConfig {
    fn default() -> OptimizerConfig {
        OptimizerConfig {
            learning_rate: 1e-3,
            schedule: LrSchedule::Cosine,
            warmup_steps: 100,
            weight_decay: 1e-4,
            batch_size: 256,
            grad_clip_norm: 0.0,
        }
    }
}

/// How long to train and when to checkpoint and evaluate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScheduleConfig {
    /// Stop after this many optimizer steps (unset or 0: no step limit).
    pub total_steps: Option<u64>,
    /// Stop after this many minutes of wall time (if set).
    pub wall_time_minutes: Option<f64>,
    /// Optimizer steps between checkpoints.
    pub checkpoint_every: u64,
    /// Checkpoints kept (besides any marked best).
    pub keep_last: usize,
    /// Optimizer steps between evaluations (0: none).
    pub eval_every: u64,
    /// Optimizer steps between model versions published to `RUN/models/` for self-play.
    pub publish_every: u64,
    /// Optimizer steps between logged training scalars (averaged over the interval).
    pub log_every: u64,
}

impl Default for ScheduleConfig {
    fn default() -> ScheduleConfig {
        ScheduleConfig {
            total_steps: Some(1000),
            wall_time_minutes: None,
            checkpoint_every: 100,
            keep_last: 3,
            eval_every: 250,
            publish_every: 50,
            log_every: 10,
        }
    }
}

impl ScheduleConfig {
    /// The step limit, if there is one (`total_steps` set and not 0).
    pub fn step_limit(&self) -> Option<u64> {
        self.total_steps.filter(|&n| n > 0)
    }
}

/// Periodic evaluation settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EvalConfig {
    /// Opponent agent specs, e.g. `minimax:depth=3`.
    pub opponents: Vec<String>,
    /// Colour-swapped pairs per opponent and evaluation.
    pub pairs: u32,
    /// Simulations per move of the evaluated network.
    pub simulations: u32,
    /// Judged positions (`eval positions`; the repo keeps `data/judged-positions.jsonl`) on
    /// which each evaluation judges the network's own search against perfect play, without
    /// tables (`eval/judged_kept`, by phase); unset: no such figure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judged: Option<PathBuf>,
    /// How many of those positions each evaluation uses, evenly spaced through the file (0: all).
    pub judged_positions: u32,
}

impl Default for EvalConfig {
    fn default() -> EvalConfig {
        EvalConfig {
            opponents: vec!["minimax:depth=2".into()],
            pairs: 10,
            simulations: 200,
            judged: None,
            judged_positions: 500,
        }
    }
}

/// Endgame tables (`morris tablebase build`, docs/tablebase.md): exact values in the searches,
/// self-play games ended once they enter the tables, and the accuracy figure of evaluations.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TablebaseConfig {
    /// Directory of the tables; unset: no tables.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dir: Option<PathBuf>,
    /// Self-play and evaluation searches take exact values (win 1, draw 0, loss −1) at
    /// positions inside the tables instead of the network's.
    pub search: bool,
    /// End a self-play game as soon as it enters the tables, with the exact result as the
    /// value target of its positions.
    pub adjudicate: bool,
    /// Positions drawn from the tables for the accuracy figure logged at each evaluation
    /// (`eval/tb_accuracy`); 0 turns it off.
    pub accuracy_positions: u32,
    /// Positions drawn from the placement phase for the same figure, valued by the placement
    /// solver (`eval/tb_accuracy_placing`); only used when `dir` holds every sector up to 9v9,
    /// and 0 turns it off.
    pub placement_positions: u32,
}

impl Default for TablebaseConfig {
    fn default() -> TablebaseConfig {
        TablebaseConfig {
            dir: None,
            search: true,
            adjudicate: false,
            accuracy_positions: 200,
            placement_positions: 100,
        }
    }
}

/// The whole training configuration, as in `configs/*.toml`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct TrainConfig {
    /// `[run]`
    pub run: RunConfig,
    /// `[rules]`
    pub rules: RulesConfig,
    /// `[model]`
    pub model: NetConfig,
    /// `[mcts]`
    pub mcts: MctsConfig,
    /// `[selfplay]`
    pub selfplay: SelfPlayConfig,
    /// `[replay]`
    pub replay: ReplayConfig,
    /// `[optimizer]`
    pub optimizer: OptimizerConfig,
    /// `[schedule]`
    pub schedule: ScheduleConfig,
    /// `[eval]`
    pub eval: EvalConfig,
    /// `[tablebase]`
    pub tablebase: TablebaseConfig,
}

impl TrainConfig {
    /// Parses TOML text, applies `section.key=value` overrides (values in TOML syntax; a bare
    /// word is taken as a string), and validates the result.
    ///
    /// # Errors
    /// [`ConfigError::Parse`] for malformed TOML, unknown keys and wrong types (serde's message
    /// names the key), [`ConfigError::Override`] for a malformed override, and
    /// [`ConfigError::Value`] for a value out of range.
    pub fn from_toml(text: &str, overrides: &[String]) -> Result<TrainConfig, ConfigError> {
        let mut table: toml::Table = toml::from_str(text).map_err(|e| ConfigError::Parse(e.to_string()))?;
        if table.is_empty() {
            return Err(ConfigError::Empty);
        }
        for o in overrides {
            apply_override(&mut table, o)?;
        }
        let names_variant = table.get("model").and_then(|m| m.get("variant")).is_some();
        let mut config = TrainConfig::deserialize(toml::Value::Table(table))
            .map_err(|e| ConfigError::Parse(e.to_string()))?;
        if !names_variant && let Ok(rules) = config.game_rules() {
            config.model.variant = rules.variant;
        }
        config.validate()?;
        Ok(config)
    }

    /// The config as TOML (what a run directory's `config.toml` and a checkpoint's
    /// `train.toml` hold).
    pub fn to_toml(&self) -> String {
        // Plain structs of numbers, strings and paths always serialise.
        toml::to_string(self).unwrap_or_default()
    }

    /// The device self-play and the evaluation run the network on, with the key that names it
    /// (for errors): `selfplay.device`, or the learner's `run.device` when that is empty.
    pub fn selfplay_device(&self) -> (&'static str, &str) {
        if self.selfplay.device.trim().is_empty() {
            ("run.device", &self.run.device)
        } else {
            ("selfplay.device", &self.selfplay.device)
        }
    }

    /// The rules of the configured preset, for the configured variant if one is named.
    ///
    /// # Errors
    /// [`ConfigError::Value`] for `rules.preset` if the preset is unknown.
    pub fn game_rules(&self) -> Result<Rules, ConfigError> {
        let preset = Rules::preset(&self.rules.preset).ok_or_else(|| {
            ConfigError::value(
                "rules.preset",
                format!("= '{}' is unknown: use one of {}", self.rules.preset, Rules::PRESETS.join(", ")),
            )
        })?;
        Ok(self.rules.variant.map_or(preset, |v| preset.for_variant(v)))
    }

    /// The endgame tables of `[tablebase]`, loaded (and shared within the process), or `None`
    /// when `tablebase.dir` is unset.
    ///
    /// # Errors
    /// A [`ConfigError::Value`] for `tablebase.dir` if the tables are missing, damaged, or built
    /// for other rules.
    pub fn open_tablebase(&self) -> Result<Option<SharedTablebase>, ConfigError> {
        let Some(dir) = &self.tablebase.dir else { return Ok(None) };
        let bad =
            |e: morris_env::tablebase::TablebaseError| ConfigError::value("tablebase.dir", format!(": {e}"));
        let tb = SharedTablebase::open(dir).map_err(bad)?;
        tb.check_rules(&self.game_rules()?).map_err(bad)?;
        Ok(Some(tb))
    }

    /// The judged positions of `eval.judged`, checked against the run's rules, `eval.judged_positions`
    /// of them evenly spaced (all when 0); `None` when unset.
    ///
    /// # Errors
    /// A [`ConfigError::Value`] for `eval.judged`: a file that does not load (naming the line
    /// that fails) or that holds values under other rules.
    pub fn open_judged(&self) -> Result<Option<morris_env::tablebase::JudgedSet>, ConfigError> {
        let Some(path) = &self.eval.judged else { return Ok(None) };
        let mut set = morris_env::tablebase::JudgedSet::load(path)
            .map_err(|e| ConfigError::value("eval.judged", format!(": {e}")))?;
        if set.rules != self.game_rules()? {
            return Err(ConfigError::value(
                "eval.judged",
                format!(
                    ": {} holds values under the '{}' rules, not the run's",
                    path.display(),
                    set.header.rules
                ),
            ));
        }
        let (n, len) = (self.eval.judged_positions as usize, set.positions.len());
        if n > 0 && n < len {
            set.positions = (0..n).map(|i| set.positions[i * len / n].clone()).collect();
        }
        Ok(Some(set))
    }

    /// Checks every value range, naming the first bad key. The evaluation opponents are agent
    /// specs, checked by whoever builds the evaluation (the `train` binary, with `morris-eval`).
    ///
    /// # Errors
    /// A [`ConfigError::Value`] naming `section.key` and the allowed range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let rules = self.game_rules()?;
        self.model.validate()?;
        if self.model.variant != rules.variant {
            return Err(ConfigError::value(
                "model.variant",
                format!(
                    "= '{}' but rules.variant = '{}': a network plays the variant it is trained on (leave model.variant out to follow the rules)",
                    self.model.variant, rules.variant
                ),
            ));
        }
        self.mcts.validate()?;
        let check = |ok: bool, key: &str, reason: String| {
            if ok { Ok(()) } else { Err(ConfigError::value(key, reason)) }
        };
        let at_least_1 = || "must be at least 1".to_string();
        // Upper bounds: what a 24 GiB machine holds, checked before the run touches the disk.
        let range = |value: u64, low: u64, high: u64, key: &str| {
            check((low..=high).contains(&value), key, format!("must be in {low}..={high}, got {value}"))
        };
        range(self.run.threads as u64, 0, limits::THREADS, "run.threads")?;
        range(self.eval.judged_positions.into(), 0, limits::TABLEBASE_POSITIONS, "eval.judged_positions")?;
        let positions = self.tablebase.accuracy_positions.into();
        range(positions, 0, limits::TABLEBASE_POSITIONS, "tablebase.accuracy_positions")?;
        let positions = self.tablebase.placement_positions.into();
        range(positions, 0, limits::TABLEBASE_POSITIONS, "tablebase.placement_positions")?;
        let s = &self.selfplay;
        range(s.parallel_games as u64, 1, limits::PARALLEL_GAMES, "selfplay.parallel_games")?;
        range(s.simulations.into(), 1, limits::SIMULATIONS, "selfplay.simulations")?;
        range(s.cheap_simulations.into(), 1, limits::SIMULATIONS, "selfplay.cheap_simulations")?;
        range(s.shard_positions as u64, 1, limits::SHARD_POSITIONS, "selfplay.shard_positions")?;
        range(self.replay.window as u64, 1, limits::WINDOW, "replay.window")?;
        range(self.optimizer.batch_size as u64, 1, limits::BATCH_SIZE, "optimizer.batch_size")?;
        range(self.mcts.num_simulations.into(), 1, limits::SIMULATIONS, "mcts.num_simulations")?;
        range(self.eval.simulations.into(), 1, limits::SIMULATIONS, "eval.simulations")?;
        range(self.eval.pairs.into(), 1, limits::EVAL_PAIRS, "eval.pairs")?;
        // Together, the sizes above could still ask for more search-tree memory than exists.
        let trees = |key: &str, games: u64, sims: u64| {
            let product = games.saturating_mul(sims);
            check(
                product <= limits::SEARCH_NODES,
                key,
                format!(
                    "asks for {product} simulations in flight ({games} games × {sims} simulations); at most {} \
                     fit in memory (up to about 5 GB of search trees): lower one of them",
                    limits::SEARCH_NODES
                ),
            )
        };
        let sims = u64::from(s.simulations.max(s.cheap_simulations));
        trees("selfplay.parallel_games", s.parallel_games as u64, sims)?;
        trees("eval.pairs", 2 * u64::from(self.eval.pairs), u64::from(self.eval.simulations))?;
        check(
            (0.0..=1.0).contains(&s.full_search_fraction) && s.full_search_fraction > 0.0,
            "selfplay.full_search_fraction",
            format!("must be in (0, 1], got {}", s.full_search_fraction),
        )?;
        for (key, t) in
            [("selfplay.temperature", s.temperature), ("selfplay.final_temperature", s.final_temperature)]
        {
            check(t.is_finite() && t >= 0.0, key, format!("must be >= 0, got {t}"))?;
        }
        let r = &self.replay;
        check(
            r.max_reuse.is_finite() && r.max_reuse > 0.0,
            "replay.max_reuse",
            format!("must be positive, got {}", r.max_reuse),
        )?;
        check(
            (0.0..=1.0).contains(&r.search_value_weight),
            "replay.search_value_weight",
            format!("must be in [0, 1], got {}", r.search_value_weight),
        )?;
        check(
            r.min_positions <= r.window,
            "replay.min_positions",
            format!("({}) must not exceed replay.window ({})", r.min_positions, r.window),
        )?;
        let o = &self.optimizer;
        check(
            o.learning_rate.is_finite() && o.learning_rate > 0.0 && o.learning_rate < 1.0,
            "optimizer.learning_rate",
            format!("must be in (0, 1), got {}", o.learning_rate),
        )?;
        check(
            o.weight_decay.is_finite() && o.weight_decay >= 0.0,
            "optimizer.weight_decay",
            format!("must be >= 0, got {}", o.weight_decay),
        )?;
        check(
            o.grad_clip_norm.is_finite() && o.grad_clip_norm >= 0.0,
            "optimizer.grad_clip_norm",
            format!("must be >= 0, got {}", o.grad_clip_norm),
        )?;
        let sc = &self.schedule;
        check(
            sc.step_limit().is_some() || sc.wall_time_minutes.is_some(),
            "schedule",
            "needs total_steps (at least 1) or wall_time_minutes, or both".into(),
        )?;
        if let Some(m) = sc.wall_time_minutes {
            check(
                m.is_finite() && m > 0.0,
                "schedule.wall_time_minutes",
                format!("must be positive, got {m}"),
            )?;
        }
        check(sc.checkpoint_every >= 1, "schedule.checkpoint_every", at_least_1())?;
        check(sc.keep_last >= 1, "schedule.keep_last", at_least_1())?;
        check(sc.publish_every >= 1, "schedule.publish_every", at_least_1())?;
        check(sc.log_every >= 1, "schedule.log_every", at_least_1())?;
        // Last: loading the tables is the slowest check.
        self.open_tablebase()?;
        Ok(())
    }
}

/// Applies one `section.key=value` override to the raw table.
fn apply_override(table: &mut toml::Table, text: &str) -> Result<(), ConfigError> {
    let err = |reason: &str| ConfigError::Override { text: text.to_string(), reason: reason.to_string() };
    let (path, raw) = text.split_once('=').ok_or_else(|| err("expected section.key=value"))?;
    let (section, key) = path
        .trim()
        .split_once('.')
        .ok_or_else(|| err("the key must be section.key, e.g. optimizer.learning_rate"))?;
    if section.is_empty() || key.is_empty() || key.contains('.') {
        return Err(err("the key must be section.key, e.g. optimizer.learning_rate"));
    }
    // A TOML value (number, bool, string in quotes, array), or else a bare string.
    let value: toml::Value = toml::from_str::<toml::Table>(&format!("v = {}", raw.trim()))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(raw.trim().to_string()));
    let entry = table.entry(section.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
    let toml::Value::Table(section_table) = entry else {
        return Err(err(&format!("'{section}' is not a section")));
    };
    section_table.insert(key.to_string(), value);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_round_trip_through_toml() {
        let c = TrainConfig::default();
        c.validate().unwrap();
        let text = toml::to_string(&c).unwrap();
        assert_eq!(TrainConfig::from_toml(&text, &[]).unwrap(), c);
        assert_eq!(TrainConfig::from_toml("[run]\n", &[]).unwrap(), c);
        // An empty file would silently train on defaults: refused.
        for empty in ["", "  \n# only a comment\n"] {
            assert!(matches!(TrainConfig::from_toml(empty, &[]), Err(ConfigError::Empty)));
        }
    }

    /// Every shipped config parses and validates; the self-play device falls back to the
    /// learner's.
    #[test]
    fn shipped_configs_are_valid() {
        for (file, text) in [
            ("tiny", include_str!("../../configs/tiny.toml")),
            ("default", include_str!("../../configs/default.toml")),
            ("large", include_str!("../../configs/large.toml")),
            ("gpu", include_str!("../../configs/gpu.toml")),
            ("twelve", include_str!("../../configs/twelve.toml")),
            ("lasker", include_str!("../../configs/lasker.toml")),
            ("six", include_str!("../../configs/six.toml")),
            ("three", include_str!("../../configs/three.toml")),
            ("morabaraba", include_str!("../../configs/morabaraba.toml")),
        ] {
            let c = TrainConfig::from_toml(text, &[]).unwrap_or_else(|e| panic!("configs/{file}.toml: {e}"));
            assert_eq!(c.selfplay_device(), ("run.device", c.run.device.as_str()), "{file}");
        }
        let gpu =
            TrainConfig::from_toml(include_str!("../../configs/gpu.toml"), &["selfplay.device=flex".into()]);
        let gpu = gpu.unwrap();
        assert_eq!((gpu.run.device.as_str(), gpu.selfplay_device().1), ("cuda", "flex"));
    }

    /// The variant comes from the preset or from `rules.variant` (which keeps the preset's draw
    /// rules); the network follows it unless `[model]` names another, which is refused.
    #[test]
    fn the_variant_comes_from_the_rules_and_the_network_follows_it() {
        let twelve = TrainConfig::from_toml("[rules]\npreset = \"twelve\"\n", &[]).unwrap();
        assert_eq!(twelve.game_rules().unwrap(), Rules::twelve());
        assert_eq!(twelve.model.variant, Variant::Twelve);
        let text = twelve.to_toml();
        assert_eq!(TrainConfig::from_toml(&text, &[]).unwrap(), twelve, "{text}");
        let c =
            TrainConfig::from_toml("[rules]\npreset = \"openspiel\"\nvariant = \"twelve\"\n", &[]).unwrap();
        assert_eq!(c.game_rules().unwrap(), Rules { variant: Variant::Twelve, ..Rules::openspiel() });
        assert_eq!(c.model.variant, Variant::Twelve);
        // Nine men's morris configs are written as before variants existed.
        assert!(!TrainConfig::default().to_toml().contains("variant"));
        for (text, key) in [
            ("[rules]\npreset = \"twelve\"\n[model]\nvariant = \"nine\"\n", "model.variant"),
            ("[model]\nvariant = \"twelve\"\n", "model.variant"),
        ] {
            let e = TrainConfig::from_toml(text, &[]).unwrap_err();
            assert!(matches!(&e, ConfigError::Value { key: k, .. } if k == key), "{text}: {e}");
        }
        // Six men's morris named on top of a preset keeps its own rule: no flying.
        let six = TrainConfig::from_toml("[rules]\nvariant = \"six\"\n", &[]).unwrap();
        assert_eq!(six.game_rules().unwrap(), Rules::six());
        assert_eq!(six.model.variant, Variant::Six);
        let preset = TrainConfig::from_toml("[rules]\npreset = \"six\"\n", &[]).unwrap();
        assert_eq!((preset.game_rules().unwrap(), preset.model.variant), (Rules::six(), Variant::Six));
        let three = TrainConfig::from_toml("[rules]\nvariant = \"three\"\n", &[]).unwrap();
        assert_eq!((three.game_rules().unwrap(), three.model.variant), (Rules::three(), Variant::Three));
        let e = TrainConfig::from_toml("[rules]\nvariant = \"four\"\n", &[]).unwrap_err();
        assert!(matches!(&e, ConfigError::Parse(m) if m.contains("four")), "{e}");
    }

    #[test]
    fn overrides_replace_values() {
        let c = TrainConfig::from_toml(
            "[optimizer]\nlearning_rate = 0.01\n",
            &[
                "optimizer.learning_rate=0.002".into(),
                "run.name=exp1".into(),
                "model.trunk=\"graph-conv\"".into(),
            ],
        )
        .unwrap();
        assert_eq!(c.optimizer.learning_rate, 0.002);
        assert_eq!(c.run.name, "exp1");
        assert_eq!(c.model.trunk.name(), "graph-conv");
    }

    #[test]
    fn unknown_keys_and_wrong_types_are_parse_errors_naming_the_key() {
        for (text, needle) in [
            ("[optimizer]\nlerning_rate = 0.1\n", "lerning_rate"),
            ("[optimizer]\nbatch_size = \"big\"\n", "batch_size"),
            ("[optimiser]\n", "optimiser"),
            ("not toml [", ""),
        ] {
            let e = TrainConfig::from_toml(text, &[]).unwrap_err();
            assert!(matches!(&e, ConfigError::Parse(m) if m.contains(needle)), "{text:?}: {e}");
        }
    }

    #[test]
    fn values_out_of_range_name_the_key() {
        for (set, key) in [
            ("optimizer.learning_rate=5", "optimizer.learning_rate"),
            ("selfplay.parallel_games=0", "selfplay.parallel_games"),
            ("rules.preset=chess", "rules.preset"),
            ("schedule.log_every=0", "schedule.log_every"),
            ("schedule.total_steps=0", "schedule"),
            ("mcts.num_simulations=0", "mcts.num_simulations"),
            ("model.width=0", "model.width"),
            ("eval.pairs=0", "eval.pairs"),
            ("replay.min_positions=100000000", "replay.min_positions"),
            // Upper bounds a 24 GiB machine holds.
            ("run.threads=10000", "run.threads"),
            ("selfplay.parallel_games=99999999999", "selfplay.parallel_games"),
            ("selfplay.simulations=1000000", "selfplay.simulations"),
            ("replay.window=1000000000", "replay.window"),
            ("optimizer.batch_size=10000000", "optimizer.batch_size"),
            ("model.width=100000", "model.width"),
            ("model.blocks=1000", "model.blocks"),
            // Each in range, but not together.
            ("selfplay.parallel_games=65536", "selfplay.parallel_games"),
            ("eval.pairs=100000", "eval.pairs"),
        ] {
            let e = TrainConfig::from_toml("[run]\n", &[set.to_string()]).unwrap_err();
            assert_eq!(e.key(), Some(key), "{set}: {e}");
            assert!(e.to_string().starts_with(key), "{set}: {e}");
        }
    }

    #[test]
    fn malformed_overrides_are_override_errors() {
        for set in ["learning_rate=0.1", "optimizer.learning_rate", ".x=1", "run.name.x=1"] {
            let e = TrainConfig::from_toml("[run]\n", &[set.to_string()]).unwrap_err();
            assert!(matches!(&e, ConfigError::Override { text, .. } if text == set), "{set}: {e}");
        }
        let e = TrainConfig::from_toml("x = 1\n", &["x.y=1".to_string()]).unwrap_err();
        assert!(
            matches!(&e, ConfigError::Override { reason, .. } if reason.contains("not a section")),
            "{e}"
        );
    }
}
