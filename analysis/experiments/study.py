"""The optuna study of a tuning: kept in SQLite storage in the tuning directory (re-running
continues it; an interrupted run keeps every finished trial), a sampler seeded per trial
so a resumed study proposes what the uninterrupted one would have, and one tune at a
time holding the directory."""
from __future__ import annotations

import contextlib
import functools
import inspect
import json
import os
import sqlite3
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import optuna
from optuna.exceptions import StorageInternalError
from sqlalchemy.exc import SQLAlchemyError

from analysis import progress
from simcore.errors import UserError
from simcore.parts import write_text

__all__ = ["open_study", "enqueue_baseline", "exclusive", "search", "importances_of", "write_file", "write_json",
           "STUDY_DB", "CONFIG"]

STUDY_DB = "study.db"
CONFIG = "config.json"


# ---- the study ----

def open_study(out: Path, directions: list[str], config: dict[str, Any], seed: int):
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    out.mkdir(parents=True, exist_ok=True)
    path = out / CONFIG
    if path.exists():
        try:
            old = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise UserError(f"tuning directory {out}: {CONFIG} is unreadable ({e})") from None
        diffs = [k for k in sorted(config.keys() | old.keys()) if k != "trials" and old.get(k) != config.get(k)]
        if diffs:
            raise UserError(f"tuning directory {out} holds a different tuning (it differs in "
                            f"{', '.join(diffs)}); choose another --out")
    elif any(out.iterdir()):
        raise UserError(f"output directory {out} is not empty and holds no tuning ({CONFIG}); choose another --out")
    storage = f"sqlite:///{(out / STUDY_DB).resolve()}"
    study = optuna.create_study(storage=storage, study_name="chocosim", directions=directions,
                                sampler=_sampler(seed, 0), load_if_exists=True)
    write_file(path, json.dumps(config, indent=2) + "\n")
    return study


def _sampler(seed: int, finished: int):
    """The sampler that proposes the trial after `finished` finished ones: TPE seeded
    from (seed, finished). TPE reads the finished trials from the storage and keeps
    only its random state: seeded per trial, a resumed study proposes what the
    uninterrupted one would have (seeded once per start, it proposed other trials)."""
    trial_seed = int(np.random.SeedSequence([seed, finished]).generate_state(1)[0])
    return optuna.samplers.TPESampler(seed=trial_seed, multivariate=True)


def enqueue_baseline(study, params: dict[str, Any]) -> None:
    """Make `params` the first trial of a study that has none finished or waiting (also
    when the first run was interrupted during it)."""
    held = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED, optuna.trial.TrialState.WAITING)
    if not any(t.state in held for t in study.get_trials(deepcopy=False)):
        study.enqueue_trial(params)


def exclusive(tune: Callable[..., Any]) -> Callable[..., Any]:
    """Hold the tuning directory (its `out` argument) for the whole of `tune`: a second
    tune into it is refused in one line (two at once ran twice the trials, or one died
    in SQLite). An flock on the directory itself: the kernel drops it with the process
    (a killed tune leaves no stale lock), and it adds no file to the directory."""
    signature = inspect.signature(tune)

    @functools.wraps(tune)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            import fcntl
        except ImportError:  # not on Windows: unlocked there
            return tune(*args, **kwargs)
        out = Path(signature.bind(*args, **kwargs).arguments["out"])
        made = not out.exists()
        try:
            out.mkdir(parents=True, exist_ok=True)
            fd = os.open(out, os.O_RDONLY)
        except OSError as e:
            raise UserError(f"cannot use {out} as the tuning directory: {e.strerror or e}") from None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise UserError(f"tuning directory {out} is in use by another tune; wait for it to "
                                "finish (then run this command to continue it) or choose another --out") from None
            with _storage_errors(out):
                return tune(*args, **kwargs)
        except BaseException:
            if made and not any(out.iterdir()):  # refused before the study began: leave no trace
                out.rmdir()
            raise
        finally:
            os.close(fd)  # and with it the lock

    return wrapper


@contextlib.contextmanager
def _storage_errors(out: Path) -> Iterator[None]:
    """The study's SQLite database failing (a full or read-only disk) as one line: SQLite
    commits a trial whole or not at all, so every finished trial is kept."""


    try:
        yield
    except (SQLAlchemyError, StorageInternalError, sqlite3.Error) as e:
        cause: BaseException | None = e
        while cause is not None and not isinstance(cause, sqlite3.Error):
            # SQLAlchemy keeps the driver's error as .orig; optuna chains it.
            cause = getattr(cause, "orig", None) or cause.__cause__ or cause.__context__
        reason = str(cause or e).splitlines()[0]
        raise UserError(f"cannot write the study {out / STUDY_DB}: {reason}; the finished trials are kept: "
                        "free some space (or make it writable) and run the same command again") from None


def _finished(study) -> int:
    return sum(t.state in (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED)
               for t in study.get_trials(deepcopy=False))


def search(study, trials: int, distributions: dict[str, Any],
            evaluate: Callable[[Any], Sequence[float] | None],
            describe_best: Callable[[], str], quiet: bool, seed: int = 0) -> int:
    """Ask, evaluate and tell until the study holds `trials` finished trials; returns how
    many this call ran. Each trial's sampler is seeded from `seed` and the number of
    trials finished before it (see _sampler). `evaluate` gets the optuna trial (its params, and user attributes
    to record); returning None marks a candidate the game refuses (pruned). Ctrl-C marks the running trial failed and propagates: the finished ones
    stay in the storage for the next run."""
    done = _finished(study)
    todo = max(0, trials - done)
    if not quiet:
        progress.expect(trials, progress.TRIALS)
        progress.advance(done, progress.TRIALS, resumed=True)
        progress.phase(describe_best())
    for k in range(todo):
        study.sampler = _sampler(seed, done + k)  # every trial before it finished
        trial = study.ask(distributions)
        try:
            values = evaluate(trial)
        except BaseException:
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            raise
        if values is None:
            study.tell(trial, state=optuna.trial.TrialState.PRUNED)
        else:
            study.tell(trial, list(values))
        if not quiet:
            progress.advance(1, progress.TRIALS)
            progress.phase(describe_best())
    return todo


def importances_of(study) -> dict[str, float]:
    """optuna's parameter importances (its default evaluator); none when too few trials
    finished or the objective never varied, where they would mean nothing."""


    values = [t.value for t in study.trials if t.value is not None]
    if len(values) < 8 or len(set(values)) < 2:
        return {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dict(optuna.importance.get_param_importances(study))


def write_file(path: Path, text: str) -> None:
    try:
        write_text(path, text)
    except OSError as e:
        raise UserError(f"cannot write {path}: {e.strerror}") from None


def write_json(path: Path, data: Any) -> None:
    write_file(path, json.dumps(data, indent=2, default=float) + "\n")
