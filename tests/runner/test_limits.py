"""Sizes checked up front: a run the disk cannot hold, or cut into absurdly many
parts, is one line before anything is written or listed; --jobs beyond the cores is capped
with a note."""
from __future__ import annotations

import collections
import functools
import shutil

import joblib
import numpy as np
import pytest

import strategies
from simcore import runner
from simcore.batch import play_batch, result_arrays
from simcore.errors import CounterOverflow, UserError
from simcore.registry import get_game

FABRYKA = get_game("fabryka")
SPECS = ["random", "random"]
ROW_BYTES = 141  # runner.bytes_per_game of two-player Fabryka


def play(out, **kw):
    return runner.run(FABRYKA, FABRYKA.params(players=2), SPECS,
                      functools.partial(strategies.build_lineup, "fabryka", SPECS), out, quiet=True, **kw)


def test_row_bytes_is_what_the_tests_assume():
    state = FABRYKA.new_state(FABRYKA.params(players=2))
    assert runner.bytes_per_game(state.n_players, state.n_features, state.n_interim) == ROW_BYTES


def test_a_run_larger_than_the_disk_is_refused_before_anything_is_written(tmp_path):
    # --games 10**15 built its chunk list first: 10 GB after 40 s, nothing played.
    with pytest.raises(UserError, match=r"^1,000,000,000,000,000 games need about 141.0 PB on disk for .*"
                                        r" are free there: ask for fewer games or free some space$"):
        play(tmp_path / "r", n_games=10**15, jobs=1)
    assert not (tmp_path / "r").exists()


def fake_free(monkeypatch, free: int) -> None:
    usage = collections.namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(free, 0, free))


def test_only_the_games_still_to_play_must_fit(tmp_path, monkeypatch):
    out = tmp_path / "r"
    play(out, n_games=100, chunk_size=50, jobs=1)
    manifest = (out / "manifest.json").read_text()
    fake_free(monkeypatch, 60 * ROW_BYTES)
    assert play(out, n_games=100, chunk_size=50, jobs=1).played == 0  # a finished run re-runs on a full disk
    assert play(out, n_games=150, chunk_size=50, jobs=1).played == 50  # 50 more fit in 60 games' space
    with pytest.raises(UserError, match=r"^100 games need about 14.1 KB on disk for .*, and 8.5 KB are free"):
        play(out, n_games=250, chunk_size=50, jobs=1)
    assert (out / "manifest.json").read_text() != manifest and '"n_games": 150' in (out / "manifest.json").read_text()


def test_a_run_of_too_many_parts_is_refused(tmp_path):
    with pytest.raises(UserError, match=r"^2,000,000 games in chunks of 1 make 2,000,000 parts, more than "
                                        r"1,000,000: ask for fewer games or a larger --chunk-size$"):
        play(tmp_path / "r", n_games=2_000_000, chunk_size=1, jobs=1)
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("backend", ["threads", "processes"])
def test_jobs_beyond_the_cores_are_capped_with_a_note(capsys, backend):
    # --jobs 1000 --backend processes started 98 workers and took 3 GB in 7 s.
    runner._capped.clear()
    for _ in range(2):
        with runner.workers(backend, 1000, None) as n:
            assert n == joblib.cpu_count()
    err = capsys.readouterr().err
    assert err == f"chocosim: jobs = 1000 is more than the {joblib.cpu_count()} cores here: using {joblib.cpu_count()}\n"
    with runner.workers(backend, 1, None) as n:
        assert n == 1


# A Python game whose seats end holding a counter the params set: seat 0 `counter`, seat 1
# `counter - 1`, as a feature and as an interim score. Results store both in int16.
COUNTER = '''
from simcore.pygame import GameParams, PyGame, param


class CounterParams(GameParams):
    players: int = param(2, "rulebook", "Players", ge=2, le=2)
    counter: int = param(0, "rulebook", "Seat 0's counter", ge=-10**6, le=10**6)
    interim_counter: int = param(0, "rulebook", "Seat 0's interim score", ge=-10**6, le=10**6)


class Counter(PyGame):
    NAME, TITLE, PLAYERS, PARAMS = "counter", "Counter", (2, 2), CounterParams
    END_REASONS = ("done",)
    FEATURES = ("held",)
    INTERIM = ("half",)

    def setup(self):
        self.moved = 0

    def current_player(self):
        return -1 if self.moved == 2 else self.moved

    def legal_actions(self):
        return [0]

    def apply(self, action):
        self.moved += 1

    def scores(self):
        return [0, 0]

    def end_reason(self):
        return "done"

    def features(self, seat):
        return [self.params.counter - seat]

    def interim(self, seat):
        return [self.params.interim_counter - seat]

    def observation(self, seat):
        return {}

    def describe(self, action):
        return "pass"
'''


@pytest.fixture
def counter(tmp_path, fresh_registry):
    path = tmp_path / "counter.py"
    path.write_text(COUNTER)
    return get_game(str(path))


def play_counter(spec, **sets):
    state = spec.new_state(spec.params(players=2, sets=sets))
    out = result_arrays(state, 3)
    play_batch(state, strategies.build_lineup(spec.name, ["random", "random"]),
               np.array([[0, 1]], np.int32), 1, 7, 0, 3, **out)
    return out


@pytest.mark.parametrize("column", ["counter", "interim_counter"])
def test_a_value_at_the_edge_of_int16_is_stored(counter, column):
    out = play_counter(counter, **{column: 32767})  # seat 1 holds 32766
    stored = out["features" if column == "counter" else "interim"]
    assert stored.reshape(3, 2).tolist() == [[32767, 32766]] * 3
    out = play_counter(counter, **{column: -32767})  # seat 1 holds -32768
    stored = out["features" if column == "counter" else "interim"]
    assert stored.reshape(3, 2).tolist() == [[-32767, -32768]] * 3


@pytest.mark.parametrize(("column", "name"), [("counter", "held"), ("interim_counter", "interim_half")])
@pytest.mark.parametrize(("value", "beyond"), [(32768, 32768), (-32768, -32769), (10**6, 10**6)])
def test_a_value_beyond_int16_is_named_not_stored_wrapped(counter, column, name, value, beyond):
    """Seat 0 holds `value`, seat 1 `value - 1`: the first that does not fit is named."""
    with pytest.raises(CounterOverflow, match=rf"^CounterState: {name} = {beyond} in game 0 does not fit the int16 "):
        play_counter(counter, **{column: value})
