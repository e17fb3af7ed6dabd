"""What a skill experiment finds beyond the ladder (analysis.experiments.skill): the skill
depth of a search bot (each doubling of its budget against the budget below) and the
importance of each component by restricted play (a bot that never takes it against its
unrestricted self), and the whole analysis of a plan's runs."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats as sps

import strategies
from analysis import stats
from analysis.display import Shown
from analysis.experiments.skill import (BUDGET, FORBID, HeadToHead, Ladder, Plan, analyze_ladder, head_to_head,
                                       tally, with_arg)
from analysis.stats import ALPHA, Rate
from simcore.errors import UserError
from simcore.params import flatten
from analysis.rundir import RunDir

__all__ = ["DepthStep", "Depth", "analyze_depth", "summed_excess", "Importance", "Restricted",
           "analyze_restricted", "SkillAnalysis", "analyze"]


@dataclass(frozen=True)
class DepthStep:
    budget: int  # the stronger bot's budget (the weaker has half)
    h2h: HeadToHead
    q_value: float  # Benjamini-Hochberg over the doublings

    @property
    def significant(self) -> bool:
        return self.q_value < ALPHA and self.h2h.share.value > 0.5


@dataclass(frozen=True)
class Depth:
    """The skill trace: each doubling of the budget against the budget below."""

    base: str  # the search bot at the lowest budget
    steps: list[DepthStep]
    depth: int  # doublings from the lowest budget on that each stay significantly above 50%
    excess: tuple[float, float, float]  # summed (ahead share - 1/2) over the doublings, 95% CI


def analyze_depth(run_dirs: Sequence[Path | str], specs: Sequence[str], budgets: Sequence[int]) -> Depth:
    """The skill trace from runs of specs[k] against specs[k-1] (same seeds). The summed
    excess is averaged game by game over the doublings, so its interval carries the
    correlation the shared seeds give the doublings."""

    tallies = [tally(d) for d in run_dirs]
    steps = []
    for k in range(1, len(specs)):
        met = [t for t in tallies if specs[k] in t.labels and specs[k - 1] in t.labels]
        if not met:
            raise UserError(f"no run of {specs[k]} against {specs[k - 1]}")
        steps.append(head_to_head(specs[k], specs[k - 1], met))
    q = stats.benjamini_hochberg(np.array([s.share.p_value for s in steps]))
    out = [DepthStep(int(b), s, float(qv)) for b, s, qv in zip(budgets[1:], steps, q, strict=True)]
    depth = 0
    for s in out:
        if not s.significant:
            break
        depth += 1
    return Depth(specs[0], out, depth, summed_excess([s.per_game for s in steps]))


def summed_excess(per_game: Sequence[np.ndarray]) -> tuple[float, float, float]:
    """Sum over the doublings of (ahead share - 1/2), with a 95% t interval over games:
    game g's excess is summed over the doublings first, so the interval carries the
    correlation that shared seeds give them (games missing from any doubling are left out)."""
    size = min(len(x) for x in per_game)
    excess = np.sum([x[:size] - 0.5 for x in per_game], axis=0)
    return _mean_ci(excess[~np.isnan(excess)])


def _mean_ci(x: np.ndarray) -> tuple[float, float, float]:
    return stats.mean_interval(len(x), float(x.sum()), float((x * x).sum()))


@dataclass(frozen=True)
class Importance:
    component: str
    share: Rate  # the restricted bot's win share against its unrestricted self
    drop: tuple[float, float, float]  # mirror's win share minus the restricted one, 95% CI
    p_value: float  # paired t test of no drop
    q_value: float = math.nan  # Benjamini-Hochberg over the components

    @property
    def significant(self) -> bool:
        return self.q_value < ALPHA


@dataclass(frozen=True)
class Restricted:
    bot: str
    players: int
    components: list[Importance]  # largest drop first


def _paired(d: np.ndarray) -> tuple[tuple[float, float, float], float]:
    """Mean of paired differences with its 95% t interval, and the two-sided t test of
    a zero mean (exact when every difference is the same)."""

    mean, low, high = _mean_ci(d)
    if len(d) < 2:
        return (mean, low, high), math.nan
    if np.ptp(d) == 0:
        return (mean, mean, mean), 1.0 if mean == 0 else 0.0
    return (mean, low, high), float(sps.ttest_1samp(d, 0.0).pvalue)


def analyze_restricted(mirror_dir: Path | str, restricted: dict[str, Path | str], bot: str) -> Restricted:
    """Each component's importance: in game g the restricted bot's win share against
    the win share of the seat it held in game g of the mirror match (same seed, same
    seating), averaged over games; Benjamini-Hochberg over the components."""

    mirror = tally(mirror_dir)
    rows = []
    for component, d in restricted.items():
        t = tally(d)
        label = with_arg(bot, FORBID, component)
        if label not in t.labels:
            raise UserError(f"run {t.path} has no {label}")
        size = min(t.n_games, mirror.n_games)
        seat = t.seat[t.labels.index(label)][:size]
        g = np.flatnonzero(seat >= 0)
        g = g[~np.isnan(mirror.seat_wins[g, seat[g]])]  # games both runs hold
        won, mirrored = t.seat_wins[g, seat[g]], mirror.seat_wins[g, seat[g]]
        drop, p = _paired(mirrored - won)
        share = stats.rate_vs(float(won.sum()), len(g), 1 / t.players)
        rows.append(Importance(component, share, drop, p))
    q = stats.benjamini_hochberg(np.array([r.p_value for r in rows]))
    rows = [Importance(r.component, r.share, r.drop, r.p_value, float(qv)) for r, qv in zip(rows, q, strict=True)]
    rows.sort(key=lambda r: -r.drop[0])
    return Restricted(bot, mirror.players, rows)


@dataclass(frozen=True)
class SkillAnalysis(Shown):
    game: str
    title: str
    players: int
    n_games: int  # per run
    params: dict[str, Any]
    changed: list[str]  # params that differ from the defaults
    ladder: Ladder
    depth: Depth | None
    restricted: Restricted | None
    runs: list[dict[str, Any]]  # per run directory: path, specs, games, run id, revision


def analyze(p: Plan) -> SkillAnalysis:
    """Analyse the runs of a plan (played by `play`)."""
    ladder_dirs = [p.run_dir(t) for _, _, ts in p.pairings() for t in ts]
    ladder_dirs += [p.run_dir(p.mirror(r)) for r in p.rungs]
    ladder = analyze_ladder(ladder_dirs, p.rungs)
    depth = None
    if p.depth:
        dirs = [p.run_dir(t) for _, _, ts in p.steps() for t in ts]
        budgets = [int(float(strategies.parse_spec(s)[1][BUDGET])) for s in p.depth]
        depth = analyze_depth(dirs, p.depth, budgets)
    restricted = None
    if p.restricted is not None:
        restricted = analyze_restricted(p.run_dir(p.mirror(p.restricted)),
                                        {c: p.run_dir(t) for c, t in p.forbidden()}, p.restricted)
    values = flatten(p.params.model_dump(mode="json"))
    defaults = flatten(p.game.params(players=p.players).model_dump(mode="json"))
    changed = [f"{k} = {values[k]} (was {defaults.get(k)})" for k in sorted(values) if values[k] != defaults.get(k)]
    runs = []
    for specs in p.tables():
        d = p.run_dir(specs)
        m = RunDir(d).manifest
        runs.append({"path": str(d), "specs": specs, "games": m["n_games"], "run_id": m["run_id"],
                     "seed": m["seed"], "git_revision": m.get("git_revision") or "unknown"})
    return SkillAnalysis(p.game.name, p.game.title, p.players, p.n_games, values, changed,
                         ladder, depth, restricted, runs)
