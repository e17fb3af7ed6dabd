"""The runner: plays a run of many games in chunks, in parallel, and streams the results
to a run directory (DESIGN.md, "Runner and outputs"):

    <out>/manifest.json          what the run is (game, params, strategies, seating, seed...)
    <out>/part-XXXXX.arrow       one table per finished chunk, one row per game x seat
    <out>/part-XXXXX.tally.json  the chunk's tally (see simcore.parts)

Workers build their own state and bots and write their part themselves, so the parent
only ever holds small counts and memory stays bounded however many games a run has.
Workers are local processes (joblib loky), local threads (the game loop releases the
GIL), or the workers of a dask cluster (optional extra `chocosim[dask]`; the run
directory must then be on a filesystem every worker shares).
Game g always has the seed f(run seed, g) and the seat order of row g of the seating
table, so the results do not depend on the chunk size, the number of jobs or the backend.
"""
from __future__ import annotations

import collections
import contextvars
import ctypes
import functools
import hashlib
import itertools
import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from simcore.batch import SEATING_MODES, play_batch, result_arrays, tally_size
from simcore.errors import UserError
from simcore.params import Params, flatten
from simcore.parts import (LAYOUT, LEGACY_GLOB, MANIFEST, PART_GLOB, STRAY, chunk_of, chunks_of, part_index,
                           part_name, part_problem, scan_parts, tally_path,
                           write_part)
from simcore.pygame import GameFailure, code_fingerprint
from simcore.pygame_state import PyGameState
from simcore.registry import GameSpec
from simcore.rundir import held_games, read_manifest, write_manifest
from simcore.state import CHECKED_BUILD, GameState
from simcore.strategy import DecideError, PythonStrategy, Strategy

__all__ = ["run", "RunResult", "SEATINGS", "BACKENDS", "MANIFEST", "IDENTITY", "BUILD",
           "seat_orders", "bytes_per_game", "default_chunk_size", "TALLY_CELLS", "GROUPING",
           "BotFailure", "rotation_size", "workers", "playing_on", "keep_freed_memory"]

SEATINGS = SEATING_MODES  # rotate, fixed, random: the codes play_batch takes, in order
# "auto": threads when every bot is compiled (the game loop, the part writer and most of
# the rest release the GIL, and threads start at once), processes when one is written
# in Python (it holds the GIL while it decides).
BACKENDS = ("auto", "processes", "threads", "dask")
# What makes two runs the same run: a directory is resumed (or extended to more games)
# only if all of these match. The number of games is not part of it: game i of a run is
# the same game however many games the run has.
IDENTITY = ("game", "params", "strategies", "seating", "seed")
# The code that plays a run (recorded; a run resumed by other code lists it in resumed_by).
BUILD = ("version", "git_revision", "checked_build")

# Parts of 250,000 games rather than 100,000: each part has a fixed cost (its files, the
# table's columns, the writer's start), and one core plays 10 M fast games 7-10% sooner.
DEFAULT_CHUNK_SIZE = 250_000
CHUNKS_PER_JOB = 4  # enough chunks that no worker idles while another finishes the tail
CHUNK_BYTES = 64 * 2**20  # result arrays of one chunk, so a worker's memory is bounded
DASK_TIMEOUT = 10  # seconds to reach a dask scheduler, and for it to have a worker
# A part's tally counts per cell of TALLY_CELLS (and per value of a GROUPING feature):
# enough for a run's summary without reading a row.
TALLY_CELLS = ("seat", "position", "strategy", "end_reason")
# Feature columns that name the scenario a game was dealt (e.g. a solo game's goal
# card); the tally counts wins per value of the first one a game has.
GROUPING = ("target",)
# A worker process checks this often whether the run that started it is still alive.
PARENT_POLL_S = 0.5
# About what starting two worker processes costs (each imports numpy, polars and the
# engine) on the 2-core build machine: a run whose rest takes less than that gains
# nothing from them.
WORKERS_START_S = 1.0


@dataclass(frozen=True)
class RunResult:
    out: Path
    manifest: dict[str, Any]
    played: int  # games played by this call
    resumed: int  # games found already finished in the directory
    requested: int  # the games asked for (n_games of the manifest may be rounded up from it)


@dataclass(frozen=True)
class _Job:
    """What every chunk of a run needs; pickled to the workers with each chunk."""

    game: GameSpec
    params: Params
    lineup: Callable[[], Sequence[Strategy]]
    specs: tuple[str, ...]
    perms: np.ndarray
    seating: int
    seed: int
    run_id: str
    out: Path
    layout: int = LAYOUT  # of the run's parts (simcore.parts): a run keeps the layout it began with
    home: tuple[str, int] = ("", 0)  # the run's process (host, pid): it replays the chunks others play


def seat_orders(n_players: int, seating: str) -> np.ndarray:
    """The seating table play_batch takes (row r: strategy index of each seat): every
    order in the lexicographic order of itertools.permutations, or only the given one."""
    if seating == "fixed":
        rows = [tuple(range(n_players))]
    else:
        rows = list(itertools.permutations(range(n_players)))
    return np.ascontiguousarray(rows, dtype=np.int32)


def bytes_per_game(n_players: int, n_features: int, n_interim: int) -> int:
    """The size of one game's rows in play_batch's result arrays (at most: features
    counted as int16)."""
    per_seat = 1 + 4 + 1 + 4 + 1 + 1 + 2 * (n_features + n_interim)
    return 8 + 8 + 4 + 1 + n_players * per_seat


def default_chunk_size(n_games: int, jobs: int, bytes_per_game: int) -> int:
    """Up to DEFAULT_CHUNK_SIZE games, fewer for games with wide rows (bounded memory)
    or small runs (at least CHUNKS_PER_JOB chunks per job)."""
    spread = math.ceil(n_games / (jobs * CHUNKS_PER_JOB))
    return max(1, min(DEFAULT_CHUNK_SIZE, CHUNK_BYTES // bytes_per_game, spread))


def rotation_size(n_players: int, seating: str) -> int:
    """The games of one full turn of the seat orders: "rotate" plays every order once
    every n_players! games, so its game counts are rounded up to a multiple of that."""
    return math.factorial(n_players) if seating == "rotate" else 1


def _check_args(n_games: int, seed: int, seating: str, jobs: int | None, backend: str,
                scheduler: str | None, chunk_size: int | None) -> None:
    if n_games < 1:
        raise UserError(f"n_games = {n_games}: must be at least 1")
    if not 0 <= seed < 2**64:
        raise UserError(f"seed = {seed}: must be in [0, 2**64)")
    if seating not in SEATINGS:
        raise UserError(f"seating = {seating!r}: allowed are {', '.join(SEATINGS)}")
    if jobs is not None and jobs < 1:
        raise UserError(f"jobs = {jobs}: must be at least 1")
    _check_backend(backend, scheduler)
    if chunk_size is not None and chunk_size < 1:
        raise UserError(f"chunk_size = {chunk_size}: must be at least 1")


def _check_backend(backend: str, scheduler: str | None) -> None:
    if backend not in BACKENDS:
        raise UserError(f"backend = {backend!r}: allowed are {', '.join(BACKENDS)}")
    if (backend == "dask") != (scheduler is not None):
        raise UserError("a dask scheduler address goes with backend 'dask' and only with it "
                        f"(backend = {backend!r}, scheduler = {scheduler!r})")


# More parts than this is a chunk size far too small for the run (a part has fixed
# costs: two files, a writer's start); the run's chunk list would be as long.
MAX_PARTS = 1_000_000


def _check_size(out: Path, n_games: int, row_bytes: int, sizing: Callable[[int], int]) -> None:
    """Refuse, before anything is written or listed, a run (or the extension of one)
    that the disk cannot hold or that would be cut into more than MAX_PARTS parts:
    --games 10**15 spent minutes and 10 GB building its chunk list, with nothing played.
    A part takes at most about `row_bytes` a game (its columns are no wider)."""
    held = held_games(out)
    games = n_games - held if held <= n_games else n_games
    if games == 0:
        return
    where = out.resolve()
    while not where.exists():
        where = where.parent
    need, free = games * row_bytes, shutil.disk_usage(where).free
    if need > free:
        raise UserError(f"{games:,} games need about {_size(need)} on disk for {out}, and "
                        f"{_size(free)} are free there: ask for fewer games or free some space")
    parts = -(-games // sizing(games))
    if parts > MAX_PARTS:
        raise UserError(f"{games:,} games in chunks of {sizing(games):,} make {parts:,} parts, more "
                        f"than {MAX_PARTS:,}: ask for fewer games or a larger --chunk-size")


def _size(n: float) -> str:
    units = ("bytes", "KB", "MB", "GB", "TB", "PB")
    k = 0
    while n >= 1000 and k < len(units) - 1:
        n, k = n / 1000, k + 1
    return f"{n:,.0f} bytes" if k == 0 else f"{n:,.1f} {units[k]}"


def _run_id(identity: dict[str, Any]) -> str:
    """A content hash of the run's identity: the same run gets the same id wherever
    and however it is played."""
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=Path(__file__).parent, capture_output=True,
                              text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (done.stdout.strip() or None) if done.returncode == 0 else None


def _git_revision() -> str | None:
    """The revision of the chocosim checkout this code runs from ("-dirty" if it has
    uncommitted changes); None when installed outside one. An installed copy may sit
    inside some other repository (a venv in a user's project): that one is not ours."""
    top = _git("rev-parse", "--show-toplevel")
    if top is None or Path(top).resolve() != Path(__file__).resolve().parents[1]:
        return None
    return _git("describe", "--always", "--dirty", "--abbrev=40")


def _package_version() -> str | None:
    try:
        return version("chocosim")
    except PackageNotFoundError:  # a source checkout that was never pip-installed
        return None


def _describe_differences(old: dict[str, Any], new: dict[str, Any],
                          defaults: dict[str, Any] | None = None,
                          weight_defaults: dict[str, dict[str, float]] | None = None) -> list[str]:
    """What differs between a held run's identity and this one. A param the held run
    lacks (written before the param existed) matches when this run leaves it at its
    default (`defaults`, flattened), since a param is added with a default that plays as
    before: a run directory of an older chocosim stays resumable. So does a bot's weight
    (`weight_defaults`: class -> the value each weight played as before it existed: its
    declared default, or its WEIGHTS_BEFORE entry)."""
    diffs = []
    for key in IDENTITY:
        a, b = old.get(key), new[key]
        if a == b:
            continue
        if key == "params" and isinstance(a, dict):
            fa, fb = flatten(a), flatten(b)
            for name in sorted(fa.keys() | fb.keys()):
                if name not in fa and defaults is not None and fb.get(name) == defaults.get(name, ...):
                    continue
                if fa.get(name) != fb.get(name):
                    diffs.append(f"params.{name} is {_short(fa.get(name))} there, {_short(fb.get(name))} here")
        elif key == "strategies" and isinstance(a, list):
            specs_a = [s.get("spec") for s in a]
            specs_b = [s["spec"] for s in b]
            if specs_a != specs_b:
                diffs.append(f"strategies are {', '.join(map(str, specs_a))} there, "
                             f"{', '.join(specs_b)} here")
            elif not all(_same_bot(x, y, weight_defaults.get(y["class"], {}) if weight_defaults else {})
                         for x, y in zip(a, b)):
                diffs.append("strategy weights differ")
        else:
            diffs.append(f"{key} is {_short(a)} there, {_short(b)} here")
    return diffs


def _short(value: Any, width: int = 40) -> str:
    """A value's repr cut to `width` characters: a changed deck list is one line, not pages."""
    text = repr(value)
    return text if len(text) <= width else text[:width - 1] + "…"


def _leftovers(out: Path) -> list[Path]:
    """Temp files of an interrupted run (see write_atomic): a manifest, parts or tallies
    that were being written."""
    return [p for p in out.glob(".*.tmp")
            if p.name.startswith((f".{MANIFEST}.", ".part-"))]


def _held_manifest(out: Path) -> dict[str, Any] | None:
    """The manifest of an existing run directory, None for a new or empty directory;
    UserError for anything else (a file, a foreign directory, a broken manifest, a run
    that cannot be resumed)."""
    if not out.exists():
        return None
    if not out.is_dir():
        raise UserError(f"output {out} exists and is not a directory")
    if not (out / MANIFEST).exists():
        if set(out.iterdir()) - set(_leftovers(out)):
            raise UserError(f"output directory {out} is not empty and has no {MANIFEST}: "
                            "it is not a run directory; choose another one")
        return None
    manifest = read_manifest(out)
    if "chunk_size" not in manifest:
        raise UserError(f"run directory {out}: {MANIFEST} is not a chocosim manifest "
                        "(no positive chunk_size)")
    if next(out.glob(LEGACY_GLOB), None) is not None:
        raise UserError(f"run directory {out} holds Parquet parts of an older chocosim: summary and "
                        "report still read it, but it cannot be resumed or extended; choose another "
                        "output directory")
    return manifest


def _class_name(bot: Strategy) -> str:
    """How a manifest names a bot's class."""
    return f"{type(bot).__module__}.{type(bot).__qualname__}"


def _same_bot(held: Any, this: dict[str, Any], declared: dict[str, float]) -> bool:
    """The same bot (its entry alike but for the weights) with the same weights, a weight
    the held run lacks counting as the same when this run's value of it is the one it
    played as before it existed (`declared`)."""
    if not isinstance(held, dict) or not isinstance(held.get("weights"), dict) \
            or {**held, "weights": None} != {**this, "weights": None}:
        return False
    old, new = held["weights"], this["weights"]
    return all(old.get(k, ...) == new.get(k, ...) or (k not in old and new[k] == declared.get(k, ...))
               for k in old.keys() | new.keys())


def _prepare(out: Path, identity: dict[str, Any], fresh: dict[str, Any],
             check: Callable[[dict[str, Any]], None], sizing: Callable[[int], int],
             defaults: dict[str, Any] | None = None,
             weight_defaults: dict[str, dict[str, float]] | None = None) -> dict[str, Any]:
    """Open the run directory: resume the same run, extend it to more games, start a
    new one, or refuse. Extending appends a segment [old n_games, new n_games, chunk
    size] to the manifest (see simcore.parts.chunks_of), so games 0..old n_games-1 and their parts stay
    as they are; `sizing(games)` chunks the new segment for its own size (a run begun
    with a one-game pilot would otherwise play every later game in parts of one).
    `check(manifest)` may refuse the run held there before anything is written."""
    manifest = _held_manifest(out)
    if manifest is not None:
        diffs = _describe_differences(manifest, identity, defaults, weight_defaults)
        if diffs:
            more = f"; and {len(diffs) - 3} more" if len(diffs) > 3 else ""
            raise UserError(f"run directory {out} holds a different run ({'; '.join(diffs[:3])}{more}); "
                            "choose another output directory")
        held = manifest.get("n_games")
        if not isinstance(held, int) or held < 1:
            raise UserError(f"run directory {out}: {MANIFEST} has no valid n_games ({held!r})")
        if fresh["n_games"] < held:
            raise UserError(f"run directory {out} holds a run of {held:,} games; n_games = "
                            f"{fresh['n_games']:,} would drop games: ask for at least {held:,} "
                            "(more extends the run)")
        check(manifest)
    for stale in _leftovers(out) if out.exists() else []:
        stale.unlink(missing_ok=True)
    if manifest is None:
        out.mkdir(parents=True, exist_ok=True)
        write_manifest(out, fresh)
        return fresh
    if fresh["n_games"] > manifest["n_games"]:
        segments = manifest.get("segments") or [[0, manifest["n_games"]]]
        added = fresh["n_games"] - manifest["n_games"]
        manifest["segments"] = [*segments, [manifest["n_games"], fresh["n_games"], sizing(added)]]
        manifest["n_games"] = fresh["n_games"]
        manifest["extended"] = [*manifest.get("extended", []), fresh["created"]]
        write_manifest(out, manifest)
    return manifest


def _record_resume(out: Path, manifest: dict[str, Any], fresh: dict[str, Any]) -> None:
    """A run resumed by other code than the code that played it so far may get parts
    that differ in ways its identity cannot see (a rules fix): list that code in the
    manifest's resumed_by."""
    build = {key: fresh[key] for key in BUILD}
    known = [{key: manifest.get(key) for key in BUILD}]
    known += [{key: r.get(key) for key in BUILD} for r in manifest.get("resumed_by", [])]
    if build not in known:
        manifest["resumed_by"] = [*manifest.get("resumed_by", []), {**build, "at": fresh["created"]}]
        write_manifest(out, manifest)


def run(game: GameSpec, params: Params, specs: Sequence[str],
        lineup: Callable[[], Sequence[Strategy]], out: Path | str, *, n_games: int,
        seed: int = 0, seating: str = "rotate", jobs: int | None = None,
        backend: str = "auto", scheduler: str | None = None,
        chunk_size: int | None = None, quiet: bool = False) -> RunResult:
    """Play games [0, n_games) of the run with `seed` into the run directory `out`.

    `specs` names strategy i (the manifest and the strategy column); `lineup` is a
    picklable factory returning one fresh bot per spec, in the same order, e.g.
    functools.partial(strategies.build_lineup, game.name, specs). Seating "rotate"
    cycles game by game through every seat order (all equally often when n_games is a
    multiple of n_players!), "fixed" puts strategy i in seat i, "random" draws an order
    per game from the game's seed. `jobs` chunks run at once (default: every core, or
    every thread of the dask cluster at the address `scheduler`), on `backend` (see
    BACKENDS; "auto" is the one chosen by a surrounding `playing_on`, if any). A directory that
    already holds this run is resumed (its own chunk size is kept), or extended when
    n_games is more than it holds (game i keeps its seed); one that holds anything else
    is refused (UserError). With seating "rotate", n_games is rounded up to a whole
    number of rotations (every seat order equally often), said in one line on stderr.
    """
    _check_args(n_games, seed, seating, jobs, backend, scheduler, chunk_size)
    requested = n_games
    out = Path(out)
    specs = tuple(s.strip() for s in specs)
    state = game.new_state(params)
    check_columns(state)
    if len(specs) != state.n_players:
        raise UserError(f"{game.name} with these params seats {state.n_players} players, "
                        f"but {len(specs)} strategies were given")
    bots = list(lineup())
    if len(bots) != len(specs):
        raise ValueError(f"the lineup factory made {len(bots)} bots for {len(specs)} specs")
    for bot in bots:
        bot.bind(state)  # a bot that cannot play this game (a bad forbid=) fails here, in one line
    if backend == "auto":
        backend, scheduler = _chosen.get()[:2]
    if backend == "auto":
        # A game written in Python holds the GIL at every move, as a Python bot does.
        backend = "processes" if any(isinstance(b, PythonStrategy) for b in bots) \
            or isinstance(state, PyGameState) else "threads"

    identity = {
        "game": game.name,
        "params": params.model_dump(mode="json"),
        "strategies": [{"spec": s, "class": _class_name(b),
                        "weights": dict(b.weights)} for s, b in zip(specs, bots, strict=True)],
        "seating": seating,
        "seed": seed,
    }
    identity = json.loads(json.dumps(identity))  # compare as it reads back from disk
    rotation = rotation_size(state.n_players, seating)
    n_games = math.ceil(n_games / rotation) * rotation
    if n_games != requested:  # said even with quiet (which only hides the progress bar)
        Console(stderr=True).print(
            f"{game.name}: {requested:,} games rounded up to {n_games:,}, a multiple of the "
            f"{rotation} seat orders, so that --seating rotate plays each equally often",
            soft_wrap=True, markup=False, highlight=False)
    perms = seat_orders(state.n_players, seating)
    row_bytes = bytes_per_game(state.n_players, state.n_features, state.n_interim)
    with workers(backend, jobs, scheduler) as n_workers:
        def sizing(games: int) -> int:
            return chunk_size or default_chunk_size(games, n_workers, row_bytes)

        _check_size(out, n_games, row_bytes, sizing)

        fresh = {
            "run_id": _run_id(identity),
            **identity,
            "n_games": n_games,
            "players": state.n_players,
            "seat_orders": perms.tolist(),
            "chunk_size": sizing(n_games),
            "layout": LAYOUT,
            "version": _package_version(),
            "git_revision": _git_revision(),
            "checked_build": CHECKED_BUILD,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        # A designer's game (not a bundled one: the version and revision above name
        # that code): its files' hashes, so that an edited game never resumes this run.
        code = code_fingerprint(getattr(game.state_cls, "GAME", game.state_cls))
        if code is not None:
            fresh["game_code"] = code
        # Absolute: a reused worker process may have another working directory (a
        # notebook that changed directory since the pool started).
        job = _Job(game, params, lineup, specs, perms, SEATINGS.index(seating), seed,
                   fresh["run_id"], out.resolve(), home=_process())
        try:
            def check(held: dict[str, Any]) -> None:
                _check_code(out, game.name, held, fresh)
                _check_format(replace(job, run_id=held["run_id"]), state, held)

            manifest = _prepare(out, identity, fresh, check, sizing,
                                flatten(game.params(players=state.n_players).model_dump(mode="json")),
                                {_class_name(b): {**type(b).WEIGHTS, **type(b).WEIGHTS_BEFORE} for b in bots})
        except OSError as e:
            raise UserError(f"cannot create the run directory {out}: "
                            f"{e.strerror or e}{f' ({e.filename})' if e.filename else ''}") from None
        n_games = manifest["n_games"]
        job = replace(job, run_id=manifest["run_id"], layout=manifest.get("layout", 1))
        _remove_strays(out, manifest)
        todo = [c for c in chunks_of(manifest) if not _part_done(out, c[0], manifest)]
        resumed = n_games - sum(i1 - i0 for _, i0, i1 in todo)
        if todo and manifest is not fresh:
            _record_resume(out, manifest, fresh)
        played = _execute(job, todo, n_workers, n_games, resumed, quiet, backend,
                          adaptive=backend == "processes" and jobs is None)
    return RunResult(out, manifest, played, resumed, requested)


def _check_code(out: Path, name: str, held: dict[str, Any], fresh: dict[str, Any]) -> None:
    """Refuse to add games to a run of a designer's game whose code has changed since
    (its files' hashes differ): the run would mix two versions of the rules. A run of
    an older chocosim has no fingerprint to compare."""
    old, new = held.get("game_code"), fresh.get("game_code") or {}
    if old is None or old == new:
        return
    changed = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k)) \
        if isinstance(old, dict) else ["its fingerprint in the manifest"]
    more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
    raise UserError(f"run directory {out} holds a run of {name} played by other code of the game "
                    f"({', '.join(changed[:3])}{more} changed since): resuming would mix two versions of "
                    "its rules; choose another output directory, or restore that code to resume")


def _part_done(out: Path, index: int, manifest: dict[str, Any]) -> bool:
    """Whether part `index` is on disk whole, of this run and proven (simcore.parts.part_proof:
    its tally names this run and chunk, and its bytes match the tally's checksum). A
    damaged part, another run's or chunk's part, or one without that proof is said so
    (stderr) and played again."""
    path = out / part_name(index)
    if not path.exists():
        return False
    problem = part_problem(path, manifest, need_proof=True)
    if problem is not None:
        print(f"chocosim: {path} {problem}: playing its games again", file=sys.stderr)
    return problem is None


def _remove_strays(out: Path, manifest: dict[str, Any]) -> None:
    """Remove the parts (and tallies) that are no chunk of the run (a part-00099 copied
    in): they would stand in the way of every reader, and no re-run replaces them."""
    for path in sorted(out.glob(PART_GLOB)):
        index = part_index(path)
        if index is None or chunk_of(manifest, index) is None:
            print(f"chocosim: {path} {STRAY} (its run has no chunk of that number): removed", file=sys.stderr)
            path.unlink(missing_ok=True)
            tally_path(path).unlink(missing_ok=True)


def _check_format(job: _Job, state: GameState, manifest: dict[str, Any]) -> None:
    """Refuse to add parts to a run whose parts have other columns or column types (a
    run of an older chocosim, or of a game that has since gained a feature or an end
    reason): polars would not read the run's parts together. Compared as a reader gets
    them (a compact part's derived and narrowed columns at their types). The first part
    of the run whose rows are the run's stands for them all (another is replayed later),
    proven or not: a run of an older chocosim is refused before its parts are replayed."""
    expected = dict(_table(job, state, result_arrays(state, 0)).schema)
    for part in sorted(job.out.glob(PART_GLOB)):
        if part_problem(part, manifest) is not None:
            continue
        try:
            found = dict(scan_parts([part]).collect_schema())
        except (OSError, ValueError, pl.exceptions.PolarsError):
            continue
        if found != expected:
            c = next(c for c in dict.fromkeys([*expected, *found]) if found.get(c) != expected.get(c))
            there, here = (_type_name(found.get(c)), _type_name(expected.get(c)))
            raise UserError(f"run directory {job.out} was written with other result columns ({c} is "
                            f"{there} there, {here} here: an older chocosim or game); summary and "
                            "report still read it, but it cannot be resumed or extended; choose "
                            "another output directory")
        return


def _type_name(dtype: pl.DataType | None) -> str:
    return "absent" if dtype is None else dtype.base_type().__name__


_capped: set[int] = set()  # the --jobs values already said to be capped


@contextmanager
def workers(backend: str, jobs: int | None, scheduler: str | None) -> Iterator[int]:
    """Point joblib at the backend's workers; yield how many chunks run at once. "auto"
    is threads here: run() first makes it processes for a lineup with a Python bot."""
    # joblib imported here: a third of what `chocosim summary` would spend importing.
    from joblib import cpu_count, parallel_config

    if backend != "dask" and jobs is not None and jobs > cpu_count():
        # Chunks are CPU-bound: jobs beyond the cores only cost memory (--jobs 1000 on
        # processes started 98 workers and took 3 GB in 7 s).
        if jobs not in _capped:
            _capped.add(jobs)
            print(f"chocosim: jobs = {jobs} is more than the {cpu_count()} cores here: "
                  f"using {cpu_count()}", file=sys.stderr)
        jobs = cpu_count()
    if backend == "processes":
        # Each worker watches this process from its start (it may die before a chunk).
        with parallel_config(backend="loky", initializer=_watch_parent, initargs=(os.getpid(),)):
            yield jobs or cpu_count()
        return
    if backend in ("threads", "auto"):
        with parallel_config(backend="threading"):
            yield jobs or cpu_count()  # joblib counts the cores this process may use (cgroups)
        return
    _, held_at, held = _chosen.get()
    with nullcontext(held) if held is not None and held_at == scheduler else _connect(scheduler) as client, \
            parallel_config(backend="dask", client=client):
        yield jobs or max(1, sum(client.nthreads().values()))


# The backend, dask scheduler and open dask client that run() uses for backend "auto":
# ("auto", None, None) outside playing_on.
_chosen: contextvars.ContextVar[tuple[str, str | None, Any]] = contextvars.ContextVar(
    "chocosim_backend", default=("auto", None, None))


@contextmanager
def playing_on(backend: str = "auto", scheduler: str | None = None) -> Iterator[None]:
    """Every run() inside that leaves its backend "auto" plays on `backend`: how an
    experiment that starts many runs (balance, compare, sweep, skill) sends them all to
    a dask cluster. The cluster is reached here, before anything is played, and the one
    connection serves every run inside."""
    _check_backend(backend, scheduler)
    with _connect(scheduler) if backend == "dask" else nullcontext() as client:
        token = _chosen.set((backend, scheduler, client))
        try:
            yield
        finally:
            _chosen.reset(token)


def _connect(scheduler: str) -> Any:
    """A dask client of the scheduler at `scheduler` that has a worker (a cluster
    without one would take the chunks and never play them); UserError otherwise."""
    try:
        from distributed import Client
        from distributed.comm.addressing import get_address_host_port, normalize_address, parse_address
        from distributed.comm.registry import get_backend
    except ImportError:
        raise UserError("backend 'dask' needs dask.distributed: pip install 'chocosim[dask]'") from None
    try:
        # Checked first: a client refused a malformed address prints a traceback when
        # it is collected, after waiting 20 s to close.
        address = normalize_address(scheduler)
        scheme = parse_address(address)[0]
        get_backend(scheme)
        if scheme in ("tcp", "tls", "ws", "wss"):  # host:port (inproc and ucx say it otherwise)
            get_address_host_port(address)
    except ValueError as e:
        raise UserError(f"scheduler = {scheduler!r}: not a dask scheduler address ({e}); "
                        "allowed is e.g. tcp://10.0.0.5:8786") from None
    try:
        client = Client(scheduler, timeout=DASK_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as e:
        raise UserError(f"cannot reach the dask scheduler at {scheduler!r}: {e}") from None
    try:
        client.wait_for_workers(1, timeout=DASK_TIMEOUT)
    except TimeoutError:
        client.close()
        raise UserError(f"the dask scheduler at {scheduler!r} has no workers (none joined within "
                        f"{DASK_TIMEOUT} s): start `dask worker {scheduler}` where the run "
                        "directory is shared") from None
    return client


def _execute(job: _Job, todo: list[tuple[int, int, int]], n_workers: int, n_games: int,
             resumed: int, quiet: bool, backend: str, adaptive: bool) -> int:
    """Play the chunks of `todo`. With process workers, this process plays chunks too
    until the workers have started (each imports numpy, polars and the engine, about a
    second), so their start costs no time. `adaptive` (their number not given): play
    chunks here first and start the workers only when the rest of the run would take
    long enough to repay their start."""
    console = Console(stderr=True)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("games"), TimeRemainingColumn())
    with Progress(*columns, console=console, disable=quiet or not console.is_terminal) as bar:
        task = bar.add_task(f"{job.game.name} {job.out.name}", total=n_games, completed=resumed)
        queue = collections.deque(todo)
        played = 0
        if adaptive and n_workers > 1:
            start = time.perf_counter()
            while queue:
                n = _play_chunk(job, *queue.popleft())
                played += n
                bar.advance(task, n)
                left = sum(i1 - i0 for _, i0, i1 in queue) * (time.perf_counter() - start) / played
                if left * (1 - 1 / n_workers) > WORKERS_START_S:
                    break
        if not queue:
            return played
        help_start = backend == "processes" and n_workers > 1
        return played + _pool(job, queue, n_workers, help_start, lambda n: bar.advance(task, n))


def _pool(job: _Job, queue: collections.deque, n_workers: int, help_start: bool,
          advance: Callable[[int], None]) -> int:
    """Play the queued chunks on the workers; with `help_start`, a thread of this process
    plays them too until the workers return their first part (play_batch and the part
    writer release the GIL). Who plays a chunk does not change its part."""
    from joblib import Parallel, delayed

    lock = threading.Lock()
    started = threading.Event()
    helped: list[int] = []
    failed: list[BaseException] = []

    def take() -> tuple[int, int, int] | None:
        with lock:
            return queue.popleft() if queue else None

    def chunks() -> Iterator[Any]:
        while not failed and (chunk := take()) is not None:
            yield delayed(_play_chunk_far)(job, *chunk)

    def helper() -> None:
        try:
            while not started.is_set() and (chunk := take()) is not None:
                n = _play_chunk(job, *chunk)
                helped.append(n)
                advance(n)
        except BaseException as e:  # raised by the run's thread at the next part
            failed.append(e)

    played = 0
    parallel = Parallel(n_jobs=min(n_workers, len(queue)), return_as="generator_unordered")
    thread = threading.Thread(target=helper, name="chocosim-helper", daemon=True)
    if help_start:
        thread.start()
    outputs = None
    try:
        with _interrupt_held():  # while the workers start
            outputs = parallel(chunks())
        for n, i0, where, first in outputs:
            started.set()
            if where != job.home:
                # Played in another process: this one replays its first game (a set of
                # strings also iterates in another order in each process).
                _check_replay(job, first, i0, " in another process")
            played += n
            advance(n)
            if failed:
                raise failed[0]
    except BaseException:
        # A Ctrl-C reaches only this thread, and a failure ends the run: the workers'
        # chunks are cancelled (joblib would warn of it: the run says why it ended), and
        # the chunks still playing in this process (the helper, thread workers) stop.
        started.set()
        if outputs is not None:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", ".*tasks which were still being processed", UserWarning)
                outputs.close()
        _stop_chunks()
        if help_start:
            thread.join(STOP_WAIT_S)
        raise
    started.set()
    if help_start:
        thread.join()
    if failed:
        raise failed[0]
    return played + sum(helped)


class BotFailure(UserError):
    """A user's bot raised or returned an illegal action: the message names the bot, the
    seat and the game; `details` holds the worker's traceback (shown on request)."""

    def __init__(self, message: str, details: str = "") -> None:
        super().__init__(message, details)
        self.message, self.details = message, details

    def __str__(self) -> str:
        return self.message


def _watch_parent(parent: int) -> None:
    """In a worker process started by the run's process: exit when that process dies (a
    kill -9 of the run must not leave workers playing on for minutes). A part being
    written is then left as a temp file, which a resumed run removes."""
    global _watching
    if os.getppid() != parent:  # it died while this worker started
        _exit(1)
    if _watching:
        return

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_S)
        _exit(1)

    threading.Thread(target=watch, name="chocosim-parent-watch", daemon=True).start()
    _watching = True


_watching = False
# The real os._exit: a Python bot's decision replaces it for its duration (simcore.strategy).
_exit = os._exit


@functools.cache
def keep_freed_memory() -> None:
    """Have glibc keep the large blocks a process frees for its next ones. By default it
    hands each one (a chunk's result arrays, a report's per-part temporaries) back to
    the kernel, and the next one faults every page in again: a fifth of a fast game's
    run, a third of a report went to that. Memory stays bounded by the largest working
    set. A no-op off glibc."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt(-3, 32 * 2**20)   # M_MMAP_THRESHOLD: glibc's largest; blocks below come from the heap
    mallopt(-1, 256 * 2**20)  # M_TRIM_THRESHOLD: free heap kept before it is handed back


# The threads of this process playing a chunk now: a Ctrl-C (which reaches only the main
# thread) or a failure stops them (a game's method may loop forever).
_playing: set[int] = set()
_playing_lock = threading.Lock()
STOP_WAIT_S = 5.0  # how long a stopped run waits for its helper thread to leave


class _Stopped(Exception):
    """A chunk stopped in a thread by _stop_chunks (the run has ended already)."""


@contextmanager
def _interrupt_held() -> Iterator[None]:
    """Hold a Ctrl-C until the block ends (in the main thread): a worker process whose
    start it cuts short fails with a traceback of its own, and the command's exit waits
    for it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[Any] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: held.append(frame))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if held and callable(previous):
            previous(signal.SIGINT, held[0])  # as if it came now (counted, KeyboardInterrupt)
        elif held and previous == signal.SIG_DFL:
            raise KeyboardInterrupt


def _stop_chunks() -> None:
    """Raise KeyboardInterrupt in every other thread of this process playing a chunk:
    it surfaces at the next line of Python the thread runs (in a game's method, or at
    the next move of a Python game or bot; a compiled game's chunk runs to its end)."""
    me = threading.get_ident()
    with _playing_lock:
        for ident in _playing - {me}:
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(KeyboardInterrupt))


def _play_chunk(job: _Job, index: int, i0: int, i1: int) -> int:
    """Worker: play games [i0, i1), write part `index`; return the number of games."""
    return _play_chunk_far(job, index, i0, i1)[0]


def _process() -> tuple[str, int]:
    return socket.gethostname(), os.getpid()


def _play_chunk_far(job: _Job, index: int, i0: int, i1: int) -> tuple[int, int, tuple[str, int], dict[str, Any]]:
    """_play_chunk for a worker: also the chunk's first game, its rows and the process
    that played it (the run's process replays it when another did)."""
    me = threading.get_ident()
    with _playing_lock:
        _playing.add(me)
    try:
        games, first = _play_part(job, index, i0, i1)
        return games, i0, _process(), first
    except KeyboardInterrupt:
        if threading.current_thread() is threading.main_thread():
            raise
        raise _Stopped() from None  # quietly: the run's thread has the Ctrl-C already
    finally:
        with _playing_lock:
            _playing.discard(me)


def _play_part(job: _Job, index: int, i0: int, i1: int) -> tuple[int, dict[str, Any]]:
    """Play and write part `index`: its number of games and the rows of its first game
    (replayed here, before the part is written, in the run's own process; by the run's
    process when it gets them, in another)."""
    keep_freed_memory()
    state = job.game.new_state(job.params)
    games = i1 - i0
    a = result_arrays(state, games)
    counts = np.zeros(tally_size(state))
    _play_games(job, state, a, i0, i1, counts)
    # The first game's values of each compared array (a game's, or a row per seat).
    first = {key: a[key][..., :1 if key in ("turns", "end_reason") else state.n_players].copy()
             for key, _ in REPLAYED}
    if _process() == job.home:
        _check_replay(job, first, i0)
    table = _table(job, state, a)
    path = job.out / part_name(index)
    try:
        write_part(path, table, _tally(job, state, a, index, i0, counts), job.layout)
    except (OSError, pl.exceptions.PolarsError) as e:
        # polars reports a failed write (a full disk) as its own error around the OS one.
        reason = e.strerror if isinstance(e, OSError) and e.strerror else \
            str(e).splitlines()[0].rpartition("IO error: ")[2]
        raise UserError(f"cannot write {path}: {reason}; the finished parts are kept: "
                        "free some space and run the same command again to resume") from None
    return games, first


def _play_games(job: _Job, state: GameState, a: dict[str, np.ndarray], i0: int, i1: int,
                counts: np.ndarray | None = None) -> None:
    """Play games [i0, i1) into the arrays `a` with a new lineup; a failure of a Python
    game or bot is named with the game it happened in."""
    bots = list(job.lineup())
    try:
        play_batch(state, bots, job.perms, job.seating, job.seed, i0, i1, **a, tally=counts)
    except (DecideError, GameFailure) as e:
        # The loop stores a game's row when it ends: the first unset row is the game
        # that was being played (a stored seed is a hash, 0 with probability 2**-64).
        g = i0 + int(np.argmin(a["seeds"] != 0)) if (a["seeds"] == 0).any() else i1 - 1
        if isinstance(e, GameFailure):  # a Python game's own method failed
            raise e.in_game(g) from None
        # Not a bot of the lineup: one that a bot consulted while it prepared (by class).
        spec = next((s for b, s in zip(bots, job.specs, strict=True) if b is e.bot), e.name)
        raise BotFailure(f"bot {spec} (seat {e.seat}) {e.what} in game {g} of the run",
                         e.details) from None


# What a replayed game is compared by, and how a message names each.
REPLAYED = (("turns", "turns"), ("end_reason", "end reason"), ("score", "scores"), ("rank", "ranks"),
            ("position", "turn positions"), ("features", "features"), ("interim", "interim scores"))


def _check_replay(job: _Job, played: dict[str, np.ndarray], i0: int, where: str = "") -> None:
    """Play game i0 (a chunk's first) again, with a new state and new bots: it must give
    the rows `played` (REPLAYED's arrays of that game). A game (or a Python bot) that draws
    from the random module, the clock or a set's order differs, and the run stops
    (UserError). One game a chunk: a sample of the run, at the cost of one game a part."""
    state = job.game.new_state(job.params)
    again = result_arrays(state, 1)
    _play_games(job, state, again, i0, i0 + 1)
    for key, label in REPLAYED:
        first, second = played[key], again[key]
        if not np.array_equal(first, second):
            if key == "end_reason":
                names = type(state).END_REASONS
                first, second = [names[int(r)] for r in first], [names[int(r)] for r in second]
            else:
                first, second = first.tolist(), second.tolist()
            raise UserError(f"game {job.game.name}: game {i0} of the run played differently when replayed"
                            f"{where} ({label} {first} then {second}): the same seed must give the same game, so "
                            "draw chance only from self.chance (a bot from its rng), never from the random "
                            "module, the clock or the order of a set; the finished parts are kept")


def _enum(labels: Sequence[str], codes: np.ndarray) -> pl.Series:
    return pl.Series(list(labels), dtype=pl.Enum(list(labels))).gather(codes)


def _labels(job: _Job) -> tuple[list[str], np.ndarray]:
    """The strategy column's labels (a spec listed twice is one strategy) and the label
    index of each strategy index."""
    labels = list(dict.fromkeys(job.specs))
    return labels, np.array([labels.index(s) for s in job.specs], dtype=np.int64)


def _table(job: _Job, state: GameState, a: dict[str, np.ndarray]) -> pl.DataFrame:
    """The results of one chunk, one row per game x seat (sorted by game, then seat)."""
    n = state.n_players
    games = len(a["game_index"])
    labels, label_of_index = _labels(job)
    reasons = type(state).END_REASONS
    # The label columns are enums (one byte a row), not categoricals: polars writes a
    # categorical by remapping every row to a dictionary of its own, which cost a third
    # of writing a part. Every part of a run has the same enums: its id, its strategies
    # and the game's end reasons (run() refuses to extend a run written otherwise).
    columns: dict[str, pl.Series | np.ndarray] = {
        "run_id": pl.Series([job.run_id], dtype=pl.Enum([job.run_id])).new_from_index(0, games * n),
        "game": np.repeat(a["game_index"], n),
        "seed": np.repeat(a["seeds"], n),
        "seat": np.tile(np.arange(n, dtype=np.int8), games),
        "strategy": _enum(labels, label_of_index[a["seat_strategy"]]),
        "score": a["score"],
        "rank": a["rank"],
        "win": a["win"],
        "first": a["first"].astype(bool),
        "position": a["position"],
        "turns": np.repeat(a["turns"], n),
        "end_reason": _enum(reasons, np.repeat(a["end_reason"], n)),
    }
    for j, name in enumerate(state.feature_names()):
        columns[name] = a["features"][j]
    for j, name in enumerate(state.interim_names()):
        columns[f"interim_{name}"] = a["interim"][j]
    return pl.DataFrame(columns)


def _tally(job: _Job, state: GameState, a: dict[str, np.ndarray], index: int, i0: int,
           counts: np.ndarray) -> dict[str, Any]:
    """Which games of which run a part holds, and its counts per cell of TALLY_CELLS
    (rows, wins, score sum, shared-victory wins; only cells that occur) from the counts
    play_batch added up per strategy index, and per value of the game's GROUPING feature."""
    n = state.n_players
    labels, label_of_index = _labels(job)
    reasons = type(state).END_REASONS
    by_index = counts.reshape(n, n, n, len(reasons), 4)
    by_label = np.zeros((n, n, len(labels), len(reasons), 4))
    np.add.at(by_label, (slice(None), slice(None), label_of_index), by_index)  # a spec seated twice is one label
    cells = []
    for s, p, st, r in zip(*np.nonzero(by_label[..., 0]), strict=True):
        rows, wins, score, shared = by_label[s, p, st, r]
        cells.append([int(s), int(p), labels[st], reasons[r], int(rows), float(wins), int(score), float(shared)])
    games = len(a["game_index"])
    # The run and chunk it holds (simcore.parts.part_problem checks them on every read).
    tally: dict[str, Any] = {"run_id": job.run_id, "seed": job.seed, "index": index, "first_game": i0,
                             "end": i0 + games, "games": games, "rows": len(a["win"]), "cells": cells,
                             "group": None}
    names = list(state.feature_names())
    key_name = next((g for g in GROUPING if g in names), None)
    if key_name is not None:
        win = a["win"].astype(np.float64)
        values, inverse = np.unique(a["features"][names.index(key_name)], return_inverse=True)
        tally["group"] = {"key": key_name, "cells": [
            [int(v), int(r), float(w), int(sc)] for v, r, w, sc in zip(
                values, np.bincount(inverse), np.bincount(inverse, win), np.bincount(inverse, a["score"]),
                strict=True)]}
    return tally


BASE_COLUMNS = ("run_id", "game", "seed", "seat", "strategy", "score", "rank", "win", "first",
                "position", "turns", "end_reason")


def check_columns(state: Any) -> None:
    """A game's feature and interim names must be distinct and must not shadow a base
    column: a feature called "turns" would silently replace the game's length."""
    names = list(BASE_COLUMNS) + list(state.feature_names()) + [f"interim_{n}" for n in state.interim_names()]
    clashes = sorted({n for n in names if names.count(n) > 1})
    if clashes:
        raise UserError(f"{type(state).__name__} declares result columns that clash: {', '.join(clashes)}")
