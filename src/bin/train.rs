//! `train`: AlphaZero-style training runs: self-play and learner in one process by default, or
//! as separate `learn` and `selfplay` processes sharing a run directory.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use morris_eval::judge::train_with_ladder;
use morris_train::run::{StopRequest, WorkerOptions, selfplay_worker};
use morris_train::{Options, Role, TrainError};
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::flag;

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
        /// Device to play on (flex, wgpu, cuda, cuda:N), if not the run's selfplay.device (or
        /// run.device): weights come from the published model files, whatever the learner's device.
        #[arg(long, value_name = "NAME")]
        device: Option<String>,
        /// Print nothing but errors.
        #[arg(long, short)]
        quiet: bool,
    },
}

fn run_role(args: &RunArgs, role: Role, stop: StopRequest) -> Result<(), TrainError> {
    let options = Options { role, quiet: args.quiet, stop };
    // The periodic evaluation against the calibrated ladder lives in morris-eval, above the
    // training crate; it reaches the run as a `Judge`.
    train_with_ladder(
        args.config.as_deref(),
        args.resume.as_deref().or(args.run_dir.as_deref()),
        &args.set,
        &options,
    )
}

/// A worker name no other live process has: the host name and the process id.
fn default_worker() -> String {
    format!("{}-{}", morris_train::store::host_name(), std::process::id())
}

/// SIGINT and SIGTERM ask `stop` to stop (the run finishes its step and saves a checkpoint); a
/// second one exits at once with 128 + the signal number.
fn install_stop_handlers(stop: &StopRequest) -> std::io::Result<()> {
    let armed = Arc::new(AtomicBool::new(false));
    for signal in [SIGINT, SIGTERM] {
        // Registered first, so it sees the flag as the previous signal left it.
        flag::register_conditional_shutdown(signal, 128 + signal, Arc::clone(&armed))?;
        flag::register(signal, Arc::clone(&armed))?;
        flag::register_usize(signal, stop.flag(), signal as usize)?;
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let stop = StopRequest::new();
    if let Err(e) = install_stop_handlers(&stop) {
        eprintln!("error: cannot install the SIGINT/SIGTERM handlers: {e}");
        return ExitCode::FAILURE;
    }
    let result = match cli.command {
        None => run_role(&cli.run, Role::Both, stop),
        Some(Command::Learn(args)) => run_role(&args, Role::Learn, stop),
        Some(Command::Selfplay { run_dir, worker, minutes, wait, device, quiet }) => {
            let options = WorkerOptions {
                name: worker.unwrap_or_else(default_worker),
                minutes,
                wait: Duration::from_secs_f64(wait.clamp(0.0, 1e9)),
                device,
                quiet,
                stop,
            };
            selfplay_worker(&run_dir, &options)
        }
    };
    // A stop by signal exits with the shell's convention, 128 + the signal number.
    if let Err(e @ TrainError::Interrupted { signal, .. }) = &result {
        eprintln!("{e}");
        return ExitCode::from((128 + signal).clamp(0, 255) as u8);
    }
    morris::exit_code(result)
}
