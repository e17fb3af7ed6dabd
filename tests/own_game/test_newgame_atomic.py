"""`chocosim new-game` writes its skeleton whole or not at all (a temporary directory
beside the target, moved into place), and refuses a name that would shadow an importable
module or a registered game: one line, exit 2, nothing on disk, and a re-run works."""
from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from helpers import cli

SKELETON = ["README.md", "mygame/__init__.py", "mygame/data/rules.toml", "mygame/params.py", "mygame/rules.pxd",
            "mygame/rules.pyx", "pyproject.toml", "setup.py", "tests/test_mygame.py"]


def everything(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_a_name_too_long_for_the_file_system_leaves_nothing(tmp_path, capsys):
    name = "g" * 251  # a valid package directory, but tests/test_<name>.py is 260 characters
    code, _, err = cli(capsys, "new-game", name, "--out", str(tmp_path / "deep" / "pkg"))
    assert code == 2 and len(err.splitlines()) == 1
    assert err.startswith(f"chocosim: error: cannot write the skeleton to {tmp_path / 'deep' / 'pkg'}: File name too long")
    assert everything(tmp_path) == []  # not even the parent directory it made


@pytest.mark.parametrize("target", ["new", "empty"])
def test_a_full_disk_leaves_nothing_and_a_rerun_works(tmp_path, capsys, monkeypatch, target):
    out = tmp_path / "pkg"
    if target == "empty":
        out.mkdir()
    real, written = Path.write_text, []

    def full_after_three(self, text, *args, **kw):
        if len(written) == 3:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))
        written.append(self)
        return real(self, text, *args, **kw)

    monkeypatch.setattr(Path, "write_text", full_after_three)
    code, _, err = cli(capsys, "new-game", "mygame", "--out", str(out))
    assert code == 2 and len(err.splitlines()) == 1
    assert err.startswith(f"chocosim: error: cannot write the skeleton to {out}: No space left on device")
    assert len(written) == 3 and all(not p.exists() for p in written)
    assert everything(tmp_path) == ([] if target == "new" else ["pkg"])  # the empty directory stays empty
    monkeypatch.undo()
    code, _, _ = cli(capsys, "new-game", "mygame", "--out", str(out))
    assert code == 0 and files(out) == SKELETON
    assert [p.name for p in tmp_path.iterdir()] == ["pkg"]  # no temporary directory left beside it


@pytest.mark.parametrize("name, taken", [
    ("simcore", "the installed module 'simcore'"),
    ("analysis", "the installed module 'analysis'"),
    ("polars", "the installed module 'polars'"),
    ("json", "Python's own module 'json'"),
    ("sys", "Python's own module 'sys'"),
    ("fabryka", "the registered game 'fabryka'"),
    ("enemy_chocolatier", "the registered game 'enemy_chocolatier'"),
])
def test_a_name_that_shadows_a_module_or_a_game_is_refused_in_one_line(tmp_path, capsys, name, taken):
    code, _, err = cli(capsys, "new-game", name, "--out", str(tmp_path / "pkg"))
    assert (code, err.rstrip("\n")) == (2, f"chocosim: error: game name {name!r} is taken by {taken}: the package would "
                              "shadow it; choose another name")
    assert everything(tmp_path) == []


def test_a_name_shadowing_a_module_of_the_working_directory_is_refused(tmp_path, capsys, monkeypatch):
    (tmp_path / "house_rules.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    code, _, err = cli(capsys, "new-game", "house_rules", "--out", str(tmp_path / "pkg"))
    assert code == 2 and "is taken by the installed module 'house_rules'" in err
    assert not (tmp_path / "pkg").exists()
