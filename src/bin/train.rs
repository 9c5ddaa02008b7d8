//! `train`: AlphaZero-style training runs: self-play and learner in one process by default, or
//! as separate `learn` and `selfplay` processes sharing a run directory.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use morris_train::checkpoint;
use morris_train::config::TrainConfig;
use morris_train::run::{Options, Role, resume_run, selfplay_worker, start_run};

#[derive(Parser)]
#[command(
    name = "train",
    version,
    about = "Train a Nine Men's Morris agent by self-play (AlphaZero-style)",
    long_about = "Train a Nine Men's Morris agent by self-play (AlphaZero-style).\n\n\
        Without a subcommand, self-play and the learner run in one process. For scale-out, run \
        `train learn` once and any number of `train selfplay --run-dir RUN` workers, on one machine \
        or on many sharing a filesystem.",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(flatten)]
    run: RunArgs,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Args, Clone)]
struct RunArgs {
    /// Config file (TOML), e.g. configs/default.toml. Required unless --resume is given.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Override a config value: section.key=value (repeatable), e.g. --set optimizer.learning_rate=0.002.
    #[arg(long = "set", value_name = "SECTION.KEY=VALUE")]
    set: Vec<String>,
    /// Run directory (default: run.output_dir/run.name from the config). Without --config, the
    /// run in DIR continues from its latest checkpoint, or starts from DIR/config.toml if it has none.
    #[arg(long, value_name = "DIR")]
    run_dir: Option<PathBuf>,
    /// Continue a run from its latest checkpoint (a run directory) or from a given checkpoint
    /// directory (RUN/checkpoints/step-N). --set may change the schedule and other values.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["config", "run_dir"])]
    resume: Option<PathBuf>,
    /// Print nothing but errors.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Run only the learner: it reads game shards from RUN/games and publishes models to RUN/models.
    Learn(RunArgs),
    /// Run a self-play worker for an existing run: it plays with the newest model in RUN/models and
    /// writes game shards to RUN/games until the learner finishes.
    Selfplay {
        /// The run directory (created by `train learn` or `train`).
        #[arg(long, value_name = "DIR")]
        run_dir: PathBuf,
        /// This worker's name, used in its shard file names (default: host name and process id).
        #[arg(long)]
        worker: Option<String>,
        /// Stop after this many minutes (default: when the learner finishes).
        #[arg(long)]
        minutes: Option<f64>,
        /// Seconds to wait for the run's config.toml to appear, if the learner has not started yet.
        #[arg(long, default_value_t = 120.0, value_name = "SECONDS")]
        wait: f64,
        /// Print nothing but errors.
        #[arg(long, short)]
        quiet: bool,
    },
}

fn run_role(args: &RunArgs, role: Role) -> Result<(), String> {
    let options = Options { role, quiet: args.quiet };
    if let Some(config) = &args.config {
        let text = read_config(config)?;
        // Checked here first so that a config error names the file.
        TrainConfig::from_toml(&text, &args.set).map_err(|e| format!("{}: {e}", config.display()))?;
        return start_run(&text, &args.set, args.run_dir.clone(), false, &options);
    }
    let dir = args
        .resume
        .as_ref()
        .or(args.run_dir.as_ref())
        .ok_or("pass --config FILE (e.g. configs/default.toml), --resume DIR or --run-dir DIR")?;
    // A run directory without a checkpoint yet (prepared by hand, or stopped before its first
    // checkpoint) starts from its own config.toml; otherwise the run resumes.
    let own = dir.join("config.toml");
    if own.is_file() && checkpoint::list(&dir.join("checkpoints")).is_empty() {
        let text = read_config(&own)?;
        TrainConfig::from_toml(&text, &args.set).map_err(|e| format!("{}: {e}", own.display()))?;
        if !args.quiet {
            eprintln!("{} has no checkpoint yet: starting with its config.toml", dir.display());
        }
        return start_run(&text, &args.set, Some(dir.clone()), true, &options);
    }
    resume_run(dir, &args.set, &options)
}

fn read_config(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read config {}: {e}", path.display()))
}

fn default_worker() -> String {
    let host = std::fs::read_to_string("/etc/hostname").map(|s| s.trim().to_string()).unwrap_or_default();
    let host = if host.is_empty() { "worker".to_string() } else { host };
    format!("{host}-{}", std::process::id())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        None => run_role(&cli.run, Role::Both),
        Some(Command::Learn(args)) => run_role(&args, Role::Learn),
        Some(Command::Selfplay { run_dir, worker, minutes, wait, quiet }) => selfplay_worker(
            &run_dir,
            &worker.unwrap_or_else(default_worker),
            minutes,
            Duration::from_secs_f64(wait.clamp(0.0, 1e9)),
            quiet,
        ),
    };
    morris::exit_code(result)
}
