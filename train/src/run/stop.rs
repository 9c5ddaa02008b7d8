//! A request to stop a run or a worker early, set by a signal handler that the binary installs
//! (SIGINT, SIGTERM): the loop finishes its current step, the learner writes a checkpoint, and
//! the call returns [`TrainError::Interrupted`](crate::TrainError::Interrupted).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Shared between the signal handler and the loop: 0, or the number of the signal that asked
/// to stop.
#[derive(Clone, Debug, Default)]
pub struct StopRequest(Arc<AtomicUsize>);

impl StopRequest {
    /// No stop requested yet.
    pub fn new() -> StopRequest {
        StopRequest::default()
    }

    /// The flag for a signal handler to store the signal number in (signal-safe: an atomic store).
    pub fn flag(&self) -> Arc<AtomicUsize> {
        Arc::clone(&self.0)
    }

    /// Asks to stop, as signal `signal` would.
    pub fn request(&self, signal: i32) {
        self.0.store(signal.max(1) as usize, Ordering::SeqCst);
    }

    /// The signal that asked to stop, if any.
    pub fn signal(&self) -> Option<i32> {
        match self.0.load(Ordering::SeqCst) {
            0 => None,
            s => Some(s as i32),
        }
    }
}

/// The usual name of a signal number (`SIGINT`, `SIGTERM`), for messages.
pub fn signal_name(signal: i32) -> String {
    match signal {
        1 => "SIGHUP".into(),
        2 => "SIGINT".into(),
        15 => "SIGTERM".into(),
        s => format!("signal {s}"),
    }
}
