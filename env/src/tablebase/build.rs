//! The builder: every sector pair up to a size, in dependency order (fewest pieces first),
//! resumable (sectors already on disk are verified and kept), with a summary per sector.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::TablebaseError;
use super::entry::{DIST, LOSS, WIN};
use super::file::{self, Header, sector_path};
use super::index::Indexer;
use super::solve::{Pair, solve};
use crate::rules::Rules;

/// What the builder reports while it works.
#[derive(Clone, Debug)]
pub enum BuildEvent {
    /// A pair of sectors is being solved: their names and their slots in all.
    Solving {
        /// Sector names, such as `"5v4"` and `"4v5"`.
        sectors: Vec<String>,
        /// Slots to visit in the forward pass.
        slots: u64,
    },
    /// Work done since the last report, in slots or layer entries.
    Progress(u64),
    /// A sector found on disk and verified (not rebuilt).
    Kept(SectorSummary),
    /// A sector solved and written.
    Built(SectorSummary),
    /// A damaged sector file was renamed aside (never deleted) and will be rebuilt.
    SetAside {
        /// The damaged file's new name.
        path: PathBuf,
        /// Why it was rejected.
        reason: String,
    },
}

/// Counts and costs of one sector. Positions are counted once per class under the 16
/// symmetries; the mover is the player to move.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SectorSummary {
    /// `"AvB"`: the mover has A pieces, the opponent B.
    pub sector: String,
    /// Position classes (slots in use).
    pub positions: u64,
    /// Won for the mover within the N-move rule.
    pub wins: u64,
    /// Won without the N-move rule but not within it (counted as draws by probes from a fresh counter).
    pub wins_beyond_rule: u64,
    /// Drawn.
    pub draws: u64,
    /// Lost for the mover within the N-move rule.
    pub losses: u64,
    /// Lost without the N-move rule, but the loser reaches the rule's draw.
    pub losses_beyond_rule: u64,
    /// The longest win, in plies to the next removal or the end.
    pub longest_win: u32,
    /// The longest loss, in plies.
    pub longest_loss: u32,
    /// Seconds to solve the pair this sector belongs to (`None` when only verified on disk
    /// and no summary file was found).
    pub seconds: Option<f64>,
    /// Peak resident memory of the builder while solving the pair, in MiB (Linux only).
    pub peak_memory_mib: Option<f64>,
    /// Size of the sector file in bytes.
    pub file_bytes: u64,
}

/// Sector pairs up to `max_side` pieces a side in the order they depend on each other.
pub(crate) fn pairs(max_side: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for total in 6..=2 * max_side {
        for a in (3..=max_side).rev() {
            let b = total as isize - a as isize;
            if b >= 3 && b as usize <= a {
                out.push((a, b as usize));
            }
        }
    }
    out
}

/// Builds (or completes) the tablebase in `dir` for sectors of up to `max_side` pieces a side
/// under `rules` (only flying and the N-move rule matter; see the module docs).
///
/// Sectors already in `dir` that verify are kept; damaged ones are renamed
/// `sector-AvB.tb.corrupt-N` and rebuilt; leftover `.tmp` files of a killed build are removed.
///
/// # Errors
/// A size out of range, a variant other than nine, a file that cannot be written, or files
/// built under other rules.
pub fn build(
    dir: &Path,
    max_side: usize,
    rules: &Rules,
    on_event: &(dyn Fn(BuildEvent) + Sync),
) -> Result<Vec<SectorSummary>, TablebaseError> {
    if !(3..=super::index::MAX_SIDE).contains(&max_side) {
        return Err(TablebaseError::MaxPieces(max_side));
    }
    if !rules.variant.is_nine() {
        return Err(TablebaseError::Variant { path: dir.to_path_buf(), variant: rules.variant });
    }
    fs::create_dir_all(dir).map_err(|e| TablebaseError::io(dir, e))?;
    for entry in fs::read_dir(dir).map_err(|e| TablebaseError::io(dir, e))?.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "tmp") {
            fs::remove_file(&path).map_err(|e| TablebaseError::io(&path, e))?;
        }
    }
    let ix = Indexer::new(max_side);
    let n_move_rule = rules.n_move_rule;
    let mut solved: Vec<Vec<Option<Vec<u16>>>> = vec![vec![None; max_side + 1]; max_side + 1];
    let mut summaries = Vec::new();
    for (a, b) in pairs(max_side) {
        // Removals from this pair lead one piece down; sectors further down are no longer
        // needed (pairs come in order of total pieces), so memory holds two layers at most.
        for (m, row) in solved.iter_mut().enumerate() {
            for (o, sector) in row.iter_mut().enumerate() {
                if m + o + 1 < a + b {
                    *sector = None;
                }
            }
        }
        let sectors: Vec<(usize, usize)> = if a == b { vec![(a, b)] } else { vec![(a, b), (b, a)] };
        // Keep the pair if every sector of it verifies.
        let mut kept = Vec::new();
        for &(m, o) in &sectors {
            let path = sector_path(dir, m, o);
            if !path.exists() {
                break;
            }
            match file::read(&path) {
                Ok((h, values)) => {
                    if h.flying != rules.flying || h.n_move_rule != n_move_rule {
                        return Err(TablebaseError::RulesMismatch {
                            path,
                            flying: h.flying,
                            n_move_rule: h.n_move_rule,
                            want_flying: rules.flying,
                            want_n_move_rule: n_move_rule,
                        });
                    }
                    if values.len() != ix.len(m, o) {
                        set_aside(&path, "wrong number of slots", on_event)?;
                        break;
                    }
                    kept.push(((m, o), values));
                }
                Err(TablebaseError::Corrupt { reason, .. }) => {
                    set_aside(&path, &reason, on_event)?;
                    break;
                }
                Err(e) => return Err(e),
            }
        }
        if kept.len() == sectors.len() {
            for ((m, o), values) in kept {
                let summary = match read_summary(dir, m, o) {
                    Some(s) => s,
                    None => summarise(&ix, m, o, &values, n_move_rule, None, None, sector_path(dir, m, o)),
                };
                on_event(BuildEvent::Kept(summary.clone()));
                summaries.push(summary);
                solved[m][o] = Some(values);
            }
            continue;
        }
        let slots: u64 = sectors.iter().map(|&(m, o)| ix.len(m, o) as u64).sum();
        check_disk(dir, &sectors, file::HEADER as u64 * sectors.len() as u64 + 2 * slots)?;
        on_event(BuildEvent::Solving {
            sectors: sectors.iter().map(|&(m, o)| format!("{m}v{o}")).collect(),
            slots,
        });
        reset_peak_memory();
        let start = Instant::now();
        let lower = [lower_of(&solved, b, a), lower_of(&solved, a, b)];
        let pair = Pair { ix: &ix, flying: rules.flying, n_move_rule, a, b, lower };
        let result = solve(&pair, &|n| on_event(BuildEvent::Progress(n)))
            .map_err(|d| TablebaseError::DistanceOverflow(format!("{a}v{b}"), d))?;
        let seconds = start.elapsed().as_secs_f64();
        let peak = peak_memory_mib();
        for (&(m, o), values) in sectors.iter().zip(result.values) {
            let path = sector_path(dir, m, o);
            let header = Header {
                mover: m as u8,
                opponent: o as u8,
                flying: rules.flying,
                n_move_rule,
                slots: values.len() as u64,
            };
            file::write(&path, header, &values)?;
            let summary = summarise(&ix, m, o, &values, n_move_rule, Some(seconds), peak, path);
            write_summary(dir, m, o, &summary)?;
            on_event(BuildEvent::Built(summary.clone()));
            summaries.push(summary);
            solved[m][o] = Some(values);
        }
    }
    Ok(summaries)
}

/// The sector that removals by a mover facing `opponent` pieces lead to: the opponent then
/// moves with `opponent − 1` against `mover`.
fn lower_of(solved: &[Vec<Option<Vec<u16>>>], opponent: usize, mover: usize) -> Option<&[u16]> {
    if opponent <= 3 { None } else { solved[opponent - 1][mover].as_deref() }
}

/// Fails with [`TablebaseError::DiskFull`] when `dir`'s file system has fewer than `need`
/// bytes free (plus 64 MiB for summaries and the file system's own needs), before a pair is solved.
fn check_disk(dir: &Path, sectors: &[(usize, usize)], need: u64) -> Result<(), TablebaseError> {
    let Some(available) = available_bytes(dir) else { return Ok(()) };
    let need = need + (64 << 20);
    if available >= need {
        return Ok(());
    }
    Err(TablebaseError::DiskFull {
        dir: dir.to_path_buf(),
        sectors: sectors.iter().map(|&(m, o)| format!("{m}v{o}")).collect::<Vec<_>>().join(" + "),
        need_mib: need.div_ceil(1 << 20),
        available_mib: available >> 20,
    })
}

/// Bytes free for an unprivileged writer on `dir`'s file system (`None` where unknown). The
/// test hook `MORRIS_TB_AVAILABLE_BYTES` overrides it, so a full disk can be simulated.
fn available_bytes(dir: &Path) -> Option<u64> {
    if let Some(v) = std::env::var("MORRIS_TB_AVAILABLE_BYTES").ok().and_then(|v| v.parse().ok()) {
        return Some(v);
    }
    #[cfg(unix)]
    {
        let s = rustix::fs::statvfs(dir).ok()?;
        Some(s.f_bavail.saturating_mul(s.f_frsize))
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        None
    }
}

fn set_aside(
    path: &Path,
    reason: &str,
    on_event: &(dyn Fn(BuildEvent) + Sync),
) -> Result<(), TablebaseError> {
    let mut n = 1;
    let aside = loop {
        let candidate = path.with_extension(format!("tb.corrupt-{n}"));
        if !candidate.exists() {
            break candidate;
        }
        n += 1;
    };
    fs::rename(path, &aside).map_err(|e| TablebaseError::io(path, e))?;
    on_event(BuildEvent::SetAside { path: aside, reason: reason.to_string() });
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn summarise(
    ix: &Indexer,
    m: usize,
    o: usize,
    values: &[u16],
    n_move_rule: Option<u32>,
    seconds: Option<f64>,
    peak_memory_mib: Option<f64>,
    path: PathBuf,
) -> SectorSummary {
    let fits = |d: u16| n_move_rule.is_none_or(|n| d as u32 <= n);
    // [positions, wins, wins beyond, draws, losses, losses beyond, longest win, longest loss]
    let totals = values
        .par_iter()
        .enumerate()
        .fold(
            || [0u64; 8],
            |mut t, (i, &v)| {
                if !ix.position(m, o, i).2 {
                    return t;
                }
                t[0] += 1;
                let d = v & DIST;
                if v & WIN != 0 {
                    t[if fits(d) { 1 } else { 2 }] += 1;
                    t[6] = t[6].max(d as u64);
                } else if v & LOSS != 0 {
                    t[if d == 0 || fits(d) { 4 } else { 5 }] += 1;
                    t[7] = t[7].max(d as u64);
                } else {
                    t[3] += 1;
                }
                t
            },
        )
        .reduce(
            || [0u64; 8],
            |mut x, y| {
                for k in 0..6 {
                    x[k] += y[k];
                }
                x[6] = x[6].max(y[6]);
                x[7] = x[7].max(y[7]);
                x
            },
        );
    SectorSummary {
        sector: format!("{m}v{o}"),
        positions: totals[0],
        wins: totals[1],
        wins_beyond_rule: totals[2],
        draws: totals[3],
        losses: totals[4],
        losses_beyond_rule: totals[5],
        longest_win: totals[6] as u32,
        longest_loss: totals[7] as u32,
        seconds,
        peak_memory_mib,
        file_bytes: fs::metadata(&path).map(|m| m.len()).unwrap_or(0),
    }
}

fn summary_path(dir: &Path, m: usize, o: usize) -> PathBuf {
    dir.join(format!("sector-{m}v{o}.json"))
}

fn read_summary(dir: &Path, m: usize, o: usize) -> Option<SectorSummary> {
    let text = fs::read_to_string(summary_path(dir, m, o)).ok()?;
    serde_json::from_str(&text).ok()
}

fn write_summary(dir: &Path, m: usize, o: usize, summary: &SectorSummary) -> Result<(), TablebaseError> {
    let path = summary_path(dir, m, o);
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_string_pretty(summary).unwrap_or_default();
    fs::write(&tmp, text + "\n").map_err(|e| TablebaseError::io(&tmp, e))?;
    fs::rename(&tmp, &path).map_err(|e| TablebaseError::io(&path, e))
}

/// Resets the kernel's peak-RSS mark (Linux: `/proc/self/clear_refs`), so that the next
/// reading covers one sector pair.
fn reset_peak_memory() {
    let _ = fs::write("/proc/self/clear_refs", "5");
}

/// Peak resident memory since the last reset, in MiB (Linux: `VmHWM`).
fn peak_memory_mib() -> Option<f64> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}
