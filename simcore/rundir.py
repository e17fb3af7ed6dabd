"""A run directory's manifest: the one place that reads and writes it.

Reading a run directory is layered, each layer the only place that does its job:

- simcore.parts: one part (its bytes, its tally, its proof against the manifest, its
  rows) and the checked list of a run's parts;
- this module: the manifest, read once and checked field by field, and written
  atomically;
- analysis.rundir.RunDir: what every command reads of a run (manifest, verified
  parts, results scanned, tallies), built on the two above.

The first two live in simcore because the runner reads manifests and parts to resume a
run, and nothing in simcore imports analysis. A hand-edited or damaged manifest (`[]`,
`null`, `"n_games": "20000"`, garbled segments) is one line naming the field, never a
traceback or a figure computed from a wrong count.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from simcore.errors import UserError
from simcore.parts import LAYOUT, MANIFEST, segments_of, write_atomic

__all__ = ["MANIFEST", "read_manifest", "write_manifest", "held_games"]

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


def write_manifest(out: Path, manifest: dict[str, Any]) -> None:
    write_atomic(out / MANIFEST, lambda p: p.write_text(json.dumps(manifest, indent=2) + "\n"))


def held_games(run_dir: Path | str) -> int:
    """The games a run directory's manifest says it holds; 0 where there is no run yet
    or its manifest does not say (the runner then refuses or starts the run itself)."""
    try:
        held = json.loads((Path(run_dir) / MANIFEST).read_text()).get("n_games")
    except (OSError, ValueError, AttributeError):
        return 0
    return held if type(held) is int and held >= 0 else 0
