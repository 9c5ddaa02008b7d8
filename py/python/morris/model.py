"""Trained models from Python: the card, the weights as NumPy arrays, the network's forward pass
in Rust and the same forward pass in plain NumPy."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Optional, Union

import numpy as np

from morris import _morris

__all__ = ["Model", "load_model"]


class Model:
    """A model directory: an export (``model.json`` card), a checkpoint or a published version
    (``config.json``). Its files are checked against ``manifest.json`` when it has one.

    * ``card``: the model card as a dict (None for a directory without one);
    * ``net_config``: the network's shape (``trunk``, ``width``, ``blocks``, ...);
    * ``weights``: dict of float32 arrays, named as in docs/file-formats.md (loaded on first use);
    * ``evaluate(observations)``: the network in Rust (burn, CPU), any trunk;
    * ``forward(observations)``: the same pass in NumPy (the ``res-mlp`` trunk), for reading
      or porting the network;
    * ``act_batch(observations, masks)``: the network as an agent without search, one move per
      row from one forward pass over the whole batch.

    Both return raw ``(policy_logits [B, 600], wdl_logits [B, 3])`` for observations
    ``[B, 15, 24]`` (or one ``[15, 24]``); mask illegal actions before a softmax. The WDL
    logits are win, draw, loss for the player to move.
    """

    def __init__(self, path: Union[str, os.PathLike[str]]) -> None:
        self.path = Path(path)
        card = _morris.read_model_card(str(self.path))
        self.card: Optional[dict] = None if card is None else json.loads(card)
        self.net_config: dict = json.loads(_morris.read_net_config_json(str(self.path)))
        self._weights: Optional[dict] = None
        self._network = None

    @property
    def weights(self) -> dict:
        """The weights, name -> float32 array (Linear weights are ``[in, out]``)."""
        if self._weights is None:
            self._weights = _morris.load_weights(str(self.path))
        return self._weights

    def evaluate(self, observations: np.ndarray) -> tuple:
        """Runs the network in Rust on float32 observations ``[B, 15, 24]`` or ``[15, 24]``."""
        obs, single = _batch(observations)
        if self._network is None:
            self._network = _morris.Network(str(self.path))
        logits, wdl = self._network.evaluate(obs)
        return (logits[0], wdl[0]) if single else (logits, wdl)

    def forward(self, observations: np.ndarray) -> tuple:
        """The res-mlp forward pass in NumPy (float32), equal to ``evaluate`` up to rounding."""
        trunk = self.net_config.get("trunk", "res-mlp")
        if trunk != "res-mlp":
            raise NotImplementedError(
                f"the NumPy forward pass covers the res-mlp trunk; this model is {trunk}: use evaluate()"
            )
        obs, single = _batch(observations)
        w = self.weights
        r = "body.ResMlp."

        def linear(h: np.ndarray, p: str) -> np.ndarray:
            return h @ w[p + ".weight"] + w[p + ".bias"]

        def layer_norm(h: np.ndarray, p: str) -> np.ndarray:
            mu = h.mean(-1, keepdims=True)
            var = h.var(-1, keepdims=True)
            return (h - mu) / np.sqrt(var + 1e-5) * w[p + ".gamma"] + w[p + ".beta"]

        h = linear(obs.reshape(obs.shape[0], -1), r + "input")
        for i in range(int(self.net_config["blocks"])):
            b = f"{r}blocks.{i}."
            h = h + linear(np.maximum(linear(layer_norm(h, b + "norm"), b + "fc1"), 0), b + "fc2")
        h = layer_norm(h, r + "out_norm")
        logits = linear(h, r + "policy")
        wdl = linear(np.maximum(linear(h, r + "value_hidden"), 0), r + "value_out")
        return (logits[0], wdl[0]) if single else (logits, wdl)

    def act_batch(
        self,
        observations: np.ndarray,
        masks: np.ndarray,
        *,
        temperature: float = 0.0,
        rng: Optional[np.random.Generator] = None,
    ) -> np.ndarray:
        """One move per row from a single ``evaluate`` call on the whole batch (no search):
        the legal action with the highest policy logit (``temperature=0``), or one drawn from
        the softmax of the legal logits divided by ``temperature`` with ``rng``.

        ``observations`` float32 ``[N, 15, 24]``; ``masks`` ``[N, 600]`` bool or integers
        (nonzero is legal) or packed uint64 ``[N, 10]`` (``VecEnv.packed_masks``). Returns int64
        ``[N]``, 0 for a row without a legal action (a finished game, whose action
        ``VecEnv.step`` ignores). ``TypeError`` for a wrong dtype, ``ValueError`` for a wrong
        shape or a negative temperature. For the search agent use ``morris.Agent("az:...")``.
        """
        obs = np.asarray(observations)
        if obs.dtype != np.float32:
            raise TypeError(f"observations must be float32, got dtype {obs.dtype}")
        if obs.ndim != 3 or obs.shape[1:] != (15, 24):
            raise ValueError(f"observations must have shape [N, 15, 24], got {list(obs.shape)}")
        legal = _dense_masks(masks, obs.shape[0])
        if not temperature >= 0.0:
            raise ValueError(f"temperature must be 0 or more, got {temperature}")
        if temperature > 0.0 and not isinstance(rng, np.random.Generator):
            raise TypeError("a temperature above 0 needs rng, a numpy.random.Generator")
        if obs.shape[0] == 0:
            return np.zeros(0, dtype=np.int64)
        logits, _ = self.evaluate(obs)
        scores = np.where(legal, logits, -np.inf)
        if temperature > 0.0:
            z = scores / temperature
            z -= np.where(legal.any(axis=1, keepdims=True), z.max(axis=1, keepdims=True), 0.0)
            p = np.where(legal, np.exp(z), 0.0)
            cdf = np.cumsum(p, axis=1)
            u = rng.random((obs.shape[0], 1)) * cdf[:, -1:]
            actions = np.minimum((cdf <= u).sum(axis=1), 599)
        else:
            actions = scores.argmax(axis=1)
        return np.where(legal.any(axis=1), actions, 0).astype(np.int64)

    def predict(self, game: _morris.Game) -> tuple:
        """For one game: the policy over legal actions (float32 ``[600]``, zero on illegal ones)
        and the win/draw/loss probabilities for the player to move, from ``evaluate``."""
        logits, wdl = self.evaluate(game.observation())
        mask = game.legal_mask()
        policy = np.zeros_like(logits)
        if mask.any():
            z = logits[mask] - logits[mask].max()
            p = np.exp(z)
            policy[mask] = p / p.sum()
        e = np.exp(wdl - wdl.max())
        return policy, e / e.sum()

    def __repr__(self) -> str:
        return f"Model('{self.path}', trunk={self.net_config.get('trunk')})"


def load_model(path: Union[str, os.PathLike[str]]) -> Model:
    """Opens a model directory (see ``Model``)."""
    return Model(path)


def _dense_masks(masks: np.ndarray, n: int) -> np.ndarray:
    """``masks`` as bool ``[n, 600]``: from bool or integer ``[n, 600]`` or packed uint64 ``[n, 10]``."""
    from morris.vec_env import unpack_masks

    m = np.asarray(masks)
    if m.dtype == np.uint64 and m.ndim == 2 and m.shape[1] == 10:
        if m.shape[0] != n:
            raise ValueError(f"masks must have {n} rows, got shape {list(m.shape)}")
        return unpack_masks(m)
    if m.dtype.kind not in "biu":
        raise TypeError(
            f"masks must be bool or integers [N, 600] or packed uint64 [N, 10], got dtype {m.dtype}"
        )
    if m.shape != (n, 600):
        raise ValueError(f"masks must have shape [{n}, 600] (or packed [{n}, 10]), got {list(m.shape)}")
    return m != 0


def _batch(observations: np.ndarray) -> tuple:
    obs = np.asarray(observations, dtype=np.float32)
    if obs.shape == (15, 24):
        return np.ascontiguousarray(obs[None]), True
    if obs.ndim != 3 or obs.shape[1:] != (15, 24):
        raise ValueError(f"observations must have shape [B, 15, 24] or [15, 24], got {list(obs.shape)}")
    return np.ascontiguousarray(obs), False
