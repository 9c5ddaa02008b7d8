//! `manifest.json`: the SHA-256 of every file of a model directory, checkpoint or published
//! model, written last inside the directory's atomic rename and checked before anything in it is
//! trusted.
//!
//! A directory without a manifest (written before checksums existed) still loads; it is then
//! reported as unverified.

use std::fs;
use std::io::Read;
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::files::{read_json, write_json};
use crate::error::{Result, TrainError};

/// File name of the manifest inside a directory.
pub const MANIFEST_FILE: &str = "manifest.json";
/// Version of the manifest format.
pub const MANIFEST_VERSION: u32 = 1;

/// The manifest: each file's name and SHA-256 (lower-case hex), in the order written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Format version ([`MANIFEST_VERSION`]).
    pub version: u32,
    /// `(file name, sha256 hex)`.
    pub files: Vec<(String, String)>,
}

/// Whether a directory's files were checked against a manifest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verification {
    /// Every file the manifest lists has its recorded checksum.
    Verified,
    /// There is no manifest (a directory written before checksums): nothing was checked.
    Unverified,
}

/// The SHA-256 of the file at `path`, as lower-case hex.
///
/// # Errors
/// [`TrainError::Io`] if the file cannot be read.
pub fn sha256_file(path: &Path) -> Result<String> {
    let mut file = fs::File::open(path).map_err(|e| TrainError::io("read", path, e))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf).map_err(|e| TrainError::io("read", path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// The SHA-256 of `bytes`, as lower-case hex (as [`sha256_file`] gives it for a file).
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Hashes `files` (names inside `dir`) and writes `dir/manifest.json`; call it after the last of
/// them is written.
///
/// # Errors
/// [`TrainError::Io`] if a file cannot be read or the manifest cannot be written.
pub fn write_manifest(dir: &Path, files: &[&str]) -> Result<()> {
    let files = files
        .iter()
        .map(|name| Ok((name.to_string(), sha256_file(&dir.join(name))?)))
        .collect::<Result<Vec<_>>>()?;
    write_json(&dir.join(MANIFEST_FILE), &Manifest { version: MANIFEST_VERSION, files })
}

/// Checks every file listed in `dir/manifest.json` against its checksum.
///
/// # Errors
/// [`TrainError::Corrupt`] naming the first file whose content changed (or a malformed
/// manifest), [`TrainError::Io`] for a listed file that is missing or unreadable,
/// [`TrainError::Incompatible`] for another manifest version.
pub fn verify(dir: &Path) -> Result<Verification> {
    let path = dir.join(MANIFEST_FILE);
    if !path.is_file() {
        return Ok(Verification::Unverified);
    }
    let manifest: Manifest = read_json(&path, "manifest")?;
    if manifest.version != MANIFEST_VERSION {
        return Err(TrainError::incompatible(
            &path,
            format!(
                "manifest version {} is not supported (this build reads {MANIFEST_VERSION})",
                manifest.version
            ),
        ));
    }
    if manifest.files.is_empty() {
        // Nothing checked is not a verification: a manifest replaced by an empty one would
        // otherwise pass any files off as verified.
        return Err(TrainError::corrupt("manifest", &path, "it lists no file"));
    }
    for (name, expected) in &manifest.files {
        if name.contains('/') || name.contains("..") {
            return Err(TrainError::corrupt("manifest", &path, format!("'{name}' is not a file name")));
        }
        let file = dir.join(name);
        if sha256_file(&file)? != *expected {
            return Err(TrainError::corrupt(
                "file",
                &file,
                format!("its SHA-256 does not match {MANIFEST_FILE}: the file changed after it was written"),
            ));
        }
    }
    Ok(Verification::Verified)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flipped_bit_is_named_and_a_directory_without_manifest_is_unverified() {
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path();
        fs::write(dir.join("a.bin"), [7u8; 1000]).unwrap();
        fs::write(dir.join("b.txt"), "hello").unwrap();
        assert_eq!(verify(dir).unwrap(), Verification::Unverified);
        write_manifest(dir, &["a.bin", "b.txt"]).unwrap();
        assert_eq!(verify(dir).unwrap(), Verification::Verified);
        // The SHA-256 of "hello" is well known.
        let m: Manifest = read_json(&dir.join(MANIFEST_FILE), "manifest").unwrap();
        assert_eq!(m.files[1].1, "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
        let mut bytes = fs::read(dir.join("a.bin")).unwrap();
        bytes[500] ^= 0x10;
        fs::write(dir.join("a.bin"), &bytes).unwrap();
        match verify(dir).unwrap_err() {
            TrainError::Corrupt { path, .. } => assert_eq!(path, dir.join("a.bin")),
            other => panic!("{other}"),
        }
        fs::remove_file(dir.join("a.bin")).unwrap();
        assert!(matches!(verify(dir), Err(TrainError::Io { .. })));
        fs::write(dir.join(MANIFEST_FILE), "{").unwrap();
        assert!(matches!(verify(dir), Err(TrainError::Corrupt { .. })));
        // A manifest that lists nothing verifies nothing: refused, not "verified".
        fs::write(dir.join(MANIFEST_FILE), r#"{"version":1,"files":[]}"#).unwrap();
        match verify(dir).unwrap_err() {
            TrainError::Corrupt { path, .. } => assert_eq!(path, dir.join(MANIFEST_FILE)),
            other => panic!("{other}"),
        }
    }
}
