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
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from analysis import stats
from analysis.metrics import LEAD_CHANGES
from analysis.rundir import RunDir, open_run
from analysis.stats import Estimate, Moments
from simcore.errors import UserError

__all__ = ["Metric", "metrics_for", "Row", "Comparison", "compare_runs", "check_margin",
           "describe_run", "pairing_problems", "variant_label", "render_compare", "write_compare",
           "DEFAULT_MARGIN", "BLOCK_GAMES"]

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
    unit: str  # "points" (percentage points of a rate), "turns", "score"
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


def _position_name(p: int, n: int) -> str:
    return "the first player (position 0)" if p == 0 else f"position {p}" + (" (last)" if p == n - 1 else "")


def metrics_for(info: RunDir, other: RunDir | None = None) -> list[Metric]:
    """The headline metrics of a run (those both runs have, when comparing two)."""
    n = info.players

    def shared(mine: list[str], theirs: list[str] | None) -> list[str]:
        return [x for x in mine if theirs is None or x in theirs]

    ms: list[Metric] = []
    if other is None or other.players == n:
        ms += [Metric(f"pos{p}", "seat balance", f"win rate of {_position_name(p, n)}", "points",
                      (f"pos{p}",), _mean, 100.0, 1.0 / n) for p in range(n)]
    if len(info.strategies) > 1 and (other is None or len(other.strategies) > 1):
        ms += [Metric(f"strat:{s}", "strategies", f"win rate of {s}", "points", (f"strat:{s}",), _mean, 100.0)
               for s in shared(info.strategies, other and other.strategies)]
    ms += [Metric("turns", "length", "game length", "turns", ("turns",), _mean),
           Metric("score", "scores", "mean score", "score", ("score",), _mean),
           Metric("spread", "scores", "score spread (standard deviation)", "score", ("score", "score2"), _sd),
           Metric("margin", "scores", "margin between first and second", "score", ("margin",), _mean),
           Metric("shared", "outcomes", "shared victories", "points", ("shared",), _mean, 100.0)]
    reasons = sorted(set(info.end_reasons) | set(other.end_reasons if other else []))
    ms += [Metric(f"end:{r}", "outcomes", f"games ending by {r}", "points", (f"end:{r}",), _mean, 100.0)
           for r in reasons]
    if info.standings and (other is None or other.standings):
        ms.append(Metric("lead_changes", "quality", "lead changes per game", "changes", ("lead_changes",), _mean))
    for f in shared(info.features, other and other.features):
        ms.append(Metric(f"use:{f}", "components", f"{f} per seat", "count", (f"use:{f}",), _mean))
        ms.append(Metric(f"effect:{f}", "components", f"win-rate effect of having {f}", "points",
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
    rows: list[Row] = field(default_factory=list)
    verdicts: list[str] = field(default_factory=list)


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
    them, and the one-sentence verdicts. `keys` keeps only the metrics whose key it
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
        out.append(Comparison(base, v, variant_label(base, v), paired, games, rows))
    _control_fdr(out)
    for c in out:
        c.verdicts = verdicts(c, margin)
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


# ---- verdicts ----

def _num(x: float, digits: int = 1) -> str:
    return f"{x:,.{digits}f}".replace("-", "−")


def _ci(row: Row, digits: int = 1) -> str:
    s = row.metric.scale
    return f"95% CI {_num(row.change.low * s, digits)} to {_num(row.change.high * s, digits)}"


def _unit(row: Row) -> str:
    return {"points": "points", "turns": "turns", "score": "score points", "changes": "lead changes",
            "count": ""}.get(row.metric.unit, row.metric.unit)


def _digits(row: Row) -> int:
    """Decimals enough that the interval's two ends differ (1 to 3)."""
    half = stats.Z95 * row.change.se * row.metric.scale
    if not half > 0:
        return 2 if abs(row.change.value * row.metric.scale) < 1 else 1
    least = 2 if row.metric.unit == "points" else 1  # a rate's change in tenths says little
    return min(3, max(least, -math.floor(math.log10(half))))


def sentence(row: Row, label: str) -> str:
    """One significant change as a sentence."""
    m, s = row.metric, row.metric.scale
    v = row.change.value * s
    d = _digits(row)
    size = f"{_num(abs(v), d)} {_unit(row)}".strip()
    if m.key == "turns":
        verb = "lengthens" if v > 0 else "shortens"
        return f"{label} {verb} the game by {size} ({_ci(row, d)})."
    verb = "raises" if v > 0 else "lowers"
    return (f"{label} {verb} the {m.label} by {size} ({_ci(row, d)}), "
            f"from {_num(row.base * s, d)} to {_num(row.variant * s, d)}.")


def verdicts(c: Comparison, margin: float) -> list[str]:
    """One-sentence verdicts: the most certain change, then seat balance (changed, or
    unchanged within the margin, or not ruled out), then the other changes, then the
    components that moved."""
    def certainty(r: Row) -> float:
        return -abs(r.change.value) / max(r.change.se, 1e-300)

    sig = sorted((r for r in c.rows if r.significant and r.metric.group != "components"), key=certainty)
    other = [r for r in sig if r.metric.group != "seat balance"]
    seat = [r for r in c.rows if r.metric.group == "seat balance"]
    out = [sentence(r, c.label) for r in other[:1]]
    if any(r.significant for r in seat):
        out += [sentence(r, c.label) for r in sig if r.metric.group == "seat balance"]
    elif seat:
        widest = max(max(abs(r.change.low), abs(r.change.high)) * 100 for r in seat)
        if widest <= margin:
            out.append(f"{c.label} leaves seat balance unchanged within ±{_num(margin, 1)} points "
                       f"(every position's win-rate change has its 95% interval inside; "
                       f"largest bound {_num(widest, 2)}).")
        else:
            out.append(f"{c.label}: no significant change in seat balance, but changes of up to "
                       f"{_num(widest, 2)} points are not ruled out (margin ±{_num(margin, 1)}: "
                       "play more games to claim it unchanged).")
    out += [sentence(r, c.label) for r in other[1:]]
    moved = [r for r in c.rows if r.significant and r.metric.group == "components"]
    if moved:
        out.append(f"{c.label} moves {len(moved)} component measure(s): "
                   + "; ".join(f"{r.metric.label} {'+' if r.change.value > 0 else '−'}"
                               f"{_num(abs(r.change.value * r.metric.scale), _digits(r))}" for r in moved[:4])
                   + ("…" if len(moved) > 4 else "") + ".")
    if not any(r.significant for r in c.rows):
        out.insert(0, f"{c.label}: no significant change in any of the {len(c.rows)} metrics "
                      "(false-discovery rate 5%).")
    return out


# ---- report ----

def _forest_svg(c: Comparison) -> str:
    """Changes of every rate (in points) with 95% intervals, as an inline SVG."""
    import io

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in c.rows if r.metric.unit == "points" and r.metric.group != "components"]
    rows += [r for r in c.rows if r.metric.key.startswith("effect:") and r.significant]
    fig, ax = plt.subplots(figsize=(7.6, 0.8 + 0.3 * len(rows)))
    y = np.arange(len(rows))[::-1]
    v = np.array([r.change.value * 100 for r in rows])
    lo = np.array([r.change.low * 100 for r in rows])
    hi = np.array([r.change.high * 100 for r in rows])
    colors = ["#b2182b" if r.significant else "#4d4d4d" for r in rows]
    ax.hlines(y, lo, hi, colors=colors, lw=1.5)
    ax.scatter(v, y, c=colors, zorder=3, s=14)
    ax.axvline(0, color="#888", lw=0.8)
    ax.set_yticks(y, [r.metric.label[:48] for r in rows], fontsize=8)
    ax.set_xlabel("variant − base, percentage points (95% CI; red: significant, FDR 5%)", fontsize=8)
    ax.set_title(f"{c.label}: changes of the rates", fontsize=10)
    fig.tight_layout()
    buf = io.StringIO()
    plt.rcParams["svg.fonttype"] = "none"
    fig.savefig(buf, format="svg")
    plt.close(fig)
    # Inline in the page: no XML prolog, and no metadata block (its namespace URLs).
    svg = re.sub(r"^.*?<svg", "<svg", buf.getvalue(), flags=re.S)
    return re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)


def _context(comparisons: list[Comparison], margin: float) -> dict[str, Any]:
    items = []
    for c in comparisons:
        rows = []
        for r in c.rows:
            d = _digits(r)
            rows.append({"group": r.metric.group, "label": r.metric.label, "unit": _unit(r),
                         "base": _num(r.shown(r.base), 2), "variant": _num(r.shown(r.variant), 2),
                         "change": _num(r.shown(r.change.value), d),
                         "ci": f"{_num(r.shown(r.change.low), d)} to {_num(r.shown(r.change.high), d)}",
                         "q": "< 0.001" if r.q_value < 1e-3 else f"{r.q_value:.2g}", "significant": r.significant,
                         "saved": f"{r.change.games_saved:.2f}×" if math.isfinite(r.change.games_saved) else "–"})
        key = [r for r in c.rows if r.metric.key in ("pos0", "turns", "score")]
        saving = [{"label": r.metric.label, "paired": _num(r.shown(r.change.se), 4),
                   "unpaired": _num(r.shown(r.change.se_unpaired), 4),
                   "factor": f"{r.change.games_saved:.2f}",
                   "equivalent": f"{c.games * r.change.games_saved:,.0f}"}
                  for r in key if c.paired and math.isfinite(r.change.games_saved)]
        moved = [x for x in rows if x["group"] == "components" and x["significant"]]
        items.append({"label": c.label, "paired": c.paired, "games": f"{c.games:,}",
                      "base": str(c.base.path), "variant": str(c.variant.path),
                      "verdicts": c.verdicts, "svg": _forest_svg(c),
                      "rows": [x for x in rows if x["group"] != "components"],
                      "moved": moved,
                      "still": sum(1 for x in rows if x["group"] == "components") - len(moved),
                      "saving": saving})
    base = comparisons[0].base
    return {"title": f"{base.manifest.get('game')}: {len(comparisons)} variant(s) against {base.path.name}",
            "items": items, "margin": _num(margin, 1), "base": str(base.path),
            "base_seats": ", ".join(s.get("spec", "?") for s in base.manifest.get("strategies", [])),
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "unpaired": not comparisons[0].paired,
            "lead_changes": LEAD_CHANGES if any(r.metric.key == "lead_changes" for c in comparisons for r in c.rows)
            else None}


def render_compare(comparisons: list[Comparison], margin: float = DEFAULT_MARGIN) -> str:
    from analysis.render import templates

    return templates(trim=False).get_template("compare.html.j2").render(**_context(comparisons, margin))


def write_compare(comparisons: list[Comparison], html: Path | str, pdf: Path | str | None = None,
                  margin: float = DEFAULT_MARGIN) -> None:
    from analysis.report import write_html

    write_html(html, render_compare(comparisons, margin), pdf)
