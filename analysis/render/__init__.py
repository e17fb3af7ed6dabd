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
    what a template uses; a full page gets the glossary footer of the words it uses."""
    import jinja2

    from analysis.glossary import with_footer
    from analysis.render.formats import ordinal, within

    class Page(jinja2.Template):
        """A page ends with the glossary entries of the words it uses."""

        def render(self, *args: Any, **kwargs: Any) -> str:
            return with_footer(super().render(*args, **kwargs))

    env = jinja2.Environment(loader=jinja2.PackageLoader("analysis.render", "templates"),
                             autoescape=jinja2.select_autoescape(["html", "j2"]),
                             undefined=jinja2.StrictUndefined, trim_blocks=trim, lstrip_blocks=trim)
    env.template_class = Page
    env.filters.update(filters or {})
    # Every page names turn positions and margins of rates the one way.
    env.globals.update({"ordinal": ordinal, "within": within, **(names or {})})
    return env


def version() -> str:
    """The installed chocosim's version, as a report states it."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("chocosim")
    except PackageNotFoundError:
        return "source checkout"
