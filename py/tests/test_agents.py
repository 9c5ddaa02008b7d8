"""morris.Agent and morris.play_match: every spec form the arena knows, from Python."""

import morris
import pytest


@pytest.mark.parametrize("spec", ["random", "minimax:depth=2", "minimax:time=20ms", "mcts:sims=50"])
def test_agents_choose_legal_moves_to_the_end(spec):
    agent = morris.Agent(spec, seed=1)
    assert agent.name.split(":")[0] == spec.split(":")[0]
    opponent = morris.Agent("random", seed=2)
    game = morris.Game(moves="d6 a1 d5 a4")
    while not game.is_terminal and game.num_plies < 60:
        mover = agent if game.current_player == 0 else opponent
        action = mover.choose(game)
        assert action in game.legal_actions()
        game.apply(action)
    agent.reset()


def test_model_agent_plays_and_takes_a_mill(shipped_model):
    agent = morris.Agent(f"az:model={shipped_model},sims=32", seed=0)
    # White to move can close d7-d6-d5.
    game = morris.Game(moves="d6 a1 d5 a4")
    action = agent.choose(game)
    assert game.action_to_notation(action) in {"d7", "a7"}  # closes the mill, or blocks a1-a4-a7
    game.apply(action)
    assert morris.Agent("minimax:depth=1").choose(morris.Game(moves="d6 a1 d5 a4 d7")) is not None


def test_finished_game_gives_none_and_bad_specs_raise():
    game = morris.Game({"turn_cap": 1})
    game.apply(0)
    assert morris.Agent("random").choose(game) is None
    with pytest.raises(morris.SpecError, match="bad agent spec 'minimax:depht=3'"):
        morris.Agent("minimax:depht=3")
    with pytest.raises(ValueError):
        morris.Agent("az:model=/no/such/model,sims=8")
    with pytest.raises(ValueError):
        morris.Agent("")


def test_match_summary_is_the_cli_report():
    result = morris.play_match("minimax:depth=2", "random", pairs=3, opening_plies=4, seed=5, threads=2)
    r = result.report
    assert r["wins"] + r["draws"] + r["losses"] == 6
    assert len(result.games) == 6
    assert r["score_low"] <= r["score"] <= r["score_high"]
    assert result.score == r["score"] and result.score > 0.5
    assert "minimax:depth=2 vs random" in str(result) and "W/D/L" in result.text
    for g in result.games:
        assert g["result"] in ("1-0", "0-1", "1/2-1/2")
        replay = morris.Game(moves=" ".join(g["moves"]))
        assert replay.is_terminal or g["reason"]
    again = morris.play_match("minimax:depth=2", "random", pairs=3, opening_plies=4, seed=5, threads=1)
    assert [g["moves"] for g in again.games] == [g["moves"] for g in result.games]
    with pytest.raises(ValueError, match="pairs"):
        morris.play_match("random", "random", pairs=0)
    with pytest.raises(morris.SpecError):
        morris.play_match("random", "nobody")
