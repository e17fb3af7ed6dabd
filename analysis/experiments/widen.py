"""Which way to widen a knob's range when no value tried reaches fair: shared by the
balance report's knobs and `sweep`'s fair points."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from analysis.positions import ordinal

__all__ = ["widen"]


def widen(param: str, values: Sequence[float], advantage: Sequence[float], position: int = 0) -> str | None:
    """A sentence saying which way to widen the range of `param` when no value tried
    reaches fair, from the advantage of the player at turn `position` (its win rate
    minus the fair share) at each value tried; None when the advantage changes sign
    among them (a fair point is there) or fewer than two numeric values were tried. The
    direction is the least-squares line's through the values: the side where the
    advantage shrinks towards zero, with that line's crossing as a first guess (unless
    it lies more than ten spans of the values away)."""
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return None
    x, y = np.asarray(values, dtype=float), np.asarray(advantage, dtype=float)
    if len(x) < 2 or np.ptp(x) == 0 or (y.min() <= 0 <= y.max()):
        return None
    slope, intercept = np.polyfit(x, y, 1)
    who, ahead = ordinal(position), "above" if y.min() > 0 else "below"
    span = f"{ahead} its fair share at every value from {x.min():g} to {x.max():g}"
    if abs(slope) * np.ptp(x) < 1e-9:  # the same rate at every value (up to rounding)
        return f"The {who}'s win rate stays {span}, with no trend to follow."
    # Towards fair: where the advantage shrinks (down if the player is ahead, up if behind).
    larger = (slope < 0) == (y.min() > 0)
    guess = -intercept / slope
    near = f" (a straight line through them reaches fair near {guess:.2f})" \
        if abs(guess - x.mean()) <= 10 * np.ptp(x) else ""
    return (f"The {who}'s win rate {'rises' if slope > 0 else 'falls'} as "
            f"{param} grows, {span}: try values {f'above {x.max():g}' if larger else f'below {x.min():g}'}"
            f"{near}.")
