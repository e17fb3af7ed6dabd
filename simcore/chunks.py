"""Playing a run's chunks: each chunk's games played into its part and tally, on this
process's threads or on worker processes (joblib loky, a dask cluster), stopped on a
Ctrl-C, a failing bot or a dead parent. simcore.runner decides what to play and where;
this module plays it.

Workers build their own state and bots and write their part themselves, so the parent
only ever holds small counts and memory stays bounded however many games a run has.
"""
from __future__ import annotations

import collections
import ctypes
import functools
import os
import signal
import socket
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from simcore.batch import play_batch, result_arrays, tally_size
from simcore.errors import UserError
from simcore.params import Params
from simcore.parts import LAYOUT, part_name, write_part
from simcore.pygame import GameFailure
from simcore.registry import GameSpec
from simcore.state import GameState
from simcore.strategy import DecideError, Strategy

__all__ = ["Job", "BotFailure", "TALLY_CELLS", "GROUPING", "play_chunk", "play_queue", "this_process",
           "keep_freed_memory", "result_table", "watch_parent"]

# A part's tally counts per cell of TALLY_CELLS (and per value of a GROUPING feature):
# enough for a run's summary without reading a row.
TALLY_CELLS = ("seat", "position", "strategy", "end_reason")
# Feature columns that name the scenario a game was dealt (e.g. a solo game's goal
# card); the tally counts wins per value of the first one a game has.
GROUPING = ("target",)
# A worker process checks this often whether the run that started it is still alive.
PARENT_POLL_S = 0.5


@dataclass(frozen=True)
class Job:
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


def play_queue(job: Job, queue: collections.deque, n_workers: int, help_start: bool,
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
            yield delayed(_play_far)(job, *chunk)

    def helper() -> None:
        try:
            while not started.is_set() and (chunk := take()) is not None:
                n = play_chunk(job, *chunk)
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


def watch_parent(parent: int) -> None:
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


def play_chunk(job: Job, index: int, i0: int, i1: int) -> int:
    """Worker: play games [i0, i1), write part `index`; return the number of games."""
    return _play_far(job, index, i0, i1)[0]


def this_process() -> tuple[str, int]:
    return socket.gethostname(), os.getpid()


def _play_far(job: Job, index: int, i0: int, i1: int) -> tuple[int, int, tuple[str, int], dict[str, Any]]:
    """play_chunk for a worker: also the chunk's first game, its rows and the process
    that played it (the run's process replays it when another did)."""
    me = threading.get_ident()
    with _playing_lock:
        _playing.add(me)
    try:
        games, first = _play_part(job, index, i0, i1)
        return games, i0, this_process(), first
    except KeyboardInterrupt:
        if threading.current_thread() is threading.main_thread():
            raise
        raise _Stopped() from None  # quietly: the run's thread has the Ctrl-C already
    finally:
        with _playing_lock:
            _playing.discard(me)


def _play_part(job: Job, index: int, i0: int, i1: int) -> tuple[int, dict[str, Any]]:
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
    if this_process() == job.home:
        _check_replay(job, first, i0)
    # A compact part derives its game and seed columns on read: not built to be dropped.
    table = result_table(job, state, a, derived=job.layout < 2)
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


def _play_games(job: Job, state: GameState, a: dict[str, np.ndarray], i0: int, i1: int,
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


def _check_replay(job: Job, played: dict[str, np.ndarray], i0: int, where: str = "") -> None:
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


def _labels(job: Job) -> tuple[list[str], np.ndarray]:
    """The strategy column's labels (a spec listed twice is one strategy) and the label
    index of each strategy index (int8, as the strategy indices are: polars gathers by
    them a third faster than by int64)."""
    labels = list(dict.fromkeys(job.specs))
    return labels, np.array([labels.index(s) for s in job.specs], dtype=np.int8)


def result_table(job: Job, state: GameState, a: dict[str, np.ndarray], derived: bool = True) -> pl.DataFrame:
    """The results of one chunk, one row per game x seat (sorted by game, then seat);
    without the columns a compact part derives on read (simcore.parts.DERIVED) unless
    `derived`."""
    n = state.n_players
    games = len(a["game_index"])
    labels, label_of_index = _labels(job)
    # Each spec its own label (the usual case): the strategy indices are the labels' codes.
    codes = a["seat_strategy"] if len(labels) == len(job.specs) else label_of_index[a["seat_strategy"]]
    reasons = type(state).END_REASONS
    # The label columns are enums (one byte a row), not categoricals: polars writes a
    # categorical by remapping every row to a dictionary of its own, which cost a third
    # of writing a part. Every part of a run has the same enums: its id, its strategies
    # and the game's end reasons (run() refuses to extend a run written otherwise).
    columns: dict[str, pl.Series | np.ndarray] = {
        "run_id": pl.Series([job.run_id], dtype=pl.Enum([job.run_id])).new_from_index(0, games * n),
    }
    if derived:
        columns["game"] = np.repeat(a["game_index"], n)
        columns["seed"] = np.repeat(a["seeds"], n)
    columns |= {
        "seat": np.tile(np.arange(n, dtype=np.int8), games),
        "strategy": _enum(labels, codes),
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


def _tally(job: Job, state: GameState, a: dict[str, np.ndarray], index: int, i0: int,
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
