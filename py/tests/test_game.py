"""morris.Game: rules, actions, notation, observations, symmetries and errors."""

import copy
from pathlib import Path

import morris
import numpy as np
import pytest


def test_start_position():
    g = morris.Game()
    assert g.current_player == 0
    assert g.phase == "placing"
    assert g.pieces_in_hand == (9, 9)
    assert g.pieces_on_board == (0, 0)
    legal = g.legal_actions()
    assert legal.dtype == np.int64
    assert list(legal) == list(range(24))
    mask = g.legal_mask()
    assert mask.dtype == np.bool_ and mask.shape == (600,)
    assert np.flatnonzero(mask).tolist() == list(range(24))
    assert g.outcome.kind == "ongoing" and not g.is_terminal
    assert g.rewards == (0.0, 0.0)
    assert morris.NUM_ACTIONS == 600 and morris.NUM_SYMMETRIES == 16


def test_mill_and_removal_in_notation():
    g = morris.Game(moves="d6 a1 d5 a4 d7")
    assert g.removal_pending
    assert g.current_player == 0  # White closed d7-d6-d5 and removes
    a = g.notation_to_action("xa1")
    assert g.action_to_notation(a) == "xa1" and g.num_plies == 5  # read, not played
    assert g.play("xa1") == a
    assert g.pieces_on_board == (3, 1)
    assert g.record() == "d6 a1 d5 a4 d7 xa1"
    assert morris.Game(moves=g.actions).record() == g.record()


def test_illegal_action_raises_value_error_and_changes_nothing():
    g = morris.Game(moves="d6")
    before = (g.actions, g.observation().copy(), g.current_player)
    with pytest.raises(morris.IllegalActionError) as e:
        g.play("d6")  # occupied
    assert isinstance(e.value, ValueError)
    assert "d6" in str(e.value)
    occupied = g.notation_to_action("a1")
    g.apply(occupied)
    with pytest.raises(morris.IllegalActionError, match="a1"):
        g.apply(occupied)
    g.undo()
    with pytest.raises(morris.IllegalActionError, match="out of range"):
        g.apply(600)
    with pytest.raises(morris.IllegalActionError, match="out of range"):
        g.apply(-1)
    with pytest.raises(morris.IllegalActionError):
        g.play("a1-a4")  # no sliding while pieces are in hand
    assert (g.actions, g.current_player) == before[::2]
    np.testing.assert_array_equal(g.observation(), before[1])


def test_bad_notation_and_rules():
    g = morris.Game()
    with pytest.raises(morris.NotationError):
        g.play("z9")
    with pytest.raises(morris.NotationError):
        g.play("")
    with pytest.raises(ValueError, match="unknown rules preset 'chess'"):
        morris.Game("chess")
    with pytest.raises(ValueError, match="unknown rule option 'flyng'"):
        morris.Game({"flyng": False})
    # The variant: nine by default, named in the rules dict; an unknown one is refused by name.
    assert morris.Game().rules["variant"] == "nine"
    assert morris.Game({"variant": "nine", "flying": False}).rules["flying"] is False
    with pytest.raises(ValueError, match="unknown variant 'four'"):
        morris.Game({"variant": "four"})
    with pytest.raises(TypeError, match="variant"):
        morris.Game({"variant": 6})
    with pytest.raises(TypeError):
        morris.Game({"flying": 3})
    with pytest.raises(TypeError):
        morris.Game(moves=3.5)
    with pytest.raises(morris.IllegalActionError, match="ply 1"):
        morris.Game(moves=[0, 0])


def test_custom_rules_and_presets():
    g = morris.Game({"turn_cap": 1})
    assert g.rules["turn_cap"] == 1 and g.rules["flying"] is True
    g.apply(0)
    assert g.is_terminal and g.outcome.kind == "draw" and g.outcome.reason == "turn_cap"
    assert g.outcome.is_truncation
    assert morris.Game("openspiel").rules == {
        "variant": "nine",
        "flying": True,
        "n_move_rule": None,
        "threefold_repetition": False,
        "turn_cap": 200,
    }


def test_observation_layout():
    g = morris.Game(moves="d6 a1")
    obs = g.observation()
    assert obs.shape == (15, 24) and obs.dtype == np.float32
    # Planes 0-2 (own, opponent, empty) partition the points; hands are constant planes.
    np.testing.assert_array_equal(obs[0] + obs[1] + obs[2], np.ones(24))
    assert obs[0].sum() == 1 and obs[1].sum() == 1
    np.testing.assert_allclose(obs[3], 8 / 9)
    assert obs.min() >= 0 and obs.max() <= 1


def test_copy_is_independent_and_str_shows_the_board():
    g = morris.Game(moves="d6")
    for h in (g.copy(), copy.copy(g), copy.deepcopy(g)):
        h.play("a1")
        assert g.num_plies == 1 and h.num_plies == 2
        assert h != g
    assert g == morris.Game(moves="d6")
    text = str(g)
    assert "a" in text and "7" in text
    assert repr(g) == "Game(moves='d6')"


def test_undo_restores_everything():
    g = morris.Game()
    rng = np.random.default_rng(1)
    states = []
    while not g.is_terminal and g.num_plies < 80:
        states.append((g.observation(), g.legal_mask()))
        legal = g.legal_actions()
        g.apply(int(legal[rng.integers(len(legal))]))
    for obs, mask in reversed(states):
        assert g.undo() is not None
        np.testing.assert_array_equal(g.observation(), obs)
        np.testing.assert_array_equal(g.legal_mask(), mask)
    assert g.undo() is None


def test_symmetries_map_observation_mask_and_policy_together():
    rng = np.random.default_rng(2)
    g = morris.Game()
    for _ in range(30):
        legal = g.legal_actions()
        g.apply(int(legal[rng.integers(len(legal))]))
    obs, mask = g.observation(), g.legal_mask()
    policy = np.where(mask, rng.random(600), 0).astype(np.float32)
    policy /= policy.sum()
    names = morris.point_names()
    assert len(names) == 24
    for s in range(morris.NUM_SYMMETRIES):
        t_obs = morris.transform_observation(obs, s)
        t_mask = morris.transform_mask(mask, s)
        t_policy = morris.transform_policy(policy, s)
        # The transformed position has the transformed legal actions.
        legal_t = {morris.transform_action(int(a), s) for a in np.flatnonzero(mask)}
        assert set(np.flatnonzero(t_mask).tolist()) == legal_t
        for a in np.flatnonzero(mask):
            assert t_policy[morris.transform_action(int(a), s)] == policy[a]
        assert t_obs.shape == (15, 24)
        assert t_obs[0].sum() == obs[0].sum()
        inv = morris.inverse_symmetry(s)
        np.testing.assert_array_equal(morris.transform_observation(t_obs, inv), obs)
        np.testing.assert_array_equal(morris.transform_mask(t_mask, inv), mask)
    # Batched arrays keep their shape.
    batch = np.stack([obs, obs])
    assert morris.transform_observation(batch, 3).shape == (2, 15, 24)
    with pytest.raises(ValueError, match="symmetry 16"):
        morris.transform_observation(obs, 16)
    with pytest.raises(ValueError, match="shape"):
        morris.transform_mask(np.zeros(599, dtype=bool), 0)
    with pytest.raises(TypeError):
        morris.transform_observation(obs.astype(np.float64), 0)


def test_morabaraba_double_mill_earns_two_removals():
    # b6 closes the diagonal a7-b6-c5 and the row b6-d6-f6 at once.
    moves = "a7 g7 c5 g4 d6 d1 f6 a1 b6"
    g = morris.Game("morabaraba", moves=moves)
    assert g.rules["variant"] == "morabaraba"
    assert g.removals_pending == 2 and g.current_player == 0
    assert g.observation()[5, 0] == pytest.approx(1.0)  # removals pending / 2
    g.play("xg7")
    assert g.removals_pending == 1 and g.current_player == 0
    assert g.observation()[5, 0] == pytest.approx(0.5)
    g.play("xg4")
    assert g.removals_pending == 0 and g.current_player == 1
    # The same moves in twelve men's morris earn one removal.
    assert morris.Game("twelve", moves=moves).removals_pending == 1


def test_twelve_mens_morris_plays_by_its_rules():
    twelve = {"variant": "twelve"}
    g = morris.Game(twelve, moves="a7 d7 b6 g7 c5")
    assert g.rules["variant"] == "twelve" and g.pieces_in_hand == (9, 10)
    # a7-b6-c5 is a diagonal: a mill in twelve men's morris, not in nine.
    assert g.removal_pending and g.current_player == 0
    assert not morris.Game(moves="a7 d7 b6 g7 c5").removal_pending
    assert g.observation()[3, 0] == pytest.approx(9 / 12)  # the mover's hand over 12
    # Pieces slide along the diagonals too, once the hands are empty: the full board below
    # closes no mill, so the game ends there, drawn.
    white = ["d7", "g7", "d6", "c5", "e5", "a4", "b4", "e4", "c3", "d2", "f2", "g1"]
    black = ["a7", "b6", "f6", "d5", "c4", "f4", "g4", "d3", "e3", "b2", "a1", "d1"]
    full = morris.Game(twelve, moves=" ".join(m for pair in zip(white, black) for m in pair))
    assert full.outcome.kind == "draw" and full.outcome.reason == "board_full"
    assert full.legal_actions().size == 0
    # VecEnv plays it too: random games end, each by twelve's rules.
    env = morris.VecEnv(8, rules=twelve, seed=3)
    assert env.rules["variant"] == "twelve"
    obs, _ = env.reset(seed=3)
    assert obs.shape == (8, 15, 24) and np.allclose(obs[:, 3], 1.0)  # 12 in hand / 12
    ended = 0
    for _ in range(2000):
        _, _, terminated, truncated, _ = env.step()
        ended += int(terminated.sum() + truncated.sum())
    assert ended > 0
    # Agents without a network and matches play it; a network of another variant is refused.
    assert int(morris.Agent("minimax:depth=1").choose(g)) in g.legal_actions()
    assert len(morris.play_match("random", "minimax:depth=1", pairs=1, rules=twelve).games) == 2
    shipped = str(Path(__file__).resolve().parents[2] / "checkpoints" / "shipped")
    with pytest.raises(ValueError, match="plays the 'nine' variant, but the game is 'twelve'"):
        morris.Agent(f"az:model={shipped},sims=2").choose(g)
    morris.Agent(f"az:model={shipped},sims=2").check_rules("standard")
    # Gymnasium refuses such an opponent when the env is made, not in the middle of a step.
    gymnasium = pytest.importorskip("morris.gymnasium")
    with pytest.raises(ValueError, match="'nine' variant, but the game is 'twelve'"):
        gymnasium.MorrisEnv(opponent=f"az:model={shipped},sims=2", rules="twelve")


def test_lasker_morris_slides_while_placing():
    g = morris.Game("lasker", moves="a7 g1")
    assert g.rules["variant"] == "lasker" and g.pieces_in_hand == (9, 9)
    legal = {g.action_to_notation(int(a)) for a in g.legal_actions()}
    # 22 empty points to place on, and the slides of a7 along its lines.
    assert {"a7-d7", "a7-a4"} <= legal and len(legal) == 22 + 2
    g.play("a7-d7")
    assert g.pieces_in_hand == (9, 9) and g.current_player == 1
    assert g.observation()[3, 0] == pytest.approx(9 / 10)  # Black's hand over 10
    # Nine men's morris places first.
    with pytest.raises(morris.IllegalActionError, match="pieces in hand must be placed first"):
        morris.Game(moves="a7 g1 a7-d7")


def test_six_mens_morris_has_its_own_board_and_sizes():
    info = morris.variant_info("six")
    assert (info["num_points"], info["num_actions"], info["observation_shape"]) == (16, 272, (15, 16))
    assert info["point_names"][:3] == ["a5", "c5", "e5"] and info["pieces"] == 6
    assert morris.variant_info() == morris.Game().variant_info and morris.variant_info()["num_actions"] == 600
    assert "six" in morris.VARIANTS and "six" in morris.RULES_PRESETS
    g = morris.Game("six", moves="a5 e1 c5 e3")
    assert g.rules["variant"] == "six" and g.rules["flying"] is False
    assert g.variant_info == info and g.pieces_in_hand == (4, 4)
    assert g.observation().shape == (15, 16) and g.legal_mask().shape == (272,)
    assert g.board == (["a5", "c5"], ["e3", "e1"])
    assert "e5" in {g.action_to_notation(int(a)) for a in g.legal_actions()}
    g.play("e5")  # the mill a5 c5 e5
    assert g.removal_pending and g.action_to_notation(int(g.legal_actions()[0])).startswith("x")
    with pytest.raises(morris.IllegalActionError, match="out of range.*0..272"):
        g.apply(272)
    with pytest.raises(morris.NotationError, match="g7"):
        g.play("g7")
    assert str(g).startswith("5 W") and "a   b   c   d   e\n" in str(g)  # the 5 × 5 drawing
    # Symmetries on its board: each observation, mask and action maps and comes back.
    mask = g.legal_mask()
    for s in range(info["num_symmetries"]):
        inv = morris.inverse_symmetry(s, rules="six")
        back = morris.transform_mask(morris.transform_mask(mask, s, rules="six"), inv, rules="six")
        np.testing.assert_array_equal(back, mask)
        obs = morris.transform_observation(g.observation(), s, rules="six")
        np.testing.assert_array_equal(morris.transform_observation(obs, inv, rules="six"), g.observation())
        a = morris.transform_action(int(g.legal_actions()[0]), s, rules="six")
        assert morris.transform_action(a, inv, rules="six") == int(g.legal_actions()[0])
    with pytest.raises(ValueError, match=r"\[\.\.\., \[272\]\]"):
        morris.transform_mask(np.zeros(600, dtype=bool), 0, rules="six")
    with pytest.raises(ValueError, match="symmetry 16 does not exist"):
        morris.transform_action(0, 16, rules="six")
    assert morris.point_names("six") == info["point_names"]
    # Random games to the end, by Game, by VecEnv and by a minimax agent; matches play it.
    env = morris.VecEnv(8, rules="six", seed=1)
    obs, info_ = env.reset(seed=1)
    assert obs.shape == (8, 15, 16) and info_["action_mask"].shape == (8, 272) and env.num_actions == 272
    np.testing.assert_array_equal(morris.unpack_masks(env.packed_masks, env.num_actions), env.masks)
    ended = 0
    for _ in range(500):
        _, _, terminated, truncated, _ = env.step()
        ended += int(terminated.sum() + truncated.sum())
    assert ended > 0
    with pytest.raises(morris.IllegalActionError, match="out of range.*0..272"):
        env.step(np.full(8, 300))
    assert len(morris.play_match("minimax:depth=1", "random", pairs=1, rules="six").games) == 2


def test_three_mens_morris_is_won_by_a_line_and_numbers_moves_in_blocks_of_16():
    info = morris.variant_info("three")
    assert (info["num_points"], info["num_actions"], info["observation_shape"]) == (9, 160, (15, 9))
    assert info["point_names"] == ["a3", "b3", "c3", "a2", "b2", "c2", "a1", "b1", "c1"]
    assert info["pieces"] == 3 and info["num_symmetries"] == 8 and "three" in morris.RULES_PRESETS
    g = morris.Game("three", moves="b2 a3 a1 c1")
    assert g.rules["flying"] is False and g.legal_mask().shape == (160,)
    g.play("c3")  # the diagonal a1 b2 c3: White wins at once, Black's last piece still in hand
    o = g.outcome
    assert g.is_terminal and (o.kind, o.winner, o.reason) == ("win", 0, "line") and g.pieces_in_hand == (0, 1)
    assert len(g.legal_actions()) == 0
    g = morris.Game("three", moves="b2 a3 c3 a1 a2 c2")
    moves = {g.action_to_notation(int(a)) for a in g.legal_actions()}
    assert "b2-b3" in moves and all("-" in m for m in moves)
    assert int(g.notation_to_action("b2-b3")) == 16 + 16 * 4 + 1
    with pytest.raises(
        morris.IllegalActionError, match="action 12 names no point or move of the three board"
    ):
        g.apply(12)
    env = morris.VecEnv(4, rules="three", seed=3)
    obs, info_ = env.reset(seed=3)
    assert obs.shape == (4, 15, 9) and info_["action_mask"].shape == (4, 160)
    ended = 0
    for _ in range(200):
        _, _, terminated, truncated, _ = env.step()
        ended += int(terminated.sum() + truncated.sum())
    assert ended > 0
    assert len(morris.play_match("minimax:depth=9", "random", pairs=2, rules="three").games) == 4


def test_a_six_run_trains_from_python_and_its_data_and_model_refuse_nine(tmp_path):
    repo = Path(__file__).resolve().parents[2]
    run = tmp_path / "six"
    overrides = {"rules.preset": "six", "schedule.total_steps": 20, "schedule.eval_every": 0}
    morris.train(str(repo / "configs" / "tiny.toml"), run, overrides=overrides, quiet=True)
    shards = sorted((run / "games").glob("*.shard"))
    assert shards
    # Its games are six's: read as nine's, they are refused by name (not misread).
    with pytest.raises(ValueError, match="holds games of the 'six' variant, not 'nine'"):
        morris.read_shards(shards)
    # Its network evaluates six's observations, and names its board for nine's.
    net = morris._morris.Network(run / "checkpoints" / "step-20")
    logits, wdl = net.evaluate(np.zeros((2, 15, 16), dtype=np.float32))
    assert logits.shape == (2, 272) and wdl.shape == (2, 3)
    with pytest.raises(ValueError, match=r"\[B, 15, 16\].*six"):
        net.evaluate(np.zeros((2, 15, 24), dtype=np.float32))
    # A rules dict naming six gets six's own rule (no flying) in whatever order, unless it says.
    assert morris.Game({"variant": "six"}).rules["flying"] is False
    assert morris.Game({"flying": True, "variant": "six"}).rules["flying"] is True
    assert morris.Game({"variant": "twelve"}).rules["flying"] is True
