"""README's Python examples run as written (the run directory they read is swapped for the
checked-in fixture run, and PyTorch, which CI does not install, for a stand-in that checks it is
handed NumPy arrays)."""

import re
import sys
import types

import numpy as np


def test_readme_python_examples_run(repo, fixture_run, monkeypatch, capsys):
    readme = (repo / "README.md").read_text()
    section = readme.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) >= 2
    torch = types.ModuleType("torch")

    def from_numpy(a):
        assert isinstance(a, np.ndarray)
        return a

    torch.from_numpy = from_numpy
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.chdir(repo)
    scope: dict = {}
    for code in blocks:
        exec(compile(code.replace('"checkpoints/tiny"', repr(str(fixture_run))), "README.md", "exec"), scope)
    assert scope["x"].shape[1:] == (15, 24)
    assert scope["logits"].shape == (8, 600)
    assert "minimax:depth=3 vs random" in capsys.readouterr().out


def test_python_md_pettingzoo_and_gymnasium_example_runs(repo, monkeypatch):
    """The PettingZoo and Gymnasium example README points to (docs/python.md) runs as written."""
    doc = (repo / "docs" / "python.md").read_text()
    section = doc.split("\n## PettingZoo\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1
    monkeypatch.chdir(repo)
    scope: dict = {}
    exec(compile(blocks[0], "docs/python.md", "exec"), scope)
    assert scope["many"].num_envs == 256
