"""Every test here registers a designer's game of its own."""
from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _forget_named_games(fresh_registry):
    """Each test starts from, and leaves, a registry naming only the bundled games."""
