"""The two actors of a run on Ray: the learner (``morris.Learner`` with a ledger of the shards it
has accepted) and a self-play worker (``morris.SelfPlayWorker``). Plain classes: ``morris.ray``
wraps them with ``ray.remote`` and the resources a run asks for."""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import warnings
from pathlib import Path
from typing import Any, Optional

import ray

import morris

LEDGER = "ray-ledger.jsonl"
"""The ledger's file name in the run directory."""

# Shard files written up to this long before the ledger's last line are looked at again when a
# learner restarts (a shard stored just before a crash, its line not yet written).
_LEDGER_SLACK_S = 60.0


def _restarted() -> bool:
    """Whether Ray restarted the actor this runs in (after its process died)."""
    with warnings.catch_warnings():
        # Ray's own property reads a deprecated one of its own.
        warnings.simplefilter("ignore", DeprecationWarning)
        return bool(ray.get_runtime_context().was_current_actor_reconstructed)


def _enter(cwd: str) -> None:
    """Works in the driver's directory where this node has it, so that relative paths in the
    config (tables, judged positions) mean what they mean to the driver, as for ``train``."""
    if cwd and os.path.isdir(cwd):
        os.chdir(cwd)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Ledger:
    """The SHA-256 of every shard a run's learner has accepted, one JSON line each in
    ``RUN/ray-ledger.jsonl``, so that a shard sent again (its first send cut by the learner's
    death) is not trained on twice. A learner restarted after a crash between storing a shard in
    ``games/`` and writing its line also reads the digests of the shard files written since the
    ledger's last line (and all of them for a run that has none: a run begun by ``train``)."""

    def __init__(self, run_dir: Path):
        self.path = run_dir / LEDGER
        self.digests: set[str] = set()
        since = 0.0
        if self.path.exists():
            for line in self.path.read_text().splitlines():
                try:
                    self.digests.add(json.loads(line)["sha256"])
                except (json.JSONDecodeError, KeyError, TypeError):
                    continue  # a line cut by a crash mid-write: its shard is found below
            since = self.path.stat().st_mtime - _LEDGER_SLACK_S
        games = run_dir / "games"
        if games.is_dir():
            for f in games.iterdir():
                if f.name.endswith(".shard") and f.stat().st_mtime >= since:
                    self.digests.add(_sha256(f.read_bytes()))
        self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 (held for the actor's life)

    def __contains__(self, digest: str) -> bool:
        return digest in self.digests

    def add(self, entry: dict[str, Any]) -> None:
        """Notes an accepted shard (its line flushed to the OS before the call returns)."""
        self.digests.add(entry["sha256"])
        self._file.write(json.dumps(entry, separators=(",", ":")) + "\n")
        self._file.flush()


class LearnerActor:
    """The run's learner: opens (or resumes) the run in ``run_dir`` and trains on the shards
    workers send it. Restarted by Ray after a crash, it resumes from the run's last checkpoint and
    the shards accepted since (``morris.Learner``)."""

    def __init__(
        self, run_dir: str, config_text: Optional[str], overrides: list[str], threads: int, cwd: str = ""
    ):
        _enter(cwd)
        self.run_dir = Path(run_dir)
        overrides = [*overrides, f"run.threads={threads}"]
        self.restarted = _restarted()
        # Restarted after its last step (killed before `finish`), it still opens: it trains
        # nothing, and takes the shards on their way and finishes the run.
        self.learner = morris.Learner(self.run_dir, config_text, set=overrides, reopen=self.restarted)
        self.ledger = Ledger(self.run_dir)

    def info(self) -> dict[str, Any]:
        """The run's resolved config, the published step, whether Ray restarted this learner,
        and its process id (for tests that kill it)."""
        step, _ = self.learner.weights()
        return {
            "config_text": self.learner.config_text,
            "published_step": step,
            "restarted": self.restarted,
            "pid": os.getpid(),
        }

    def weights(self) -> tuple[int, bytes]:
        """The newest published model: its step and ``model.safetensors`` bytes (called with
        ``num_returns=2``, so that the bytes stay in the object store)."""
        return self.learner.weights()

    def accept(self, shards: list[dict[str, Any]], max_steps: int) -> dict[str, Any]:
        """Takes a worker's shards (refusing a damaged one by name, skipping one already
        accepted), then trains up to ``max_steps`` steps. Returns what it took and the learner's
        report (``morris.Learner.train``'s dict) and its process id (so that the driver counts
        a restart even when no call of its failed)."""
        out: dict[str, Any] = {
            "accepted": [],
            "duplicates": [],
            "refused": [],
            "positions": 0,
            "games": 0,
            "bytes": 0,
            "pid": os.getpid(),
        }
        for shard in shards:
            key = [shard.get("worker"), shard.get("seq")]
            digest = shard.get("sha256")
            if digest in self.ledger:
                out["duplicates"].append(key)
                continue
            try:
                added = self.learner.accept(shard)
            except (morris.FileFormatError, TypeError) as e:
                out["refused"].append([*key, str(e)])
                continue
            entry = {
                "worker": shard["worker"],
                "seq": shard["seq"],
                "games": shard["games"],
                "positions": shard["positions"],
                "sha256": digest,
            }
            self.ledger.add(entry)
            out["accepted"].append(key)
            out["positions"] += added
            out["games"] += shard["games"]
            out["bytes"] += len(shard["bytes"])
        out.update(self.learner.train(max_steps))
        return out

    def train(self, max_steps: int) -> dict[str, Any]:
        """Trains on what it has, up to ``max_steps`` steps."""
        return self.learner.train(max_steps)

    def checkpoint(self) -> None:
        """Writes a checkpoint of the current step (a run stopped early keeps it)."""
        self.learner.checkpoint()

    def finish(self) -> int:
        """Ends the run: the last checkpoint, evaluation and metrics, ``FINISHED``. Returns the
        process id (a restart is counted even when no call of its failed)."""
        self.learner.finish()
        return os.getpid()


class WorkerActor:
    """A self-play worker. Restarted by Ray after a crash, it plays under a new name and seed
    (``NAME-rXXXXXX``), so that its shards are neither the games it played before nor numbered
    as them."""

    def __init__(
        self, config_text: str, name: str, seed: int, threads: int, device: Optional[str], cwd: str = ""
    ):
        _enter(cwd)
        if _restarted():
            name = f"{name}-r{secrets.token_hex(3)}"
            seed = secrets.randbits(62)
        self.config_text = config_text
        self.name_ = name
        self.seed = seed
        self.overrides = [f"run.threads={threads}"]
        self.device = device
        self.worker: Optional[morris.SelfPlayWorker] = None

    def name(self) -> str:
        """The name its shards carry (a restarted worker's own)."""
        return self.name_

    def play(self, min_positions: int, step: int, weights: bytes) -> tuple[dict[str, Any], list[dict]]:
        """Plays with the model at ``step`` (its ``model.safetensors`` bytes) until at least
        ``min_positions`` new positions are recorded. Returns a summary (the worker's name, and
        each shard's ``seq``, games, positions and size) and the shards (called with
        ``num_returns=2``: the driver reads the summary, the learner takes the shards)."""
        if self.worker is None:
            self.worker = morris.SelfPlayWorker(
                self.config_text,
                self.name_,
                weights,
                step=step,
                seed=self.seed,
                set=self.overrides,
                device=self.device,
            )
        else:
            self.worker.set_weights(weights, step)
        shards = self.worker.play(min_positions)
        summary = {
            "worker": self.name_,
            "shards": [[s["seq"], s["games"], s["positions"], len(s["bytes"])] for s in shards],
        }
        return summary, shards
