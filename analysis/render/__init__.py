"""Rendering: words, figures and templates for the results the experiments compute."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2

__all__ = ["templates", "version"]


def templates(*, trim: bool = True, filters: dict[str, Any] | None = None,
              names: dict[str, Any] | None = None) -> jinja2.Environment:
    """The Jinja environment of every report: the templates in analysis/render/templates,
    autoescaped, an undefined name an error (a report never prints an empty hole);
    `trim` drops the newline after a block tag. `filters` and `names` (globals) are
    what a template uses."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("analysis.render", "templates"),
                             autoescape=jinja2.select_autoescape(["html", "j2"]),
                             undefined=jinja2.StrictUndefined, trim_blocks=trim, lstrip_blocks=trim)
    env.filters.update(filters or {})
    env.globals.update(names or {})
    return env


def version() -> str:
    """The installed chocosim's version, as a report states it."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("chocosim")
    except PackageNotFoundError:
        return "source checkout"
