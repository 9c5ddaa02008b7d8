//! The sector file: a 64-byte header (magic, version, piece counts, rules, slot count,
//! CRC-32C of the data) and one little-endian `u16` per slot, written atomically.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::TablebaseError;

const MAGIC: &[u8; 8] = b"MORRISTB";
const VERSION: u32 = 1;
const HEADER: usize = 64;

/// The header of a sector file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    pub(crate) mover: u8,
    pub(crate) opponent: u8,
    pub(crate) flying: bool,
    pub(crate) n_move_rule: Option<u32>,
    pub(crate) slots: u64,
}

/// `DIR/sector-AvB.tb`.
pub(crate) fn sector_path(dir: &Path, mover: usize, opponent: usize) -> PathBuf {
    dir.join(format!("sector-{mover}v{opponent}.tb"))
}

/// Writes the values through a temporary file that is synced and renamed over the target,
/// so a kill leaves either the old file, the new one, or a `.tmp` that the next build removes.
pub(crate) fn write(path: &Path, header: Header, values: &[u16]) -> Result<u64, TablebaseError> {
    let mut data = Vec::with_capacity(values.len() * 2);
    for v in values {
        data.extend_from_slice(&v.to_le_bytes());
    }
    let mut head = [0u8; HEADER];
    head[..8].copy_from_slice(MAGIC);
    head[8..12].copy_from_slice(&VERSION.to_le_bytes());
    head[12] = header.mover;
    head[13] = header.opponent;
    head[14] = header.flying as u8;
    head[16..20].copy_from_slice(&header.n_move_rule.unwrap_or(0).to_le_bytes());
    head[20..28].copy_from_slice(&header.slots.to_le_bytes());
    head[28..32].copy_from_slice(&crc32c::crc32c(&data).to_le_bytes());
    let tmp = path.with_extension("tb.tmp");
    let io = |e| TablebaseError::io(&tmp, e);
    let mut f = fs::File::create(&tmp).map_err(io)?;
    f.write_all(&head).map_err(io)?;
    f.write_all(&data).map_err(io)?;
    f.sync_all().map_err(io)?;
    drop(f);
    fs::rename(&tmp, path).map_err(|e| TablebaseError::io(path, e))?;
    if let Some(dir) = path.parent()
        && let Ok(d) = fs::File::open(dir)
    {
        // Makes the rename durable; failing to sync a directory is not an error on every system.
        let _ = d.sync_all();
    }
    Ok((HEADER + data.len()) as u64)
}

/// Reads and verifies a sector file: magic, version, size and checksum.
pub(crate) fn read(path: &Path) -> Result<(Header, Vec<u16>), TablebaseError> {
    let bytes = fs::read(path).map_err(|e| TablebaseError::io(path, e))?;
    let corrupt = |reason: String| TablebaseError::Corrupt { path: path.to_path_buf(), reason };
    if bytes.len() < HEADER || &bytes[..8] != MAGIC {
        return Err(corrupt("not a morris tablebase sector".into()));
    }
    let u32_at = |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    let version = u32_at(8);
    if version != VERSION {
        return Err(corrupt(format!("format version {version}, expected {VERSION}")));
    }
    let mut slots = [0u8; 8];
    slots.copy_from_slice(&bytes[20..28]);
    let slots = u64::from_le_bytes(slots);
    let n = u32_at(16);
    let header = Header {
        mover: bytes[12],
        opponent: bytes[13],
        flying: bytes[14] != 0,
        n_move_rule: (n != 0).then_some(n),
        slots,
    };
    let data = &bytes[HEADER..];
    if data.len() as u64 != slots * 2 {
        return Err(corrupt(format!("{} data bytes for {slots} slots", data.len())));
    }
    if crc32c::crc32c(data) != u32_at(28) {
        return Err(corrupt("checksum mismatch".into()));
    }
    let values = data.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
    Ok((header, values))
}
