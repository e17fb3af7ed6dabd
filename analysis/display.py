"""Results that show themselves in a notebook. A result class (a balance, a comparison, a
sweep...) takes `Shown` as a base: Jupyter calls its `_repr_html_` (the verdict sentence,
the key table and the figure) and `plot()` gives its key figure as a matplotlib Figure.
Neither is written here or in the result: both are the renderer's (analysis/render/), as
scikit-learn keeps its estimators apart from its Display objects. The computation never
imports rendering, so the renderer is named by the API, which may import both, when it
loads (`use`)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["Shown", "use"]

_renderer: Callable[[], Any] | None = None


def use(renderer: Callable[[], Any]) -> None:
    """Name the renderer: a function returning the module with `html(result)` and
    `plot(result, **options)`, loaded at the first display (it brings matplotlib)."""
    global _renderer
    _renderer = renderer


def _render() -> Any:
    if _renderer is None:
        raise RuntimeError("a result shows itself once analysis.api is imported (it names the renderer)")
    return _renderer()


class Shown:
    """A result that shows itself: `_repr_html_` for Jupyter, `plot()` for its figure."""

    __slots__ = ()

    def _repr_html_(self) -> str:
        """The verdict sentence, the key table and the figure, as an HTML fragment."""
        return _render().html(self)

    def plot(self, *args: Any, **options: Any) -> Any:
        """The key figure as a matplotlib Figure (each result's options: see
        analysis.render.notebook); with ax=, drawn on those axes, which are returned."""
        return _render().plot(self, *args, **options)
