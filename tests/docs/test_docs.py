"""The README and the manual (docs/, built by mkdocs) against the code: every command they
show is one `chocosim` accepts, every Python snippet of the manual runs, every link of
the README leads somewhere, and the Quickstart is the two commands it promises."""
from __future__ import annotations

import html
import importlib.util
import re
import shlex
from pathlib import Path

import polars as pl
import pytest
import typer

import analysis.cli
from analysis import api
from helpers import ROOT, cli
from simcore.registry import get_game

README = ROOT / "README.md"
DOCS = ROOT / "docs"
QUICKSTART = [
    'pip install . && chocosim balance fabryka --minutes 2 -o out/fabryka/balance.html',
    'pip install ".[test]" && pytest -n auto',
]
# The games of examples/ (registered once their package is installed), which the manual's
# walk-through of a game in plain Python plays.
EXAMPLE_GAMES = {name for path in (ROOT / "examples").glob("*/*/game.py")
                 for name in re.findall(r'^    NAME = "(\w+)"', path.read_text(), re.M)}
# A page's include of a file of the repository (pymdownx.snippets), optionally one section.
INCLUDE = re.compile(r'^--8<-- "([^":]+)(?::([\w-]+))?"$', re.M)


def expanded(path: Path) -> str:
    """A page as the site shows it: the files it includes put in its place."""
    def include(m: re.Match) -> str:
        text = (ROOT / m.group(1)).read_text()
        if m.group(2):
            start, end = (f"--8<-- [{edge}:{m.group(2)}]" for edge in ("start", "end"))
            text = text[text.index(start):text.index(end)].split("\n", 1)[1].rsplit("\n", 1)[0]
        return text
    return INCLUDE.sub(include, path.read_text())


def pages() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


def code_blocks(text: str) -> list[tuple[str, str]]:
    """(language, body) of every fenced code block."""
    return re.findall(r"^```(\w*)\n(.*?)^```", text, re.S | re.M)


def shown_commands(text: str) -> list[str]:
    """Every `chocosim ...` a reader can copy: in fenced shell blocks (a line continued
    with a backslash joined, `# comments` dropped, what follows `&&` on a line taken as
    its own command) and in indented code blocks."""
    blocks = [body for lang, body in code_blocks(text) if lang in ("", "sh", "bash", "console")]
    unfenced = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    blocks += [block.replace("\n    ", "\n") for block in re.findall(r"(?:^    .*\n)+", unfenced, re.M)]
    commands = []
    for line in "\n".join(blocks).replace("\\\n", " ").splitlines():
        for part in line.split("&&"):
            if part.strip().startswith("chocosim "):
                commands.append(shlex.split(part, comments=True)[1:])
    return commands


def parse(argv: list[str]) -> tuple[str, typer.Context]:
    """Parse `chocosim argv...` as the command line would, without running it: the
    command's name and its context (every option known, every value of its kind)."""
    group = typer.main.get_command(analysis.cli.app)
    global_flags = {opt for p in group.params for opt in p.opts}
    while argv and argv[0] in global_flags:
        argv = argv[1:]
    assert argv, "no command"
    name, *args = argv
    assert name in group.commands, f"no command {name!r}"
    command = group.commands[name]
    return name, command.make_context(name, list(args), parent=group.context_class(group, info_name="chocosim"))


def all_shown_commands() -> list[tuple[str, list[str]]]:
    return [(str(page.relative_to(ROOT)), argv) for page in pages() for argv in shown_commands(expanded(page))]


def test_the_docs_show_the_commands_of_every_kind():
    shown = {parse(argv)[0] for _, argv in all_shown_commands()}
    assert set(typer.main.get_command(analysis.cli.app).commands) <= shown


@pytest.mark.parametrize("page, argv", all_shown_commands(), ids=lambda x: " ".join(x) if isinstance(x, list) else x)
def test_every_command_shown_is_one_chocosim_accepts(page, argv):
    _, ctx = parse(argv)
    game = ctx.params.get("game")
    if game and not re.search(r"[/:]|\.py$", game) and game not in EXAMPLE_GAMES:
        get_game(game)  # a bundled game's name, spelt as registered


@pytest.mark.parametrize("argv", [
    ["run", "fabryka", "--seats", "random,random", "--gmaes", "10", "--out", "runs/x"],  # misspelt option
    ["sweep", "fabryka", "--games", "ten", "-o", "out/s.html"],  # a value of the wrong kind
    ["balance", "fabryka", "--minutes", "-1", "-o", "out/b.html"],  # out of range
    ["simulate", "fabryka"],  # no such command
])
def test_a_stale_command_fails_the_check(argv):
    with pytest.raises((typer.TyperException, AssertionError)):
        parse(argv)


def test_a_misspelt_game_fails_the_check():
    with pytest.raises(Exception, match="did you mean fabryka"):
        test_every_command_shown_is_one_chocosim_accepts("x.md", ["run", "fabrika", "--seats", "random,random",
                                                                  "--games", "10", "--out", "runs/x"])


def test_the_quickstart_is_two_commands_as_promised():
    readme = README.read_text()
    section = readme[readme.index("## Quickstart"):]
    section = section[:section.index("\n## ", 1)]
    blocks = code_blocks(section)
    assert len(blocks) == 1 and blocks[0][1].splitlines() == QUICKSTART
    assert all(command in (DOCS / "guide" / "getting-started.md").read_text() for command in QUICKSTART)
    # CI runs the test command as the README writes it.
    assert f"\n{QUICKSTART[1]}\n" in (ROOT / ".ci" / "run").read_text()


def test_the_readme_is_a_front_door():
    lines = README.read_text().splitlines()
    assert len(lines) <= 220
    picture = re.search(r"!\[[^\]]+\]\(([^)]+\.png)\)", README.read_text())
    assert picture and (ROOT / picture.group(1)).stat().st_size > 10_000


def anchor(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_link_of_the_readme_leads_somewhere():
    text = README.read_text()
    headings = {anchor(h) for h in re.findall(r"^#+ (.*)$", text, re.M)}
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    assert len(links) > 10
    for target in links:
        if target.startswith("http"):
            continue
        if target.startswith("#"):
            assert target[1:] in headings, target
        else:
            assert (ROOT / target.split("#")[0]).exists(), target


def test_every_include_of_the_manual_exists():
    for page in DOCS.rglob("*.md"):
        for path, section in INCLUDE.findall(page.read_text()):
            text = (ROOT / path).read_text()
            assert not section or f"--8<-- [start:{section}]" in text, (page, path, section)


def manual_snippets() -> list[tuple[str, str]]:
    """(page, code) of every Python snippet written on a page of the manual, in order
    (the README's example, which the manual includes, is run by the API's tests)."""
    return [(str(page.relative_to(ROOT)), body) for page in sorted(DOCS.rglob("*.md"))
            for lang, body in code_blocks(page.read_text()) if lang == "python"]


def test_every_python_snippet_of_the_manual_runs(tmp_path, monkeypatch, capsys):
    # The runs the snippets read, by the names they give them: fab1 by the rulebook,
    # fab2 a house rule of three rounds.
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    api.run("fabryka", ["random", "random"], 10, "runs/fab1", jobs=1)
    api.run("fabryka", ["random", "random"], 10, "runs/fab2", sets={"rounds": 3}, jobs=1)
    snippets = manual_snippets()
    assert snippets
    scopes: dict[str, dict] = {}
    for page, code in snippets:
        exec(compile(code, page, "exec"), scopes.setdefault(page, {}))
    both = scopes["docs/reference/results.md"]["both"]
    assert both.height == 40 and both["interim_round_4"].null_count() == 20
    assert pl.read_parquet("fab1.parquet").height == 20


def test_the_python_bot_of_the_guide_plays_as_shown(tmp_path, monkeypatch, capsys):
    page = (DOCS / "guide" / "running.md").read_text()
    bot = next(body for lang, body in code_blocks(page) if lang == "python" and "PythonStrategy" in body)
    (tmp_path / "mybots.py").write_text(bot)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    argv = next(a for a in shown_commands(page) if "mybots:FirstCard,random" in a)
    argv[argv.index("--games") + 1] = "20"  # the guide's run, smaller
    code, _, err = cli(capsys, *argv, "--jobs", "1", "--quiet")
    assert code == 0, err
    assert api.results("runs/mine").filter(pl.col("strategy") == "mybots:FirstCard").height == 20


def test_the_column_reference_names_the_columns_a_run_has(tmp_path):
    page = (DOCS / "reference" / "results.md").read_text()
    named = re.findall(r"^\| `(\w+)` \| (\w+) \|", page, re.M)
    frame = api.results(api.run("fabryka", ["random", "random"], 2, tmp_path / "r", jobs=1).path)
    kinds = {pl.Enum: "enum", pl.Int64: "int64", pl.UInt64: "uint64", pl.Int32: "int32", pl.Int8: "int8",
             pl.Int16: "int16", pl.Float32: "float32", pl.Boolean: "bool"}
    assert [(c, kinds[frame.schema[c].base_type()]) for c, _ in named] == named
    # The rest are the game's counters and its interim standings, which the table names by kind.
    rest = [c for c in frame.columns if c not in dict(named)]
    assert rest and all(frame.schema[c] in (pl.Int8, pl.Int16) for c in rest)
    assert [c for c in rest if c.startswith("interim_")] == [f"interim_round_{i}" for i in range(1, 5)]


def test_the_cli_reference_holds_every_commands_help():
    # The strict build cannot tell an empty help from a full one: the page must hold, for
    # every command, the usage line and the options `--help` prints.
    spec = importlib.util.spec_from_file_location("cli_reference", DOCS / "hooks" / "cli_reference.py")
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    page = hook.on_page_markdown((DOCS / "reference" / "cli.md").read_text(), page=None)
    assert hook.MARKER not in page
    for name in typer.main.get_command(analysis.cli.app).commands:
        section = page[page.index(f"\n## {name}\n"):]
        assert f"Usage: chocosim {name} [OPTIONS]" in section and "--help" in section, name
    assert "--seats TEXT" in page and "--games INTEGER" in page


def named_objects() -> list[tuple[str, str]]:
    """(page, dotted name) of every object of chocosim's packages the README and the
    manual name in code: `analysis.skill.analyze_ladder`, `api.results` (analysis.api's)."""
    found = set()
    for page in pages():
        prose = re.sub(r"^```.*?^```", "", expanded(page), flags=re.S | re.M)
        for span in re.findall(r"`([^`]+)`", prose):
            for name in re.findall(r"(?<![\w/.])((?:analysis|simcore|strategies|api)\.[A-Za-z_][\w.]*)", span):
                name = name.rstrip(".")
                if not re.search(r"\.(py|pyx|pxd|pxi|md|json|toml)$", name):  # a file, not an object
                    found.add((str(page.relative_to(ROOT)), "analysis." + name if name.startswith("api.") else name))
    return sorted(found)


def resolve(name: str):
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attribute in parts[i:]:
            obj = getattr(obj, attribute)
        return obj
    raise ImportError(name)


@pytest.mark.parametrize("page, name", named_objects())
def test_every_module_function_and_class_the_docs_name_exists(page, name):
    resolve(name)


def test_the_readmes_example_verdict_is_the_bundled_reports():
    # Regenerating reports/ changes the verdict: then the README's quote and its picture
    # (python scripts/readme_picture.py) are redrawn with it.
    report = (ROOT / "reports" / "fabryka" / "fabryka.html").read_text()
    verdict = re.search(r'<p class="verdict">(.*?)</p>', report, re.S).group(1)
    verdict = " ".join(html.unescape(re.sub(r"<[^>]+>", "", verdict)).split())
    readme = README.read_text()
    quote = " ".join(line[2:] for line in readme.splitlines() if line.startswith("> "))
    assert quote == verdict
    example = readme[readme.index("## An example verdict"):readme.index("## Commands")]
    rates = re.findall(r"\d+\.\d+%", example.split(quote.split()[-1])[-1])
    assert len(rates) >= 4
    for rate in rates:
        assert rate in report, rate


def test_the_readmes_table_of_decisions_is_the_bundled_reports():
    """The README's and reports/README.md's table of what the bundled reports decide is
    the one make_reports.py writes from their verdict.json files: regenerating a report
    and not its table fails here."""
    spec = importlib.util.spec_from_file_location("make_reports", ROOT / "scripts" / "make_reports.py")
    make_reports = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_reports)
    table = make_reports.decisions_table(ROOT / "reports")
    assert "| fabryka | 2 |" in table
    assert table in README.read_text()
    assert (ROOT / "reports" / "README.md").read_text() == "# Bundled balance reports\n\n" + table
