"""Training runs from Python (``morris.train``, ``morris.selfplay_worker``): the binary's code in
this process, checked against the binary itself, stopped by Ctrl-C and resumed, and refusing
bad input by name; and ``morris.SelfPlayWorker``, self-play from weights as bytes to shard
bytes."""

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import morris
import pytest

# One thread and a short run: the weights are a function of the config alone.
SMALL = {"schedule.total_steps": 40, "run.threads": 1, "eval.pairs": 1}


def tiny(repo: Path) -> str:
    return str(repo / "configs" / "tiny.toml")


def train_in_subprocess(config, run_dir, overrides, **kwargs):
    """``morris.train`` in a fresh interpreter, where ``run.threads`` sizes the thread pool."""
    code = (
        "import json, sys, morris\n"
        "a = json.loads(sys.argv[1])\n"
        "morris.train(a['config'], a['run_dir'], overrides=a['overrides'], **a['kwargs'])\n"
    )
    args = {"config": config, "run_dir": str(run_dir), "overrides": overrides, "kwargs": kwargs}
    return subprocess.run(
        [sys.executable, "-c", code, json.dumps(args)], capture_output=True, text=True, timeout=600
    )


def metrics(run_dir: Path) -> list:
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


def train_binary(repo: Path):
    """The ``train`` binary of this checkout, if one is built (CI builds it with the Rust tests)."""
    found = [repo / "target" / p / "train" for p in ("release", "debug")]
    found = [p for p in found if p.is_file()]
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


def test_a_run_from_python_writes_the_binarys_run_directory(repo, tmp_path):
    run = tmp_path / "run"
    done = train_in_subprocess(tiny(repo), run, SMALL, quiet=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "", "quiet prints nothing"
    assert (run / "FINISHED").is_file()
    assert (run / "checkpoints" / "step-40" / "model.safetensors").is_file()
    lines = metrics(run)
    assert lines[-1]["step"] == 40
    assert {"loss/total", "perf/positions_per_s", "replay/positions_total"} <= set(lines[-1])
    assert list((run / "tb").glob("events.out.tfevents.*")), "TensorBoard events"
    assert morris._morris.Network(run / "checkpoints" / "step-40").verified
    # The run continues from its checkpoint, as `train --resume` does.
    more = train_in_subprocess(None, run, {"schedule.total_steps": 60, "run.threads": 1}, quiet=True)
    assert more.returncode == 0, more.stderr
    assert metrics(run)[-1]["step"] == 60


def test_same_weights_steps_and_positions_as_the_binary(repo, tmp_path):
    binary = train_binary(repo)
    if binary is None:
        pytest.skip("no train binary built in target/ (cargo build --bin train)")
    py_run, bin_run = tmp_path / "py", tmp_path / "bin"
    done = train_in_subprocess(tiny(repo), py_run, SMALL, quiet=True)
    assert done.returncode == 0, done.stderr
    sets = [a for s in morris.training.overrides_to_set(SMALL) for a in ("--set", s)]
    out = subprocess.run(
        [str(binary), "--config", tiny(repo), "--run-dir", str(bin_run), "--quiet", *sets],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    step = "checkpoints/step-40/model.safetensors"
    assert (py_run / step).read_bytes() == (bin_run / step).read_bytes(), f"{step} differs from the binary's"
    shards = sorted(p.name for p in (py_run / "games").glob("*.shard"))
    assert shards and shards == sorted(p.name for p in (bin_run / "games").glob("*.shard"))
    key = "replay/positions_total"
    assert metrics(py_run)[-1][key] == metrics(bin_run)[-1][key]
    assert metrics(py_run)[-1]["step"] == metrics(bin_run)[-1]["step"] == 40


@pytest.mark.skipif(os.name != "posix", reason="sends SIGINT")
def test_ctrl_c_saves_a_checkpoint_then_raises_keyboard_interrupt(repo, tmp_path):
    run = tmp_path / "run"
    code = (
        "import signal, sys, morris\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)  # even if started with it ignored\n"
        "try:\n"
        "    morris.train(sys.argv[1], sys.argv[2], overrides={'schedule.total_steps': 100000,"
        " 'schedule.checkpoint_every': 100000, 'schedule.eval_every': 0, 'run.threads': 1})\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
        "    sys.exit(7)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, tiny(repo), str(run)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # Wait until it trains (its first published model), then press Ctrl-C.
        deadline = time.monotonic() + 300
        while not (run / "models").is_dir() or not any((run / "models").iterdir()):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the run never published a model"
            time.sleep(0.2)
        time.sleep(2.0)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:  # a failed check leaves no 100,000-step run behind
            proc.kill()
            proc.communicate()
    assert proc.returncode == 7, (stdout, stderr)
    assert "interrupted" in stdout
    assert "checkpoint saved at step" in stderr, stderr
    saved = sorted((run / "checkpoints").glob("step-*"))
    assert saved, "a checkpoint was saved on Ctrl-C"
    assert not (run / "FINISHED").exists()


def test_bad_input_is_a_named_error(repo, tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.toml"):
        morris.train(tmp_path / "missing.toml", tmp_path / "run")
    with pytest.raises(ValueError, match="totl_steps"):
        morris.train(tiny(repo), tmp_path / "run", overrides={"schedule.totl_steps": 5})
    with pytest.raises(ValueError, match="optimizer.learning_rate"):
        morris.train(tiny(repo), tmp_path / "run", overrides={"optimizer.learning_rate": "fast"})
    with pytest.raises(TypeError, match="schedule.total_steps"):
        morris.train(tiny(repo), tmp_path / "run", overrides={"schedule.total_steps": object()})
    with pytest.raises(ValueError, match="section.key"):
        morris.train(tiny(repo), tmp_path / "run", overrides={"total_steps": 5})
    with pytest.raises(FileNotFoundError):
        morris.train(None, tmp_path / "nothing-here")
    assert not (tmp_path / "run").exists(), "nothing was written for a bad config"
    # A directory that holds a run is not started over.
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "config.toml").write_text((repo / "configs" / "tiny.toml").read_text())
    with pytest.raises(FileExistsError, match="taken"):
        morris.train(tiny(repo), tmp_path / "taken")
    with pytest.raises(ValueError, match="wait"):
        morris.selfplay_worker(tmp_path / "taken", "w", wait=-1.0)
    with pytest.raises(FileNotFoundError, match="config.toml"):
        morris.selfplay_worker(tmp_path / "no-run", "w", wait=0.0, quiet=True)


def test_a_self_play_worker_turns_weights_into_shard_bytes(repo, fixture_run, shipped_model, tmp_path):
    text = (repo / "configs" / "tiny.toml").read_text()
    weights = (fixture_run / "checkpoints" / "step-40" / "model.safetensors").read_bytes()
    small = ["selfplay.parallel_games=2", "run.threads=1"]
    worker = morris.SelfPlayWorker(text, "w1", weights, step=40, seed=3, set=small)
    assert worker.model_step == 40
    shards = worker.play(1500)
    assert shards, "finished games come back"
    assert [s["seq"] for s in shards] == list(range(len(shards)))
    assert sum(s["games"] for s in shards) == worker.games
    for s in shards:
        assert s["worker"] == "w1"
        assert hashlib.sha256(s["bytes"]).hexdigest() == s["sha256"]
    # The bytes are a shard as the learner and morris.read_shards read it.
    path = tmp_path / "w1-00000000.shard"
    path.write_bytes(shards[0]["bytes"])
    assert morris.read_shards([path])["positions"] == shards[0]["positions"]
    again = morris.SelfPlayWorker(text, "w1", weights, step=40, seed=3, set=small)
    assert [s["bytes"] for s in again.play(1500)] == [s["bytes"] for s in shards], "same seed, same games"
    # Weights of another network are refused naming the worker; it keeps its own.
    with pytest.raises(morris.FileFormatError, match="w1"):
        worker.set_weights((shipped_model / "model.safetensors").read_bytes(), 80)
    assert worker.model_step == 40
    worker.set_weights(weights, 80)
    assert worker.model_step == 80
    more = worker.play(1500)
    assert more and more[0]["seq"] == len(shards), "the sequence goes on"
    with pytest.raises(ValueError, match="totl_steps"):
        morris.SelfPlayWorker(text, "w2", weights, set=["schedule.totl_steps=3"])
    with pytest.raises(morris.FileFormatError):
        morris.SelfPlayWorker(text, "w2", b"not safetensors")


def test_a_learner_fed_by_a_worker_trains_resumes_and_refuses_damaged_shards(repo, tmp_path):
    run = tmp_path / "run"
    text = (repo / "configs" / "tiny.toml").read_text()
    small = [
        "run.threads=1",
        "selfplay.parallel_games=4",
        "schedule.total_steps=30",
        "schedule.publish_every=10",
        "schedule.checkpoint_every=10",
        "eval.pairs=1",
        "replay.min_positions=256",
    ]
    with pytest.raises(FileNotFoundError, match="config_text"):
        morris.Learner(run)
    with pytest.raises(ValueError, match="totl_steps"):
        morris.Learner(run, text, set=["schedule.totl_steps=3"])
    assert not run.exists(), "nothing is written for a bad config"
    learner = morris.Learner(run, text, set=small)
    step, weights = learner.weights()
    assert step == 0 and len(weights) > 1000
    worker = morris.SelfPlayWorker(learner.config_text, "w1", weights, step=step, seed=1)
    shards = worker.play(600)
    flipped = bytearray(shards[0]["bytes"])
    flipped[-1] ^= 0x01
    bad = dict(shards[0], bytes=bytes(flipped))
    with pytest.raises(morris.FileFormatError, match="shard 0 from worker 'w1'"):
        learner.accept(bad)
    with pytest.raises(TypeError, match="sha256"):
        learner.accept({k: v for k, v in shards[0].items() if k != "sha256"})

    def feed(learner, worker, shards):
        while True:
            assert learner.accept(shards) > 0
            report = learner.train(1000)
            if report["done"]:
                return report
            if report["published_step"] != worker.model_step:
                step, weights = learner.weights()
                worker.set_weights(weights, step)
            shards = worker.play(300)

    assert feed(learner, worker, shards)["step"] == 30
    learner.finish()
    with pytest.raises(RuntimeError, match="finished"):
        learner.train(1)
    assert (run / "FINISHED").is_file() and (run / "checkpoints" / "step-30").is_dir()
    assert metrics(run)[-1]["data/corrupt_shards"] == 1
    # A learner restarted on its directory resumes from it (config_text is only for a new run).
    with pytest.raises(RuntimeError, match="budget"):
        morris.Learner(run, text)
    # Reopened (as a learner restarted after its last step is), it takes shards, trains nothing.
    reopened = morris.Learner(run, reopen=True)
    assert reopened.accept(worker.play(300)) > 0
    report = reopened.train(10)
    assert report["done"] and report["steps"] == 0 and report["step"] == 30
    reopened.finish()
    again = morris.Learner(run, text, set=["schedule.total_steps=40"])
    assert again.weights()[0] == 30
    assert feed(again, worker, worker.play(300))["step"] == 40
    again.finish()
