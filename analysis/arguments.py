"""The api's argument check: every argument of a job against its annotations before it
runs, so a wrong type from a notebook is one line naming the argument, as the CLI's are."""
from __future__ import annotations

import functools
import inspect
import numbers
import re
import types
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from simcore.errors import ArgumentError

__all__ = ["checked"]


def _fits(value: Any, hint: Any) -> bool:
    """Whether `value` is what the annotation `hint` asks for (unions, None, numbers,
    strings, paths, sequences and dicts of them; other hints are not checked)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return True
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, a) for a in args)
    if hint is type(None):
        return value is None
    if hint in (int, float):  # numpy's integers and floats too; never a bool
        kind = numbers.Integral if hint is int else numbers.Real
        return isinstance(value, kind) and not isinstance(value, bool)
    if origin in (Sequence, list, tuple):
        if isinstance(value, (str, bytes)) or not (isinstance(value, Sequence) or hasattr(value, "__array__")):
            return False
        return not args or args[-1] is Ellipsis or all(_fits(v, args[0]) for v in value)
    if origin is dict:
        return isinstance(value, dict) and all(_fits(k, args[0]) and _fits(v, args[1]) for k, v in value.items())
    if hint in (str, bool, Path):
        return isinstance(value, hint)
    return True  # the engine's own objects (a GameSpec, Params) are the callee's to check


def _hint_text(hint: Any) -> str:
    if isinstance(hint, type):
        return hint.__name__
    return re.sub(r"\b(typing|collections\.abc|pathlib|polars\.\w+)\.", "", str(hint)).replace("NoneType", "None")


def checked(function):
    """Check every argument against the function's annotations before it runs: a wrong
    type is one line (ArgumentError, a UserError and a TypeError) naming the argument,
    not an error from deep inside."""
    signature = inspect.signature(function)
    # The parameters' annotations only: a result's type may be one imported for type
    # checkers alone (see above).
    hints = {name: eval(p.annotation, function.__globals__) if isinstance(p.annotation, str) else p.annotation
             for name, p in signature.parameters.items() if p.annotation is not inspect.Parameter.empty}

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as e:
            raise ArgumentError(f"api.{function.__name__}: {e}") from None
        for name, value in bound.arguments.items():
            if name in hints and not _fits(value, hints[name]):
                shown = repr(value)
                shown = shown if len(shown) <= 40 else f"{shown[:37]}..."
                raise ArgumentError(f"api.{function.__name__}: {name} = {shown} ({type(value).__name__}); "
                                    f"{name} takes {_hint_text(hints[name])}")
        return function(*args, **kwargs)

    return wrapper
