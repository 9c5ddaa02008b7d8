"""The package's surface: the type stubs match the native module, every public item has a
docstring, and the package installs its stubs and py.typed marker."""

import ast
from pathlib import Path

import morris
from morris import _morris


def stub_names():
    stub = Path(_morris.__file__).with_name("_morris.pyi")
    assert stub.exists(), "the stubs are installed beside the extension"
    assert stub.with_name("py.typed").exists()
    tree = ast.parse(stub.read_text())
    names = {}
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
    return names


def test_stubs_match_the_native_module():
    stubs = stub_names()
    native = {n for n in dir(_morris) if not n.startswith("_")}
    stubbed = {n for n in stubs if n != "Rules"}
    assert native == stubbed, f"missing stubs: {native - stubbed}; stale stubs: {stubbed - native}"
    for name, node in stubs.items():
        if isinstance(node, ast.ClassDef):
            cls = getattr(_morris, name)
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and not item.name.startswith("_"):
                    assert hasattr(cls, item.name), f"{name}.{item.name} is stubbed but missing"


def test_every_public_item_is_documented():
    for name in morris.__all__:
        item = getattr(morris, name)
        if callable(item):
            assert (item.__doc__ or "").strip(), f"morris.{name} has no docstring"
    for cls in (morris.Game, morris.VecEnv, morris.Agent, morris.Model, morris.Outcome):
        for attr in dir(cls):
            if attr.startswith("_"):
                continue
            doc = getattr(getattr(cls, attr), "__doc__", None)
            assert (doc or "").strip(), f"{cls.__name__}.{attr} has no docstring"
    assert "IllegalActionError" in morris.Game.apply.__doc__
