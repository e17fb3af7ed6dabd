"""A run directory's manifest: the one place that reads and writes it.

Reading a run directory is layered, each layer the only place that does its job:

- simcore.parts: one part (its bytes, its tally, its proof against the manifest, its
  rows) and the checked list of a run's parts;
- this module: the manifest, read once and checked field by field, and written
  atomically; the runner opens a run directory through it (resume the same run,
  extend it, start a new one, or refuse);
- analysis.rundir.RunDir: what every command reads of a run (manifest, verified
  parts, results scanned, tallies), built on the two above.

The first two live in simcore because the runner reads manifests and parts to resume a
run, and nothing in simcore imports analysis. A hand-edited or damaged manifest (`[]`,
`null`, `"n_games": "20000"`, garbled segments) is one line naming the field, never a
traceback or a figure computed from a wrong count.
"""
from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from simcore.errors import UserError
from simcore.params import flatten
from simcore.parts import LAYOUT, LEGACY_GLOB, MANIFEST, PART_GLOB, chunk_of, part_index, segments_of, write_atomic
from simcore.strategy import Strategy

__all__ = ["MANIFEST", "IDENTITY", "BUILD", "read_manifest", "write_manifest", "held_games", "finished_games",
           "run_id_of", "git_revision", "package_version", "class_name", "prepare", "record_resume", "check_code"]

# What makes two runs the same run: a directory is resumed (or extended to more games)
# only if all of these match. The number of games is not part of it: game i of a run is
# the same game however many games the run has.
IDENTITY = ("game", "params", "strategies", "seating", "seed")
# The code that plays a run (recorded; a run resumed by other code lists it in resumed_by).
BUILD = ("version", "git_revision", "checked_build")

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


def read_manifest(run_dir: Path | str, *, resumable: bool = False) -> dict[str, Any]:
    """The manifest of a run directory, or UserError (one line) naming what is wrong.
    `resumable`: the runner's, which must say how the run is chunked."""
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
    if resumable and "chunk_size" not in manifest:
        raise UserError(f"run directory {path}: {MANIFEST} is not a chocosim manifest (no positive chunk_size)")
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


def finished_games(run_dir: Path | str) -> int:
    """The games in a run directory's finished parts, counted by their names (nothing
    is read or proven): fewer than its manifest asks for when a run was stopped before
    its end (killed, or a budget cut it); 0 where there is no run."""
    path = Path(run_dir)
    try:
        manifest = json.loads((path / MANIFEST).read_text())
    except (OSError, ValueError):
        return 0
    total = 0
    for part in path.glob(PART_GLOB):
        index = part_index(part)
        span = None if index is None else chunk_of(manifest, index)
        if span is not None:
            total += span[1] - span[0]
    return total


# ---- the runner opens a run directory ----

def run_id_of(identity: dict[str, Any]) -> str:
    """A content hash of the run's identity: the same run gets the same id wherever
    and however it is played."""
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=Path(__file__).parent, capture_output=True,
                              text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (done.stdout.strip() or None) if done.returncode == 0 else None


def git_revision() -> str | None:
    """The revision of the chocosim checkout this code runs from ("-dirty" if it has
    uncommitted changes); None when installed outside one. An installed copy may sit
    inside some other repository (a venv in a user's project): that one is not ours."""
    top = _git("rev-parse", "--show-toplevel")
    if top is None or Path(top).resolve() != Path(__file__).resolve().parents[1]:
        return None
    return _git("describe", "--always", "--dirty", "--abbrev=40")


def package_version() -> str | None:
    try:
        return version("chocosim")
    except PackageNotFoundError:  # a source checkout that was never pip-installed
        return None


def _describe_differences(old: dict[str, Any], new: dict[str, Any],
                          defaults: dict[str, Any] | None = None,
                          weight_defaults: dict[str, dict[str, float]] | None = None) -> list[str]:
    """What differs between a held run's identity and this one. A param the held run
    lacks (written before the param existed) matches when this run leaves it at its
    default (`defaults`, flattened), since a param is added with a default that plays as
    before: a run directory of an older chocosim stays resumable. So does a bot's weight
    (`weight_defaults`: class -> the value each weight played as before it existed: its
    declared default, or its WEIGHTS_BEFORE entry)."""
    diffs = []
    for key in IDENTITY:
        a, b = old.get(key), new[key]
        if a == b:
            continue
        if key == "params" and isinstance(a, dict):
            fa, fb = flatten(a), flatten(b)
            for name in sorted(fa.keys() | fb.keys()):
                if name not in fa and defaults is not None and fb.get(name) == defaults.get(name, ...):
                    continue
                if fa.get(name) != fb.get(name):
                    diffs.append(f"params.{name} is {_short(fa.get(name))} there, {_short(fb.get(name))} here")
        elif key == "strategies" and isinstance(a, list):
            specs_a = [s.get("spec") for s in a]
            specs_b = [s["spec"] for s in b]
            if specs_a != specs_b:
                diffs.append(f"strategies are {', '.join(map(str, specs_a))} there, "
                             f"{', '.join(specs_b)} here")
            elif not all(_same_bot(x, y, weight_defaults.get(y["class"], {}) if weight_defaults else {})
                         for x, y in zip(a, b)):
                diffs.append("strategy weights differ")
        else:
            diffs.append(f"{key} is {_short(a)} there, {_short(b)} here")
    return diffs


def _short(value: Any, width: int = 40) -> str:
    """A value's repr cut to `width` characters: a changed deck list is one line, not pages."""
    text = repr(value)
    return text if len(text) <= width else text[:width - 1] + "…"


def _leftovers(out: Path) -> list[Path]:
    """Temp files of an interrupted run (see write_atomic): a manifest, parts or tallies
    that were being written."""
    return [p for p in out.glob(".*.tmp")
            if p.name.startswith((f".{MANIFEST}.", ".part-"))]


def _held_manifest(out: Path) -> dict[str, Any] | None:
    """The manifest of an existing run directory, None for a new or empty directory;
    UserError for anything else (a file, a foreign directory, a broken manifest, a run
    that cannot be resumed)."""
    if not out.exists():
        return None
    if not out.is_dir():
        raise UserError(f"output {out} exists and is not a directory")
    if not (out / MANIFEST).exists():
        if set(out.iterdir()) - set(_leftovers(out)):
            raise UserError(f"output directory {out} is not empty and has no {MANIFEST}: "
                            "it is not a run directory; choose another one")
        return None
    manifest = read_manifest(out, resumable=True)
    if next(out.glob(LEGACY_GLOB), None) is not None:
        raise UserError(f"run directory {out} holds Parquet parts of an older chocosim: summary and "
                        "report still read it, but it cannot be resumed or extended; choose another "
                        "output directory")
    return manifest


def class_name(bot: Strategy) -> str:
    """How a manifest names a bot's class."""
    return f"{type(bot).__module__}.{type(bot).__qualname__}"


def _same_bot(held: Any, this: dict[str, Any], declared: dict[str, float]) -> bool:
    """The same bot (its entry alike but for the weights) with the same weights, a weight
    the held run lacks counting as the same when this run's value of it is the one it
    played as before it existed (`declared`)."""
    if not isinstance(held, dict) or not isinstance(held.get("weights"), dict) \
            or {**held, "weights": None} != {**this, "weights": None}:
        return False
    old, new = held["weights"], this["weights"]
    return all(old.get(k, ...) == new.get(k, ...) or (k not in old and new[k] == declared.get(k, ...))
               for k in old.keys() | new.keys())


def prepare(out: Path, identity: dict[str, Any], fresh: dict[str, Any],
             check: Callable[[dict[str, Any]], None], sizing: Callable[[int], int],
             defaults: dict[str, Any] | None = None,
             weight_defaults: dict[str, dict[str, float]] | None = None) -> dict[str, Any]:
    """Open the run directory: resume the same run, extend it to more games, start a
    new one, or refuse. Extending appends a segment [old n_games, new n_games, chunk
    size] to the manifest (see simcore.parts.chunks_of), so games 0..old n_games-1 and their parts stay
    as they are; `sizing(games)` chunks the new segment for its own size (a run begun
    with a one-game pilot would otherwise play every later game in parts of one).
    `check(manifest)` may refuse the run held there before anything is written."""
    manifest = _held_manifest(out)
    if manifest is not None:
        diffs = _describe_differences(manifest, identity, defaults, weight_defaults)
        if diffs:
            more = f"; and {len(diffs) - 3} more" if len(diffs) > 3 else ""
            raise UserError(f"run directory {out} holds a different run ({'; '.join(diffs[:3])}{more}); "
                            "choose another output directory")
        held = manifest.get("n_games")
        if not isinstance(held, int) or held < 1:
            raise UserError(f"run directory {out}: {MANIFEST} has no valid n_games ({held!r})")
        if fresh["n_games"] < held:
            raise UserError(f"run directory {out} holds a run of {held:,} games; n_games = "
                            f"{fresh['n_games']:,} would drop games: ask for at least {held:,} "
                            "(more extends the run)")
        check(manifest)
    for stale in _leftovers(out) if out.exists() else []:
        stale.unlink(missing_ok=True)
    if manifest is None:
        out.mkdir(parents=True, exist_ok=True)
        write_manifest(out, fresh)
        return fresh
    if fresh["n_games"] > manifest["n_games"]:
        segments = manifest.get("segments") or [[0, manifest["n_games"]]]
        added = fresh["n_games"] - manifest["n_games"]
        manifest["segments"] = [*segments, [manifest["n_games"], fresh["n_games"], sizing(added)]]
        manifest["n_games"] = fresh["n_games"]
        manifest["extended"] = [*manifest.get("extended", []), fresh["created"]]
        write_manifest(out, manifest)
    return manifest


def record_resume(out: Path, manifest: dict[str, Any], fresh: dict[str, Any]) -> None:
    """A run resumed by other code than the code that played it so far may get parts
    that differ in ways its identity cannot see (a rules fix): list that code in the
    manifest's resumed_by."""
    build = {key: fresh[key] for key in BUILD}
    known = [{key: manifest.get(key) for key in BUILD}]
    known += [{key: r.get(key) for key in BUILD} for r in manifest.get("resumed_by", [])]
    if build not in known:
        manifest["resumed_by"] = [*manifest.get("resumed_by", []), {**build, "at": fresh["created"]}]
        write_manifest(out, manifest)


def check_code(out: Path, name: str, held: dict[str, Any], fresh: dict[str, Any]) -> None:
    """Refuse to add games to a run of a designer's game whose code has changed since
    (its files' hashes differ): the run would mix two versions of the rules. A run of
    an older chocosim has no fingerprint to compare."""
    old, new = held.get("game_code"), fresh.get("game_code") or {}
    if old is None or old == new:
        return
    changed = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k)) \
        if isinstance(old, dict) else ["its fingerprint in the manifest"]
    more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
    raise UserError(f"run directory {out} holds a run of {name} played by other code of the game "
                    f"({', '.join(changed[:3])}{more} changed since): resuming would mix two versions of "
                    "its rules; choose another output directory, or restore that code to resume")
