"""The name of a turn position, shared by the experiments (which label their measures with
it) and render/formats.py (which writes every other number): position 0 is the
"1st player", position = ordinal - 1."""
from __future__ import annotations

__all__ = ["nth", "ordinal"]


def nth(position: int) -> str:
    """Turn position 0 as "1st", 1 as "2nd", ..."""
    n = position + 1
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def ordinal(position: int) -> str:
    """Turn position 0 is the "1st player" (position = ordinal - 1)."""
    return f"{nth(position)} player"
