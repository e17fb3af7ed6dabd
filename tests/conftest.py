"""Fixtures shared by tests in several folders. Plain helper functions, which tests import,
are in helpers.py."""
from __future__ import annotations

import pytest

import analysis.cli
from simcore import registry


@pytest.fixture
def release_build(monkeypatch):
    """stderr as on the release build: the checked build's warning line (CI runs the fast
    tests on it) has a test of its own (tests/cli/test_cli.py)."""
    monkeypatch.setattr(analysis.cli, "CHECKED_BUILD", False)


@pytest.fixture
def fresh_registry(monkeypatch):
    """Games named directly by a test are forgotten after it (other tests list games)."""
    monkeypatch.setattr(registry, "_named", {})
