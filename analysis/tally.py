"""The pass over a run's parts that every balance metric is read from: one Tally of
counts and sums, the only tally class of the analysis.

Memory stays bounded however many games a run holds: the parts are read one at a time
(a part is at most a chunk of the run, written so that it fits in a worker's memory) on
a few threads, each reduced to small tables of counts and sums, merged as they finish:
row-level cells (per seat, position, strategy, feature value...) by integer bincounts,
and the per-game facts that need every seat of a game at once (margins, head-to-head
results, leads) as counts and histograms. A part's tally is cached beside it, so a
second report of the same run reads no rows.

The component effects count the game as the unit: their per-game moments depend on
each feature's threshold, which only the whole run's histograms decide. The pass
takes the thresholds the first part's tally gives and computes the moments at those
while it reads every part once; a feature whose threshold the whole run moves is read
again, alone (rare: a threshold is "present at all" unless a feature is nearly always
present).
"""
from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from analysis import stats
from analysis.effects import SeatStates, effect_moments
from analysis.ratings import ahead_counts
from analysis.rundir import RunDir
from simcore.errors import UserError
from simcore.parts import write_text

__all__ = ["Tally", "Histogram", "Cells", "games_tally"]


@dataclass
class Histogram:
    """Counts of integer values, built part by part."""

    counts: Counter = field(default_factory=Counter)

    def add(self, values: np.ndarray) -> None:
        if values.size == 0:
            return
        # bincount, not np.unique: counting small ints needs no sort (10x faster).
        low = int(values.min())
        counts = np.bincount(values.astype(np.int64) - low)  # widened first: int8 - low can wrap
        seen = np.flatnonzero(counts)
        self.counts.update(dict(zip((seen + low).tolist(), counts[seen].tolist())))

    def frame(self, name: str) -> pl.DataFrame:
        items = sorted(self.counts.items())
        return pl.DataFrame({name: [k for k, _ in items], "count": [v for _, v in items]},
                            schema={name: pl.Int64, "count": pl.Int64})

    @property
    def n(self) -> int:
        return sum(self.counts.values())

    def mean(self) -> tuple[float, float, float]:
        k = np.array(list(self.counts.keys()), dtype=float)
        v = np.array(list(self.counts.values()), dtype=float)
        return stats.mean_interval(int(v.sum()), float((k * v).sum()), float((k * k * v).sum()))

    def quantile(self, q: float) -> float:
        items = sorted(self.counts.items())
        target, seen = q * self.n, 0
        for value, count in items:
            seen += count
            if seen >= target:
                return float(value)
        return float("nan")



# ---- one pass over the parts ----

Cells = dict[tuple[Any, ...], np.ndarray]  # key -> [rows, sum of each weight]



def _cells(keys: list[np.ndarray], weights: list[np.ndarray], sizes: list[int | None] | None = None) -> Cells:
    """Rows grouped by integer keys: per key tuple present, [rows, sum of each weight].
    A bincount over the combined index (sorting, as np.unique does, is ~10x slower).
    sizes: where known, key i lies in range(sizes[i]) (saves a min and a max)."""
    if len(keys[0]) == 0:
        return {}
    sizes = sizes or [None] * len(keys)
    los = [0 if size else int(k.min()) for k, size in zip(keys, sizes)]
    spans = [size or int(k.max()) - lo + 1 for k, lo, size in zip(keys, los, sizes)]
    # Built in place: one int64 array, not a temporary per step (this runs per feature
    # per part, and allocation and memory traffic were most of its cost).
    index = keys[0].astype(np.int64)
    for i, (k, lo, span) in enumerate(zip(keys, los, spans)):
        if i:
            index *= span
            index += k
        if lo:
            index -= lo
    size = int(np.prod(spans))
    counts = np.bincount(index, minlength=size)
    seen = np.flatnonzero(counts)
    table = np.column_stack([counts[seen].astype(float),
                             *[np.bincount(index, weights=w, minlength=size)[seen] for w in weights]])
    coords = [(c + lo).tolist() for c, lo in zip(np.unravel_index(seen, spans), los)]
    return dict(zip(zip(*coords), table))


def _add(into: Cells, cells: Cells) -> None:
    for key, value in cells.items():
        if key in into:
            into[key] += value
        else:
            into[key] = value.copy()


@dataclass
class Tally:
    """What the pass over the parts accumulates: row-level cells (per seat, position,
    strategy, feature value...) and per-game facts (matchups, margins, leads)."""

    k: int  # strategies
    checkpoints: int
    cells: dict[Any, Cells] = field(default_factory=dict)
    moved: int = 0  # rows whose seat is not their turn position
    shared: float = 0.0  # win shares of shared victories
    pair_wins: np.ndarray = field(init=False)
    pair_games: np.ndarray = field(init=False)
    pair_moments: np.ndarray = field(init=False)  # game-level, see ratings.Matchups.ahead_moments
    margin: dict[str, Histogram] = field(default_factory=dict)
    decided: int = 0  # games with a sole winner
    games: int = 0
    sole_leader: np.ndarray = field(init=False)  # per checkpoint: games with a sole leader
    leader_won: np.ndarray = field(init=False)  # ... and the win share that leader took
    trailed: int = 0
    lead_changes: Histogram = field(default_factory=Histogram)
    last_change: Histogram = field(default_factory=Histogram)

    def __post_init__(self) -> None:
        self.pair_wins = np.zeros((self.k, self.k))
        self.pair_games = np.zeros((self.k, self.k))
        self.pair_moments = np.zeros((self.k * self.k, self.k * self.k))
        self.sole_leader = np.zeros(self.checkpoints, dtype=np.int64)
        self.leader_won = np.zeros(self.checkpoints)

    def add(self, name: Any, cells: Cells) -> None:
        _add(self.cells.setdefault(name, {}), cells)

    def merge(self, other: Tally) -> None:
        for name, cells in other.cells.items():
            self.add(name, cells)
        self.moved += other.moved
        self.shared += other.shared
        self.pair_wins += other.pair_wins
        self.pair_games += other.pair_games
        self.pair_moments += other.pair_moments
        for reason, h in other.margin.items():
            self.margin.setdefault(reason, Histogram()).counts.update(h.counts)
        self.decided += other.decided
        self.games += other.games
        self.sole_leader += other.sole_leader
        self.leader_won += other.leader_won
        self.trailed += other.trailed
        self.lead_changes.counts.update(other.lead_changes.counts)
        self.last_change.counts.update(other.last_change.counts)



def _codes(column: pl.Series) -> tuple[np.ndarray, list[str]]:
    """A string, categorical or enum column as int codes and the labels they index: read
    through the physical codes (casting every row to strings is slow)."""
    if not isinstance(column.dtype, pl.Categorical | pl.Enum):
        column = column.cast(pl.String).cast(pl.Categorical)
    physical = column.to_physical().to_numpy()
    present = column.unique()
    labels = present.cast(pl.String).to_list()
    lookup = np.zeros(int(present.to_physical().max()) + 1, dtype=np.int64)
    lookup[present.to_physical().to_numpy()] = np.arange(len(labels))
    return lookup[physical], labels


def _part_arrays(run: RunDir, part: Path, columns: list[str]) -> dict[str, Any]:
    """The columns of one part as (games, seats) arrays; strategy as the index into
    run.strategies; end_reason per game as codes into "end_labels"."""
    df = run.read(part, columns)
    n = run.players
    if len(df) % n or not (df["seat"].to_numpy().reshape(-1, n) == np.arange(n)).all():
        # The runner writes game-major, seat-minor rows; anything else is re-sorted.
        df = df.sort("game", "seat")
    out: dict[str, Any] = {c: df[c].to_numpy().reshape(-1, n) for c in columns
                           if c not in ("strategy", "end_reason")}
    codes, labels = _codes(df["strategy"])
    if unknown := set(labels) - set(run.strategies):
        raise UserError(f"results in {run.path} name strategies the manifest does not: "
                        f"{', '.join(sorted(unknown))}")
    out["strategy"] = np.array([run.strategies.index(s) for s in labels], dtype=np.int64)[codes].reshape(-1, n)
    reasons, out["end_labels"] = _codes(df["end_reason"].gather_every(n))
    out["end_reason"] = reasons
    return out


def _tally_rows(run: RunDir, t: Tally, a: dict[str, Any]) -> None:
    win = a["win"].ravel().astype(np.float64)
    score = a["score"].ravel().astype(np.int64)
    seat, position, strategy = a["seat"].ravel(), a["position"].ravel(), a["strategy"].ravel()
    as_float = score.astype(np.float64)
    moments = [win, as_float, as_float * as_float]
    n, k = [run.players], [len(run.strategies)]
    t.add("seat", _cells([seat], moments, n))
    t.add("position", _cells([position], moments, n))
    t.add("strategy", _cells([strategy], moments, k))
    t.add("score", _cells([seat, score], []))
    t.moved += int((seat != position).sum())
    t.add("end", {(a["end_labels"][code],): v for (code,), v in _cells([a["end_reason"]], []).items()})
    t.add("turns", _cells([a["turns"][:, 0]], []))
    # The k seats sharing a victory hold 1/k each: their win shares sum to 1 a game.
    t.shared += float(win[(win > 0) & (win < 1)].sum())
    # Features by strategy, so effects can be estimated within the strategy that held them.
    if features := run.role_features("component", "behaviour", "setup"):
        # polars' hashed unique and a search: np.unique sorts every seat.
        shares = np.sort(pl.Series(win).unique().to_numpy())
        share = np.searchsorted(shares, win)
        for f in features:
            t.add(("feature", f), _share_cells(strategy, a[f].ravel(), share, shares, k[0]))
    if outcomes := run.role_features("outcome"):
        t.add("outcomes", _moment_cells(strategy, (win >= 1).astype(np.int64), [a[f].ravel() for f in outcomes],
                                        k[0]))


def _share_cells(strategy: np.ndarray, value: np.ndarray, share: np.ndarray, shares: np.ndarray, k: int) -> Cells:
    """_cells([strategy, value], [win], [k, None]) where win = shares[share]: the rows
    counted per strategy, win share and value, the wins read off the counts (a bincount
    weighted by the wins took twice as long)."""
    if len(value) == 0:
        return {}
    if not np.issubdtype(value.dtype, np.integer):
        return _cells([strategy, value], [shares[share]], [k, None])
    lo = int(value.min())
    span, w = int(value.max()) - lo + 1, len(shares)
    index = (strategy * w + share) * span + (value.astype(np.int64) - lo)
    counts = np.bincount(index, minlength=k * w * span).reshape(k, w, span)
    n, wins = counts.sum(axis=1), np.einsum("ksv,s->kv", counts, shares.astype(np.float64))
    return {(int(s), int(v) + lo): np.array([float(n[s, v]), wins[s, v]]) for s, v in zip(*np.nonzero(n), strict=True)}


def _moment_cells(strategy: np.ndarray, won: np.ndarray, values: list[np.ndarray], k: int) -> Cells:
    """_cells([strategy, won], [x, x * x for each of values]): each integer column
    counted per value in its cell, the sums read off the counts (a bincount weighted
    by every sum took several times longer)."""
    if len(strategy) == 0:
        return {}
    cell = strategy.astype(np.int64) * 2 + won
    rows = np.bincount(cell, minlength=2 * k)
    seen = np.flatnonzero(rows)
    table = [rows[seen].astype(float)]
    for v in values:
        if not np.issubdtype(v.dtype, np.integer):
            x = v.astype(np.float64)
            table += [np.bincount(cell, weights=w, minlength=2 * k)[seen] for w in (x, x * x)]
            continue
        lo, span = int(v.min()), int(v.max()) - int(v.min()) + 1
        counts = np.bincount(cell * span + (v.astype(np.int64) - lo), minlength=2 * k * span)
        counts = counts.reshape(2 * k, span)[seen].astype(float)
        x = np.arange(lo, lo + span, dtype=float)
        table += [counts @ x, counts @ (x * x)]
    return {(int(c) // 2, int(c) % 2): row for c, row in zip(seen, np.column_stack(table), strict=True)}


def _tally_pairs(t: Tally, strategy: np.ndarray, rank: np.ndarray) -> None:
    k = t.k
    ahead = ahead_counts(strategy, rank, k)
    wins = ahead.sum(axis=0)
    t.pair_wins += wins
    t.pair_games += wins + wins.T
    flat = ahead.reshape(len(ahead), k * k)
    t.pair_moments += flat.T @ flat


def _sole_leader(standings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per game, the seat strictly ahead of all others (-1 on a tie for the lead) and
    the top value. Column by column: numpy reduces a handful of seats along axis 1
    several times slower than it combines whole columns."""
    columns = np.ascontiguousarray(standings.T)
    top = columns[0].copy()
    leader = np.zeros(len(top), dtype=np.int64)
    at_top = np.ones(len(top), dtype=np.int64)
    for seat in range(1, len(columns)):
        c = columns[seat]
        higher = c > top
        at_top = np.where(higher, 1, at_top + (c == top))
        leader[higher] = seat
        np.maximum(top, c, out=top)
    return np.where(at_top == 1, leader, -1), top


def _tally_leaders(t: Tally, win: np.ndarray, leaders: list[np.ndarray]) -> None:
    """Over all games: at each checkpoint, the games with a sole leader and the win
    share that leader went on to take, i.e. P(win | sole leader); ties apart."""
    rows = np.arange(len(win))
    for c, leader in enumerate(leaders):
        has = leader >= 0
        t.sole_leader[c] += int(has.sum())
        t.leader_won[c] += float(win[rows[has], leader[has]].sum())


def _tally_quality(t: Tally, winner: np.ndarray, final: np.ndarray, standings: list[np.ndarray],
                   leaders: list[np.ndarray], tops: list[np.ndarray]) -> None:
    """Leads over the checkpoints (`leaders`: the sole leader per checkpoint, -1 on a
    tie) of every game; the result is the final point of the sequence (`final`: the
    sole winner, -1 for a shared victory, which changes nothing), so a late comeback
    counts as a lead change. compare's "lead changes per game" is the same count over
    the same games. Whether the winner trailed is asked of the games with a sole winner
    (`winner`: theirs, in game order)."""
    decided = np.flatnonzero(final >= 0)
    trailed = np.zeros(len(winner), dtype=bool)
    for s, top in zip(standings, tops):
        trailed |= s[decided, winner] < top[decided]
    current = np.full(len(final), -1)  # the latest sole leader seen
    changes = np.zeros(len(final), dtype=np.int64)
    last = np.zeros(len(final), dtype=np.int64)
    for c, leader in enumerate([*leaders, final]):
        changed = (leader >= 0) & (current >= 0) & (leader != current)
        changes += changed
        last = np.where(changed, c, last)
        current = np.where(leader >= 0, leader, current)
    t.trailed += int(trailed.sum())
    t.lead_changes.add(changes)
    t.last_change.add(last)


TALLY_COLUMNS = ["game", "seat", "strategy", "score", "rank", "win", "position", "turns", "end_reason"]
EFFECT_COLUMNS = ["game", "seat", "strategy", "win", "end_reason"]


def _tally_arrays(run: RunDir, t: Tally, a: dict[str, Any], checkpoints: list[str]) -> None:
    t.games += len(a["win"])
    _tally_rows(run, t, a)
    if run.players < 2:
        return  # solo: no opponents, margins or leads
    _tally_pairs(t, a["strategy"], a["rank"])
    leader, top = _sole_leader(a["win"])
    sole = top == 1  # a sole winner holds a whole win
    winner = leader[sole]
    scores = np.ascontiguousarray(a["score"][sole].astype(np.int64).T)  # seat by seat
    best_other = np.full(len(winner), np.iinfo(np.int64).min)
    for seat, column in enumerate(scores):
        np.maximum(best_other, column, out=best_other, where=winner != seat)
    margin = scores[winner, np.arange(len(winner))] - best_other
    reasons = a["end_reason"][sole]
    for code, reason in enumerate(a["end_labels"]):
        if (chosen := reasons == code).any():
            t.margin.setdefault(str(reason), Histogram()).add(margin[chosen])
    t.decided += int(sole.sum())
    if checkpoints:
        leaders, tops = zip(*(_sole_leader(a[c]) for c in checkpoints))
        _tally_leaders(t, a["win"], list(leaders))
        _tally_quality(t, winner, np.where(sole, leader, -1), [a[c] for c in checkpoints], list(leaders),
                       list(tops))


def _effects(run: RunDir, a: dict[str, Any], thresholds: dict[str, int]) -> dict[str, stats.Moments]:
    """Per feature, the moments of effect_columns at its threshold over a part's games."""
    seats = SeatStates(a["strategy"], a["win"], len(run.strategies))
    return {name: effect_moments(seats, a[name], threshold, run.roles.missing_when_zero(name))
            for name, threshold in thresholds.items()}


# ---- caches beside the parts ----

# Bumped whenever what a part's tally holds changes, so older cache files are ignored.
_CACHE_VERSION = 3
_EFFECTS_VERSION = 2


def _cache_key(run: RunDir, part: Path, checkpoints: list[str]) -> dict[str, Any]:
    st = part.stat()
    return {"version": _CACHE_VERSION, "size": st.st_size, "mtime_ns": st.st_mtime_ns,
            "players": run.players, "strategies": run.strategies, "checkpoints": checkpoints,
            "roles": {r: run.role_features(r) for r in ("component", "behaviour", "setup", "outcome")}}


def _encode(key: Any) -> Any:
    return list(key) if isinstance(key, tuple) else key


def _tally_to_json(t: Tally) -> dict[str, Any]:
    return {"cells": [[_encode(name), [[list(k), v.tolist()] for k, v in cells.items()]]
                      for name, cells in t.cells.items()],
            "moved": t.moved, "shared": t.shared, "pair_wins": t.pair_wins.tolist(),
            "pair_games": t.pair_games.tolist(), "pair_moments": t.pair_moments.tolist(),
            "margin": {r: list(h.counts.items()) for r, h in t.margin.items()},
            "decided": t.decided, "games": t.games, "sole_leader": t.sole_leader.tolist(),
            "leader_won": t.leader_won.tolist(), "trailed": t.trailed,
            "lead_changes": list(t.lead_changes.counts.items()),
            "last_change": list(t.last_change.counts.items())}


def _tally_from_json(d: dict[str, Any], k: int, checkpoints: int) -> Tally:
    t = Tally(k, checkpoints)
    for name, cells in d["cells"]:
        t.cells[tuple(name) if isinstance(name, list) else name] = {tuple(key): np.array(v) for key, v in cells}
    t.moved, t.shared, t.decided, t.games, t.trailed = d["moved"], d["shared"], d["decided"], d["games"], d["trailed"]
    t.pair_wins, t.pair_games = np.array(d["pair_wins"]).reshape(k, k), np.array(d["pair_games"]).reshape(k, k)
    t.pair_moments = np.array(d["pair_moments"]).reshape(k * k, k * k)
    t.margin = {r: Histogram(Counter(dict(map(tuple, c)))) for r, c in d["margin"].items()}
    t.sole_leader = np.array(d["sole_leader"], dtype=np.int64)
    t.leader_won = np.array(d["leader_won"], dtype=float)
    t.lead_changes = Histogram(Counter(dict(map(tuple, d["lead_changes"]))))
    t.last_change = Histogram(Counter(dict(map(tuple, d["last_change"]))))
    return t


def _read_cache(path: Path, key: dict[str, Any]) -> dict[str, Any] | None:
    """A cache file's content when it was made for `key` (this very part, same size and
    time, this analysis version and question); None otherwise. JSON, not pickle: a run
    directory from elsewhere must not run code."""
    try:
        stored = json.loads(path.read_text())
        return stored if isinstance(stored, dict) and stored.get("key") == key else None
    except (OSError, ValueError):
        return None


def _write_cache(path: Path, content: dict[str, Any]) -> None:
    """Best effort: a read-only run directory just is not cached."""
    try:
        write_text(path, json.dumps(content))
    except OSError:
        pass


class _PartCache:
    """A part's cached tally (.tally-XXXXX.json) and effect moments (.effects-XXXXX.json,
    per feature and threshold), hidden names that can never match a part's."""

    def __init__(self, run: RunDir, part: Path, checkpoints: list[str]) -> None:
        self.run, self.checkpoints = run, checkpoints
        index = part.stem.removeprefix("part-")
        self.tally_path = part.with_name(f".tally-{index}.json")
        self.effects_path = part.with_name(f".effects-{index}.json")
        self.key = _cache_key(run, part, checkpoints)
        self.effects_key = {**_cache_key(run, part, []), "version": _EFFECTS_VERSION}
        stored = _read_cache(self.effects_path, self.effects_key)
        self.moments: dict[str, Any] = stored["moments"] if stored and isinstance(stored.get("moments"), dict) else {}

    def tally(self) -> Tally | None:
        stored = _read_cache(self.tally_path, self.key)
        try:
            return None if stored is None else _tally_from_json(stored["tally"], len(self.run.strategies),
                                                               len(self.checkpoints))
        except (KeyError, TypeError, ValueError):
            return None

    def store_tally(self, t: Tally) -> None:
        _write_cache(self.tally_path, {"key": self.key, "tally": _tally_to_json(t)})

    def effects(self, thresholds: dict[str, int]) -> dict[str, stats.Moments] | None:
        width = 4 * len(self.run.strategies)
        out = {}
        for name, threshold in thresholds.items():
            try:
                n, total, cross = self.moments[f"{name}@{threshold}"]
                m = stats.Moments(width)
                m.n, m.total, m.cross = n, np.array(total, dtype=float), np.array(cross, dtype=float).reshape(width, width)
            except (KeyError, TypeError, ValueError):
                return None
            out[name] = m
        return out

    def store_effects(self, thresholds: dict[str, int], found: dict[str, stats.Moments]) -> None:
        for name, m in found.items():
            self.moments[f"{name}@{thresholds[name]}"] = [m.n, m.total.tolist(), m.cross.ravel().tolist()]
        _write_cache(self.effects_path, {"key": self.effects_key, "moments": self.moments})


# ---- the pass ----

Thresholds = Callable[[Tally], dict[str, int]]


def _part_pass(run: RunDir, part: Path, checkpoints: list[str],
               thresholds: dict[str, int] | Thresholds) -> tuple[Tally | None, dict[str, int], dict[str, stats.Moments]]:
    """A part's tally (None when `checkpoints` is None: only the effects are asked) and
    its effect moments at `thresholds` (or at the thresholds its own tally gives), each
    from the part's cache where it holds them, the rest from one read of its rows."""
    cache = _PartCache(run, part, checkpoints or [])
    tally = cache.tally() if checkpoints is not None else None
    if checkpoints is not None and tally is None:
        a = _part_arrays(run, part, [*TALLY_COLUMNS, *run.role_features("component", "behaviour", "setup", "outcome"),
                                     *checkpoints])
        tally = Tally(len(run.strategies), len(checkpoints))
        _tally_arrays(run, tally, a, checkpoints)
        cache.store_tally(tally)
    else:
        a = None
    if callable(thresholds):
        thresholds = thresholds(tally)
    effects = cache.effects(thresholds)
    if effects is None:
        if a is None:
            a = _part_arrays(run, part, [*EFFECT_COLUMNS, *thresholds])
        effects = _effects(run, a, thresholds)
        cache.store_effects(thresholds, effects)
    return tally, thresholds, effects


def _merge_effects(into: dict[str, stats.Moments], found: dict[str, stats.Moments]) -> None:
    for name, m in found.items():
        t = into[name]
        t.n += m.n
        t.total += m.total
        t.cross += m.cross


def games_tally(run: RunDir, checkpoints: list[str], thresholds: Thresholds) -> tuple[Tally, dict[str, stats.Moments]]:
    """The tally of every game of the run, and per feature the moments of effect_columns
    over every game at the threshold `thresholds(tally)` gives it. Parts are read on
    threads (part reads and numpy release the GIL), each into its own tally, merged as
    they finish: at most a thread's worth of parts in memory at once."""
    k = len(run.strategies)
    first, guess, effects = _part_pass(run, run.parts[0], checkpoints, thresholds)
    total = Tally(k, len(checkpoints))
    total.merge(first)
    with ThreadPoolExecutor(max_workers=min(os.cpu_count() or 1, len(run.parts))) as pool:
        for t, _, found in pool.map(lambda p: _part_pass(run, p, checkpoints, guess), run.parts[1:]):
            total.merge(t)
            _merge_effects(effects, found)
        final = thresholds(total)
        again = {name: value for name, value in final.items() if guess.get(name) != value}
        if again:
            redone = {name: stats.Moments(4 * k) for name in again}
            for _, _, found in pool.map(lambda p: _part_pass(run, p, None, again), run.parts):
                _merge_effects(redone, found)
            effects.update(redone)
    return total, {name: effects[name] for name in final}
