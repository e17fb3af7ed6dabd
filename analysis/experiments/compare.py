"""House-rule comparisons: a variant against a baseline, paired on common random numbers.

Runs of the same game, table size, seating and run seed play game i from the same seed
with the same seat order, so base and variant rows join on (game, seat) and every metric
is differenced game by game. Each metric is a smooth function h of per-game means (a
win rate is the mean of a per-game win, a score spread the square root of E[s^2] -
E[s]^2, a component's effect a difference of two ratios); its difference h(variant) -
h(base) gets a delta-method standard error over the joint covariance of the base and
variant columns (analysis.stats.paired_delta), which is where the pairing pays. The
moments are accumulated block by block of games, so memory stays bounded.

Verdicts are Benjamini-Hochberg controlled at 5% over every metric of every variant;
"unchanged" is claimed only when the whole 95% interval lies within a stated margin.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from analysis import stats
from analysis.positions import ordinal
from analysis.rundir import RunDir, open_run
from analysis.stats import Estimate, Moments
from simcore.errors import UserError

__all__ = ["Metric", "metrics_for", "Row", "Comparison", "compare_runs", "check_margin",
           "describe_run", "pairing_problems", "variant_label", "DEFAULT_MARGIN", "BLOCK_GAMES"]

DEFAULT_MARGIN = 1.0  # percentage points: "seat balance unchanged within ±1 point"
BLOCK_GAMES = 200_000  # games read at once (bounded memory)
PRESENCE_RANGE = (0.01, 0.99)  # a component's win effect needs seats with and without it


# ---- per-game columns ----

def _lead_changes(win: np.ndarray, standings: list[np.ndarray]) -> np.ndarray:
    """Per game, how often the sole leader changed over the checkpoints, the result (a
    sole winner) counting as the last checkpoint; a tie for the lead changes nothing
    (metrics.LEAD_CHANGES: the report counts the same)."""
    current = np.full(len(win), -1)
    changes = np.zeros(len(win))
    sole_winner = (win == 1).any(axis=1)
    final = np.where(sole_winner, win.argmax(axis=1), -1)
    for s in [*standings, None]:
        if s is None:
            leader = final
        else:
            top = s.max(axis=1, keepdims=True)
            leader = np.where((s == top).sum(axis=1) == 1, s.argmax(axis=1), -1)
        changes += (leader >= 0) & (current >= 0) & (leader != current)
        current = np.where(leader >= 0, leader, current)
    return changes


def game_columns(info: RunDir, rows: pl.DataFrame) -> dict[str, np.ndarray]:
    """Per game of a block of rows (whole games), the columns the metrics are means of."""
    n = info.players
    rows = rows.sort("game", "seat")
    g = rows.height // n

    def grid(name: str, dtype=float) -> np.ndarray:
        return rows[name].to_numpy().astype(dtype).reshape(g, n)

    win, score, position = grid("win"), grid("score"), grid("position", np.int64)
    out: dict[str, np.ndarray] = {"game": rows["game"].to_numpy()[::n], "turns": rows["turns"].to_numpy()[::n].astype(float)}
    for p in range(n):
        out[f"pos{p}"] = (win * (position == p)).sum(axis=1)
    if len(info.strategies) > 1:
        strategy = rows["strategy"].cast(pl.String).to_numpy().reshape(g, n)
        for s in info.strategies:
            held = strategy == s
            out[f"strat:{s}"] = (win * held).sum(axis=1) / np.maximum(held.sum(axis=1), 1)
    out["score"] = score.mean(axis=1)
    out["score2"] = (score * score).mean(axis=1)
    ordered = np.sort(score, axis=1)
    out["margin"] = ordered[:, -1] - ordered[:, -2] if n > 1 else ordered[:, -1]
    out["shared"] = ((win > 0) & (win < 1)).any(axis=1).astype(float)
    reason = rows["end_reason"].cast(pl.String).to_numpy()[::n]
    for r in info.end_reasons:
        out[f"end:{r}"] = (reason == r).astype(float)
    if info.standings:
        out["lead_changes"] = _lead_changes(win, [grid(c) for c in info.standings])
    for f in info.features:
        value = grid(f)
        present = value >= 1
        out[f"use:{f}"] = value.mean(axis=1)
        out[f"has:{f}"] = present.sum(axis=1).astype(float)
        out[f"win_has:{f}"] = (win * present).sum(axis=1)
        out[f"win_not:{f}"] = (win * ~present).sum(axis=1)
    return out


def _blocks(info: RunDir, columns: list[str], start: int, stop: int) -> pl.DataFrame:
    wanted = list(dict.fromkeys(["game", "seat", "win", "score", "position", "turns",
                                 "end_reason", "strategy", *columns]))
    try:
        return (info.scan().filter(pl.col("game").is_between(start, stop, closed="left"))
                .select(wanted).collect())
    except (pl.exceptions.PolarsError, OSError) as e:
        raise UserError(f"results in {info.path} are unreadable: {str(e).splitlines()[0]}") from None


# ---- metrics ----

@dataclass(frozen=True)
class Metric:
    key: str
    group: str  # seat balance, strategies, scores, length, end reasons, quality, components
    label: str
    unit: str  # "percentage points" (of a rate), "turns", "score" (score points)
    columns: tuple[str, ...]
    h: Callable[[np.ndarray], float]
    scale: float = 1.0  # a rate is shown x100, in points
    fair: float | None = None  # a rate's fair share (seat balance)


def _mean(x: np.ndarray) -> float:
    return float(x[0])


def _sd(x: np.ndarray) -> float:
    return math.sqrt(max(x[1] - x[0] ** 2, 0.0))


def _effect(x: np.ndarray, seats: int) -> float:
    has, win_has, win_not = x
    return win_has / has - win_not / (seats - has)


def metrics_for(info: RunDir, other: RunDir | None = None) -> list[Metric]:
    """The headline metrics of a run (those both runs have, when comparing two)."""
    n = info.players

    def shared(mine: list[str], theirs: list[str] | None) -> list[str]:
        return [x for x in mine if theirs is None or x in theirs]

    ms: list[Metric] = []
    if other is None or other.players == n:
        ms += [Metric(f"pos{p}", "seat balance", f"win rate of the {ordinal(p)}", "percentage points",
                      (f"pos{p}",), _mean, 100.0, 1.0 / n) for p in range(n)]
    if len(info.strategies) > 1 and (other is None or len(other.strategies) > 1):
        ms += [Metric(f"strat:{s}", "strategies", f"win rate of {s}", "percentage points", (f"strat:{s}",), _mean, 100.0)
               for s in shared(info.strategies, other and other.strategies)]
    ms += [Metric("turns", "length", "game length", "turns", ("turns",), _mean),
           Metric("score", "scores", "mean score", "score", ("score",), _mean),
           Metric("spread", "scores", "score spread (standard deviation)", "score", ("score", "score2"), _sd),
           Metric("margin", "scores", "score margin between the winner and the runner-up", "score", ("margin",), _mean),
           Metric("shared", "outcomes", "shared victories", "percentage points", ("shared",), _mean, 100.0)]
    reasons = sorted(set(info.end_reasons) | set(other.end_reasons if other else []))
    ms += [Metric(f"end:{r}", "outcomes", f"games ending by {r}", "percentage points", (f"end:{r}",), _mean, 100.0)
           for r in reasons]
    if info.standings and (other is None or other.standings):
        ms.append(Metric("lead_changes", "quality", "lead changes per game", "changes", ("lead_changes",), _mean))
    for f in shared(info.features, other and other.features):
        ms.append(Metric(f"use:{f}", "components", f"{f} per seat", "count", (f"use:{f}",), _mean))
        ms.append(Metric(f"effect:{f}", "components", f"win-rate effect of having {f}", "percentage points",
                         (f"has:{f}", f"win_has:{f}", f"win_not:{f}"),
                         lambda x, n=n: _effect(x, n), 100.0))
    return ms


def _fill(cols: dict[str, np.ndarray], names: Sequence[str], g: int) -> np.ndarray:
    """The named columns as a matrix; a column a run lacks (an end reason it never had)
    is zero."""
    return np.column_stack([cols.get(c, np.zeros(g)) for c in names]) if names else np.zeros((g, 0))


def _effect_usable(m: Metric, mean: np.ndarray, n: int) -> bool:
    """A component's win effect needs seats with and without it (PRESENCE_RANGE)."""
    if not m.key.startswith("effect:"):
        return True
    share = mean[0] / n
    return PRESENCE_RANGE[0] <= share <= PRESENCE_RANGE[1]


# ---- comparing ----

@dataclass(frozen=True)
class Row:
    metric: Metric
    base: float
    variant: float
    change: Estimate
    q_value: float = math.nan

    @property
    def significant(self) -> bool:
        return self.q_value < stats.ALPHA

    def shown(self, x: float) -> float:
        return x * self.metric.scale


@dataclass
class Comparison:
    base: RunDir
    variant: RunDir
    label: str
    paired: bool
    games: int  # paired games (or the smaller run, unpaired)
    margin: float = DEFAULT_MARGIN  # points: the equivalence margin of "seat balance unchanged"
    rows: list[Row] = field(default_factory=list)


def pairing_problems(base: RunDir, variant: RunDir) -> list[str]:
    """Why two runs cannot be compared game by game (empty when they can)."""
    problems = []
    for key in ("game", "players", "seating", "seed"):
        a, b = base.manifest.get(key), variant.manifest.get(key)
        if a != b:
            problems.append(f"{key} is {a!r} in {base.path}, {b!r} in {variant.path}")
    return problems


def variant_label(base: RunDir, variant: RunDir) -> str:
    """What the variant changes: 'rounds = 3, deck.almonds = 6' (or its strategies)."""
    pb, pv = base.params, variant.params
    changed = [f"{k} = {pv.get(k)!r}".replace("'", "") for k in sorted(pb.keys() | pv.keys())
               if pb.get(k) != pv.get(k)]
    sb = [s.get("spec") for s in base.manifest.get("strategies", [])]
    sv = [s.get("spec") for s in variant.manifest.get("strategies", [])]
    if sb != sv:
        changed.append(f"seats {', '.join(map(str, sv))}")
    elif base.manifest.get("strategies") != variant.manifest.get("strategies"):
        changed.append("bot weights")
    if base.manifest.get("game") != variant.manifest.get("game"):
        changed.insert(0, f"game {variant.manifest.get('game')}")
    return ", ".join(changed) or "the same rules"


def _accumulate(base: RunDir, variant: RunDir, ms: list[Metric],
                paired: bool) -> tuple[list[Moments], list[Moments], list[Moments]]:
    """Moments per metric: joint (paired) or base and variant separately."""
    joint = [Moments(2 * len(m.columns)) for m in ms]
    mb = [Moments(len(m.columns)) for m in ms]
    mv = [Moments(len(m.columns)) for m in ms]
    extra_b = base.features + base.standings
    extra_v = variant.features + variant.standings
    end = max(int(base.manifest.get("n_games") or 0), int(variant.manifest.get("n_games") or 0), 1)
    for start in range(0, end, BLOCK_GAMES):
        stop = min(start + BLOCK_GAMES, end)
        cb = game_columns(base, _blocks(base, extra_b, start, stop))
        cv = game_columns(variant, _blocks(variant, extra_v, start, stop))
        if paired:
            common, ib, iv = np.intersect1d(cb["game"], cv["game"], assume_unique=True, return_indices=True)
            for j, m in enumerate(ms):
                xb = _fill(cb, m.columns, len(cb["game"]))[ib]
                xv = _fill(cv, m.columns, len(cv["game"]))[iv]
                joint[j].add(np.hstack([xb, xv]))
        else:
            for j, m in enumerate(ms):
                mb[j].add(_fill(cb, m.columns, len(cb["game"])))
                mv[j].add(_fill(cv, m.columns, len(cv["game"])))
    return joint, mb, mv


def check_margin(margin: float) -> None:
    if not 0 < margin < math.inf:
        raise UserError(f"margin = {margin}: must be a positive, finite number of points")


def compare_runs(base: Path | str | RunDir, variants: Sequence[Path | str | RunDir], *,
                 paired: bool = True, margin: float = DEFAULT_MARGIN,
                 keys: Callable[[str], bool] | None = None) -> list[Comparison]:
    """Every variant against the base: paired differences (refused with a UserError when
    the runs cannot be paired, unless paired=False), BH-controlled verdicts over all of
    them (analysis.render.compare words them). `keys` keeps only the metrics whose key it
    accepts (the sequential rule looks at the seat balance only)."""
    base = base if isinstance(base, RunDir) else open_run(base)
    infos = [v if isinstance(v, RunDir) else open_run(v) for v in variants]
    if not infos:
        raise UserError("compare needs at least one variant run besides the base")
    check_margin(margin)
    if paired:
        for v in infos:
            problems = pairing_problems(base, v)
            if problems:
                raise UserError(f"cannot pair {v.path} with {base.path}: {'; '.join(problems)} "
                                "(a paired comparison needs the same game, table size, seating "
                                "and seed; --unpaired compares them as independent samples)")
    out = []
    for v in infos:
        ms = [m for m in metrics_for(base, v) if keys is None or keys(m.key)]
        joint, mb, mv = _accumulate(base, v, ms, paired)
        rows = []
        for j, m in enumerate(ms):
            k = len(m.columns)
            if paired:
                if joint[j].n < 2:
                    raise UserError(f"{base.path} and {v.path} share fewer than two games")
                mean_b, mean_v = joint[j].mean[:k], joint[j].mean[k:]
            else:
                mean_b, mean_v = mb[j].mean, mv[j].mean
            if not (_effect_usable(m, mean_b, base.players) and _effect_usable(m, mean_v, v.players)):
                continue
            est = stats.paired_delta(m.h, joint[j]) if paired else stats.unpaired_delta(m.h, mb[j], mv[j])
            if not math.isfinite(est.value):
                continue
            rows.append(Row(m, m.h(mean_b), m.h(mean_v), est))
        games = joint[0].n if paired else min(mb[0].n, mv[0].n)
        out.append(Comparison(base, v, variant_label(base, v), paired, games, margin, rows))
    _control_fdr(out)
    return out


def _control_fdr(comparisons: list[Comparison]) -> None:
    rows = [r for c in comparisons for r in c.rows]
    q = stats.benjamini_hochberg(np.array([r.change.p_value for r in rows]))
    it = iter(q)
    for c in comparisons:
        c.rows = [Row(r.metric, r.base, r.variant, r.change, float(next(it))) for r in c.rows]


def describe_run(info: RunDir, keys: Callable[[str], bool] | None = None) -> list[tuple[Metric, Estimate]]:
    """One run's metrics with their 95% intervals (the sweep's table); a seat-balance
    rate's estimate is its advantage over the fair share (value - 1/players). `keys`
    keeps only the metrics whose key it accepts."""
    ms = [m for m in metrics_for(info) if keys is None or keys(m.key)]
    moments = [Moments(len(m.columns)) for m in ms]
    end = int(info.manifest.get("n_games") or 1)
    extra = info.features + info.standings
    for start in range(0, end, BLOCK_GAMES):
        cols = game_columns(info, _blocks(info, extra, start, min(start + BLOCK_GAMES, end)))
        for m, mo in zip(ms, moments):
            mo.add(_fill(cols, m.columns, len(cols["game"])))
    out = []
    for m, mo in zip(ms, moments):
        if mo.n < 2 or not _effect_usable(m, mo.mean, info.players):
            continue
        est = stats.delta_estimate(m.h, mo, m.fair or 0.0)
        if math.isfinite(est.value):
            out.append((m, est))
    return out
