//! The fuzz targets on stable Rust: each target runs on its seeds (`corpus/NAME/`, the inputs
//! that once failed in `regressions/NAME/`, and seeds made here) and on seeded mutations of
//! them, checking that no input panics, takes more than [`MAX_TIME`] or allocates more than
//! [`max_allocation`] at once. A failing input is saved under `target/fuzz-findings/` and named.
//!
//! `MORRIS_FUZZ_ITERS` sets the mutations per target (default 300: seconds in all, CI's smoke
//! run); `MORRIS_FUZZ_SEEDS=DIR` also writes every target's seeds to `DIR/NAME/` (the corpus a
//! libFuzzer run starts from, docs/reliability.md).

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use morris_env::tablebase::build;
use morris_env::{Action, Game, Rules};
use morris_fuzz::{TARGETS, max_allocation, tiny_net};
use morris_train::sample::Sample;

/// The longest one input may take (a debug build: the release figures are far lower).
const MAX_TIME: Duration = Duration::from_secs(2);

/// Bytes allocated now and the most at once since the last reset.
static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// The system allocator, counting. It only forwards each call to [`System`] unchanged.
struct Counting;

// SAFETY: every method forwards to `System` with the same pointer and layout it was given, so
// `System`'s guarantees are this allocator's; the counters are plain atomics and never touch
// the memory handed out.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is `System::alloc`'s.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, that is from `System`, with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from `System` with `layout`; the caller's contract is `System`'s.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
            grew(new_size);
        }
        p
    }
}

fn grew(size: usize) {
    let now = CURRENT.fetch_add(size, Ordering::Relaxed) + size;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// A small seeded generator (xorshift64*), so that a run's inputs can be made again.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// An input made from `seeds` by one to four random edits: a bit flipped, a byte set (often to
/// a boundary value), a range deleted, duplicated or overwritten from another seed, random
/// bytes inserted, the input cut short.
fn mutate(seeds: &[Vec<u8>], rng: &mut Rng) -> Vec<u8> {
    let mut data = seeds[rng.below(seeds.len())].clone();
    for _ in 0..1 + rng.below(4) {
        let len = data.len();
        match rng.below(7) {
            0 if len > 0 => {
                let i = rng.below(len);
                data[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                data[i] = [0, 1, 0x7f, 0x80, 0xff, b'"', b'\n', b'9'][rng.below(8)];
            }
            2 if len > 0 => {
                let start = rng.below(len);
                let end = (start + 1 + rng.below(16)).min(len);
                data.drain(start..end);
            }
            3 if len > 0 => {
                let start = rng.below(len);
                let end = (start + 1 + rng.below(64)).min(len);
                let piece = data[start..end].to_vec();
                let at = rng.below(len + 1);
                data.splice(at..at, piece);
            }
            4 => {
                let at = rng.below(len + 1);
                let bytes: Vec<u8> = (0..1 + rng.below(8)).map(|_| rng.next() as u8).collect();
                data.splice(at..at, bytes);
            }
            5 if len > 0 => data.truncate(rng.below(len)),
            _ => {
                let other = &seeds[rng.below(seeds.len())];
                if !other.is_empty() && len > 0 {
                    let from = rng.below(other.len());
                    let n = (other.len() - from).min(1 + rng.below(64));
                    let at = rng.below(len);
                    let end = (at + n).min(len);
                    data.splice(at..end, other[from..from + n].iter().copied());
                }
            }
        }
    }
    data
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The files of a directory, if it exists.
fn files_in(dir: &Path) -> Vec<Vec<u8>> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).filter(|p| p.is_file()).collect();
    paths.sort();
    paths.iter().map(|p| std::fs::read(p).expect("a seed file")).collect()
}

/// Seeds made here rather than kept as files: binary formats written by the lab's own code.
fn made_seeds(name: &str, scratch: &Path) -> Vec<Vec<u8>> {
    match name {
        "shard" => {
            // Version 2 (the fixture) and version 4 with and without search values.
            let mut game = Game::new(Rules::standard());
            let mut samples = Vec::new();
            for (k, a) in [Action(3), Action(5), Action(7)].into_iter().enumerate() {
                samples.push(Sample {
                    position: *game.position(),
                    repetitions: 1,
                    policy: vec![(a, 0.75), (Action(20), 0.25)],
                    outcome: k as i8 - 1,
                    full_search: k != 1,
                    search_value: (k != 2).then_some(0.5 - k as f32),
                });
                game.apply(a).expect("a legal placement");
            }
            vec![
                std::fs::read(repo().join("tests/fixtures/format-v1/run/games/local-00000000.shard"))
                    .expect("the format-v1 fixture shard"),
                morris_train::store::encode_shard(&samples, 1, morris_env::Variant::Nine)
                    .expect("a v5 shard"),
            ]
        }
        "model_weights" => {
            let device = burn::prelude::Device::flex();
            vec![morris_train::store::model_to_bytes(&tiny_net().init(&device)).expect("weights")]
        }
        "tablebase_sector" => {
            let dir = scratch.join("tb3");
            build(&dir, 3, &Rules::standard(), &|_| {}).expect("a 3v3 sector");
            vec![std::fs::read(dir.join("sector-3v3.tb")).expect("the sector")]
        }
        "game_notation" => {
            let mut game = Game::new(Rules::standard());
            game.play_random(&mut morris_env::Rng::seed_from_u64(7), 300);
            vec![game.record().into_bytes()]
        }
        _ => Vec::new(),
    }
}

#[test]
fn every_target_survives_its_seeds_and_their_mutations() {
    let iters: usize = std::env::var("MORRIS_FUZZ_ITERS").ok().and_then(|v| v.parse().ok()).unwrap_or(300);
    let write_seeds = std::env::var_os("MORRIS_FUZZ_SEEDS").map(PathBuf::from);
    let findings = repo().join("target/fuzz-findings");
    let scratch = tempfile::tempdir().expect("a scratch directory");
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut failures = Vec::new();
    for (k, &(name, target)) in TARGETS.iter().enumerate() {
        let mut seeds = files_in(&here.join("corpus").join(name));
        seeds.extend(files_in(&here.join("regressions").join(name)));
        seeds.extend(made_seeds(name, scratch.path()));
        assert!(!seeds.is_empty(), "target {name} has no seed");
        if let Some(dir) = &write_seeds {
            let dir = dir.join(name);
            std::fs::create_dir_all(&dir).expect("the seed directory");
            for (i, seed) in seeds.iter().enumerate() {
                std::fs::write(dir.join(format!("seed-{i:03}")), seed).expect("a seed");
            }
        }
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (k as u64 + 1));
        let started = Instant::now();
        let (mut slowest, mut most) = (Duration::ZERO, 0usize);
        for i in 0..seeds.len() + iters {
            let input = if i < seeds.len() { seeds[i].clone() } else { mutate(&seeds, &mut rng) };
            let base = CURRENT.load(Ordering::Relaxed);
            PEAK.store(base, Ordering::Relaxed);
            let t = Instant::now();
            let result = std::panic::catch_unwind(|| target(&input));
            let took = t.elapsed();
            let allocated = PEAK.load(Ordering::Relaxed).saturating_sub(base);
            slowest = slowest.max(took);
            most = most.max(allocated);
            let problem = match result {
                Err(_) => Some("panicked".to_string()),
                Ok(()) if took > MAX_TIME => Some(format!("took {took:?}")),
                Ok(()) if allocated > max_allocation(input.len()) => {
                    Some(format!("allocated {allocated} bytes"))
                }
                Ok(()) => None,
            };
            if let Some(problem) = problem {
                std::fs::create_dir_all(&findings).expect("the findings directory");
                let path = findings.join(format!("{name}-{i:05}.bin"));
                std::fs::write(&path, &input).expect("save the input");
                failures.push(format!("{name}: input {i} {problem}: saved as {}", path.display()));
            }
        }
        println!(
            "{name}: {} inputs ({} seeds) in {:.2?}, slowest {slowest:.2?}, most allocated {} KiB",
            seeds.len() + iters,
            seeds.len(),
            started.elapsed(),
            most >> 10
        );
    }
    assert!(failures.is_empty(), "{} failing inputs:\n{}", failures.len(), failures.join("\n"));
}
