"""Training runs from Python, on the code of the ``train`` binary: ``train`` runs a whole run in
this process (self-play and learner, or the learner alone), ``selfplay_worker`` a self-play
worker for a run directory shared with a learner. Both release the GIL while they work, write
the binary's run directory (checkpoints, ``metrics.jsonl``, TensorBoard events) and turn Ctrl-C
into the binary's clean stop: a checkpoint (or the finished games), then ``KeyboardInterrupt``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from os import PathLike
from typing import Any, Optional, Union

from morris import _morris

__all__ = ["overrides_to_set", "resolve_config", "selfplay_worker", "train"]

Path_ = Union[str, "PathLike[str]"]


def _toml_value(key: str, value: Any) -> str:
    """``value`` as a TOML value (what ``--set section.key=VALUE`` reads)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"override {key}: {value} is not a finite number")
        return repr(value)
    if isinstance(value, (str, PathLike)):
        # A JSON string is a TOML basic string (same escapes).
        return json.dumps(str(value))
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(key, v) for v in value) + "]"
    raise TypeError(
        f"override {key}: {type(value).__name__} is not a TOML value (bool, int, float, str or list)"
    )


def overrides_to_set(overrides: Union[None, Mapping[str, Any], Sequence[str]]) -> list[str]:
    """Config overrides as ``section.key=value`` strings: a mapping ``{"schedule.total_steps": 40}``
    (values written as TOML), or strings already in that form (as ``--set`` takes them)."""
    if overrides is None:
        return []
    if isinstance(overrides, Mapping):
        out = []
        for key, value in overrides.items():
            if not isinstance(key, str) or "." not in key:
                raise ValueError(f"override key {key!r} is not 'section.key'")
            out.append(f"{key}={_toml_value(key, value)}")
        return out
    if isinstance(overrides, str):
        raise TypeError("overrides is a mapping or a list of 'section.key=value' strings, not one string")
    return [str(s) for s in overrides]


def train(
    config: Optional[Path_] = None,
    run_dir: Optional[Path_] = None,
    *,
    overrides: Union[None, Mapping[str, Any], Sequence[str]] = None,
    learn_only: bool = False,
    quiet: bool = False,
) -> None:
    """Runs a training run in this process, as ``train --config CONFIG --run-dir RUN_DIR`` does.

    With ``config``, a new run (in ``run_dir``, or the config's ``run.output_dir/run.name``);
    without it, the run in ``run_dir`` continues from its latest checkpoint (``run_dir`` may be a
    checkpoint, ``RUN/checkpoints/step-N``), as ``train --resume`` does. ``overrides`` changes
    config values, e.g. ``{"schedule.total_steps": 200, "run.threads": 1}``. ``learn_only=True``
    runs the learner alone, fed by ``selfplay_worker`` processes (``train learn``).

    Raises ``ValueError`` for a bad config (naming the file and key), ``FileExistsError`` when a
    new run's directory already holds a run, ``FileNotFoundError`` for a missing file or nothing
    to resume, ``morris.FileFormatError`` for a corrupt checkpoint.
    """
    _morris.train(config, run_dir, set=overrides_to_set(overrides), learn_only=learn_only, quiet=quiet)


def selfplay_worker(
    run_dir: Path_,
    name: str,
    *,
    minutes: Optional[float] = None,
    wait: float = 120.0,
    device: Optional[str] = None,
    quiet: bool = False,
) -> None:
    """Runs a self-play worker for the run in ``run_dir``, as ``train selfplay`` does: it plays with
    the newest published model, writes game shards under ``name`` and returns when the learner
    finishes (or after ``minutes``). It waits up to ``wait`` seconds for the run to appear."""
    _morris.selfplay_worker(run_dir, name, minutes=minutes, wait=wait, device=device, quiet=quiet)


def resolve_config(config_text: str, overrides: Union[None, Mapping[str, Any], Sequence[str]] = None) -> str:
    """Checks a run's config (TOML text, with ``overrides`` as ``train`` takes them) as a new run
    does before it writes anything, and returns it resolved, every key filled in, as TOML.
    Raises ``ValueError`` naming the key."""
    return _morris.resolve_config(config_text, set=overrides_to_set(overrides))
