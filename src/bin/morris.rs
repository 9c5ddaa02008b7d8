//! `morris`: rules tools (perft node counts, board display, a random-playout speed check), the
//! UCI engine mode, and the endgame tablebases (build and probe).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use morris::Preset;
use morris_env::tablebase::{self, BuildEvent, Placement, SectorSummary, Tablebase, Wdl};
use morris_env::{Color, Game, Minimax, MinimaxConfig, Rng, perft, perft_divide};
use morris_eval::uci::{self, EngineOptions};
use morris_train::store::files::{write_atomic, write_json};

#[derive(Parser)]
#[command(name = "morris", version, about = "Nine Men's Morris rules tools and UCI engine")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Count the leaf nodes of the game tree at depths 1..=N (a removal is its own ply).
    Perft {
        /// Deepest depth to count.
        #[arg(long, short)]
        depth: u32,
        /// Start after these moves, in notation: "d6 a1 d5 a4 d7 xa1".
        #[arg(long, default_value = "")]
        moves: String,
        /// Rules preset.
        #[arg(long, value_enum, default_value = "openspiel")]
        rules: Preset,
        /// Also print the count below each first move at the deepest depth.
        #[arg(long)]
        divide: bool,
    },
    /// Print the board after a sequence of moves, with the legal moves.
    Show {
        /// Moves in notation.
        #[arg(long, default_value = "")]
        moves: String,
        /// Rules preset.
        #[arg(long, value_enum, default_value = "standard")]
        rules: Preset,
    },
    /// Run the alpha-beta baseline on a position and print its choice, score, nodes and speed.
    Search {
        /// Deepest iteration, in turns.
        #[arg(long, short, default_value_t = 6)]
        depth: u32,
        /// Moves in notation leading to the position.
        #[arg(long, default_value = "")]
        moves: String,
        /// Rules preset.
        #[arg(long, value_enum, default_value = "standard")]
        rules: Preset,
        /// Then play this many uniformly random plies (for a mid-game position).
        #[arg(long, default_value_t = 0)]
        random_plies: u32,
        /// Seed of the random plies.
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
    /// Play uniformly random games on one thread and print steps per second.
    Playouts {
        /// How long to run, in seconds.
        #[arg(long, default_value_t = 3.0)]
        seconds: f64,
        /// Rules preset.
        #[arg(long, value_enum, default_value = "openspiel")]
        rules: Preset,
        /// Random seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
    /// Endgame tablebases: build them by retrograde analysis, or probe a position (docs/tablebase.md).
    Tablebase {
        #[command(subcommand)]
        command: TablebaseCommand,
    },
    /// Serve the trained network (or minimax) as a UCI engine on stdin/stdout (docs/uci.md).
    Uci {
        /// The exported model of the `Model` option's default (default: the shipped model).
        #[arg(long)]
        model: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum TablebaseCommand {
    /// Solve every sector with up to --max-pieces pieces a side into --out (resumable: sectors
    /// already there are verified and kept).
    Build {
        /// Most pieces per side (3 to 9; 6 takes about 2 minutes, 7 a quarter of an hour, 9 (the
        /// whole moving phase) hours and about 18 GB of disk).
        #[arg(long, default_value_t = 5)]
        max_pieces: usize,
        /// Directory of the sector files.
        #[arg(long)]
        out: PathBuf,
        /// Rules preset (flying and the N-move rule are built in; see docs/tablebase.md).
        #[arg(long, value_enum, default_value = "standard")]
        rules: Preset,
        /// Worker threads (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Print the value, the distance and every move's value of a position; a position with
    /// pieces in hand (the start included) is solved by search on the moving-phase tables.
    Probe {
        /// Directory of the sector files.
        #[arg(long)]
        dir: PathBuf,
        /// The start position (the empty board, nine pieces in hand each).
        #[arg(long, conflicts_with_all = ["moves", "white", "black"])]
        start: bool,
        /// The position as the moves leading to it, in notation.
        #[arg(long, conflicts_with_all = ["white", "black"])]
        moves: Option<String>,
        /// White's points, e.g. "a7 d7 g7" (with --black and --to-move).
        #[arg(long, requires = "black")]
        white: Option<String>,
        /// Black's points.
        #[arg(long, requires = "white")]
        black: Option<String>,
        /// The player to move with --white/--black: white or black.
        #[arg(long, default_value = "white")]
        to_move: String,
        /// Pieces in hand with --white/--black: White's, then Black's (e.g. `--in-hand 2 2`).
        #[arg(long, num_args = 2, value_names = ["WHITE", "BLACK"], requires = "white")]
        in_hand: Option<Vec<u8>>,
        /// Plies already on the N-move counter.
        #[arg(long, default_value_t = 0)]
        quiet_plies: u16,
        /// Rules preset.
        #[arg(long, value_enum, default_value = "standard")]
        rules: Preset,
        /// Transposition table of the placement search: 2^N entries of 8 bytes (26 = 512 MiB, at most 30 = 8 GiB).
        #[arg(long, default_value_t = 26, value_parser = clap::value_parser!(u32).range(10..=30))]
        tt_log2: u32,
    },
    /// Solve the opening: the positions after each ply up to --plies (one per symmetry class),
    /// counted by value, and the value of each position after the last ply.
    Openings {
        /// Directory of the sector files (the whole moving phase, 9 pieces a side).
        #[arg(long)]
        dir: PathBuf,
        /// Deepest ply (at most 6; ply 2 has 46 classes and ply 3 has 428, solved in about 4 and
        /// 5 minutes on the full tables; each further ply multiplies the classes by about ten).
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(0..=6))]
        plies: u32,
        /// Rules preset.
        #[arg(long, value_enum, default_value = "standard")]
        rules: Preset,
        /// Transposition table of the placement search: 2^N entries of 8 bytes (26 = 512 MiB, at most 30 = 8 GiB).
        #[arg(long, default_value_t = 26, value_parser = clap::value_parser!(u32).range(10..=30))]
        tt_log2: u32,
        /// Worker threads (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Check the values against the rules: every stored value must follow, by one step of
    /// retrograde analysis, from the stored values its moves lead to (docs/tablebase.md).
    Check {
        /// Directory of the sector files.
        #[arg(long)]
        dir: PathBuf,
        /// Sectors to check, such as `9v9 8v9` (default: every sector in the directory).
        #[arg(long, num_args = 1..)]
        sector: Vec<String>,
        /// Slots drawn at random per sector (default: every slot).
        #[arg(long)]
        sample: Option<u64>,
        /// Seed of the sample.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Worker threads (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Check every sector file's checksum (opening only checks headers and sizes).
    Verify {
        /// Directory of the sector files.
        #[arg(long)]
        dir: PathBuf,
    },
    /// Solve a small board's whole game outright (placement, removals and moves): every
    /// position reachable from the start, valued by retrograde analysis without draw rules
    /// (docs/tablebase.md). Six men's morris takes minutes and a few GB.
    Solve {
        /// Rules preset (its draw rules are set aside: the game-theoretic value).
        #[arg(long, value_enum)]
        rules: Preset,
        /// Flying at 3 pieces on or off, over the preset's (`--flying true` for six men's
        /// morris as the World Merrills Association plays it).
        #[arg(long)]
        flying: Option<bool>,
        /// Most positions to hold (each costs about 100 bytes while solving: the default, a
        /// little above six men's morris's 48 million, needs about 6 GB).
        #[arg(long, default_value_t = 60_000_000)]
        max_positions: usize,
        /// Then check every value against the rules: each must follow from its moves' values
        /// by one step, the moves generated again by the rules (about as long as the solve).
        #[arg(long)]
        check: bool,
        /// Also write the figures as JSON to this file.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Also write a judged-position set (for `eval positions --positions FILE`): positions
        /// drawn uniformly from the reachable ones (`uniform`) and from those with pieces in hand
        /// (`placement`), every turn with its exact value under the preset's rules.
        #[arg(long)]
        judged: Option<PathBuf>,
        /// Positions of each source in the judged set.
        #[arg(long, default_value_t = 500)]
        judged_positions: usize,
        /// Seed of the judged set's draw.
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
}

fn main() -> ExitCode {
    morris::exit_code(run(Cli::parse().command))
}

fn start(rules: Preset, moves: &str) -> Result<Game, String> {
    Game::from_notation(rules.rules(), moves).map_err(|e| format!("bad --moves: {e}"))
}

fn run(command: Command) -> Result<(), String> {
    match command {
        Command::Tablebase { command: TablebaseCommand::Build { max_pieces, out, rules, threads } } => {
            build_tablebase(max_pieces, &out, rules, threads)
        }
        Command::Tablebase {
            command:
                TablebaseCommand::Probe {
                    dir,
                    start: from_start,
                    moves,
                    white,
                    black,
                    to_move,
                    in_hand,
                    quiet_plies,
                    rules,
                    tt_log2,
                },
        } => {
            let game = match (moves, white, black) {
                _ if from_start => Game::new(rules.rules()),
                (Some(moves), _, _) => start(rules, &moves)?,
                (None, Some(white), Some(black)) => {
                    let side = match to_move.as_str() {
                        "white" => Color::White,
                        "black" => Color::Black,
                        other => return Err(format!("--to-move must be white or black, got '{other}'")),
                    };
                    let (mover, opp) = if side == Color::White { (white, black) } else { (black, white) };
                    let mut pos =
                        tablebase::position_from_points(&mover, &opp, side).map_err(|e| e.to_string())?;
                    if let Some(hands) = in_hand {
                        let hands = [hands[0], hands[1]];
                        pos = morris_env::Position::from_parts(
                            pos.pieces(Color::White),
                            pos.pieces(Color::Black),
                            hands,
                            side,
                            false,
                        )
                        .map_err(|e| format!("bad --in-hand {} {}: {e}", hands[0], hands[1]))?;
                    }
                    Game::from_position(rules.rules(), pos.with_counters(0, quiet_plies))
                }
                _ => return Err("give the position with --start, --moves, or --white and --black".into()),
            };
            probe_tablebase(&dir, &game, tt_log2)
        }
        Command::Tablebase {
            command: TablebaseCommand::Openings { dir, plies, rules, tt_log2, threads },
        } => solve_openings(&dir, plies as usize, rules, tt_log2, threads),
        Command::Tablebase { command: TablebaseCommand::Check { dir, sector, sample, seed, threads } } => {
            check_tablebase(&dir, &sector, sample, seed, threads)
        }
        Command::Tablebase {
            command:
                TablebaseCommand::Solve {
                    rules: preset,
                    flying,
                    max_positions,
                    check,
                    json,
                    judged,
                    judged_positions,
                    seed,
                },
        } => {
            let mut rules = preset.rules();
            rules.flying = flying.unwrap_or(rules.flying);
            if judged.is_some() && rules.flying != preset.rules().flying {
                return Err(format!(
                    "--judged writes values under a rules preset, and --flying {} is not preset {}'s",
                    rules.flying,
                    preset.name()
                ));
            }
            let judged = judged.map(|path| (path, preset.name(), judged_positions, seed));
            solve_whole_game(&rules, max_positions, check, json.as_deref(), judged)
        }
        Command::Tablebase { command: TablebaseCommand::Verify { dir } } => {
            let tb = Tablebase::open(&dir).map_err(|e| e.to_string())?;
            let t = Instant::now();
            let bytes = tb.verify().map_err(|e| e.to_string())?;
            println!(
                "{} sectors, {:.1} MiB: every checksum matches ({:.1} s)",
                tb.sector_names().len(),
                bytes as f64 / (1 << 20) as f64,
                t.elapsed().as_secs_f64()
            );
            Ok(())
        }
        Command::Uci { model } => {
            let model = model
                .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("checkpoints").join("shipped"));
            let options = EngineOptions::new(model);
            uci::serve(std::io::stdin().lock(), std::io::stdout(), options)
                .map_err(|e| format!("reading the engine's input: {e}"))
        }
        Command::Perft { depth, moves, rules, divide } => {
            // Depth 8 from the start is about 2·10^9 leaves (seconds); each further ply multiplies
            // that by roughly 20.
            if depth > 9 {
                return Err(format!("--depth {depth} is too deep to finish (at most 9)"));
            }
            let mut game = start(rules, &moves)?;
            // Depth 0 counts the position itself (1), as perft does by convention.
            for d in depth.min(1)..=depth {
                let t = Instant::now();
                let nodes = perft(&mut game, d);
                let secs = t.elapsed().as_secs_f64();
                println!(
                    "depth {d:>2}  nodes {nodes:>14}  time {secs:>8.3} s  {:>8.1} M nodes/s",
                    nodes as f64 / secs.max(1e-9) / 1e6
                );
            }
            if divide && depth > 0 {
                for (a, n) in perft_divide(&mut game, depth) {
                    let m = game.notation(a).unwrap_or_default();
                    println!("{m:>6} ({:>3})  {n}", a.0);
                }
            }
            Ok(())
        }
        Command::Show { moves, rules } => {
            let game = start(rules, &moves)?;
            println!("{}", game.position().display(game.rules()));
            println!("outcome: {}", game.outcome());
            let legal: Vec<String> = game.legal_actions().iter().filter_map(|a| game.notation(a)).collect();
            println!("legal ({}): {}", legal.len(), legal.join(" "));
            Ok(())
        }
        Command::Search { depth, moves, rules, random_plies, seed } => {
            if !(1..=30).contains(&depth) {
                return Err(format!("--depth must be between 1 and 30, got {depth}"));
            }
            let mut game = start(rules, &moves)?;
            game.play_random(&mut Rng::seed_from_u64(seed), random_plies);
            if random_plies > 0 {
                println!("{}\nposition after: {}", game.position().display(game.rules()), game.record());
            }
            if game.outcome().is_terminal() {
                return Err(format!("the game is over: {}", game.outcome()));
            }
            let mut searcher = Minimax::new(MinimaxConfig::depth(depth));
            let t = Instant::now();
            let r = searcher.search(&game);
            let secs = t.elapsed().as_secs_f64();
            let best = r.best.and_then(|a| game.notation(a)).unwrap_or_default();
            println!(
                "depth {}  best {best}  score {}  ties {}  nodes {}  time {secs:.3} s  {:.2} M nodes/s",
                r.depth,
                r.score,
                r.ties,
                r.nodes,
                r.nodes as f64 / secs.max(1e-9) / 1e6
            );
            Ok(())
        }
        Command::Playouts { seconds, rules, seed } => {
            if !(seconds.is_finite() && seconds > 0.0) {
                return Err(format!("--seconds must be a positive number, got {seconds}"));
            }
            let rules = rules.rules();
            let mut rng = Rng::seed_from_u64(seed);
            let mut game = Game::new(rules);
            let (mut steps, mut games) = (0u64, 0u64);
            let t = Instant::now();
            while t.elapsed().as_secs_f64() < seconds {
                for _ in 0..1000 {
                    game.reset();
                    // An empty mask means the game is over (see `Game::outcome` for why).
                    loop {
                        let mask = game.legal_actions();
                        let Some(a) = mask.sample(&mut rng) else { break };
                        game.apply_unchecked(a);
                        steps += 1;
                    }
                    games += 1;
                }
            }
            let secs = t.elapsed().as_secs_f64();
            println!(
                "{games} games, {steps} steps in {secs:.2} s: {:.2} M steps/s, {:.1} plies/game (Game API, one thread)",
                steps as f64 / secs / 1e6,
                steps as f64 / games as f64
            );
            Ok(())
        }
    }
}

/// A rayon pool of `threads` workers (default: one per core).
fn worker_pool(threads: Option<usize>) -> Result<rayon::ThreadPool, String> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.unwrap_or(0))
        .build()
        .map_err(|e| format!("starting the worker threads: {e}"))
}

/// `morris tablebase solve`: the whole game of a small board, its figures printed (and written
/// as JSON with `--json`).
fn solve_whole_game(
    rules: &morris_env::Rules,
    max_positions: usize,
    check: bool,
    json: Option<&Path>,
    judged: Option<(PathBuf, &str, usize, u64)>,
) -> Result<(), String> {
    let solved = tablebase::WholeGame::solve(rules, max_positions).map_err(|e| e.to_string())?;
    let s = solved.summary();
    let pct = |n: u64| 100.0 * n as f64 / s.positions.max(1) as f64;
    let root = match s.root.wdl {
        Wdl::Win => format!("a first-player win in {} actions", s.root.plies),
        Wdl::Loss => format!("a second-player win in {} actions", s.root.plies),
        Wdl::Draw => "a draw".to_string(),
    };
    println!("{} (flying {}): the start is {root}", s.variant, if rules.flying { "on" } else { "off" });
    println!(
        "{} positions reachable ({} ended), {} moves; for the player to move: win {:.2}% draw {:.2}% loss {:.2}%; longest win {} loss {} actions; {:.1} s to enumerate, {:.1} s to solve",
        s.positions,
        s.ended,
        s.moves,
        pct(s.wins),
        pct(s.draws),
        pct(s.losses),
        s.longest_win,
        s.longest_loss,
        s.enumerate_seconds,
        s.solve_seconds
    );
    if check {
        let t = Instant::now();
        let n = solved.check().map_err(|e| e.to_string())?;
        println!(
            "checked: all {n} values follow from their moves' values ({:.1} s)",
            t.elapsed().as_secs_f64()
        );
    }
    if let Some(path) = json {
        write_json(path, s).map_err(|e| e.to_string())?;
    }
    if let Some((path, preset, n, seed)) = judged {
        let t = Instant::now();
        let mut positions = Vec::new();
        for (source, placing) in [("uniform", false), ("placement", true)] {
            let seed = seed.wrapping_add(u64::from(placing));
            positions
                .extend(solved.judged_sample(rules, source, n, seed, placing).map_err(|e| e.to_string())?);
        }
        let set = tablebase::JudgedSet::new(preset, &morris::command_line("morris"), positions)?;
        write_atomic(&path, set.to_jsonl().as_bytes()).map_err(|e| e.to_string())?;
        println!(
            "{} positions judged in {:.1} s, written to {}",
            set.positions.len(),
            t.elapsed().as_secs_f64(),
            path.display()
        );
    }
    Ok(())
}

fn build_tablebase(
    max_pieces: usize,
    out: &Path,
    rules: Preset,
    threads: Option<usize>,
) -> Result<(), String> {
    let pool = worker_pool(threads)?;
    let bar = ProgressBar::hidden();
    let style =
        ProgressStyle::with_template("{msg:>14} [{bar:40}] {percent:>3}% {elapsed_precise} (ETA {eta})")
            .map(|s| s.progress_chars("=> "))
            .unwrap_or_else(|_| ProgressStyle::default_bar());
    let print = |s: &SectorSummary, how: &str| {
        let pct = |n: u64| 100.0 * n as f64 / s.positions.max(1) as f64;
        let line = format!(
            "{:>4} {how}: {} positions, win {:.2}% draw {:.2}% loss {:.2}% (beyond the N-move rule: {} wins, {} losses), longest win {} loss {} plies, {}{}{} bytes",
            s.sector,
            s.positions,
            pct(s.wins),
            pct(s.draws),
            pct(s.losses),
            s.wins_beyond_rule,
            s.losses_beyond_rule,
            s.longest_win,
            s.longest_loss,
            s.seconds.map(|t| format!("{t:.1} s, ")).unwrap_or_default(),
            s.peak_memory_mib.map(|m| format!("peak {m:.0} MiB, ")).unwrap_or_default(),
            s.file_bytes
        );
        bar.suspend(|| println!("{line}"));
    };
    let started = Instant::now();
    let on_event = |e: BuildEvent| match e {
        BuildEvent::Solving { sectors, slots } => {
            bar.set_style(style.clone());
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            bar.set_length(2 * slots);
            bar.set_position(0);
            bar.set_message(sectors.join(" + "));
        }
        BuildEvent::Progress(n) => bar.inc(n),
        BuildEvent::Kept(s) => print(&s, "kept"),
        BuildEvent::Built(s) => print(&s, "built"),
        BuildEvent::SetAside { path, reason } => {
            bar.suspend(|| println!("set aside {} ({reason}); rebuilding it", path.display()))
        }
    };
    let summaries = pool
        .install(|| tablebase::build(out, max_pieces, &rules.rules(), &on_event))
        .map_err(|e| e.to_string())?;
    bar.finish_and_clear();
    let bytes: u64 = summaries.iter().map(|s| s.file_bytes).sum();
    println!(
        "{} sectors in {} ({:.1} MiB) after {:.1} s",
        summaries.len(),
        out.display(),
        bytes as f64 / (1 << 20) as f64,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn probe_tablebase(dir: &Path, game: &Game, tt_log2: u32) -> Result<(), String> {
    let tb = Tablebase::open_shared(dir).map_err(|e| e.to_string())?;
    tb.check_rules(game.rules()).map_err(|e| e.to_string())?;
    let pos = game.position();
    println!("{pos}");
    if game.outcome().is_terminal() {
        return Err(format!("the game is over: {}", game.outcome()));
    }
    if pos.in_hand(Color::White) + pos.in_hand(Color::Black) > 0 {
        return probe_placement(&tb, game, tt_log2);
    }
    let probe = tb.require(pos).map_err(|e| e.to_string())?;
    println!("value for {} to move: {probe} (N-move counter {})", pos.current_player(), pos.quiet_plies());
    for (a, p) in tb.moves(pos).unwrap_or_default() {
        let m = pos.move_of(a).map(|m| m.to_string()).unwrap_or_default();
        println!("  {m:>7}  {p}");
    }
    Ok(())
}

/// A position with pieces in hand: its value and each action's, by the placement search (the
/// actions in parallel on all cores, then the position itself from what they proved).
fn probe_placement(tb: &Tablebase, game: &Game, tt_log2: u32) -> Result<(), String> {
    let pos = game.position();
    let rules = game.rules();
    let solver = Placement::new(tb, rules, tt_log2).map_err(|e| e.to_string())?;
    // Each action's value for the mover: after a placement that closes a mill the mover
    // removes next (the best removal counts), otherwise the opponent moves.
    let me = pos.current_player();
    let actions: Vec<_> = pos.legal_actions(rules).iter().collect();
    let children: Vec<_> = actions
        .iter()
        .map(|&a| {
            let mut child = *pos;
            child.apply_unchecked(a, rules);
            child
        })
        .collect();
    let open: Vec<_> = children.iter().copied().filter(|c| !c.outcome(rules).is_terminal()).collect();
    let t = Instant::now();
    let solved = solver.values(&open).map_err(|e| e.to_string())?;
    let mut solved = solved.into_iter();
    let mut lines = Vec::new();
    for (a, child) in actions.iter().zip(&children) {
        let v = match Wdl::of_outcome(child.outcome(rules), me) {
            Some(v) => v,
            None => {
                let v = solved.next().ok_or("a child without a value")?;
                if child.current_player() == me { v } else { v.flip() }
            }
        };
        lines.push((v, pos.move_of(*a).map(|m| m.to_string()).unwrap_or_default()));
    }
    let value = solver.value(pos).map_err(|e| e.to_string())?;
    let (stats, secs) = (solver.stats(), t.elapsed().as_secs_f64());
    println!(
        "value for {} to move: {value} (placement search: {} positions, {} table probes, {secs:.1} s)",
        pos.current_player(),
        stats.nodes,
        stats.leaves
    );
    lines.sort_by_key(|(v, _)| std::cmp::Reverse(*v));
    if lines.first().map(|l| l.0) != Some(value) {
        return Err(format!(
            "the search is inconsistent: {value} for the position, {:?} for its best move",
            lines.first()
        ));
    }
    for (v, m) in &lines {
        println!("  {m:>7}  {v}");
    }
    Ok(())
}

/// `morris tablebase check`: each sector's values against one step of retrograde from its moves.
fn check_tablebase(
    dir: &Path,
    sectors: &[String],
    sample: Option<u64>,
    seed: u64,
    threads: Option<usize>,
) -> Result<(), String> {
    let pool = worker_pool(threads)?;
    let tb = Tablebase::open_shared(dir).map_err(|e| e.to_string())?;
    let names = if sectors.is_empty() { tb.sector_names() } else { sectors.to_vec() };
    let mut wrong = 0u64;
    for name in &names {
        let parsed = name
            .split_once('v')
            .and_then(|(a, b)| Some((a.parse::<usize>().ok()?, b.parse::<usize>().ok()?)));
        let Some((a, b)) = parsed else {
            return Err(format!("bad --sector {name:?}: expected AvB, such as 9v8"));
        };
        let t = Instant::now();
        let report = pool.install(|| tb.check_sector(a, b, sample, seed)).map_err(|e| e.to_string())?;
        println!(
            "{}: {} positions checked ({} slots in the sector{}), {} mismatches ({:.1} s)",
            report.sector,
            report.checked,
            report.slots,
            if sample.is_some() { ", drawn with replacement" } else { "" },
            report.mismatches,
            t.elapsed().as_secs_f64()
        );
        for m in &report.examples {
            println!(
                "  slot {}: mover {} / opponent {}: stored {}, its moves give {}",
                m.slot, m.mover, m.opponent, m.stored, m.expected
            );
        }
        wrong += report.mismatches;
    }
    if wrong > 0 {
        return Err(format!("{wrong} stored values do not follow from their moves"));
    }
    println!("every checked value follows from its moves");
    Ok(())
}

/// `tablebase openings`: the classes after each ply up to `plies`, counted by value.
fn solve_openings(
    dir: &Path,
    plies: usize,
    rules: Preset,
    tt_log2: u32,
    threads: Option<usize>,
) -> Result<(), String> {
    let pool = worker_pool(threads)?;
    let tb = Tablebase::open_shared(dir).map_err(|e| e.to_string())?;
    let solver = Placement::new(&tb, &rules.rules(), tt_log2).map_err(|e| e.to_string())?;
    let by_ply = solver.openings(plies);
    // The deepest ply first: its values fill the transposition table for the shallower ones.
    let mut values = vec![Vec::new(); by_ply.len()];
    for k in (0..by_ply.len()).rev() {
        let t = Instant::now();
        values[k] = pool.install(|| solver.values(&by_ply[k])).map_err(|e| e.to_string())?;
        let count = |w: Wdl| values[k].iter().filter(|&&v| v == w).count();
        // Positions, as opposed to classes: each class counts its distinct symmetric images.
        let positions = |w: Option<Wdl>| -> usize {
            by_ply[k]
                .iter()
                .zip(&values[k])
                .filter(|&(_, &v)| w.is_none_or(|w| v == w))
                .map(|(p, _)| morris_env::Symmetry::class_size(p))
                .sum()
        };
        println!(
            "ply {k}: {} classes ({} positions), for the player to move {} wins ({}), {} draws ({}), {} losses ({}) ({:.1} s, {} positions searched so far)",
            by_ply[k].len(),
            positions(None),
            count(Wdl::Win),
            positions(Some(Wdl::Win)),
            count(Wdl::Draw),
            positions(Some(Wdl::Draw)),
            count(Wdl::Loss),
            positions(Some(Wdl::Loss)),
            t.elapsed().as_secs_f64(),
            solver.stats().nodes
        );
    }
    if let (Some(last), Some(vals)) = (by_ply.last(), values.last()) {
        println!("the positions after ply {plies} (one per class), value for the player to move:");
        for (pos, v) in last.iter().zip(vals) {
            let white: Vec<String> = pos.pieces(Color::White).iter().map(|p| p.to_string()).collect();
            let black: Vec<String> = pos.pieces(Color::Black).iter().map(|p| p.to_string()).collect();
            println!(
                "  white {:<20} black {:<20} {} to move: {v}",
                white.join(" "),
                black.join(" "),
                pos.current_player()
            );
        }
    }
    Ok(())
}
