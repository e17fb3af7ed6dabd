"""A run directory's manifest as every reader (summary, report, compare, skill) takes it:
read once and checked field by field, so that a hand-edited or damaged manifest
(`[]`, `null`, `"n_games": "20000"`, garbled segments) is one line naming the field,
never a traceback or a figure computed from a wrong count."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from simcore.errors import UserError
from simcore.parts import LAYOUT, MANIFEST, segments_of

__all__ = ["read_manifest"]

# What every manifest says: which game and how many games (the readers that need the
# players and bots check those themselves).
_REQUIRED = ("game", "n_games")
# Field: (type, smallest value or None, what it is). Checked where present: manifests of
# older versions lack some (chunk_size, run_id) and are still read.
_FIELDS: dict[str, tuple[type, int | None, str]] = {
    "game": (str, None, "a game name"),
    "run_id": (str, None, "a run id"),
    "seating": (str, None, "a seating"),
    "players": (int, 1, "a whole number of players, at least 1"),
    "n_games": (int, 0, "a whole number of games"),
    "seed": (int, 0, "a whole number at least 0"),
    "chunk_size": (int, 1, "a whole number of games a part, at least 1"),
    "params": (dict, None, "an object of params"),
    "strategies": (list, None, "a list of strategies"),
    "segments": (list, None, "a list of [first game, end, chunk size]"),
    "layout": (int, 1, f"a part layout from 1 to {LAYOUT}"),
}


def read_manifest(run_dir: Path | str) -> dict[str, Any]:
    """The manifest of a run directory, or UserError (one line) naming what is wrong."""
    path = Path(run_dir)
    if not path.is_dir():
        raise UserError(f"run directory {path} does not exist")
    try:
        manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path} is not a run directory (no {MANIFEST})") from None
    except (OSError, ValueError) as e:  # ValueError: bad JSON or not UTF-8
        raise UserError(f"run directory {path}: {MANIFEST} is unreadable ({str(e).splitlines()[0]})") from None
    if not isinstance(manifest, dict):
        raise UserError(f"run directory {path}: {MANIFEST} is not a JSON object but {json.dumps(manifest)[:40]}")
    for key, (kind, least, what) in _FIELDS.items():
        if key not in manifest:
            continue
        value = manifest[key]
        # bool is an int to Python, never a count here.
        if not isinstance(value, kind) or isinstance(value, bool) or (least is not None and value < least) \
                or (key == "layout" and value > LAYOUT):
            raise UserError(f"run directory {path}: {MANIFEST} garbles {key} ({json.dumps(value)[:40]}: "
                            f"expected {what})")
    for s in manifest.get("strategies", []):
        if not isinstance(s, dict) or not isinstance(s.get("spec"), str):
            raise UserError(f"run directory {path}: {MANIFEST} garbles strategies ({json.dumps(s)[:40]}: "
                            "expected an object with a spec)")
    missing = [k for k in _REQUIRED if k not in manifest]
    if missing:
        raise UserError(f"run directory {path}: {MANIFEST} lacks {', '.join(missing)}")
    if "segments" in manifest:
        try:
            segments_of(manifest)
        except (ValueError, TypeError) as e:
            raise UserError(f"run directory {path}: {MANIFEST} garbles segments ({e})") from None
    return manifest
