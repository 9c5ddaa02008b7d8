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


def test_match_from_an_opening_book(tmp_path):
    book = tmp_path / "book.jsonl"
    book.write_text(
        '{"rules":"standard","seed":5,"moves":["d2","f4","d7","b4","a7","g4"],"value":"1/2-1/2"}\n'
        '{"rules":"standard","seed":6,"moves":["a1","g7","d6"],"value":"1-0"}\n'
    )
    result = morris.play_match("minimax:depth=1", "random", pairs=2, seed=1, openings=book)
    assert len(result.games) == 4
    for g in result.games:
        opening = ["d2 f4 d7 b4 a7 g4", "a1 g7 d6"][g["pair"]]
        assert " ".join(g["moves"]).startswith(opening)
        assert g["opening_value"] == ["1/2-1/2", "1-0"][g["pair"]]
        assert g["opening_seed"] == [5, 6][g["pair"]]
    with pytest.raises(ValueError, match="holds 2 openings"):
        morris.play_match("minimax:depth=1", "random", pairs=3, openings=book)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"rules":"standard","seed":1,"moves":["d2","d2"],"value":"1-0"}\n')
    with pytest.raises(ValueError, match="bad.jsonl:1"):
        morris.play_match("minimax:depth=1", "random", pairs=1, openings=str(bad))
    with pytest.raises(ValueError, match="not both"):
        morris.play_match("minimax:depth=1", "random", pairs=1, opening_plies=4, openings=book)
    with pytest.raises(FileNotFoundError):
        morris.play_match("minimax:depth=1", "random", pairs=1, openings=tmp_path / "missing.jsonl")


def test_perfect_player_from_tables_built_in_python(tmp_path):
    import random

    sectors = morris.build_tablebase(tmp_path, 4)
    assert sorted(sectors) == ["3v3", "3v4", "4v3", "4v4"]
    assert morris.build_tablebase(tmp_path, 4) == sectors  # finished sectors are kept
    perfect = morris.Agent(f"perfect:tb={tmp_path},pick=random", seed=3)
    assert perfect.name == f"perfect:tb={tmp_path},pick=random"
    # From the start the placement needs sectors these tables lack: the error names the command.
    with pytest.raises(RuntimeError, match="--max-pieces"):
        perfect.choose(morris.Game())
    # Random games that reach the tables (hands empty, at most 4 pieces a side): from there the
    # perfect players move legally until the game ends or 40 plies pass.
    reached = 0
    for seed in range(500):
        game = morris.Game()
        rng = random.Random(seed)
        while not game.is_terminal:
            inside = game.pieces_in_hand == (0, 0) and max(game.pieces_on_board) <= 4
            if inside and not game.removal_pending:
                break
            game.apply(rng.choice(game.legal_actions().tolist()))
        if game.is_terminal:
            continue
        reached += 1
        other = morris.Agent(f"perfect:tb={tmp_path}", seed=seed)
        for _ in range(40):
            if game.is_terminal:
                break
            mover = perfect if game.current_player == 0 else other
            action = mover.choose(game)
            assert action in game.legal_actions()
            game.apply(action)
        if reached == 5:
            break
    assert reached == 5
    with pytest.raises(ValueError, match="--max-pieces 10"):
        morris.build_tablebase(tmp_path, 10)
    with pytest.raises(ValueError):
        morris.Agent("perfect:tb=/no/such/tables")
