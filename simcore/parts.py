"""A run's results on disk: one part per finished chunk, and its tally beside it.

    part-XXXXX.arrow        the chunk's rows (Arrow IPC file)
    part-XXXXX.tally.json   which games the part holds, its counts per cell, its size

Arrow IPC rather than Parquet: a part is written at about the speed of a copy (Parquet's
encoding cost as much as playing the games). Runs of an older chocosim, with Parquet
parts (and their tally in the footer), stay readable.

Compact parts (runs whose manifest has "layout": 2, every new run) store less than the
rows a reader gets: the `game` and `seed` columns are not stored but derived on read
(game = the part's first game + row // players, seed = the run's seed hashed with it,
as the batch loop does), each integer column is stored in the narrowest type that
holds the part's values (the tally's "widen" names its type on read), and the file is
LZ4-compressed. Two-player Fabryka: 36 bytes a game instead of 124, for the CPU that
writing and hashing the uncompressed part twice took (LZ4 costs what the smaller part
saves in hashing and in the kernel's copies). A reader sees the same rows, column types and order
either way: every reader finds the rows through scan_parts or read_part. Runs of an
older layout (no "layout" in their manifest) keep theirs when resumed or extended.

The tally is written before the part is renamed into place and records the part's size:
a part counts as finished only when both are there and agree, so a part and its tally
are kept or lost together.

A part proves what it holds. Its tally names the run (run_id, seed), the chunk (index,
first_game, end) and the SHA-256 of the part's bytes; the part's own rows name the run
(run_id column). `part_proof` checks a part against its run's manifest: the runner
replays a part that fails, and list_parts, through which every reader finds the parts,
refuses it in one line, so a part of another run or chunk, a damaged part or a stray one
is never counted. A part without that proof is never trusted: one stored whole (of
chocosim 0.3, made by hand, or whose tally lost its checksum) is checked row by row (run
id, game index, seed) and read as unproven, which its readers say, and the runner plays
its games again; a compact one is played again and never read.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from simcore.errors import UserError

__all__ = ["MANIFEST", "STRAY", "PART_GLOB", "LEGACY_GLOB", "TALLY_KEY", "LAYOUT", "DERIVED", "part_name",
           "tally_path", "write_atomic", "write_part", "read_tally", "list_parts", "scan_parts", "read_part", "check_part",
           "segments_of", "chunk_of", "chunks_of", "part_index", "checksum", "part_problem", "part_proof",
           "check_parts", "AGAIN"]

MANIFEST = "manifest.json"
PART_GLOB = "part-*.arrow"
LEGACY_GLOB = "part-*.parquet"  # written by chocosim before parts were Arrow IPC
# The key of a legacy Parquet part's footer metadata that holds its tally.
TALLY_KEY = "chocosim.tally"
# The part layout of new runs (see the module's docstring); a manifest without "layout"
# is of layout 1: every column stored at its full type, uncompressed.
LAYOUT = 2
# Columns a compact part derives from its tally, inserted after run_id on read.
DERIVED = ("game", "seed")
CODEC = "lz4"  # zstd stores a fifth less but takes twice as long to write
_NARROW = ((np.int8, pl.Int8), (np.int16, pl.Int16))


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


def write_part(path: Path, table: pl.DataFrame, tally: dict[str, Any], layout: int = LAYOUT) -> None:
    """Write a part and its tally (which gains the part's size in bytes and checksum).
    `table` holds every column a reader gets, game-major and seat-minor (those that
    layout 2 derives on read may be left out); layout 2 stores it compact (see the
    module's docstring), layout 1 as it is."""
    if layout >= 2:
        table = _compact(table, tally)

    def write(tmp: Path) -> None:
        table.write_ipc(tmp, compression=CODEC if layout >= 2 else "uncompressed")
        tally["bytes"] = tmp.stat().st_size
        tally["checksum"] = _hash(tmp)
        text = json.dumps(tally, separators=(",", ":"))
        write_atomic(tally_path(path), lambda p: p.write_text(text))

    write_atomic(path, write)
    _remember(path, tally["checksum"])  # a summary by this process need not hash it again


def _compact(table: pl.DataFrame, tally: dict[str, Any]) -> pl.DataFrame:
    """The columns a compact part stores: without DERIVED, integers narrowed to the
    smallest type that holds this part's values; the tally gains "layout" and "widen"
    (column: the polars type a reader gets)."""
    widen, columns = {}, []
    for name, column in table.drop(*DERIVED, strict=False).to_dict().items():
        if column.dtype in (pl.Int16, pl.Int32, pl.Int64) and len(column) and not column.has_nulls():
            lo, hi = column.min(), column.max()
            narrow = next((t for t, p in _NARROW if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max
                           and p != column.dtype), None)
            if narrow is not None:
                widen[name] = str(column.dtype)
                # numpy's cast, unchecked (the bounds are): a twentieth of the time of polars' checked one
                column = pl.Series(name, column.to_numpy().astype(narrow))
        columns.append(column)
    tally["layout"], tally["widen"] = 2, widen
    return pl.DataFrame(columns)


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
    """The parts of a run directory, in order, each checked against the run's manifest
    (part_problem); UserError, naming the part, if one fails or if there are none."""
    return check_parts(out)[0]


def check_parts(out: Path) -> tuple[list[Path], dict[Path, str]]:
    """The parts of a run directory, in order, each checked against the run's manifest
    (part_proof), and those read though unproven, with why; UserError, naming the part,
    if one fails or if there are none. Listed by pathlib rather than a polars glob: a
    directory name may hold glob characters ("runs/[test]") that polars would expand."""
    parts = sorted(out.glob(PART_GLOB)) or sorted(out.glob(LEGACY_GLOB))
    if not parts:
        raise UserError(f"run directory {out} has no results (no {PART_GLOB})")
    manifest = _checkable_manifest(out)
    unproven: dict[Path, str] = {}
    if manifest is not None:
        # Threads: hashing releases the GIL, and a large run's parts take seconds to hash.
        with ThreadPoolExecutor(min(4, os.cpu_count() or 1)) as pool:
            proofs = list(pool.map(lambda p: part_proof(p, manifest), parts))
        for part, (problem, why) in zip(parts, proofs, strict=True):
            if problem is not None:
                again = "running the run's command again removes it" if problem.startswith(STRAY) else AGAIN
                raise UserError(f"results part {part} {problem}; {again}")
            if why is not None:
                unproven[part] = why
    return parts, unproven


def _checkable_manifest(out: Path) -> dict[str, Any] | None:
    """The run's manifest if it says how the run is chunked; None otherwise (a
    directory made by hand, a broken manifest: the reader reports that itself)."""
    try:
        manifest = json.loads((out / MANIFEST).read_text())
        if not isinstance(manifest, dict) or type(manifest.get("chunk_size")) is not int:
            return None
        segments_of(manifest)
    except (OSError, ValueError, TypeError):
        return None
    return manifest


def scan_parts(parts: list[Path]) -> pl.LazyFrame:
    """The rows of these parts (all of one run directory), lazily: every column a part
    holds, those a compact part derives included, at the types the run was played with."""
    if parts and parts[0].suffix == ".parquet":
        return pl.scan_parquet(parts, glob=False)
    tallies = [_layout_tally(p) for p in parts]
    if not any(tallies):  # layout 1 throughout: one scan
        return pl.scan_ipc(parts, glob=False)
    frames = [pl.scan_ipc(p, glob=False) if t is None else _scan_compact(p, t) for p, t in zip(parts, tallies, strict=True)]
    return frames[0] if len(frames) == 1 else pl.concat(frames, how="vertical")


def read_part(part: Path, columns: list[str] | None = None) -> pl.DataFrame:
    """The rows of one part (all columns, or `columns` in that order)."""
    # Scans without glob expansion: a path may hold `[` or `*`.
    tally = None if part.suffix == ".parquet" else _layout_tally(part)
    if part.suffix == ".parquet":
        lazy = pl.scan_parquet(part, glob=False)
    else:
        lazy = pl.scan_ipc(part, glob=False) if tally is None else _scan_compact(part, tally)
    return (lazy if columns is None else lazy.select(columns)).collect()


def _layout_tally(part: Path) -> dict[str, Any] | None:
    """The tally of a compact part; None for a part stored whole (layout 1, or made by
    hand without a tally). UserError for a compact part whose tally is missing or does
    not say how to read it: its games and seeds are known only from there."""
    try:
        tally = read_tally(part)
    except (OSError, ValueError):
        tally = None  # the checks of list_parts say what is wrong with it, if anything
    if tally is None or tally.get("layout", 1) < 2:
        if tally is None and "game" not in pl.read_ipc_schema(part):
            raise UserError(f"results part {part} is compact and its tally ({tally_path(part).name}) is "
                            "missing or unreadable; running the run's command again plays its games again")
        return None
    if not (type(tally.get("first_game")) is int and type(tally.get("seed")) is int
            and type(tally.get("games")) is int and tally["games"] > 0
            and type(tally.get("rows")) is int and isinstance(tally.get("widen"), dict)):
        raise UserError(f"results part {part}: its tally lacks what its rows are read with; running "
                        "the run's command again plays its games again")
    return tally


def _scan_compact(part: Path, tally: dict[str, Any]) -> pl.LazyFrame:
    """A compact part's rows as a reader gets them (see the module's docstring)."""
    from simcore.batch import seeds_of_games  # compiled; only for compact parts

    players = tally["rows"] // tally["games"]
    run_seed = tally["seed"]
    lazy = pl.scan_ipc(part, glob=False).with_row_index("__row")
    stored = [c for c in lazy.collect_schema().names() if c != "__row"]
    game = (pl.col("__row").cast(pl.Int64) // players + tally["first_game"]).alias("game")
    seed = game.map_batches(lambda g: pl.Series(seeds_of_games(run_seed, g.to_numpy())),
                            return_dtype=pl.UInt64, is_elementwise=True).alias("seed")
    widen = tally["widen"]
    columns = [pl.col(c).cast(getattr(pl, widen[c])) if c in widen else pl.col(c) for c in stored]
    at = stored.index("run_id") + 1 if "run_id" in stored else 0
    return lazy.select(*columns[:at], game, seed, *columns[at:])


def check_part(part: Path) -> None:
    """Raise OSError or a polars error if the part's footer does not read (truncated,
    or not a part at all); cheap: the rows are not read."""
    if part.suffix == ".parquet":
        pl.read_parquet_metadata(part)
    else:
        pl.read_ipc_schema(part)


_PART_NAME = re.compile(r"part-(\d{5,})\.(?:arrow|parquet)")


def part_index(part: Path) -> int | None:
    """The chunk index a part's name gives; None for a name part_name never makes."""
    m = _PART_NAME.fullmatch(part.name)
    return int(m[1]) if m and part_name(int(m[1])).startswith(f"part-{m[1]}.") else None


def segments_of(manifest: dict[str, Any]) -> list[tuple[int, int, int, int]]:
    """(index of its first part, first game, end, chunk size) of each segment of games
    of a run (a run extended to more games has one per extension, chunked on its own,
    its parts numbered on from the segment before). ValueError or TypeError for a
    manifest whose games or segments are not whole numbers."""
    segments = manifest.get("segments") or [[0, manifest.get("n_games")]]
    out, first = [], 0
    for segment in segments:
        start, end, *own = segment
        size = own[0] if own else manifest.get("chunk_size")
        if not all(type(v) is int for v in (start, end, size)) or size < 1 or not 0 <= start <= end:
            raise ValueError(f"segment {segment!r} is not [first game, end, chunk size]")
        out.append((first, start, end, size))
        first += -(-(end - start) // size)
    return out


def chunks_of(manifest: dict[str, Any]) -> Iterator[tuple[int, int, int]]:
    """(part index, first game, end) of every chunk of a run, in order."""
    for first, start, end, size in segments_of(manifest):
        for k, i0 in enumerate(range(start, end, size)):
            yield first + k, i0, min(i0 + size, end)


def chunk_of(manifest: dict[str, Any], index: int) -> tuple[int, int] | None:
    """(first game, end) of part `index` of a run; None when the run has no such part.
    Computed per segment, without listing the run's chunks."""
    for first, start, end, size in segments_of(manifest):
        k = index - first
        if 0 <= k and start + k * size < end:
            return start + k * size, min(start + (k + 1) * size, end)
    return None


# SHA-256 of parts already hashed (or written) by this process, by (path, inode, size,
# mtime): a command that lists a run's parts more than once, or sums up the run it has
# just played, reads each part's bytes once. A file changed since has another key.
_hashed: dict[tuple[str, int, int, int], str] = {}


def _key(part: Path) -> tuple[str, int, int, int]:
    st = part.stat()
    return str(part.resolve()), st.st_ino, st.st_size, st.st_mtime_ns


def _hash(path: Path) -> str:
    with path.open("rb") as f:
        return "sha256:" + hashlib.file_digest(f, "sha256").hexdigest()


def _remember(part: Path, digest: str) -> None:
    """The digest of a part this process has just written (a rename keeps its inode,
    size and mtime, so its key is the one a later read finds)."""
    _hashed[_key(part)] = digest


def checksum(part: Path) -> str:
    """"sha256:<hex digest>" of the file's bytes (about 1.3 s per gigabyte on the 2-core build machine, two parts at once)."""
    key = _key(part)
    if key not in _hashed:
        _hashed[key] = _hash(part)
    return _hashed[key]


STRAY = "is not a part of this run"
# What a reader says of a part it refuses or reads unproven.
AGAIN = "running the run's command again plays its games again"


def part_problem(part: Path, manifest: dict[str, Any], *, need_proof: bool = False) -> str | None:
    """What is wrong with a part of the run of `manifest` (None when nothing is): a
    stray part (a name or an index the run does not have; the text starts with STRAY),
    an unreadable or damaged one, or one that holds other games, another chunk or
    another run. With `need_proof` (the runner's resume), also a part that is not proven
    (see part_proof): the runner plays its games again. A legacy Parquet part is trusted
    as before (its run cannot be resumed)."""
    problem, unproven = part_proof(part, manifest)
    return problem if problem is not None or not need_proof else unproven


def part_proof(part: Path, manifest: dict[str, Any]) -> tuple[str | None, str | None]:
    """(problem, unproven) of a part of the run of `manifest`. A part is proven by a
    tally naming its run (run_id, seed), its chunk (index, first_game, end) and the
    SHA-256 of its bytes. A part stored whole (layout 1) without such a tally (none,
    made by hand; one of chocosim 0.3, or one that lost its checksum) is checked on its
    rows instead: every row's run id, game index and seed. When they are the run's, the
    part is read but `unproven` says why nothing proves its figures (its rows may have
    been rewritten). A compact part's games and seeds are known only from its tally, so
    one without a tally or a checksum is a problem: it is played again, never read."""
    if part.suffix == ".parquet":
        return None, None
    index = part_index(part)
    chunk = None if index is None else chunk_of(manifest, index)
    if chunk is None:
        return f"{STRAY} (its run has no chunk of that number)", None
    i0, i1 = chunk
    name = tally_path(part).name
    try:
        tally = read_tally(part)
        expect = {"index": index, "first_game": i0, "games": i1 - i0, "end": i1,
                  "run_id": manifest.get("run_id"), "seed": manifest.get("seed")}
        if tally is not None and "checksum" not in tally:  # as chocosim 0.3 wrote it: its rows say the rest
            expect = {k: expect[k] for k in ("first_game", "games")}
        for key, value in expect.items() if tally is not None else ():
            if tally.get(key) != value:
                if key in ("run_id", "seed"):
                    return (f"is a part of another run (its tally says {key} {tally.get(key)!r}, "
                            f"this run's is {value!r})"), None
                return (f"does not hold games {i0}-{i1 - 1} of this run (its tally says {key} "
                        f"{tally.get(key)!r}, this run's part {index} has {value!r})"), None
        if tally is not None and "checksum" in tally:
            if checksum(part) != tally["checksum"]:
                return "is damaged (its bytes do not match the checksum in its tally)", None
            return None, None
        if (tally is not None and tally.get("layout", 1) != 1) or "game" not in pl.read_ipc_schema(part):
            lost = "is missing or unreadable" if tally is None else "has no checksum"
            return f"is compact and its tally ({name}) {lost}: nothing proves which games its rows hold", None
        problem = _rows_problem(part, manifest, i0, i1)
        if problem is not None:
            return problem, None
        return None, (f"has no tally ({name})" if tally is None else f"has a tally without a checksum ({name})") \
            + ": its rows are this run's games, but nothing proves its figures"
    except (OSError, ValueError, pl.exceptions.PolarsError) as e:
        return f"is unreadable ({str(e).splitlines()[0]})", None


def _rows_problem(part: Path, manifest: dict[str, Any], i0: int, i1: int) -> str | None:
    """A part stored whole without a checksum is checked row by row: its rows are games
    i0..i1-1 in order, one row a seat, each game's seed is the run's seed hashed with it
    (as the batch loop derives it) and its run_id is the run's. Three columns of one
    part: cheap next to playing its games."""
    from simcore.batch import seeds_of_games  # compiled; only for such parts

    names = set(pl.read_ipc_schema(part))
    df = pl.read_ipc(part, columns=[c for c in ("run_id", "game", "seed") if c in names])
    players = manifest.get("players")
    if type(players) is not int or players < 1:
        players = df.height // (i1 - i0) if df.height % (i1 - i0) == 0 else 0
    games = np.repeat(np.arange(i0, i1, dtype=np.int64), players)
    if df.height != len(games) or not np.array_equal(df["game"].to_numpy(), games):
        return f"does not hold games {i0}-{i1 - 1} of this run (its rows hold other games)"
    run_seed = manifest.get("seed")
    if "seed" in names and type(run_seed) is int and 0 <= run_seed < 2**64:
        if not np.array_equal(df["seed"].to_numpy(), seeds_of_games(run_seed, games)):
            return f"holds games of a run with another seed than {run_seed}"
    run_id = manifest.get("run_id")
    if "run_id" in names and isinstance(run_id, str):
        found = df["run_id"].cast(pl.String).unique().to_list()
        if found != [run_id]:
            return f"is a part of another run (its rows say run_id {found[0]!r}, this run's is {run_id!r})"
    return None
