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

import contextlib
import functools
import inspect
import json
import math
import os
import re
import sqlite3
import tomllib
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import Any

import numpy as np
import optuna
from optuna.distributions import FloatDistribution, IntDistribution
from optuna.exceptions import StorageInternalError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from scipy import stats as sps
from sqlalchemy.exc import SQLAlchemyError

import strategies
from analysis import stats
from simcore.errors import UserError
from simcore.inmemory import play_in_memory
from simcore.params import flatten, nest
from simcore.parts import write_text
from simcore.registry import GameSpec, get_game
from simcore.runner import BACKENDS

__all__ = ["WeightRange", "weight_space", "Goal", "parse_goal", "parse_vary", "play",
           "tune_bot", "tune_rules", "BotTuning", "RuleTuning", "HOLDOUT_SALT",
           "validate", "weights_record"]

STUDY_DB = "study.db"
CONFIG = "config.json"
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


def _number(text: str, what: str) -> int | float:
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
        lo, hi = _number(low.strip(), f"--vary {item}"), _number(high.strip(), f"--vary {item}")
        if not lo < hi:
            raise UserError(f"--vary {item!r}: empty range (LOW must be below HIGH)")
        out[name.strip()] = (lo, hi)
    if not out:
        raise UserError("rule tuning needs at least one --vary NAME=LOW..HIGH")
    return out


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
    (re.compile(r"^position balance within ([\d.]+) points?$"), "position_balance"),
    (re.compile(r"^game length ([\d.]+)\s*\.\.\s*([\d.]+) turns$"), "length"),
    (re.compile(r"^(\w+) ends ([\d.]+)\s*\.\.\s*([\d.]+)%$"), "end_share"),
    (re.compile(r"^margin within ([\d.]+) points?$"), "margin"),
)
GOAL_FORMS = ('"position balance within X points"', '"game length A..B turns"',
              '"REASON ends A..B%"', '"margin within X points"')


def parse_goal(text: str) -> Goal:
    norm = " ".join(text.strip().lower().split())
    for pattern, metric in _GOALS:
        m = pattern.match(norm)
        if not m:
            continue
        g = m.groups()
        numbers = [float(_number(x, f"--goal {text!r}")) for x in (g[1:] if metric == "end_share" else g)]
        if metric in ("position_balance", "margin"):
            return Goal(text, metric, 0.0, numbers[0])
        low, high = numbers
        if low > high:
            raise UserError(f"--goal {text!r}: empty band ({low:g} > {high:g})")
        if metric == "end_share" and high > 100:
            raise UserError(f"--goal {text!r}: a share of games is 0..100%, not up to {high:g}%")
        return Goal(text, metric, low, high, g[0] if metric == "end_share" else None)
    raise UserError(f"--goal {text!r}: not understood; the forms are {', '.join(GOAL_FORMS)}")


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


def _pool(jobs: int | None, backend: str, scheduler: str | None) -> Pool:
    if backend not in BACKENDS:
        raise UserError(f"backend = {backend!r}: allowed are {', '.join(BACKENDS)}")
    if (backend == "dask") != (scheduler is not None):
        raise UserError("a dask scheduler address goes with backend 'dask' and only with it "
                        f"(backend = {backend!r}, scheduler = {scheduler!r})")
    return Pool(jobs, backend, scheduler)


def _rotation_games(n_games: int, players: int) -> int:
    """n_games rounded up to whole rotations, so every seat order is played equally."""
    r = math.factorial(players)
    return max(r, math.ceil(n_games / r) * r)


def _seat_wins(a: dict[str, np.ndarray], players: int, strategy: int) -> np.ndarray:
    """Per game, the win share of the seat held by strategy index `strategy`."""
    who = a["seat_strategy"].reshape(-1, players)
    return a["win"].reshape(-1, players)[who == strategy].astype(np.float64)


# ---- the study ----

def _study(out: Path, directions: list[str], config: dict[str, Any], seed: int):
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    out.mkdir(parents=True, exist_ok=True)
    path = out / CONFIG
    if path.exists():
        try:
            old = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise UserError(f"tuning directory {out}: {CONFIG} is unreadable ({e})") from None
        diffs = [k for k in sorted(config.keys() | old.keys()) if k != "trials" and old.get(k) != config.get(k)]
        if diffs:
            raise UserError(f"tuning directory {out} holds a different tuning (it differs in "
                            f"{', '.join(diffs)}); choose another --out")
    elif any(out.iterdir()):
        raise UserError(f"output directory {out} is not empty and holds no tuning ({CONFIG}); choose another --out")
    storage = f"sqlite:///{(out / STUDY_DB).resolve()}"
    study = optuna.create_study(storage=storage, study_name="chocosim", directions=directions,
                                sampler=_sampler(seed, 0), load_if_exists=True)
    _write_text(path, json.dumps(config, indent=2) + "\n")
    return study


def _sampler(seed: int, finished: int):
    """The sampler that proposes the trial after `finished` finished ones: TPE seeded
    from (seed, finished). TPE reads the finished trials from the storage and keeps
    only its random state: seeded per trial, a resumed study proposes what the
    uninterrupted one would have (seeded once per start, it proposed other trials)."""
    trial_seed = int(np.random.SeedSequence([seed, finished]).generate_state(1)[0])
    return optuna.samplers.TPESampler(seed=trial_seed, multivariate=True)


def _enqueue_baseline(study, params: dict[str, Any]) -> None:
    """Make `params` the first trial of a study that has none finished or waiting (also
    when the first run was interrupted during it)."""
    held = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED, optuna.trial.TrialState.WAITING)
    if not any(t.state in held for t in study.get_trials(deepcopy=False)):
        study.enqueue_trial(params)


def _exclusive(tune: Callable[..., Any]) -> Callable[..., Any]:
    """Hold the tuning directory (its `out` argument) for the whole of `tune`: a second
    tune into it is refused in one line (two at once ran twice the trials, or one died
    in SQLite). An flock on the directory itself: the kernel drops it with the process
    (a killed tune leaves no stale lock), and it adds no file to the directory."""
    signature = inspect.signature(tune)

    @functools.wraps(tune)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            import fcntl
        except ImportError:  # not on Windows: unlocked there
            return tune(*args, **kwargs)
        out = Path(signature.bind(*args, **kwargs).arguments["out"])
        made = not out.exists()
        try:
            out.mkdir(parents=True, exist_ok=True)
            fd = os.open(out, os.O_RDONLY)
        except OSError as e:
            raise UserError(f"cannot use {out} as the tuning directory: {e.strerror or e}") from None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise UserError(f"tuning directory {out} is in use by another tune; wait for it to "
                                "finish (then run this command to continue it) or choose another --out") from None
            with _storage_errors(out):
                return tune(*args, **kwargs)
        except BaseException:
            if made and not any(out.iterdir()):  # refused before the study began: leave no trace
                out.rmdir()
            raise
        finally:
            os.close(fd)  # and with it the lock

    return wrapper


@contextlib.contextmanager
def _storage_errors(out: Path) -> Iterator[None]:
    """The study's SQLite database failing (a full or read-only disk) as one line: SQLite
    commits a trial whole or not at all, so every finished trial is kept."""


    try:
        yield
    except (SQLAlchemyError, StorageInternalError, sqlite3.Error) as e:
        cause: BaseException | None = e
        while cause is not None and not isinstance(cause, sqlite3.Error):
            # SQLAlchemy keeps the driver's error as .orig; optuna chains it.
            cause = getattr(cause, "orig", None) or cause.__cause__ or cause.__context__
        reason = str(cause or e).splitlines()[0]
        raise UserError(f"cannot write the study {out / STUDY_DB}: {reason}; the finished trials are kept: "
                        "free some space (or make it writable) and run the same command again") from None


def _finished(study) -> int:
    return sum(t.state in (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED)
               for t in study.get_trials(deepcopy=False))


def _search(study, trials: int, distributions: dict[str, Any],
            evaluate: Callable[[Any], Sequence[float] | None],
            describe_best: Callable[[], str], quiet: bool, seed: int = 0) -> int:
    """Ask, evaluate and tell until the study holds `trials` finished trials; returns how
    many this call ran. Each trial's sampler is seeded from `seed` and the number of
    trials finished before it (see _sampler). `evaluate` gets the optuna trial (its params, and user attributes
    to record); returning None marks a candidate the game refuses (pruned). Ctrl-C marks the running trial failed and propagates: the finished ones
    stay in the storage for the next run."""
    done = _finished(study)
    todo = max(0, trials - done)
    console = Console(stderr=True)
    columns = (TextColumn("trials"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
               TextColumn("{task.description}"))
    with Progress(*columns, console=console, disable=quiet or not console.is_terminal) as bar:
        task = bar.add_task(describe_best(), total=trials, completed=done)
        for k in range(todo):
            study.sampler = _sampler(seed, done + k)  # every trial before it finished
            trial = study.ask(distributions)
            try:
                values = evaluate(trial)
            except BaseException:
                study.tell(trial, state=optuna.trial.TrialState.FAIL)
                raise
            if values is None:
                study.tell(trial, state=optuna.trial.TrialState.PRUNED)
            else:
                study.tell(trial, list(values))
            bar.update(task, advance=1, description=describe_best())
    return todo


def _importances(study) -> dict[str, float]:
    """optuna's parameter importances (its default evaluator); none when too few trials
    finished or the objective never varied, where they would mean nothing."""


    values = [t.value for t in study.trials if t.value is not None]
    if len(values) < 8 or len(set(values)) < 2:
        return {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dict(optuna.importance.get_param_importances(study))


# ---- bot tuning ----

@dataclass
class BotTuning:
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
        a = play(game, params_of(p), table, _rotation_games(n_games, p), seed, pool)
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


@_exclusive
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
    pool = _pool(jobs, backend, scheduler)
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
    study = _study(out, ["maximize"], config, seed)
    _enqueue_baseline(study, {k: defaults[k] for k in space})  # the default is candidate 0

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

    ran = _search(study, trials, distributions, evaluate, best_text, quiet, seed)
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
        importances=_importances(study), ran=ran, **result)
    _write_json(out / "best.json", weights_record(game, bot, {k: best[k] for k in defaults}, tuning.holdout))
    _write_json(out / "holdout.json", tuning.to_json())
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
        a = play(spec, params[p], [tuned] + [default] * (p - 1), _rotation_games(n_games, p), seed, pool)
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


# ---- rule tuning ----

@dataclass
class RuleTuning:
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


@_exclusive
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
    pool = _pool(jobs, backend, scheduler)
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
    n = _rotation_games(games, players)
    end_reasons = list(type(spec.new_state(base)).END_REASONS)
    for g in goals:  # before the study is made: a bad goal leaves nothing to block the corrected command
        if g.metric == "end_share" and g.reason not in end_reasons:
            raise UserError(f"--goal {g.text!r}: the game ends by {', '.join(end_reasons)}, not {g.reason!r}")
    config = {"mode": "rules", "game": game, "seats": seats, "vary": {k: list(v) for k, v in vary.items()},
              "goals": [g.text for g in goals], "games": games, "seed": seed, "params": flat}
    study = _study(out, ["minimize"] * (len(goals) + 1), config, seed)
    _enqueue_baseline(study, defaults)

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

    ran = _search(study, trials, distributions, lambda trial: losses(trial.params), best_text, quiet, seed)
    completed = [t for t in study.trials if t.values is not None]
    met = [t for t in completed if max(t.values[:-1]) == 0]
    chosen = min(met, key=lambda t: t.values[-1]) if met else min(completed, key=lambda t: sum(t.values[:-1]))
    proposal = _simplify(dict(chosen.params), defaults, losses)
    confirmed_values, _ = evaluate_params(proposal, _rotation_games(holdout_games, players), seed ^ HOLDOUT_SALT)
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
    _write_text(out / "proposal.toml", _toml(changed, game, goals))
    _write_json(out / "holdout.json", tuning.to_json())
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


def _toml(changed: dict[str, Any], game: str, goals: Sequence[Goal]) -> str:
    lines = [f"# A house rule for {game} proposed by `chocosim tune --rules` for:"]
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


def _write_text(path: Path, text: str) -> None:
    try:
        write_text(path, text)
    except OSError as e:
        raise UserError(f"cannot write {path}: {e.strerror}") from None


def _write_json(path: Path, data: Any) -> None:
    _write_text(path, json.dumps(data, indent=2, default=float) + "\n")
