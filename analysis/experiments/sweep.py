"""Parameter sweeps: a grid over params (and seat lineups), each point a run directory
under one sweep directory, every point on the same game seeds.

    <out>/sweep.json                          the grid of the latest call (params, lineups, seed)
    <out>/<lineup>/<name=value,...>/          one run directory per point
    <out>/metrics.parquet, metrics.csv        the tidy table: point x metric, value and 95% CI

Re-running finishes only what is missing (the points are resumable runs). A point the
game refuses (its params fail validation, or setup is impossible) is reported as such
and the others still run. Neighbouring points are compared paired (same seeds), and the
fair point of a position advantage (where it crosses zero along a numeric param) is
found by interpolation with a bootstrap interval (analysis.stats.zero_crossing).
"""
from __future__ import annotations

import functools
import itertools
import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

import strategies
from analysis import progress, stats
from analysis.display import Shown
from analysis.experiments import compare as cmp
from analysis.experiments.widen import widen
from analysis.sequential import Precision, until_precise
from analysis.rundir import RunDir, open_run
from simcore.errors import UserError, writing
from simcore.params import parse_set
from simcore.parts import write_atomic, write_text
from simcore.registry import GameSpec, get_game
from simcore.runner import rotation_size
from simcore.runner import run as run_games

__all__ = ["Point", "SweepResult", "parse_vary", "check_vary", "grid", "run_sweep", "numeric",
           "SWEEP_MANIFEST", "NEIGHBOUR_KEYS", "SMALL_POINT"]

SWEEP_MANIFEST = "sweep.json"
# Metrics compared paired between neighbouring points.
NEIGHBOUR_KEYS = ("turns", "score", "margin")
# A point of fewer games runs in one worker: spreading it costs more than it gains.
SMALL_POINT = 20_000


@dataclass(frozen=True)
class Point:
    lineup: tuple[str, ...]
    values: dict[str, Any]
    path: Path
    refused: str | None = None  # why the game refused this point
    precision: Precision | None = None

    @property
    def name(self) -> str:
        return ", ".join(f"{k} = {_show(v)}" for k, v in self.values.items())


@dataclass
class SweepResult(Shown):
    path: Path
    game: str
    params: list[str]
    points: list[Point]
    table: pl.DataFrame  # tidy: lineup, <params>, metric, label, group, unit, value, low, high, se, fair, games
    neighbours: pl.DataFrame  # paired changes between neighbouring points
    fair_points: pl.DataFrame  # lineup, param, position, at (other params), x, low, high, method
    seconds: float = 0.0
    played: int = 0
    # Where no value swept reaches fair: which way to widen the range (analysis.experiments.widen).
    widen: list[str] = field(default_factory=list)


def _show(v: Any) -> str:
    return json.dumps(v) if not isinstance(v, str) else v


def _split_values(raw: str) -> list[str]:
    """Split at commas outside brackets: "[1,2],[3,4]" is two values."""
    out, depth, cur = [], 0, ""
    for ch in raw:
        depth += {"[": 1, "]": -1, "{": 1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return [v.strip() for v in out]


def parse_vary(text: str) -> tuple[str, list[Any]]:
    """NAME=V1,V2,... with each value read as TOML (as --set reads one), or NAME=LOW..HIGH
    for every integer from LOW to HIGH (the form `tune --vary` takes)."""
    if "=" not in text:
        raise UserError(f"--vary {text!r}: expected NAME=V1,V2,... or NAME=LOW..HIGH")
    name, raw = (s.strip() for s in text.split("=", 1))
    if m := re.fullmatch(r"\s*(-?\d+)\s*\.\.\s*(-?\d+)\s*", raw):
        low, high = int(m[1]), int(m[2])
        if not low <= high or high - low >= 1000:
            raise UserError(f"--vary {text!r}: LOW..HIGH must have LOW <= HIGH and at most 1,000 values")
        return name, list(range(low, high + 1))
    values = _split_values(raw)
    if not name or not any(values):
        raise UserError(f"--vary {text!r}: empty grid (give NAME=V1,V2,...)")
    if not all(values):
        raise UserError(f"--vary {text!r}: an entry is empty; expected NAME=V1,V2,..., a value between "
                        "every two commas")
    return name, [parse_set(f"{name}={v}")[1] for v in values]


def _kind(v: Any) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "list"}.get(type(v), type(v).__name__)


def check_vary(spec: GameSpec, vary: dict[str, Sequence[Any]]) -> None:
    """Unknown names, values of the wrong type and an empty grid are the user's error
    (the whole sweep stops); values the game refuses are only that point's problem."""
    if not vary or any(len(v) == 0 for v in vary.values()):
        raise UserError("empty grid: give at least one --vary NAME=V1,V2,... with values")
    defaults = {i.name: i.value for i in spec.defaults()}
    for name, values in vary.items():
        if name not in defaults:
            close = sorted(k for k in defaults if k.split(".")[-1] == name.split(".")[-1])
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise UserError(f"--vary {name}: unknown param{hint}; `chocosim rules {spec.name}` lists them")
        want = defaults[name]
        for v in values:
            ok = type(v) is type(want) or (isinstance(want, float) and type(v) is int)
            if not ok:
                raise UserError(f"--vary {name}: value {v!r} is a {_kind(v)}, but {name} takes a "
                                f"{_kind(want)} (default {want!r})")
        if len(set(map(_show, values))) < len(values):
            raise UserError(f"--vary {name}: a value is listed twice")


def grid(vary: dict[str, Sequence[Any]]) -> list[dict[str, Any]]:
    names = list(vary)
    return [dict(zip(names, combo)) for combo in itertools.product(*(vary[n] for n in names))]


def _slug(text: str) -> str:
    return re.sub(r"[^\w.=+,-]+", "_", text).strip("_")[:120] or "_"


def _point_dir(out: Path, lineup: Sequence[str], values: dict[str, Any]) -> Path:
    return out / _slug("-vs-".join(lineup)) / _slug(",".join(f"{k}={_show(v)}" for k, v in values.items()))


def _open_sweep_dir(out: Path, record: dict[str, Any]) -> None:
    """A new directory, or one holding a sweep (sweep.json); anything else is refused."""
    if out.exists() and not out.is_dir():
        raise UserError(f"sweep directory {out} exists and is not a directory")
    if out.exists() and any(out.iterdir()) and not (out / SWEEP_MANIFEST).exists():
        raise UserError(f"sweep directory {out} is not empty and has no {SWEEP_MANIFEST}: "
                        "it is not a sweep directory; choose another one")
    if (out / SWEEP_MANIFEST).exists():
        try:
            old = json.loads((out / SWEEP_MANIFEST).read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise UserError(f"sweep directory {out}: {SWEEP_MANIFEST} is unreadable ({e})") from None
        for key in ("game", "seed", "seating"):
            if old.get(key) != record[key]:
                raise UserError(f"sweep directory {out} holds a sweep with {key} {old.get(key)!r}, "
                                f"not {record[key]!r}; choose another directory")
    with writing(out / SWEEP_MANIFEST):
        out.mkdir(parents=True, exist_ok=True)
        write_text(out / SWEEP_MANIFEST, json.dumps(record, indent=2) + "\n")


def run_sweep(game: str, lineups: Sequence[Sequence[str]], vary: dict[str, Sequence[Any]], games: int,
              out: Path, *, seed: int = 0, seating: str = "rotate", rules: Path | None = None,
              sets: dict[str, Any] | None = None, jobs: int | None = None,
              precision: float | None = None, quiet: bool = True) -> SweepResult:
    """Play every point of the grid (see the module doc) and analyse the sweep."""
    spec = get_game(game)
    if games < 1:
        raise UserError(f"games = {games}: must be at least 1")
    if not lineups:
        raise UserError("a sweep needs at least one lineup (--seats)")
    check_vary(spec, vary)
    overlap = sorted(set(vary) & set(sets or {}))
    if overlap:
        raise UserError(f"param {overlap[0]} is both swept (--vary) and set (--set)")
    record = {"game": spec.name, "seed": seed, "seating": seating, "games": games,
              "vary": {k: list(v) for k, v in vary.items()}, "lineups": [list(x) for x in lineups],
              "sets": sets or {}, "rules": str(rules) if rules else None,
              "written": datetime.now(UTC).isoformat(timespec="seconds")}
    # Every point's params are checked before anything is played or written.
    plan = []
    for lineup in lineups:
        for values in grid(vary):
            try:
                params = spec.params(rules, {**(sets or {}), **values}, players=len(lineup))
                spec.new_state(params)  # setup itself may refuse (a deck too small to deal)
                refused = None
            except (UserError, ValueError) as e:
                params, refused = None, str(e).splitlines()[0]
            plan.append((tuple(lineup), values, params, refused))
    if all(r is not None for *_, r in plan):
        raise UserError(f"the game refuses every point of the grid, e.g. {plan[0][3]}")
    _open_sweep_dir(out, record)
    if not quiet:
        progress.expect(games * sum(r is None for *_, r in plan))
    workers = 1 if games < SMALL_POINT and jobs is None else jobs
    started = time.perf_counter()
    points, played = [], 0
    for lineup, values, params, refused in plan:
        path = _point_dir(out, lineup, values)
        if refused is not None:
            points.append(Point(lineup, values, path, refused))
            continue
        lineup_factory = functools.partial(strategies.build_lineup, spec.name, list(lineup))

        def play(n: int, params=params, path=path, lineup=lineup, factory=lineup_factory) -> None:
            nonlocal played
            played += run_games(spec, params, list(lineup), factory, path, n_games=n, seed=seed,
                                seating=seating, jobs=workers, quiet=quiet).played

        done = None
        if precision is None:
            play(games)
        else:
            done = until_precise(play, lambda path=path: [
                (m.label, e) for m, e in cmp.describe_run(open_run(path), lambda k: k.startswith("pos"))],
                precision, games, rotation_size(len(lineup), seating))
        points.append(Point(lineup, values, path, None, done))
    seconds = time.perf_counter() - started
    result = analyse(spec.name, list(vary), points, out)
    result.seconds, result.played = seconds, played
    return result


# ---- analysis ----

def _table(params: list[str], points: list[Point]) -> pl.DataFrame:
    rows = []
    for p in points:
        if p.refused:
            continue
        info = open_run(p.path)
        for m, e in cmp.describe_run(info):
            fair = m.fair if m.fair is not None else 0.0
            rows.append({"lineup": ",".join(p.lineup), **{k: _cell(p.values[k]) for k in params},
                         "metric": m.key, "label": m.label, "group": m.group, "unit": m.unit,
                         "value": (e.value + fair) * m.scale, "low": (e.low + fair) * m.scale,
                         "high": (e.high + fair) * m.scale, "se": e.se * m.scale,
                         "fair": m.fair * m.scale if m.fair is not None else None, "games": e.n})
    return pl.DataFrame(rows, infer_schema_length=None)


def _cell(v: Any) -> Any:
    """A param value as a table cell: lists as their TOML-ish text."""
    return _show(v) if isinstance(v, list | dict) else v


def numeric(values: Sequence[Any]) -> bool:
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)


def _lines(params: list[str], points: list[Point]):
    """Every line of the grid along one param: (lineup, param, the other params' values,
    the points in the order of the param's values)."""
    ok = [p for p in points if not p.refused]
    for lineup in dict.fromkeys(p.lineup for p in ok):
        for name in params:
            others = [k for k in params if k != name]
            groups: dict[str, list[Point]] = {}
            for p in ok:
                if p.lineup == lineup:
                    key = ", ".join(f"{k} = {_show(p.values[k])}" for k in others)
                    groups.setdefault(key, []).append(p)
            for at, line in groups.items():
                if len(line) > 1:
                    yield lineup, name, at, line


def _neighbours(params: list[str], points: list[Point]) -> pl.DataFrame:
    """Paired changes of the key metrics between consecutive points of every line."""
    rows, found = [], []
    for lineup, name, at, line in _lines(params, points):
        for a, b in itertools.pairwise(line):
            keys = lambda k: k.startswith("pos") or k in NEIGHBOUR_KEYS  # noqa: E731
            c = cmp.compare_runs(a.path, [b.path], keys=keys)[0]
            for r in c.rows:
                found.append(r)
                s = r.metric.scale
                rows.append({"lineup": ",".join(lineup), "param": name, "at": at,
                             "from": _show(a.values[name]), "to": _show(b.values[name]),
                             "metric": r.metric.key, "label": r.metric.label, "unit": r.metric.unit,
                             "change": r.change.value * s, "low": r.change.low * s, "high": r.change.high * s,
                             "p": r.change.p_value})
    frame = pl.DataFrame(rows, infer_schema_length=None)
    if frame.height:
        frame = frame.with_columns(q=pl.Series(stats.benjamini_hochberg(frame["p"].to_numpy())))
    return frame


# Blocks of games the fair point's bootstrap resamples (each game its own block when
# fewer). The bootstrap's covariance of the points is estimated from the blocks: with
# 100 the interval's width varied 0.83-1.21 times the delta method's over planted
# sweeps, with 2,000 0.96-1.06 (tests/analysis/test_sweep.py).
BLOCKS = 2000


def _position_blocks(path: Path, games: int, players: int) -> tuple[np.ndarray, np.ndarray]:
    """Per block of games [0, games) and turn position: the wins and the games."""
    blocks = min(BLOCKS, games)
    block = (pl.col("game") * blocks // games).alias("block")
    cells = (RunDir(path).scan().filter(pl.col("game") < games)
             .group_by(block, "position").agg(pl.col("win").cast(pl.Float64).sum(), pl.len().alias("n"))
             .collect())
    sums, counts = np.zeros((blocks, players)), np.zeros((blocks, players))
    b, p = cells["block"].to_numpy(), cells["position"].to_numpy()
    sums[b, p] = cells["win"].to_numpy()
    counts[b, p] = cells["n"].to_numpy()
    return sums, counts


def _fair_points(params: list[str], points: list[Point], table: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """Where each position's advantage crosses zero along each numeric param, its
    interval from a block bootstrap over the games every point of the line shares; and
    for a line where it does not, which way to widen the range (the 1st player's only at
    2 players: the 2nd player's is its mirror image)."""
    rows, unreached = [], []
    if table.height == 0:
        return pl.DataFrame(), unreached
    for lineup, name, at, line in _lines(params, points):
        xs = [p.values[name] for p in line]
        if not numeric(xs):
            continue
        order = np.argsort(xs)
        line = [line[i] for i in order]
        xs = [xs[i] for i in order]
        players = len(lineup)
        common = min(RunDir(p.path).n_games for p in line)
        blocks = [_position_blocks(p.path, common, players) for p in line]
        for pos in range(players):
            vals, ses = [], []
            for p in line:
                sel = table.filter((pl.col("lineup") == ",".join(lineup)) & (pl.col("metric") == f"pos{pos}"))
                for k, v in p.values.items():
                    sel = sel.filter(pl.col(k) == _cell(v))
                vals.append((sel["value"][0] - sel["fair"][0]) / 100)
                ses.append(sel["se"][0] / 100)
            sums = np.column_stack([s[:, pos] for s, _ in blocks])
            counts = np.column_stack([c[:, pos] for _, c in blocks])
            reps = stats.block_bootstrap(sums, counts)
            # Centred on each point's own estimate (a point may hold more games than the
            # ones all points share).
            reps += np.array(vals) - sums.sum(axis=0) / counts.sum(axis=0)
            cross = stats.zero_crossing(xs, vals, ses, replicates=reps)
            if cross is None:
                hint = widen(name, xs, vals, pos) if pos == 0 or players > 2 else None
                if hint:
                    where = f" at {at}" if at else ""
                    unreached.append(f"No value of {name} swept reaches fair ({','.join(lineup)}{where}). {hint}")
                continue
            rows.append({"lineup": ",".join(lineup), "param": name, "at": at, "position": pos,
                         "x": cross.x, "low": cross.low, "high": cross.high,
                         "crossings": cross.crossings, "method": cross.method})
    return pl.DataFrame(rows, infer_schema_length=None), unreached


def analyse(game: str, params: list[str], points: list[Point], out: Path) -> SweepResult:
    table = _table(params, points)
    for name, write in (("metrics.parquet", lambda p: table.write_parquet(p)),
                        ("metrics.csv", lambda p: table.write_csv(p))):
        with writing(out / name):
            write_atomic(out / name, write)
    fair, unreached = _fair_points(params, points, table)
    result = SweepResult(out, game, params, points, table, _neighbours(params, points), fair, widen=unreached)
    return result
