"""Random openings for the environments: uniformly random legal plies from a NumPy generator."""

from __future__ import annotations

import numpy as np

from morris import _morris


def play_random_opening(game: _morris.Game, plies: int, rng: np.random.Generator) -> None:
    """Plays up to ``plies`` uniformly random legal actions in ``game`` (fewer if it ends)."""
    for _ in range(plies):
        legal = game.legal_actions()
        if len(legal) == 0:
            break
        game.apply(int(legal[rng.integers(len(legal))]))
