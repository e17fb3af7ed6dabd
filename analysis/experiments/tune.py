"""`chocosim tune`: search a heuristic's weights, or a game's params, with optuna.

Bot tuning maximises a bot's edge over its fair share against a field of opponents
(seats rotated, at the table sizes asked for). Rule tuning searches house rules that meet
a designer's goals (position balance, game length, how games end, closeness) with as few
and as small changes from the rulebook as it can. Both
- evaluate every candidate on the same game seeds (common random numbers), so candidates
  differ by what they are, not by the luck of their deals;
- keep the study in optuna's SQLite storage in the output directory, so re-running the
  command continues it, and an interrupted run keeps every finished trial; the sampler
  of each trial is seeded from the seed and the number of trials finished before it, so
  a resumed study is the uninterrupted one, and one tune at a time holds the directory;
- confirm the winner on fresh seeds never used in the search (the best of many noisy
  candidates looks better than it is: the winner's curse), and report that figure.

Games are played in memory (simcore.inmemory), so game i of an evaluation always has the
seed f(seed, i), whatever the number of jobs.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import Any

import numpy as np
from optuna.distributions import FloatDistribution
from scipy import stats as sps

import strategies
from analysis import stats
from analysis.display import Shown
from analysis.experiments.study import enqueue_baseline, exclusive, importances_of, open_study, search, write_json
from simcore.errors import UserError
from simcore.inmemory import play_in_memory
from simcore.params import flatten
from simcore.registry import GameSpec, get_game
from simcore.runner import BACKENDS

__all__ = ["WeightRange", "weight_space", "parse_vary", "number", "play", "Pool", "pool_of", "rotation_games",
           "tune_bot", "BotTuning", "HOLDOUT_SALT", "validate", "weights_record"]

# The held-out seed is the search seed mixed with this: never a seed the search used.
HOLDOUT_SALT = 0x5EED_0F_F0_0D_C0FFEE


# ---- search spaces ----

@dataclass(frozen=True)
class WeightRange:
    low: float
    high: float
    log: bool = False

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high


def weight_space(game: str, bot: str, names: Sequence[str] | None = None) -> tuple[dict[str, WeightRange], dict[str, float]]:
    """The declared ranges (WEIGHT_RANGES of the strategy class) of the weights to tune,
    and every weight's default."""
    cls = strategies.resolve(game, bot)
    defaults = dict(cls.WEIGHTS)
    if not defaults:
        raise UserError(f"strategy {bot!r} has no weights to tune")
    declared = getattr(cls, "WEIGHT_RANGES", {})
    chosen = list(names) if names else list(declared)
    if not chosen:
        raise UserError(f"strategy {bot!r} declares no weight ranges (WEIGHT_RANGES); nothing to tune")
    space = {}
    for name in chosen:
        if name not in defaults:
            raise UserError(f"unknown weight {name!r} of {bot}; its weights: {', '.join(defaults)}")
        if name not in declared:
            raise UserError(f"weight {name!r} of {bot} declares no range to tune it in")
        low, high, scale = declared[name]
        space[name] = WeightRange(float(low), float(high), scale == "log")
    return space, {k: float(v) for k, v in defaults.items()}


def number(text: str, what: str) -> int | float:
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            raise UserError(f"{what}: {text!r} is not a number") from None


def parse_vary(items: Sequence[str]) -> dict[str, tuple[int | float, int | float]]:
    """`NAME=LOW..HIGH` (integers give an integer range) into {name: (low, high)}."""
    out = {}
    for item in items:
        name, sep, rng = item.partition("=")
        low, dots, high = rng.partition("..")
        if not sep or not dots or not name.strip():
            raise UserError(f"--vary {item!r}: expected NAME=LOW..HIGH, e.g. rounds=3..6")
        lo, hi = number(low.strip(), f"--vary {item}"), number(high.strip(), f"--vary {item}")
        if not lo < hi:
            raise UserError(f"--vary {item!r}: empty range (LOW must be below HIGH)")
        out[name.strip()] = (lo, hi)
    if not out:
        raise UserError("rule tuning needs at least one --vary NAME=LOW..HIGH")
    return out


# ---- playing ----

@dataclass(frozen=True)
class Pool:
    """Where candidates' games are played: `jobs` chunks at once on the runner's backend
    (threads: the loop releases the GIL; processes; or a dask cluster at `scheduler`)."""
    jobs: int | None = None
    backend: str = "threads"
    scheduler: str | None = None


def play(game: GameSpec, params: Any, specs: Sequence[str], n_games: int, seed: int,
         pool: Pool = Pool()) -> dict[str, np.ndarray]:
    """Games [0, n_games) of the lineup `specs` (seats rotated) with run seed `seed`,
    played in memory; the result arrays of simcore.batch, whole."""
    lineup = functools.partial(strategies.build_lineup, game.name, list(specs))
    return play_in_memory(game, params, lineup, n_games, seed,
                          jobs=pool.jobs, backend=pool.backend, scheduler=pool.scheduler)


def pool_of(jobs: int | None, backend: str, scheduler: str | None) -> Pool:
    if backend not in BACKENDS:
        raise UserError(f"backend = {backend!r}: allowed are {', '.join(BACKENDS)}")
    if (backend == "dask") != (scheduler is not None):
        raise UserError("a dask scheduler address goes with backend 'dask' and only with it "
                        f"(backend = {backend!r}, scheduler = {scheduler!r})")
    return Pool(jobs, backend, scheduler)


def rotation_games(n_games: int, players: int) -> int:
    """n_games rounded up to whole rotations, so every seat order is played equally."""
    r = math.factorial(players)
    return max(r, math.ceil(n_games / r) * r)


def _seat_wins(a: dict[str, np.ndarray], players: int, strategy: int) -> np.ndarray:
    """Per game, the win share of the seat held by strategy index `strategy`."""
    who = a["seat_strategy"].reshape(-1, players)
    return a["win"].reshape(-1, players)[who == strategy].astype(np.float64)


# ---- bot tuning ----

@dataclass
class BotTuning(Shown):
    game: str
    bot: str
    out: Path
    space: dict[str, WeightRange]
    defaults: dict[str, float]
    best: dict[str, float]  # every weight: the tuned ones and the rest at their defaults
    best_value: float  # search objective of the best trial (optimistic: winner's curse)
    trials: list[dict[str, Any]]  # number, value, params
    importances: dict[str, float]
    holdout: list[dict[str, Any]]  # per table size: head-to-head against the default
    field: dict[str, Any]  # tuned vs default against the field, paired, held out
    better: bool
    ran: int = 0

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["out"] = str(self.out)
        d["space"] = {k: asdict(v) for k, v in self.space.items()}
        return d


def _spec(bot: str, weights: dict[str, float]) -> str:
    return f"{bot}(" + ", ".join(f"{k}={v!r}" for k, v in weights.items()) + ")"


def _field_tables(candidate: str, field: Sequence[str], players: Sequence[int]) -> list[list[str]]:
    """The candidate in one seat and one opponent spec in all the others, per opponent and
    table size."""
    return [[candidate] + [opp] * (p - 1) for p in players for opp in field]


def _field_wins(game: GameSpec, params_of: Callable[[int], Any], candidate: str,
                field: Sequence[str], players: Sequence[int], n_games: int, seed: int,
                pool: Pool) -> list[np.ndarray]:
    """Per table of _field_tables, the candidate's win share in each game."""
    out = []
    for table in _field_tables(candidate, field, players):
        p = len(table)
        a = play(game, params_of(p), table, rotation_games(n_games, p), seed, pool)
        out.append(_seat_wins(a, p, 0))
    return out


def _edge(wins: list[np.ndarray], sizes: list[int]) -> float:
    """Mean over tables of the win share above the fair share 1/players."""
    return float(np.mean([w.mean() - 1 / p for w, p in zip(wins, sizes)]))


def _check_field(game: str, field: Sequence[str]) -> list[str]:
    field = [s.strip() for s in field if s.strip()]
    if not field:
        raise UserError("--against needs at least one opponent (a spec, or 'self')")
    for spec in field:
        if spec != "self":
            strategies.build(game, spec)  # an unknown bot or weight is one line here
    return field


@exclusive
def tune_bot(game: str, bot: str, field: Sequence[str], out: Path | str, *, trials: int = 40,
             games: int = 2000, weights: Sequence[str] | None = None,
             players: Sequence[int] | None = None, holdout_games: int | None = None,
             seed: int = 0, jobs: int | None = None, rules: Path | None = None,
             sets: dict[str, Any] | None = None, quiet: bool = False, backend: str = "threads",
             scheduler: str | None = None) -> BotTuning:
    """Search `bot`'s weights to maximise its edge over its fair share against `field`
    ("self": the best weights found so far, updated every league round)."""
    spec = get_game(game)
    out = Path(out)
    if trials < 1 or games < 1:
        raise UserError(f"trials = {trials}, games = {games}: both must be at least 1")
    pool = pool_of(jobs, backend, scheduler)
    space, defaults = weight_space(game, bot, weights)
    field = _check_field(game, field)
    sizes = sorted(set(players or [spec.players[0] if spec.players[0] > 1 else spec.players[1]]))
    for p in sizes:
        spec.params(rules, sets, players=p)  # refuses a table size the game does not allow
    params = {p: spec.params(rules, sets, players=p) for p in sizes}
    holdout_games = holdout_games or 2 * games
    config = {"mode": "bot", "game": game, "bot": bot, "field": field, "games": games,
              "weights": sorted(space), "players": sizes, "seed": seed,
              "params": {str(p): flatten(params[p].model_dump(mode="json")) for p in sizes}}
    study = open_study(out, ["maximize"], config, seed)
    enqueue_baseline(study, {k: defaults[k] for k in space})  # the default is candidate 0

    distributions = {k: FloatDistribution(r.low, r.high, log=r.log) for k, r in space.items()}
    league = "self" in field
    league_round = max(5, trials // 5)

    def opponents() -> list[str]:
        # In a league the "self" seat is the best so far, fixed for a round of trials so
        # that the candidates of a round are compared against the same opponent.
        if not league:
            return field
        completed = [t for t in study.trials if t.value is not None]
        finished = len(completed) - len(completed) % league_round
        champion = max(completed[:finished], key=lambda t: t.value, default=None)
        best = {**defaults, **(champion.params if champion else {})}
        return [_spec(bot, best) if s == "self" else s for s in field]

    def evaluate(trial) -> list[float]:
        candidate, field_now = _spec(bot, {**defaults, **trial.params}), opponents()
        trial.set_user_attr("field", field_now)
        wins = _field_wins(spec, params.get, candidate, field_now, sizes, games, seed, pool)
        return [_edge(wins, [len(t) for t in _field_tables(candidate, field_now, sizes)])]

    def best_text() -> str:
        done = [t for t in study.trials if t.value is not None]
        if not done:
            return ""
        b = max(done, key=lambda t: t.value)
        return f"best edge {100 * b.value:+.2f} points (trial {b.number})"

    ran = search(study, trials, distributions, evaluate, best_text, quiet, seed)
    completed = [t for t in study.trials if t.value is not None]
    if league:
        # Values of different league rounds were measured against different opponents:
        # the best is taken from the last round.
        last = completed[-(len(completed) % league_round or league_round):]
        best_trial = max(last, key=lambda t: t.value)
    else:
        best_trial = max(completed, key=lambda t: t.value)
    best = {**defaults, **best_trial.params}
    result = _confirm_bot(spec, params, bot, best, defaults, field, sizes, holdout_games,
                          seed ^ HOLDOUT_SALT, pool)
    tuning = BotTuning(
        game=game, bot=bot, out=out, space=space, defaults=defaults, best=best,
        best_value=float(best_trial.value),
        trials=[{"number": t.number, "value": t.value, "params": t.params,
                 "field": t.user_attrs.get("field")} for t in completed],
        importances=importances_of(study), ran=ran, **result)
    write_json(out / "best.json", weights_record(game, bot, {k: best[k] for k in defaults}, tuning.holdout))
    write_json(out / "holdout.json", tuning.to_json())
    return tuning


def weights_record(game: str, bot: str, weights: dict[str, float],
                   checks: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A weights file with its validation record: the held-out head-to-head `checks`
    (of `validate`), one entry per table size, where it held and where it did not."""
    keys = [f.name for f in dataclass_fields(strategies.Validation)]
    entries = tuple(strategies.Validation(**{k: h[k] for k in keys}) for h in checks)
    return strategies.WeightsFile(dict(weights), entries, game, bot).to_json()


def validate(spec: GameSpec, params: dict[int, Any], bot: str, weights: dict[str, float],
             defaults: dict[str, float], sizes: Sequence[int], n_games: int, seed: int,
             pool: Pool) -> list[dict[str, Any]]:
    """Per table size, held out: `bot` with `weights` in one seat and its default weights
    in every other (seats rotated, whole rotations), its win share against the fair
    share; `validated` where the whole 95% interval lies above it."""
    tuned, default = _spec(bot, weights), _spec(bot, defaults)
    out = []
    for p in sizes:
        a = play(spec, params[p], [tuned] + [default] * (p - 1), rotation_games(n_games, p), seed, pool)
        w = _seat_wins(a, p, 0)
        r = stats.rate_vs(float(w.sum()), len(w), 1 / p)
        check = strategies.Validation(players=p, against=bot, games=len(w), win=r.value, low=r.low,
                                      high=r.high, fair=1 / p, seed=seed)
        out.append({**asdict(check), "p_value": r.p_value, "validated": check.holds(bot)})
    return out


def _confirm_bot(spec: GameSpec, params: dict[int, Any], bot: str, best: dict[str, float],
                 defaults: dict[str, float], field: list[str], sizes: list[int],
                 n_games: int, seed: int, pool: Pool) -> dict[str, Any]:
    """The tuned bot on held-out seeds: head to head against the default weights (one
    tuned seat, the default in the others, against the fair share), and against the
    field, paired with the default bot in the same seat on the same games."""
    tuned, default = _spec(bot, best), _spec(bot, defaults)
    holdout = validate(spec, params, bot, best, defaults, sizes, n_games, seed, pool)
    # The field with "self" meaning the default: the tuned bot must beat the bot it replaces.
    opponents = [default if s == "self" else s for s in field]
    tables = _field_tables("x", opponents, sizes)
    w_tuned = _field_wins(spec, params.get, tuned, opponents, sizes, n_games, seed, pool)
    w_default = _field_wins(spec, params.get, default, opponents, sizes, n_games, seed, pool)
    per_table = []
    for t, wt, wd in zip(tables, w_tuned, w_default):
        d = paired_mean(wt - wd)
        per_table.append({"players": len(t), "opponent": t[1], "tuned": float(wt.mean()),
                          "default": float(wd.mean()), **d})
    diff = np.concatenate([wt - wd for wt, wd in zip(w_tuned, w_default)])
    better = all(h["validated"] for h in holdout)
    return {"holdout": holdout, "field": {"tables": per_table, **paired_mean(diff)}, "better": better}


def paired_mean(d: np.ndarray) -> dict[str, float]:
    """Mean of paired differences with its 95% t interval and the t test of zero."""
    n = len(d)
    mean = float(d.mean()) if n else math.nan
    if n < 2 or float(d.std(ddof=1)) == 0.0:
        return {"diff": mean, "low": mean, "high": mean, "p_value": 1.0 if mean == 0 else 0.0, "n": n}
    se = float(d.std(ddof=1)) / math.sqrt(n)
    half = float(sps.t.ppf(1 - stats.ALPHA / 2, n - 1)) * se
    p = float(2 * sps.t.sf(abs(mean) / se, n - 1))
    return {"diff": mean, "low": mean - half, "high": mean + half, "p_value": p, "n": n}
