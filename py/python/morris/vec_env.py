"""``morris.VecEnv``: N games stepped in Rust, with Gymnasium 1.x vector-env conventions and
NumPy views of the env's own buffers."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from morris import _morris

__all__ = ["VecEnv", "sample_actions", "unpack_masks"]

_MASK_WORDS = 10  # uint64 words per packed mask (600 actions in 640 bits)


class VecEnv:
    """N independent games of Nine Men's Morris, stepped in parallel in Rust.

    ``VecEnv(num_envs, *, rules=None, seed=0, autoreset_mode="next_step", opening_plies=0,
    threads=1, illegal_action="raise", masks="dense")``

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
    * ``masks``: ``"dense"`` (``info["action_mask"]``, bool ``[N, A]``, kept up to date in
      Rust by storing only the entries that change) or ``"packed"`` (no dense masks at all, the
      fastest step: ``info["packed_action_mask"]`` only).

    ``reset()`` returns ``(observations, info)`` and ``step(actions)`` returns ``(observations,
    rewards, terminated, truncated, info)`` with

    * ``observations``: float32 ``[N, 15, P]``, each from its player-to-move's point of view;
    * ``rewards``: float32 ``[N, 2]``, ``[white, black]`` (±1 or 0 on the step that ends a game,
      0 otherwise) — a two-player game has one reward per player, not one per env;
    * ``terminated`` / ``truncated``: bool ``[N]`` (truncated: cut off by the turn cap);
    * ``info["action_mask"]``: bool ``[N, A]`` (``masks="dense"``);
      ``info["packed_action_mask"]``: uint64 ``[N, 10]``, action ``a`` in bit ``a % 64`` of word
      ``a // 64`` (``unpack_masks`` expands it); ``info["current_player"]``: uint8 ``[N]``.

    ``P`` and ``A`` are the board's points and actions: 24 and 600 on the 24-point boards
    (nine and twelve men's morris, morabaraba, Lasker morris), 16 and 272 on six men's morris's
    (``variant_info``, ``morris.variant_info(rules)``).

    Fast paths: ``step(None)`` plays a uniformly random legal action in every env, drawn in Rust
    inside the step; ``sample_legal()`` draws the same actions without stepping (to mix with a
    policy's); ``agent_actions(agent)`` asks a ``morris.Agent`` for a move in every game.

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
        masks: str = "dense",
    ) -> None:
        self._env = _morris.VecEnv(
            num_envs,
            rules=rules,
            seed=_seed(seed),
            autoreset_mode=autoreset_mode,
            opening_plies=opening_plies,
            threads=threads,
            illegal_action=illegal_action,
            masks=masks,
        )
        self.observations: np.ndarray = self._env.observations
        self.final_observations: np.ndarray = self._env.final_observations
        #: bool ``[N, A]`` (None with ``masks="packed"``).
        self.masks: Optional[np.ndarray] = self._env.masks if masks == "dense" else None
        #: uint64 ``[N, 10]``, the masks bit-packed (``unpack_masks`` expands them).
        self.packed_masks: np.ndarray = self._env.packed_masks
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
    def variant_info(self) -> dict:
        """The sizes of the games' board (``morris.variant_info`` of the rules): ``num_actions``
        (A), ``observation_shape`` (``(15, P)``), ``point_names``, ..."""
        return self._env.variant_info

    @property
    def num_actions(self) -> int:
        """Actions A of the games' board (600 on the 24-point boards, 272 on six men's morris's)."""
        return self._env.variant_info["num_actions"]

    @property
    def autoreset_mode(self) -> str:
        """``"next_step"``, ``"same_step"`` or ``"disabled"``."""
        return self._env.autoreset_mode

    @property
    def threads(self) -> int:
        """Rust threads that step the envs."""
        return self._env.threads

    @property
    def mask_format(self) -> str:
        """``"dense"`` or ``"packed"``."""
        return self._env.mask_format

    def _info(self) -> dict:
        info = {"packed_action_mask": self.packed_masks, "current_player": self.current_player}
        if self.masks is not None:
            info["action_mask"] = self.masks
        return info

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> tuple[np.ndarray, dict]:
        """Starts new games in every env (env ``i`` seeded with ``seed + i``; the previous seed if
        None). Returns ``(observations, info)``. A seed that is not an int is a ``TypeError``,
        one outside ``0..2**64`` a ``ValueError``."""
        self._env.reset(None if seed is None else _seed(seed))
        return self.observations, self._info()

    def step(self, actions: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Steps every env with its action (integers, shape ``[N]``), or with ``actions=None``
        with a uniformly random legal action per env drawn in Rust within the step (each env's
        own generator, as ``sample_legal()``: the same games as ``step(sample_legal())``).

        Returns ``(observations, rewards, terminated, truncated, info)``. Raises ``TypeError``
        for non-integer actions, ``ValueError`` for the wrong shape, and (in ``"raise"`` mode)
        ``IllegalActionError`` for an illegal or out-of-range action, naming the env and the
        move; nothing is stepped then.
        """
        if actions is None:
            finished, rejected = self._env.step(None)
        else:
            finished, rejected = self._env.step(self._actions(actions))
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

    def _actions(self, actions: Any) -> np.ndarray:
        a = np.asarray(actions)
        if a.dtype.kind not in "iu":
            raise TypeError(f"actions must be integers, got dtype {a.dtype}")
        if a.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), got {a.shape}")
        return a.astype(np.int64, copy=False)

    def _active(self, active: Any) -> np.ndarray:
        a = np.asarray(active)
        if a.dtype != np.bool_:
            raise TypeError(f"active must be bool, got dtype {a.dtype}")
        if a.shape != (self.num_envs,):
            raise ValueError(f"active must have shape ({self.num_envs},), got {a.shape}")
        return a

    def _step_where(self, actions: Any, active: Any) -> tuple[int, int]:
        """Steps only the envs where ``active`` (bool ``[N]``) is true; the others are not
        touched (their rewards and flags stay those of their last step). Returns ``(finished,
        rejected)``. For ``morris.gymnasium.MorrisVectorEnv``, whose opponent replies only in
        the games where it is to move."""
        return self._env.step_where(self._actions(actions), self._active(active))

    def sample_legal(self, seed: Optional[int] = None, *, out: Optional[np.ndarray] = None) -> np.ndarray:
        """One uniformly random legal action per env (int64 ``[N]``), drawn in Rust from the
        packed masks, with no NumPy work.

        * ``seed=None``: env ``i`` draws from its own generator (seeded by ``reset`` with
          ``seed + i``; the one ``step(None)`` uses), so a run is reproducible from its reset seed.
        * ``seed=s`` (an int in ``0..2**64``): env ``i`` draws from a generator made from
          ``(s, i)`` and leaves its own as it is: the same seed and games always give the same
          actions.
        * ``out``: an int64 ``[N]`` writeable, contiguous array to fill and return (no allocation);
          else a new array.

        A finished game (all-false mask: the step that ended it in ``"next_step"`` mode, or any
        time with ``"disabled"``) gets action 0, as Gymnasium's ``Discrete.sample`` gives with an
        all-zero mask; ``step`` ignores it, so sampling and stepping never fails on finished games.
        """
        if out is not None:
            if not isinstance(out, np.ndarray):
                raise TypeError(f"out must be a NumPy array, got {type(out).__name__}")
            if out.dtype != np.int64:
                raise TypeError(f"out must be int64, got dtype {out.dtype}")
            if out.shape != (self.num_envs,):
                raise ValueError(f"out must have shape ({self.num_envs},), got {out.shape}")
            if not (out.flags.writeable and out.flags.c_contiguous):
                raise ValueError("out must be writeable and contiguous")
        return self._env.sample_legal(None if seed is None else _seed(seed), out)

    def agent_actions(self, agent: _morris.Agent, active: Any = None) -> np.ndarray:
        """The move ``agent`` (a ``morris.Agent``) plays in each env's current game, with its
        whole history (repetitions included), as int64 ``[N]``: in every env, or those where
        ``active`` (bool ``[N]``) is true; 0 for the others and for finished games. One call,
        the GIL released; the games are asked one after another. ``Agent.act_batch`` does the
        same from observations and masks alone."""
        if not isinstance(agent, _morris.Agent):
            raise TypeError(f"agent must be a morris.Agent, got {type(agent).__name__}")
        return self._env.agent_actions(agent, None if active is None else self._active(active))

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


def _seed(seed: Any) -> int:
    """``seed`` as an int in ``0..2**64``: ``TypeError`` for a non-integer (a bool included),
    ``ValueError`` out of range."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an int, got {type(seed).__name__} {seed!r}")
    if not 0 <= int(seed) < 2**64:
        raise ValueError(f"seed must be in 0..2**64, got {seed}")
    return int(seed)


def unpack_masks(packed: np.ndarray, num_actions: int = 600) -> np.ndarray:
    """Packed masks (uint64 ``[..., 10]``, as ``VecEnv.packed_masks``) as bool
    ``[..., num_actions]`` (600 on the 24-point boards; ``VecEnv.num_actions`` on any board).

    Action ``a`` is bit ``a % 64`` of word ``a // 64``; the same in plain NumPy::

        np.unpackbits(packed.astype("<u8").view(np.uint8), axis=-1, count=600, bitorder="little").view(bool)
    """
    if isinstance(num_actions, bool) or not 0 < num_actions <= 64 * _MASK_WORDS:
        raise ValueError(f"num_actions must be in 1..{64 * _MASK_WORDS}, got {num_actions!r}")
    p = np.asarray(packed)
    if p.dtype != np.uint64:
        raise TypeError(f"packed masks must be uint64, got dtype {p.dtype}")
    if p.shape[-1:] != (_MASK_WORDS,):
        raise ValueError(f"packed masks must have shape [..., {_MASK_WORDS}], got {p.shape}")
    little = np.ascontiguousarray(p, dtype="<u8").view(np.uint8)
    return np.unpackbits(little, axis=-1, count=num_actions, bitorder="little").view(np.bool_)


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
