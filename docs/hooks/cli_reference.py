"""mkdocs hook: the command-line reference is written at build time from the typer app
itself (`analysis.cli:app`), each command's `--help` as the installed `chocosim` prints
it, so the reference cannot fall behind the commands."""
from __future__ import annotations

import contextlib
import io
import os

MARKER = "<!-- chocosim commands -->"


def _help(argv: list[str]) -> str:
    """What `chocosim ARGV... --help` prints, through the command's own entry point (which
    names every option's kind in words)."""
    from analysis.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        main([*argv, "--help"])
    return out.getvalue().rstrip()


def commands() -> list[tuple[str, str]]:
    """(name, first line of its help) of every `chocosim` command, in the app's order."""
    import typer

    from analysis.cli import app

    group = typer.main.get_command(app)
    return [(name, (command.help or "").strip().split("\n\n")[0].replace("\n", " "))
            for name, command in group.commands.items() if not command.hidden]


def reference() -> str:
    # click wraps help to the terminal's width: the same width on every machine.
    columns = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"
    try:
        parts = ["```text", "$ chocosim --help", _help([]), "```", ""]
        for name, summary in commands():
            parts += [f"## {name}", "", summary, "", "```text", f"$ chocosim {name} --help", _help([name]),
                      "```", ""]
    finally:
        if columns is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = columns
    return "\n".join(parts)


def on_page_markdown(markdown: str, page, **kwargs) -> str:
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, reference())
