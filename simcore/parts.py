"""A run's results on disk: one part per finished chunk, and its tally beside it.

    part-XXXXX.arrow        the chunk's rows (Arrow IPC file, uncompressed)
    part-XXXXX.tally.json   which games the part holds, its counts per cell, its size

Arrow IPC rather than Parquet: a part is written at about the speed of a copy (Parquet's
encoding cost as much as playing the games) and read back memory-mapped, without
decoding. It takes about three and a half times the disk space of Parquet (Fabryka). Runs of
an older chocosim, with Parquet parts (and their tally in the footer), stay readable.

The tally is written before the part is renamed into place and records the part's size:
a part counts as finished only when both are there and agree, so a part and its tally
are kept or lost together.
"""
from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from simcore.errors import UserError

__all__ = ["PART_GLOB", "LEGACY_GLOB", "TALLY_KEY", "part_name", "tally_path", "write_atomic",
           "write_part", "read_tally", "list_parts", "scan_parts", "read_part", "check_part"]

PART_GLOB = "part-*.arrow"
LEGACY_GLOB = "part-*.parquet"  # written by chocosim before parts were Arrow IPC
# The key of a legacy Parquet part's footer metadata that holds its tally.
TALLY_KEY = "chocosim.tally"


def part_name(index: int) -> str:
    return f"part-{index:05d}.arrow"


def tally_path(part: Path) -> Path:
    return part.with_name(f"{part.stem}.tally.json")


def write_atomic(path: Path, write: Callable[[Path], object]) -> None:
    """Write through a temp file in the same directory, then rename it into place, so a
    reader (or a resumed run) never sees a half-written file. The temp name starts with
    a dot and ends in .tmp, so it never matches a part's name."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_text(path: Path, text: str) -> None:
    """write_atomic a UTF-8 text file (a report, a manifest, a cache), making its
    directory if need be."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def write_part(path: Path, table: pl.DataFrame, tally: dict[str, Any]) -> None:
    """Write a part and its tally (which gains the part's size in bytes)."""
    def write(tmp: Path) -> None:
        table.write_ipc(tmp)
        tally["bytes"] = tmp.stat().st_size
        text = json.dumps(tally, separators=(",", ":"))
        write_atomic(tally_path(path), lambda p: p.write_text(text))

    write_atomic(path, write)


def read_tally(part: Path) -> dict[str, Any] | None:
    """The tally of a part; None for a part that has none (made by hand, or a legacy
    part written before tallies). OSError or ValueError when the tally is unreadable or
    does not match the part (a truncated part, or a tally of another one)."""
    if part.suffix == ".parquet":
        text = pl.read_parquet_metadata(part).get(TALLY_KEY)
        return None if text is None else json.loads(text)
    try:
        tally = json.loads(tally_path(part).read_text())
    except FileNotFoundError:
        return None
    if not isinstance(tally, dict):
        raise ValueError(f"{tally_path(part).name} is not a tally")
    size = part.stat().st_size
    if tally.get("bytes") != size:
        raise ValueError(f"it has {size:,} bytes; its tally says {tally.get('bytes')!r}")
    return tally


def list_parts(out: Path) -> list[Path]:
    """The parts of a run directory, in order; UserError if it has none. Listed by
    pathlib rather than a polars glob: a directory name may hold glob characters
    ("runs/[test]") that polars would expand."""
    parts = sorted(out.glob(PART_GLOB)) or sorted(out.glob(LEGACY_GLOB))
    if not parts:
        raise UserError(f"run directory {out} has no results (no {PART_GLOB})")
    return parts


def scan_parts(parts: list[Path]) -> pl.LazyFrame:
    """The rows of these parts (all of one run directory, so all of one format), lazily."""
    if parts and parts[0].suffix == ".parquet":
        return pl.scan_parquet(parts, glob=False)
    return pl.scan_ipc(parts, glob=False)


def read_part(part: Path, columns: list[str] | None = None) -> pl.DataFrame:
    if part.suffix == ".parquet":
        return pl.read_parquet(part, columns=columns)
    return pl.read_ipc(part, columns=columns)


def check_part(part: Path) -> None:
    """Raise OSError or a polars error if the part's footer does not read (truncated,
    or not a part at all); cheap: the rows are not read."""
    if part.suffix == ".parquet":
        pl.read_parquet_metadata(part)
    else:
        pl.read_ipc_schema(part)
