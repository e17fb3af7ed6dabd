"""Results in a notebook: every result of the api shows its verdict sentence and a figure
(`_repr_html_`), and `plot()` draws its key figure as a matplotlib Figure whose marks are
the result's own numbers (one per row); api.run's summary is `chocosim summary`'s."""
from __future__ import annotations

import json

import matplotlib.pyplot as plt
import pytest
from helpers import ROOT, cli
from markupsafe import escape
from matplotlib.axes import Axes
from matplotlib.container import ErrorbarContainer
from matplotlib.figure import Figure

from analysis import api
from analysis.render.compare import forest_rows
from analysis.render.findings import findings
from analysis.render.skill import findings as skill_findings
from simcore.errors import UserError

GAME = "fabryka"
NOTEBOOK = ROOT / "examples" / "fabryka.ipynb"


def shows(result, sentence: str) -> str:
    """The result's HTML, checked to hold the sentence (as HTML writes it) and a figure."""
    page = result._repr_html_()
    assert escape(sentence) in page
    assert "<img " in page or "<svg" in page
    return page


def intervals(ax: Axes) -> list[float]:
    """The 95% intervals drawn as horizontal error bars: low, high of each row, top first."""
    (bars,) = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    return [x for s in bars.lines[2][0].get_segments() for x in sorted((s[0][0], s[1][0]))]


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return api.run(GAME, "random,random", 1000, tmp_path_factory.mktemp("nb") / "base", seed=3, jobs=1)


def test_a_run_shows_the_summary_chocosim_summary_prints(base, capsys):
    code, out, _ = cli(capsys, "summary", str(base.path), "--json")
    assert code == 0
    printed = json.loads(out)["by_position"]
    summary = base.summary()
    assert summary.by_position.to_dicts() == printed
    page = shows(base, f"the 1st player {api.rate_text(_rate(printed[0]))}")
    assert f"the 2nd player {escape(api.rate_text(_rate(printed[1])))}" in page
    assert "This call played 1,000 games" in page
    # The figure draws each turn position's interval, as the summary has it.
    fig = base.plot()
    assert isinstance(fig, Figure)
    drawn = intervals(fig.axes[0])
    assert drawn == pytest.approx([x for p in printed for x in (p["ci_low"], p["ci_high"])])
    assert isinstance(api.summary(base.path).plot(), Figure)


def _rate(row):
    from types import SimpleNamespace

    return SimpleNamespace(value=row["win_rate"], low=row["ci_low"], high=row["ci_high"])


def test_plot_draws_on_given_axes(base):
    fig, ax = plt.subplots()
    assert base.plot(ax=ax) is ax
    assert len(intervals(ax)) == 4  # two turn positions' ends
    plt.close(fig)


def test_a_comparison_shows_its_verdicts_and_forest(tmp_path):
    out = api.compare_rules(GAME, "random,random", 600, ["rounds=3"], runs=tmp_path / "runs", jobs=1)
    shows(out, out.verdicts[0])
    assert out.verdicts[0].startswith("rounds = 3 shortens the game")
    fig = out.plot()
    rows = forest_rows(out.comparisons[0])
    (points,) = fig.axes[0].collections[1:2]
    assert len(points.get_offsets()) == len(rows)
    assert sorted(points.get_offsets()[:, 0]) == pytest.approx(sorted(r.change.value * 100 for r in rows))
    assert out.plot("rounds = 3").axes[0].get_title() == fig.axes[0].get_title()
    with pytest.raises(UserError, match="variant = 'rounds = 9': the variants are rounds = 3"):
        out.plot("rounds = 9")


def test_a_sweep_shows_its_fair_points_and_draws_every_value(tmp_path):
    sw = api.sweep(GAME, [["random", "random"]], {"rounds": [2, 3, 4]}, 400, tmp_path / "sw", jobs=1)
    if sw.fair_points.height:
        f = sw.fair_points.row(0, named=True)
        shows(sw, f"advantage over the fair share changes sign at rounds = {f['x']:.2f}")
    else:
        shows(sw, "No turn position's advantage changes sign across the swept values of rounds.")
    fig = sw.plot()
    top = fig.axes[0]  # the win rate of each turn position against rounds
    curves = [line for line in top.lines if line.get_marker() == "o"]
    assert len(curves) == 2
    pos0 = sw.table.filter((sw.table["metric"] == "pos0")).sort("rounds")
    assert list(curves[0].get_xdata()) == [2, 3, 4]
    assert list(curves[0].get_ydata()) == pytest.approx(pos0["value"].to_list())
    with pytest.raises(UserError, match="param = 'nosuch': the sweep varies rounds"):
        sw.plot(param="nosuch")
    with pytest.raises(UserError, match="lineup = 'x': the sweep's lineups are random,random"):
        sw.plot(lineup="x")


def test_a_report_shows_its_findings_and_position_balance(base, tmp_path):
    rep = api.report([base.path], tmp_path / "r.html")
    a = rep.analyses[0]
    shows(rep, findings(a)[0].text)
    drawn = intervals(rep.plot().axes[0])
    assert drawn == pytest.approx([x for r in a.seats.positions.win for x in (r.low, r.high)])


def test_a_balance_shows_its_verdict_and_each_rung(tmp_path):
    bal = api.balance(GAME, ladder=["random", "heuristic"], games=600, precision=5, compensation=False,
                      evidence=False, runs=tmp_path / "runs", jobs=1)
    overall, headline = api.words(bal)
    shows(bal, overall)
    shows(bal, headline)
    (v,) = bal.sizes
    ax = bal.plot().axes[0]
    curves = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(curves) == v.players
    for p, c in enumerate(curves):  # each turn position: its rate at every rung
        assert list(c.lines[0].get_ydata()) == pytest.approx([r.rates[p].value for r in v.rungs])
    with pytest.raises(UserError, match="players = 3: this balance has 2 players"):
        bal.plot(players=3)


def test_a_skill_analysis_shows_its_findings_and_a_bar_per_rung_and_position(tmp_path):
    sk = api.skill(GAME, 200, tmp_path / "runs", tmp_path / "skill.html", ladder=["random", "heuristic"],
                   doublings=1, jobs=1)
    shows(sk, skill_findings(sk)[0].text)
    b = sk.ladder.balance
    bars = sk.plot().axes[0].patches
    assert len(bars) == b.players * len(b.rungs)
    assert sorted(bar.get_width() for bar in bars) == pytest.approx(sorted(x.value for row in b.win for x in row))


def test_tunings_show_their_verdict_and_every_trial(tmp_path):
    bot = api.tune_bot(GAME, "heuristic", "random", tmp_path / "bot", trials=2, games=200, jobs=1)
    shows(bot, api.words(bot)[0])
    (trials, best) = bot.plot().axes[0].lines
    assert list(trials.get_ydata()) == pytest.approx([100 * t["value"] for t in bot.trials])
    rules = api.tune_rules(GAME, "random,random", {"rounds": (2, 4)}, ["game length 20..40 turns"], tmp_path / "rules",
                           trials=2, games=200, jobs=1)
    shows(rules, api.words(rules)[0])
    assert len(rules.plot().axes[0].lines[0].get_xdata()) == len(rules.trials)



@pytest.mark.statistical
def test_the_example_notebook_runs_and_every_result_shows_itself(tmp_path):
    """balance -> compare -> sweep on Fabryka, executed as Jupyter does (about a minute)."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(NOTEBOOK, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert not any(c.outputs for c in code), "the example is stored without outputs"
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    shown = {}
    for c in code:
        for o in c.outputs:
            assert o.output_type != "error", o
            shown.setdefault(c.source.splitlines()[-1], []).extend(o.get("data", {}))
    for result in ("run", "balance", "compare", "sweep"):
        assert "text/html" in shown[result], result
    for figure in ("fig", 'compare.plot("rounds = 3")', 'sweep.plot(param="rounds")'):
        assert "image/png" in shown[figure], figure
    html_of = {c.source.splitlines()[-1]: o["data"]["text/html"] for c in code for o in c.outputs
               if "text/html" in o.get("data", {})}
    assert "Fabryka Czekolady, among the strongest bots here: at 2 players" in html_of["balance"]
    assert "rounds = 3 shortens the game by" in html_of["compare"]
    assert (tmp_path / "runs" / "sweep" / "metrics.parquet").exists()
