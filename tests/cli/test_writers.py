"""Every output writer fails in one line with exit code 2, and loses nothing: a full or
read-only disk, a directory given as the file, a file given as a directory's parent.
A full disk is simulated by making the write raise the OS error it raises."""
from __future__ import annotations

import errno
import os
import pathlib
import sqlite3

import polars as pl
import pytest

from analysis import api
from helpers import cli

OLD = "the report written before\n"


pytestmark = pytest.mark.usefixtures("release_build")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two small paired runs (the rulebook and a house rule), made once."""
    where = tmp_path_factory.mktemp("runs")
    for name, sets in (("a", None), ("b", {"rounds": 3})):
        api.run("fabryka", ["random", "random"], 40, where / name, sets=sets, jobs=1)
    return where


def fail_writes(monkeypatch, code: int, suffix: str) -> None:
    """Writing any file whose name ends with `suffix` (through the temp file beside it)
    fails with OSError `code`, as a full (ENOSPC) or read-only (EROFS) disk makes it."""
    write_text = pathlib.Path.write_text

    def failing(self, *args, **kwargs):
        if self.name.endswith(suffix) or self.name.endswith(f"{suffix}.tmp") or \
                (self.name.startswith(".") and suffix in self.name):
            raise OSError(code, os.strerror(code))
        return write_text(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "write_text", failing)


def commands(runs, out, play=None):
    """Each writer of a report, as the command line runs it, writing `out` (the runs it
    plays go under `play`, by default beside the shared runs)."""
    play = play or runs
    small = ["--games", "12", "--jobs", "1", "--quiet"]
    return {
        "report": ["report", str(runs / "a"), "-o", str(out)],
        "compare": ["compare", str(runs / "a"), str(runs / "b"), "-o", str(out)],
        "sweep": ["sweep", "fabryka", "--seats", "random,random", "--vary", "rounds=3,4", *small,
                  "--dir", str(play / "sweep"), "-o", str(out)],
        "skill": ["skill", "fabryka", "--ladder", "random,greedy", *small, "--runs", str(play / "skill"),
                  "-o", str(out)],
        "balance": ["balance", "fabryka", "--ladder", "random,greedy", "--minutes", "0", *small,
                    "--no-compensation", "--no-evidence", "--runs", str(play / "balance"), "-o", str(out)],
    }


WRITERS = ["report", "compare", "sweep", "skill", "balance"]


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS], ids=["full", "read-only"])
@pytest.mark.parametrize("writer", WRITERS)
def test_a_report_that_cannot_be_written_is_one_line_and_keeps_the_old_one(runs, tmp_path, capsys, monkeypatch,
                                                                         writer, code):
    out = tmp_path / "out" / "r.html"
    out.parent.mkdir()
    out.write_text(OLD)
    fail_writes(monkeypatch, code, "r.html")
    rc, _, err = cli(capsys, *commands(runs, out)[writer])
    assert rc == 2 and err.count("\n") == 1, err
    assert err.startswith("chocosim: error: cannot write ") and os.strerror(code) in err, err
    assert out.read_text() == OLD
    assert [p.name for p in out.parent.iterdir()] == ["r.html"] or writer == "balance"  # no temp file left


@pytest.mark.parametrize("writer", WRITERS)
def test_a_directory_given_as_the_report_is_refused_before_playing(runs, tmp_path, capsys, writer):
    out = tmp_path / "a-directory"
    (out / "inside").mkdir(parents=True)
    rc, _, err = cli(capsys, *commands(runs, out, tmp_path / "play")[writer])
    assert rc == 2 and err.count("\n") == 1, err
    assert "is a directory" in err or "allowed is a path ending in .html" in err
    assert [p.name for p in out.iterdir()] == ["inside"]
    assert not (tmp_path / "play").exists()  # refused before anything was played


@pytest.mark.parametrize("writer", WRITERS)
def test_a_file_given_as_the_reports_directory_is_refused_before_playing(runs, tmp_path, capsys, writer):
    parent = tmp_path / "a-file"
    parent.write_text("keep me")
    rc, _, err = cli(capsys, *commands(runs, parent / "sub" / "r.html", tmp_path / "play")[writer])
    assert rc == 2 and err == f"chocosim: error: -o {parent / 'sub' / 'r.html'}: {parent} is a file, not a directory\n"
    assert parent.read_text() == "keep me"
    assert not (tmp_path / "play").exists()


def test_the_pdf_path_is_checked_before_playing(runs, tmp_path, capsys):
    parent = tmp_path / "a-file"
    parent.write_text("keep me")
    rc, _, err = cli(capsys, "report", str(runs / "a"), "-o", str(tmp_path / "r.html"), "--pdf", str(parent / "r.pdf"))
    assert rc == 2 and err == f"chocosim: error: --pdf {parent / 'r.pdf'}: {parent} is a file, not a directory\n"
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("error", [
    OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)),
    pl.exceptions.ComputeError("parquet: underlying IO error: No space left on device (os error 28)"),
], ids=["oserror", "polars"])
def test_the_sweeps_metrics_table_on_a_full_disk_is_one_line(runs, tmp_path, capsys, monkeypatch, error):
    where = tmp_path / "sweep"
    argv = ["sweep", "fabryka", "--seats", "random,random", "--vary", "rounds=3,4", "--games", "12",
            "--jobs", "1", "--quiet", "--dir", str(where), "-o", str(tmp_path / "s.html")]
    assert cli(capsys, *argv)[0] == 0
    before = (where / "metrics.parquet").read_bytes()

    def full(self, path, **kw):
        pathlib.Path(path).write_bytes(b"half a table")  # what a full disk leaves
        raise error

    monkeypatch.setattr(pl.DataFrame, "write_parquet", full)
    rc, _, err = cli(capsys, *argv)
    assert rc == 2 and err.startswith(f"chocosim: error: cannot write {where / 'metrics.parquet'}: No space left on device")
    assert err.count("\n") == 1
    assert (where / "metrics.parquet").read_bytes() == before
    assert not [p for p in where.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("reason", ["database or disk is full", "attempt to write a readonly database"])
def test_a_study_that_cannot_be_written_is_one_line(tmp_path, capsys, monkeypatch, reason):
    import optuna
    from sqlalchemy.exc import OperationalError

    out = tmp_path / "tune"
    argv = ["tune", "fabryka", "--against", "random", "--trials", "2", "--games", "20", "--holdout-games", "20",
            "--jobs", "1", "--quiet", "--out", str(out)]

    def fails(self, *args, **kwargs):
        raise OperationalError("INSERT INTO trials ...", {}, sqlite3.OperationalError(reason))

    monkeypatch.setattr(optuna.storages.RDBStorage, "_create_new_trial", fails)
    rc, _, err = cli(capsys, *argv)
    assert rc == 2 and err == (f"chocosim: error: cannot write the study {out / 'study.db'}: {reason}; the finished "
                               "trials are kept: free some space (or make it writable) and run the same command again\n")
    assert not (out / "best.json").exists()
    monkeypatch.undo()
    assert cli(capsys, *argv)[0] == 0  # the same command, once the disk is fixed, completes the study
    assert (out / "best.json").exists()
