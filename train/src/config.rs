//! The training configuration: TOML sections with defaults, `--set section.key=value`
//! overrides, and validation that names the offending key.

use std::path::PathBuf;

use morris_env::Rules;
use serde::{Deserialize, Serialize};

use crate::mcts::MctsConfig;
use crate::model::NetConfig;

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
    /// Device: `flex` (CPU), or `cuda`, `cuda:N`, `wgpu` when built with those features.
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
    /// `standard` or `openspiel`.
    pub preset: String,
}

impl Default for RulesConfig {
    fn default() -> RulesConfig {
        RulesConfig { preset: "standard".into() }
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
}

impl Default for ReplayConfig {
    fn default() -> ReplayConfig {
        ReplayConfig { window: 100_000, max_reuse: 4.0, min_positions: 2_000 }
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
}

impl Default for EvalConfig {
    fn default() -> EvalConfig {
        EvalConfig { opponents: vec!["minimax:depth=2".into()], pairs: 10, simulations: 200 }
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
}

impl TrainConfig {
    /// Parses TOML text, applies `section.key=value` overrides (values in TOML syntax; a bare
    /// word is taken as a string), and validates the result.
    ///
    /// # Errors
    /// A message naming the bad key: unknown keys, wrong types, malformed overrides, and values
    /// out of range.
    pub fn from_toml(text: &str, overrides: &[String]) -> Result<TrainConfig, String> {
        let mut table: toml::Table = toml::from_str(text).map_err(|e| format!("config: {e}"))?;
        for o in overrides {
            apply_override(&mut table, o)?;
        }
        let config: TrainConfig =
            TrainConfig::deserialize(toml::Value::Table(table)).map_err(|e| format!("config: {e}"))?;
        config.validate()?;
        Ok(config)
    }

    /// The rules of the configured preset.
    ///
    /// # Errors
    /// If the preset is unknown.
    pub fn game_rules(&self) -> Result<Rules, String> {
        Rules::preset(&self.rules.preset).ok_or_else(|| {
            format!(
                "rules.preset = '{}' is unknown: use one of {}",
                self.rules.preset,
                Rules::PRESETS.join(", ")
            )
        })
    }

    /// Checks every value range, naming the first bad key.
    ///
    /// # Errors
    /// `"<section>.<key> ..."` with the allowed range.
    pub fn validate(&self) -> Result<(), String> {
        self.game_rules()?;
        self.model.validate().map_err(|e| format!("model: {e}"))?;
        self.mcts.validate()?;
        let s = &self.selfplay;
        let check = |ok: bool, msg: String| if ok { Ok(()) } else { Err(msg) };
        check(s.parallel_games >= 1, "selfplay.parallel_games must be at least 1".into())?;
        check(s.simulations >= 1, "selfplay.simulations must be at least 1".into())?;
        check(s.cheap_simulations >= 1, "selfplay.cheap_simulations must be at least 1".into())?;
        check(
            (0.0..=1.0).contains(&s.full_search_fraction) && s.full_search_fraction > 0.0,
            format!("selfplay.full_search_fraction must be in (0, 1], got {}", s.full_search_fraction),
        )?;
        for (key, t) in [("temperature", s.temperature), ("final_temperature", s.final_temperature)] {
            check(t.is_finite() && t >= 0.0, format!("selfplay.{key} must be >= 0, got {t}"))?;
        }
        check(self.replay.window >= 1, "replay.window must be at least 1".into())?;
        check(
            self.replay.max_reuse.is_finite() && self.replay.max_reuse > 0.0,
            format!("replay.max_reuse must be positive, got {}", self.replay.max_reuse),
        )?;
        let o = &self.optimizer;
        check(
            o.learning_rate.is_finite() && o.learning_rate > 0.0 && o.learning_rate < 1.0,
            format!("optimizer.learning_rate must be in (0, 1), got {}", o.learning_rate),
        )?;
        check(
            o.weight_decay.is_finite() && o.weight_decay >= 0.0,
            format!("optimizer.weight_decay must be >= 0, got {}", o.weight_decay),
        )?;
        check(
            o.grad_clip_norm.is_finite() && o.grad_clip_norm >= 0.0,
            format!("optimizer.grad_clip_norm must be >= 0, got {}", o.grad_clip_norm),
        )?;
        check(o.batch_size >= 1, "optimizer.batch_size must be at least 1".into())?;
        let sc = &self.schedule;
        check(
            sc.step_limit().is_some() || sc.wall_time_minutes.is_some(),
            "schedule: set total_steps (at least 1) or wall_time_minutes, or both".into(),
        )?;
        if let Some(m) = sc.wall_time_minutes {
            check(m.is_finite() && m > 0.0, format!("schedule.wall_time_minutes must be positive, got {m}"))?;
        }
        check(sc.checkpoint_every >= 1, "schedule.checkpoint_every must be at least 1".into())?;
        check(sc.keep_last >= 1, "schedule.keep_last must be at least 1".into())?;
        check(sc.publish_every >= 1, "schedule.publish_every must be at least 1".into())?;
        check(sc.log_every >= 1, "schedule.log_every must be at least 1".into())?;
        check(s.shard_positions >= 1, "selfplay.shard_positions must be at least 1".into())?;
        check(
            self.replay.min_positions <= self.replay.window,
            format!(
                "replay.min_positions ({}) must not exceed replay.window ({})",
                self.replay.min_positions, self.replay.window
            ),
        )?;
        for o in &self.eval.opponents {
            crate::evaluate::Opponent::parse(o)?;
        }
        check(self.eval.pairs >= 1, "eval.pairs must be at least 1".into())?;
        check(self.eval.simulations >= 1, "eval.simulations must be at least 1".into())?;
        Ok(())
    }
}

/// Applies one `section.key=value` override to the raw table.
fn apply_override(table: &mut toml::Table, text: &str) -> Result<(), String> {
    let (path, raw) =
        text.split_once('=').ok_or_else(|| format!("--set '{text}': expected section.key=value"))?;
    let (section, key) = path.trim().split_once('.').ok_or_else(|| {
        format!("--set '{text}': the key must be section.key, e.g. optimizer.learning_rate")
    })?;
    if section.is_empty() || key.is_empty() || key.contains('.') {
        return Err(format!("--set '{text}': the key must be section.key, e.g. optimizer.learning_rate"));
    }
    // A TOML value (number, bool, string in quotes, array), or else a bare string.
    let value: toml::Value = toml::from_str::<toml::Table>(&format!("v = {}", raw.trim()))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(raw.trim().to_string()));
    let entry = table.entry(section.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
    let toml::Value::Table(section_table) = entry else {
        return Err(format!("--set '{text}': '{section}' is not a section"));
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
        assert_eq!(TrainConfig::from_toml("", &[]).unwrap(), c);
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
    fn errors_name_the_key() {
        for (text, overrides, needle) in [
            ("[optimizer]\nlerning_rate = 0.1\n", vec![], "lerning_rate"),
            ("[optimizer]\nbatch_size = \"big\"\n", vec![], "batch_size"),
            ("[optimiser]\n", vec![], "optimiser"),
            ("", vec!["optimizer.learning_rate=5".to_string()], "optimizer.learning_rate"),
            ("", vec!["selfplay.parallel_games=0".to_string()], "selfplay.parallel_games"),
            ("", vec!["rules.preset=chess".to_string()], "rules.preset"),
            ("", vec!["eval.opponents=[\"minimax:depth=0\"]".to_string()], "eval.opponents"),
            ("", vec!["schedule.log_every=0".to_string()], "schedule.log_every"),
            ("", vec!["mcts.num_simulations=0".to_string()], "mcts.num_simulations"),
            ("", vec!["learning_rate=0.1".to_string()], "section.key"),
            ("", vec!["optimizer.learning_rate".to_string()], "section.key=value"),
            ("[schedule]\ntotal_steps = 0\n", vec![], "schedule: set total_steps"),
            ("not toml [", vec![], "config"),
        ] {
            let e = TrainConfig::from_toml(text, &overrides).unwrap_err();
            assert!(e.contains(needle), "{text:?} {overrides:?}: {e}");
        }
    }
}
