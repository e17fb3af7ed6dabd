"""Errors a user can fix: the CLI prints them as one line and exits with code 2."""
from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path


class UserError(Exception):
    """Bad input (unknown name, invalid param, foreign run directory...)."""


class CounterOverflow(UserError, OverflowError):
    """A game's feature or interim score beyond the integer type results store it in
    (int16; int8 for a game's narrow features): the params made it larger than any
    printed game does."""


def check_output(path: Path | str, what: str = "-o") -> Path:
    """Refuse, before anything is played or written, an output file that cannot be
    written where it is asked: a directory given as the file, or a path through a file.
    (A full or read-only disk shows only when writing: see `writing`.)"""
    path = Path(path)
    if path.is_dir():
        raise UserError(f"{what} {path}: is a directory; give a file name, e.g. {path / 'report.html'}")
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if parent.exists() and not parent.is_dir():
        raise UserError(f"{what} {path}: {parent} is a file, not a directory")
    return path


@contextlib.contextmanager
def writing(path: Path | str) -> Iterator[None]:
    """An OSError while writing `path` (disk full, read-only, no permission) as one
    line naming the file the user asked for (not the temp file written first). Writers
    write through a temp file renamed into place, so the file there before is intact."""
    try:
        yield
    except OSError as e:
        reason = (e.strerror or os.strerror(e.errno)) if e.errno else str(e)
        raise UserError(f"cannot write {path}: {reason}") from None
    except Exception as e:
        # polars reports a failed write (a full disk) as its own error around the OS one.
        if not type(e).__module__.startswith("polars"):
            raise
        reason = str(e).splitlines()[0].rpartition("IO error: ")[2]
        raise UserError(f"cannot write {path}: {reason}") from None


class ArgumentError(UserError, TypeError):
    """A function of the Python API called with an argument of the wrong type: one line
    naming the argument, what it takes and what it got."""
