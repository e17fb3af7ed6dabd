"""The layout of the code base and its import rules, read from the sources (ast): imports
go downward only (analysis -> strategies -> simcore; inside analysis cli -> api ->
{experiments, render} -> the shared modules), experiments import no rendering, no
module imports itself back through others, every module of analysis/ sits in its room,
and no module is longer than a reader can hold (the games' rules and the bots apart)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
from helpers import ROOT

PACKAGES = ("simcore", "strategies", "analysis")
# What every experiment shares, under analysis/ itself (DESIGN.md's layout).
SHARED = {"metrics", "stats", "ratings", "sequential", "summary", "options", "rundir", "tally", "effects", "positions",
          "display", "glossary", "progress", "arguments"}
# analysis/'s rooms, and the rooms each may import from.
ALLOWED = {
    "cli": {"cli", "api", "shared"},
    "api": {"api", "experiments", "render", "shared"},
    "render": {"render", "experiments", "shared"},
    "experiments": {"experiments", "shared"},
    "shared": {"shared"},
}
MAX_LINES = 600


def _modules() -> dict[str, Path]:
    """Every Python module of the three packages, by dotted name."""
    out = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


MODULES = _modules()


def _runs(tree: ast.AST):
    """Every node that runs: all of them but the bodies of `if TYPE_CHECKING:` (imports
    for type checkers alone)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from (n for child in node.orelse for n in [child, *_runs(child)])
            continue
        yield node
        yield from _runs(node)


def _imports(name: str, path: Path) -> set[str]:
    """The modules of the three packages that `name` imports, anywhere in it (a function's
    imports count: they run too)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in _runs(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, *([base] if base else [])])
            submodules = {f"{base}.{a.name}" for a in node.names} & MODULES.keys()
            found |= submodules
            if len(submodules) < len(node.names):  # names defined in the module itself
                found.add(base)
    return {m for m in found if m.split(".")[0] in PACKAGES and m in MODULES and m != name}


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _room(name: str) -> str:
    """The room of a module of analysis/ (the package itself counts as shared)."""
    parts = name.split(".")
    if len(parts) == 1:
        return "shared"
    if parts[1] in ("cli", "experiments", "render"):
        return parts[1]
    if parts[1] == "api":
        return "api"
    if parts[1] in SHARED:
        return "shared"
    raise AssertionError(f"{name} sits in no room of analysis/ (cli/, api.py, experiments/, render/, "
                         f"or the shared {', '.join(sorted(SHARED))})")


def test_the_graph_sees_the_imports_it_must():
    # Known edges, including an import inside a function: a parser that missed them
    # would pass every rule below.
    assert "analysis.api" in GRAPH["analysis.cli"]
    assert "analysis.render.compare" in GRAPH["analysis.api"]  # imported inside api.compare
    assert "simcore.inmemory" in GRAPH["analysis.experiments.tune"]
    assert {"analysis", "analysis.cli", "analysis.render", "simcore"} <= MODULES.keys()


def test_packages_import_downward_only():
    order = {p: k for k, p in enumerate(PACKAGES)}
    wrong = [f"{a} imports {b}" for a, targets in GRAPH.items() for b in targets
             if order[b.split(".")[0]] > order[a.split(".")[0]]]
    assert not wrong


def test_every_module_of_analysis_sits_in_its_room():
    for name in MODULES:
        if name.startswith("analysis"):
            _room(name)


def test_inside_analysis_imports_go_down_the_rooms():
    wrong = [f"{a} ({_room(a)}) imports {b} ({_room(b)})" for a, targets in GRAPH.items() if a.startswith("analysis")
             for b in targets if b.startswith("analysis") and _room(b) not in ALLOWED[_room(a)]]
    assert not wrong


def test_the_cli_calls_only_the_api():
    # Of analysis, the CLI uses the api, and the option parsing and the progress shared with it.
    wrong = [f"{a} imports {b}" for a, targets in GRAPH.items() if a.startswith("analysis.cli")
             for b in targets if b.startswith("analysis") and _room(b) != "cli"
             and b not in ("analysis.api", "analysis.options", "analysis.progress")]
    assert not wrong


def test_experiments_import_no_rendering():
    assert not [f"{a} imports {b}" for a, targets in GRAPH.items() if a.startswith("analysis.experiments")
                for b in targets if b.startswith("analysis.render")]


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of the graph, or None (depth-first search)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_module_of_analysis_imports_itself_back():
    analysis = {a: {b for b in t if b.startswith("analysis")} for a, t in GRAPH.items() if a.startswith("analysis")}
    cycle = _cycle(analysis)
    assert cycle is None, " -> ".join(cycle)


def test_the_cycle_finder_finds_a_planted_circle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


@pytest.mark.parametrize("path", sorted(
    str(p.relative_to(ROOT)) for folder in ("analysis", "simcore", "scripts")
    for p in (ROOT / folder).rglob("*") if p.suffix in (".py", ".pyx", ".pxd")
    and not p.relative_to(ROOT).as_posix().startswith("simcore/games/")))
def test_no_module_is_longer_than_a_reader_can_hold(path):
    lines = len((ROOT / path).read_text().splitlines())
    assert lines <= MAX_LINES, f"{path} has {lines} lines (at most {MAX_LINES} outside the games' rules and the bots)"


def test_the_api_writes_out_the_defaults_of_the_experiments():
    # The api loads each experiment only when its job runs, so it writes their defaults out.
    from analysis import api
    from analysis.experiments.compare import DEFAULT_MARGIN
    from analysis.metrics import MIN_EFFECT

    assert (api.DEFAULT_MARGIN, api.MIN_EFFECT) == (DEFAULT_MARGIN, MIN_EFFECT)
