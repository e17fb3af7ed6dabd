"""Where a command's words go: its result on stdout (in words, or with --json as JSON),
its progress and warnings on stderr (analysis.progress). So `chocosim ... > result.txt`
holds the result, and `2>/dev/null` loses none of it."""
from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Annotated, Any

import typer

from analysis.progress import Progress

__all__ = ["JsonOpt", "QuietOpt", "progress", "result_lines", "result_json", "written"]

JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as JSON (on stdout, as the words are).")]
QuietOpt = Annotated[bool, typer.Option("--quiet", help="No progress on stderr (warnings still are).")]


def progress(what: str, quiet: bool, **kw: Any) -> Progress:
    """The command's one progress (a bar on a terminal, a line every few seconds when piped)."""
    return Progress(what, quiet=quiet, **kw)


def result_lines(lines: Iterable[str]) -> None:
    # Plain print: rich would wrap long lines to the terminal's width.
    for line in lines:
        print(line, flush=True)


def result_json(data: Any) -> None:
    """`data`: plain JSON values (analysis.api.as_json makes them of a result)."""
    print(json.dumps(data, indent=1, allow_nan=False), flush=True)


def written(html: Any, pdf: Any = None) -> dict[str, str | None]:
    """The report files a command wrote, for its JSON."""
    return {"html": None if html is None else str(html), "pdf": None if pdf is None else str(pdf)}
