"""Skill experiments (issue 14): does skill matter in a game, and what depends on it?

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

import base64
import functools
import hashlib
import io
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np
import polars as pl
import typer
from rich.console import Console

import strategies
from simcore.errors import UserError
from simcore.params import Params, flatten, parse_set
from simcore.registry import GameSpec, get_game
from simcore.parts import list_parts, read_part, write_text
from simcore.runner import MANIFEST, run

if TYPE_CHECKING:
    from analysis.stats import Difference, Matchups, Rate, Ratings

__all__ = ["DEFAULT_RUNGS", "BUDGET", "FORBID", "Plan", "plan", "play", "RunTally", "tally",
           "HeadToHead", "head_to_head", "matchups_of", "PositionBalance", "Ladder", "analyze_ladder",
           "Depth", "analyze_depth", "summed_excess", "Importance", "Restricted", "analyze_restricted",
           "SkillAnalysis", "analyze", "Finding", "findings", "ladder_findings", "depth_findings",
           "restricted_findings", "ladder_section", "render_html", "write_skill_report", "skill",
           "skill_command", "with_arg"]

# The default ladder, weakest first: the rungs the game has of these.
DEFAULT_RUNGS = ("random", "greedy", "heuristic", "mcts")
BUDGET = "iterations"  # the argument of a search bot's spec that skill depth doubles
FORBID = "forbid"  # the argument every strategy spec takes for restricted play
_TEMPLATE = "skill.html.j2"

_console = Console(stderr=True)


# ---- specs ----

def with_arg(spec: str, key: str, value: object) -> str:
    """`spec` with the argument key=value set (replacing one of that name)."""
    name, kwargs = strategies.parse_spec(spec)
    kwargs[key] = str(value)
    return f"{name}({', '.join(f'{k}={v}' for k, v in kwargs.items())})"


def _budget(game: str, spec: str) -> int:
    """The search budget of a spec: its BUDGET argument, else the bot's default."""
    name, kwargs = strategies.parse_spec(spec)
    cls = strategies.resolve(game, spec)
    value = kwargs.get(BUDGET, cls.WEIGHTS.get(BUDGET))
    if value is None:
        raise UserError(f"--depth {spec!r}: {name} has no {BUDGET} budget to double")
    try:
        budget = float(value)
    except ValueError:
        budget = math.nan
    if not (budget >= 1 and budget == int(budget)):
        raise UserError(f"--depth {spec!r}: {BUDGET} = {value!r}, allowed is a whole number >= 1")
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


def _check_spec(game: str, spec: str, what: str) -> None:
    try:
        strategies.build(game, spec)
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
    rungs = list(ladder) if ladder is not None else [r for r in DEFAULT_RUNGS if r in strategies.available(game)]
    if len(rungs) < 2:
        raise UserError(f"ladder = {','.join(rungs)!r}: allowed is two or more strategy specs, weakest first")
    if len(set(rungs)) != len(rungs):
        raise UserError(f"ladder = {','.join(rungs)!r}: a rung is listed twice")
    for r in rungs:
        _check_spec(game, r, "ladder rung")
    budgets: list[str] = []
    if depth is not None:
        _check_spec(game, depth, "--depth")
        if doublings < 1:
            raise UserError(f"doublings = {doublings}: must be at least 1")
        b = _budget(game, depth)
        budgets = [with_arg(depth, BUDGET, b * 2**k) for k in range(doublings + 1)]
        for s in budgets[1:]:  # the bot may bound its budget
            _check_spec(game, s, "--depth")
    forbid: list[str] = []
    if restricted is not None:
        _check_spec(game, restricted, "--restricted")
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
            _check_spec(game, with_arg(restricted, FORBID, c), "--restricted")
    rotation = math.factorial(table)
    per_run = math.ceil(n_games / rotation) * rotation
    return Plan(spec, params, table, per_run, seed, Path(runs_dir), rungs, budgets,
                restricted, forbid)


def play(p: Plan, *, jobs: int | None = None, quiet: bool = False) -> int:
    """Play (or resume) every run of the plan; return the number of games played."""
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
    # (stats.ahead_counts), so ratings can count the game, not the comparison, as the unit.
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


def _open(path: Path) -> tuple[RunTally, list[Path]]:
    """An empty tally of a run directory, and its parts."""
    if not path.is_dir():
        raise UserError(f"run directory {path} does not exist")
    try:
        manifest = json.loads((path / MANIFEST).read_text())
        labels = list(dict.fromkeys(str(s["spec"]) for s in manifest["strategies"]))
        t = RunTally(path, manifest, int(manifest["players"]), labels, int(manifest["n_games"]))
    except FileNotFoundError:
        raise UserError(f"{path} is not a run directory (no {MANIFEST})") from None
    except (OSError, ValueError, TypeError, KeyError) as e:
        raise UserError(f"run directory {path}: {MANIFEST} is unreadable or incomplete ({e})") from None
    return t, list_parts(path)


_COLUMNS = ["game", "seat", "strategy", "rank", "win", "position"]


def tally(path: Path | str) -> RunTally:
    """Read a run directory: pairwise results, wins by turn position and per-game
    outcomes (what the paired comparisons need)."""
    path = Path(path)
    t, parts = _open(path)
    labels, n = t.labels, t.players
    for part in parts:
        try:
            df = read_part(part, _COLUMNS).sort("game", "seat")
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
    from analysis import stats

    num = stats.ahead_counts(strat, rank, len(t.labels))
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
    from analysis import stats

    names = list(names) if names is not None else list(dict.fromkeys(s for t in tallies for s in t.labels))
    k = len(names)
    wins, games = np.zeros((k, k)), np.zeros((k, k))
    for t in tallies:
        at = [names.index(s) for s in t.labels]
        wins[np.ix_(at, at)] += t.ahead
        games[np.ix_(at, at)] += t.pairs
    return stats.Matchups(names, wins, games, _game_moments(names, tallies))


def _game_moments(names: list[str], tallies: Sequence[RunTally], block: int = 50_000) -> np.ndarray:
    """stats.Matchups.ahead_moments of several runs, a game being all the games of the
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
    from analysis.stats import ELO_PER_LOGIT

    if share <= 0 or share >= 1:
        return math.copysign(math.inf, share - 0.5)
    return ELO_PER_LOGIT * math.log(share / (1 - share))


def head_to_head(a: str, b: str, runs: Sequence[RunTally]) -> HeadToHead:
    """Pool a's ahead share against b over runs played on the same seeds (the tables of
    a pairing): a game's share is its mean over the runs where they met."""
    from analysis import stats

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
        from analysis.stats import ALPHA

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
    from analysis import stats

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
    from analysis import stats

    tallies = [tally(d) for d in run_dirs]
    if len({t.manifest.get("game") for t in tallies}) > 1:
        raise UserError("a skill ladder needs runs of one game; these are of "
                        f"{', '.join(sorted({str(t.manifest.get('game')) for t in tallies}))}")
    m = matchups_of(tallies)
    names = m.names
    ratings = stats.bradley_terry(m)
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


@dataclass(frozen=True)
class DepthStep:
    budget: int  # the stronger bot's budget (the weaker has half)
    h2h: HeadToHead
    q_value: float  # Benjamini-Hochberg over the doublings

    @property
    def significant(self) -> bool:
        from analysis.stats import ALPHA

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
    from analysis import stats

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
    from analysis import stats

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
        from analysis.stats import ALPHA

        return self.q_value < ALPHA


@dataclass(frozen=True)
class Restricted:
    bot: str
    players: int
    components: list[Importance]  # largest drop first


def _paired(d: np.ndarray) -> tuple[tuple[float, float, float], float]:
    """Mean of paired differences with its 95% t interval, and the two-sided t test of
    a zero mean (exact when every difference is the same)."""
    from scipy import stats as sps

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
    from analysis import stats

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
class SkillAnalysis:
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
        m = json.loads((d / MANIFEST).read_text())
        runs.append({"path": str(d), "specs": specs, "games": m["n_games"], "run_id": m["run_id"],
                     "seed": m["seed"], "git_revision": m.get("git_revision") or "unknown"})
    return SkillAnalysis(p.game.name, p.game.title, p.players, p.n_games, values, changed,
                         ladder, depth, restricted, runs)


# ---- findings ----

@dataclass(frozen=True)
class Finding:
    section: str  # the report section holding the evidence
    text: str


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def rate_text(r: Rate) -> str:
    return f"{pct(r.value)} (95% CI {100 * r.low:.1f}–{pct(r.high)})"


def points(v: float, low: float, high: float) -> str:
    return f"{100 * v:+.1f} points (95% CI {100 * low:+.1f} to {100 * high:+.1f})"


def pvalue(p: float) -> str:
    """As the balance report writes them: "< 0.001" below that, else three digits."""
    if not math.isfinite(p):
        return "n/a"
    return "< 0.001" if p < 1e-3 else f"{p:.3g}"


def elo_text(e: tuple[float, float, float]) -> str:
    return f"{e[0]:+.0f} Elo (95% CI {e[1]:+.0f} to {e[2]:+.0f})"


def position_name(p: int) -> str:
    return "acting first" if p == 0 else f"position {p + 1}"


def ladder_findings(ladder: Ladder) -> list[Finding]:
    from analysis.stats import ALPHA

    g, share = ladder.gap, ladder.gap.share
    out = []
    if share.p_value < ALPHA and share.value > 0.5:
        text = (f"Skill matters: {g.a} is ahead of {g.b} in {rate_text(share)} of their games, "
                f"{elo_text(g.elo)}.")
    elif share.p_value < ALPHA:
        text = (f"The ladder is upside down at its ends: {g.a} is ahead of {g.b} in only "
                f"{rate_text(share)} of their games.")
    else:
        text = (f"Skill does not show: {g.a} is ahead of {g.b} in {rate_text(share)} of their games, "
                "not significantly different from 50%: luck decides between these bots.")
    out.append(Finding("skill-ladder", text))
    for h, q in zip(ladder.pairs, ladder.pair_q, strict=True):
        # h.a is the rung listed higher: a significant share below 50% breaks the order.
        if q < ALPHA and h.share.value < 0.5:
            out.append(Finding("skill-ladder", f"Out of order: {h.a}, listed as stronger, is ahead of {h.b} "
                                               f"in only {rate_text(h.share)} of their games (q = {pvalue(q)})."))
    if ladder.balance is None:
        return out
    b = ladder.balance
    moved = [s for s in b.shifts if s.significant]
    for s in moved:
        r0, r1 = b.win[0][s.position], b.win[b.rungs.index(s.rung)][s.position]
        out.append(Finding("skill-balance", (
            f"The balance depends on skill: {position_name(s.position)} wins {pct(r1.value)} of {s.rung} "
            f"mirror matches against {pct(r0.value)} of {b.rungs[0]} ones, "
            f"{points(s.diff.value, s.diff.low, s.diff.high)}, q = {pvalue(s.q_value)}.")))
    if not moved:
        n = len(b.shifts)
        out.append(Finding("skill-balance", (
            "The position balance does not depend significantly on skill: no rung's win rates by position "
            f"differ from {b.rungs[0]}'s (Benjamini–Hochberg over {n} comparison{'s' if n > 1 else ''}).")))
    return out


def depth_findings(d: Depth) -> list[Finding]:
    if d.depth == 0:
        verdict = "the first doubling does not win significantly more than half its games: luck decides there"
    else:
        verdict = f"each of the first {d.depth} doublings wins significantly more than half its games"
    return [Finding("skill-depth", f"Skill depth {d.depth} of {len(d.steps)} doublings from {d.base}: "
                                   f"{verdict}; summed excess over 50% {points(*d.excess)}.")]


def restricted_findings(r: Restricted) -> list[Finding]:
    out = []
    for c in (c for c in r.components if c.significant):
        if c.drop[0] > 0:
            text = (f"{c.component} matters to {r.bot}: never taking it costs {points(*c.drop)} of win share "
                    f"(q = {pvalue(c.q_value)}).")
        else:
            text = (f"{r.bot} does better never taking {c.component}: "
                    f"{points(-c.drop[0], -c.drop[2], -c.drop[1])} of win share (q = {pvalue(c.q_value)}); "
                    "it overvalues it.")
        out.append(Finding("skill-restricted", text))
    if not out:
        out.append(Finding("skill-restricted", f"No component's removal changes {r.bot}'s win share "
                                               f"significantly ({len(r.components)} tested, Benjamini–Hochberg)."))
    return out


def findings(a: SkillAnalysis) -> list[Finding]:
    out = ladder_findings(a.ladder)
    if a.depth is not None:
        out += depth_findings(a.depth)
    if a.restricted is not None:
        out += restricted_findings(a.restricted)
    return out


# ---- figures ----

@dataclass(frozen=True)
class Figure:
    src: str  # data: URI of the SVG
    alt: str


def _figure(fig, alt: str) -> Figure:
    import matplotlib.pyplot as plt

    buf = io.StringIO()
    fig.tight_layout()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    return Figure("data:image/svg+xml;base64," + base64.b64encode(buf.getvalue().encode()).decode(), alt)


def _palette():
    import seaborn as sns

    return sns.color_palette("colorblind")


def _errors(values: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    return np.clip(np.vstack([values - low, high - values]), 0, None)


def balance_figure(b: PositionBalance) -> Figure:
    """Win rate by position, one group per position, one bar per rung."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import PercentFormatter

    from analysis import plots

    fig, ax = plt.subplots(figsize=(plots.WIDTH, 1.6 + 0.35 * b.players * len(b.rungs)))
    width = 0.8 / len(b.rungs)
    for r, rung in enumerate(b.rungs):
        rates = b.win[r]
        y = np.arange(b.players) + r * width
        v = np.array([x.value for x in rates])
        ax.barh(y, v, height=width, label=rung, color=_palette()[r % 10],
                xerr=_errors(v, np.array([x.low for x in rates]), np.array([x.high for x in rates])),
                error_kw={"ecolor": "black", "capsize": 3, "lw": 1})
    ax.set_yticks(np.arange(b.players) + 0.4 - width / 2, [position_name(p) for p in range(b.players)])
    ax.invert_yaxis()
    ax.axvline(1 / b.players, color="black", ls="--", lw=1)
    ax.xaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_xlabel("win rate in mirror matches (dashed: fair share)")
    ax.set_title("Win rate by turn position at each rung (95% Wilson intervals)", pad=22)
    ax.legend(fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=min(len(b.rungs), 4), frameon=False)
    return _figure(fig, "win rate by turn position at each rung of the ladder")


def depth_figure(d: Depth) -> Figure:
    import matplotlib.pyplot as plt
    from matplotlib.ticker import PercentFormatter

    from analysis import plots

    fig, ax = plt.subplots(figsize=(plots.WIDTH, 3.2))
    x = np.arange(len(d.steps))
    v = np.array([s.h2h.share.value for s in d.steps])
    low = np.array([s.h2h.share.low for s in d.steps])
    high = np.array([s.h2h.share.high for s in d.steps])
    ax.errorbar(x, v, yerr=_errors(v, low, high), fmt="o-", color=_palette()[0], ecolor="black", capsize=4)
    ax.axhline(0.5, color="black", ls="--", lw=1)
    ax.set_xticks(x, [f"{s.budget} vs {s.budget // 2}" for s in d.steps], rotation=30 if len(x) > 5 else 0)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_xlabel(f"{BUDGET}: budget against half of it")
    ax.set_ylabel("ahead share of the doubled budget")
    ax.set_title("Skill trace: each doubling against the budget below (95% Wilson intervals)")
    return _figure(fig, "skill trace over doubling budgets")


def restricted_figure(r: Restricted) -> Figure:
    import matplotlib.pyplot as plt
    from matplotlib.ticker import PercentFormatter

    from analysis import plots

    fig, ax = plt.subplots(figsize=(plots.WIDTH, 1.4 + 0.3 * len(r.components)))
    y = np.arange(len(r.components))
    v = np.array([c.drop[0] for c in r.components])
    err = _errors(v, np.array([c.drop[1] for c in r.components]), np.array([c.drop[2] for c in r.components]))
    sig = np.array([c.significant for c in r.components])
    for mask, color, label in ((sig, _palette()[3], "significant (BH q < 0.05)"), (~sig, "grey", "not significant")):
        if mask.any():
            ax.errorbar(v[mask], y[mask], xerr=err[:, mask], fmt="o", color=color, ecolor=color, capsize=3, label=label)
    ax.set_yticks(y, [c.component for c in r.components])
    ax.invert_yaxis()
    ax.axvline(0, color="black", lw=1)
    ax.xaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_xlabel("drop in win share when never taking the component (percentage points)")
    ax.set_title(f"Restricted play: importance of each component to {r.bot} (95% paired intervals)", pad=22)
    ax.legend(fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False)
    return _figure(fig, "importance of each component by restricted play")


def ladder_figures(ladder: Ladder) -> dict[str, Figure | None]:
    from analysis import plots

    ratings = ladder.ratings
    return {
        "ratings": Figure(_data_uri(plots.strategy_ratings(ratings)), "ratings of the ladder's rungs") if ratings else None,
        "matchups": Figure(_data_uri(plots.matchup_matrix(ladder.matchups)), "head-to-head matrix of the ladder"),
        "balance": balance_figure(ladder.balance) if ladder.balance else None,
    }


def _data_uri(svg: str) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()


# ---- the report ----

def _environment():
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("analysis", "templates"),
                             autoescape=jinja2.select_autoescape(["html", "j2"]),
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(pct=pct, rate=rate_text, pvalue=pvalue, elo=elo_text)
    env.globals.update(points=points, position_name=position_name)
    return env


def ladder_section(ladder: Ladder) -> str:
    """The skill-ladder section alone (findings, ratings, head-to-head, balance by
    skill) as an HTML fragment for another report, e.g. the balance report over
    analyze_ladder(its run directories); it uses that report's styles."""
    return _environment().get_template(_TEMPLATE).render(
        standalone=False, a=None, ladder=ladder, findings=ladder_findings(ladder),
        figures=ladder_figures(ladder), depth_figure=None, restricted_figure=None)


def render_html(a: SkillAnalysis) -> str:
    return _environment().get_template(_TEMPLATE).render(
        standalone=True, a=a, ladder=a.ladder, findings=findings(a), figures=ladder_figures(a.ladder),
        depth_figure=depth_figure(a.depth) if a.depth else None,
        restricted_figure=restricted_figure(a.restricted) if a.restricted else None,
        created=datetime.now(UTC).isoformat(timespec="seconds"))


def write_skill_report(a: SkillAnalysis, html: Path | str, pdf: Path | str | None = None) -> None:
    from analysis.report import print_pdf

    html = Path(html)
    text = render_html(a)  # before anything is written: a failure leaves old reports alone
    write_text(html, text)
    if pdf is not None:
        Path(pdf).parent.mkdir(parents=True, exist_ok=True)
        print_pdf(html, Path(pdf))


# ---- the command ----

def skill(game: str, n_games: int, runs_dir: Path | str, html: Path | str, *, pdf: Path | str | None = None,
          jobs: int | None = None, quiet: bool = False, **plan_args: Any) -> SkillAnalysis:
    """Plan, play (or resume), analyse and report: the `chocosim skill` command."""
    if Path(html).suffix.lower() not in (".html", ".htm"):
        raise UserError(f"-o {html}: the report is HTML, allowed is a path ending in .html")
    p = plan(game, n_games, runs_dir, **plan_args)
    play(p, jobs=jobs, quiet=quiet)
    a = analyze(p)
    write_skill_report(a, html, pdf)
    return a


def _split_ladder(text: str) -> list[str]:
    try:
        return strategies.split_specs(text)
    except UserError:
        raise UserError(f"--ladder {text!r}: allowed are two or more comma-separated strategy specs, "
                        "weakest first, e.g. random,greedy,heuristic") from None


def skill_command(
    game: Annotated[str, typer.Argument(help="A game name (`chocosim games` lists them).")],
    out: Annotated[Path, typer.Option("-o", "--out", help="The HTML report to write.")],
    n_games: Annotated[int, typer.Option("--games", min=1, help="Games per run (each pairing, mirror match, "
                                         "doubling and component), rounded up to whole seat rotations.")] = 2_000,
    ladder: Annotated[str | None, typer.Option(
        "--ladder", help="The rungs, weakest first, comma-separated specs [default: random,greedy,heuristic "
        "and mcts where the game has them].", show_default=False)] = None,
    depth: Annotated[str | None, typer.Option(
        "--depth", help=f"Skill depth of this search bot: its {BUDGET} doubled --doublings times, e.g. "
        f"'mcts({BUDGET}=32)'.")] = None,
    doublings: Annotated[int, typer.Option("--doublings", min=1, help="Doublings of the budget for --depth.")] = 3,
    restricted: Annotated[str | None, typer.Option(
        "--restricted", help="Restricted play of this bot: it never takes one component, for each of "
        "the game's components, against its unrestricted self.")] = None,
    components: Annotated[str | None, typer.Option(
        "--components", help="Only these components for --restricted, comma-separated [default: all].",
        show_default=False)] = None,
    pdf: Annotated[Path | None, typer.Option("--pdf", help="Also print the report to this PDF (needs Chromium).")] = None,
    players: Annotated[int | None, typer.Option("--players", min=1, help="Table size [default: the params' or the game's smallest].",
                                                show_default=False)] = None,
    runs_dir: Annotated[Path, typer.Option("--runs", help="Where the run directories go (re-running resumes them).")] = Path("runs"),
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**64 - 1, help="Run seed, the same for every run.")] = 0,
    jobs: Annotated[int | None, typer.Option("--jobs", min=1, help="Parallel workers (default: every core).")] = None,
    rules: Annotated[Path | None, typer.Option("--rules", help="House rules TOML.")] = None,
    set_: Annotated[list[str] | None, typer.Option("--set", help="Override one param: key=value; repeatable.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.")] = False,
) -> None:
    """Skill in a game: a ladder of bots with ratings, the balance at each rung, the skill
    depth of a search bot and the importance of each component (restricted play)."""
    sets = dict(parse_set(s) for s in set_ or [])
    rungs = _split_ladder(ladder) if ladder is not None else None
    a = skill(game, n_games, runs_dir, out, pdf=pdf, jobs=jobs, quiet=quiet, ladder=rungs, depth=depth,
              doublings=doublings, restricted=restricted, players=players,
              components=[c.strip() for c in components.split(",")] if components is not None else None, sets=sets, rules=rules, seed=seed)
    written = f"{out}" + (f" and {pdf}" if pdf else "")
    _console.print(f"skill report of {a.title}, {len(a.runs)} runs of {a.n_games:,} games: {written}", soft_wrap=True)
