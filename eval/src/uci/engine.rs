//! The engine side of UCI: reads commands, keeps the options and the position, and searches on
//! a thread of its own (so `stop` and `isready` are answered during a search), writing `info`
//! lines and the `bestmove`.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::agents::{AgentSpec, LoadedModel, Searcher};
use morris_env::minimax::{EvalWeights, forced_result_plies};
use morris_env::tablebase::{PerfectPlayer, Pick, SharedTablebase, Wdl};
use morris_env::{Action, Agent, Color, Game, Minimax, MinimaxConfig, Rules};
use morris_train::agents::{AzAgent, PlayBudget, TIME_ONLY_SIMULATIONS};
use morris_train::evaluator::{EvalBatch, Evaluator, Leaf};
use morris_train::mcts::{Limits, MctsConfig};

use super::protocol::{Command, GoLimits, centipawns, parse, wdl_per_mille};

/// Which player the engine runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineKind {
    /// The trained network with PUCT search.
    Az,
    /// The alpha-beta baseline.
    Minimax,
    /// Perfect play from the tables of the `Tablebase` option.
    Perfect,
}

/// The engine's options, as set by `setoption` (the defaults are listed by `uci`).
#[derive(Clone, Debug, PartialEq)]
pub struct EngineOptions {
    /// `Engine`: `az`, `minimax` or `perfect`.
    pub kind: EngineKind,
    /// `Tablebase`: a table directory (`morris tablebase build`): exact endgame values for
    /// `az` and `minimax`, the whole game for `perfect`; empty for none.
    pub tablebase: Option<PathBuf>,
    /// `Model`: the exported model directory of the network.
    pub model: PathBuf,
    /// `Simulations`: network simulations of a bare `go`.
    pub simulations: u32,
    /// `Threads`: network search threads.
    pub threads: u32,
    /// `Batch`: leaves per network call and thread.
    pub batch: u32,
    /// `Depth`: minimax depth of a bare `go`.
    pub depth: u32,
    /// `Hash`: minimax table size in MiB (rounded down to a power of two of 16-byte entries).
    pub hash_mb: u32,
    /// `Rules`: a rules preset.
    pub rules: String,
    /// `Seed`: the minimax tie-break and the network tree's seed.
    pub seed: u64,
    /// `Move Overhead`: milliseconds kept back from a clock-based budget.
    pub move_overhead_ms: u64,
    /// `UCI_ShowWDL`: add `wdl W D L` to the network's `info` lines.
    pub show_wdl: bool,
}

impl EngineOptions {
    /// The defaults: the network in `model`, 800 simulations, one thread.
    pub fn new(model: PathBuf) -> EngineOptions {
        EngineOptions {
            kind: EngineKind::Az,
            tablebase: None,
            model,
            simulations: 800,
            threads: 1,
            batch: 1,
            depth: 8,
            hash_mb: 16,
            rules: "standard".into(),
            seed: 0,
            move_overhead_ms: 10,
            show_wdl: true,
        }
    }

    /// The `option` lines of the `uci` answer.
    fn lines(&self) -> Vec<String> {
        let kind = match self.kind {
            EngineKind::Az => "az",
            EngineKind::Minimax => "minimax",
            EngineKind::Perfect => "perfect",
        };
        let tb = self.tablebase.as_ref().map_or("<empty>".to_string(), |d| d.display().to_string());
        vec![
            format!("option name Engine type combo default {kind} var az var minimax var perfect"),
            format!("option name Model type string default {}", self.model.display()),
            format!("option name Tablebase type string default {tb}"),
            format!("option name Simulations type spin default {} min 1 max 1000000", self.simulations),
            format!("option name Threads type spin default {} min 1 max 64", self.threads),
            format!("option name Batch type spin default {} min 1 max 256", self.batch),
            format!("option name Depth type spin default {} min 1 max 64", self.depth),
            format!("option name Hash type spin default {} min 1 max 16384", self.hash_mb),
            format!(
                "option name Rules type combo default {}{}",
                self.rules,
                Rules::PRESETS.iter().map(|p| format!(" var {p}")).collect::<String>()
            ),
            format!("option name Seed type spin default {} min 0 max {}", self.seed, u64::MAX),
            format!("option name Move Overhead type spin default {} min 0 max 5000", self.move_overhead_ms),
            format!("option name UCI_ShowWDL type check default {}", self.show_wdl),
        ]
    }

    /// Sets option `name` (case-insensitive) to `value`. Returns whether the searcher must be
    /// rebuilt.
    fn set(&mut self, name: &str, value: Option<&str>) -> Result<bool, String> {
        let value = value.unwrap_or("").trim();
        let spin = |min: u64, max: u64| -> Result<u64, String> {
            let n: u64 =
                value.parse().map_err(|_| format!("option {name}: '{value}' is not a whole number"))?;
            if (min..=max).contains(&n) {
                Ok(n)
            } else {
                Err(format!("option {name}: {n} is outside {min}..={max}"))
            }
        };
        match name.to_ascii_lowercase().as_str() {
            "engine" => {
                self.kind = match value {
                    "az" => EngineKind::Az,
                    "minimax" => EngineKind::Minimax,
                    "perfect" => EngineKind::Perfect,
                    _ => return Err(format!("option Engine: '{value}' is not az, minimax or perfect")),
                };
            }
            "tablebase" => {
                self.tablebase = (!value.is_empty() && value != "<empty>").then(|| PathBuf::from(value));
            }
            "model" => {
                if value.is_empty() {
                    return Err("option Model needs a directory".into());
                }
                self.model = PathBuf::from(value);
            }
            "simulations" => self.simulations = spin(1, 1_000_000)? as u32,
            "threads" => self.threads = spin(1, 64)? as u32,
            "batch" => self.batch = spin(1, 256)? as u32,
            "depth" => self.depth = spin(1, 64)? as u32,
            "hash" => self.hash_mb = spin(1, 16384)? as u32,
            "rules" => {
                if Rules::preset(value).is_none() {
                    return Err(format!(
                        "option Rules: '{value}' is not one of {}",
                        Rules::PRESETS.join(", ")
                    ));
                }
                self.rules = value.to_string();
            }
            "seed" => {
                self.seed = spin(0, u64::MAX)?;
                // Only minimax and the perfect player draw on it (the network search plays
                // without noise).
                return Ok(matches!(self.kind, EngineKind::Minimax | EngineKind::Perfect));
            }
            "move overhead" => {
                self.move_overhead_ms = spin(0, 5000)?;
                return Ok(false);
            }
            "uci_showwdl" => {
                self.show_wdl = match value {
                    "true" => true,
                    "false" => false,
                    _ => return Err(format!("option UCI_ShowWDL: '{value}' is not true or false")),
                };
                return Ok(false);
            }
            _ => return Err(format!("unknown option '{}'", name.chars().take(40).collect::<String>())),
        }
        Ok(true)
    }

    /// The rules of the `Rules` option.
    fn rules(&self) -> Rules {
        Rules::preset(&self.rules).unwrap_or_else(Rules::standard)
    }

    /// Table bits for `Hash` MiB of 16-byte entries.
    fn tt_bits(&self) -> u32 {
        let entries = (self.hash_mb as u64) << 16; // MiB / 16 bytes
        (63 - entries.leading_zeros()).clamp(10, 30)
    }
}

impl EngineOptions {
    /// The agent the options describe, as a spec (the one way a surface gets an agent), its
    /// model opened for the game's variant and its tables checked against the game's rules.
    fn spec(&self) -> Result<AgentSpec, String> {
        let options = self;
        let tablebase = match &options.tablebase {
            Some(dir) => {
                let tb = SharedTablebase::open(dir).map_err(|e| format!("option Tablebase: {e}"))?;
                tb.check_rules(&options.rules()).map_err(|e| format!("option Tablebase: {e}"))?;
                Some(tb)
            }
            None => None,
        };
        match options.kind {
            EngineKind::Perfect => {
                let tb = tablebase.ok_or("Engine perfect needs the Tablebase option (a table directory)")?;
                Ok(AgentSpec::Perfect { tablebase: tb, pick: Pick::Best })
            }
            EngineKind::Minimax => {
                let config = MinimaxConfig {
                    depth: Some(options.depth),
                    time: None,
                    nodes: None,
                    tt_bits: options.tt_bits(),
                    seed: options.seed,
                    weights: EvalWeights::default(),
                    tablebase,
                };
                Ok(AgentSpec::Minimax(config))
            }
            EngineKind::Az => {
                let model = LoadedModel::open(&options.model, Some(options.rules().variant))
                    .map_err(|e| e.to_string())?;
                let search =
                    MctsConfig { num_simulations: options.simulations, tablebase, ..MctsConfig::default() };
                let budget = PlayBudget { time: None, threads: options.threads, batch: options.batch };
                Ok(AgentSpec::Az { model, search, budget })
            }
        }
    }

    /// The options' agent, built with their seed.
    fn searcher(&self) -> Result<Searcher, String> {
        self.spec()?.searcher(self.seed).map_err(|e| e.to_string())
    }
}

/// Where lines go: stdout in the binary, a buffer in tests. Each line is written whole and
/// flushed.
#[derive(Clone)]
struct Out(Arc<Mutex<Box<dyn Write + Send>>>);

impl Out {
    fn say(&self, line: &str) {
        let mut w = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        // A closed output (the GUI went away) ends the engine at the next read; nothing to do.
        let _ = writeln!(w, "{line}").and_then(|()| w.flush());
    }

    fn error(&self, message: &str) {
        self.say(&format!("info string error: {message}"));
    }
}

/// A search in progress.
struct Running {
    handle: JoinHandle<()>,
    stop: Arc<AtomicBool>,
    /// Cleared by the search thread just before it writes `bestmove` (after giving the
    /// searcher back), so a command that follows the `bestmove` never finds it busy.
    busy: Arc<AtomicBool>,
    /// A `go infinite`, which only `stop` ends.
    infinite: bool,
}

/// The engine: options, position, searcher, and the search thread.
struct Engine {
    out: Out,
    options: EngineOptions,
    game: Game,
    searcher: Arc<Mutex<Option<Searcher>>>,
    running: Option<Running>,
}

/// Serves the UCI protocol: reads commands from `input` until `quit` or the end of input,
/// writing answers to `output`. Bad lines get an `info string error: ...` answer and the engine
/// carries on.
///
/// # Errors
/// Only a failure to read `input`.
pub fn serve(
    input: impl BufRead,
    output: impl Write + Send + 'static,
    options: EngineOptions,
) -> std::io::Result<()> {
    let mut engine = Engine {
        out: Out(Arc::new(Mutex::new(Box::new(output)))),
        game: Game::new(options.rules()),
        options,
        searcher: Arc::new(Mutex::new(None)),
        running: None,
    };
    for line in input.lines() {
        let line = match line {
            Ok(l) => l,
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                engine.out.error("a line that is not UTF-8 was ignored");
                continue;
            }
            Err(e) => return Err(e),
        };
        match parse(&line) {
            Ok(Command::Quit) => break,
            Ok(command) => engine.handle(command),
            Err(e) => engine.out.error(&e.to_string()),
        }
    }
    engine.stop_and_wait();
    Ok(())
}

impl Engine {
    fn handle(&mut self, command: Command) {
        // The end of a finished search is collected before anything else.
        if self.running.as_ref().is_some_and(|r| !r.busy.load(Ordering::Acquire)) {
            self.join();
        }
        // Commands that change the position or the searcher wait for a search that ends by
        // itself (as Stockfish does, so piped scripts work); an infinite one must be stopped first.
        let waits = matches!(
            command,
            Command::NewGame | Command::SetOption { .. } | Command::Position { .. } | Command::Go(_)
        );
        if waits && self.running.as_ref().is_some_and(|r| !r.infinite || r.stop.load(Ordering::Relaxed)) {
            self.join();
        }
        let busy = self.running.is_some();
        match command {
            Command::Uci => {
                self.out.say(&format!("id name morris {}", env!("CARGO_PKG_VERSION")));
                self.out.say("id author the Nine Men's Morris lab");
                for line in self.options.lines() {
                    self.out.say(&line);
                }
                self.out.say("uciok");
            }
            Command::IsReady => {
                if !busy {
                    self.ensure_searcher();
                }
                self.out.say("readyok");
            }
            Command::Stop => {
                if let Some(r) = &self.running {
                    r.stop.store(true, Ordering::Relaxed);
                }
            }
            Command::Empty | Command::Quit => {}
            _ if busy => self.out.error("an infinite search is running; send stop first (command ignored)"),
            Command::NewGame => {
                self.game = Game::new(self.options.rules());
                // A new game starts from a fresh tree (the network stays loaded), or from fresh
                // minimax tables with the tie-break seeded as set.
                let mut slot = self.lock_searcher();
                match slot.as_mut() {
                    Some(Searcher::Az(agent)) => agent.reset(),
                    // The tables stay open (opening the full set reads every file once).
                    Some(Searcher::Perfect(..)) => {}
                    _ => *slot = None,
                }
            }
            Command::SetOption { name, value } => match self.options.set(&name, value.as_deref()) {
                Ok(rebuild) => {
                    if rebuild {
                        *self.lock_searcher() = None;
                        self.game = replay(self.options.rules(), &self.game)
                            .unwrap_or_else(|| Game::new(self.options.rules()));
                    }
                }
                Err(e) => self.out.error(&e),
            },
            Command::Position { moves } => {
                let mut game = Game::new(self.options.rules());
                for (i, m) in moves.iter().enumerate() {
                    if let Err(e) = game.play_notation(m) {
                        let m: String = m.chars().take(20).collect();
                        self.out.error(&format!("position: move {} '{m}': {e} (position unchanged)", i + 1));
                        return;
                    }
                }
                self.game = game;
            }
            Command::Go(limits) => self.go(limits),
        }
    }

    fn lock_searcher(&self) -> std::sync::MutexGuard<'_, Option<Searcher>> {
        self.searcher.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Builds the searcher if there is none (loading the model); reports a failure.
    fn ensure_searcher(&self) -> bool {
        let mut slot = self.lock_searcher();
        if slot.is_some() {
            return true;
        }
        match self.options.searcher() {
            Ok(s) => {
                *slot = Some(s);
                true
            }
            Err(e) => {
                self.out.error(&e);
                false
            }
        }
    }

    fn go(&mut self, limits: GoLimits) {
        if self.game.outcome().is_terminal() {
            self.out.say(&format!("info string the game is over: {}", self.game.outcome()));
            self.out.say("bestmove (none)");
            return;
        }
        if !self.ensure_searcher() {
            self.out.say("bestmove (none)");
            return;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let busy = Arc::new(AtomicBool::new(true));
        let infinite = limits.infinite;
        let job = Job {
            game: self.game.clone(),
            limits,
            options: self.options.clone(),
            stop: stop.clone(),
            out: self.out.clone(),
        };
        let searcher = self.searcher.clone();
        let done = busy.clone();
        let handle = std::thread::spawn(move || {
            let best = {
                let mut slot = searcher.lock().unwrap_or_else(PoisonError::into_inner);
                match slot.as_mut() {
                    Some(s) => job.run(s),
                    None => None,
                }
            };
            let text = best.and_then(|a| job.game.notation(a)).unwrap_or_else(|| "(none)".into());
            done.store(false, Ordering::Release);
            job.out.say(&format!("bestmove {text}"));
        });
        self.running = Some(Running { handle, stop, busy, infinite });
    }

    fn join(&mut self) {
        if let Some(r) = self.running.take()
            && r.handle.join().is_err()
        {
            // The search panicked: its searcher may be inconsistent, so it is rebuilt.
            *self.lock_searcher() = None;
            self.out.error("the search failed; the engine was reset");
        }
    }

    fn stop_and_wait(&mut self) {
        if let Some(r) = &self.running {
            r.stop.store(true, Ordering::Relaxed);
        }
        self.join();
    }
}

/// The moves of `game` replayed under `rules` (after the Rules option changed), if legal there.
fn replay(rules: Rules, game: &Game) -> Option<Game> {
    let mut g = Game::new(rules);
    for &a in game.actions() {
        g.apply(a).ok()?;
    }
    Some(g)
}

/// One `go`: what to search and where to report.
struct Job {
    game: Game,
    limits: GoLimits,
    options: EngineOptions,
    stop: Arc<AtomicBool>,
    out: Out,
}

/// How often the network search reports: soon after it starts, then every second.
const FIRST_REPORT: Duration = Duration::from_millis(100);
const REPORT_EVERY: Duration = Duration::from_secs(1);

impl Job {
    fn run(&self, searcher: &mut Searcher) -> Option<Action> {
        let start = Instant::now();
        let white = self.game.current_player() == Color::White;
        let overhead = Duration::from_millis(self.options.move_overhead_ms);
        let budget = self.limits.budget(white, overhead);
        let best = match searcher {
            Searcher::Az(agent) => self.run_az(agent, start, budget.map(|b| start + b)),
            Searcher::Minimax(mm) => self.run_minimax(mm, start, budget),
            Searcher::Perfect(player, tb) => self.run_perfect(player, tb, start),
            // The options build none of the others.
            Searcher::Other(agent) => agent.choose(&self.game),
        };
        if self.limits.infinite {
            // UCI: after `go infinite` the best move is sent only once `stop` arrives.
            while !self.stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        best
    }

    fn run_az(&self, agent: &mut AzAgent, start: Instant, deadline: Option<Instant>) -> Option<Action> {
        let cap = match self.limits.nodes {
            Some(n) => n.min(TIME_ONLY_SIMULATIONS as u64) as u32,
            None if self.limits.is_empty() => self.options.simulations,
            None => TIME_ONLY_SIMULATIONS,
        };
        let draw = root_draw(agent, &self.game);
        let mut done = 0u32;
        let mut report_at = start + FIRST_REPORT;
        loop {
            let chunk_end = deadline.map_or(report_at, |d| d.min(report_at));
            let limits =
                Limits { simulations: cap - done, deadline: Some(chunk_end), stop: Some(&self.stop) };
            done += agent.search(&self.game, &limits);
            let now = Instant::now();
            let tree = agent.tree()?;
            let (mean, max) = tree.depth_stats();
            let finished = done >= cap
                || self.stop.load(Ordering::Relaxed)
                || deadline.is_some_and(|d| now >= d)
                || self.limits.depth.is_some_and(|d| mean >= d as f32);
            if finished || now >= report_at {
                let (_, q) = tree.root_value();
                let secs = (now - start).as_secs_f64();
                let mut line = format!(
                    "info depth {} seldepth {max} nodes {done} nps {} time {} score cp {}",
                    mean.round() as u32,
                    (done as f64 / secs.max(1e-6)) as u64,
                    (secs * 1000.0) as u64,
                    centipawns(q)
                );
                if self.options.show_wdl {
                    let [w, d, l] = wdl_per_mille(q, draw);
                    line += &format!(" wdl {w} {d} {l}");
                }
                let pv = notation_line(&self.game, &tree.principal_variation(32));
                if !pv.is_empty() {
                    line += &format!(" pv {pv}");
                }
                self.out.say(&line);
                report_at = now + REPORT_EVERY;
            }
            if finished {
                break;
            }
        }
        agent.best_action()
    }

    /// The perfect player's move, with the position's exact value: `score mate N` (N moves to
    /// the next removal or the end, from the tables' distance) or `score cp 0` for a draw, and
    /// a `wdl` of certainty. A position the tables cannot solve is reported and gets no move.
    fn run_perfect(
        &self,
        player: &mut PerfectPlayer,
        tb: &SharedTablebase,
        start: Instant,
    ) -> Option<Action> {
        let pos = self.game.position();
        let value = match tb.value(pos) {
            Ok(v) => v,
            Err(e) => {
                self.out.error(&e.to_string());
                return None;
            }
        };
        let best = match player.select(&self.game) {
            Ok(best) => best,
            Err(e) => {
                self.out.error(&e.to_string());
                return None;
            }
        };
        // Distances exist in the moving phase; with pieces in hand the solver gives the value only.
        let plies = tb.probe(pos).map(|p| p.plies as i32).filter(|_| value != Wdl::Draw);
        let score = match (value, plies) {
            (Wdl::Draw, _) => "cp 0".to_string(),
            (Wdl::Win, Some(p)) => format!("mate {}", (p + 1) / 2),
            (Wdl::Loss, Some(p)) => format!("mate -{}", (p + 1) / 2),
            (Wdl::Win, None) => format!("cp {}", centipawns(1.0)),
            (Wdl::Loss, None) => format!("cp {}", centipawns(-1.0)),
        };
        let mut line = format!("info depth 0 nodes 0 time {} score {score}", start.elapsed().as_millis());
        if self.options.show_wdl {
            let wdl = match value {
                Wdl::Win => "1000 0 0",
                Wdl::Draw => "0 1000 0",
                Wdl::Loss => "0 0 1000",
            };
            line += &format!(" wdl {wdl}");
        }
        if let Some(a) = best {
            line += &format!(" pv {}", notation_line(&self.game, &[a]));
        }
        self.out.say(&line);
        best
    }

    fn run_minimax(&self, mm: &mut Minimax, start: Instant, budget: Option<Duration>) -> Option<Action> {
        let depth = match (self.limits.depth, self.limits.is_empty()) {
            (Some(d), _) => Some(d),
            (None, true) => Some(self.options.depth),
            (None, false) => None,
        };
        mm.set_limits(depth, budget, self.limits.nodes);
        mm.set_stop_flag(Some(self.stop.clone()));
        let game = &self.game;
        let report = |r: &morris_env::minimax::SearchResult, pv: &[Action]| {
            let secs = start.elapsed().as_secs_f64();
            let score = match forced_result_plies(r.score) {
                Some(p) => format!("mate {}", if p > 0 { (p + 1) / 2 } else { -((-p + 1) / 2) }),
                None => format!("cp {}", r.score),
            };
            let mut line = format!(
                "info depth {} nodes {} nps {} time {} score {score}",
                r.depth,
                r.nodes,
                (r.nodes as f64 / secs.max(1e-6)) as u64,
                (secs * 1000.0) as u64
            );
            let pv = notation_line(game, pv);
            if !pv.is_empty() {
                line += &format!(" pv {pv}");
            }
            self.out.say(&line);
        };
        let result = mm.search_reporting(game, Some(report));
        mm.set_stop_flag(None);
        result.best
    }
}

/// The network's draw probability at the root (for the `wdl` of the info lines and the web board).
pub fn root_draw(agent: &mut AzAgent, game: &Game) -> f32 {
    let leaf = Leaf { position: *game.position(), repetitions: game.repetitions() };
    let mut out = EvalBatch::default();
    agent.evaluator_mut().evaluate(game.rules(), &[leaf], &[game.legal_actions()], &mut out);
    out.wdl.first().map_or(0.0, |w| w[1])
}

/// `actions` from `game`'s position, in notation, separated by spaces (stopping at the first
/// that does not apply).
pub fn notation_line(game: &Game, actions: &[Action]) -> String {
    let mut g = game.clone();
    let mut words = Vec::with_capacity(actions.len());
    for &a in actions {
        let Some(m) = g.notation(a) else { break };
        if g.apply(a).is_err() {
            break;
        }
        words.push(m);
    }
    words.join(" ")
}
