//! Atomic file and directory writes and append-only opens: every writer in the lab goes through
//! these, so a crash leaves the old version or the new one, never half of one.

use std::fs::{self, File, OpenOptions};
use std::path::Path;

use crate::error::{Result, TrainError};

/// Creates the parent directory of `path`, if it has one.
fn create_parent(path: &Path) -> Result<()> {
    match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => fs::create_dir_all(dir).map_err(|e| TrainError::io("create", dir, e)),
        None => Ok(()),
    }
}

/// Writes `bytes` to `path` through a temporary sibling and a rename (creating the parent
/// directory), so a crash leaves the old file or the new one, never half of one.
///
/// # Errors
/// [`TrainError::Io`] naming the directory or file that cannot be created, written or renamed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    create_parent(path)?;
    let tmp = path.with_extension("tmp-write");
    // On failure (a full disk, a directory in the way) the temporary file goes too.
    let result = fs::write(&tmp, bytes)
        .map_err(|e| TrainError::io("write", &tmp, e))
        .and_then(|()| fs::rename(&tmp, path).map_err(|e| TrainError::io("move into place", path, e)));
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Opens `path` for appending, creating it and its parent directory if needed; existing content
/// is never touched.
///
/// # Errors
/// [`TrainError::Io`] if the directory or the file cannot be created or opened.
pub fn open_append(path: &Path) -> Result<File> {
    create_parent(path)?;
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| TrainError::io("open for appending", path, e))
}

/// Builds the directory `dest` atomically: `fill` writes its contents into a temporary sibling
/// (`.tmp-NAME-PID`), which is then renamed to `dest`. An existing `dest` is replaced only once the
/// new one is complete (it is moved aside, the new one moved in, the old one deleted), so a crash
/// leaves the old directory or the new one, plus at most a `.tmp-*` or `.old-*` leftover.
///
/// # Errors
/// What `fill` returns, or [`TrainError::Io`] for a directory that cannot be created or renamed.
pub fn write_dir_atomic(dest: &Path, fill: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let name = dest.file_name().map_or_else(|| "dir".into(), |n| n.to_string_lossy().into_owned());
    let sibling = |prefix: &str| dest.with_file_name(format!(".{prefix}-{name}-{}", std::process::id()));
    let (tmp, old) = (sibling("tmp"), sibling("old"));
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(&tmp).map_err(|e| TrainError::io("create", &tmp, e))?;
    fill(&tmp)?;
    let replacing = dest.exists();
    if replacing {
        fs::rename(dest, &old).map_err(|e| TrainError::io("move aside", dest, e))?;
    }
    fs::rename(&tmp, dest).map_err(|e| TrainError::io("move into place", dest, e))?;
    if replacing {
        let _ = fs::remove_dir_all(&old);
    }
    Ok(())
}

/// Reads a whole text file.
///
/// # Errors
/// [`TrainError::Io`] naming the file.
pub fn read_text(path: &Path) -> Result<String> {
    fs::read_to_string(path).map_err(|e| TrainError::io("read", path, e))
}

/// Writes `value` as pretty JSON (with a final newline) to `path`, atomically.
///
/// # Errors
/// [`TrainError::Io`] if the file cannot be written.
pub fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<()> {
    // Serialising the lab's own plain structs cannot fail; if it ever did, say which file.
    let json = serde_json::to_string_pretty(value)
        .map_err(|e| TrainError::Internal(format!("cannot serialise {}: {e}", path.display())))?;
    write_atomic(path, (json + "\n").as_bytes())
}

/// Reads `path` as JSON of type `T`; `what` names the kind of file in the error.
///
/// # Errors
/// [`TrainError::Io`] if it cannot be read, [`TrainError::Corrupt`] if it does not parse.
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path, what: &'static str) -> Result<T> {
    let text = read_text(path)?;
    serde_json::from_str(&text).map_err(|e| TrainError::corrupt(what, path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn atomic_writes_replace_and_appends_keep() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/a.txt");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        assert!(!path.with_extension("tmp-write").exists());
        // A directory in the way: an error naming it, and no temporary file left behind.
        let taken = dir.path().join("taken");
        fs::create_dir(&taken).unwrap();
        let e = write_atomic(&taken, b"x").unwrap_err();
        assert!(matches!(&e, TrainError::Io { path, .. } if path == &taken), "{e}");
        assert!(!taken.with_extension("tmp-write").exists());
        let log = dir.path().join("log/x.jsonl");
        open_append(&log).unwrap().write_all(b"1\n").unwrap();
        open_append(&log).unwrap().write_all(b"2\n").unwrap();
        assert_eq!(fs::read_to_string(&log).unwrap(), "1\n2\n");
    }

    #[test]
    fn a_failed_fill_leaves_the_old_directory() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("d");
        write_dir_atomic(&dest, |t| write_atomic(&t.join("f"), b"old")).unwrap();
        let err = write_dir_atomic(&dest, |_| Err(TrainError::Internal("stop".into()))).unwrap_err();
        assert!(matches!(err, TrainError::Internal(_)));
        assert_eq!(fs::read(dest.join("f")).unwrap(), b"old");
    }

    #[test]
    fn unreadable_and_corrupt_json_are_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        let missing = read_json::<u32>(&dir.path().join("none.json"), "test file").unwrap_err();
        assert!(matches!(missing, TrainError::Io { .. }));
        write_atomic(&dir.path().join("bad.json"), b"{").unwrap();
        let bad = read_json::<u32>(&dir.path().join("bad.json"), "test file").unwrap_err();
        assert!(matches!(bad, TrainError::Corrupt { what: "test file", .. }));
    }
}
