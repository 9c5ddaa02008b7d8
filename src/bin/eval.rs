//! `eval`: the arena and the Elo ladder. `eval match A B`, `eval rate GAMES.jsonl…`, `eval ladder`.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use morris::Preset;
use morris_eval::agents::{AgentSpec, SPEC_FORMS};
use morris_eval::arena::{GameRecord, MatchConfig, OpeningFilter, OpeningValue, Openings, play_match};
use morris_eval::elo::EloTable;
use morris_eval::records::{RateNotes, RecordSink, rate, read_records};
use morris_eval::{EvalError, Ladder, MatchReport};
use morris_train::store::export_checkpoint;
use morris_train::store::files::{write_atomic, write_json};
use morris_train::store::{MANIFEST_FILE, Verification, verify_manifest};

/// Says so when a model directory has no manifest (written before checksums), so its files
/// could not be checked. (One whose files fail their checksums never gets here: it does not load.)
fn note_if_unverified(dir: &Path) {
    if matches!(verify_manifest(dir), Ok(Verification::Unverified)) {
        eprintln!(
            "note: {} has no {MANIFEST_FILE} (written before checksums): loaded unverified",
            dir.display()
        );
    }
}

#[derive(Parser)]
#[command(name = "eval", version, about = "Arena and Elo ladder for Nine Men's Morris agents")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Args, Clone)]
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
    /// Keep only openings of this exact value (valued by --opening-tb): drawn ones, or ones won
    /// by a side (each agent then plays the winning side once per pair).
    #[arg(long, value_enum, requires = "opening_tb")]
    opening_value: Option<OpeningKind>,
    /// Tables that value the openings (complete ones, up to 9 pieces a side, for openings with
    /// pieces in hand).
    #[arg(long, value_name = "DIR", requires = "opening_value")]
    opening_tb: Option<PathBuf>,
    /// Play pair i from the i-th opening of this book (`eval openings`: openings with their exact
    /// values, no tables needed) instead of a random one.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["opening_value", "opening_tb", "opening_plies"])]
    openings: Option<PathBuf>,
}

/// Where the positions of `accuracy` and `positions` come from.
#[derive(clap::Args, Clone)]
struct PositionArgs {
    /// Tablebase directory (`morris tablebase build --out DIR`).
    #[arg(long)]
    tb: PathBuf,
    /// Positions drawn uniformly from the tables (no pieces in hand).
    #[arg(long, default_value_t = 1000)]
    uniform: u32,
    /// Positions drawn uniformly from the placement phase, valued by the placement solver
    /// (default 200 when the tables cover the placement phase, every sector up to 9v9; else 0).
    #[arg(long)]
    placement: Option<u32>,
    /// Game records (`eval match --out FILE`) to take positions from, repeatable.
    #[arg(long = "games", value_name = "FILE.jsonl")]
    games: Vec<PathBuf>,
    /// Positions sampled from the records.
    #[arg(long, default_value_t = 1000)]
    from_games: u32,
    /// Seed of the samples (and of the agent).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Rules preset.
    #[arg(long, value_enum, default_value = "standard")]
    rules: Preset,
    /// Worker threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
}

/// The positions `PositionArgs` asks for.
struct Sampled {
    /// The tables, opened and checked against the rules.
    table: std::sync::Arc<morris_env::tablebase::Tablebase>,
    /// The positions of each source: `uniform`, `placement`, `games`.
    sources: [(&'static str, Vec<morris_env::Game>); 3],
}

/// Opens the tables and draws the positions of each source, with the checks both commands
/// share: sample sizes, rules, and placement positions only from complete tables.
fn sample_positions(args: &PositionArgs) -> Result<Sampled, EvalError> {
    use morris_eval::accuracy;
    let rules = args.rules.rules();
    if args.uniform > 1_000_000
        || args.from_games > 1_000_000
        || args.placement.is_some_and(|n| n > 1_000_000)
    {
        return Err(EvalError::Usage("--uniform, --placement and --from-games are at most 1,000,000".into()));
    }
    let table = morris_env::tablebase::Tablebase::open_shared(&args.tb)
        .map_err(|e| EvalError::Usage(e.to_string()))?;
    table.check_rules(&rules).map_err(|e| EvalError::Usage(e.to_string()))?;
    let placement = match args.placement {
        Some(n) if n > 0 && !table.covers_placement() => {
            return Err(EvalError::Usage(format!(
                "--placement needs tables for the whole placement phase (every sector up to 9v9); {} holds {}: build them with `morris tablebase build --max-pieces 9 --out {}`",
                args.tb.display(),
                table.sector_names().join(" "),
                args.tb.display()
            )));
        }
        Some(n) => n,
        None if table.covers_placement() => 200,
        None => 0,
    };
    let mut records = Vec::new();
    for path in &args.games {
        records.extend(read_records(path)?);
    }
    let sources = [
        ("uniform", accuracy::uniform_positions(&table, args.uniform, args.seed, rules)),
        ("placement", accuracy::uniform_placement_positions(placement, args.seed, rules)),
        ("games", accuracy::positions_from_records(&table, &records, args.from_games, args.seed, rules)?),
    ];
    if sources.iter().all(|(_, p)| p.is_empty()) {
        return Err(EvalError::Usage(
            "no positions to measure: give --uniform N, --placement N, or --games FILE with games that reach the tables".into(),
        ));
    }
    if sources[2].1.is_empty() && !records.is_empty() {
        eprintln!("note: no position of the {} games is inside the tables", records.len());
    }
    Ok(Sampled { table, sources })
}

/// `--opening-value`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum OpeningKind {
    /// Drawn with perfect play.
    Draw,
    /// Won by one side with perfect play.
    Decided,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the web board: play the model (or minimax) and step through arena games in the
    /// browser (http://127.0.0.1:8080 by default).
    Serve {
        /// The model to play and to evaluate games with.
        #[arg(long, default_value = "checkpoints/shipped")]
        model: PathBuf,
        /// No model: minimax opponents only, games without evaluation.
        #[arg(long, conflicts_with = "model")]
        no_model: bool,
        /// Tables for a perfect opponent (every sector up to 9v9, `morris tablebase build
        /// --max-pieces 9`).
        #[arg(long, value_name = "DIR")]
        tb: Option<PathBuf>,
        /// Address to listen on; another than localhost exposes the board to the network.
        #[arg(long, default_value = "127.0.0.1")]
        host: std::net::IpAddr,
        /// Port (0: any free port, printed at start).
        #[arg(long, default_value_t = 8080)]
        port: u16,
        /// Game records for the viewer (`eval match --out FILE`), repeatable.
        #[arg(long = "games", value_name = "FILE.jsonl")]
        games: Vec<PathBuf>,
        /// Most games at once.
        #[arg(long, default_value_t = 64)]
        max_sessions: usize,
        /// Minutes after which an idle game is dropped.
        #[arg(long, default_value_t = 30)]
        idle_minutes: u64,
    },
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
    /// Draw the openings of a match valued by the tables (--opening-value, --opening-tb) and
    /// write them as an opening book, which `match --openings FILE` plays without tables: with
    /// the same --seed, the same games as the valued match.
    Openings {
        #[command(flatten)]
        args: MatchArgs,
        /// The book to write (JSON Lines, one opening per pair).
        #[arg(long)]
        out: PathBuf,
    },
    /// Measure an agent against perfect play: on positions the tables can value (drawn
    /// uniformly from the tables and from the placement phase, and from game records), how
    /// often its move keeps the exact value, by phase.
    #[command(after_help = format!("Agent specs: {SPEC_FORMS}"))]
    Accuracy {
        /// The agent spec.
        agent: String,
        #[command(flatten)]
        from: PositionArgs,
        /// Also write the report as JSON.
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Judge positions with the tables and keep them as data: every legal turn of each position
    /// with its exact value, in a JSON Lines file that `eval strength` reads without tables.
    Positions {
        #[command(flatten)]
        from: PositionArgs,
        /// The file to write (JSON Lines: a header, then one position per line).
        #[arg(long)]
        out: PathBuf,
    },
    /// An agent's strength in one command: its moves judged against perfect play on a stored
    /// set of judged positions (`eval positions`; no tables needed), by source and phase, then
    /// colour-swapped pairs against an opponent (by default minimax at 20 ms a move).
    #[command(after_help = format!("Agent specs: {SPEC_FORMS}"))]
    Strength {
        /// The agent spec (give it the same time per move as the opponent for an equal-time match).
        agent: String,
        /// The judged positions (`eval positions --out FILE`): by default the set kept in the
        /// repo (docs/strength.md#the-strength-harness).
        #[arg(long, default_value = "data/judged-positions.jsonl")]
        positions: PathBuf,
        /// The opponent of the match.
        #[arg(long, default_value = "minimax:time=20ms")]
        opponent: String,
        #[command(flatten)]
        args: MatchArgs,
        /// Also play --pairs pairs against the perfect player of these tables (complete ones), from
        /// openings that are draws with perfect play: an agent that plays perfectly draws them all.
        #[arg(long, value_name = "DIR")]
        perfect: Option<PathBuf>,
        /// Append the matches' games as JSON lines to this file (created if missing).
        #[arg(long, default_value = "strength-games.jsonl")]
        out: PathBuf,
        /// Also write the report (accuracy rows and matches) as JSON.
        #[arg(long)]
        json: Option<PathBuf>,
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
        /// The checkpoint directory (RUN/checkpoints/step-N), or a run directory for its newest
        /// checkpoint that verifies.
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
        /// Or a ratings table from `eval rate --json` whose `az:model=DIR` players are checkpoints
        /// (or, with `--x time-per-move`, whose players have a `time=Tms` option).
        #[arg(long)]
        ratings: Option<PathBuf>,
        /// What the x axis shows: training hours or steps of checkpoints, or the time per move of
        /// time-limited players (one line per player without its time).
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
        /// Simulations per model move (1 to 1,000,000, as `az:…,sims=N`).
        #[arg(long, default_value_t = 400, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
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
    TimePerMove,
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
    match Cli::parse().command {
        Command::Serve { model, no_model, tb, host, port, games, max_sessions, idle_minutes } => {
            let config = morris_web::ServeConfig {
                model: (!no_model).then_some(model),
                tablebase: tb,
                host,
                port,
                games,
                max_sessions,
                idle: std::time::Duration::from_secs(idle_minutes.max(1) * 60),
            };
            morris::exit_code(serve(config))
        }
        command => morris::exit_code(run(command)),
    }
}

/// `eval serve`: loads the model and games, binds, prints the address and serves until Ctrl-C.
fn serve(config: morris_web::ServeConfig) -> Result<(), morris_web::WebError> {
    let app = std::sync::Arc::new(morris_web::App::load(&config)?);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(morris_web::WebError::Serve)?;
    runtime.block_on(async move {
        let (listener, addr) = morris_web::bind(&config).await?;
        println!(
            "serving the web board on http://{addr}/ ({}; {} games to view); Ctrl-C stops",
            config.model.as_ref().map_or("no model".to_string(), |m| format!("model {}", m.display())),
            app.records.len()
        );
        let shutdown = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        morris_web::serve(listener, app, shutdown).await
    })
}

fn run(command: Command) -> Result<(), EvalError> {
    match command {
        Command::Serve { .. } => Err(EvalError::Usage("serve is handled by main".into())),
        Command::Export { checkpoint, out } => {
            // A run directory stands for its newest checkpoint that verifies, as with --resume.
            let (checkpoint, skipped) = morris_train::store::checkpoint::resolve(&checkpoint)?;
            for s in &skipped {
                eprintln!("warning: skipped {} ({})", s.dir.display(), s.reason);
            }
            let card = export_checkpoint(&checkpoint, &out)?;
            println!(
                "exported step {} ({}) to {} ({}; Elo {})",
                card.step,
                checkpoint.display(),
                out.display(),
                card.rules,
                card.elo.map_or("not evaluated".into(), |e| format!(
                    "{:.0} [{:.0}, {:.0}] at {} simulations",
                    e.rating.elo, e.rating.low95, e.rating.high95, e.simulations
                ))
            );
            Ok(())
        }
        Command::Plot { run, ratings, x, out, title } => {
            use morris_eval::plot::{XAxis, draw, points_from_ratings, points_from_run, table};
            if x == Axis::TimePerMove {
                use morris_eval::plot::{draw_by_time, timed_points_from_ratings, timed_table};
                let Some(ratings) = ratings else {
                    return Err(EvalError::Usage("--x time-per-move needs --ratings FILE".into()));
                };
                let (points, anchor) = timed_points_from_ratings(&ratings)?;
                draw_by_time(&points, anchor.as_deref(), &title, &out)?;
                print!("{}", timed_table(&points));
                println!("plot written to {}", out.display());
                return Ok(());
            }
            let points = match (run, ratings) {
                (Some(run), _) => points_from_run(&run)?,
                (None, Some(r)) => points_from_ratings(&r)?,
                (None, None) => return Err(EvalError::Usage("pass --run RUN or --ratings FILE".into())),
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
                return Err(EvalError::Usage(format!(
                    "no model at {}: pass --model DIR (an exported model or a checkpoint directory)",
                    dir.display()
                )));
            }
            let human =
                if color == Side::White { morris_env::Color::White } else { morris_env::Color::Black };
            let settings = morris_eval::play::PlaySettings { human, sims, seed };
            note_if_unverified(&dir);
            let stdin = std::io::stdin();
            morris_eval::play::play(&dir, &settings, stdin.lock(), std::io::stdout()).map(|_| ())
        }
        Command::Match { a, b, args, out } => {
            let (a, b) = (AgentSpec::parse(&a)?, AgentSpec::parse(&b)?);
            for spec in [&a, &b] {
                spec.check_rules(&args.rules.rules())?;
                if let AgentSpec::Az { model, .. } = spec {
                    note_if_unverified(&model.dir);
                }
            }
            if a.name() == b.name() {
                return Err(EvalError::Usage(format!(
                    "both agents are '{}': a match needs two different specs (records name players by spec)",
                    a.name()
                )));
            }
            args.validate()?;
            let pool = thread_pool(args.threads)?;
            let config = match_config(&args)?;
            let sink = RecordSink::open(&out)?;
            let games = pool.install(|| run_match(&a, &b, &config, &sink))?;
            let report = MatchReport::from_games(&a.name(), &b.name(), &games);
            println!("{}", report.to_text());
            println!("games appended to {}", out.display());
            Ok(())
        }
        Command::Openings { args, out } => {
            if args.opening_value.is_none() || args.openings.is_some() {
                return Err(EvalError::Usage(
                    "openings are drawn and valued by tables: give --opening-value and --opening-tb".into(),
                ));
            }
            args.validate()?;
            let config = match_config(&args)?;
            let started = std::time::Instant::now();
            let openings =
                thread_pool(args.threads)?.install(|| morris_eval::arena::match_openings(&config))?;
            write_atomic(&out, morris_eval::book::to_jsonl(&openings, &config.rules)?.as_bytes())?;
            println!(
                "{} openings of {} plies valued in {:.1} s, written to {}",
                openings.len(),
                args.opening_plies,
                started.elapsed().as_secs_f64(),
                out.display()
            );
            Ok(())
        }
        Command::Accuracy { agent, from, json } => {
            use morris_eval::accuracy::{self, AccuracyReport, AccuracyRow};
            let spec = AgentSpec::parse(&agent)?;
            let Sampled { table, sources } = sample_positions(&from)?;
            spec.check_rules(&from.rules.rules())?;
            let pool = thread_pool(from.threads)?;
            let mut rows = Vec::new();
            for (source, positions) in sources {
                if !positions.is_empty() {
                    let acc =
                        pool.install(|| accuracy::measure_spec(&spec, &table, &positions, from.seed))?;
                    rows.push(AccuracyRow::new(source, acc));
                }
            }
            let tb = &from.tb;
            let report = AccuracyReport {
                agent: spec.name(),
                tablebase: format!("{} ({})", tb.display(), table.sector_names().join(" ")),
                rows,
            };
            print!("{}", report.to_text());
            if let Some(p) = json {
                write_json(&p, &report)?;
            }
            Ok(())
        }
        Command::Positions { from, out } => {
            let Sampled { table, sources } = sample_positions(&from)?;
            let pool = thread_pool(from.threads)?;
            let started = std::time::Instant::now();
            let judged = pool.install(|| morris_eval::accuracy::judge_positions(&table, &sources))?;
            if judged.is_empty() {
                return Err(EvalError::Usage(
                    "no positions to judge: give --uniform N, --placement N or --games FILE".into(),
                ));
            }
            let made_by = morris::command_line("eval");
            let set = morris_env::tablebase::JudgedSet::new(from.rules.name(), &made_by, judged)
                .map_err(EvalError::Usage)?;
            write_atomic(&out, set.to_jsonl().as_bytes())?;
            for source in set.sources() {
                let n = set.positions.iter().filter(|p| p.source == source).count();
                println!("{source}: {n} positions");
            }
            println!(
                "{} positions judged in {:.1} s, written to {}",
                set.positions.len(),
                started.elapsed().as_secs_f64(),
                out.display()
            );
            Ok(())
        }
        Command::Strength { agent, positions, opponent, args, perfect, out, json } => {
            use morris_eval::accuracy::{self, AccuracyReport};
            let set = morris_env::tablebase::JudgedSet::load(&positions)
                .map_err(|e| EvalError::Usage(e.to_string()))?;
            if set.rules != args.rules.rules() {
                return Err(EvalError::Usage(format!(
                    "{} holds values under the '{}' rules; run with --rules {}",
                    positions.display(),
                    set.header.rules,
                    set.header.rules
                )));
            }
            let (a, b) = (AgentSpec::parse(&agent)?, AgentSpec::parse(&opponent)?);
            if perfect.is_some() && args.pairs == 0 {
                return Err(EvalError::Usage("--perfect plays --pairs pairs: give --pairs 1 or more".into()));
            }
            let perfect = match perfect {
                Some(dir) => {
                    // Its openings are valued with pieces in hand: the tables must be complete,
                    // which is checked before any game is played.
                    let tables = morris_env::tablebase::SharedTablebase::open(&dir)
                        .map_err(|e| EvalError::Usage(format!("--perfect: {e}")))?;
                    if !tables.covers_placement() {
                        return Err(EvalError::Usage(format!(
                            "--perfect needs tables for the whole placement phase (every sector up to 9v9); {} holds {}",
                            dir.display(),
                            tables.sector_names().join(" ")
                        )));
                    }
                    // Built from the opened tables, not from a spec string (a comma in the path
                    // would split it).
                    let spec = AgentSpec::Perfect { tablebase: tables, pick: Default::default() };
                    Some((spec, dir))
                }
                None => None,
            };
            for spec in [&a, &b].into_iter().chain(perfect.as_ref().map(|(p, _)| p)) {
                spec.check_rules(&args.rules.rules())?;
                if let AgentSpec::Az { model, .. } = spec {
                    note_if_unverified(&model.dir);
                }
            }
            if args.pairs > 0 && a.name() == b.name() {
                return Err(EvalError::Usage(format!(
                    "the agent and the opponent are both '{}': give another --opponent, or --pairs 0",
                    a.name()
                )));
            }
            // The openings' tables or book are opened (once) before anything is measured.
            let config = if args.pairs > 0 {
                args.validate()?;
                Some(match_config(&args)?)
            } else {
                None
            };
            let pool = thread_pool(args.threads)?;
            let rows = pool.install(|| accuracy::measure_judged_spec(&a, &set, args.seed))?;
            let accuracy = AccuracyReport {
                agent: a.name(),
                tablebase: format!("{} (stored values)", positions.display()),
                rows,
            };
            print!("{}", accuracy.to_text());
            let report = if let Some(config) = &config {
                let sink = RecordSink::open(&out)?;
                let games = pool.install(|| run_match(&a, &b, config, &sink))?;
                Some(print_with_losses(MatchReport::from_games(&a.name(), &b.name(), &games)))
            } else {
                None
            };
            let against_perfect = match &perfect {
                Some((p, dir)) => {
                    let drawn = MatchArgs {
                        opening_value: Some(OpeningKind::Draw),
                        opening_tb: Some(dir.clone()),
                        openings: None,
                        ..args.clone()
                    };
                    let config = match_config(&drawn)?;
                    let sink = RecordSink::open(&out)?;
                    let games = pool.install(|| run_match(&a, p, &config, &sink))?;
                    Some(print_with_losses(MatchReport::from_games(&a.name(), &p.name(), &games)))
                }
                None => None,
            };
            if report.is_some() || against_perfect.is_some() {
                println!("games appended to {}", out.display());
            }
            if let Some(p) = json {
                write_json(
                    &p,
                    &serde_json::json!({ "accuracy": accuracy, "match": report, "perfect": against_perfect }),
                )?;
            }
            Ok(())
        }
        Command::Rate { games, anchor, csv, json } => {
            let mut records = Vec::new();
            for path in &games {
                records.extend(read_records(path)?);
            }
            let table = rate_and_warn(&records, &anchor)?;
            println!("{}", table.to_text());
            println!("\nlikelihood of superiority (row stronger than column):\n{}", table.los_text());
            if let Some(p) = csv {
                write_atomic(&p, table.to_csv().as_bytes())?;
            }
            if let Some(p) = json {
                write_json(&p, &table)?;
            }
            Ok(())
        }
        Command::Ladder { args, max_depth, skip_pairs, games, out } => {
            if !(1..=12).contains(&max_depth) {
                return Err(EvalError::Usage(format!(
                    "--max-depth must be between 1 and 12, got {max_depth}"
                )));
            }
            if skip_pairs > MAX_PAIRS {
                return Err(EvalError::Usage(format!(
                    "--skip-pairs must be at most {MAX_PAIRS}, got {skip_pairs}"
                )));
            }
            args.validate()?;
            if args.openings.is_some() {
                return Err(EvalError::Usage(
                    "the ladder draws random openings for each pairing from its seed; --openings is for match and strength".into(),
                ));
            }
            // The openings' tables are opened (once) before anything is written.
            let base = match_config(&args)?;
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
                    let config = MatchConfig {
                        pairs,
                        seed: args.seed.wrapping_add(1000 * i as u64 + gap as u64),
                        ..base.clone()
                    };
                    let played = pool.install(|| run_match(b, a, &config, &sink))?;
                    let report = MatchReport::from_games(&b.name(), &a.name(), &played);
                    println!("{}", report.to_text());
                    pairings.push(report);
                    all.extend(played);
                }
            }
            let table = rate_and_warn(&all, "random")?;
            println!("\n{}", table.to_text());
            let ladder =
                Ladder::new(&table, &all, args.rules.name(), args.opening_plies, args.seed, pairings);
            write_json(&out, &ladder)?;
            println!("ladder written to {} (games appended to {})", out.display(), games.display());
            Ok(())
        }
    }
}

/// The most colour-swapped pairs one match (or ladder pairing) plays; its games are held in
/// memory together.
const MAX_PAIRS: u32 = 100_000;
/// The longest random opening.
const MAX_OPENING_PLIES: u32 = 200;

impl MatchArgs {
    /// Checks the arguments before anything is started or written.
    fn validate(&self) -> Result<(), EvalError> {
        // The games of a match are held in memory together: bound them.
        if !(1..=MAX_PAIRS).contains(&self.pairs) {
            return Err(EvalError::Usage(format!("--pairs must be in 1..={MAX_PAIRS}, got {}", self.pairs)));
        }
        if self.opening_plies > MAX_OPENING_PLIES {
            return Err(EvalError::Usage(format!(
                "--opening-plies must be at most {MAX_OPENING_PLIES}, got {}",
                self.opening_plies
            )));
        }
        if self.threads == Some(0) {
            return Err(EvalError::Usage("--threads must be at least 1".into()));
        }
        Ok(())
    }
}

/// Fits ratings and prints what the fit noticed about its input.
fn rate_and_warn(records: &[GameRecord], anchor: &str) -> Result<EloTable, EvalError> {
    let (table, RateNotes { mixed_rules, self_games }) = rate(records, anchor)?;
    if !mixed_rules.is_empty() {
        eprintln!(
            "warning: the records mix rule sets ({}); ratings under different rules are not comparable",
            mixed_rules.join(", ")
        );
    }
    if self_games > 0 {
        eprintln!("warning: skipped {self_games} game(s) of a player against itself");
    }
    Ok(table)
}

/// Prints a match report and the first agent's loss rate with its 95% interval; returns both
/// as JSON (the report's fields, plus `loss_rate`, `loss_rate_low95` and `loss_rate_high95`).
fn print_with_losses(report: MatchReport) -> serde_json::Value {
    println!("{}", report.to_text());
    let played = u64::from(report.wins + report.draws + report.losses);
    let (rate, low, high) = morris_env::tablebase::wilson(u64::from(report.losses), played);
    println!(
        "  {}'s losses: {}/{played} = {:.1}% [{:.1}%, {:.1}%] (95%, Wilson over games)",
        report.a,
        report.losses,
        100.0 * rate,
        100.0 * low,
        100.0 * high
    );
    let mut json = serde_json::to_value(&report).unwrap_or_default();
    if let Some(map) = json.as_object_mut() {
        map.insert("loss_rate".into(), rate.into());
        map.insert("loss_rate_low95".into(), low.into());
        map.insert("loss_rate_high95".into(), high.into());
    }
    json
}

fn thread_pool(threads: Option<usize>) -> Result<rayon::ThreadPool, EvalError> {
    let mut b = rayon::ThreadPoolBuilder::new();
    if let Some(t) = threads {
        b = b.num_threads(t);
    }
    b.build().map_err(|e| EvalError::Usage(format!("cannot start worker threads: {e}")))
}

/// The arena's settings for `args` (the tables or the book of the openings opened and read).
fn match_config(args: &MatchArgs) -> Result<MatchConfig, EvalError> {
    let rules = args.rules.rules();
    let openings = match (args.opening_value, &args.opening_tb, &args.openings) {
        (_, _, Some(path)) => {
            let book = morris_eval::book::load(path, &rules)?;
            // Checked here, before any record file is opened (the arena checks again when it plays).
            morris_eval::arena::check_book(&book, &rules, args.pairs)
                .map_err(|e| EvalError::Usage(format!("{}: {e}", path.display())))?;
            Openings::Book(book)
        }
        (Some(kind), Some(dir), None) => Openings::Valued(OpeningFilter {
            tablebase: morris_env::tablebase::SharedTablebase::open(dir)
                .map_err(|e| EvalError::Usage(format!("--opening-tb: {e}")))?,
            value: match kind {
                OpeningKind::Draw => OpeningValue::Draw,
                OpeningKind::Decided => OpeningValue::Decided,
            },
        }),
        _ => Openings::Random,
    };
    Ok(MatchConfig {
        pairs: args.pairs,
        opening_plies: args.opening_plies,
        seed: args.seed,
        rules,
        batch_network: false,
        openings,
    })
}

fn run_match(
    a: &AgentSpec,
    b: &AgentSpec,
    config: &MatchConfig,
    sink: &RecordSink,
) -> Result<Vec<GameRecord>, EvalError> {
    let bar = if std::io::stderr().is_terminal() {
        let bar = ProgressBar::new(2 * config.pairs as u64);
        if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} games ({eta})") {
            bar.set_style(style);
        }
        bar.set_message(format!("{} vs {}", a.name(), b.name()));
        bar
    } else {
        ProgressBar::hidden()
    };
    let games = play_match(a, b, config, |rec| {
        sink.write(rec);
        bar.inc(1);
    })?;
    bar.finish_and_clear();
    sink.check()?;
    Ok(games)
}
