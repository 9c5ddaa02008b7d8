//! One writer per role: an exclusive OS lock on the run directory for the learner and one per
//! self-play worker name, held for the life of the process and released by the kernel when it
//! ends (also on a kill), so a dead holder never blocks a restart.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{Result, TrainError};

/// A held role lock. The lock file stays (it names the last holder); the lock itself ends when
/// this value is dropped or the process exits.
#[derive(Debug)]
pub struct RoleLock {
    /// Keeps the OS lock.
    _file: File,
    path: PathBuf,
}

impl RoleLock {
    /// Takes the exclusive lock of `path` for `role` (e.g. `learner`, `self-play worker 'w1'`)
    /// without waiting, and writes who holds it (role, pid, host) into the file. `hint` ends the
    /// error message if the lock is taken (what to do instead).
    ///
    /// # Errors
    /// [`TrainError::Locked`] naming the holder if another process holds it; [`TrainError::Io`]
    /// if the file cannot be created or locked.
    pub fn acquire(path: &Path, role: &str, hint: &str) -> Result<RoleLock> {
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|e| TrainError::io("create", parent, e))?;
        }
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| TrainError::io("open", path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                let holder =
                    if holder.is_empty() { "another process".to_string() } else { holder.to_string() };
                return Err(TrainError::Locked {
                    path: path.to_path_buf(),
                    role: role.to_string(),
                    holder,
                    hint: hint.to_string(),
                });
            }
            Err(TryLockError::Error(e)) => return Err(TrainError::io("lock", path, e)),
        }
        let me = format!("{role}, pid {} on host {}\n", std::process::id(), host_name());
        file.set_len(0)
            .and_then(|()| file.seek(SeekFrom::Start(0)))
            .and_then(|_| file.write_all(me.as_bytes()))
            .map_err(|e| TrainError::io("write", path, e))?;
        Ok(RoleLock { _file: file, path: path.to_path_buf() })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// This machine's host name (`/proc/sys/kernel/hostname`, then `$HOSTNAME`), or `unknown host`.
pub fn host_name() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown host".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_with_the_first_named_until_it_lets_go() {
        let scratch = tempfile::tempdir().unwrap();
        let path = scratch.path().join("locks/learner.lock");
        let first = RoleLock::acquire(&path, "learner", "stop it first").unwrap();
        let err = RoleLock::acquire(&path, "learner", "stop it first").unwrap_err();
        match &err {
            TrainError::Locked { path: p, holder, .. } => {
                assert_eq!(p, &path);
                assert!(holder.contains(&format!("pid {}", std::process::id())), "{holder}");
            }
            other => panic!("{other}"),
        }
        assert!(err.to_string().contains("learner.lock"), "{err}");
        drop(first);
        let again = RoleLock::acquire(&path, "learner", "stop it first").unwrap();
        assert_eq!(again.path(), path);
        // Another role's lock is independent.
        RoleLock::acquire(&scratch.path().join("locks/worker-w1.lock"), "worker w1", "").unwrap();
    }
}
