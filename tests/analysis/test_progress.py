"""The one progress every command shows (analysis.progress), on a fake clock: a plain line
every interval when stderr is not a terminal, with the rate and an ETA from the expected
work or the time budget; nothing with quiet; the runner's games counted in it."""
from __future__ import annotations

import functools
import io
import re

import pytest

import strategies
from analysis import api, progress
from analysis.progress import Progress, duration
from simcore.registry import get_game
from simcore.runner import run


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def piped(clock, **kw):
    stream = io.StringIO()
    return Progress("sweep", stream=stream, terminal=False, interval=10, clock=clock, **kw), stream


def test_a_piped_line_every_interval_with_the_rate_and_eta():
    clock = Clock()
    p, stream = piped(clock, total=1000)
    with p:
        for _ in range(30):  # 100 games a step, one step every 4 s: a line every 10 s at most
            clock.t += 4
            p.advance(100) if p.done < 1000 else None
        lines = stream.getvalue().splitlines()
    # Steps at 4, 8, 12, ... s: lines at 12, 24, 36 s (the first step 10 s after the last line).
    assert re.fullmatch(r"sweep: 300 of 1,000 games, 30%, 25 games/s, ETA 28 s \(about \d\d:\d\d UTC\)", lines[0])
    assert [re.match(r"sweep: ([\d,]+) of", x)[1] for x in lines] == ["300", "600", "900"]
    assert stream.getvalue().splitlines()[-1] == "sweep: done, 1,000 of 1,000 games in 2 min 00 s"


def test_no_line_before_the_interval():
    clock = Clock()
    p, stream = piped(clock, total=1000)
    with p:
        clock.t += 9.9
        p.advance(500)
        assert stream.getvalue() == ""
        clock.t += 0.1
        p.advance(1)
        assert stream.getvalue().count("\n") == 1


def test_a_budget_gives_the_eta_and_the_share_of_the_time_spent():
    clock = Clock()
    p, stream = piped(clock, budget=600)
    with p:
        clock.t += 60
        p.phase("pilot: price 4 runs")
        clock.t += 30
        p.advance(4000)
        first, line = stream.getvalue().splitlines()
    assert first.startswith("sweep: 0 games, 1 min 00 s of the 10 min 00 s budget, 10%, ETA 9 min 00 s")
    assert line.startswith("sweep: 4,000 games, 1 min 30 s of the 10 min 00 s budget, 15%, 44 games/s, "
                           "ETA 8 min 30 s (about ")
    assert line.endswith(" · pilot: price 4 runs")


def test_resumed_work_counts_as_done_but_not_in_the_rate():
    clock = Clock()
    p, stream = piped(clock, total=10_000)
    with p:
        p.advance(8000, resumed=True)
        clock.t += 10
        p.advance(1000)
        assert p.rate() == 100 and p.eta() == 10
        assert "9,000 of 10,000 games, 90%, 100 games/s, ETA 10 s" in stream.getvalue()


def test_quiet_writes_nothing_and_counts_the_same():
    clock = Clock()
    p, stream = piped(clock, total=100, quiet=True)
    with p:
        for _ in range(10):
            clock.t += 20
            progress.advance(10)
            progress.say("a plan line")
    assert stream.getvalue() == "" and p.done == 100


def test_work_of_another_unit_is_not_counted():
    """A balance counts games: the runs its evidence report analyses are not games."""
    p, _ = piped(Clock(), budget=60)
    with p:
        progress.expect(5, "runs")
        progress.advance(5, "runs")
        progress.advance(7)
    assert (p.total, p.done) == (0, 7)
    progress.advance(3)  # no progress open: nowhere to count, no error
    assert p.done == 7


@pytest.mark.parametrize(("seconds", "text"), [(0.4, "0 s"), (59.6, "1 min 00 s"), (61, "1 min 01 s"),
                                               (7325, "2 h 02 min")])
def test_durations_read_as_a_person_says_them(seconds, text):
    assert duration(seconds) == text


def _run(out, n_games, quiet=False):
    spec = get_game("fabryka")
    specs = ["random", "random"]
    return run(spec, spec.params(players=2), specs, functools.partial(strategies.build_lineup, "fabryka", specs),
               out, n_games=n_games, jobs=1, chunk_size=100, quiet=quiet)


def test_the_runner_counts_its_games_and_a_resumed_run_its_held_games(tmp_path):
    p, stream = piped(Clock())
    with p:
        _run(tmp_path / "r", 400)
    assert (p.done, p.fresh) == (400, 400)
    p, _ = piped(Clock())
    with p:
        _run(tmp_path / "r", 600)  # extended: 400 held, 200 played
    assert (p.done, p.fresh) == (600, 200)
    p, _ = piped(Clock())
    with p:
        _run(tmp_path / "q", 200, quiet=True)
    assert p.done == 0


def test_progress_does_not_change_what_is_played(tmp_path):
    with Progress("run", stream=io.StringIO(), terminal=False, interval=0):
        _run(tmp_path / "shown", 300)
    _run(tmp_path / "silent", 300, quiet=True)
    assert api.results(tmp_path / "shown").drop("run_id").equals(api.results(tmp_path / "silent").drop("run_id"))
