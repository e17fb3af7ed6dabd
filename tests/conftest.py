"""Fixtures shared by tests in several folders. Plain helper functions, which tests import,
are in helpers.py."""
from __future__ import annotations

from collections import defaultdict

import pytest

import analysis.cli
from simcore import registry

# The marks of the long tests, which the default selection (addopts in pyproject.toml)
# leaves out and CI runs; and how long an unmarked test may take before the summary of a
# run names it: the README's test command stays within a few minutes only while every
# test over this is marked.
LONG_MARKS = ("statistical", "slow")
LONG_S = 20


@pytest.fixture
def release_build(monkeypatch):
    """stderr as on the release build: the checked build's warning line (CI runs the fast
    tests on it) has a test of its own (tests/cli/test_cli.py)."""
    monkeypatch.setattr(analysis.cli, "CHECKED_BUILD", False)


@pytest.fixture
def fresh_registry(monkeypatch):
    """Games named directly by a test are forgotten after it (other tests list games)."""
    monkeypatch.setattr(registry, "_named", {})


def pytest_terminal_summary(terminalreporter):
    """Name the unmarked tests that took over LONG_S seconds (setup, call and teardown;
    a module's shared fixture counts for the test that built it)."""
    seconds, unmarked = defaultdict(float), set()
    for reports in terminalreporter.stats.values():
        for report in reports:
            if isinstance(report, pytest.TestReport):
                seconds[report.nodeid] += report.duration
                if not any(mark in report.keywords for mark in LONG_MARKS):
                    unmarked.add(report.nodeid)
    long = sorted(((s, node) for node, s in seconds.items() if node in unmarked and s > LONG_S), reverse=True)
    if long:
        terminalreporter.section(f"unmarked tests over {LONG_S} s: mark them slow or statistical (pyproject.toml)")
        for s, node in long:
            terminalreporter.write_line(f"{s:6.1f} s  {node}")
