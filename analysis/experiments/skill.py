"""Skill experiments: does skill matter in a game, and what depends on it?

- Skill ladder: bots of rising skill (rungs, weakest first) play a round robin of
  head-to-head runs, every pairing on the same seeds (common random numbers) with the
  seats rotated. Bradley-Terry ratings with 95% intervals, and the gap between the
  ladder's ends: "Does skill matter?".
- Balance by skill: the win rate by turn position in mirror matches at each rung, side
  by side; a shift against the lowest rung is a finding (Newcombe interval and score
  test, Benjamini-Hochberg over all shifts).
- Skill depth, a skill trace as Ludii's SkillTrace and TAG's SkillLadder draw it: a
  search bot at doubling budgets against itself at the budget below. Near 50% at every
  doubling, luck decides; well above 50% over many doublings, skill does.
- Restricted play (Jaffe et al., "Evaluating Competitive Game Balance with Restricted
  Play", AIIDE 2012): a bot that never takes one component plays its unrestricted self;
  the drop in its win share, paired game by game with a mirror match on the same seeds,
  is that component's importance.

Every run goes through simcore.runner.run into a run directory of its own under
<runs>/<game>/, so re-running the command resumes it. The analysis reads the results
tables back (one part at a time). "Ahead share" of bot a against bot b: over the pairs of
seats a and b held in a game, the share a finished ranked ahead (a tie counts 1/2); at
two players, a's win share. Statistics, plots and the template load only when they are
used: statsmodels alone takes seconds to import, which every CLI command would pay.
"""
from __future__ import annotations

import functools
import hashlib
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

import strategies
from analysis import progress, stats
from analysis.ratings import Matchups, Ratings, ahead_counts, bradley_terry
from analysis.rundir import open_run
from analysis.stats import ALPHA, ELO_PER_LOGIT, Difference, Rate
from simcore.errors import UserError
from simcore.params import Params
from simcore.registry import GameSpec, get_game
from simcore.runner import run

if TYPE_CHECKING:
    from simcore.state import GameState

__all__ = ["DEFAULT_RUNGS", "BUDGET", "FORBID", "Plan", "plan", "play", "RunTally", "tally", "HeadToHead",
           "head_to_head", "matchups_of", "PositionBalance", "Ladder", "analyze_ladder", "with_arg",
           "search_budget"]

# The default ladder, weakest first: the rungs the game has of these.
DEFAULT_RUNGS = ("random", "greedy", "heuristic", "mcts")
BUDGET = "iterations"  # the argument of a search bot's spec that skill depth doubles
FORBID = "forbid"  # the argument every strategy spec takes for restricted play

# ---- specs ----

def with_arg(spec: str, key: str, value: object) -> str:
    """`spec` with the argument key=value set (replacing one of that name)."""
    name, kwargs = strategies.parse_spec(spec)
    kwargs[key] = str(value)
    return f"{name}({', '.join(f'{k}={v}' for k, v in kwargs.items())})"


def search_budget(game: str, spec: str, players: int, option: str = "--depth") -> int:
    """The search budget of a spec at `players`: its BUDGET argument, else the bot's
    default (a whole number >= 1; `option` names the command's option in the error)."""
    name, kwargs = strategies.parse_spec(spec)
    cls = strategies.resolve(game, spec)
    # A bot whose default budget differs by game says so (mcts: default_budget).
    default = cls.default_budget(game, players) if hasattr(cls, "default_budget") else cls.WEIGHTS.get(BUDGET)
    value = kwargs.get(BUDGET, default)
    if value is None:
        raise UserError(f"{option} {spec!r}: {name} has no {BUDGET} budget to double")
    try:
        budget = float(value)
    except ValueError:
        budget = math.nan
    if not (budget >= 1 and budget == int(budget)):
        raise UserError(f"{option} {spec!r}: {BUDGET} = {value!r}, allowed is a whole number >= 1")
    return int(budget)


def _table(a: str, b: str, players: int) -> list[str]:
    """A head-to-head table of a and b, alternating seats (a one more at odd sizes)."""
    return [a if s % 2 == 0 else b for s in range(players)]


def _tables(a: str, b: str, players: int) -> list[list[str]]:
    """The tables of a pairing: at an odd table size, both ways round, so neither bot
    holds more seats overall."""
    return [_table(a, b, players)] + ([_table(b, a, players)] if players % 2 else [])


# ---- the plan: which runs, in which directories ----

@dataclass(frozen=True)
class Plan:
    game: GameSpec
    params: Params
    players: int
    n_games: int  # per run, a whole number of seat rotations
    seed: int
    runs_dir: Path
    rungs: list[str]
    depth: list[str]  # the search bot at budgets b, 2b, 4b...; empty without --depth
    restricted: str | None
    components: list[str]

    def run_dir(self, specs: Sequence[str]) -> Path:
        """One directory per table, named by its specs and size; a hash of the params,
        seed and specs joins the name when they are not the defaults (or the name was
        cut), so a house rule or another seed is a new run, not a clash."""
        slug = re.sub(r"[^\w.=-]+", "_", "-vs-".join(specs)).strip("_")
        name = f"{slug[:100]}-{self.n_games}"
        defaults = self.game.params(players=self.players)
        if self.params != defaults or self.seed != 0 or len(slug) > 100:
            key = json.dumps([self.params.model_dump(mode="json"), self.seed, list(specs)])
            name += "-" + hashlib.sha256(key.encode()).hexdigest()[:8]
        return self.runs_dir / self.game.name / name

    def pairings(self) -> list[tuple[str, str, list[list[str]]]]:
        return [(a, b, _tables(a, b, self.players))
                for i, a in enumerate(self.rungs) for b in self.rungs[i + 1:]]

    def mirror(self, spec: str) -> list[str]:
        return [spec] * self.players

    def steps(self) -> list[tuple[str, str, list[list[str]]]]:
        """Skill depth: each budget against the one below, the stronger first."""
        return [(strong, weak, _tables(strong, weak, self.players))
                for weak, strong in zip(self.depth, self.depth[1:])]

    def forbidden(self) -> list[tuple[str, list[str]]]:
        """Restricted play: (component, table) with the restricted bot in one seat."""
        assert self.restricted is not None
        return [(c, [with_arg(self.restricted, FORBID, c)] + [self.restricted] * (self.players - 1))
                for c in self.components]

    def tables(self) -> list[list[str]]:
        """Every table to play, each once."""
        out = [t for _, _, ts in self.pairings() for t in ts]
        out += [self.mirror(r) for r in self.rungs]
        out += [t for _, _, ts in self.steps() for t in ts]
        if self.restricted is not None:
            out.append(self.mirror(self.restricted))
            out += [t for _, t in self.forbidden()]
        unique: dict[tuple[str, ...], list[str]] = {}
        for t in out:
            unique.setdefault(tuple(t), t)
        return list(unique.values())


def _check_spec(state: GameState, game: str, spec: str, what: str) -> None:
    """Build the bot and bind it to the plan's game, so that a bot this game refuses
    (mcts(tuned=1) where no tuned weights ship) fails before any run is played."""
    try:
        strategies.build(game, spec).bind(state)
    except UserError as e:
        raise UserError(f"{what} {spec!r}: {e}") from None


def plan(game: str, n_games: int, runs_dir: Path | str, *, ladder: Sequence[str] | None = None,
         depth: str | None = None, doublings: int = 3, restricted: str | None = None,
         components: Sequence[str] | None = None, players: int | None = None, sets: dict[str, Any] | None = None,
         rules: Path | None = None, seed: int = 0) -> Plan:
    """Check every input and lay out the runs; nothing is played or written."""
    spec = get_game(game)
    if n_games < 1:
        raise UserError(f"games = {n_games}: must be at least 1")
    base = spec.params(rules, sets)
    table = players or getattr(base, "players", None) or spec.players[0]
    params = spec.params(rules, sets, players=table)
    if table < 2:
        raise UserError(f"players = {table}: skill is measured head to head, allowed is 2 or more")
    state = spec.new_state(params)
    rungs = list(ladder) if ladder is not None else [r for r in DEFAULT_RUNGS if r in strategies.available(game)]
    if len(rungs) < 2:
        raise UserError(f"ladder = {','.join(rungs)!r}: allowed is two or more strategy specs, weakest first")
    if len(set(rungs)) != len(rungs):
        raise UserError(f"ladder = {','.join(rungs)!r}: a rung is listed twice")
    for r in rungs:
        _check_spec(state, game, r, "ladder rung")
    budgets: list[str] = []
    if depth is not None:
        _check_spec(state, game, depth, "--depth")
        if doublings < 1:
            raise UserError(f"doublings = {doublings}: must be at least 1")
        b = search_budget(game, depth, table)
        budgets = [with_arg(depth, BUDGET, b * 2**k) for k in range(doublings + 1)]
        for s in budgets[1:]:  # the bot may bound its budget
            _check_spec(state, game, s, "--depth")
    forbid: list[str] = []
    if restricted is not None:
        _check_spec(state, game, restricted, "--restricted")
        if FORBID in strategies.parse_spec(restricted)[1]:
            raise UserError(f"--restricted {restricted!r}: give the bot without {FORBID}=; "
                            "restricted play forbids each component in turn")
        known = list(spec.new_state(params).component_names())
        if not known:
            raise UserError(f"--restricted: {game} names no components to forbid")
        forbid = list(components) if components is not None else known
        if unknown := [c for c in forbid if c not in known]:
            raise UserError(f"components = {','.join(unknown)!r}: {game} has {', '.join(known)}")
        if not forbid:
            raise UserError(f"components = '': allowed is one or more of {', '.join(known)}")
        for c in forbid:
            _check_spec(state, game, with_arg(restricted, FORBID, c), "--restricted")
    rotation = math.factorial(table)
    per_run = math.ceil(n_games / rotation) * rotation
    return Plan(spec, params, table, per_run, seed, Path(runs_dir), rungs, budgets,
                restricted, forbid)


def play(p: Plan, *, jobs: int | None = None, quiet: bool = False) -> int:
    """Play (or resume) every run of the plan; return the number of games played."""
    if not quiet:
        progress.expect(len(p.tables()) * p.n_games)
    played = 0
    for specs in p.tables():
        lineup = functools.partial(strategies.build_lineup, p.game.name, specs)
        played += run(p.game, p.params, specs, lineup, p.run_dir(specs), n_games=p.n_games,
                      seed=p.seed, jobs=jobs, quiet=quiet).played
    return played


# ---- reading run directories ----

@dataclass
class RunTally:
    """What the skill analysis needs of one run directory, read one part at a time.
    Per-game arrays are indexed by game index (NaN where a game is missing)."""

    path: Path
    manifest: dict[str, Any]
    players: int
    labels: list[str]  # the distinct specs of the strategy column, manifest order
    n_games: int
    games: int = 0  # games found
    ahead: np.ndarray = field(init=False)  # [i, j]: comparisons label i finished ahead of j
    pairs: np.ndarray = field(init=False)  # [i, j]: comparisons of label i with label j
    position_wins: np.ndarray = field(init=False)  # win shares by turn position
    position_games: np.ndarray = field(init=False)
    share: dict[tuple[int, int], np.ndarray] = field(init=False)  # i < j: i's ahead share per game
    seat: dict[int, np.ndarray] = field(init=False)  # label: the first seat it held per game (-1: none)
    seat_wins: np.ndarray = field(init=False)  # (n_games, players): win share of every seat
    # (n_games, k, k): per game, the comparisons in which label i finished ahead of j
    # (ratings.ahead_counts), so ratings can count the game, not the comparison, as the unit.
    ahead_game: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        k = len(self.labels)
        self.ahead, self.pairs = np.zeros((k, k)), np.zeros((k, k))
        self.position_wins = np.zeros(self.players)
        self.position_games = np.zeros(self.players)
        self.share = {(i, j): np.full(self.n_games, np.nan) for i in range(k) for j in range(i + 1, k)}
        self.seat = {i: np.full(self.n_games, -1, dtype=np.int8) for i in range(k)}
        self.seat_wins = np.full((self.n_games, self.players), np.nan)
        self.ahead_game = np.zeros((self.n_games, k, k))


_COLUMNS = ["game", "seat", "strategy", "rank", "win", "position"]


def tally(path: Path | str) -> RunTally:
    """Read a run directory: pairwise results, wins by turn position and per-game
    outcomes (what the paired comparisons need)."""
    path = Path(path)
    run = open_run(path, columns=_COLUMNS)
    t = RunTally(path, run.manifest, run.players, run.strategies, run.n_games)
    labels, n = t.labels, t.players
    for part in run.parts:
        df = run.read(part, _COLUMNS).sort("game", "seat")
        try:
            codes = df["strategy"].cast(pl.String).replace_strict(
                {s: i for i, s in enumerate(labels)}, return_dtype=pl.Int64)
        except (pl.exceptions.PolarsError, OSError) as e:
            raise UserError(f"results in {path} are unreadable or name strategies the manifest "
                            f"does not: {str(e).splitlines()[0]}") from None
        if len(df) % n:
            raise UserError(f"results in {path}: {part.name} does not hold {n} seats per game")
        game = df["game"].to_numpy()[::n]
        if game.size and (game.min() < 0 or game.max() >= t.n_games):
            raise UserError(f"results in {path}: game indices beyond the manifest's n_games")
        strat = codes.to_numpy().reshape(-1, n)
        rank = df["rank"].to_numpy().reshape(-1, n)
        win = df["win"].to_numpy().astype(np.float64).reshape(-1, n)
        position = df["position"].to_numpy().astype(np.int64).reshape(-1, n)
        t.games += len(game)
        np.add.at(t.position_wins, position.ravel(), win.ravel())
        np.add.at(t.position_games, position.ravel(), 1.0)
        t.seat_wins[game] = win
        _tally_pairs(t, game, strat, rank)
        for i, seat in t.seat.items():
            held = strat == i
            has = held.any(axis=1)
            seat[game[has]] = np.argmax(held, axis=1)[has]
    return t


def _tally_pairs(t: RunTally, game: np.ndarray, strat: np.ndarray, rank: np.ndarray) -> None:
    num = ahead_counts(strat, rank, len(t.labels))
    cnt = num + num.transpose(0, 2, 1)
    t.ahead += num.sum(axis=0)
    t.pairs += cnt.sum(axis=0)
    t.ahead_game[game] = num
    for (i, j), share in t.share.items():
        met = cnt[:, i, j] > 0
        share[game[met]] = num[met, i, j] / cnt[met, i, j]


def matchups_of(tallies: Sequence[RunTally], names: Sequence[str] | None = None) -> Matchups:
    """The head-to-head results of several runs added up onto `names` (default: every
    label, in order of appearance), with the game-level moments that give their ratings
    and shares intervals counting the game as the unit (see _game_moments)."""

    names = list(names) if names is not None else list(dict.fromkeys(s for t in tallies for s in t.labels))
    k = len(names)
    wins, games = np.zeros((k, k)), np.zeros((k, k))
    for t in tallies:
        at = [names.index(s) for s in t.labels]
        wins[np.ix_(at, at)] += t.ahead
        games[np.ix_(at, at)] += t.pairs
    return Matchups(names, wins, games, _game_moments(names, tallies))


def _game_moments(names: list[str], tallies: Sequence[RunTally], block: int = 50_000) -> np.ndarray:
    """Matchups.ahead_moments of several runs, a game being all the games of the
    same index: runs of one plan share their seeds, so game i of every run was dealt
    alike and their results are correlated (clustering independent games together
    stays valid, only a little less efficient). Summed block by block of game indices
    to bound memory."""
    k = len(names)
    moments = np.zeros((k * k, k * k))
    cols = []
    for t in tallies:
        at = np.array([names.index(s) for s in t.labels])
        cols.append((at[:, None] * k + at[None, :]).ravel())
    for start in range(0, max((t.n_games for t in tallies), default=0), block):
        total = np.zeros((block, k * k))
        for t, c in zip(tallies, cols):
            part = t.ahead_game[start:start + block]
            if len(part):  # a run of fewer games than the longest ends before this block
                total[:len(part), c] += part.reshape(len(part), -1)
        moments += total.T @ total
    return moments


# ---- statistics ----

@dataclass(frozen=True)
class HeadToHead:
    """Bot a against bot b over the games of their tables: a's ahead share (per game,
    tested against 50% with a Wilson interval over games) and its per-game values."""

    a: str
    b: str
    share: Rate
    per_game: np.ndarray  # a's ahead share in each game (NaN: a and b did not meet)

    @property
    def elo(self) -> tuple[float, float, float]:
        """The share as a rating difference, with its interval (a monotone transform)."""
        return tuple(_elo(x) for x in (self.share.value, self.share.low, self.share.high))


def _elo(share: float) -> float:
    if share <= 0 or share >= 1:
        return math.copysign(math.inf, share - 0.5)
    return ELO_PER_LOGIT * math.log(share / (1 - share))


def head_to_head(a: str, b: str, runs: Sequence[RunTally]) -> HeadToHead:
    """Pool a's ahead share against b over runs played on the same seeds (the tables of
    a pairing): a game's share is its mean over the runs where they met."""

    total = np.zeros(max(r.n_games for r in runs))
    count = np.zeros_like(total)
    for r in runs:
        i, j = r.labels.index(a), r.labels.index(b)
        share = r.share[min(i, j), max(i, j)]
        share = share if i < j else 1 - share
        seen = ~np.isnan(share)
        total[: len(share)][seen] += share[seen]
        count[: len(share)][seen] += 1
    per_game = np.divide(total, count, out=np.full_like(total, np.nan), where=count > 0)
    met = ~np.isnan(per_game)
    if not met.any():
        raise UserError(f"{a} and {b} never met in {', '.join(str(r.path) for r in runs)}")
    return HeadToHead(a, b, stats.rate_vs(float(per_game[met].sum()), int(met.sum()), 0.5), per_game)


@dataclass(frozen=True)
class PositionShift:
    rung: str
    position: int  # 0 acts first
    diff: Difference  # win rate at this position under `rung` minus under the lowest rung
    q_value: float

    @property
    def significant(self) -> bool:
        return self.q_value < ALPHA


@dataclass(frozen=True)
class PositionBalance:
    """Win rate by turn position in mirror matches at each rung (tested against the fair
    share), and each rung's shift from the lowest rung."""

    rungs: list[str]
    players: int
    win: list[list[Rate]]  # [rung][position]
    shifts: list[PositionShift]


@dataclass(frozen=True)
class Ladder:
    rungs: list[str]  # weakest first, as given
    pairs: list[HeadToHead]  # the round robin, the higher-listed rung as a
    pair_q: list[float]  # Benjamini-Hochberg over the pairs' tests of 50%
    matchups: Matchups
    ratings: Ratings | None  # None when the bots' meetings cannot rate them
    gap: HeadToHead  # the top rung against the bottom rung: does skill matter?
    balance: PositionBalance | None  # None without mirror matches of two rungs or more


def _position_balance(mirrors: dict[str, RunTally], players: int) -> PositionBalance | None:
    rungs = list(mirrors)
    if len(rungs) < 2:
        return None
    win = [[stats.rate_vs(t.position_wins[p], int(t.position_games[p]), 1 / players)
            for p in range(players)] for t in mirrors.values()]
    base = win[0]
    tests = []
    # The last position's share is what the others leave (shares of a game sum to 1),
    # so it is not tested again.
    for r in range(1, len(rungs)):
        for p in range(players - 1):
            a, b = win[r][p], base[p]
            tests.append((rungs[r], p, stats.difference(a.successes, a.n, b.successes, b.n)))
    q = stats.benjamini_hochberg(np.array([d.p_value for _, _, d in tests]))
    shifts = [PositionShift(r, p, d, float(qv)) for (r, p, d), qv in zip(tests, q, strict=True)]
    return PositionBalance(rungs, players, win, shifts)


def analyze_ladder(run_dirs: Sequence[Path | str], rungs: Sequence[str] | None = None) -> Ladder:
    """The skill ladder of any set of runs of one game (the skill command's, or a
    balance sweep's): head-to-head results pooled per pair of bots over every run where
    they met, Bradley-Terry ratings fitted to all of them, and the position balance of
    the runs where one bot held every seat. `rungs` orders the ladder, weakest first
    (default: by rating); the gap is measured between its ends."""

    tallies = [tally(d) for d in run_dirs]
    if len({t.manifest.get("game") for t in tallies}) > 1:
        raise UserError("a skill ladder needs runs of one game; these are of "
                        f"{', '.join(sorted({str(t.manifest.get('game')) for t in tallies}))}")
    m = matchups_of(tallies)
    names = m.names
    ratings = bradley_terry(m)
    if rungs is None:
        if ratings is None:
            raise UserError("these runs cannot rate their bots (too few of them met); give the rungs")
        rungs = [names[i] for i in np.argsort(ratings.elo)]
    rungs = list(rungs)
    if missing := [r for r in rungs if r not in names]:
        raise UserError(f"ladder rung(s) {', '.join(missing)} played in none of these runs")
    pairs = []
    for i, a in enumerate(rungs):
        for b in rungs[i + 1:]:
            met = [t for t in tallies if a in t.labels and b in t.labels]
            if met:
                pairs.append(head_to_head(b, a, met))
    ends = [t for t in tallies if rungs[0] in t.labels and rungs[-1] in t.labels]
    if not ends:
        raise UserError(f"the ladder's ends {rungs[-1]} and {rungs[0]} never met in these runs")
    gap = head_to_head(rungs[-1], rungs[0], ends)
    mirrors = {r: t for r in rungs for t in tallies if t.labels == [r]}
    players = {t.players for t in mirrors.values()}
    balance = _position_balance(mirrors, players.pop()) if len(players) == 1 else None
    pair_q = stats.benjamini_hochberg(np.array([h.share.p_value for h in pairs])).tolist()
    return Ladder(rungs, pairs, pair_q, m, ratings, gap, balance)
