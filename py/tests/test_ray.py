"""Training on Ray (``morris.ray``): a run of ``configs/tiny.toml`` with two self-play actors on a
local cluster, a killed worker and a killed learner that come back, a damaged shard refused by
name, shards sent twice trained on once, and bad input refused before anything is written.
Skipped where Ray is not installed (``pip install "./py[ray]"``; CI installs it)."""

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import morris
import pytest

ray = pytest.importorskip("ray")
morris_ray = pytest.importorskip("morris.ray")

from morris.ray._actors import LearnerActor  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    """A local Ray cluster for the module: three logical CPUs (a learner and two workers on this
    machine's cores, as the binary shares them), no dashboard."""
    ray.init(num_cpus=3, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def tiny(repo: Path) -> str:
    return str(repo / "configs" / "tiny.toml")


def ledger(run_dir: Path) -> list:
    return [json.loads(line) for line in (run_dir / morris_ray.LEDGER).read_text().splitlines()]


def call_until_back(call, done):
    """``call()`` on an actor Ray is restarting (unavailable meanwhile; the killed process may
    still answer a call made before the kill lands) until ``done(answer)``."""
    for _ in range(240):
        try:
            answer = call()
            if done(answer):
                return answer
        except ray.exceptions.RayActorError:
            pass
        time.sleep(0.5)
    raise AssertionError("the actor did not come back")


def assert_nothing_lost_or_twice(run_dir: Path, summary) -> None:
    """Every shard a worker returned was accepted once or refused, and no bytes twice."""
    entries = ledger(run_dir)
    assert summary.lost == []
    assert len({e["sha256"] for e in entries}) == len(entries), "no shard trained on twice"
    keys = [(e["worker"], e["seq"]) for e in entries]
    assert len(set(keys)) == len(keys)
    # Each worker's shards in order, none missing (the last ones may be left unused at the end).
    by_worker: dict = {}
    for worker, seq in keys:
        by_worker.setdefault(worker, []).append(seq)
    for worker, seqs in by_worker.items():
        assert sorted(seqs) == list(range(len(seqs))), f"worker {worker}: {sorted(seqs)}"


def test_a_run_with_two_workers_survives_a_killed_worker(repo, tmp_path, cluster):
    run_dir = tmp_path / "run"
    killed = []
    back = []

    def kill_a_worker(run, report):
        if not killed and report["step"] >= 40:
            ray.kill(run.workers[0], no_restart=False)
            # Back under a new name (the run goes on meanwhile with the other worker's games).
            name = call_until_back(lambda: ray.get(run.workers[0].name.remote()), lambda n: n != "w0")
            killed.append(name)
        elif killed and not back:
            # Until the restarted worker's games are taken, each report holds the driver a moment
            # (the learner trains only on what the driver hands it), so that the run does not
            # end first on a fast machine.
            if any(worker == killed[0] for worker, _ in report["accepted"]):
                back.append(report["step"])
            else:
                time.sleep(0.5)

    run = morris_ray.RayRun(
        tiny(repo), run_dir, workers=2, learner_cpus=1, overrides={"schedule.total_steps": 200}, quiet=True
    )
    summary = run.run(on_progress=kill_a_worker)
    assert killed, "the worker was killed mid-run"
    assert back, "the restarted worker's games were trained on"
    assert summary.worker_restarts == 1
    assert summary.step == 200 and (run_dir / "FINISHED").is_file()
    assert (run_dir / "checkpoints" / "step-200" / "model.safetensors").is_file()
    lines = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert lines[-1]["step"] == 200
    assert {"loss/total", "perf/positions_per_s", "replay/positions_total"} <= set(lines[-1])
    assert summary.positions == sum(e["positions"] for e in ledger(run_dir)) > 0
    assert summary.shard_bytes > 0 and summary.weight_bytes > 0
    assert_nothing_lost_or_twice(run_dir, summary)
    workers = {e["worker"] for e in ledger(run_dir)}
    assert killed[0].startswith("w0-r") and killed[0] in workers, f"the restarted worker plays as {killed}"
    # The run's model plays in eval match.
    result = morris.play_match(f"az:model={run_dir / 'checkpoints' / 'step-200'},sims=4", "random", pairs=1)
    assert len(result.games) == 2


def test_a_killed_learner_resumes_from_its_checkpoint(repo, tmp_path, cluster):
    run_dir = tmp_path / "run"
    killed = []

    def kill_the_learner(run, report):
        if not killed and report["step"] >= 90 and not report["done"]:
            killed.append(report["step"])
            ray.kill(run.learner, no_restart=False)
            # Back in a new process before the run goes on (the kill lands when it lands: the
            # old process may still train the calls already queued, up to the budget's end).
            call_until_back(lambda: ray.get(run.learner.info.remote()), lambda i: i["pid"] != report["pid"])

    run = morris_ray.RayRun(
        tiny(repo),
        run_dir,
        workers=2,
        learner_cpus=1,
        overrides={"schedule.total_steps": 160, "schedule.checkpoint_every": 40},
        quiet=True,
    )
    summary = run.run(on_progress=kill_the_learner)
    assert killed and summary.learner_restarts == 1
    assert summary.step == 160 and (run_dir / "FINISHED").is_file()
    assert_nothing_lost_or_twice(run_dir, summary)
    assert json.loads((run_dir / "metrics.jsonl").read_text().splitlines()[-1])["step"] == 160


def test_a_learner_killed_after_its_last_step_still_finishes_the_run(repo, tmp_path, cluster):
    run_dir = tmp_path / "run"
    killed = []

    def kill_at_the_end(run, report):
        # The budget is spent and its last step checkpointed; the shards still queued and `finish`
        # go to the learner Ray restarts, which reopens the spent run instead of refusing it.
        if report["done"] and not killed:
            killed.append(report["step"])
            ray.kill(run.learner, no_restart=False)
            call_until_back(lambda: ray.get(run.learner.info.remote()), lambda i: i["pid"] != report["pid"])

    run = morris_ray.RayRun(
        tiny(repo), run_dir, workers=2, learner_cpus=1, overrides={"schedule.total_steps": 50}, quiet=True
    )
    summary = run.run(on_progress=kill_at_the_end)
    assert killed == [50] and summary.learner_restarts == 1
    # 50 is no multiple of checkpoint_every (40): the budget's last step is checkpointed anyway.
    assert summary.step == 50 and (run_dir / "FINISHED").is_file()
    assert (run_dir / "checkpoints" / "step-50").is_dir()
    assert_nothing_lost_or_twice(run_dir, summary)


def test_a_damaged_shard_is_refused_by_name_and_a_shard_sent_twice_is_taken_once(repo, tmp_path, cluster):
    run_dir = tmp_path / "run"
    text = Path(tiny(repo)).read_text()
    learner = ray.remote(LearnerActor).options(num_cpus=0).remote(str(run_dir), text, ["run.threads=1"], 1)
    step, weights = ray.get(learner.weights.options(num_returns=2).remote())
    worker = morris.SelfPlayWorker(
        text, "w1", weights, step=step, seed=1, set=["run.threads=1", "selfplay.parallel_games=4"]
    )
    shards = worker.play(600)
    flipped = bytearray(shards[0]["bytes"])
    flipped[len(flipped) // 2] ^= 0x10
    bad = dict(shards[0], bytes=bytes(flipped))
    out = ray.get(learner.accept.remote([bad, *shards], 1))
    assert [r[:2] for r in out["refused"]] == [["w1", 0]]
    assert "shard 0 from worker 'w1'" in out["refused"][0][2]
    assert out["accepted"] == [["w1", s["seq"]] for s in shards]
    again = ray.get(learner.accept.remote(shards[:1], 1))
    assert again["accepted"] == [] and again["duplicates"] == [["w1", 0]] and again["positions"] == 0
    # A learner opened again on the run (as after a crash) still knows what it took.
    ray.kill(learner)
    reopened = ray.remote(LearnerActor).options(num_cpus=0).remote(str(run_dir), None, [], 1)
    assert ray.get(reopened.accept.remote(shards, 1))["duplicates"] == [["w1", s["seq"]] for s in shards]
    digests = [e["sha256"] for e in ledger(run_dir)]
    assert digests == [hashlib.sha256(s["bytes"]).hexdigest() for s in shards]
    ray.kill(reopened)


def test_bad_input_is_an_error_before_anything_is_written(repo, tmp_path, cluster):
    run_dir = tmp_path / "run"
    with pytest.raises(ValueError, match="totl_steps"):
        morris_ray.RayRun(tiny(repo), run_dir, overrides={"schedule.totl_steps": 3})
    with pytest.raises(morris_ray.ResourceError, match="GPU"):
        morris_ray.RayRun(tiny(repo), run_dir, learner_gpus=1)
    with pytest.raises(morris_ray.ResourceError, match=r"needs 9 CPU .*the Ray cluster has 3"):
        morris_ray.RayRun(tiny(repo), run_dir, workers=8)
    with pytest.raises(morris_ray.ResourceError, match=r'run.device = "cuda"'):
        morris_ray.RayRun(tiny(repo), run_dir, overrides={"run.device": "cuda"})
    with pytest.raises(FileNotFoundError, match="no run in"):
        morris_ray.RayRun(None, run_dir)
    with pytest.raises(ValueError, match="workers must be 1 or more"):
        morris_ray.RayRun(tiny(repo), run_dir, workers=0)
    assert not run_dir.exists(), "nothing is written"
    (run_dir / "checkpoints" / "step-40").mkdir(parents=True)
    with pytest.raises(FileExistsError, match="holds a run"):
        morris_ray.RayRun(tiny(repo), run_dir)


def test_the_command_line_runs_a_run_and_refuses_bad_input(repo, tmp_path):
    run_dir = tmp_path / "run"
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    cmd = [sys.executable, "-m", "morris.ray", "--config", tiny(repo), "--run-dir", str(run_dir)]
    done = subprocess.run(
        [*cmd, "--workers", "1", "--num-cpus", "2", "--set", "schedule.total_steps=40"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "step 40/40" in done.stderr and "finished: step 40" in done.stderr
    assert (run_dir / "FINISHED").is_file()
    again = subprocess.run([*cmd, "--num-cpus", "2"], capture_output=True, text=True, timeout=300, env=env)
    assert again.returncode == 2 and "holds a run" in again.stderr
    usage = subprocess.run(
        [sys.executable, "-m", "morris.ray", "--workers", "2"], capture_output=True, text=True, env=env
    )
    assert usage.returncode == 2 and "--config" in usage.stderr
