"""chocosim from Python: every job of the command line (run, results, summary, play,
report, balance, compare, sweep, skill, tune_bot, tune_rules) as a function returning
its result (polars frames and a verdict), for designers who script experiments in a
notebook; `words` gives a result's verdict in the reports' words.

    from analysis import api
    base = api.run("fabryka", ["heuristic", "heuristic"], games=20_000, out="runs/base")
    api.results(base.path).group_by("position").agg(pl.col("win").mean())
    cmp = api.compare_rules("fabryka", ["heuristic", "heuristic"], games=20_000,
                            variants=["rounds=3"], html="compare.html")
    cmp.table            # one row per variant x metric: change, 95% CI, q value
    sw = api.sweep("fabryka", [["heuristic", "heuristic"]], {"collect_count": [3, 5, 7]},
                   games=20_000, out="runs/sweep")
    sw.table, sw.fair_points

Every result shows itself in a notebook (its verdict, key table and figure) and draws
its key figure as a matplotlib Figure with `.plot()`; `api.run`'s result has `.summary()`.
Every function raises simcore.errors.UserError (one line) on bad input, as the CLI does.
"""
from __future__ import annotations

import dataclasses
import functools
import importlib
import math
import re
import threading
import types
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

import strategies
from analysis import display
from analysis.arguments import checked
from analysis.options import each_once, param_name
from analysis.render.formats import count, ordinal
from analysis.render.formats import rate as rate_text
from analysis.rundir import RunDir, open_run
from analysis.summary import Summary, summarize
from simcore.errors import UserError, check_output
from simcore.params import Params, parse_set
from simcore.play import Trace, play_game
from simcore.registry import GameSpec, get_game
from simcore.rundir import held_games
from simcore.runner import RunResult, playing_on, rotation_size
from simcore.runner import run as run_games

if TYPE_CHECKING:
    from analysis.experiments.balance import BalanceResult
    from analysis.experiments.compare import Comparison
    from analysis.experiments.report import RunsReport
    from analysis.experiments.skill_analysis import SkillAnalysis
    from analysis.experiments.sweep import SweepResult
    from analysis.experiments.tune import BotTuning, RuleTuning
    from analysis.glossary import Term
    from analysis.sequential import Precision

# Each job imports its experiment when it runs: the statistics stack under them (scipy,
# statsmodels) takes seconds to load, which `summary`, `results` and `play` must not pay,
# and the plotting stack loads only for a job that writes a report. The defaults below
# that an experiment defines are written out for the same reason (a test checks them).
DEFAULT_MARGIN = 1.0  # analysis.experiments.compare.DEFAULT_MARGIN
MIN_EFFECT = 0.02  # analysis.metrics.MIN_EFFECT

__all__ = ["RunOutcome", "run", "results", "summary", "play", "CompareOutcome", "compare", "compare_rules",
           "parse_variant", "sweep_values", "sweep", "report", "seat_balance", "run_params", "play_params",
           "comparison_table", "balance", "skill", "tune_bot", "tune_ranges", "tune_rules", "words", "as_json",
           "version", "check_outputs", "ordinal", "count", "rate_text", "glossary", "define"]


def seat_balance(key: str) -> bool:
    """The quantities --precision watches: every turn position's win rate."""
    return key.startswith("pos")


def _notebook() -> types.ModuleType:
    """The renderer of results in a notebook (it loads the plotting stack)."""
    from analysis.render import notebook

    return notebook


display.use(_notebook)


@dataclass(frozen=True)
class RunOutcome(display.Shown):
    """A run directory as api.run left it. In a notebook it shows its summary (win rates by
    turn position with 95% intervals, as `chocosim summary` prints them) and what this
    call played; plot(ax=None) draws the win rates by turn position."""

    path: Path
    manifest: dict[str, Any]
    played: int  # games played by this call
    precision: Precision | None  # how a --precision run ended
    resumed: int = 0  # games the directory held already (without precision)

    def summary(self) -> Summary:
        """The run directory's summary (api.summary), read from it now."""
        return summarize(self.path)


def _lineup(game: str, seats: Sequence[str]):
    return functools.partial(strategies.build_lineup, game, list(seats))


@checked
def run(game: str, seats: Sequence[str] | str, games: int, out: Path | str, *, seed: int = 0,
        seating: str = "rotate", rules: Path | str | None = None, sets: dict[str, Any] | None = None,
        jobs: int | None = None, precision: float | None = None, quiet: bool = True,
        chunk_size: int | None = None, backend: str = "auto", scheduler: str | None = None) -> RunOutcome:
    """Play `games` games into the run directory `out` (resumed or extended if it holds
    this run) on `backend` (a dask cluster: "dask" and its `scheduler` address). With
    `precision` (points), play in rounds until every position's win rate is known within
    ±precision (95% confidence sequence), `games` being the cap."""
    spec = get_game(game)
    seats = strategies.split_specs(seats) if isinstance(seats, str) else list(seats)
    params = spec.params(Path(rules) if rules else None, sets, players=len(seats))
    return run_params(spec, params, seats, games, out, seed=seed, seating=seating, jobs=jobs,
                      precision=precision, quiet=quiet, chunk_size=chunk_size, backend=backend,
                      scheduler=scheduler)


@checked
def run_params(spec: GameSpec, params: Params, seats: list[str], games: int, out: Path | str, *,
               precision: float | None = None, seating: str = "rotate", **runner: Any) -> RunOutcome:
    """run() for a game and params already built (the CLI's run command)."""
    played = 0

    def play_round(n: int) -> RunResult:
        nonlocal played
        if precision is not None:  # a round never asks for fewer games than the run holds
            n = max(n, held_games(out))
        r = run_games(spec, params, seats, _lineup(spec.name, seats), out, n_games=n,
                      seating=seating, **runner)
        played += r.played
        return r

    if precision is None:
        result = play_round(games)
        return RunOutcome(Path(out), result.manifest, played, None, result.resumed)
    # Only a run to a precision measures as it plays: the statistics stack (scipy,
    # statsmodels: 1.7 s to import) is loaded for it alone.
    from analysis.experiments import compare as cmp
    from analysis.sequential import until_precise

    done = until_precise(play_round, lambda: _estimates(cmp.describe_run(open_run(out), seat_balance)),
                         precision, games, rotation_size(len(seats), seating))
    done = dataclasses.replace(done, games=max(done.games, held_games(out)))  # the games measured
    return RunOutcome(Path(out), open_run(out).manifest, played, done)


def _estimates(pairs) -> list[tuple[str, Any]]:
    return [(m.label, e) for m, e in pairs]


@checked
def results(run_dir: Path | str, lazy: bool = False) -> pl.DataFrame | pl.LazyFrame:
    """The results table of a run directory (one row per game x seat)."""
    frame = RunDir(run_dir).scan()
    return frame if lazy else frame.collect()


@dataclass(frozen=True)
class CompareOutcome(display.Shown):
    """Variants compared with a base. In a notebook it shows its verdicts, each variant's
    table and forest plot, as the comparison report does; plot(variant=0, ax=None)."""

    comparisons: list[Comparison]
    table: pl.DataFrame  # variant, group, metric, unit, base, variant_value, change, low, high, q, ...
    verdicts: list[str]
    base: Path
    variants: list[Path]
    precision: Precision | None = None


def comparison_table(comparisons: list[Comparison]) -> pl.DataFrame:
    rows = []
    for c in comparisons:
        for r in c.rows:
            s = r.metric.scale
            rows.append({"variant": c.label, "variant_dir": str(c.variant.path), "group": r.metric.group,
                         "metric": r.metric.key, "label": r.metric.label, "unit": r.metric.unit,
                         "base": r.base * s, "variant_value": r.variant * s, "change": r.change.value * s,
                         "low": r.change.low * s, "high": r.change.high * s, "se": r.change.se * s,
                         "se_unpaired": r.change.se_unpaired * s, "p": r.change.p_value,
                         "q": r.q_value, "significant": r.significant, "paired": c.paired, "games": c.games})
    return pl.DataFrame(rows)


@checked
def compare(base: Path | str, variants: Sequence[Path | str], *, paired: bool = True,
            margin: float = DEFAULT_MARGIN, html: Path | str | None = None,
            pdf: Path | str | None = None) -> CompareOutcome:
    """Compare run directories, each variant against `base` (paired on game seeds unless
    paired=False); write the HTML (and PDF) report when asked."""
    from analysis.experiments import compare as cmp
    check_outputs(html, pdf)
    # Loaded here, as in every job that writes a report: the plotting stack takes a
    # second or two, which a job that only plays would pay.
    from analysis.render.compare import verdicts, write_compare

    comparisons = cmp.compare_runs(base, variants, paired=paired, margin=margin)
    if html is not None:
        write_compare(comparisons, html, pdf, margin)
    return CompareOutcome(comparisons, comparison_table(comparisons),
                          [v for c in comparisons for v in verdicts(c)], Path(base), [Path(v) for v in variants])


def check_outputs(html: Path | str | None, pdf: Path | str | None = None) -> None:
    """Refuse an HTML or PDF path that cannot be a file before any game is played."""
    if html is not None:
        check_output(html, "-o")
    if pdf is not None:
        check_output(pdf, "--pdf")


def slug(text: str) -> str:
    return re.sub(r"[^\w.=+-]+", "_", text).strip("_")[:100] or "_"


def parse_variant(text: str) -> tuple[str, Path | None, dict[str, Any]]:
    """A --variant: a house-rule TOML file (name ending .toml), or key=value settings
    separated by ';' ("rounds=3; deck.almonds=6"). Returns (name, file, settings)."""
    text = text.strip()
    if not text:
        raise UserError("--variant '': expected key=value or a .toml file")
    if text.endswith(".toml"):
        path = Path(text)
        if not path.is_file():
            raise UserError(f"--variant {text!r}: no such house-rule file")
        return path.stem, path, {}
    items = text.split(";")
    if not all(item.strip() for item in items):
        raise UserError(f"--variant {text!r}: an entry is empty; expected key=value settings separated by ';'")
    sets = dict(parse_set(item) for item in each_once(f"--variant {text!r}", items, what="param", key=param_name))
    return "; ".join(f"{k}={v}" for k, v in sets.items()), None, sets


@checked
def compare_rules(game: str, seats: Sequence[str] | str, games: int, variants: Sequence[str], *,
                  runs: Path | str = "runs", seed: int = 0, seating: str = "rotate", jobs: int | None = None,
                  margin: float = DEFAULT_MARGIN, precision: float | None = None,
                  html: Path | str | None = None, pdf: Path | str | None = None,
                  quiet: bool = True, backend: str = "auto", scheduler: str | None = None) -> CompareOutcome:
    """Play the rulebook (the base) and every variant on the same seeds under
    runs/<game>/<seats>/, resumable (more games extend the runs), then compare them.
    With `precision`, play in rounds until every position's win-rate change of every
    variant is within ±precision points (95% confidence sequence), `games` the cap.
    Every run plays on `backend` (a dask cluster: "dask" and its `scheduler` address)."""
    from analysis.experiments import compare as cmp
    from analysis.sequential import until_precise

    spec = get_game(game)
    seats = strategies.split_specs(seats) if isinstance(seats, str) else list(seats)
    if not variants:
        raise UserError("compare GAME needs at least one --variant (key=value or a .toml file)")
    cmp.check_margin(margin)  # before any game is played
    check_outputs(html, pdf)
    parsed = [parse_variant(v) for v in variants]
    base_params = spec.params(None, None, players=len(seats))
    params = [spec.params(f, s, players=len(seats)) for _, f, s in parsed]  # all checked first
    where = Path(runs) / spec.name / slug(",".join(seats))
    base_dir = where / "rulebook"
    dirs = [where / slug(name) for name, _, _ in parsed]
    if len(set(dirs)) < len(dirs):
        raise UserError(f"two variants have the same name ({', '.join(n for n, _, _ in parsed)})")

    def play(n: int) -> None:
        # With --precision, a round on runs already larger (an earlier compare of more
        # games) uses what is there; without, a smaller --games is the runner's to refuse.
        if precision is not None:
            n = max([n, *(held_games(d) for d in [base_dir, *dirs])])
        for p, d in zip([base_params, *params], [base_dir, *dirs]):
            run_games(spec, p, seats, _lineup(spec.name, seats), d, n_games=n, seed=seed,
                      seating=seating, jobs=jobs, quiet=quiet)

    done = None
    with playing_on(backend, scheduler):
        if precision is None:
            play(games)
        else:
            def measure():
                cs = cmp.compare_runs(base_dir, dirs, margin=margin, keys=seat_balance)
                return [(f"{c.label}: {r.metric.label}", r.change) for c in cs for r in c.rows]
            done = until_precise(play, measure, precision, games, rotation_size(len(seats), seating))
            done = dataclasses.replace(done, games=max(done.games, held_games(base_dir)))  # the games measured
    out = compare(base_dir, dirs, margin=margin, html=html, pdf=pdf)
    return CompareOutcome(out.comparisons, out.table, out.verdicts, base_dir, dirs, done)


@checked
def sweep(game: str, lineups: Sequence[Sequence[str] | str], vary: dict[str, Sequence[Any]], games: int,
          out: Path | str, *, seed: int = 0, seating: str = "rotate", rules: Path | str | None = None,
          sets: dict[str, Any] | None = None, jobs: int | None = None, precision: float | None = None,
          html: Path | str | None = None, pdf: Path | str | None = None, quiet: bool = True,
          backend: str = "auto", scheduler: str | None = None) -> SweepResult:
    """A grid over params (every combination of the `vary` values) and seat lineups, a run
    directory per point under `out` (re-running finishes only what is missing), all on
    the same seeds, played on `backend` (a dask cluster: "dask" and its `scheduler`);
    returns the tidy metrics table, the neighbour comparisons and the fair points, and
    writes the HTML (and PDF) report when asked."""
    from analysis.experiments import sweep as sw

    tables = [strategies.split_specs(s) if isinstance(s, str) else list(s) for s in lineups]
    name = get_game(game).name
    if precision is not None and not 0 < precision < math.inf:  # as until_precise, but before the sweep directory
        raise UserError(f"precision = {precision}: must be a positive, finite number of points")
    for t in tables:  # every bot of every lineup, before the sweep directory is made
        strategies.build_lineup(name, t)
    check_outputs(html, pdf)
    with playing_on(backend, scheduler):
        result = sw.run_sweep(game, tables, vary, games, Path(out), seed=seed, seating=seating,
                              rules=Path(rules) if rules else None, sets=sets, jobs=jobs,
                              precision=precision, quiet=quiet)
    if html is not None:
        from analysis.render.sweep import write_sweep  # the plotting stack: only for a report

        write_sweep(result, html, pdf)
    return result


@checked
def report(run_dirs: Sequence[Path | str], html: Path | str, pdf: Path | str | None = None,
           min_effect: float = MIN_EFFECT) -> RunsReport:
    """The balance report of run directories (what `chocosim report` writes): every run
    analysed (`min_effect`: the smallest difference in win rate, a share, stated as a
    finding besides significance) before anything is written, so bad input leaves
    existing reports untouched."""
    from analysis.experiments.report import analyze_runs

    if not run_dirs:
        raise UserError("no run directory given")
    check_outputs(html, pdf)
    # The plotting stack (matplotlib, seaborn) takes a second or two to load: it loads on
    # a thread while the runs are analysed, which mostly waits on numpy. Joined whatever
    # the analysis raises: a caller that goes on (a notebook, the next call) would
    # otherwise meet pyplot half imported.
    loader = threading.Thread(target=importlib.import_module, args=("analysis.render.report",), daemon=True)
    loader.start()
    try:
        result = analyze_runs(run_dirs, min_effect)
    finally:
        loader.join()
    from analysis.render.report import write_report

    write_report(result, html, pdf)
    return result


@checked
def balance(game: str, *, html: Path | str | None = None, pdf: Path | str | None = None,
            minutes: float | None = None, games: int = 1_000_000, precision: float = 0.5,
            players: Sequence[int] | None = None, ladder: Sequence[str] | None = None,
            lowest: str | None = None, search: str | None = "mcts", doublings: int = 1,
            margin: float = 1.0, compensation: bool = True, evidence: bool = True,
            runs: Path | str = "runs", seed: int = 0, jobs: int | None = None,
            backend: str = "auto", scheduler: str | None = None,
            rules: Path | str | None = None, sets: dict[str, Any] | None = None,
            log: Any = None, play: bool = True) -> BalanceResult:
    """Turn-position balance on a skill ladder at every table size (`players` to choose):
    mirror matches of every rung, ratings from meetings of adjacent rungs, the strongest
    rung's verdict and whether it converged (the two strongest rungs agree within
    `margin` points), and with `compensation` the score bonus by position and the
    game's turn-order knobs. Within `minutes` games go where they narrow the verdict
    most; without, every run plays to `precision` points or `games`. Returns
    analysis.experiments.balance.BalanceResult (.table: tidy polars frame; .verdict():
    the verdict as JSON values); with `html`, writes the report, balance.parquet,
    balance.csv and verdict.json beside it. Every run plays on `backend` (a dask
    cluster: "dask" and its `scheduler` address). play=False analyses the runs already
    there (e.g. to render them again) without playing."""
    from analysis.experiments import balance as bal
    from analysis.experiments.balance_run import balance as play_balance
    from analysis.experiments.balance_run import with_plans
    from analysis.experiments.report import analyze_runs

    if html is not None and Path(html).suffix.lower() not in (".html", ".htm"):
        raise UserError(f"-o {html}: the report is HTML, allowed is a path ending in .html")
    check_outputs(html, pdf)
    p = bal.plan(game, runs, players=players, ladder=ladder, search=search, doublings=doublings,
                 lowest=lowest, games=games, precision=precision, minutes=minutes, margin=margin,
                 compensation=compensation, sets=sets, rules=rules, seed=seed)
    if play:
        with playing_on(backend, scheduler):
            result = play_balance(p, jobs=jobs, log=log)
    else:
        result = with_plans(p, bal.analyze(p), {})
    if html is not None:
        from analysis.render.balance import write_balance

        write_balance(result, html, pdf,
                      evidence=analyze_runs([v.top.path for v in result.sizes]) if evidence else None)
    return result


@checked
def summary(run_dir: Path | str) -> Summary:
    """The summary of a run directory from its tallies: win rates by seat, position and
    strategy with 95% intervals, shared victories, scores, end reasons."""
    return summarize(run_dir)


@checked
def play(game: str, seats: Sequence[str] | str, *, seed: int = 0, index: int = 0,
         rules: Path | str | None = None, sets: dict[str, Any] | None = None) -> Trace:
    """Game `index` of a run with `seed` and seating fixed, seat i taken by the i-th spec,
    with its full trace (.render(): text; .to_dict(): JSON values)."""
    spec = get_game(game)
    seats = strategies.split_specs(seats) if isinstance(seats, str) else list(seats)
    return play_params(spec, spec.params(Path(rules) if rules else None, sets, players=len(seats)), seats,
                       seed=seed, index=index)


def play_params(spec: GameSpec, params: Params, seats: Sequence[str], *, seed: int = 0, index: int = 0) -> Trace:
    """play() for a game and params already built (the CLI's play command)."""
    return play_game(spec, params, strategies.build_lineup(spec.name, list(seats)), seed, index)


def sweep_values(text: str) -> tuple[str, list[Any]]:
    """A swept param, NAME=V1,V2,... (TOML values) or NAME=LOW..HIGH (every integer),
    as (name, values)."""
    from analysis.experiments import sweep as sw

    return sw.parse_vary(text)


@checked
def skill(game: str, games: int, runs: Path | str, html: Path | str, *, pdf: Path | str | None = None,
          ladder: Sequence[str] | None = None, depth: str | None = None, doublings: int = 3,
          restricted: str | None = None, components: Sequence[str] | None = None, players: int | None = None,
          seed: int = 0, jobs: int | None = None, backend: str = "auto", scheduler: str | None = None,
          rules: Path | str | None = None, sets: dict[str, Any] | None = None,
          quiet: bool = True) -> SkillAnalysis:
    """Skill in a game: a ladder of bots (`ladder`, weakest first) with ratings and the
    balance at each rung, the skill depth of the search bot `depth` over `doublings`
    of its budget, and restricted play of `restricted` (each of `components` never
    taken); `games` per run under `runs` (re-running resumes), played on `backend` (a
    dask cluster: "dask" and its `scheduler`); writes the HTML (and PDF) report."""
    from analysis.experiments import skill as sk
    from analysis.experiments.skill_analysis import analyze

    check_outputs(html, pdf)
    if Path(html).suffix.lower() not in (".html", ".htm"):
        raise UserError(f"-o {html}: the report is HTML, allowed is a path ending in .html")
    p = sk.plan(game, games, runs, ladder=ladder, depth=depth, doublings=doublings, restricted=restricted,
                components=components, players=players, sets=sets, rules=Path(rules) if rules else None, seed=seed)
    with playing_on(backend, scheduler):
        sk.play(p, jobs=jobs, quiet=quiet)
    result = analyze(p)
    from analysis.render.skill import write_skill_report  # the plotting stack: only for a report

    write_skill_report(result, html, pdf)
    return result


def tune_ranges(items: Sequence[str]) -> dict[str, tuple[int | float, int | float]]:
    """Rule tuning's params and ranges, NAME=LOW..HIGH each (integers: an integer range)."""
    from analysis.experiments.tune import parse_vary

    return parse_vary(items)


@checked
def tune_bot(game: str, bot: str, against: Sequence[str] | str, out: Path | str, *, trials: int = 40,
             games: int = 2000, weights: Sequence[str] | None = None, players: Sequence[int] | None = None,
             holdout_games: int | None = None, seed: int = 0, jobs: int | None = None,
             backend: str = "threads", scheduler: str | None = None, rules: Path | str | None = None,
             sets: dict[str, Any] | None = None, pdf: Path | str | None = None, quiet: bool = True) -> BotTuning:
    """Search `bot`'s `weights` (default: every weight with a declared range) to maximise
    its edge over its fair share against the field `against` ("self": the best weights
    so far), confirm the winner on held-out seeds at each table size of `players`; the
    study, best.json and report.html (and `pdf`) go to the tuning directory `out`
    (re-running continues it)."""
    # optuna takes a second to load: only a tuning job pays it.
    from analysis.experiments import tune
    from analysis.render.tune import write_tune_report

    field = strategies.split_specs(against) if isinstance(against, str) else list(against)
    result = tune.tune_bot(game, bot, field, out, trials=trials, games=games, weights=weights, players=players,
                           holdout_games=holdout_games, seed=seed, jobs=jobs, rules=Path(rules) if rules else None,
                           sets=sets, quiet=quiet, backend=backend, scheduler=scheduler)
    write_tune_report(result, Path(out) / "report.html", Path(pdf) if pdf else None)
    return result


@checked
def tune_rules(game: str, seats: Sequence[str] | str, vary: dict[str, tuple[float, float]] | Sequence[str],
               goals: Sequence[str], out: Path | str, *, trials: int = 40, games: int = 2000,
               holdout_games: int | None = None, seed: int = 0, jobs: int | None = None,
               backend: str = "threads", scheduler: str | None = None, rules: Path | str | None = None,
               sets: dict[str, Any] | None = None, pdf: Path | str | None = None, quiet: bool = True) -> RuleTuning:
    """Search the params in `vary` ({name: (low, high)}, or NAME=LOW..HIGH texts) for a
    house rule meeting every goal ("position balance within X points", "game length
    A..B turns", "REASON ends A..B%", "margin within X points"), preferring few and
    small changes; confirm it on held-out seeds; the study, proposal.toml and
    report.html (and `pdf`) go to `out`."""
    from analysis.experiments import tune, tune_rules as rt  # optuna: see tune_bot
    from analysis.render.tune import write_tune_report

    table = strategies.split_specs(seats) if isinstance(seats, str) else list(seats)
    ranges = dict(vary) if isinstance(vary, dict) else tune.parse_vary(vary)
    result = rt.tune_rules(game, table, ranges, [rt.parse_goal(g) for g in goals], out, trials=trials,
                             games=games, holdout_games=holdout_games, seed=seed, jobs=jobs,
                             rules=Path(rules) if rules else None, sets=sets, quiet=quiet, backend=backend,
                             scheduler=scheduler)
    write_tune_report(result, Path(out) / "report.html", Path(pdf) if pdf else None)
    return result


def words(result: Any) -> list[str]:
    """A result's verdict in the reports' words, a line each: a balance (the overall
    verdict, then each table size's headline), a comparison, a tuning, a sweep (its fair
    points), a report of runs or a skill analysis (their findings)."""
    if isinstance(result, CompareOutcome):
        return list(result.verdicts)
    from analysis.render import outputs

    if isinstance(result, outputs.SPOKEN):
        return outputs.words(result)
    from analysis.experiments.balance import BalanceResult

    if isinstance(result, BalanceResult):
        from analysis.render.balance import degenerate, headline, overall

        return [overall(result), *(line for v in result.sizes for line in (headline(v, result.margin), *degenerate(v)))]
    from analysis.render.tune import verdict

    return [verdict(result)]


def glossary() -> tuple[Term, ...]:
    """Every word the reports use, with its definition (`chocosim help`)."""
    from analysis.glossary import TERMS

    return TERMS


def define(word: str) -> Term:
    """The glossary's entry for a word of the reports, in any case or a plural
    (`chocosim help WORD`); UserError naming the close words when there is none."""
    from analysis.glossary import find, suggest

    found = find(word)
    if found is None:
        close = suggest(word)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise UserError(f"help {word!r}: not a word of the glossary{hint}; `chocosim help` lists them")
    return found


def as_json(result: Any) -> Any:
    """A result, or a run's summary, as plain JSON values (what the commands' --json
    prints): the numbers its words state and the tables behind them."""
    from analysis.render.outputs import jsonable, machine

    if isinstance(result, CompareOutcome):
        return jsonable({"base": result.base, "variants": result.variants, "verdicts": result.verdicts,
                         "precision": result.precision, "table": result.table})
    return machine(result)


def version() -> str:
    """The installed chocosim's version, as a report states it."""
    from analysis.render import version as installed

    return installed()
