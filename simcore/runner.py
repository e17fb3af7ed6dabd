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
import itertools
import json
import math
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from rich.console import Console

from simcore.batch import SEATING_MODES, result_arrays
from simcore.chunks import (GROUPING, TALLY_CELLS, BotFailure, Job, keep_freed_memory, play_chunk, play_queue,
                            result_table, this_process, watch_parent)
from simcore.errors import UserError
from simcore.params import Params, flatten
from simcore.parts import (LAYOUT, MANIFEST, PART_GLOB, STRAY, chunk_of, chunks_of, part_index,
                           part_name, part_problem, scan_parts, tally_path)
from simcore.pygame import code_fingerprint
from simcore.pygame_state import PyGameState
from simcore.registry import GameSpec
from simcore.rundir import (BUILD, IDENTITY, check_code, class_name, git_revision, held_games, package_version,
                            prepare, record_resume, run_id_of)
from simcore.state import CHECKED_BUILD, GameState
from simcore.strategy import PythonStrategy, Strategy

__all__ = ["run", "RunResult", "SEATINGS", "BACKENDS", "MANIFEST", "IDENTITY", "BUILD",
           "seat_orders", "bytes_per_game", "default_chunk_size", "TALLY_CELLS", "GROUPING",
           "BotFailure", "rotation_size", "workers", "playing_on", "reporting", "keep_freed_memory"]

SEATINGS = SEATING_MODES  # rotate, fixed, random: the codes play_batch takes, in order
# "auto": threads when every bot is compiled (the game loop, the part writer and most of
# the rest release the GIL, and threads start at once), processes when one is written
# in Python (it holds the GIL while it decides).
BACKENDS = ("auto", "processes", "threads", "dask")

# Parts of 250,000 games rather than 100,000: each part has a fixed cost (its files, the
# table's columns, the writer's start), and one core plays 10 M fast games 7-10% sooner.
DEFAULT_CHUNK_SIZE = 250_000
CHUNKS_PER_JOB = 4  # enough chunks that no worker idles while another finishes the tail
CHUNK_BYTES = 64 * 2**20  # result arrays of one chunk, so a worker's memory is bounded
DASK_TIMEOUT = 10  # seconds to reach a dask scheduler, and for it to have a worker
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
        "strategies": [{"spec": s, "class": class_name(b),
                        "weights": dict(b.weights)} for s, b in zip(specs, bots, strict=True)],
        "seating": seating,
        "seed": seed,
    }
    identity = json.loads(json.dumps(identity))  # compare as it reads back from disk
    rotation = rotation_size(state.n_players, seating)
    n_games = math.ceil(n_games / rotation) * rotation
    if n_games != requested:  # said even with quiet (which only hides the progress)
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
            "run_id": run_id_of(identity),
            **identity,
            "n_games": n_games,
            "players": state.n_players,
            "seat_orders": perms.tolist(),
            "chunk_size": sizing(n_games),
            "layout": LAYOUT,
            "version": package_version(),
            "git_revision": git_revision(),
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
        job = Job(game, params, lineup, specs, perms, SEATINGS.index(seating), seed,
                   fresh["run_id"], out.resolve(), home=this_process())
        try:
            def check(held: dict[str, Any]) -> None:
                check_code(out, game.name, held, fresh)
                _check_format(replace(job, run_id=held["run_id"]), state, held)

            manifest = prepare(out, identity, fresh, check, sizing,
                                flatten(game.params(players=state.n_players).model_dump(mode="json")),
                                {class_name(b): {**type(b).WEIGHTS, **type(b).WEIGHTS_BEFORE} for b in bots})
        except OSError as e:
            raise UserError(f"cannot create the run directory {out}: "
                            f"{e.strerror or e}{f' ({e.filename})' if e.filename else ''}") from None
        n_games = manifest["n_games"]
        job = replace(job, run_id=manifest["run_id"], layout=manifest.get("layout", 1))
        _remove_strays(out, manifest)
        todo = [c for c in chunks_of(manifest) if not _part_done(out, c[0], manifest)]
        resumed = n_games - sum(i1 - i0 for _, i0, i1 in todo)
        if todo and manifest is not fresh:
            record_resume(out, manifest, fresh)
        played = _execute(job, todo, n_workers, resumed, quiet, backend,
                          adaptive=backend == "processes" and jobs is None)
    return RunResult(out, manifest, played, resumed, requested)




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


def _check_format(job: Job, state: GameState, manifest: dict[str, Any]) -> None:
    """Refuse to add parts to a run whose parts have other columns or column types (a
    run of an older chocosim, or of a game that has since gained a feature or an end
    reason): polars would not read the run's parts together. Compared as a reader gets
    them (a compact part's derived and narrowed columns at their types). The first part
    of the run whose rows are the run's stands for them all (another is replayed later),
    proven or not: a run of an older chocosim is refused before its parts are replayed."""
    expected = dict(result_table(job, state, result_arrays(state, 0)).schema)
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
        with parallel_config(backend="loky", initializer=watch_parent, initargs=(os.getpid(),)):
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


# Where run() reports its games (unless quiet): a callable taking (games, played), played
# False for the games a resumed directory held already; None: nowhere. Set by the
# command's progress (analysis.progress), which simcore cannot import.
_reporter: contextvars.ContextVar[Callable[[int, bool], None] | None] = contextvars.ContextVar(
    "chocosim_reporter", default=None)


@contextmanager
def reporting(report: Callable[[int, bool], None]) -> Iterator[None]:
    """Every run() inside that is not quiet reports its games to `report(games, played)`."""
    token = _reporter.set(report)
    try:
        yield
    finally:
        _reporter.reset(token)


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


def _execute(job: Job, todo: list[tuple[int, int, int]], n_workers: int, resumed: int,
             quiet: bool, backend: str, adaptive: bool) -> int:
    """Play the chunks of `todo`. With process workers, this process plays chunks too
    until the workers have started (each imports numpy, polars and the engine, about a
    second), so their start costs no time. `adaptive` (their number not given): play
    chunks here first and start the workers only when the rest of the run would take
    long enough to repay their start."""
    report = None if quiet else _reporter.get()

    def advance(n: int) -> None:
        if report is not None:
            report(n, True)

    if resumed and report is not None:
        report(resumed, False)
    queue = collections.deque(todo)
    played = 0
    if adaptive and n_workers > 1:
        start = time.perf_counter()
        while queue:
            n = play_chunk(job, *queue.popleft())
            played += n
            advance(n)
            left = sum(i1 - i0 for _, i0, i1 in queue) * (time.perf_counter() - start) / played
            if left * (1 - 1 / n_workers) > WORKERS_START_S:
                break
    if not queue:
        return played
    help_start = backend == "processes" and n_workers > 1
    return played + play_queue(job, queue, n_workers, help_start, advance)




BASE_COLUMNS = ("run_id", "game", "seed", "seat", "strategy", "score", "rank", "win", "first",
                "position", "turns", "end_reason")


def check_columns(state: Any) -> None:
    """A game's feature and interim names must be distinct and must not shadow a base
    column: a feature called "turns" would silently replace the game's length."""
    names = list(BASE_COLUMNS) + list(state.feature_names()) + [f"interim_{n}" for n in state.interim_names()]
    clashes = sorted({n for n in names if names.count(n) > 1})
    if clashes:
        raise UserError(f"{type(state).__name__} declares result columns that clash: {', '.join(clashes)}")
