"""The one step from a matplotlib figure to what a report holds: the SVG text, inlined
in the page or as a data: URI (no request ever leaves the page)."""
from __future__ import annotations

import base64
import io
import re
from dataclasses import dataclass

import os

import matplotlib

# No display (before pyplot loads), except in a notebook: there the kernel's inline backend
# puts a result's figures into the page.
if "inline" not in os.environ.get("MPLBACKEND", ""):
    matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

__all__ = ["svg", "inline", "data_uri", "Image", "image", "plt", "axes"]


def svg(fig: Figure, *, tight: bool = True) -> str:
    """The figure as an SVG document, laid out tight (`tight`: cropped to what is drawn);
    the figure is closed."""
    buf = io.StringIO()
    fig.tight_layout()
    fig.savefig(buf, format="svg", **({"bbox_inches": "tight"} if tight else {}))
    plt.close(fig)
    return buf.getvalue()


def inline(document: str) -> str:
    """An SVG document as an element of the page: no XML prolog, no metadata block (its
    namespace URLs)."""
    element = re.sub(r"^.*?<svg", "<svg", document, flags=re.S)
    return re.sub(r"<metadata>.*?</metadata>", "", element, flags=re.S)


def data_uri(document: str) -> str:
    """An SVG document as a data: URI for an <img>."""
    return "data:image/svg+xml;base64," + base64.b64encode(document.encode()).decode()


@dataclass(frozen=True)
class Image:
    """A figure as a page shows it: <img src alt>."""

    src: str  # data: URI of the SVG
    alt: str


def image(document: str | Figure, alt: str) -> Image:
    """An SVG document (or a matplotlib figure, drawn tight) as an <img> of the page."""
    return Image(data_uri(document if isinstance(document, str) else svg(document)), alt)


def axes(ax: Axes | None, size: tuple[float, float]) -> Axes:
    """The axes to draw a figure on: `ax` when given (a notebook's own figure), else those
    of a new figure of `size` inches."""
    return ax if ax is not None else plt.subplots(figsize=size)[1]
