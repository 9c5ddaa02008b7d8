//! File helpers shared by every writer in the project: atomic replacement and append-only logs.

use std::fs::{self, File, OpenOptions};
use std::path::Path;

/// Creates the parent directory of `path`, if it has one.
fn create_parent(path: &Path) -> Result<(), String> {
    match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display())),
        None => Ok(()),
    }
}

/// Writes `bytes` to `path` through a temporary sibling and a rename (creating the parent
/// directory), so a crash leaves the old file or the new one, never half of one.
///
/// # Errors
/// If a directory or file cannot be created, written or renamed (the message names it).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    create_parent(path)?;
    let tmp = path.with_extension("tmp-write");
    fs::write(&tmp, bytes).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    fs::rename(&tmp, path).map_err(|e| format!("cannot move {} to {}: {e}", tmp.display(), path.display()))
}

/// Opens `path` for appending, creating it and its parent directory if needed; existing content
/// is never touched.
///
/// # Errors
/// If the directory or the file cannot be created or opened (the message names it).
pub fn open_append(path: &Path) -> Result<File, String> {
    create_parent(path)?;
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| format!("cannot open {} for appending: {e}", path.display()))
}

/// Builds the directory `dest` atomically: `fill` writes its contents into a temporary sibling
/// (`.tmp-NAME-PID`), which is then renamed to `dest`. An existing `dest` is replaced only once the
/// new one is complete (it is moved aside, the new one moved in, the old one deleted), so a crash
/// leaves the old directory or the new one, plus at most a `.tmp-*` or `.old-*` leftover.
///
/// # Errors
/// What `fill` returns, or a directory that cannot be created or renamed (the message names it).
pub fn write_dir_atomic(dest: &Path, fill: impl FnOnce(&Path) -> Result<(), String>) -> Result<(), String> {
    let name = dest.file_name().map_or_else(|| "dir".into(), |n| n.to_string_lossy().into_owned());
    let sibling = |prefix: &str| dest.with_file_name(format!(".{prefix}-{name}-{}", std::process::id()));
    let (tmp, old) = (sibling("tmp"), sibling("old"));
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(&tmp).map_err(|e| format!("cannot create {}: {e}", tmp.display()))?;
    fill(&tmp)?;
    let replacing = dest.exists();
    if replacing {
        fs::rename(dest, &old).map_err(|e| format!("cannot move {} aside: {e}", dest.display()))?;
    }
    fs::rename(&tmp, dest)
        .map_err(|e| format!("cannot move {} to {}: {e}", tmp.display(), dest.display()))?;
    if replacing {
        let _ = fs::remove_dir_all(&old);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn atomic_writes_replace_and_appends_keep() {
        let dir = std::env::temp_dir().join(format!("morris-files-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let path = dir.join("sub/a.txt");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        assert!(!path.with_extension("tmp-write").exists());
        let log = dir.join("log/x.jsonl");
        open_append(&log).unwrap().write_all(b"1\n").unwrap();
        open_append(&log).unwrap().write_all(b"2\n").unwrap();
        assert_eq!(fs::read_to_string(&log).unwrap(), "1\n2\n");
        let _ = fs::remove_dir_all(&dir);
    }
}
