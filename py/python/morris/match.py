"""Colour-swapped matches between agent specs, as ``eval match`` plays them."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from morris import _morris

__all__ = ["MatchResult", "play_match"]


@dataclass(frozen=True)
class MatchResult:
    """The result of ``play_match``.

    ``report`` holds the summary ``eval match`` prints (``a``, ``b``, ``wins``, ``draws``,
    ``losses``, ``score`` with its pair-based 95% interval ``score_low``/``score_high``,
    ``pentanomial``, ``mean_plies``, ``ms_per_move`` of A and B); ``games`` the game records
    (players, moves in notation, result, reason); ``text`` the summary as the CLI prints it.
    """

    report: dict
    games: list
    text: str

    @property
    def score(self) -> float:
        """Agent A's score fraction."""
        return float(self.report["score"])

    def __str__(self) -> str:
        return self.text


def play_match(
    a: str,
    b: str,
    *,
    pairs: int = 10,
    opening_plies: int | None = None,
    seed: int = 0,
    rules: Any = None,
    threads: int = 1,
    openings: str | os.PathLike[str] | None = None,
) -> MatchResult:
    """Plays ``pairs`` colour-swapped pairs of games between agent specs ``a`` and ``b`` (both
    games of a pair start from one random opening of ``opening_plies`` plies, 6 by default, or, with
    ``openings``, pair ``i`` from the ``i``-th opening of that opening book, as written by
    ``eval openings``: openings with their exact values, e.g. the drawn ones in
    ``eval/data/``), on ``threads`` Rust threads with the GIL released. Raises ``SpecError`` for
    a bad spec, ``FileNotFoundError`` for a missing book and ``ValueError`` for a malformed one
    or one with fewer openings than ``pairs``, or when given both ``opening_plies`` and
    ``openings``."""
    out = json.loads(
        _morris.play_match_json(
            a,
            b,
            pairs=pairs,
            opening_plies=opening_plies,
            seed=seed,
            rules=rules,
            threads=threads,
            openings=None if openings is None else os.fspath(openings),
        )
    )
    return MatchResult(report=out["report"], games=out["games"], text=out["text"])
