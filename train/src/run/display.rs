//! Progress output of a run: an indicatif bar on a terminal, plain lines every few seconds
//! otherwise, nothing when quiet.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// Seconds between plain progress lines when stderr is not a terminal.
const PLAIN_INTERVAL: Duration = Duration::from_secs(5);

/// Progress output: an indicatif bar on a terminal, plain lines otherwise.
pub(crate) struct Display {
    bar: Option<ProgressBar>,
    plain: bool,
    last_plain: Option<Instant>,
}

impl Display {
    /// A display for a run of `total_steps` (a spinner if unlimited) starting at `start_step`.
    pub(crate) fn new(total_steps: Option<u64>, start_step: u64, quiet: bool) -> Display {
        if quiet {
            return Display { bar: None, plain: false, last_plain: None };
        }
        if !std::io::stderr().is_terminal() {
            return Display { bar: None, plain: true, last_plain: None };
        }
        let bar = match total_steps {
            Some(n) => ProgressBar::new(n),
            None => ProgressBar::new_spinner(),
        };
        let template = if total_steps.is_some() {
            "{elapsed_precise} [{bar:30}] step {pos}/{len} {msg}"
        } else {
            "{elapsed_precise} {spinner} step {pos} {msg}"
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_position(start_step);
        Display { bar: Some(bar), plain: false, last_plain: None }
    }

    /// Shows the step and a status message (plain output is rate-limited).
    pub(crate) fn update(&mut self, step: u64, msg: &str) {
        if let Some(bar) = &self.bar {
            bar.set_position(step);
            bar.set_message(msg.to_string());
        } else if self.plain && self.last_plain.is_none_or(|t| t.elapsed() >= PLAIN_INTERVAL) {
            self.last_plain = Some(Instant::now());
            eprintln!("step {step} {msg}");
        }
    }

    /// A line that must be seen (checkpoints, evaluations, warnings).
    pub(crate) fn line(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None if self.plain => eprintln!("{text}"),
            None => {}
        }
    }

    /// Prints a warning, even when quiet.
    pub(crate) fn warn(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None => eprintln!("{text}"),
        }
    }

    /// Removes the bar.
    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
