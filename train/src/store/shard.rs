//! Compact game shards: training positions stored as the position itself plus a sparse policy
//! the outcome and the search's value (not float observations), in a small versioned binary file
//! written atomically.
//!
//! # Format, version 5 (all integers little-endian)
//!
//! Header: the 8 bytes `MORSHARD`, `u32` version, `u32` record count, `u32` number of games the
//! records come from, `u8` the variant of the morris family the games are of (`Variant::id`:
//! 0 nine, 1 twelve). Each record:
//!
//! | bytes | field |
//! |---|---|
//! | 4 + 4 | White's and Black's points (sets of the variant's points) |
//! | 1 + 1 | White's and Black's pieces in hand |
//! | 1 | flags: bit 0 Black to move, bit 1 removal pending, bit 2 full search (policy is a target), bit 3 search value present, bit 4 a second removal to follow (morabaraba) |
//! | 1 | occurrences of the position (repetitions) |
//! | 2 + 2 | turns played, N-move counter |
//! | 1 | outcome for the player to move: 1 win, 0 draw, −1 loss (`i8`) |
//! | 4 | the root's mean value after the search, for the player to move (`f32`, −1 to 1; 0 when flag bit 3 is clear) |
//! | 2 | number `k` of policy entries |
//! | 6·k | `k` × (`u16` action, `f32` probability) |
//!
//! After the last record, a `u32` CRC-32C (Castagnoli) of every byte before it, checked on read.
//! Version 4 is the same without the variant byte (its games are nine men's morris); version 3 is
//! version 4 without the search value (its samples have none); version 2 is version 3 without
//! the checksum (read unverified). All three are still read.

use std::fs;
use std::path::Path;

use morris_env::{Action, BitBoard, Color, Position, Rules, Variant};

use super::files::write_atomic;
use crate::error::{Result, TrainError};
use crate::sample::Sample;

/// What the errors of this module call a shard.
const WHAT: &str = "game shard";

const MAGIC: &[u8; 8] = b"MORSHARD";
/// Version of the shard format.
pub const SHARD_VERSION: u32 = 5;
/// The previous version, without the variant byte (nine men's morris), still read.
const SHARD_VERSION_NO_VARIANT: u32 = 4;
/// The version before it, without the search value either, still read.
const SHARD_VERSION_NO_SEARCH_VALUE: u32 = 3;
/// The version before it, without the checksum either, still read (unverified).
const SHARD_VERSION_UNCHECKED: u32 = 2;

fn encode(s: &Sample, out: &mut Vec<u8>) {
    let p = &s.position;
    out.extend_from_slice(&p.pieces(Color::White).0.to_le_bytes());
    out.extend_from_slice(&p.pieces(Color::Black).0.to_le_bytes());
    out.push(p.in_hand(Color::White));
    out.push(p.in_hand(Color::Black));
    let flags = (p.current_player() == Color::Black) as u8
        | (p.is_removal_pending() as u8) << 1
        | (s.full_search as u8) << 2
        | (s.search_value.is_some() as u8) << 3
        | ((p.removals_pending() > 1) as u8) << 4;
    out.push(flags);
    out.push(s.repetitions);
    out.extend_from_slice(&p.turns().to_le_bytes());
    out.extend_from_slice(&p.quiet_plies().to_le_bytes());
    out.push(s.outcome as u8);
    out.extend_from_slice(&s.search_value.unwrap_or(0.0).to_le_bytes());
    out.extend_from_slice(&(s.policy.len() as u16).to_le_bytes());
    for &(a, prob) in &s.policy {
        out.extend_from_slice(&a.0.to_le_bytes());
        out.extend_from_slice(&prob.to_le_bytes());
    }
}

/// The contents of one shard.
#[derive(Clone, Debug, PartialEq)]
pub struct Shard {
    /// The positions.
    pub samples: Vec<Sample>,
    /// How many complete games they come from.
    pub games: u32,
    /// The variant of the morris family the games are of.
    pub variant: Variant,
}

/// A shard as bytes, named by the worker that played it and its sequence number: what a
/// self-play worker hands a learner when there is no shared disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodedShard {
    /// The worker's name.
    pub worker: String,
    /// Its sequence number among the worker's shards (from 0).
    pub seq: u64,
    /// Complete games the positions come from.
    pub games: u32,
    /// Positions it holds.
    pub positions: u32,
    /// The shard's bytes ([`encode_shard`]).
    pub bytes: Vec<u8>,
    /// The SHA-256 of `bytes`, lower-case hex, for the receiver to check before anything else.
    pub sha256: String,
}

/// Writes `samples` (from `games` complete games of `variant`) to `path` through a temporary
/// sibling and a rename, so a reader (or a crash) never sees half a shard.
///
/// # Errors
/// [`TrainError::Io`] if the file cannot be written or renamed; those of [`encode_shard`].
pub fn write_shard(path: &Path, samples: &[Sample], games: u32, variant: Variant) -> Result<()> {
    write_atomic(path, &encode_shard(samples, games, variant)?)
}

/// The bytes of a shard of `samples` (from `games` complete games of `variant`), checksum
/// included: what [`write_shard`] writes, for shards that travel without a file (a worker's
/// games sent to a learner over the network).
///
/// # Errors
/// [`TrainError::Internal`] if a sample has more than 600 policy entries or a search value
/// outside [−1, 1] (what the reader refuses), or there are more than `u32::MAX` samples.
pub fn encode_shard(samples: &[Sample], games: u32, variant: Variant) -> Result<Vec<u8>> {
    let mut bytes = Vec::with_capacity(21 + samples.len() * 64);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&SHARD_VERSION.to_le_bytes());
    let count = u32::try_from(samples.len())
        .map_err(|_| TrainError::Internal(format!("too many samples for one shard ({})", samples.len())))?;
    bytes.extend_from_slice(&count.to_le_bytes());
    bytes.extend_from_slice(&games.to_le_bytes());
    bytes.push(variant.id());
    let actions = variant.board().num_actions();
    for s in samples {
        if s.policy.len() > actions {
            let n = s.policy.len();
            return Err(TrainError::Internal(format!("a sample has {n} policy entries (at most {actions})")));
        }
        if let Some(q) = s.search_value.filter(|q| !(-1.0..=1.0).contains(q)) {
            return Err(TrainError::Internal(format!("a sample's search value {q} is outside -1 to 1")));
        }
        encode(s, &mut bytes);
    }
    let crc = crc32c::crc32c(&bytes);
    bytes.extend_from_slice(&crc.to_le_bytes());
    Ok(bytes)
}

/// A little-endian reader over a byte slice that reports where it ran out.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let out: [u8; N] = self.bytes.get(self.at..self.at + N)?.try_into().ok()?;
        self.at += N;
        Some(out)
    }
}

/// Reads a shard written by [`write_shard`] (or an older one: version 4, 3 or 2),
/// checking its checksum and validating every record.
///
/// # Errors
/// [`TrainError::Io`] if the file cannot be read; those of [`decode_shard`], naming the file.
pub fn read_shard(path: &Path) -> Result<Shard> {
    let bytes = fs::read(path).map_err(|e| TrainError::io("read", path, e))?;
    decode_shard(&bytes, path)
}

/// Reads the bytes of a shard ([`encode_shard`], or an older version), checking its checksum
/// and every record as [`read_shard`] does; `source` names it in errors (its file, or a worker
/// and sequence number for a shard that came over the network).
///
/// # Errors
/// [`TrainError::Corrupt`] naming `source` if it is not a shard, its checksum does not match, it
/// is truncated, or it holds an impossible position or action (the reason names the record) or
/// an unknown variant; [`TrainError::Incompatible`] for another format version.
pub fn decode_shard(bytes: &[u8], source: &Path) -> Result<Shard> {
    let path = source;
    let mut bytes = bytes;
    let version = bytes.get(8..12).map(|v| u32::from_le_bytes([v[0], v[1], v[2], v[3]]));
    let checked = version.is_some_and(|v| (SHARD_VERSION_NO_SEARCH_VALUE..=SHARD_VERSION).contains(&v));
    if bytes.starts_with(MAGIC) && checked {
        let Some(body_len) = bytes.len().checked_sub(4).filter(|&n| n >= 20) else {
            return Err(TrainError::corrupt(WHAT, path, "truncated header"));
        };
        let stored = u32::from_le_bytes([
            bytes[body_len],
            bytes[body_len + 1],
            bytes[body_len + 2],
            bytes[body_len + 3],
        ]);
        if crc32c::crc32c(&bytes[..body_len]) != stored {
            return Err(TrainError::corrupt(
                WHAT,
                path,
                "its CRC-32C does not match: the file changed after it was written",
            ));
        }
        bytes = &bytes[..body_len];
    }
    let mut c = Cursor { bytes, at: 0 };
    if c.take::<8>().as_ref() != Some(MAGIC) {
        return Err(TrainError::corrupt(WHAT, path, "not a game shard (bad magic)"));
    }
    let truncated = || TrainError::corrupt(WHAT, path, "truncated header");
    let version = c.take::<4>().map(u32::from_le_bytes).ok_or_else(truncated)?;
    if !(SHARD_VERSION_UNCHECKED..=SHARD_VERSION).contains(&version) {
        return Err(TrainError::incompatible(
            path,
            format!(
                "shard version {version}, this build reads versions {SHARD_VERSION_UNCHECKED} to {SHARD_VERSION}"
            ),
        ));
    }
    let has_search_value = version >= SHARD_VERSION_NO_VARIANT;
    let count = c.take::<4>().map(u32::from_le_bytes).ok_or_else(truncated)?;
    let games = c.take::<4>().map(u32::from_le_bytes).ok_or_else(truncated)?;
    let variant = if version >= SHARD_VERSION {
        let [id] = c.take::<1>().ok_or_else(truncated)?;
        Variant::from_id(id)
            .ok_or_else(|| TrainError::corrupt(WHAT, path, format!("unknown variant number {id}")))?
    } else {
        Variant::Nine
    };
    let rules = Rules::of(variant);
    let board = variant.board();
    // Sized by what the bytes can hold (a record is at least 19 bytes), not by the count they
    // claim: a damaged count in a small shard must not reserve memory it cannot fill (the
    // shard fuzz target found 56 MiB reserved for a 2 KiB input).
    let mut samples = Vec::with_capacity((count as usize).min((bytes.len() - c.at) / 19));
    for i in 0..count {
        let bad = |what: &str| TrainError::corrupt(WHAT, path, format!("record {i}: {what}"));
        // The fixed part of a record: 17 bytes, laid out as in the module docs, then the search
        // value (versions 4 and 5) and the number of policy entries.
        let head: [u8; 17] = c.take().ok_or_else(|| bad("truncated"))?;
        let u32_at = |k: usize| u32::from_le_bytes([head[k], head[k + 1], head[k + 2], head[k + 3]]);
        let u16_at = |k: usize| u16::from_le_bytes([head[k], head[k + 1]]);
        let (w, b) = (u32_at(0), u32_at(4));
        let [hand_w, hand_b, flags, repetitions] = [head[8], head[9], head[10], head[11]];
        let (turns, quiet, outcome) = (u16_at(12), u16_at(14), head[16] as i8);
        let value = if has_search_value {
            Some(c.take::<4>().map(f32::from_le_bytes).ok_or_else(|| bad("truncated"))?)
        } else {
            None
        };
        let k = c.take::<2>().map(u16::from_le_bytes).ok_or_else(|| bad("truncated"))?;
        let side = if flags & 1 != 0 { Color::Black } else { Color::White };
        let removals = match (flags >> 1 & 1, flags >> 4 & 1) {
            (_, 1) if version < SHARD_VERSION => {
                return Err(bad("flag bit 4 (second removal) in a shard older than version 5"));
            }
            (0, 1) => return Err(bad("a second removal without a first")),
            (first, second) => first + second,
        };
        if (w | b) & !board.full.0 != 0 {
            return Err(bad("points outside the board"));
        }
        let position =
            Position::from_parts_for(&rules, BitBoard(w), BitBoard(b), [hand_w, hand_b], side, removals)
                .map_err(|e| bad(&e.to_string()))?
                .with_counters(turns, quiet);
        if !(-1..=1).contains(&outcome) {
            return Err(bad("outcome outside -1..=1"));
        }
        let search_value = match (value, flags & 8 != 0) {
            (Some(q), true) if (-1.0..=1.0).contains(&q) => Some(q),
            (Some(q), true) => return Err(bad(&format!("search value {q} outside -1 to 1"))),
            (Some(q), false) if q.to_bits() != 0 => return Err(bad("a search value without its flag")),
            (None, true) => return Err(bad("flag bit 3 (search value) in a shard older than version 4")),
            _ => None,
        };
        if flags >> 5 != 0 {
            return Err(bad("unknown flag bits"));
        }
        let k = k as usize;
        if k > board.num_actions() {
            return Err(bad("too many policy entries"));
        }
        let mut policy = Vec::with_capacity(k);
        for _ in 0..k {
            let e: [u8; 6] = c.take().ok_or_else(|| bad("truncated policy"))?;
            let (a, p) =
                (Action(u16::from_le_bytes([e[0], e[1]])), f32::from_le_bytes([e[2], e[3], e[4], e[5]]));
            if !a.is_in_range_on(board) || !p.is_finite() || !(0.0..=1.0).contains(&p) {
                return Err(bad("bad policy entry"));
            }
            policy.push((a, p));
        }
        samples.push(Sample {
            position,
            repetitions,
            policy,
            outcome,
            full_search: flags & 4 != 0,
            search_value,
        });
    }
    if c.at != bytes.len() {
        let extra = bytes.len() - c.at;
        return Err(TrainError::corrupt(WHAT, path, format!("{extra} bytes after the last record")));
    }
    Ok(Shard { samples, games, variant })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use morris_env::{Game, Rng, Rules};

    fn samples() -> Vec<Sample> {
        random_game_samples(5)
    }

    /// The positions of one seeded random game under the standard rules, with uniform policies,
    /// cycling outcomes and every fourth move marked as a full search (also used by the replay tests).
    pub(crate) fn random_game_samples(seed: u64) -> Vec<Sample> {
        random_game_samples_for(Rules::standard(), seed)
    }

    /// The samples of one random game under `rules` (uniform policies, mixed targets).
    pub(crate) fn random_game_samples_for(rules: Rules, seed: u64) -> Vec<Sample> {
        let mut rng = Rng::seed_from_u64(seed);
        let mut game = Game::new(rules);
        let mut out = Vec::new();
        while !game.outcome().is_terminal() {
            let mask = game.legal_actions();
            let n = mask.count() as f32;
            out.push(Sample {
                position: *game.position(),
                repetitions: game.repetitions() as u8,
                policy: mask.iter().map(|a| (a, 1.0 / n)).collect(),
                outcome: (out.len() % 3) as i8 - 1,
                full_search: out.len() % 4 == 0,
                search_value: (out.len() % 5 != 0).then(|| (out.len() % 7) as f32 / 3.0 - 1.0),
            });
            let Some(a) = mask.sample(&mut rng) else { break };
            game.apply_unchecked(a);
        }
        out
    }

    #[test]
    fn shards_round_trip_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("00000.shard");
        let s = samples();
        assert!(s.len() > 20);
        write_shard(&path, &s, 1, Variant::Nine).unwrap();
        assert_eq!(
            read_shard(&path).unwrap(),
            Shard { samples: s.clone(), games: 1, variant: Variant::Nine }
        );
        assert!(!path.with_extension("tmp-write").exists());
        // Far smaller than float observations (15 × 24 × 4 bytes per position).
        let size = fs::metadata(&path).unwrap().len() as usize;
        assert!(size < s.len() * 15 * 24 * 4 / 2, "{size} bytes");
    }

    /// The bytes a file holds are the bytes [`encode_shard`] makes, and [`decode_shard`] reads
    /// them back without a file, naming the source it is given when they are damaged.
    #[test]
    fn shards_travel_as_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.shard");
        let s = samples();
        write_shard(&path, &s, 2, Variant::Nine).unwrap();
        let bytes = encode_shard(&s, 2, Variant::Nine).unwrap();
        assert_eq!(fs::read(&path).unwrap(), bytes);
        let source = Path::new("worker-3/00000007");
        assert_eq!(
            decode_shard(&bytes, source).unwrap(),
            Shard { samples: s, games: 2, variant: Variant::Nine }
        );
        let mut bad = bytes.clone();
        bad[30] ^= 4;
        let e = decode_shard(&bad, source).unwrap_err();
        assert!(matches!(&e, TrainError::Corrupt { path, .. } if path == source), "{e}");
        assert!(e.to_string().contains("worker-3/00000007"), "{e}");
        for len in [0, 7, 12, 19, 23, bytes.len() - 1] {
            assert!(decode_shard(&bytes[..len], source).is_err(), "{len} bytes");
        }
    }

    /// `body` with its CRC-32C appended, as `write_shard` ends a shard.
    fn reseal(body: &[u8]) -> Vec<u8> {
        let mut out = body.to_vec();
        out.extend_from_slice(&crc32c::crc32c(body).to_le_bytes());
        out
    }

    #[test]
    fn every_flipped_bit_is_caught_and_versions_4_3_and_2_still_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("z.shard");
        write_shard(&path, &samples(), 1, Variant::Nine).unwrap();
        let good = fs::read(&path).unwrap();
        let mut rng = Rng::seed_from_u64(3);
        for _ in 0..300 {
            let bit = rng.below(8 * good.len() as u32) as usize;
            let mut bad = good.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            fs::write(&path, &bad).unwrap();
            let e = read_shard(&path).unwrap_err();
            assert!(
                matches!(&e, TrainError::Corrupt { .. } | TrainError::Incompatible { .. }),
                "bit {bit}: {e}"
            );
            assert!(e.to_string().contains("z.shard"), "{e}");
        }
        // Version 4 (no variant byte) still reads, as nine men's morris.
        let s = samples();
        let v5 = encode_shard(&s, 1, Variant::Nine).unwrap();
        let mut v4 = v5[..20].to_vec();
        v4[8..12].copy_from_slice(&4u32.to_le_bytes());
        v4.extend_from_slice(&v5[21..v5.len() - 4]);
        fs::write(&path, reseal(&v4)).unwrap();
        assert_eq!(read_shard(&path).unwrap(), Shard { samples: s, games: 1, variant: Variant::Nine });
        // Versions 3 and 2 still read, their samples without a search value.
        let old: Vec<Sample> = samples().into_iter().map(|s| Sample { search_value: None, ..s }).collect();
        let v3 = version_3(&old, 1);
        fs::write(&path, &v3).unwrap();
        assert_eq!(read_shard(&path).unwrap().samples, old);
        // A version-2 shard (no checksum) is the same records without the trailer.
        let mut v2 = v3[..v3.len() - 4].to_vec();
        v2[8..12].copy_from_slice(&2u32.to_le_bytes());
        fs::write(&path, &v2).unwrap();
        assert_eq!(read_shard(&path).unwrap().samples, old);
        // A version-3 record cannot claim a search value.
        let mut flagged = v3[..v3.len() - 4].to_vec();
        flagged[20 + 10] |= 8;
        let e = decode_shard(&reseal(&flagged), &path).unwrap_err();
        assert!(matches!(&e, TrainError::Corrupt { reason, .. } if reason.contains("version 4")), "{e}");
    }

    /// A version-3 shard of `samples` (which have no search value): each record without the 4
    /// bytes of the search value, sealed with its checksum.
    fn version_3(samples: &[Sample], games: u32) -> Vec<u8> {
        let mut body = Vec::new();
        body.extend_from_slice(MAGIC);
        body.extend_from_slice(&3u32.to_le_bytes());
        body.extend_from_slice(&(samples.len() as u32).to_le_bytes());
        body.extend_from_slice(&games.to_le_bytes());
        for s in samples {
            let mut record = Vec::new();
            encode(s, &mut record);
            record.drain(17..21);
            body.extend_from_slice(&record);
        }
        reseal(&body)
    }

    /// A shard records its games' variant: twelve men's morris positions (more than nine pieces
    /// a side in play) round-trip under it, and read as nine men's morris they are refused; an
    /// unknown variant number is a corrupt shard.
    #[test]
    fn shards_record_their_variant() {
        let rules = Rules::twelve();
        let mut rng = Rng::seed_from_u64(12);
        let mut game = Game::new(rules);
        let mut s = Vec::new();
        while !game.outcome().is_terminal() && s.len() < 40 {
            s.push(Sample {
                position: *game.position(),
                repetitions: 1,
                policy: vec![],
                outcome: 0,
                full_search: false,
                search_value: None,
            });
            let a = game.legal_actions().sample(&mut rng).unwrap();
            game.apply(a).unwrap();
        }
        assert!(s.iter().any(|x| x.position.in_hand(Color::White) > 9), "twelve's hands");
        let bytes = encode_shard(&s, 1, Variant::Twelve).unwrap();
        let path = Path::new("t.shard");
        assert_eq!(
            decode_shard(&bytes, path).unwrap(),
            Shard { samples: s.clone(), games: 1, variant: Variant::Twelve }
        );
        let mut as_nine = bytes[..bytes.len() - 4].to_vec();
        as_nine[20] = Variant::Nine.id();
        let e = decode_shard(&reseal(&as_nine), path).unwrap_err();
        assert!(matches!(&e, TrainError::Corrupt { reason, .. } if reason.starts_with("record 0")), "{e}");
        as_nine[20] = 200;
        let e = decode_shard(&reseal(&as_nine), path).unwrap_err();
        assert!(
            matches!(&e, TrainError::Corrupt { reason, .. } if reason.contains("unknown variant number 200")),
            "{e}"
        );
    }

    /// Morabaraba's second pending removal is flag bit 4: it round-trips, and is refused without
    /// the first or in a shard older than version 5.
    #[test]
    fn a_second_pending_removal_round_trips() {
        let bb = |names: &[&str]| {
            names.iter().fold(BitBoard::EMPTY, |b, n| b | n.parse::<morris_env::Point>().unwrap().bit())
        };
        let position = Position::from_parts_for(
            &Rules::morabaraba(),
            bb(&["a7", "b6", "c5", "d6", "f6"]),
            bb(&["g7", "g4", "g1", "d1"]),
            [7, 8],
            Color::White,
            2,
        )
        .unwrap();
        let s = vec![Sample {
            position,
            repetitions: 1,
            policy: vec![],
            outcome: 1,
            full_search: false,
            search_value: None,
        }];
        let bytes = encode_shard(&s, 1, Variant::Morabaraba).unwrap();
        let path = Path::new("m.shard");
        let back = decode_shard(&bytes, path).unwrap();
        assert_eq!(back.samples[0].position.removals_pending(), 2);
        assert_eq!(back.samples, s);
        let body = &bytes[..bytes.len() - 4];
        let mut first_missing = body.to_vec();
        first_missing[21 + 10] &= !2;
        let e = decode_shard(&reseal(&first_missing), path).unwrap_err();
        assert!(e.to_string().contains("a second removal without a first"), "{e}");
        // Under twelve's rules two pending removals cannot arise.
        let mut as_twelve = body.to_vec();
        as_twelve[20] = Variant::Twelve.id();
        let e = decode_shard(&reseal(&as_twelve), path).unwrap_err();
        assert!(matches!(&e, TrainError::Corrupt { reason, .. } if reason.starts_with("record 0")), "{e}");
    }

    #[test]
    fn search_values_are_checked() {
        let path = Path::new("v.shard");
        let s = samples();
        let good = encode_shard(&s[..1], 1, Variant::Nine).unwrap();
        let body = &good[..good.len() - 4];
        let value_at = 21 + 17;
        for (value, flag, reason) in [
            (1.5f32, true, "outside -1 to 1"),
            (f32::NAN, true, "outside -1 to 1"),
            (0.5, false, "without its flag"),
        ] {
            let mut bad = body.to_vec();
            bad[value_at..value_at + 4].copy_from_slice(&value.to_le_bytes());
            if flag {
                bad[21 + 10] |= 8
            } else {
                bad[21 + 10] &= !8
            }
            let e = decode_shard(&reseal(&bad), path).unwrap_err();
            assert!(
                matches!(&e, TrainError::Corrupt { reason: r, .. } if r.contains(reason)),
                "{value}: {e}"
            );
        }
        // The writer refuses what the reader would.
        let mut out_of_range = s[..1].to_vec();
        out_of_range[0].search_value = Some(-1.5);
        assert!(matches!(encode_shard(&out_of_range, 1, Variant::Nine), Err(TrainError::Internal(_))));
        let mut unknown = body.to_vec();
        unknown[21 + 10] |= 32;
        let e = decode_shard(&reseal(&unknown), path).unwrap_err();
        assert!(e.to_string().contains("unknown flag bits"), "{e}");
    }

    #[test]
    fn bad_shards_are_rejected_with_the_file_and_record() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.shard");
        write_shard(&path, &samples(), 1, Variant::Nine).unwrap();
        let good = fs::read(&path).unwrap();

        fs::write(&path, b"NOTSHARD").unwrap();
        let e = read_shard(&path).unwrap_err();
        assert!(matches!(&e, TrainError::Corrupt { reason, .. } if reason.contains("bad magic")), "{e}");

        // A truncated file fails its checksum; truncated records are named once it is resealed.
        fs::write(&path, &good[..good.len() - 3]).unwrap();
        let e = read_shard(&path).unwrap_err();
        assert!(matches!(&e, TrainError::Corrupt { path: p, .. } if p == &path), "{e}");
        assert!(e.to_string().contains("x.shard") && e.to_string().contains("CRC-32C"), "{e}");
        let body = &good[..good.len() - 4];
        fs::write(&path, reseal(&body[..body.len() - 3])).unwrap();
        let e = read_shard(&path).unwrap_err();
        assert!(e.to_string().contains("x.shard") && e.to_string().contains("truncated"), "{e}");

        // Both players on point 0 in the first record.
        let mut overlap = body.to_vec();
        overlap[21] |= 1;
        overlap[25] |= 1;
        let overlap = reseal(&overlap);
        let e = read_shard(&path.with_file_name("y.shard")).unwrap_err();
        assert!(matches!(&e, TrainError::Io { path: p, .. } if p.ends_with("y.shard")), "{e}");
        fs::write(&path, &overlap).unwrap();
        let e = read_shard(&path).unwrap_err();
        assert!(matches!(&e, TrainError::Corrupt { reason, .. } if reason.starts_with("record 0")), "{e}");

        let mut version = body.to_vec();
        version[8] = 9;
        fs::write(&path, &version).unwrap();
        let e = read_shard(&path).unwrap_err();
        assert!(matches!(&e, TrainError::Incompatible { reason, .. } if reason.contains("version 9")), "{e}");
    }
}
