"""Rule tuning: house rules that meet a designer's goals (position balance, game length,
how games end, closeness) with as few and as small changes from the rulebook as it can,
searched with optuna on common random numbers and confirmed on held-out seeds
(analysis.experiments.tune has the bot tuning and what both share)."""
from __future__ import annotations

import json
import re
import shlex
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from optuna.distributions import FloatDistribution, IntDistribution

import strategies
from analysis import stats
from analysis.display import Shown
from analysis.experiments.study import enqueue_baseline, exclusive, open_study, search, write_file, write_json
from analysis.experiments.tune import HOLDOUT_SALT, number, play, pool_of, rotation_games
from simcore.errors import UserError
from simcore.params import flatten, nest
from simcore.registry import get_game

__all__ = ["Goal", "GOAL_FORMS", "parse_goal", "tune_rules", "RuleTuning"]


# ---- goals of rule tuning ----

@dataclass(frozen=True)
class Goal:
    """A designer's goal: a metric of a set of games and the band it must fall in."""
    text: str
    metric: str  # position_balance | length | end_share | margin
    low: float
    high: float
    reason: str | None = None  # for end_share

    def loss(self, value: float) -> float:
        """How far the value is outside the band, in the band's own units (0 inside)."""
        return max(0.0, self.low - value, value - self.high)


_GOALS = (
    (re.compile(r"^position balance within ([\d.]+) (?:percentage )?points?$"), "position_balance"),
    (re.compile(r"^game length ([\d.]+)\s*\.\.\s*([\d.]+) turns$"), "length"),
    (re.compile(r"^(\w+) ends ([\d.]+)\s*\.\.\s*([\d.]+)%$"), "end_share"),
    (re.compile(r"^margin within ([\d.]+) (?:score )?points?$"), "margin"),
)
GOAL_FORMS = ('"position balance within X percentage points"', '"game length A..B turns"',
              '"REASON ends A..B%"', '"margin within X score points"')


def parse_goal(text: str) -> Goal:
    norm = " ".join(text.strip().lower().split())
    for pattern, metric in _GOALS:
        m = pattern.match(norm)
        if not m:
            continue
        g = m.groups()
        numbers = [float(number(x, f"--goal {text!r}")) for x in (g[1:] if metric == "end_share" else g)]
        if metric in ("position_balance", "margin"):
            # Said back in its units: a rate's in percentage points, a margin's in score points.
            unit = "percentage point" if metric == "position_balance" else "score point"
            said = f"{norm.split(' within ')[0]} within {numbers[0]:g} {unit}{'' if numbers[0] == 1 else 's'}"
            return Goal(said, metric, 0.0, numbers[0])
        low, high = numbers
        if low > high:
            raise UserError(f"--goal {text!r}: empty band ({low:g} > {high:g})")
        if metric == "end_share" and high > 100:
            raise UserError(f"--goal {text!r}: a share of games is 0..100%, not up to {high:g}%")
        return Goal(text, metric, low, high, g[0] if metric == "end_share" else None)
    raise UserError(f"--goal {text!r}: not understood; the forms are {', '.join(GOAL_FORMS)}")


# ---- rule tuning ----

@dataclass
class RuleTuning(Shown):
    game: str
    out: Path
    vary: dict[str, tuple[float, float]]
    defaults: dict[str, Any]
    goals: list[Goal]
    proposal: dict[str, Any]  # the changed params only
    search_losses: list[float]
    confirmed: list[dict[str, Any]]  # per goal: value, interval, met
    met: bool
    pareto: list[dict[str, Any]]
    trials: list[dict[str, Any]]
    refused: list[dict[str, Any]] = field(default_factory=list)
    ran: int = 0

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["out"] = str(self.out)
        d["goals"] = [asdict(g) for g in self.goals]
        return d


def _metrics(a: dict[str, np.ndarray], players: int, end_reasons: Sequence[str]) -> dict[str, Any]:
    """Per game: the samples each goal's metric is a mean (or a spread) of."""
    win = a["win"].reshape(-1, players).astype(np.float64)
    pos = a["position"].reshape(-1, players)
    by_pos = np.stack([win[pos == k] for k in range(players)])  # position x games
    score = a["score"].reshape(-1, players).astype(np.float64)
    rank = a["rank"].reshape(-1, players)
    sole = (rank == 1).sum(axis=1) == 1
    top = np.sort(score, axis=1)
    margin = (top[:, -1] - top[:, -2])[sole] if players > 1 else top[:, -1]
    return {"by_position": by_pos, "turns": a["turns"].astype(np.float64),
            "end": a["end_reason"], "margin": margin, "reasons": list(end_reasons)}


def _goal_value(goal: Goal, m: dict[str, Any], players: int) -> tuple[float, float, float]:
    """The goal's metric with a 95% interval (points for rates)."""
    if goal.metric == "position_balance":
        # The largest gap of a position's win rate from the fair share, in points; its
        # interval from the widest position interval (conservative).
        rates = [stats.rate(float(w.sum()), len(w)) for w in m["by_position"]]
        gaps = [100 * abs(r.value - 1 / players) for r in rates]
        worst = int(np.argmax(gaps))
        r = rates[worst]
        lo, hi = sorted((100 * abs(r.low - 1 / players), 100 * abs(r.high - 1 / players)))
        if r.low <= 1 / players <= r.high:
            lo = 0.0
        return gaps[worst], lo, hi
    if goal.metric == "length":
        t = m["turns"]
        return stats.mean_interval(len(t), float(t.sum()), float((t * t).sum()))
    if goal.metric == "margin":
        x = m["margin"]
        return stats.mean_interval(len(x), float(x.sum()), float((x * x).sum()))
    if goal.reason not in m["reasons"]:
        raise UserError(f"--goal {goal.text!r}: the game ends by {', '.join(m['reasons'])}, not {goal.reason!r}")
    hits = float((m["end"] == m["reasons"].index(goal.reason)).sum())
    r = stats.rate(hits, len(m["end"]))
    return 100 * r.value, 100 * r.low, 100 * r.high


def _change_cost(values: dict[str, Any], defaults: dict[str, Any],
                 vary: dict[str, tuple[float, float]]) -> float:
    """Number of params changed plus the changes' sizes as shares of their ranges: few
    and small changes from the rulebook cost least."""
    cost = 0.0
    for k, v in values.items():
        if v != defaults[k]:
            lo, hi = vary[k]
            cost += 1 + abs(v - defaults[k]) / (hi - lo)
    return cost


@exclusive
def tune_rules(game: str, seats: Sequence[str], vary: dict[str, tuple[float, float]],
               goals: Sequence[Goal], out: Path | str, *, trials: int = 40, games: int = 2000,
               holdout_games: int | None = None, seed: int = 0, jobs: int | None = None,
               rules: Path | None = None, sets: dict[str, Any] | None = None,
               quiet: bool = False, backend: str = "threads", scheduler: str | None = None) -> RuleTuning:
    """Search the params in `vary` for house rules meeting every goal, preferring few and
    small changes; the proposal is written as a TOML house rule (proposal.toml)."""
    spec = get_game(game)
    out = Path(out)
    if trials < 1 or games < 1:
        raise UserError(f"trials = {trials}, games = {games}: both must be at least 1")
    pool = pool_of(jobs, backend, scheduler)
    if not goals:
        raise UserError("rule tuning needs at least one --goal; the forms are " + ", ".join(GOAL_FORMS))
    seats = list(seats)
    base = spec.params(rules, sets, players=len(seats))
    strategies.build_lineup(game, seats)
    flat = flatten(base.model_dump(mode="json"))
    for name, (lo, hi) in vary.items():
        if name not in flat:
            raise UserError(f"--vary {name}: unknown param; `chocosim rules {game}` lists them")
        if isinstance(flat[name], bool) or not isinstance(flat[name], (int, float)):
            raise UserError(f"--vary {name}: its value {flat[name]!r} is not a number")
        if isinstance(flat[name], int) and not (isinstance(lo, int) and isinstance(hi, int)):
            raise UserError(f"--vary {name}={lo}..{hi}: {name} is a whole number; give whole bounds")
    defaults = {k: flat[k] for k in vary}
    holdout_games = holdout_games or 2 * games
    players = len(seats)
    n = rotation_games(games, players)
    end_reasons = list(type(spec.new_state(base)).END_REASONS)
    for g in goals:  # before the study is made: a bad goal leaves nothing to block the corrected command
        if g.metric == "end_share" and g.reason not in end_reasons:
            raise UserError(f"--goal {g.text!r}: the game ends by {', '.join(end_reasons)}, not {g.reason!r}")
    config = {"mode": "rules", "game": game, "seats": seats, "vary": {k: list(v) for k, v in vary.items()},
              "goals": [g.text for g in goals], "games": games, "seed": seed, "params": flat}
    study = open_study(out, ["minimize"] * (len(goals) + 1), config, seed)
    enqueue_baseline(study, defaults)

    distributions = {k: IntDistribution(int(lo), int(hi)) if isinstance(defaults[k], int)
                     else FloatDistribution(float(lo), float(hi)) for k, (lo, hi) in vary.items()}

    def evaluate_params(values: dict[str, Any], n_games: int, game_seed: int):
        try:
            params = spec.params(rules, {**(sets or {}), **values}, players=players)
        except UserError as e:
            return None, str(e)
        m = _metrics(play(spec, params, seats, n_games, game_seed, pool), players, end_reasons)
        return [_goal_value(g, m, players) for g in goals], None

    refused: list[dict[str, Any]] = []

    def losses(values: dict[str, Any]) -> list[float] | None:
        got, why = evaluate_params(values, n, seed)
        if got is None:
            refused.append({"params": values, "why": why})
            return None
        return [g.loss(v[0]) for g, v in zip(goals, got)] + [_change_cost(values, defaults, vary)]

    def best_text() -> str:
        met = [t for t in study.trials if t.values is not None and max(t.values[:-1]) == 0]
        return f"{len(met)} trial(s) meet every goal" if met else ""

    ran = search(study, trials, distributions, lambda trial: losses(trial.params), best_text, quiet, seed)
    completed = [t for t in study.trials if t.values is not None]
    met = [t for t in completed if max(t.values[:-1]) == 0]
    chosen = min(met, key=lambda t: t.values[-1]) if met else min(completed, key=lambda t: sum(t.values[:-1]))
    proposal = _simplify(dict(chosen.params), defaults, losses)
    confirmed_values, _ = evaluate_params(proposal, rotation_games(holdout_games, players), seed ^ HOLDOUT_SALT)
    confirmed = []
    for g, (value, low, high) in zip(goals, confirmed_values):
        sure = g.low <= low and high <= g.high
        confirmed.append({"goal": g.text, "value": value, "low": low, "high": high,
                          "band": [g.low, g.high], "met": g.loss(value) == 0, "sure": sure})
    changed = {k: v for k, v in proposal.items() if v != defaults[k]}
    tuning = RuleTuning(
        game=game, out=out, vary=vary, defaults=defaults, goals=list(goals), proposal=changed,
        search_losses=list(chosen.values[:-1]), confirmed=confirmed,
        met=all(c["met"] for c in confirmed),
        pareto=[{"number": t.number, "params": t.params, "values": t.values} for t in study.best_trials],
        trials=[{"number": t.number, "params": t.params, "values": t.values} for t in completed],
        refused=refused, ran=ran)
    command = _command(game, seats, vary, goals, trials=trials, games=games, holdout_games=holdout_games,
                       seed=seed, rules=rules, sets=sets)
    write_file(out / "proposal.toml", _toml(changed, game, goals, command))
    write_json(out / "holdout.json", tuning.to_json())
    return tuning


def _simplify(values: dict[str, Any], defaults: dict[str, Any],
              losses: Callable[[dict[str, Any]], list[float] | None]) -> dict[str, Any]:
    """Put back the rulebook value of each changed param whose change the goals do not
    need (on the search seeds): the fewest changes that still meet what the search met."""
    current = losses(values)
    if current is None:
        return values
    for name in sorted(values, key=lambda k: values[k] == defaults[k]):
        if values[name] == defaults[name]:
            continue
        trial = {**values, name: defaults[name]}
        got = losses(trial)
        if got is not None and sum(got[:-1]) <= sum(current[:-1]):
            values, current = trial, got
    return values


def _command(game: str, seats: Sequence[str], vary: dict[str, tuple[float, float]], goals: Sequence[Goal], *,
             trials: int, games: int, holdout_games: int, seed: int, rules: Path | None,
             sets: dict[str, Any] | None) -> str:
    """The `chocosim tune` command that searches these rules (the proposal names it)."""
    words = ["chocosim", "tune", game]
    words += [w for name, (low, high) in vary.items() for w in ("--vary", f"{name}={low:g}..{high:g}")]
    words += [w for g in goals for w in ("--goal", g.text)]
    words += ["--seats", ",".join(seats), "--trials", str(trials), "--games", str(games),
              "--holdout-games", str(holdout_games), "--seed", str(seed)]
    if rules is not None:
        words += ["--rules", str(rules)]
    words += [w for k, v in (sets or {}).items() for w in ("--set", f"{k}={json.dumps(v)}")]
    return shlex.join(words)


def _toml(changed: dict[str, Any], game: str, goals: Sequence[Goal], command: str) -> str:
    lines = [f"# A house rule for {game} proposed by", f"#   {command}", "# for the goals:"]
    lines += [f"#   {g.text}" for g in goals]
    if not changed:
        lines.append("# The rulebook values already meet the goals: nothing to change.")

    def emit(tree: dict[str, Any], prefix: str) -> None:
        plain = {k: v for k, v in tree.items() if not isinstance(v, dict)}
        if prefix and plain:
            lines.append(f"[{prefix}]")
        for k, v in plain.items():
            lines.append(f"{k} = {json.dumps(v)}")
        for k, v in tree.items():
            if isinstance(v, dict):
                emit(v, f"{prefix}.{k}" if prefix else k)

    emit(nest(changed), "")
    text = "\n".join(lines) + "\n"
    tomllib.loads(text)  # what we write must read back as a house rule
    return text


