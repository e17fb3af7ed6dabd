"""How every report, the CLI and the README write a number: one answer for each kind, so
the same number reads the same everywhere.

- a turn position: `ordinal(0)` is "1st player" (position = ordinal - 1), `nth(0)` "1st"
  (defined in analysis/positions.py, where the experiments name their measures too);
- a rate with its 95% interval: "51.03% (95% CI 50.94–51.12%)", as many decimals as the
  interval's width needs (up to two);
- a difference of rates: "+1.2 percentage points (95% CI +0.5 to +1.9)", a margin of rates
  "±1 percentage point": never bare "points", which in a game are score points;
- a p or q value: "< 0.001" below a thousandth (a million-game run makes p values like
  4.52e-161, whose digits mean nothing to a reader), else three significant digits,
  "n/a" where there is none; in a sentence "p < 0.001", "q = 0.0348";
- a count of wins: whole ("45,724"), one decimal only where shared victories made it
  fractional.
"""
from __future__ import annotations

import math
from typing import Protocol

from analysis.positions import nth, ordinal

__all__ = ["nth", "ordinal", "decimals", "pct", "rate", "points", "within", "bound", "least", "pvalue", "p_is", "count"]


class Interval(Protocol):
    value: float
    low: float
    high: float


def decimals(half_width: float) -> int:
    """Enough decimals (of a percentage) to show an interval of this half-width (a share),
    no more: 0 to 2."""
    if not math.isfinite(half_width) or half_width <= 0:
        return 1
    return int(min(2, max(0, 1 - math.floor(math.log10(half_width * 100)))))


def pct(x: float, digits: int = 1) -> str:
    """A share as a percentage: "51.0%"."""
    return f"{100 * x:.{digits}f}%"


def rate(r: Interval) -> str:
    """A rate with its 95% interval: "51.03% (95% CI 50.94–51.12%)"."""
    d = decimals((r.high - r.low) / 2)
    return f"{pct(r.value, d)} (95% CI {100 * r.low:.{d}f}–{pct(r.high, d)})"


def points(diff: float, low: float, high: float) -> str:
    """A difference of rates (shares) in percentage points with its 95% interval:
    "+1.2 percentage points (95% CI +0.5 to +1.9)"."""
    d = decimals((high - low) / 2)
    return f"{100 * diff:+.{d}f} percentage points (95% CI {100 * low:+.{d}f} to {100 * high:+.{d}f})"


def within(margin: float) -> str:
    """A margin of rates: "±1 percentage point", "±0.5 percentage points"."""
    return f"±{margin:g} percentage point" + ("" if margin == 1 else "s")


def bound(x: float) -> str:
    """A bound rounded outwards to a tenth: an agreement is never claimed tighter."""
    return f"{math.ceil(10 * x - 1e-9) / 10:.1f}"


def least(x: float) -> str:
    """A change shown, rounded down to a tenth: never claimed larger."""
    return f"{math.floor(10 * x) / 10:.1f}"


def pvalue(p: float) -> str:
    """A p or q value for a table cell: "< 0.001", "0.0348", "n/a"."""
    if not math.isfinite(p):
        return "n/a"
    return "< 0.001" if p < 1e-3 else f"{p:.3g}"


def p_is(p: float, name: str = "p") -> str:
    """A p or q value in a sentence: "p < 0.001", "q = 0.0348", "p n/a"."""
    shown = pvalue(p)
    return f"{name} {shown}" if shown.startswith("<") or shown == "n/a" else f"{name} = {shown}"


def count(x: float) -> str:
    """A count of wins: "45,724", or "45,724.5" where shared victories made it fractional."""
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.1f}"
