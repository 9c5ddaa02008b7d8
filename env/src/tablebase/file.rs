//! The sector file: a 64-byte header (magic, version, piece counts, rules, slot count,
//! CRC-32C of the data) and one little-endian `u16` per slot, written atomically.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::TablebaseError;

const MAGIC: &[u8; 8] = b"MORRISTB";
const VERSION: u32 = 1;
pub(crate) const HEADER: usize = 64;

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

/// Checks a sector file's header against its length: magic, version and size. Returns the
/// header and the stored checksum of the data.
fn parse_header(path: &Path, bytes: &[u8], len: u64) -> Result<(Header, u32), TablebaseError> {
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
    let data = len - HEADER as u64;
    if data != slots.saturating_mul(2) {
        return Err(corrupt(format!("{data} data bytes for {slots} slots")));
    }
    Ok((header, u32_at(28)))
}

/// Reads and verifies a sector file: magic, version, size and checksum.
pub(crate) fn read(path: &Path) -> Result<(Header, Vec<u16>), TablebaseError> {
    let bytes = fs::read(path).map_err(|e| TablebaseError::io(path, e))?;
    let (header, crc) = parse_header(path, &bytes, bytes.len() as u64)?;
    let data = &bytes[HEADER..];
    check_crc(path, data, crc)?;
    let values = data.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
    Ok((header, values))
}

/// A sector file mapped into memory: the header is checked when it is opened and the values
/// are read in place, so only the pages a prober touches are read from disk, and processes
/// that open the same file share one copy in the page cache.
pub(crate) struct Mapped {
    map: memmap2::Mmap,
    header: Header,
    crc: u32,
    path: PathBuf,
}

impl Mapped {
    /// Maps `path` and checks its header and size (not its checksum: see [`Mapped::verify`]).
    pub(crate) fn open(path: &Path) -> Result<Mapped, TablebaseError> {
        let file = fs::File::open(path).map_err(|e| TablebaseError::io(path, e))?;
        let len = file.metadata().map_err(|e| TablebaseError::io(path, e))?.len();
        if len < HEADER as u64 {
            return Err(TablebaseError::Corrupt {
                path: path.to_path_buf(),
                reason: format!("{len} bytes, shorter than the header"),
            });
        }
        // SAFETY: a mapping is undefined behaviour if the file changes underneath it. The lab
        // never writes a sector file in place: the builder writes `sector-AvB.tb.tmp`, syncs it
        // and renames it over the old name, which leaves a mapped file's inode untouched, and a
        // damaged file is renamed aside, not rewritten. A table directory must not be edited
        // by other programs while a process has it open (docs/tablebase.md says so).
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| TablebaseError::io(path, e))?;
        // The mapping's own length, not the metadata's: a file cut short in between is an error.
        let head = map.get(..HEADER).ok_or_else(|| TablebaseError::Corrupt {
            path: path.to_path_buf(),
            reason: format!("{} bytes, shorter than the header", map.len()),
        })?;
        let (header, crc) = parse_header(path, head, map.len() as u64)?;
        #[cfg(unix)]
        {
            // Probes jump around the file: read-ahead would only waste the page cache.
            let _ = map.advise(memmap2::Advice::Random);
        }
        Ok(Mapped { map, header, crc, path: path.to_path_buf() })
    }

    /// The header.
    pub(crate) fn header(&self) -> Header {
        self.header
    }

    /// The number of slots.
    pub(crate) fn len(&self) -> usize {
        self.header.slots as usize
    }

    /// The stored value of slot `i` (below [`Mapped::len`]).
    #[inline]
    pub(crate) fn get(&self, i: usize) -> u16 {
        let o = HEADER + 2 * i;
        u16::from_le_bytes([self.map[o], self.map[o + 1]])
    }

    /// Every stored value, in slot order.
    #[cfg(test)]
    pub(crate) fn values(&self) -> Vec<u16> {
        (0..self.len()).map(|i| self.get(i)).collect()
    }

    /// Reads the whole file and checks its checksum.
    pub(crate) fn verify(&self) -> Result<(), TablebaseError> {
        check_crc(&self.path, &self.map[HEADER..], self.crc)
    }
}

/// Fails with [`TablebaseError::Corrupt`] unless `data`'s CRC-32C is `crc`.
fn check_crc(path: &Path, data: &[u8], crc: u32) -> Result<(), TablebaseError> {
    if crc32c::crc32c(data) != crc {
        return Err(TablebaseError::Corrupt { path: path.to_path_buf(), reason: "checksum mismatch".into() });
    }
    Ok(())
}
