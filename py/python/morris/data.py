"""The lab's self-play data (game shards) as NumPy arrays, ready for PyTorch or JAX."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Union

from morris import _morris

__all__ = ["read_shards", "shard_paths"]

PathLike = Union[str, "os.PathLike[str]"]


def shard_paths(source: Union[PathLike, Iterable[PathLike]]) -> list:
    """The shard files named by ``source``: a ``.shard`` file, a directory of them, a run
    directory (its ``games/``), or a list of these; sorted within each directory."""
    if isinstance(source, (str, os.PathLike)):
        source = [source]
    out = []
    for item in source:
        p = Path(item)
        if p.is_dir():
            games = p / "games"
            d = games if games.is_dir() else p
            found = sorted(d.glob("*.shard"))
            if not found:
                raise FileNotFoundError(f"no game shards (*.shard) in {d}")
            out.extend(found)
        elif not p.exists():
            raise FileNotFoundError(f"game shard {p} does not exist")
        else:
            out.append(p)
    return out


def read_shards(
    source: Union[PathLike, Iterable[PathLike]],
    *,
    rules: Any = None,
    augment: str = "none",
    seed: int = 0,
) -> dict:
    """Reads game shards into training arrays (see ``shard_paths`` for ``source``).

    Every shard's checksum and records are checked (``FileFormatError`` names a corrupt one).
    ``rules`` must be those the games were played under (the run's ``rules``; standard by
    default): they set the masks and the draw-counter planes. ``augment``: ``"none"``, ``"all"``
    (16 rows per position, one per board symmetry, consecutive) or ``"random"`` (one random
    symmetry per position, drawn from ``seed``).

    Returns a dict of NumPy arrays: ``observations`` float32 ``[M, 15, 24]``, ``masks`` bool
    ``[M, 600]``, ``policies`` float32 ``[M, 600]`` (search visit distribution; zero rows where
    ``policy_weights`` is 0, cheap searches of playout-cap randomization), ``wdl`` float32
    ``[M, 3]``, ``values`` float32 ``[M]`` (game result for the player to move: +1, 0, −1),
    ``policy_weights`` float32 ``[M]``, plus ints ``games`` and ``positions``.
    """
    paths = shard_paths(source)
    return _morris.read_shards([str(p) for p in paths], rules=rules, augment=augment, seed=seed)
