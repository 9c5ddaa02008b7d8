//! `eval`: the arena and the Elo ladder. `eval match A B`, `eval rate GAMES.jsonl…`, `eval ladder`.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use morris::Preset;
use morris_eval::agents::{AgentSpec, SPEC_FORMS};
use morris_eval::arena::{GameRecord, MatchConfig, MatchReport, play_match};
use morris_eval::elo::{EloOptions, EloTable, GameResult, fit};
use morris_train::files::{open_append, write_atomic};
use serde::Serialize;

#[derive(Parser)]
#[command(name = "eval", version, about = "Arena and Elo ladder for Nine Men's Morris agents")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Args, Clone, Copy)]
struct MatchArgs {
    /// Colour-swapped pairs per match (each pair is two games from one random opening).
    #[arg(long, default_value_t = 50)]
    pairs: u32,
    /// Random plies at the start of each pair's games.
    #[arg(long, default_value_t = 6)]
    opening_plies: u32,
    /// Seed of the openings and of the agents' tie-breaks.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Rules preset.
    #[arg(long, value_enum, default_value = "standard")]
    rules: Preset,
    /// Worker threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
}

#[derive(Subcommand)]
enum Command {
    /// Play colour-swapped pairs between two agents and report the score.
    #[command(after_help = format!("Agent specs: {SPEC_FORMS}"))]
    Match {
        /// First agent spec (the report is from its point of view).
        a: String,
        /// Second agent spec.
        b: String,
        #[command(flatten)]
        args: MatchArgs,
        /// Append every game as one JSON line to this file (created if missing).
        #[arg(long, default_value = "games.jsonl")]
        out: PathBuf,
    },
    /// Fit Elo ratings to game records (JSONL files written by `match` or `ladder`).
    Rate {
        /// Game record files.
        #[arg(required = true)]
        games: Vec<PathBuf>,
        /// Player anchored at Elo 0.
        #[arg(long, default_value = "random")]
        anchor: String,
        /// Also write the ratings as CSV.
        #[arg(long)]
        csv: Option<PathBuf>,
        /// Also write the ratings (with covariance and LOS) as JSON.
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Calibrate random and minimax depths 1..=N: adjacent rungs and skip-rung pairs.
    Ladder {
        #[command(flatten)]
        args: MatchArgs,
        /// Deepest minimax rung.
        #[arg(long, default_value_t = 6)]
        max_depth: u32,
        /// Pairs for each skip-rung pairing (depth d against d+2).
        #[arg(long, default_value_t = 10)]
        skip_pairs: u32,
        /// Where to append the ladder's games.
        #[arg(long, default_value = "ladder-games.jsonl")]
        games: PathBuf,
        /// Where to write the ladder (ratings, errors, time per move).
        #[arg(long, default_value = "ladder.json")]
        out: PathBuf,
    },
    /// Export a training checkpoint as model.safetensors + model.json (config, observation
    /// version, rules, step, Elo if evaluated).
    Export {
        /// The checkpoint directory (RUN/checkpoints/step-N).
        #[arg(long)]
        checkpoint: PathBuf,
        /// The directory to create (must not exist).
        #[arg(long)]
        out: PathBuf,
    },
    /// Draw Elo (with 95% intervals) of rated checkpoints against training time or steps, as a PNG,
    /// and print the table.
    Plot {
        /// A run directory: its checkpoints evaluated during training (eval.json).
        #[arg(long, conflicts_with = "ratings", required_unless_present = "ratings")]
        run: Option<PathBuf>,
        /// Or a ratings table from `eval rate --json` whose `az:model=DIR` players are checkpoints.
        #[arg(long)]
        ratings: Option<PathBuf>,
        /// What the x axis shows.
        #[arg(long, value_enum, default_value = "hours")]
        x: Axis,
        /// The PNG to write.
        #[arg(long, default_value = "elo.png")]
        out: PathBuf,
        /// The plot's title.
        #[arg(long, default_value = "Strength during training")]
        title: String,
    },
    /// Play against a model in the terminal (moves in notation: d6, a1-a4, xg7).
    Play {
        /// An exported model or a checkpoint directory (default: the shipped model).
        #[arg(long)]
        model: Option<PathBuf>,
        /// Your colour.
        #[arg(long, value_enum, default_value = "white")]
        color: Side,
        /// Simulations per model move.
        #[arg(long, default_value_t = 400)]
        sims: u32,
        /// Seed of the model's search.
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
}

/// The x axis of `eval plot`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Axis {
    Hours,
    Steps,
}

/// A colour on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Side {
    White,
    Black,
}

/// The model `eval play` uses without `--model`.
fn shipped_model() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("checkpoints").join("shipped")
}

fn main() -> ExitCode {
    morris::exit_code(run(Cli::parse().command))
}

fn run(command: Command) -> Result<(), String> {
    match command {
        Command::Export { checkpoint, out } => {
            let card = morris_train::export::export_checkpoint(&checkpoint, &out)?;
            println!(
                "exported step {} to {} ({}; Elo {})",
                card.step,
                out.display(),
                card.rules,
                card.elo.map_or("not evaluated".into(), |e| format!(
                    "{:.0} [{:.0}, {:.0}] at {} simulations",
                    e.elo, e.low95, e.high95, e.simulations
                ))
            );
            Ok(())
        }
        Command::Plot { run, ratings, x, out, title } => {
            use morris_eval::plot::{XAxis, draw, points_from_ratings, points_from_run, table};
            let points = match (run, ratings) {
                (Some(run), _) => points_from_run(&run)?,
                (None, Some(r)) => points_from_ratings(&r)?,
                (None, None) => return Err("pass --run RUN or --ratings FILE".into()),
            };
            let axis = if x == Axis::Hours { XAxis::Hours } else { XAxis::Steps };
            draw(&points, axis, &title, &out)?;
            print!("{}", table(&points));
            println!("plot written to {}", out.display());
            Ok(())
        }
        Command::Play { model, color, sims, seed } => {
            let dir = model.unwrap_or_else(shipped_model);
            if !dir.is_dir() {
                return Err(format!(
                    "no model at {}: pass --model DIR (an exported model or a checkpoint directory)",
                    dir.display()
                ));
            }
            let human =
                if color == Side::White { morris_env::Color::White } else { morris_env::Color::Black };
            let settings = morris_eval::play::PlaySettings { human, sims: sims.max(1), seed };
            let stdin = std::io::stdin();
            morris_eval::play::play(&dir, &settings, stdin.lock(), std::io::stdout()).map(|_| ())
        }
        Command::Match { a, b, args, out } => {
            let (a, b) = (parse_spec(&a)?, parse_spec(&b)?);
            if a.name() == b.name() {
                return Err(format!(
                    "both agents are '{}': a match needs two different specs (records name players by spec)",
                    a.name()
                ));
            }
            args.validate()?;
            let pool = thread_pool(args.threads)?;
            let sink = RecordSink::open(&out)?;
            let games = pool.install(|| run_match(&a, &b, &args, &sink))?;
            let report = MatchReport::from_games(&a.name(), &b.name(), &games);
            println!("{}", report.to_text());
            println!("games appended to {}", out.display());
            Ok(())
        }
        Command::Rate { games, anchor, csv, json } => {
            let mut records = Vec::new();
            for path in &games {
                records.extend(read_records(path)?);
            }
            let table = rate(&records, &anchor)?;
            println!("{}", table.to_text());
            println!("\nlikelihood of superiority (row stronger than column):\n{}", table.los_text());
            if let Some(p) = csv {
                write_atomic(&p, table.to_csv().as_bytes())?;
            }
            if let Some(p) = json {
                let text = serde_json::to_string_pretty(&table).map_err(|e| e.to_string())?;
                write_atomic(&p, text.as_bytes())?;
            }
            Ok(())
        }
        Command::Ladder { args, max_depth, skip_pairs, games, out } => {
            if !(1..=12).contains(&max_depth) {
                return Err(format!("--max-depth must be between 1 and 12, got {max_depth}"));
            }
            args.validate()?;
            let pool = thread_pool(args.threads)?;
            let rungs: Vec<AgentSpec> = std::iter::once(AgentSpec::Random)
                .chain((1..=max_depth).map(AgentSpec::minimax_depth))
                .collect();
            let sink = RecordSink::open(&games)?;
            let mut all = Vec::new();
            let mut pairings = Vec::new();
            for (gap, pairs) in [(1usize, args.pairs), (2, skip_pairs)] {
                if pairs == 0 {
                    continue;
                }
                for i in 0..rungs.len().saturating_sub(gap) {
                    let (a, b) = (&rungs[i], &rungs[i + gap]);
                    let margs = MatchArgs {
                        pairs,
                        seed: args.seed.wrapping_add(1000 * i as u64 + gap as u64),
                        ..args
                    };
                    let played = pool.install(|| run_match(b, a, &margs, &sink))?;
                    let report = MatchReport::from_games(&b.name(), &a.name(), &played);
                    println!("{}", report.to_text());
                    pairings.push(report);
                    all.extend(played);
                }
            }
            let table = rate(&all, "random")?;
            println!("\n{}", table.to_text());
            let ladder = Ladder::new(&table, &all, &args, pairings);
            let text = serde_json::to_string_pretty(&ladder).map_err(|e| e.to_string())?;
            write_atomic(&out, text.as_bytes())?;
            println!("ladder written to {} (games appended to {})", out.display(), games.display());
            Ok(())
        }
    }
}

impl MatchArgs {
    /// Checks the arguments before anything is started or written.
    fn validate(&self) -> Result<(), String> {
        if self.pairs == 0 {
            return Err("--pairs must be at least 1".into());
        }
        if self.threads == Some(0) {
            return Err("--threads must be at least 1".into());
        }
        Ok(())
    }
}

fn parse_spec(s: &str) -> Result<AgentSpec, String> {
    AgentSpec::parse(s).map_err(|e| e.to_string())
}

fn thread_pool(threads: Option<usize>) -> Result<rayon::ThreadPool, String> {
    let mut b = rayon::ThreadPoolBuilder::new();
    if let Some(t) = threads {
        b = b.num_threads(t);
    }
    b.build().map_err(|e| format!("cannot start worker threads: {e}"))
}

/// Appends game records to a JSONL file, one whole line per write, from any thread.
struct RecordSink {
    path: PathBuf,
    file: Mutex<File>,
    error: Mutex<Option<String>>,
}

impl RecordSink {
    fn open(path: &Path) -> Result<RecordSink, String> {
        let file = open_append(path)?;
        Ok(RecordSink { path: path.to_path_buf(), file: Mutex::new(file), error: Mutex::new(None) })
    }

    fn write(&self, rec: &GameRecord) {
        let line = match serde_json::to_string(rec) {
            Ok(l) => l + "\n",
            Err(e) => return self.fail(e.to_string()),
        };
        let Ok(mut f) = self.file.lock() else { return self.fail("record file lock poisoned".into()) };
        if let Err(e) = f.write_all(line.as_bytes()) {
            self.fail(format!("cannot write to {}: {e}", self.path.display()));
        }
    }

    fn fail(&self, msg: String) {
        if let Ok(mut e) = self.error.lock() {
            e.get_or_insert(msg);
        }
    }

    fn check(&self) -> Result<(), String> {
        match self.error.lock() {
            Ok(e) => e.clone().map_or(Ok(()), Err),
            Err(_) => Err("record file lock poisoned".into()),
        }
    }
}

fn run_match(
    a: &AgentSpec,
    b: &AgentSpec,
    args: &MatchArgs,
    sink: &RecordSink,
) -> Result<Vec<GameRecord>, String> {
    let config = MatchConfig {
        pairs: args.pairs,
        opening_plies: args.opening_plies,
        seed: args.seed,
        rules: args.rules.rules(),
    };
    let bar = if std::io::stderr().is_terminal() {
        let bar = ProgressBar::new(2 * args.pairs as u64);
        if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} games ({eta})") {
            bar.set_style(style);
        }
        bar.set_message(format!("{} vs {}", a.name(), b.name()));
        bar
    } else {
        ProgressBar::hidden()
    };
    let games = play_match(a, b, &config, |rec| {
        sink.write(rec);
        bar.inc(1);
    });
    bar.finish_and_clear();
    sink.check()?;
    Ok(games)
}

fn read_records(path: &Path) -> Result<Vec<GameRecord>, String> {
    let file = File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| format!("{}:{}: cannot read: {e}", path.display(), i + 1))?;
        if line.trim().is_empty() {
            continue;
        }
        let rec: GameRecord = serde_json::from_str(&line)
            .map_err(|e| format!("{}:{}: not a game record: {e}", path.display(), i + 1))?;
        if rec.white_score().is_none() {
            return Err(format!("{}:{}: unknown result '{}'", path.display(), i + 1, rec.result));
        }
        out.push(rec);
    }
    Ok(out)
}

fn rate(records: &[GameRecord], anchor: &str) -> Result<EloTable, String> {
    if records.is_empty() {
        return Err("no games to rate".into());
    }
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    for r in records {
        for name in [&r.white, &r.black] {
            let n = index.len();
            index.entry(name.clone()).or_insert(n);
        }
    }
    let mut names = vec![String::new(); index.len()];
    for (name, &i) in &index {
        names[i] = name.clone();
    }
    let Some(&anchor) = index.get(anchor) else {
        return Err(format!(
            "anchor '{anchor}' is not among the players ({}); choose one with --anchor",
            names.join(", ")
        ));
    };
    let rule_sets: std::collections::BTreeSet<&str> = records.iter().map(|r| r.rules.as_str()).collect();
    if rule_sets.len() > 1 {
        let list: Vec<&str> = rule_sets.into_iter().collect();
        eprintln!(
            "warning: the records mix rule sets ({}); ratings under different rules are not comparable",
            list.join(", ")
        );
    }
    // A game of a player against itself says nothing about its rating.
    let self_games = records.iter().filter(|r| r.white == r.black).count();
    if self_games > 0 {
        eprintln!("warning: skipped {self_games} game(s) of a player against itself");
    }
    let results: Vec<GameResult> = records
        .iter()
        .filter(|r| r.white != r.black)
        .filter_map(|r| {
            Some(GameResult { white: index[&r.white], black: index[&r.black], score: r.white_score()? })
        })
        .collect();
    fit(&names, &results, &EloOptions { anchor, ..EloOptions::default() }).map_err(|e| e.to_string())
}

/// The calibrated ladder file: later issues rate checkpoints against it.
#[derive(Serialize)]
struct Ladder {
    rules: String,
    opening_plies: u32,
    seed: u64,
    players: Vec<LadderRung>,
    pairings: Vec<MatchReport>,
}

#[derive(Serialize)]
struct LadderRung {
    name: String,
    elo: f64,
    std_error: f64,
    lower95: f64,
    upper95: f64,
    games: u32,
    ms_per_move: f64,
}

impl Ladder {
    fn new(table: &EloTable, games: &[GameRecord], args: &MatchArgs, pairings: Vec<MatchReport>) -> Ladder {
        let mut time: BTreeMap<&str, (f64, f64)> = BTreeMap::new();
        for g in games {
            for (name, ms) in [(&g.white, g.ms_per_move[0]), (&g.black, g.ms_per_move[1])] {
                let e = time.entry(name.as_str()).or_default();
                e.0 += ms;
                e.1 += 1.0;
            }
        }
        let players = table
            .ratings
            .iter()
            .map(|r| LadderRung {
                name: r.name.clone(),
                elo: r.elo,
                std_error: r.std_error,
                lower95: r.lower95,
                upper95: r.upper95,
                games: r.games,
                ms_per_move: time.get(r.name.as_str()).map_or(0.0, |(s, n)| s / n.max(1.0)),
            })
            .collect();
        Ladder {
            rules: args.rules.name().into(),
            opening_plies: args.opening_plies,
            seed: args.seed,
            players,
            pairings,
        }
    }
}
