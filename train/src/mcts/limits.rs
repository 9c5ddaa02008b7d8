//! When a search stops: a simulation budget, a wall-clock deadline, and an external stop flag.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// The limits of one search call. The search stops at whichever comes first; it always runs
/// at least one simulation when the root has a move, so a late call still has an answer.
///
/// The deadline and the flag are checked between waves (one network call each), so a search
/// overruns its deadline by at most one wave: one batched evaluation plus its selections and
/// backups (about 40–80 µs at batch 1 with the default network on the CPU).
#[derive(Clone, Copy, Debug)]
pub struct Limits<'a> {
    /// Most simulations to run.
    pub simulations: u32,
    /// Stop once this instant has passed.
    pub deadline: Option<Instant>,
    /// Stop once this flag is set (by another thread: a UCI `stop`, say).
    pub stop: Option<&'a AtomicBool>,
}

impl Limits<'_> {
    /// Just a simulation budget: a deterministic search.
    pub fn simulations(simulations: u32) -> Limits<'static> {
        Limits { simulations, deadline: None, stop: None }
    }

    /// Whether the clock or the flag says stop (the simulation count is checked by the caller).
    pub fn interrupted(&self) -> bool {
        self.stop.is_some_and(|s| s.load(Ordering::Relaxed))
            || self.deadline.is_some_and(|d| Instant::now() >= d)
    }
}
