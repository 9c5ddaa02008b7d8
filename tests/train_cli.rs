//! End-to-end tests of the `train` binary on `configs/tiny.toml`: a whole run (checkpoints,
//! TensorBoard events read back by an independent reader, metrics), resuming, a SIGKILL mid-run,
//! and bad input.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn train(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_train")).args(args).output().expect("run train")
}

fn eval(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_eval")).args(args).output().expect("run eval")
}

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

fn tiny() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/tiny.toml").display().to_string()
}

/// A fresh scratch directory for one test, removed when the guard drops (also on failure).
fn scratch() -> tempfile::TempDir {
    tempfile::tempdir().expect("a scratch directory")
}

fn checkpoint_steps(run: &Path) -> Vec<u64> {
    let mut steps: Vec<u64> = fs::read_dir(run.join("checkpoints"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_prefix("step-")?.parse().ok())
        .collect();
    steps.sort();
    steps
}

/// The lines of `metrics.jsonl` as `(step, tag → value)`.
fn metrics(run: &Path) -> Vec<(u64, HashMap<String, f64>)> {
    fs::read_to_string(run.join("metrics.jsonl"))
        .expect("metrics.jsonl")
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
            let step = v["step"].as_u64().expect("step");
            let map =
                v.as_object().unwrap().iter().filter_map(|(k, x)| Some((k.clone(), x.as_f64()?))).collect();
            (step, map)
        })
        .collect()
}

// ---- An independent TensorBoard event-file reader: record framing, masked CRC32C, and just
// ---- enough protobuf to get (step, tag, simple_value) out of Event → Summary → Value.

fn masked_crc(bytes: &[u8]) -> u32 {
    let c = crc32c::crc32c(bytes);
    (c.rotate_right(15)).wrapping_add(0xa282_ead8)
}

fn varint(b: &[u8], at: &mut usize) -> u64 {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = b[*at];
        *at += 1;
        v |= ((byte & 0x7f) as u64) << shift;
        if byte & 0x80 == 0 {
            break;
        }
    }
    v
}

/// Calls `f(field, wire_type, payload)` for each field of a protobuf message; varints come as
/// their 8 little-endian bytes.
fn fields(msg: &[u8], mut f: impl FnMut(u64, u64, &[u8])) {
    let mut at = 0;
    while at < msg.len() {
        let key = varint(msg, &mut at);
        let (field, wire) = (key >> 3, key & 7);
        match wire {
            0 => {
                let v = varint(msg, &mut at);
                f(field, wire, &v.to_le_bytes());
            }
            1 => {
                f(field, wire, &msg[at..at + 8]);
                at += 8;
            }
            2 => {
                let n = varint(msg, &mut at) as usize;
                f(field, wire, &msg[at..at + n]);
                at += n;
            }
            5 => {
                f(field, wire, &msg[at..at + 4]);
                at += 4;
            }
            w => panic!("unexpected wire type {w}"),
        }
    }
}

/// Every scalar in an event file as `(step, tag, value)`, checking both CRCs of every record.
fn read_scalars(path: &Path) -> Vec<(i64, String, f32)> {
    let bytes = fs::read(path).expect("event file");
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let len_bytes = &bytes[at..at + 8];
        let len = u64::from_le_bytes(len_bytes.try_into().unwrap()) as usize;
        let len_crc = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap());
        assert_eq!(len_crc, masked_crc(len_bytes), "length CRC at byte {at}");
        let data = &bytes[at + 12..at + 12 + len];
        let data_crc = u32::from_le_bytes(bytes[at + 12 + len..at + 16 + len].try_into().unwrap());
        assert_eq!(data_crc, masked_crc(data), "data CRC at byte {at}");
        at += 16 + len;
        let mut step = 0i64;
        let mut summary: Option<Vec<u8>> = None;
        fields(data, |field, _, payload| match field {
            2 => step = i64::from_le_bytes(payload.try_into().unwrap()),
            5 => summary = Some(payload.to_vec()),
            _ => {}
        });
        let Some(summary) = summary else { continue };
        fields(&summary, |field, _, value| {
            if field != 1 {
                return;
            }
            let (mut tag, mut simple) = (String::new(), None);
            fields(value, |f, _, p| match f {
                1 => tag = String::from_utf8(p.to_vec()).unwrap(),
                2 => simple = Some(f32::from_le_bytes(p.try_into().unwrap())),
                _ => {}
            });
            if let Some(v) = simple {
                out.push((step, tag, v));
            }
        });
    }
    assert_eq!(at, bytes.len(), "no partial record at the end");
    out
}

#[test]
fn tiny_run_writes_checkpoints_events_and_metrics_then_resumes() {
    let scratch = scratch();
    let dir = scratch.path();
    let run = dir.join("run");
    let o = train(&["--config", &tiny(), "--run-dir", run.to_str().unwrap()]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("finished at step 120"), "{stdout}");

    // Checkpoints: the last two plus the best-rated, each complete.
    let steps = checkpoint_steps(&run);
    assert!(steps.contains(&120) && steps.len() <= 3, "{steps:?}");
    for file in ["model.safetensors", "config.json", "optimizer.bpk", "train.toml", "meta.json"] {
        assert!(run.join("checkpoints/step-120").join(file).is_file(), "{file}");
    }
    let meta: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(run.join("checkpoints/step-120/meta.json")).unwrap())
            .unwrap();
    assert_eq!(meta["step"], 120);
    assert!(meta["positions"].as_u64().unwrap() > 0 && meta["games"].as_u64().unwrap() > 0);
    assert!(run.join("checkpoints/best.json").is_file());
    // The weights get the same permissions as every other file the lab writes.
    {
        use std::os::unix::fs::PermissionsExt;
        let mode =
            |f: &str| fs::metadata(run.join("checkpoints/step-120").join(f)).unwrap().permissions().mode();
        assert_eq!(mode("model.safetensors") & 0o777, mode("config.json") & 0o777);
    }
    assert!(fs::read_dir(run.join("games")).unwrap().count() > 0);

    // TensorBoard: every record's CRCs check out, and the scalars equal metrics.jsonl's.
    let tb: Vec<PathBuf> = fs::read_dir(run.join("tb")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(tb.len(), 1);
    let scalars = read_scalars(&tb[0]);
    let m = metrics(&run);
    for tag in [
        "loss/policy",
        "loss/value",
        "loss/total",
        "loss/policy_entropy",
        "loss/value_accuracy",
        "opt/learning_rate",
        "opt/grad_norm",
        "perf/positions_per_s",
        "perf/nn_evals_per_s",
        "perf/train_samples_per_s",
        "selfplay/game_length",
        "eval/elo",
        "eval/score_vs_random",
    ] {
        let in_tb: Vec<(i64, f32)> = scalars.iter().filter(|s| s.1 == tag).map(|s| (s.0, s.2)).collect();
        let in_jsonl: Vec<(i64, f32)> =
            m.iter().filter_map(|(step, map)| map.get(tag).map(|v| (*step as i64, *v as f32))).collect();
        assert!(!in_tb.is_empty(), "{tag} logged");
        assert_eq!(in_tb, in_jsonl, "{tag}");
    }

    // The policy loss falls over the run (first two logged intervals against the last two).
    let policy: Vec<f64> = m.iter().filter_map(|(_, map)| map.get("loss/policy").copied()).collect();
    assert!(policy.len() >= 6, "{policy:?}");
    let early = (policy[0] + policy[1]) / 2.0;
    let late = (policy[policy.len() - 1] + policy[policy.len() - 2]) / 2.0;
    assert!(late < early, "policy loss {early} -> {late}: {policy:?}");

    // Starting again into the same directory is refused: nothing on disk is overwritten.
    let o = train(&["--config", &tiny(), "--run-dir", run.to_str().unwrap()]);
    let (_, stderr) = text(&o);
    assert!(!o.status.success() && stderr.contains("--resume"), "{stderr}");

    // Resuming a finished run says so and touches nothing.
    let tb_files = fs::read_dir(run.join("tb")).unwrap().count();
    let o = train(&["--resume", run.to_str().unwrap()]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success() && stdout.contains("already finished at step 120"), "{stdout}{stderr}");
    assert!(!stderr.contains("resumed"), "{stderr}");
    assert_eq!(fs::read_dir(run.join("tb")).unwrap().count(), tb_files);

    // --resume continues from step 120 with the saved optimizer, replay counters and schedule.
    let o = train(&["--resume", run.to_str().unwrap(), "--set", "schedule.total_steps=160"]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("resumed from") && stderr.contains("at step 120"), "{stderr}");
    assert!(stdout.contains("finished at step 160"), "{stdout}");
    let after: Vec<u64> = metrics(&run).iter().map(|x| x.0).filter(|&s| s > 120).collect();
    assert!(after.first() == Some(&130), "the first step logged after resuming: {after:?}");
    let meta2: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(run.join("checkpoints/step-160/meta.json")).unwrap())
            .unwrap();
    assert!(meta2["samples_drawn"].as_u64() > meta["samples_drawn"].as_u64());
    assert!(meta2["wall_time_s"].as_f64() > meta["wall_time_s"].as_f64());

    // A checkpoint copied without its run's games resumes with one warning that counts the
    // missing shards (not one per shard, and not counted as corrupt).
    let moved = dir.join("moved");
    fs::create_dir_all(moved.join("checkpoints/step-160")).unwrap();
    for e in fs::read_dir(run.join("checkpoints/step-160")).unwrap() {
        let e = e.unwrap();
        fs::copy(e.path(), moved.join("checkpoints/step-160").join(e.file_name())).unwrap();
    }
    let o = train(&["--resume", moved.to_str().unwrap(), "--set", "schedule.total_steps=180"]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert_eq!(stderr.matches("shard(s) the checkpoint had read are not in").count(), 1, "{stderr}");
    assert!(!stderr.contains("misses a shard"), "{stderr}");
    let last = |key: &str| metrics(&moved).into_iter().rev().find_map(|(_, m)| m.get(key).copied());
    assert!(last("data/missing_shards").is_some_and(|n| n >= 1.0), "{:?}", last("data/missing_shards"));
    assert_eq!(last("data/corrupt_shards"), Some(0.0));
}

#[test]
fn a_sigkill_mid_run_leaves_a_checkpoint_that_resumes() {
    let scratch = scratch();
    let dir = scratch.path();
    let run = dir.join("run");
    let mut child = Command::new(env!("CARGO_BIN_EXE_train"))
        .args(["--config", &tiny(), "--run-dir", run.to_str().unwrap()])
        .args(["--set", "schedule.total_steps=100000", "--set", "schedule.checkpoint_every=10", "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn train");
    let start = Instant::now();
    while checkpoint_steps(&run).len() < 2 && start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(50));
    }
    // Kill at an arbitrary moment while it keeps writing checkpoints, shards and logs.
    std::thread::sleep(Duration::from_millis(700));
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");
    let steps = checkpoint_steps(&run);
    let last = *steps.last().expect("a checkpoint was written before the kill");
    let o =
        train(&["--resume", run.to_str().unwrap(), "--set", &format!("schedule.total_steps={}", last + 20)]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains(&format!("at step {last}")), "{stderr}");
    assert!(stdout.contains(&format!("finished at step {}", last + 20)), "{stdout}");
}

#[test]
fn bad_configs_and_checkpoints_fail_with_the_key_or_file_named() {
    let scratch = scratch();
    let dir = scratch.path();
    let run = dir.join("run");
    let run_s = run.to_str().unwrap();
    for (set, needle) in [
        ("optimizer.lerning_rate=0.1", "lerning_rate"),
        ("optimizer.learning_rate=7", "optimizer.learning_rate"),
        ("selfplay.parallel_games=\"many\"", "parallel_games"),
        ("eval.opponents=[\"minimax:depth=0\"]", "eval.opponents"),
        ("run.threads=10000", "run.threads"),
        ("selfplay.parallel_games=99999999999", "selfplay.parallel_games"),
    ] {
        let o = train(&["--config", &tiny(), "--run-dir", run_s, "--set", set]);
        let (_, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{set}: {stderr}");
        assert!(stderr.contains(needle) && stderr.contains("tiny.toml"), "{set}: {stderr}");
        assert!(!stderr.contains("panicked"), "{set}: {stderr}");
        assert!(!run.exists(), "nothing is started for a bad config");
    }
    // Devices: one this build lacks, or an unknown name, stops the run before anything is
    // written, naming the key (GPU devices that are absent: tests/gpu.rs).
    for (set, key, name) in [
        ("run.device=\"cuda:1\"", "run.device", "cuda:1"),
        ("selfplay.device=\"tpu\"", "selfplay.device", "tpu"),
    ] {
        let o = train(&["--config", &tiny(), "--run-dir", run_s, "--set", set]);
        let (_, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{set}: {stderr}");
        assert!(stderr.contains(&format!("{key}: ")) && stderr.contains(name), "{set}: {stderr}");
        assert!(stderr.contains("this build supports: flex"), "{set}: {stderr}");
        assert!(!run.exists(), "nothing is written for a device that cannot be used");
    }
    let empty = dir.join("empty.toml");
    fs::write(&empty, "\n").unwrap();
    let o = train(&["--config", empty.to_str().unwrap(), "--run-dir", run_s]);
    let (_, stderr) = text(&o);
    assert!(!o.status.success() && stderr.contains("empty") && stderr.contains("empty.toml"), "{stderr}");
    assert!(!run.exists());
    let bad = dir.join("bad.toml");
    fs::write(&bad, "[schedule]\ntotal_steps = \"ten\"\n").unwrap();
    let (_, stderr) = text(&train(&["--config", bad.to_str().unwrap(), "--run-dir", run_s]));
    assert!(stderr.contains("total_steps") && stderr.contains("bad.toml"), "{stderr}");
    let (_, stderr) = text(&train(&["--config", dir.join("none.toml").to_str().unwrap()]));
    assert!(stderr.contains("none.toml"), "{stderr}");
    let (_, stderr) = text(&train(&["--resume", dir.join("nothing").to_str().unwrap()]));
    assert!(stderr.contains("nothing"), "{stderr}");

    // A corrupt checkpoint is named, and the process exits non-zero without a panic.
    let o = train(&["--config", &tiny(), "--run-dir", run_s, "--set", "schedule.total_steps=40", "--quiet"]);
    assert!(o.status.success(), "{}", text(&o).1);
    // A worker asked for a device it cannot use writes nothing.
    let shards = fs::read_dir(run.join("games")).unwrap().count();
    let o = train(&["selfplay", "--run-dir", run_s, "--device", "tpu", "--wait", "0"]);
    let (_, stderr) = text(&o);
    assert!(!o.status.success() && stderr.contains("--device: unknown device 'tpu'"), "{stderr}");
    assert_eq!(fs::read_dir(run.join("games")).unwrap().count(), shards);
    let ckpt = run.join("checkpoints/step-40");
    fs::write(ckpt.join("optimizer.bpk"), b"not a burnpack").unwrap();
    let o = train(&["--resume", ckpt.to_str().unwrap(), "--set", "schedule.total_steps=50"]);
    let (_, stderr) = text(&o);
    assert!(
        !o.status.success() && stderr.contains("optimizer.bpk") && !stderr.contains("panicked"),
        "{stderr}"
    );
    // Without its manifest (as written before checksums) a malformed file is still named.
    fs::remove_file(ckpt.join("manifest.json")).unwrap();
    fs::write(ckpt.join("meta.json"), b"{").unwrap();
    let (_, stderr) = text(&train(&["--resume", ckpt.to_str().unwrap()]));
    assert!(stderr.contains("meta.json") && !stderr.contains("panicked"), "{stderr}");
}

#[test]
fn separate_learner_and_selfplay_workers_share_a_run_directory() {
    let scratch = scratch();
    let dir = scratch.path();
    let run = dir.join("run");
    let run_s = run.to_str().unwrap();
    let bin = env!("CARGO_BIN_EXE_train");
    let learner = Command::new(bin)
        .args([
            "learn",
            "--config",
            &tiny(),
            "--run-dir",
            run_s,
            "--set",
            "schedule.total_steps=60",
            "--quiet",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the learner");
    // w2 names its device, as a worker on a machine unlike the learner's would.
    let workers: Vec<_> = [("w1", None), ("w2", Some("flex"))]
        .into_iter()
        .map(|(w, device)| {
            let mut worker = Command::new(bin);
            worker.args(["selfplay", "--run-dir", run_s, "--worker", w, "--quiet", "--minutes", "3"]);
            if let Some(device) = device {
                worker.args(["--device", device]);
            }
            worker.stderr(Stdio::piped()).spawn().expect("spawn a worker")
        })
        .collect();
    let o = learner.wait_with_output().expect("learner");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The workers stop by themselves once the learner has finished.
    for w in workers {
        let o = w.wait_with_output().expect("worker");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    assert!(run.join("FINISHED").is_file());
    assert!(checkpoint_steps(&run).contains(&60));
    let shards: Vec<String> = fs::read_dir(run.join("games"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    for w in ["w1-", "w2-"] {
        assert!(shards.iter().any(|s| s.starts_with(w)), "no shard from {w}: {shards:?}");
    }
    // The learner read the workers' shards (which worker's come first is a race).
    let meta: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(run.join("checkpoints/step-60/meta.json")).unwrap())
            .unwrap();
    let read: Vec<&str> = meta["shards"].as_array().unwrap().iter().filter_map(|s| s.as_str()).collect();
    assert!(
        !read.is_empty() && read.iter().all(|s| s.starts_with("w1-") || s.starts_with("w2-")),
        "{read:?}"
    );
    // A worker without a run to join says what is missing.
    let o = Command::new(bin)
        .args(["selfplay", "--run-dir", dir.join("none").to_str().unwrap(), "--wait", "0.5"])
        .output()
        .unwrap();
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("config.toml"));
}

/// Copies the directory tree `from` into `to`.
fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn a_run_written_before_the_store_refactor_resumes_and_its_export_plays() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/format-v1");
    let scratch = scratch();
    let run = scratch.path().join("run");
    copy_tree(&fixtures.join("run"), &run);
    let o = train(&["--resume", run.to_str().unwrap(), "--set", "schedule.total_steps=60"]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("finished at step 60"), "{stdout}");
    assert!(checkpoint_steps(&run).contains(&60));
    // The step-60 checkpoint has read the old shard: its replay list still names it.
    let meta: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(run.join("checkpoints/step-60/meta.json")).unwrap())
            .unwrap();
    assert!(meta["shards"].as_array().unwrap().iter().any(|s| s == "local-00000000.shard"), "{meta}");

    // The old exported model plays a match.
    let model = format!("az:model={},sims=4", fixtures.join("exported").display());
    let records = scratch.path().join("games.jsonl");
    let o = Command::new(env!("CARGO_BIN_EXE_eval"))
        .args(["match", &model, "random", "--pairs", "1", "--out", records.to_str().unwrap()])
        .output()
        .expect("run eval");
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert_eq!(fs::read_to_string(&records).unwrap().lines().count(), 2);
    assert!(stderr.contains("loaded unverified"), "the v1 export has no manifest: {stderr}");
}

/// Starts a long tiny run in the background and waits for its first checkpoint.
fn spawn_long_run(run: &Path) -> std::process::Child {
    let child = Command::new(env!("CARGO_BIN_EXE_train"))
        .args(["--config", &tiny(), "--run-dir", run.to_str().unwrap()])
        .args(["--set", "schedule.total_steps=1000000", "--set", "schedule.checkpoint_every=50", "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn train");
    let start = Instant::now();
    while checkpoint_steps(run).is_empty() && start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!checkpoint_steps(run).is_empty(), "the run wrote no checkpoint");
    child
}

#[test]
fn a_second_learner_and_a_duplicate_worker_are_refused_until_the_holder_dies() {
    let scratch = scratch();
    let run = scratch.path().join("run");
    let run_s = run.to_str().unwrap();
    let mut first = spawn_long_run(&run);
    let pid = format!("pid {}", first.id());

    // A second learner, by every way of naming the run.
    for args in [vec!["--run-dir", run_s], vec!["--resume", run_s], vec!["learn", "--run-dir", run_s]] {
        let o = train(&args);
        let (_, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains("learner.lock") && stderr.contains(&pid), "{args:?}: {stderr}");
    }
    // The in-process self-play plays as `local`: a worker of that name is refused.
    let o = train(&["selfplay", "--run-dir", run_s, "--worker", "local", "--wait", "1"]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("worker-local.lock") && stderr.contains(&pid), "{stderr}");
    // Two workers of one name: the second is refused while the first plays.
    let w1 = Command::new(env!("CARGO_BIN_EXE_train"))
        .args(["selfplay", "--run-dir", run_s, "--worker", "w1", "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn worker");
    let lock = run.join("locks/worker-w1.lock");
    let start = Instant::now();
    while !fs::read_to_string(&lock).unwrap_or_default().contains(&format!("pid {}", w1.id()))
        && start.elapsed() < Duration::from_secs(60)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    let o = train(&["selfplay", "--run-dir", run_s, "--worker", "w1", "--wait", "1"]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("worker-w1.lock") && stderr.contains(&format!("pid {}", w1.id())), "{stderr}");

    // SIGKILL: the kernel drops the locks, and a restart of each role succeeds.
    first.kill().unwrap();
    first.wait().unwrap();
    // SIGTERM stops the worker cleanly: its finished games are written, exit 128 + 15.
    let sent = Command::new("kill").args(["-TERM", &w1.id().to_string()]).status().expect("run kill");
    assert!(sent.success());
    let o = w1.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(143), "{stderr}");
    assert!(stderr.contains("stopped by SIGTERM") && stderr.contains("w1"), "{stderr}");
    let last = *checkpoint_steps(&run).last().unwrap();
    let o = train(&["--resume", run_s, "--set", &format!("schedule.total_steps={}", last + 10), "--quiet"]);
    assert!(o.status.success(), "{}", text(&o).1);
    let o = train(&["selfplay", "--run-dir", run_s, "--worker", "w1", "--quiet", "--minutes", "0"]);
    assert!(o.status.success(), "{}", text(&o).1);
}

#[test]
fn sigint_saves_a_checkpoint_at_the_interrupted_step_and_resume_continues_from_it() {
    let scratch = scratch();
    let run = scratch.path().join("run");
    let run_s = run.to_str().unwrap();
    let child = spawn_long_run(&run);
    std::thread::sleep(Duration::from_millis(500));
    // The signal goes to the process itself (not through a shell, which could ignore it).
    let sent = Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("run kill");
    assert!(sent.success());
    let o = child.wait_with_output().expect("wait for train");
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("stopped by SIGINT") && stderr.contains("resume with"), "{stderr}");
    // The checkpoint of the interrupted step is the newest, and nothing half-written is left.
    let step: u64 = stderr
        .split("checkpoint saved at step ")
        .nth(1)
        .and_then(|s| s.split(';').next())
        .and_then(|s| s.trim().parse().ok())
        .expect("the step in the message");
    assert_eq!(checkpoint_steps(&run).last(), Some(&step), "{stderr}");
    let leftovers: Vec<_> = ["checkpoints", "models", "games"]
        .iter()
        .flat_map(|d| fs::read_dir(run.join(d)).unwrap().flatten())
        .filter(|e| e.file_name().to_string_lossy().contains("tmp"))
        .map(|e| e.path())
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    assert!(!run.join("FINISHED").exists(), "an interrupted run is not finished");

    let o = train(&["--resume", run_s, "--set", &format!("schedule.total_steps={}", step + 20)]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains(&format!("step-{step} at step {step}")), "{stderr}");
    assert!(stdout.contains(&format!("finished at step {}", step + 20)), "{stdout}");
}

#[test]
fn one_thread_and_one_seed_give_byte_identical_shards_and_weights() {
    let scratch = scratch();
    let one_thread = ["--set", "run.threads=1", "--set", "schedule.eval_every=0", "--quiet"];
    let run = |name: &str, seed: u64| {
        let dir = scratch.path().join(name);
        let seed = format!("run.seed={seed}");
        let o = train(
            &[&["--config", &tiny(), "--run-dir", dir.to_str().unwrap(), "--set", &seed], &one_thread[..]]
                .concat(),
        );
        assert!(o.status.success(), "{}", text(&o).1);
        dir
    };
    // Every shard, every published model version and every checkpoint's weights.
    let files = |dir: &Path| -> Vec<String> {
        let mut out = Vec::new();
        for sub in ["games", "models", "checkpoints"] {
            for e in fs::read_dir(dir.join(sub)).unwrap().flatten() {
                let name = format!("{sub}/{}", e.file_name().to_string_lossy());
                if name.ends_with(".shard") {
                    out.push(name);
                } else if e.path().join("model.safetensors").is_file() {
                    out.push(format!("{name}/model.safetensors"));
                }
            }
        }
        out.sort();
        out
    };
    let read = |dir: &Path, f: &str| fs::read(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
    let (a, b, c) = (run("a", 7), run("b", 7), run("c", 8));
    let names = files(&a);
    assert!(names.len() >= 6, "{names:?}");
    assert_eq!(names, files(&b));
    for f in &names {
        assert!(read(&a, f) == read(&b, f), "{f} differs between two runs with the same seed");
    }
    assert!(read(&a, "games/local-00000000.shard") != read(&c, "games/local-00000000.shard"));
    assert!(
        read(&a, "checkpoints/step-120/model.safetensors")
            != read(&c, "checkpoints/step-120/model.safetensors")
    );
    // The optimizer state lists its tensors in a different order each time (burn's map), so it
    // is compared by what it does: resumed for 20 steps, both runs reach the same weights.
    for dir in [&a, &b] {
        let o = train(
            &[&["--resume", dir.to_str().unwrap(), "--set", "schedule.total_steps=140"], &one_thread[..]]
                .concat(),
        );
        assert!(o.status.success(), "{}", text(&o).1);
    }
    let f = "checkpoints/step-140/model.safetensors";
    assert!(read(&a, f) == read(&b, f), "{f} differs after resuming both runs");
    // Two threads (self-play beside the learner, two self-play groups): deterministic too.
    let two = |name: &str| {
        let dir = scratch.path().join(name);
        let o = train(&[
            "--config",
            &tiny(),
            "--run-dir",
            dir.to_str().unwrap(),
            "--set",
            "run.threads=2",
            "--quiet",
        ]);
        assert!(o.status.success(), "{}", text(&o).1);
        dir
    };
    let (d, e) = (two("d"), two("e"));
    for f in files(&d) {
        assert!(read(&d, &f) == read(&e, &f), "{f} differs between two 2-thread runs");
    }
    // So is every metric but the clock's.
    let strip = |dir: &Path| -> Vec<(u64, Vec<(String, u64)>)> {
        metrics(dir)
            .into_iter()
            .map(|(step, m)| {
                let mut kept: Vec<(String, u64)> = m
                    .into_iter()
                    .filter(|(k, _)| !k.starts_with("perf/") && !k.contains("wall_time"))
                    .map(|(k, v)| (k, v.to_bits()))
                    .collect();
                kept.sort();
                (step, kept)
            })
            .collect()
    };
    assert_eq!(strip(&a), strip(&b));
}

/// Flips one bit in each of `count` places of the file's last `tail` bytes (past any header).
fn flip_bits(path: &Path, count: usize, tail: usize) {
    let mut bytes = fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let start = bytes.len().saturating_sub(tail);
    for k in 0..count {
        let at = start + (k * 7919) % (bytes.len() - start);
        bytes[at] ^= 1 << (k % 8);
    }
    fs::write(path, bytes).unwrap();
}

#[test]
fn flipped_bits_in_each_stored_file_are_named_and_resume_takes_the_newest_checkpoint_that_verifies() {
    let scratch = scratch();
    let run = scratch.path().join("run");
    let run_s = run.to_str().unwrap();
    let o = train(&["--config", &tiny(), "--run-dir", run_s, "--set", "schedule.eval_every=0", "--quiet"]);
    assert!(o.status.success(), "{}", text(&o).1);
    assert_eq!(checkpoint_steps(&run), [80, 120]);
    for f in ["model.safetensors", "config.json", "optimizer.bpk", "train.toml", "meta.json"] {
        let m = fs::read_to_string(run.join("checkpoints/step-120/manifest.json")).unwrap();
        assert!(m.contains(f), "{f} is in the manifest: {m}");
    }

    // Weights of the newest checkpoint: resume skips it (named), sets it aside, resumes from 80.
    flip_bits(&run.join("checkpoints/step-120/model.safetensors"), 20, 10_000);
    flip_bits(&run.join("games/local-00000000.shard"), 1, 100);
    let o = train(&["--resume", run_s, "--set", "schedule.total_steps=160"]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("skipped") && stderr.contains("step-120/model.safetensors"), "{stderr}");
    assert!(stderr.contains("step-80 at step 80"), "{stderr}");
    assert!(stderr.contains("local-00000000.shard") && stderr.contains("CRC-32C"), "{stderr}");
    assert!(run.join("checkpoints/corrupt-step-120/model.safetensors").is_file(), "set aside, not deleted");
    assert!(stdout.contains("finished at step 160"), "{stdout}");
    let last = metrics(&run).into_iter().rev().find_map(|(_, m)| m.get("data/corrupt_shards").copied());
    assert!(last.is_some_and(|n| n >= 1.0), "{last:?}");

    // The optimizer state and the metadata: named too.
    for (file, steps) in [("optimizer.bpk", 200), ("meta.json", 240)] {
        let newest = *checkpoint_steps(&run).last().unwrap();
        let path = run.join(format!("checkpoints/step-{newest}/{file}"));
        flip_bits(&path, 1, 40);
        let o = train(&["--resume", run_s, "--set", &format!("schedule.total_steps={steps}"), "--quiet"]);
        let (_, stderr) = text(&o);
        assert!(o.status.success(), "{file}: {stderr}");
        assert!(stderr.contains(&format!("step-{newest}/{file}")), "{file}: {stderr}");
        // Asked for by name, the checkpoint is refused with the file named.
        let o = Command::new(env!("CARGO_BIN_EXE_eval"))
            .args(["export", "--checkpoint"])
            .arg(run.join(format!("checkpoints/corrupt-step-{newest}")))
            .arg("--out")
            .arg(scratch.path().join(format!("out-{newest}")))
            .output()
            .unwrap();
        let (_, stderr) = text(&o);
        assert!(!o.status.success() && stderr.contains(file) && !stderr.contains("panicked"), "{stderr}");
    }
    // Healthy checkpoints are all still there.
    let steps = checkpoint_steps(&run);
    assert!(steps.contains(&240) && steps.len() >= 2, "{steps:?}");

    // An exported model with a flipped bit does not play.
    let out = scratch.path().join("exported");
    let newest = run.join(format!("checkpoints/step-{}", steps.last().unwrap()));
    let o = Command::new(env!("CARGO_BIN_EXE_eval"))
        .args(["export", "--checkpoint", newest.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o).1);
    flip_bits(&out.join("model.safetensors"), 1, 1000);
    let o = Command::new(env!("CARGO_BIN_EXE_eval"))
        .args(["match", &format!("az:model={},sims=2", out.display()), "random", "--pairs", "1"])
        .output()
        .unwrap();
    let (_, stderr) = text(&o);
    assert!(
        !o.status.success() && stderr.contains("model.safetensors") && !stderr.contains("panicked"),
        "{stderr}"
    );
}

/// Every path under `dir` whose name marks an interrupted write.
fn leftovers(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".tmp-write") || name.starts_with(".tmp-") || name.starts_with(".old-") {
            out.push(e.path());
        } else if e.path().is_dir() {
            out.extend(leftovers(&e.path()));
        }
    }
    out
}

#[test]
fn ten_kills_and_resumes_leave_no_leftovers_and_never_log_a_step_twice() {
    let scratch = scratch();
    let run = scratch.path().join("run");
    let run_s = run.to_str().unwrap();
    let mut rng = 0x2545_f491_4f6c_dd1d_u64;
    for round in 0..10 {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_train"));
        if round == 0 {
            cmd.args(["--config", &tiny(), "--run-dir", run_s]);
        } else {
            cmd.args(["--resume", run_s]);
        }
        let mut child = cmd
            .args([
                "--set",
                "schedule.total_steps=1000000",
                "--set",
                "schedule.checkpoint_every=20",
                "--quiet",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn train");
        let before = checkpoint_steps(&run).last().copied();
        let start = Instant::now();
        while checkpoint_steps(&run).last().copied() == before && start.elapsed() < Duration::from_secs(120) {
            std::thread::sleep(Duration::from_millis(20));
        }
        // Then a pseudo-random moment, while it writes shards, models, checkpoints and logs.
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        std::thread::sleep(Duration::from_millis(rng % 600));
        child.kill().expect("SIGKILL");
        child.wait().expect("reap");
    }
    let last = *checkpoint_steps(&run).last().expect("checkpoints");
    let o = train(&["--resume", run_s, "--set", &format!("schedule.total_steps={}", last + 20), "--quiet"]);
    assert!(o.status.success(), "{}", text(&o).1);
    assert_eq!(leftovers(&run), Vec::<PathBuf>::new());
    let steps: Vec<u64> = metrics(&run).into_iter().map(|(s, _)| s).collect();
    assert!(steps.windows(2).all(|w| w[0] < w[1]), "{steps:?}");
    assert_eq!(steps.last(), Some(&(last + 20)));
}

/// Runs `tiny.toml` under the preset of `variant` (numbered `id` in shards) for `steps`, checks
/// that its shards record the variant and that it resumes for `steps / 2` more, exports it and
/// checks the card, and plays a match under its rules. Returns the `az:` spec of the export.
fn variant_run_resumes_exports_and_plays(scratch: &Path, variant: &str, id: u8, steps: u32) -> String {
    let run = scratch.join("run");
    let run_s = run.to_str().unwrap();
    let (preset, total) = (format!("rules.preset={variant}"), format!("schedule.total_steps={steps}"));
    let set = ["--set", &preset, "--set", &total, "--set", "schedule.eval_every=0"];
    let o = train(&[&["--config", &tiny(), "--run-dir", run_s, "--quiet"][..], &set[..]].concat());
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    let config = fs::read_to_string(run.join(format!("checkpoints/step-{steps}/config.json"))).unwrap();
    assert!(config.contains(&format!("\"variant\": \"{variant}\"")), "{config}");
    for shard in fs::read_dir(run.join("games")).unwrap() {
        let bytes = fs::read(shard.unwrap().path()).unwrap();
        assert_eq!(
            (u32::from_le_bytes(bytes[8..12].try_into().unwrap()), bytes[20]),
            (5, id),
            "v5, {variant}"
        );
    }
    let resumed = steps + steps / 2;
    let o = train(&["--resume", run_s, "--set", &format!("schedule.total_steps={resumed}")]);
    let (stdout, stderr) = text(&o);
    assert!(
        o.status.success() && stdout.contains(&format!("finished at step {resumed}")),
        "{stdout}\n{stderr}"
    );
    assert!(!stderr.contains("warning"), "{variant}'s shards are read back: {stderr}");

    let exported = scratch.join("exported");
    let o = eval(&["export", "--checkpoint", run_s, "--out", exported.to_str().unwrap()]);
    assert!(o.status.success(), "{:?}", text(&o));
    let card = fs::read_to_string(exported.join("model.json")).unwrap();
    let (v, r) = (format!("\"variant\": \"{variant}\""), format!("\"rules\": \"{variant}\""));
    assert!(card.contains(&v) && card.contains(&r), "{card}");
    let model = format!("az:model={},sims=4", exported.display());
    let o = eval(&["match", &model, "minimax:depth=1", "--pairs", "1", "--rules", variant]);
    assert!(o.status.success(), "{:?}", text(&o));
    model
}

/// Twelve men's morris through training: `rules.preset = "twelve"` trains a network that records
/// its variant (in its config, its shards and its export), resumes, plays a match under twelve's
/// rules, and is refused, naming both variants, under nine's; a network that says it plays
/// nine while the rules say twelve is a config error naming the key.
#[test]
fn a_twelve_mens_morris_run_records_its_variant_resumes_and_is_refused_by_nine() {
    let scratch = scratch();
    let model = variant_run_resumes_exports_and_plays(scratch.path(), "twelve", 1, 40);
    let o = eval(&["match", &model, "random", "--pairs", "1"]);
    let (_, stderr) = text(&o);
    assert!(!o.status.success(), "a twelve model under nine's rules");
    assert!(stderr.contains("plays the 'twelve' variant, but the game is 'nine'"), "{stderr}");

    let o = train(&[
        "--config",
        &tiny(),
        "--run-dir",
        scratch.path().join("bad").to_str().unwrap(),
        "--set",
        "rules.variant=twelve",
        "--set",
        "model.variant=nine",
    ]);
    let (_, stderr) = text(&o);
    assert!(!o.status.success() && stderr.contains("model.variant"), "{stderr}");
    assert!(!scratch.path().join("bad").exists(), "nothing written for a bad config");
}

/// Lasker morris through training, as twelve's above: a run under `rules.preset = "lasker"`
/// writes shards of variant 3 (games whose placements mix with slides), resumes, and its export
/// plays a match under Lasker's rules and is refused under twelve's.
#[test]
fn a_lasker_morris_run_records_its_variant_resumes_and_plays_a_match() {
    let scratch = scratch();
    let model = variant_run_resumes_exports_and_plays(scratch.path(), "lasker", 3, 20);
    let o = eval(&["match", &model, "random", "--pairs", "1", "--rules", "twelve"]);
    let (_, stderr) = text(&o);
    assert!(stderr.contains("plays the 'lasker' variant, but the game is 'twelve'"), "{stderr}");
}

/// Six men's morris through training: its network is sized by its 16-point board (272 actions),
/// its shards say variant 4, the run resumes, and its export plays a match under six's rules
/// and is refused, naming both variants, under nine's.
#[test]
fn a_six_mens_morris_run_records_its_variant_resumes_and_plays_a_match() {
    let scratch = scratch();
    let model = variant_run_resumes_exports_and_plays(scratch.path(), "six", 4, 20);
    let o = eval(&["match", &model, "random", "--pairs", "1"]);
    let (_, stderr) = text(&o);
    assert!(!o.status.success(), "a six model under nine's rules");
    assert!(stderr.contains("plays the 'six' variant, but the game is 'nine'"), "{stderr}");
}

/// Three men's morris through training: its network is sized by its 9 points and 160 actions
/// (moves in blocks of 16), its shards say variant 5, the run resumes, and its export plays a
/// match under three's rules and is refused, naming both variants, under six's.
#[test]
fn a_three_mens_morris_run_records_its_variant_resumes_and_plays_a_match() {
    let scratch = scratch();
    let model = variant_run_resumes_exports_and_plays(scratch.path(), "three", 5, 20);
    let o = eval(&["match", &model, "random", "--pairs", "1", "--rules", "six"]);
    let (_, stderr) = text(&o);
    assert!(!o.status.success(), "a three model under six's rules");
    assert!(stderr.contains("plays the 'three' variant, but the game is 'six'"), "{stderr}");
}
