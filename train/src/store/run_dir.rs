//! The run directory: where each file of a run lives, publishing and finding model versions,
//! and naming, writing and discovering game shards.
//!
//! | path | written by | content |
//! |---|---|---|
//! | `config.toml` | learner | the resolved config (self-play workers read it) |
//! | `games/WORKER-SEQ.shard` | self-play | finished games ([`super::shard`]), each file written atomically |
//! | `models/model-STEP/`, `models/LATEST` | learner | network versions for self-play; `LATEST` names the newest |
//! | `checkpoints/step-N/` | learner | [`super::checkpoint`]; `best.json` names the best rated one |
//! | `tb/` | learner | TensorBoard event files |
//! | `metrics.jsonl` | learner | the same scalars as JSON lines |
//! | `FINISHED` | learner | present once the run has ended; self-play workers then stop |
//! | `locks/learner.lock`, `locks/worker-NAME.lock` | learner, workers | OS locks: one learner, one worker per name ([`super::RoleLock`]) |

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use burn::prelude::Device;
use morris_env::Variant;

use super::files::{read_text, write_atomic, write_dir_atomic};
use super::manifest::{sha256_hex, write_manifest};
use super::model_dir::{CONFIG_FILE, MODEL_FILE, load_model, save_model};
use super::shard::{EncodedShard, encode_shard};
use crate::error::Result;
use crate::model::PolicyValueNet;
use crate::sample::Sample;

/// Removes the leftovers of interrupted atomic writes in `dir` whose names pass `mine`: files
/// ending in `.tmp-write` and directories starting with `.tmp-` or `.old-`. Returns the count.
fn remove_leftovers(dir: &Path, mine: impl Fn(&str) -> bool) -> usize {
    let mut removed = 0;
    for e in fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !mine(&name) {
            continue;
        }
        let path = e.path();
        let gone = if path.is_dir() && (name.starts_with(".tmp-") || name.starts_with(".old-")) {
            fs::remove_dir_all(&path).is_ok()
        } else if path.is_file() && name.ends_with(".tmp-write") {
            fs::remove_file(&path).is_ok()
        } else {
            false
        };
        removed += usize::from(gone);
    }
    removed
}

/// Model versions kept in `RUN/models/`.
pub const MODELS_KEPT: usize = 4;
/// The file in `models/` that names the newest version.
const LATEST_FILE: &str = "LATEST";
/// File name suffix of game shards.
const SHARD_SUFFIX: &str = ".shard";

/// The paths of a run directory.
#[derive(Clone, Debug)]
pub struct RunDir {
    root: PathBuf,
}

impl RunDir {
    /// The run directory at `root`.
    pub fn new(root: impl Into<PathBuf>) -> RunDir {
        RunDir { root: root.into() }
    }
    /// The directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }
    /// `config.toml`: the resolved config.
    pub fn config(&self) -> PathBuf {
        self.root.join("config.toml")
    }
    /// `locks/learner.lock`: held by the run's learner for its whole life.
    pub fn learner_lock(&self) -> PathBuf {
        self.root.join("locks").join("learner.lock")
    }
    /// `locks/worker-NAME.lock`: held by the self-play worker of that (sanitized) name.
    pub fn worker_lock(&self, worker: &str) -> PathBuf {
        self.root.join("locks").join(format!("worker-{}.lock", sanitize_worker(worker)))
    }
    /// `games/`: game shards.
    pub fn games(&self) -> PathBuf {
        self.root.join("games")
    }
    /// `models/`: network versions for self-play.
    pub fn models(&self) -> PathBuf {
        self.root.join("models")
    }
    /// `checkpoints/`.
    pub fn checkpoints(&self) -> PathBuf {
        self.root.join("checkpoints")
    }
    /// `tb/`: TensorBoard logs.
    pub fn tb(&self) -> PathBuf {
        self.root.join("tb")
    }
    /// `metrics.jsonl`.
    pub fn metrics(&self) -> PathBuf {
        self.root.join("metrics.jsonl")
    }
    /// `FINISHED`: the learner has stopped.
    pub fn finished(&self) -> PathBuf {
        self.root.join("FINISHED")
    }

    /// Whether the learner has marked the run finished.
    pub fn is_finished(&self) -> bool {
        self.finished().exists()
    }

    /// Marks the run finished at `step` (self-play workers stop when they see it).
    ///
    /// # Errors
    /// If the file cannot be written.
    pub fn mark_finished(&self, step: u64) -> Result<()> {
        write_atomic(&self.finished(), format!("step {step}\n").as_bytes())
    }

    /// Removes the finished mark (a resumed run goes on).
    pub fn clear_finished(&self) {
        let _ = fs::remove_file(self.finished());
    }

    /// Removes what interrupted writes left behind in the parts of the run only the learner
    /// writes: temporary files (`*.tmp-write`) and directories (`.tmp-*`, `.old-*`) in the run
    /// directory, `models/`, `checkpoints/` and each checkpoint. Returns how many were removed.
    /// Call it while holding the learner's lock.
    pub fn clean_learner_leftovers(&self) -> usize {
        let mut dirs = vec![self.root.clone(), self.models(), self.checkpoints()];
        dirs.extend(super::checkpoint::list(&self.checkpoints()).into_iter().map(|(_, d)| d));
        dirs.iter().map(|d| remove_leftovers(d, |_| true)).sum()
    }

    /// Removes the temporary shard files `worker` left in `games/` (other workers' are theirs:
    /// they may be writing them now). Returns how many were removed. Call it while holding the
    /// worker's lock.
    pub fn clean_shard_leftovers(&self, worker: &str) -> usize {
        let prefix = format!("{}-", sanitize_worker(worker));
        remove_leftovers(&self.games(), |name| name.starts_with(&prefix))
    }

    /// Publishes `model` as `models/model-STEP/` (built aside, then renamed) and points
    /// `models/LATEST` at it; older versions beyond the newest [`MODELS_KEPT`] are deleted, and
    /// so are versions of later steps (left by a run that resumed from an earlier checkpoint).
    /// Returns the version's name (`model-STEP`, as [`RunDir::load_published`] takes it).
    ///
    /// # Errors
    /// If a file cannot be written.
    pub fn publish_model(&self, step: u64, model: &PolicyValueNet) -> Result<String> {
        let models = self.models();
        let name = format!("model-{step:08}");
        let dest = models.join(&name);
        if !dest.exists() {
            write_dir_atomic(&dest, |tmp| {
                save_model(model, tmp)?;
                write_manifest(tmp, &[MODEL_FILE, CONFIG_FILE])
            })?;
        }
        write_atomic(&models.join(LATEST_FILE), format!("{name}\n").as_bytes())?;
        let mut versions: Vec<String> = fs::read_dir(&models)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| n.starts_with("model-"))
            .collect();
        versions.sort();
        // Versions above this one are from steps a resume went back past (published after the
        // checkpoint it resumed from): gone, or pruning by name would delete this one instead.
        let newer = versions.iter().position(|v| v.as_str() > name.as_str()).unwrap_or(versions.len());
        for future in &versions[newer..] {
            let _ = fs::remove_dir_all(models.join(future));
        }
        let cut = newer.saturating_sub(MODELS_KEPT);
        for old in &versions[..cut] {
            let _ = fs::remove_dir_all(models.join(old));
        }
        Ok(name)
    }

    /// The name of the newest published model version, if any.
    pub fn latest_model(&self) -> Option<String> {
        let name = read_text(&self.models().join(LATEST_FILE)).ok()?;
        let name = name.trim();
        (!name.is_empty() && !name.contains('/')).then(|| name.to_string())
    }

    /// Loads the published model version `name` onto `device`.
    ///
    /// # Errors
    /// If its files are missing or corrupt (for example pruned meanwhile).
    pub fn load_published(&self, name: &str, device: &Device) -> Result<PolicyValueNet> {
        load_model(&self.models().join(name), device).map(|(model, _)| model)
    }

    /// The shards in `games/` not in `seen`, in name order.
    pub fn new_shards(&self, seen: &HashSet<String>) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(self.games())
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| n.ends_with(SHARD_SUFFIX) && !seen.contains(n))
            .collect();
        names.sort();
        names
    }

    /// The path of the shard called `name` in `games/`.
    pub fn shard(&self, name: &str) -> PathBuf {
        self.games().join(name)
    }
}

/// A worker name safe in file names: letters, digits, `-` and `_`.
pub fn sanitize_worker(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .collect();
    if s.is_empty() { "worker".into() } else { s }
}

/// Writes one worker's shards as `games/WORKER-SEQ.shard`, continuing its sequence.
pub struct ShardWriter {
    dir: PathBuf,
    worker: String,
    seq: u64,
}

impl ShardWriter {
    /// A writer for `worker` (a name from [`sanitize_worker`]) that continues after the
    /// highest sequence number already in `games/`.
    pub fn new(run: &RunDir, worker: &str) -> ShardWriter {
        let dir = run.games();
        let prefix = format!("{worker}-");
        let seq = fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                name.strip_prefix(&prefix)?.strip_suffix(SHARD_SUFFIX)?.parse::<u64>().ok()
            })
            .max()
            .map_or(0, |s| s + 1);
        ShardWriter { dir, worker: worker.to_string(), seq }
    }

    /// Moves the sequence past every name of this worker among `names` (the shards a learner
    /// has read, from its checkpoint), so that a run resumed without its `games/` files never
    /// writes a shard under a name the learner already counts as read (it would skip it).
    pub fn skip_past<'a>(&mut self, names: impl IntoIterator<Item = &'a String>) {
        let prefix = format!("{}-", self.worker);
        for name in names {
            if let Some(seq) = name
                .strip_prefix(&prefix)
                .and_then(|n| n.strip_suffix(SHARD_SUFFIX))
                .and_then(|n| n.parse::<u64>().ok())
            {
                self.seq = self.seq.max(seq + 1);
            }
        }
    }

    /// The sequence number of the next shard.
    pub fn next_seq(&self) -> u64 {
        self.seq
    }

    /// Writes `samples` (from `games` finished games of `variant`) as the next shard.
    ///
    /// # Errors
    /// If the file cannot be written.
    pub fn write(&mut self, samples: &[Sample], games: u32, variant: Variant) -> Result<()> {
        self.write_bytes(&encode_shard(samples, games, variant)?).map(|_| ())
    }

    /// Writes a shard's bytes ([`encode_shard`]) as the next shard, atomically; returns its
    /// file name in `games/`.
    ///
    /// # Errors
    /// If the file cannot be written.
    pub fn write_bytes(&mut self, bytes: &[u8]) -> Result<String> {
        let name = format!("{}-{:08}{SHARD_SUFFIX}", self.worker, self.seq);
        write_atomic(&self.dir.join(&name), bytes)?;
        self.seq += 1;
        Ok(name)
    }
}

/// Where a self-player's shards go: files in a run directory, or memory, for a caller that
/// sends them on (a worker without a shared disk).
pub enum ShardSink {
    /// `games/WORKER-SEQ.shard` files.
    Files(ShardWriter),
    /// Kept as [`EncodedShard`]s until taken.
    Memory {
        /// The worker's name, given to every shard.
        worker: String,
        /// The sequence number of the next shard.
        seq: u64,
        /// The shards not yet taken.
        out: Vec<EncodedShard>,
    },
}

impl From<ShardWriter> for ShardSink {
    fn from(writer: ShardWriter) -> ShardSink {
        ShardSink::Files(writer)
    }
}

impl ShardSink {
    /// Shards kept in memory for `worker`, numbered from `first_seq`.
    pub fn memory(worker: &str, first_seq: u64) -> ShardSink {
        ShardSink::Memory { worker: worker.to_string(), seq: first_seq, out: Vec::new() }
    }

    /// Stores `samples` (from `games` finished games of `variant`) as the next shard.
    ///
    /// # Errors
    /// If the file cannot be written, or the shard cannot be encoded.
    pub fn write(&mut self, samples: &[Sample], games: u32, variant: Variant) -> Result<()> {
        match self {
            ShardSink::Files(writer) => writer.write(samples, games, variant),
            ShardSink::Memory { worker, seq, out } => {
                let bytes = encode_shard(samples, games, variant)?;
                out.push(EncodedShard {
                    worker: worker.clone(),
                    seq: *seq,
                    games,
                    positions: samples.len() as u32,
                    sha256: sha256_hex(&bytes),
                    bytes,
                });
                *seq += 1;
                Ok(())
            }
        }
    }

    /// The shards stored in memory since the last call (none for files).
    pub fn take(&mut self) -> Vec<EncodedShard> {
        match self {
            ShardSink::Files(_) => Vec::new(),
            ShardSink::Memory { out, .. } => std::mem::take(out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::NetConfig;

    #[test]
    fn publishing_keeps_the_newest_versions() {
        let scratch = tempfile::tempdir().unwrap();
        let run = RunDir::new(scratch.path());
        let device = Device::flex();
        let model = NetConfig { width: 8, blocks: 1, ..NetConfig::default() }.init(&device);
        assert_eq!(run.latest_model(), None);
        for step in 0..6 {
            run.publish_model(step, &model).unwrap();
        }
        assert_eq!(run.latest_model().as_deref(), Some("model-00000005"));
        let kept =
            fs::read_dir(run.models()).unwrap().filter(|e| e.as_ref().unwrap().path().is_dir()).count();
        assert_eq!(kept, MODELS_KEPT);
        run.load_published("model-00000005", &device).unwrap();
        assert!(run.load_published("model-00000000", &device).is_err(), "pruned");
        // A run resumed from step 1 (its version long pruned) publishes it again: it stays, and
        // the versions of steps 2 to 5, from before the resume, go. (Pruned by name, the one
        // just published went instead: the soak run of issue 40 found LATEST naming nothing.)
        assert_eq!(run.publish_model(1, &model).unwrap(), "model-00000001");
        assert_eq!(run.latest_model().as_deref(), Some("model-00000001"));
        run.load_published("model-00000001", &device).unwrap();
        for gone in ["model-00000002", "model-00000005"] {
            assert!(run.load_published(gone, &device).is_err(), "{gone} is from before the resume");
        }
    }

    #[test]
    fn shard_writers_skip_past_names_already_read() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path());
        let mut w = ShardWriter::new(&run, "local");
        assert_eq!(w.next_seq(), 0);
        let read: Vec<String> =
            ["local-00000007.shard", "node2-00000040.shard", "local-00000003.shard", "local-junk.shard"]
                .map(String::from)
                .to_vec();
        w.skip_past(&read);
        assert_eq!(w.next_seq(), 8, "past local's highest, other workers' names ignored");
        w.skip_past(&["local-00000001.shard".to_string()]);
        assert_eq!(w.next_seq(), 8, "never backwards");
    }

    #[test]
    fn shard_writers_continue_their_sequence() {
        let scratch = tempfile::tempdir().unwrap();
        let run = RunDir::new(scratch.path());
        let mut w = ShardWriter::new(&run, "a");
        w.write(&[], 0, Variant::Nine).unwrap();
        w.write(&[], 0, Variant::Nine).unwrap();
        assert_eq!(ShardWriter::new(&run, "a").next_seq(), 2);
        assert_eq!(ShardWriter::new(&run, "b").next_seq(), 0);
        let names = run.new_shards(&HashSet::from(["a-00000000.shard".to_string()]));
        assert_eq!(names, ["a-00000001.shard"]);
        assert_eq!(sanitize_worker("host/1 x"), "host_1_x");
        assert_eq!(sanitize_worker(""), "worker");
    }
}
