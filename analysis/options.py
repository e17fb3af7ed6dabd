"""The list options of every command, checked in one place, each refusal one line naming
the option, its value and what is allowed.

A comma-separated value (--ladder a,b; --players 2,4; --seats random,greedy) has no empty
entry and, unless an entry may stand twice in it (a bot in two seats), no entry twice; a
comma inside a spec's parentheses does not separate entries. A repeatable option (--set,
--vary, --goal, --variant) is given once for each thing it names: a second --set of the
same param would silently win over the first."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from simcore.errors import UserError
from simcore.params import parse_set

__all__ = ["split_list", "each_once", "param_name", "seat_specs", "set_overrides"]


def split_list(option: str, text: str, *, what: str, example: str, repeats: bool = False) -> list[str]:
    """The entries of `option`'s comma-separated value `text`, stripped; `what` names the
    entries ("strategy specs"), `example` is a good value. `repeats`: an entry may stand
    twice (seats)."""
    entries, depth, start, lowest = [], 0, 0, 0
    for i, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        lowest = min(lowest, depth)
        if ch == "," and depth == 0:
            entries.append(text[start:i].strip())
            start = i + 1
    entries.append(text[start:].strip())
    expected = f"expected {what}, comma-separated, e.g. {example}"
    if depth != 0 or lowest < 0:
        raise UserError(f"{option} {text!r}: unbalanced parentheses; {expected}")
    if not all(entries):
        raise UserError(f"{option} {text!r}: an entry is empty; {expected}")
    if not repeats:
        twice = next((e for k, e in enumerate(entries) if e in entries[:k]), None)
        if twice is not None:
            raise UserError(f"{option} {text!r}: {twice} is listed twice; {expected}, each once")
    return entries


def param_name(item: str) -> str:
    """The param a `NAME=...` value names (--set, --vary)."""
    return item.partition("=")[0].strip()


def each_once(option: str, values: Sequence[str] | None, *, what: str,
              key: Callable[[str], str] = str.strip) -> list[str]:
    """The values of a repeatable `option` (none when not given), refused if one is empty
    or two name the same thing (`key` of the value: the value itself, or the param it
    sets); `what` names that thing ("param")."""
    seen: dict[str, str] = {}
    for value in values or []:
        if not value.strip():
            raise UserError(f"{option} {value!r}: empty; expected a {what}")
        name = key(value)
        if name in seen:
            given = f"{seen[name]!r} and {value!r}" if seen[name] != value else f"{value!r}"
            raise UserError(f"{option} is given twice for the {what} {name!r} ({given}); give each {what} once")
        seen[name] = value
    return list(values or [])


def seat_specs(text: str, option: str = "--seats") -> list[str]:
    """One strategy spec per seat (a spec may sit in several seats)."""
    return split_list(option, text, what="strategy specs, one per seat", example="random,greedy", repeats=True)


def set_overrides(sets: Sequence[str] | None) -> dict[str, Any]:
    """The params of --set key=value options, each param set once."""
    return dict(parse_set(item) for item in each_once("--set", sets, what="param", key=param_name))
