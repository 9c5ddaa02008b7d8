"""Shared paths: the repository's checked-in data (conformance games, shipped model, fixtures)."""

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def shipped_model() -> Path:
    return REPO / "checkpoints" / "shipped"


@pytest.fixture(scope="session")
def fixture_run() -> Path:
    return REPO / "tests" / "fixtures" / "format-v1" / "run"


@pytest.fixture(scope="session")
def conformance_games() -> list:
    import json

    path = REPO / "env" / "tests" / "data" / "openspiel-nmm-games.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
