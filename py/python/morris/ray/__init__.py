"""Training on a Ray cluster: one learner actor and N self-play actors running the code of the
``train`` binary (``morris.Learner`` and ``morris.SelfPlayWorker``), with the weights going out
through Ray's object store once per publication and the finished games coming back as object
references.

The learner runs on the driver's node (its run directory is a path there: checkpoints,
``metrics.jsonl``, TensorBoard events, exactly ``train``'s); the workers go wherever the cluster
has room. Ray restarts a worker that dies (it plays on under a new name and seed) and the
learner (it resumes from the run's last checkpoint and the shards accepted since); a ledger of
accepted shards in the run directory keeps a shard sent again from being trained on twice, and a
shard that fails its checksum is refused with its worker's name.

    python -m morris.ray --config configs/default.toml --workers 2 [--address auto]

or, from Python, ``morris.ray.run("configs/tiny.toml", "runs/tiny", workers=2)``. Needs the
``ray`` extra (``pip install "./py[ray]"``) and the same ``morris`` package on every node.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any, Callable, Optional, TextIO, Union

try:
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
except ImportError as e:  # pragma: no cover - only without the extra
    raise ImportError('morris.ray needs Ray: pip install "morris-lab[ray]" (or "./py[ray]")') from e

try:
    import tomllib
except ImportError:  # pragma: no cover - Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

from morris.ray._actors import LEDGER, LearnerActor, WorkerActor
from morris.training import overrides_to_set, resolve_config

__all__ = ["LEDGER", "RayRun", "ResourceError", "RunSummary", "run"]

Path_ = Union[str, "PathLike[str]"]

# A call to an actor that Ray is restarting fails at once: the driver waits this long before
# calling again, up to _LEARNER_TRIES times for the learner (whose restarts are few).
_RETRY_PAUSE_S = 0.5
_LEARNER_TRIES = 240
# How long the end of a run waits for the names of its idle workers and of those whose call
# failed (an idle worker answers at once; one Ray is restarting, once it is back).
_NAME_TIMEOUT_S = 10.0
# How long a stopped run waits for the learner's last checkpoint.
_STOP_CHECKPOINT_S = 120.0


class ResourceError(ValueError):
    """A run asks for resources (CPU, GPU) that the Ray cluster does not have."""


@dataclass
class RunSummary:
    """What a run on Ray did: steps, data, failures survived, and what moved between actors."""

    run_dir: Path
    step: int = 0
    positions: int = 0
    games: int = 0
    shards: int = 0
    duplicates: int = 0
    refused: list = field(default_factory=list)
    lost: list = field(default_factory=list)
    worker_restarts: int = 0
    learner_restarts: int = 0
    wall_s: float = 0.0
    shard_bytes: int = 0
    weight_bytes: int = 0

    @property
    def positions_per_s(self) -> float:
        """Positions accepted per second of the run's wall time."""
        return self.positions / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def bytes_per_s(self) -> float:
        """Bytes moved between actors (shards to the learner, weights to the workers) per second."""
        return (self.shard_bytes + self.weight_bytes) / self.wall_s if self.wall_s > 0 else 0.0


def _holds_run(run_dir: Path) -> bool:
    return (run_dir / "config.toml").exists() or any((run_dir / "checkpoints").glob("step-*"))


def _device_needs_gpu(device: str) -> bool:
    return device.split(":")[0] in ("cuda", "wgpu")


class RayRun:
    """One run on a Ray cluster (``ray.init`` called before): the constructor checks the config and
    the cluster's resources and writes nothing; ``run()`` starts the actors and drives the run to
    its end. ``learner`` and ``workers`` are the actor handles once it has started.

    With ``config`` (a TOML file), a new run in ``run_dir`` (default: the config's
    ``run.output_dir/run.name``), which must not hold one; without it, the run in ``run_dir``
    continues from its last checkpoint. ``overrides`` change config keys as ``train --set`` does.
    """

    def __init__(
        self,
        config: Optional[Path_] = None,
        run_dir: Optional[Path_] = None,
        *,
        workers: int = 2,
        overrides: Union[None, Mapping[str, Any], Sequence[str]] = None,
        worker_cpus: float = 1,
        worker_gpus: float = 0,
        learner_cpus: float = 1,
        learner_gpus: float = 0,
        learner_restarts: int = 3,
        quiet: bool = False,
        progress_every: float = 10.0,
        out: Optional[TextIO] = None,
    ):
        if workers < 1:
            raise ValueError(f"workers must be 1 or more (got {workers})")
        for name, value in (
            ("worker_cpus", worker_cpus),
            ("worker_gpus", worker_gpus),
            ("learner_cpus", learner_cpus),
            ("learner_gpus", learner_gpus),
        ):
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a number, 0 or more (got {value!r})")
        self.overrides = overrides_to_set(overrides)
        if config is not None:
            config_path = Path(config)
            if not config_path.is_file():
                raise FileNotFoundError(f"config file {config_path} not found")
            text = config_path.read_text()
            resolved = tomllib.loads(resolve_config(text, self.overrides))
            self.config_text: Optional[str] = text
            if run_dir is None:
                run_dir = Path(resolved["run"]["output_dir"]) / resolved["run"]["name"]
            if _holds_run(Path(run_dir)):
                raise FileExistsError(
                    f"{run_dir} holds a run: resume it without a config (--resume {run_dir}), "
                    "or choose another run directory or run.name"
                )
        else:
            if run_dir is None:
                raise ValueError("give a config (a new run) or a run directory to resume")
            own = Path(run_dir) / "config.toml"
            if not own.is_file():
                raise FileNotFoundError(f"no run in {run_dir} (no config.toml): start one with a config")
            resolved = tomllib.loads(resolve_config(own.read_text(), self.overrides))
            self.config_text = None
        self.run_dir = Path(run_dir).resolve()
        self.config = resolved
        self.n_workers = workers
        self.worker_cpus, self.worker_gpus = worker_cpus, worker_gpus
        self.learner_cpus, self.learner_gpus = learner_cpus, learner_gpus
        self.learner_restarts = learner_restarts
        self.quiet = quiet
        self.progress_every = progress_every
        self.out = out if out is not None else sys.stderr
        self._check_devices()
        self._check_resources()
        self.learner: Any = None
        self.workers: list = []

    def _check_devices(self) -> None:
        """A device the config names needs the GPUs asked for (and the other way round)."""
        learner_device = str(self.config["run"]["device"])
        selfplay_device = str(self.config["selfplay"].get("device") or learner_device)
        if _device_needs_gpu(learner_device) and self.learner_gpus == 0:
            raise ResourceError(
                f'run.device = "{learner_device}" needs a GPU for the learner: give learner_gpus '
                "(--learner-gpus 1)"
            )
        if _device_needs_gpu(selfplay_device) and self.worker_gpus == 0:
            raise ResourceError(
                f'the self-play device "{selfplay_device}" needs a GPU per worker: give worker_gpus '
                '(--worker-gpus 1), or set selfplay.device = "flex"'
            )

    def needs(self) -> dict[str, float]:
        """The resources the run asks Ray for, in all."""
        want = {
            "CPU": self.learner_cpus + self.n_workers * self.worker_cpus,
            "GPU": self.learner_gpus + self.n_workers * self.worker_gpus,
        }
        return {k: v for k, v in want.items() if v > 0}

    def _check_resources(self) -> None:
        """An error naming the resource when the cluster (or the driver's node, for the learner)
        lacks what the run asks for, before anything is written."""
        if not ray.is_initialized():
            raise RuntimeError("call ray.init() first (morris.ray.run does)")
        have = ray.cluster_resources()
        parts = {
            "CPU": f"learner {self.learner_cpus:g} + {self.n_workers} workers x {self.worker_cpus:g}",
            "GPU": f"learner {self.learner_gpus:g} + {self.n_workers} workers x {self.worker_gpus:g}",
        }
        for resource, amount in self.needs().items():
            if have.get(resource, 0) < amount:
                raise ResourceError(
                    f"the run needs {amount:g} {resource} ({parts[resource]}), the Ray cluster has "
                    f"{have.get(resource, 0):g}: ask for fewer workers or less per actor"
                    + (
                        " (learner_cpus=0 lets the learner share the workers' cores)"
                        if resource == "CPU"
                        else ""
                    )
                )
        node = ray.get_runtime_context().get_node_id()
        own = next((n["Resources"] for n in ray.nodes() if n["NodeID"] == node and n["Alive"]), {})
        for resource, amount in (("CPU", self.learner_cpus), ("GPU", self.learner_gpus)):
            if amount > 0 and own.get(resource, 0) < amount:
                raise ResourceError(
                    f"the learner runs on the driver's node, which has {own.get(resource, 0):g} "
                    f"{resource} of the {amount:g} it asks for: start the driver on a node that has them"
                )

    # --- the run -------------------------------------------------------------------------------

    def _threads(self, cpus: float) -> int:
        return max(1, int(cpus))

    def start(self) -> dict[str, Any]:
        """Starts the learner (on this node; it opens or resumes the run) and the workers; returns
        the learner's ``info()``."""
        node = ray.get_runtime_context().get_node_id()
        learner_cls = ray.remote(LearnerActor).options(
            num_cpus=self.learner_cpus,
            num_gpus=self.learner_gpus,
            max_restarts=self.learner_restarts,
            max_task_retries=0,
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node, soft=False),
        )
        cwd = os.getcwd()
        self.learner = learner_cls.remote(
            str(self.run_dir), self.config_text, self.overrides, self._threads(self.learner_cpus), cwd
        )
        try:
            info = ray.get(self.learner.info.remote())
        except ray.exceptions.RayActorError as e:
            raise RuntimeError(f"the learner could not open the run in {self.run_dir}: {e}") from e
        self._learner_pids = {info["pid"]}
        self.config_text_resolved = info["config_text"]
        step = info["published_step"]
        seed = int(self.config["run"]["seed"])
        worker_cls = ray.remote(WorkerActor).options(
            num_cpus=self.worker_cpus,
            num_gpus=self.worker_gpus,
            max_restarts=-1,
            max_task_retries=0,
        )
        # A resumed run's workers play new games: names and seeds of their own.
        suffix = f"-s{step}" if step > 0 else ""
        self._worker_names = [f"w{i}{suffix}" for i in range(self.n_workers)]
        self.workers = [
            worker_cls.remote(
                self.config_text_resolved,
                self._worker_names[i],
                (seed * 1_000_003 + step * 1009 + i + 1) % 2**63,
                self._threads(self.worker_cpus),
                None,
                cwd,
            )
            for i in range(self.n_workers)
        ]
        return info

    def run(self, on_progress: Optional[Callable[[RayRun, dict[str, Any]], None]] = None) -> RunSummary:
        """Drives the run to its end; ``on_progress(self, report)`` is called after every batch
        of shards the learner takes. Returns the run's summary. The workers are killed when it
        returns or raises."""
        t0 = time.monotonic()
        if self.learner is None:
            self.start()
        s = RunSummary(run_dir=self.run_dir)
        try:
            self._drive(s, on_progress, t0)
        except BaseException:
            # Ctrl-C or a failure: the learner saves its step first, as `train` does on a stop.
            try:
                ray.get(self.learner.checkpoint.remote(), timeout=_STOP_CHECKPOINT_S)
                if not self.quiet:
                    print(f"stopped: a checkpoint was saved in {self.run_dir}", file=self.out)
            except Exception:  # noqa: BLE001 - the original error is the one to raise
                pass
            raise
        finally:
            for actor in [*self.workers, self.learner]:
                ray.kill(actor, no_restart=True)
        s.wall_s = time.monotonic() - t0
        if not self.quiet:
            print(
                f"finished: step {s.step}, {s.positions:,} positions, {s.games:,} games in {s.wall_s:.1f} s "
                f"({s.positions_per_s:,.0f} positions/s, {s.bytes_per_s / 1e6:.2f} MB/s between actors); "
                f"{s.worker_restarts} worker and {s.learner_restarts} learner restarts, "
                f"{s.duplicates} duplicate and {len(s.refused)} refused shards; {self.run_dir}",
                file=self.out,
            )
        return s

    def _fetch_weights(self, s: RunSummary) -> None:
        """The newest published model: its step here, its bytes left in the object store."""

        def call():
            step_ref, bytes_ref = self.learner.weights.options(num_returns=2).remote()
            return ray.get(step_ref), bytes_ref

        self._weights_step, self._weights_ref = self._learner_call(call, s)

    def _drive(self, s: RunSummary, on_progress, t0: float) -> None:
        min_positions = int(self.config["selfplay"]["shard_positions"])
        max_steps = max(1, int(self.config["schedule"]["publish_every"]))
        max_pending = 2 * self.n_workers
        self._fetch_weights(s)
        weights_size = len(ray.get(self._weights_ref))
        sent_step: dict[int, int] = {}
        plays: dict[Any, tuple[int, Any]] = {}  # summary ref -> (worker index, shards ref)
        accepts: dict[Any, tuple[Any, dict]] = {}  # accept ref -> (shards ref, play summary)
        produced: set[tuple[str, int]] = set()  # (worker, seq) returned, not yet accepted or refused
        idle: list[int] = []
        # The name each worker's games last came under: a restart is counted when a worker
        # answers under a new one. `failed` holds the workers whose call failed since they last
        # answered (dead, or only unavailable for a while: Ray raises the same error family).
        names: dict[int, str] = dict(enumerate(self._worker_names))
        failed: set[int] = set()

        def died(i: int) -> None:
            failed.add(i)

        def seen(i: int, name: str) -> None:
            if name != names[i]:
                s.worker_restarts += 1
                names[i] = name
            failed.discard(i)

        def play(i: int) -> None:
            if sent_step.get(i) != self._weights_step:
                sent_step[i] = self._weights_step
                s.weight_bytes += weights_size
            summary_ref, shards_ref = (
                self.workers[i]
                .play.options(num_returns=2)
                .remote(min_positions, self._weights_step, self._weights_ref)
            )
            plays[summary_ref] = (i, shards_ref)

        for i in range(self.n_workers):
            play(i)
        last_print = time.monotonic()
        report: dict[str, Any] = {}
        done = False
        while not done:
            ready, _ = ray.wait(list(plays) + list(accepts), num_returns=1, timeout=self.progress_every)
            for ref in ready:
                if ref in plays:
                    i, shards_ref = plays.pop(ref)
                    try:
                        summary = ray.get(ref)
                    except ray.exceptions.RayActorError:
                        # Ray restarts it (a call made meanwhile fails too: a pause, then again);
                        # it plays on under a new name, and needs the weights again.
                        died(i)
                        time.sleep(_RETRY_PAUSE_S)
                        sent_step.pop(i, None)
                        play(i)
                        continue
                    seen(i, summary["worker"])
                    produced.update((summary["worker"], seq) for seq, *_ in summary["shards"])
                    if summary["shards"]:
                        accepts[self.learner.accept.remote(shards_ref, max_steps)] = (shards_ref, summary)
                    if len(accepts) >= max_pending:
                        idle.append(i)
                    else:
                        play(i)
                    continue
                shards_ref, summary = accepts.pop(ref)
                try:
                    report = ray.get(ref)
                except ray.exceptions.RayActorError:
                    # The learner died: Ray restarts it from the last checkpoint; the shards go
                    # again (the ledger skips any it had already stored).
                    self._learner_back(s)
                    accepts[self.learner.accept.remote(shards_ref, max_steps)] = (shards_ref, summary)
                    self._fetch_weights(s)
                    continue
                self._account(s, report, produced)
                self._count_learner(s, report["pid"])
                s.step = report["step"]
                if report["published_step"] != self._weights_step:
                    self._fetch_weights(s)
                if on_progress is not None:
                    on_progress(self, report)
                if report["done"]:
                    done = True
                    break
                while idle and len(accepts) < max_pending:
                    play(idle.pop())
            now = time.monotonic()
            if not self.quiet and (done or now - last_print >= self.progress_every):
                last_print = now
                self._print_progress(s, report, now - t0)
        # Restarts the loop did not see: a play that failed or came back under a new name after
        # the budget was spent, or an idle worker restarted (its games are not waited for). The
        # idle and failed workers are asked their names together; one whose call failed and
        # that does not answer in time counts as restarted.
        finished, _ = ray.wait(list(plays), num_returns=len(plays), timeout=0) if plays else ([], [])
        for ref in finished:
            i, _ = plays[ref]
            try:
                seen(i, ray.get(ref)["worker"])
            except ray.exceptions.RayActorError:
                died(i)
        asked = {self.workers[i].name.remote(): i for i in sorted(set(idle) | failed)}
        answered, _ = (
            ray.wait(list(asked), num_returns=len(asked), timeout=_NAME_TIMEOUT_S) if asked else ([], [])
        )
        for ref in answered:
            try:
                seen(asked[ref], ray.get(ref))
            except ray.exceptions.RayActorError:
                pass
        s.worker_restarts += len(failed)
        # The accepts still queued at the learner when the budget was spent store their shards
        # (the run keeps them, as `train` keeps the games its workers finish) without training.
        while accepts:
            ref, (shards_ref, summary) = accepts.popitem()
            try:
                report = ray.get(ref)
            except ray.exceptions.RayActorError:
                self._learner_back(s)
                accepts[self.learner.accept.remote(shards_ref, 0)] = (shards_ref, summary)
                continue
            self._account(s, report, produced)
            self._count_learner(s, report["pid"])
        self._count_learner(s, self._learner_call(lambda: ray.get(self.learner.finish.remote()), s))
        s.lost = sorted(produced)

    def _learner_call(self, call: Callable[[], Any], s: RunSummary) -> Any:
        """``call()`` on the learner, again after Ray restarts it (up to its restart budget)."""
        while True:
            try:
                return call()
            except ray.exceptions.RayActorError:
                self._learner_back(s)

    def _learner_back(self, s: RunSummary) -> None:
        """Waits for the learner Ray restarts after a call failed with its death, counting each
        new process once (several calls fail with one death). Raises once Ray gives it up."""
        for attempt in range(_LEARNER_TRIES):
            try:
                info = ray.get(self.learner.info.remote())
                break
            except ray.exceptions.RayActorError:
                # Unavailable while Ray restarts it; dead for good once its restarts are spent.
                if attempt + 1 == _LEARNER_TRIES:
                    raise
                time.sleep(_RETRY_PAUSE_S)
        self._count_learner(s, info["pid"])

    def _count_learner(self, s: RunSummary, pid: int) -> None:
        """Counts a restart when the learner answers from a process not seen before (answers
        the killed process gave before it died may come after the new process's)."""
        if pid not in self._learner_pids:
            self._learner_pids.add(pid)
            s.learner_restarts += 1

    def _account(self, s: RunSummary, report: dict[str, Any], produced: set) -> None:
        """Counts what an accept took, and strikes its shards (taken, skipped or refused) off
        ``produced``, the shards returned and not yet settled."""
        s.positions += report["positions"]
        s.shard_bytes += report["bytes"]
        s.shards += len(report["accepted"])
        s.duplicates += len(report["duplicates"])
        s.games += report["games"]
        for key in report["accepted"] + report["duplicates"]:
            produced.discard(tuple(key))
        for worker, seq, message in report["refused"]:
            produced.discard((worker, seq))
            s.refused.append((worker, seq, message))
            if not self.quiet:
                print(f"refused shard {seq} from worker '{worker}': {message}", file=self.out)

    def _print_progress(self, s: RunSummary, report: dict[str, Any], elapsed: float) -> None:
        total = int(self.config["schedule"]["total_steps"])
        of = f"/{total}" if total else ""
        print(
            f"step {s.step}{of} | {s.positions:,} positions ({s.positions / max(elapsed, 1e-9):,.0f}/s) "
            f"| model {report.get('published_step', 0)} | {self.n_workers} workers, "
            f"{s.worker_restarts} restarted | learner restarts {s.learner_restarts} | {elapsed:.0f} s",
            file=self.out,
            flush=True,
        )


def run(
    config: Optional[Path_] = None,
    run_dir: Optional[Path_] = None,
    *,
    workers: int = 2,
    address: Optional[str] = None,
    **kwargs: Any,
) -> RunSummary:
    """A whole run on Ray: connects to the cluster at ``address`` (``"auto"``, ``"ray://..."``), or
    starts a local one when Ray is not yet initialized, then runs :class:`RayRun`. The other
    arguments are ``RayRun``'s."""
    if not ray.is_initialized():
        ray.init(address=address, log_to_driver=False, configure_logging=False)
    return RayRun(config, run_dir, workers=workers, **kwargs).run()
