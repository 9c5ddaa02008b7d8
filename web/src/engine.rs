//! The opponent of a web game: the trained network (PUCT search), the alpha-beta baseline or
//! perfect play from the tables, searching one position within a bound and reporting its move,
//! value and principal variation.

use std::time::{Duration, Instant};

use morris_env::minimax::forced_result_plies;
use morris_env::tablebase::{PerfectPlayer, Pick, SharedTablebase, Wdl};
use morris_env::{Action, Agent, Game, Minimax, MinimaxConfig, Rules, Variant};
use morris_eval::agents::{AgentSpec, LoadedModel, Searcher};
use morris_eval::uci::{notation_line, root_draw, wdl_per_mille};
use morris_train::agents::{AzAgent, PlayBudget, TIME_ONLY_SIMULATIONS};
use morris_train::mcts::{Limits, MctsConfig};
use serde::{Deserialize, Serialize};

/// The largest time per move a request may ask for.
pub const MAX_TIME: Duration = Duration::from_secs(10);
/// The most simulations per move a request may ask for.
pub const MAX_SIMULATIONS: u32 = 20_000;
/// The deepest fixed-depth minimax a request may ask for.
pub const MAX_DEPTH: u32 = 10;

/// The refusal of perfect play on a server without tables.
const NO_TABLES: &str = "this server has no tables: start it with --tb DIR for perfect play";
/// The refusal of a model opponent on a server without a model.
const NO_MODEL: &str = "this server has no model: choose the minimax opponent";

/// Who plays against the human, and how hard it thinks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Opponent {
    /// The network with PUCT search: `simulations` per move, or `time_ms` per move.
    Model {
        /// Simulations per move (default 200).
        #[serde(default)]
        simulations: Option<u32>,
        /// Milliseconds per move instead.
        #[serde(default)]
        time_ms: Option<u64>,
    },
    /// Alpha-beta to `depth` plies, or for `time_ms` per move.
    Minimax {
        /// Fixed depth (default 4).
        #[serde(default)]
        depth: Option<u32>,
        /// Milliseconds per move instead.
        #[serde(default)]
        time_ms: Option<u64>,
    },
    /// Perfect play from the server's tables (`eval serve --tb DIR`, every sector up to 9v9).
    Perfect {},
}

impl Opponent {
    /// Checks the bounds and that the server has what the opponent needs to play under `rules`
    /// (a model, `model` being the variant the server's network plays, if it has one; complete
    /// tables for those rules for perfect play, `tables` being the server's); the message names
    /// the field.
    pub fn validate(
        &self,
        model: Option<Variant>,
        tables: Option<&SharedTablebase>,
        rules: &Rules,
    ) -> Result<(), String> {
        let time = match self {
            Opponent::Perfect {} => {
                let tb = tables.ok_or(NO_TABLES)?;
                tb.check_rules(rules).map_err(|e| e.to_string())?;
                if !tb.covers_placement() {
                    return Err(format!(
                        "perfect play from the start needs every sector up to 9v9; {} holds {}: build them with `morris tablebase build --max-pieces 9 --out {}`",
                        tb.dir().display(),
                        tb.sector_names().join(" "),
                        tb.dir().display()
                    ));
                }
                &None
            }
            Opponent::Model { simulations, time_ms } => {
                let model = model.ok_or(NO_MODEL)?;
                if model != rules.variant {
                    return Err(format!(
                        "the model plays the '{model}' variant, not '{}': choose the minimax opponent",
                        rules.variant
                    ));
                }
                if let Some(s) = simulations
                    && !(1..=MAX_SIMULATIONS).contains(s)
                {
                    return Err(format!("simulations must be 1..={MAX_SIMULATIONS}, got {s}"));
                }
                time_ms
            }
            Opponent::Minimax { depth, time_ms } => {
                if let Some(d) = depth
                    && !(1..=MAX_DEPTH).contains(d)
                {
                    return Err(format!("depth must be 1..={MAX_DEPTH}, got {d}"));
                }
                time_ms
            }
        };
        match time {
            Some(t) if *t == 0 || Duration::from_millis(*t) > MAX_TIME => {
                Err(format!("time_ms must be 1..={}, got {t}", MAX_TIME.as_millis()))
            }
            _ => Ok(()),
        }
    }

    /// A short label, e.g. `model, 200 simulations`.
    pub fn label(&self) -> String {
        match self {
            Opponent::Model { time_ms: Some(t), .. } => format!("model, {t} ms per move"),
            Opponent::Model { simulations, .. } => {
                format!("model, {} simulations", simulations.unwrap_or(200))
            }
            Opponent::Minimax { time_ms: Some(t), .. } => format!("minimax, {t} ms per move"),
            Opponent::Minimax { depth, .. } => format!("minimax, depth {}", depth.unwrap_or(4)),
            Opponent::Perfect {} => "perfect play".into(),
        }
    }
}

/// What a search found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Analysis {
    /// The move, in notation.
    #[serde(rename = "move")]
    pub mv: String,
    /// Win/draw/loss per mille for the player who moves: the search's value with the network's
    /// draw share; for minimax, a forced result, or its heuristic score squashed into a value.
    pub wdl: [u32; 3],
    /// The principal variation in notation, starting with the move.
    pub pv: Vec<String>,
    /// Simulations (network) or nodes (minimax) searched.
    pub nodes: u64,
    /// Thinking time in milliseconds.
    pub ms: u64,
    /// The action index of the move.
    #[serde(skip)]
    pub action: Action,
}

/// A built opponent.
pub enum Engine {
    /// The network's search.
    Model(Box<AzAgent>, Opponent),
    /// The alpha-beta baseline.
    Minimax(Box<Minimax>, Opponent),
    /// Perfect play, with the tables it plays from.
    Perfect(Box<PerfectPlayer>, SharedTablebase),
}

impl Opponent {
    /// The opponent as an agent spec (the one way a surface gets an agent): the network of
    /// `model` (which must be there for a model opponent) with one thread and leaves batched by
    /// 8, minimax, or perfect play from the server's `tables`.
    pub fn spec(
        &self,
        model: Option<&LoadedModel>,
        tables: Option<&SharedTablebase>,
    ) -> Result<AgentSpec, String> {
        match self {
            Opponent::Perfect {} => {
                let tb = tables.ok_or(NO_TABLES)?;
                Ok(AgentSpec::Perfect { tablebase: tb.clone(), pick: Pick::Best })
            }
            Opponent::Model { simulations, time_ms } => {
                let model = model.ok_or(NO_MODEL)?;
                let sims = match (simulations, time_ms) {
                    (Some(s), _) => *s,
                    (None, Some(_)) => TIME_ONLY_SIMULATIONS,
                    (None, None) => 200,
                };
                let search = MctsConfig { num_simulations: sims, ..MctsConfig::default() };
                let budget = PlayBudget { time: time_ms.map(Duration::from_millis), threads: 1, batch: 8 };
                Ok(AgentSpec::Az { model: model.clone(), search, budget })
            }
            Opponent::Minimax { depth, time_ms } => Ok(AgentSpec::Minimax(match time_ms {
                Some(t) => MinimaxConfig {
                    depth: None,
                    time: Some(Duration::from_millis(*t)),
                    ..MinimaxConfig::depth(1)
                },
                None => MinimaxConfig::depth(depth.unwrap_or(4)),
            })),
        }
    }
}

impl Engine {
    /// Builds `opponent` from its spec ([`Opponent::spec`]) with `seed`.
    pub fn build(
        opponent: &Opponent,
        model: Option<&LoadedModel>,
        tables: Option<&SharedTablebase>,
        seed: u64,
    ) -> Result<Engine, String> {
        match opponent.spec(model, tables)?.searcher(seed).map_err(|e| e.to_string())? {
            Searcher::Az(agent) => Ok(Engine::Model(agent, opponent.clone())),
            Searcher::Minimax(mm) => Ok(Engine::Minimax(mm, opponent.clone())),
            Searcher::Perfect(player, tb) => Ok(Engine::Perfect(player, tb)),
            Searcher::Other(agent) => Err(format!("the web board cannot analyse {}", agent.name())),
        }
    }

    /// Searches `game` (which must not be over) within the opponent's bound.
    pub fn think(&mut self, game: &Game) -> Option<Analysis> {
        let start = Instant::now();
        match self {
            Engine::Model(agent, opponent) => {
                let (sims, deadline) = match opponent {
                    Opponent::Model { simulations, time_ms: Some(t) } => (
                        simulations.unwrap_or(TIME_ONLY_SIMULATIONS),
                        Some(start + Duration::from_millis(*t)),
                    ),
                    Opponent::Model { simulations, .. } => (simulations.unwrap_or(200), None),
                    Opponent::Minimax { .. } | Opponent::Perfect {} => return None,
                };
                agent.reset();
                let draw = root_draw(agent, game);
                let limits = Limits { simulations: sims, deadline, stop: None };
                let nodes = agent.search(game, &limits);
                let tree = agent.tree()?;
                let (_, q) = tree.root_value();
                let pv_actions = tree.principal_variation(16);
                let action = agent.best_action()?;
                let pv = line(game, &pv_actions, action);
                Some(Analysis {
                    mv: pv.first().cloned().unwrap_or_default(),
                    wdl: wdl_per_mille(q, draw),
                    pv,
                    nodes: nodes as u64,
                    ms: start.elapsed().as_millis() as u64,
                    action,
                })
            }
            Engine::Perfect(player, tb) => {
                // The value of the position is the value of the move that keeps it.
                let value = tb.value(game.position()).ok()?;
                let action = player.select(game).ok()??;
                let wdl = match value {
                    Wdl::Win => [1000, 0, 0],
                    Wdl::Draw => [0, 1000, 0],
                    Wdl::Loss => [0, 0, 1000],
                };
                let pv = line(game, &[action], action);
                Some(Analysis {
                    mv: pv.first().cloned().unwrap_or_default(),
                    wdl,
                    pv,
                    nodes: 0,
                    ms: start.elapsed().as_millis() as u64,
                    action,
                })
            }
            Engine::Minimax(mm, _) => {
                mm.reset();
                let mut best_pv: Vec<Action> = Vec::new();
                let mut last = None;
                let result = mm.search_reporting(
                    game,
                    Some(|r: &morris_env::SearchResult, pv: &[Action]| {
                        best_pv = pv.to_vec();
                        last = Some(*r);
                    }),
                );
                let action = result.best?;
                let pv = line(game, &best_pv, action);
                let wdl = match forced_result_plies(result.score) {
                    Some(p) if p > 0 => [1000, 0, 0],
                    Some(_) => [0, 0, 1000],
                    // A heuristic score (a piece is worth about 100) squashed into a value.
                    None => wdl_per_mille((result.score as f32 / 300.0).tanh(), 0.0),
                };
                Some(Analysis {
                    mv: pv.first().cloned().unwrap_or_default(),
                    wdl,
                    pv,
                    nodes: last.map_or(result.nodes, |r| r.nodes),
                    ms: start.elapsed().as_millis() as u64,
                    action,
                })
            }
        }
    }
}

/// The principal variation in notation, made to start with the chosen move.
fn line(game: &Game, pv: &[Action], best: Action) -> Vec<String> {
    let actions: Vec<Action> = if pv.first() == Some(&best) { pv.to_vec() } else { vec![best] };
    notation_line(game, &actions).split_whitespace().map(str::to_string).collect()
}
