"""Sizes checked up front: a run the disk cannot hold, or cut into absurdly many
parts, is one line before anything is written or listed; --jobs beyond the cores is capped
with a note."""
from __future__ import annotations

import collections
import functools
import shutil

import joblib
import pytest

import strategies
from simcore import runner
from simcore.errors import UserError
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
