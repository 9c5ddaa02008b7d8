"""``morris.VecEnv``: N games stepped in Rust, with Gymnasium 1.x vector-env conventions and
NumPy views of the env's own buffers."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from morris import _morris

__all__ = ["VecEnv", "sample_actions"]


class VecEnv:
    """N independent games of Nine Men's Morris, stepped in parallel in Rust.

    ``VecEnv(num_envs, *, rules=None, seed=0, autoreset_mode="next_step", opening_plies=0,
    threads=1, illegal_action="raise")``

    * ``rules``: a preset name (``"standard"``, ``"openspiel"``), a dict of rule options or None.
    * ``seed``: env ``i`` is seeded with ``seed + i`` (its random opening, if any).
    * ``autoreset_mode``: as Gymnasium's ``AutoresetMode``: ``"next_step"`` (the step that ends
      a game shows its last observation with an all-false mask; the next step ignores that env's
      action and starts a new game), ``"same_step"`` (the new game starts at once; the last
      observation is in ``info["final_obs"]`` where ``info["_final_obs"]`` is True) or
      ``"disabled"`` (finished games stay finished until ``reset``).
    * ``opening_plies``: uniformly random plies played at the start of every game.
    * ``threads``: Rust threads that step the envs (the GIL is released while stepping).
    * ``illegal_action``: ``"raise"`` (check every action first and raise
      ``IllegalActionError``, stepping nothing), ``"flag"`` (that env keeps its game; the step's
      ``info["illegal_action"]`` marks it) or ``"lose"`` (the player who played it loses).

    ``reset()`` returns ``(observations, info)`` and ``step(actions)`` returns ``(observations,
    rewards, terminated, truncated, info)`` with

    * ``observations``: float32 ``[N, 15, 24]``, each from its player-to-move's point of view;
    * ``rewards``: float32 ``[N, 2]``, ``[white, black]`` (±1 or 0 on the step that ends a game,
      0 otherwise) — a two-player game has one reward per player, not one per env;
    * ``terminated`` / ``truncated``: bool ``[N]`` (truncated: cut off by the turn cap);
    * ``info["action_mask"]``: bool ``[N, 600]``; ``info["current_player"]``: uint8 ``[N]``.

    **The arrays are read-only views of the env's memory, overwritten in place by the next
    ``step`` or ``reset``** (no copy is made, nothing is allocated per step). Copy what you want
    to keep (``obs.copy()``), and do not read them from another thread during a step.
    """

    def __init__(
        self,
        num_envs: int,
        *,
        rules: Any = None,
        seed: int = 0,
        autoreset_mode: str = "next_step",
        opening_plies: int = 0,
        threads: int = 1,
        illegal_action: str = "raise",
    ) -> None:
        self._env = _morris.VecEnv(
            num_envs,
            rules=rules,
            seed=seed,
            autoreset_mode=autoreset_mode,
            opening_plies=opening_plies,
            threads=threads,
            illegal_action=illegal_action,
        )
        self.observations: np.ndarray = self._env.observations
        self.final_observations: np.ndarray = self._env.final_observations
        self.masks: np.ndarray = self._env.masks
        self.rewards: np.ndarray = self._env.rewards
        self.terminated: np.ndarray = self._env.terminated
        self.truncated: np.ndarray = self._env.truncated
        self.current_player: np.ndarray = self._env.current_player
        self._same_step = autoreset_mode == "same_step"

    @property
    def num_envs(self) -> int:
        """Number of games N."""
        return self._env.num_envs

    @property
    def rules(self) -> dict:
        """The rules of every game, as a dict of rule options."""
        return self._env.rules

    @property
    def autoreset_mode(self) -> str:
        """``"next_step"``, ``"same_step"`` or ``"disabled"``."""
        return self._env.autoreset_mode

    @property
    def threads(self) -> int:
        """Rust threads that step the envs."""
        return self._env.threads

    def _info(self) -> dict:
        return {"action_mask": self.masks, "current_player": self.current_player}

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> tuple[np.ndarray, dict]:
        """Starts new games in every env (env ``i`` seeded with ``seed + i``; the previous seed if
        None). Returns ``(observations, info)``."""
        if seed is not None and (not isinstance(seed, (int, np.integer)) or seed < 0):
            raise ValueError(f"seed must be a non-negative int, got {seed!r}")
        self._env.reset(None if seed is None else int(seed))
        return self.observations, self._info()

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Steps every env with its action (integers, shape ``[N]``).

        Returns ``(observations, rewards, terminated, truncated, info)``. Raises ``TypeError``
        for non-integer actions, ``ValueError`` for the wrong shape, and (in ``"raise"`` mode)
        ``IllegalActionError`` for an illegal or out-of-range action, naming the env and the
        move; nothing is stepped then.
        """
        a = np.asarray(actions)
        if a.dtype.kind not in "iu":
            raise TypeError(f"actions must be integers, got dtype {a.dtype}")
        if a.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), got {a.shape}")
        finished, rejected = self._env.step(a.astype(np.int64, copy=False))
        info = self._info()
        if self._same_step and finished:
            info["final_obs"] = self.final_observations
            info["_final_obs"] = self.terminated | self.truncated
        if rejected:
            flags = np.zeros(self.num_envs, dtype=bool)
            errors = self._env.errors()
            flags[[i for i, _ in errors]] = True
            info["illegal_action"] = flags
            info["_illegal_action"] = flags
            info["errors"] = errors
        return self.observations, self.rewards, self.terminated, self.truncated, info

    def outcome(self, i: int) -> _morris.Outcome:
        """The outcome of env ``i``'s current game."""
        return self._env.outcome(i)

    def final_outcome(self, i: int) -> _morris.Outcome:
        """The outcome of the last game that ended in env ``i`` (how a same-step reset's result is read)."""
        return self._env.final_outcome(i)

    def game(self, i: int) -> _morris.Game:
        """A copy of env ``i``'s current game."""
        return self._env.game(i)

    def close(self) -> None:
        """Nothing to release (for Gymnasium-style code)."""

    def __enter__(self) -> VecEnv:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        mode = self.autoreset_mode
        return f"VecEnv(num_envs={self.num_envs}, autoreset_mode='{mode}', threads={self.threads})"


def sample_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of bool ``masks`` ``[N, A]`` (int64 ``[N]``);
    0 for a row with no legal action (a finished game, whose action is ignored)."""
    masks = np.asarray(masks, dtype=bool)
    n, width = masks.shape
    flat = np.flatnonzero(masks)  # ascending, so row i's legal actions are one run
    bounds = np.arange(n + 1, dtype=np.int64) * width
    starts = np.searchsorted(flat, bounds)
    counts = np.diff(starts)
    pick = starts[:-1] + (rng.random(n) * counts).astype(np.int64)
    live = counts > 0
    actions = np.zeros(n, dtype=np.int64)
    actions[live] = flat[pick[live]] - bounds[:-1][live]
    return actions
