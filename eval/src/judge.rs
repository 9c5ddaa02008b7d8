//! The in-training evaluation: the run's network against fixed opponents in the arena (all
//! games in lockstep, the network's searches batched), rated on the calibrated ladder.
//! [`train_with_ladder`] builds a [`LadderJudge`] from the run's config and hands it to the run:
//! the one way the `train` binary and the Python package start a run.

use std::path::Path;
use std::sync::Arc;

use burn::prelude::Device;
use morris_env::tablebase::{JudgedSet, SharedTablebase};
use morris_env::{Game, Rng, Rules};
use morris_train::mcts::MctsConfig;
use morris_train::model::PolicyValueNet;
use morris_train::{ConfigError, Judge, Judgement, OpponentResult, Options, Start, TrainConfig, TrainError};

use crate::accuracy::{measure_judged_spec, measure_spec, uniform_placement_positions, uniform_positions};
use crate::agents::{AgentSpec, LoadedModel};
use crate::arena::{MatchConfig, Openings, play_match};
use crate::elo::{FixedOpponent, rate_against};
use crate::ladder::Ladder;
use crate::report::MatchReport;

/// Stream of [`Rng::derive`] for the seed of the match against opponent `i`.
const MATCH_STREAM: u64 = 5;
/// How the judged network is named in its game records.
const NETWORK: &str = "network";

/// Runs a training run as `train` does: decides how it starts ([`Start::decide`] with a config
/// file, a run directory to continue or a checkpoint, and `section.key=value` overrides), builds
/// the [`LadderJudge`] its `[eval]` section asks for and runs it with `options`. Says on stderr
/// (unless quiet) when a run directory without a checkpoint starts from its own `config.toml`.
///
/// # Errors
/// Those of [`Start::decide`] and [`morris_train::start_run`]; a bad `eval.opponents` spec names
/// the config file; a stop request ends in [`TrainError::Interrupted`] after a checkpoint.
pub fn train_with_ladder(
    config_file: Option<&Path>,
    run_dir: Option<&Path>,
    overrides: &[String],
    options: &Options,
) -> Result<(), TrainError> {
    let start = Start::decide(config_file, run_dir, overrides)?;
    if let Start::FromRunDir { run_dir, .. } = &start
        && !options.quiet
    {
        eprintln!("{} has no checkpoint yet: starting with its config.toml", run_dir.display());
    }
    let judge = judge_for(&start)?;
    morris_train::start_run(start, options, Some(judge))
}

/// The [`LadderJudge`] a run's `[eval]` section asks for, as the run takes it.
///
/// # Errors
/// A bad `eval.opponents` spec or rules preset, naming the config file.
pub fn judge_for(start: &Start) -> Result<Arc<dyn Judge>, TrainError> {
    let judge = LadderJudge::from_config(start.config())
        .map_err(|e| TrainError::from(e).in_file(&start.config_file()))?;
    Ok(Arc::new(judge))
}

/// Rates a network against fixed opponents on a ladder's scale.
pub struct LadderJudge {
    opponents: Vec<AgentSpec>,
    pairs: u32,
    search: MctsConfig,
    rules: Rules,
    ladder: Ladder,
    /// The tables and the positions of the accuracy figure, when `[tablebase]` asks for it.
    tablebase: Option<(SharedTablebase, Vec<Game>)>,
    /// The judged positions of `eval.judged`, when set.
    judged: Option<JudgedSet>,
}

impl LadderJudge {
    /// The judge a run's config asks for: `[eval]` opponents (agent specs), pairs and
    /// simulations, the run's `[mcts]` settings without exploration noise, its rules, and the
    /// calibrated ladder (which rates results only under the rules it was calibrated for).
    ///
    /// # Errors
    /// A [`ConfigError::Value`] for `eval.opponents` naming the bad spec, or for `rules.preset`.
    pub fn from_config(config: &TrainConfig) -> Result<LadderJudge, ConfigError> {
        let opponents = config
            .eval
            .opponents
            .iter()
            .map(|spec| {
                AgentSpec::parse(spec).map_err(|e| ConfigError::value("eval.opponents", format!(": {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let tables = config.open_tablebase()?;
        let rules = config.game_rules()?;
        let search = MctsConfig {
            num_simulations: config.eval.simulations,
            root_noise: false,
            gumbel_noise: false,
            tablebase: tables.clone().filter(|_| config.tablebase.search),
            ..config.mcts.clone()
        };
        let n = config.tablebase.accuracy_positions;
        let placement = config.tablebase.placement_positions;
        let tablebase = tables.and_then(|tb| {
            let mut positions = uniform_positions(&tb, n, config.run.seed, rules);
            if tb.covers_placement() {
                positions.extend(uniform_placement_positions(placement, config.run.seed, rules));
            }
            (!positions.is_empty()).then_some((tb, positions))
        });
        Ok(LadderJudge {
            opponents,
            pairs: config.eval.pairs,
            search,
            rules,
            ladder: Ladder::calibrated(),
            tablebase,
            judged: config.open_judged()?,
        })
    }

    /// Whether the ladder's ratings apply to games under this judge's rules.
    fn ladder_applies(&self) -> bool {
        Rules::preset(&self.ladder.rules).as_ref() == Some(&self.rules)
    }
}

/// A short label for progress lines: `random`, `d3` for `minimax:depth=3`, else the spec.
fn label(spec: &str) -> String {
    spec.strip_prefix("minimax:depth=").map_or_else(|| spec.to_string(), |d| format!("d{d}"))
}

impl Judge for LadderJudge {
    fn judge(&self, model: &PolicyValueNet, device: &Device, seed: u64) -> Result<Judgement, String> {
        let network = AgentSpec::Az {
            model: LoadedModel::from_network(NETWORK, model.clone(), device.clone()),
            search: self.search.clone(),
            budget: morris_train::agents::PlayBudget::default(),
        };
        let mut results = Vec::with_capacity(self.opponents.len());
        let mut fixed = Vec::new();
        let mut ms = 0.0;
        for (i, opponent) in self.opponents.iter().enumerate() {
            let config = MatchConfig {
                pairs: self.pairs,
                opening_plies: self.ladder.opening_plies,
                seed: Rng::derive(seed, MATCH_STREAM, i as u64),
                rules: self.rules,
                batch_network: true,
                openings: Openings::Random,
            };
            let games = play_match(&network, opponent, &config, |_| {}).map_err(|e| e.to_string())?;
            let report = MatchReport::from_games(&network.name(), &opponent.name(), &games);
            let name = opponent.name();
            if let Some(elo) = self.ladder.rating(&name).filter(|_| self.ladder_applies()) {
                let points = report.wins as f64 + 0.5 * report.draws as f64;
                fixed.push(FixedOpponent { elo, points, games: report.wins + report.draws + report.losses });
            }
            ms += report.ms_per_move[0] / self.opponents.len() as f64;
            results.push(OpponentResult {
                label: label(&name),
                opponent: name,
                wins: report.wins,
                draws: report.draws,
                losses: report.losses,
            });
        }
        // Accuracy against perfect play of the network's own search (without the tables): by
        // the tables, and by the stored values of the judged positions.
        let alone = AgentSpec::Az {
            model: LoadedModel::from_network(NETWORK, model.clone(), device.clone()),
            search: MctsConfig { tablebase: None, ..self.search.clone() },
            budget: morris_train::agents::PlayBudget::default(),
        };
        let tablebase = match &self.tablebase {
            Some((tb, positions)) => {
                Some(measure_spec(&alone, tb, positions, seed).map_err(|e| e.to_string())?)
            }
            None => None,
        };
        let judged = match &self.judged {
            Some(set) => {
                let mut by_phase = morris_env::tablebase::PhaseAccuracy::default();
                for row in measure_judged_spec(&alone, set, seed).map_err(|e| e.to_string())? {
                    by_phase.add(&row.by_phase);
                }
                Some(by_phase)
            }
            None => None,
        };
        Ok(Judgement {
            results,
            elo: rate_against(&fixed),
            ms_per_move: ms,
            simulations: self.search.num_simulations,
            tablebase,
            judged,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use morris_train::model::NetConfig;

    #[test]
    fn a_network_is_judged_against_the_ladder() {
        let mut config = TrainConfig::default();
        config.eval.opponents = vec!["random".into(), "minimax:depth=1".into()];
        config.eval.pairs = 2;
        config.eval.simulations = 4;
        let judge = LadderJudge::from_config(&config).unwrap();
        let device = Device::flex();
        let model = NetConfig { width: 8, blocks: 1, ..NetConfig::default() }.init(&device);
        let j = judge.judge(&model, &device, 7).unwrap();
        assert_eq!(j.results.len(), 2);
        assert_eq!((j.results[0].label.as_str(), j.results[1].label.as_str()), ("random", "d1"));
        assert!(j.results.iter().all(|r| r.games() == 4));
        let elo = j.elo.expect("both opponents are on the ladder");
        assert!(elo.low95 < elo.elo && elo.elo < elo.high95);
        assert_eq!(j.simulations, 4);
        // The same seed plays the same games.
        assert_eq!(judge.judge(&model, &device, 7).unwrap().results, j.results);

        // Under other rules the ladder does not apply.
        config.rules.preset = "openspiel".into();
        let other = LadderJudge::from_config(&config).unwrap().judge(&model, &device, 7).unwrap();
        assert_eq!(other.elo, None);
    }

    #[test]
    fn the_judgement_measures_the_network_against_the_tables() {
        let dir = tempfile::tempdir().unwrap();
        morris_env::tablebase::build(dir.path(), 3, &Rules::standard(), &|_| {}).unwrap();
        let mut config = TrainConfig::default();
        config.eval.opponents = vec!["random".into()];
        config.eval.pairs = 1;
        config.eval.simulations = 4;
        config.tablebase.dir = Some(dir.path().to_path_buf());
        config.tablebase.accuracy_positions = 30;
        let judge = LadderJudge::from_config(&config).unwrap();
        let device = Device::flex();
        let model = NetConfig { width: 8, blocks: 1, ..NetConfig::default() }.init(&device);
        let j = judge.judge(&model, &device, 7).unwrap();
        let by_phase = j.tablebase.clone().expect("an accuracy figure");
        let a = by_phase.total();
        assert_eq!(a.positions, 30);
        // 3v3 tables: every mover flies, and they do not cover the placement phase.
        assert_eq!((by_phase.flying.positions, by_phase.placing.positions), (30, 0));
        assert_eq!(a.kept + a.win_to_draw + a.win_to_loss + a.draw_to_loss + a.no_move, 30);
        let tags: Vec<String> = j.scalars().into_iter().map(|(k, _)| k).collect();
        assert!(tags.contains(&"eval/tb_accuracy".to_string()), "{tags:?}");
        assert!(tags.contains(&"eval/tb_accuracy_flying".to_string()), "{tags:?}");
        assert!(!tags.contains(&"eval/tb_accuracy_placing".to_string()), "{tags:?}");
        assert!(j.summary().contains("TB "), "{}", j.summary());
        // Tables that are not there are a config error naming the key.
        config.tablebase.dir = Some(dir.path().join("missing"));
        let e = LadderJudge::from_config(&config).err().unwrap();
        assert_eq!(e.key(), Some("tablebase.dir"));
    }

    #[test]
    fn the_judgement_judges_the_network_on_stored_positions() {
        use morris_env::tablebase::{JudgedPosition, Tablebase};
        let dir = tempfile::tempdir().unwrap();
        morris_env::tablebase::build(dir.path(), 3, &Rules::standard(), &|_| {}).unwrap();
        let tb = Tablebase::open(dir.path()).unwrap();
        let mut rng = Rng::seed_from_u64(3);
        let positions: Vec<JudgedPosition> = (0..40)
            .map(|_| tb.random_position(&mut rng))
            .filter(|p| !p.outcome(&Rules::standard()).is_terminal())
            .map(|p| JudgedPosition::judge(&tb, "uniform", &p).unwrap())
            .collect();
        let path = dir.path().join("judged.jsonl");
        let set = JudgedSet::new("standard", "test", positions).unwrap();
        std::fs::write(&path, set.to_jsonl()).unwrap();
        let mut config = TrainConfig::default();
        config.eval.opponents = vec!["random".into()];
        config.eval.pairs = 1;
        config.eval.simulations = 4;
        config.eval.judged = Some(path.clone());
        config.eval.judged_positions = 10;
        let judge = LadderJudge::from_config(&config).unwrap();
        let device = Device::flex();
        let model = NetConfig { width: 8, blocks: 1, ..NetConfig::default() }.init(&device);
        let j = judge.judge(&model, &device, 7).unwrap();
        let a = j.judged.clone().expect("a judged figure").total();
        assert_eq!(a.positions, 10);
        assert_eq!(a.kept + a.win_to_draw + a.win_to_loss + a.draw_to_loss + a.no_move, 10);
        assert!(j.tablebase.is_none());
        let tags: Vec<String> = j.scalars().into_iter().map(|(k, _)| k).collect();
        for tag in [
            "eval/judged_kept",
            "eval/judged_kept_low95",
            "eval/judged_kept_flying",
            "eval/judged_win_to_draw",
        ] {
            assert!(tags.contains(&tag.to_string()), "{tag} missing from {tags:?}");
        }
        assert!(j.summary().contains("judged "), "{}", j.summary());
        // All of them with 0; a missing file, or a set under other rules, names the key.
        config.eval.judged_positions = 0;
        assert_eq!(config.open_judged().unwrap().unwrap().positions.len(), set.positions.len());
        config.rules.preset = "openspiel".into();
        let e = LadderJudge::from_config(&config).err().unwrap();
        assert_eq!(e.key(), Some("eval.judged"));
        assert!(e.to_string().contains("'standard' rules"), "{e}");
        config.rules.preset = "standard".into();
        config.eval.judged = Some(dir.path().join("missing.jsonl"));
        let e = LadderJudge::from_config(&config).err().unwrap();
        assert_eq!(e.key(), Some("eval.judged"));
        assert!(e.to_string().contains("missing.jsonl"), "{e}");
    }

    #[test]
    fn bad_opponents_name_the_key_and_the_spec() {
        let mut config = TrainConfig::default();
        config.eval.opponents = vec!["minimax:depth=0".into()];
        let e = LadderJudge::from_config(&config).err().unwrap();
        assert_eq!(e.key(), Some("eval.opponents"));
        assert!(e.to_string().contains("minimax:depth=0") && e.to_string().contains("Valid forms"), "{e}");
    }
}
