"""Progress of a command's long work, on stderr, in one place for every command.

A command opens one `Progress` around its work: on a terminal it is one rich bar (what is
done, the rate, the time left); when stderr is not a terminal (piped into a file or a
log) it is a plain line every `interval` seconds saying what is done, the rate and the
ETA; `quiet` shows nothing. The time left is the budget's where the command has one
(`balance --minutes`), else what is left of the expected work at the rate so far.

Experiments never print: they report through this module's functions (`expect`,
`advance`, `phase`, `say`), which go to the progress open in this context, if any; the
runner's games reach it through simcore.runner.reporting (simcore cannot import this).
Progress never changes a result: it only counts what the work tells it.
"""
from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime, timedelta
from typing import IO, Any

__all__ = ["Progress", "expect", "advance", "phase", "say", "INTERVAL", "duration", "GAMES", "RUNS", "TRIALS"]

# What a progress counts: games played (the runner's), run directories analysed (a
# report's), trials of a tuning.
GAMES, RUNS, TRIALS = "games", "runs", "trials"

# Seconds between two plain lines when stderr is not a terminal; the environment
# variable CHOCOSIM_PROGRESS_INTERVAL overrides it (0: a line at every step, for tests).
INTERVAL = 10.0
INTERVAL_VARIABLE = "CHOCOSIM_PROGRESS_INTERVAL"

_current: ContextVar[Progress | None] = ContextVar("chocosim_progress", default=None)


def expect(n: float, unit: str = GAMES) -> None:
    """Add `n` units to the work the open progress expects (its total). A progress counts
    one unit: the work of another (a report's runs analysed within a balance that counts
    games) is not counted."""
    if (p := _current.get()) is not None and p.unit == unit:
        p.expect(n)


def advance(n: float = 1, unit: str = GAMES, *, resumed: bool = False) -> None:
    """`n` units done; `resumed`: done before this command (they count as done, not in the rate)."""
    if (p := _current.get()) is not None and p.unit == unit:
        p.advance(n, resumed=resumed)


def phase(text: str) -> None:
    """What the work is doing now, shown beside the progress."""
    if (p := _current.get()) is not None:
        p.phase(text)


def say(text: str) -> None:
    """A line of its own on stderr (e.g. a plan), unless quiet."""
    if (p := _current.get()) is not None:
        p.say(text)


def duration(seconds: float) -> str:
    """A time span as a person reads it: "45 s", "9 min 20 s", "2 h 05 min"."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def _interval() -> float:
    text = os.environ.get(INTERVAL_VARIABLE)
    if text is None:
        return INTERVAL
    try:
        return max(0.0, float(text))
    except ValueError:
        return INTERVAL


class Progress:
    """One command's progress: `what` (the command), counted in `unit`s against `total`
    (grown by `expect`), or against a time `budget` in seconds. Use as a context manager:
    inside it, the module's functions and the runner's games report here."""

    def __init__(self, what: str, *, unit: str = GAMES, total: float = 0, budget: float | None = None,
                 quiet: bool = False, stream: IO[str] | None = None, terminal: bool | None = None,
                 interval: float | None = None, clock: Callable[[], float] = time.monotonic):
        self.what, self.unit, self.total, self.budget = what, unit, total, budget
        self.quiet = quiet
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = _is_terminal(self.stream) if terminal is None else terminal
        self.interval = _interval() if interval is None else interval
        self.clock = clock
        self.done = 0.0  # units done, resumed ones included
        self.fresh = 0.0  # units done by this command: the rate's
        self.now_doing = ""
        self.start = self.last = clock()
        self._lock = threading.RLock()
        self._bar: Any = None
        self._stop = threading.Event()
        self._stack = ExitStack()

    # ---- what the work tells ----

    def expect(self, n: float) -> None:
        with self._lock:
            self.total += n
        self._event()

    def advance(self, n: float = 1, *, resumed: bool = False) -> None:
        with self._lock:
            self.done += n
            if not resumed:
                self.fresh += n
        self._event()

    def phase(self, text: str) -> None:
        with self._lock:
            self.now_doing = text
        self._event()

    def say(self, text: str) -> None:
        if self.quiet:
            return
        if self._bar is not None:
            self._bar.console.print(text, soft_wrap=True, markup=False, highlight=False)
        else:
            self._write(text)

    # ---- what is shown ----

    def elapsed(self) -> float:
        return self.clock() - self.start

    def rate(self) -> float:
        """Units a second done by this command."""
        elapsed = self.elapsed()
        return self.fresh / elapsed if elapsed > 0 else 0.0

    def fraction(self) -> float | None:
        if self.budget:
            return min(1.0, self.elapsed() / self.budget)
        if self.total:
            return min(1.0, self.done / self.total)
        return None

    def eta(self) -> float | None:
        """Seconds left: the budget's, else the expected work's at the rate so far."""
        if self.budget:
            return max(0.0, self.budget - self.elapsed())
        if self.total and self.fresh > 0:
            return max(0.0, self.total - self.done) / self.rate()
        return None

    def counted(self) -> str:
        done = f"{self.done:,.0f}"
        return f"{done} of {self.total:,.0f} {self.unit}" if self.total and not self.budget \
            else f"{done} {self.unit}"

    def finishing(self) -> bool:
        """The expected work all done, the command not yet (its analysis, its report)."""
        return bool(self.total) and not self.budget and self.done >= self.total

    def eta_text(self) -> str:
        if self.finishing():
            return f"all {self.unit} done; finishing"
        eta = self.eta()
        if eta is None:
            return "ETA unknown"
        at = datetime.now(UTC) + timedelta(seconds=eta)
        return f"ETA {duration(eta)} (about {at:%H:%M} UTC)"

    def line(self) -> str:
        """The plain progress line."""
        with self._lock:
            parts = [self.counted()]
            fraction = self.fraction()
            if self.budget:
                parts[0] += f", {duration(self.elapsed())} of the {duration(self.budget)} budget"
            if fraction is not None:
                parts.append(f"{100 * fraction:.0f}%")
            if self.fresh:
                parts.append(f"{_number(self.rate())} {self.unit}/s")
            parts.append(self.eta_text())
            doing = f" · {self.now_doing}" if self.now_doing else ""
            return f"{self.what}: {', '.join(parts)}{doing}"

    def tick(self) -> None:
        """Write the plain line if `interval` has passed since the last one."""
        if self.quiet or self.terminal:
            return
        with self._lock:
            now = self.clock()
            if now - self.last < self.interval:
                return
            self.last = now
        self._write(self.line())

    def _event(self) -> None:
        if self._bar is not None:
            self._bar.refresh()
        else:
            self.tick()

    def _write(self, text: str) -> None:
        with self._lock:
            print(text, file=self.stream, flush=True)

    # ---- the context ----

    def __enter__(self) -> Progress:
        self.start = self.last = self.clock()
        self._stack.enter_context(_opened(self))
        if self.quiet:
            return self
        if self.terminal:
            self._bar = self._stack.enter_context(_rich_bar(self))
        elif self.interval > 0:
            ticker = threading.Thread(target=self._ticking, daemon=True, name="chocosim-progress")
            ticker.start()
            self._stack.callback(ticker.join)
            self._stack.callback(self._stop.set)
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stack.close()
        self._bar = None
        if not self.quiet and not self.terminal and exc[0] is None and self.elapsed() >= self.interval:
            self._write(f"{self.what}: done, {self.counted()} in {duration(self.elapsed())}")

    def _ticking(self) -> None:
        # A step may outlast the interval (a slow bot's chunk): the line comes on time.
        while not self._stop.wait(self.interval):
            self.tick()


def _number(x: float) -> str:
    return f"{x:,.0f}" if x >= 10 else f"{x:.2g}"


def _is_terminal(stream: IO[str]) -> bool:
    from rich.console import Console

    return Console(file=stream).is_terminal


@contextmanager
def _opened(p: Progress) -> Iterator[None]:
    """`p` is the progress of this context; the runner's games count in it when it counts games."""
    from simcore.runner import reporting

    token = _current.set(p)
    try:
        if p.unit == GAMES:
            with reporting(lambda n, played: p.advance(n, resumed=not played)):
                yield
        else:
            yield
    finally:
        _current.reset(token)


@contextmanager
def _rich_bar(p: Progress) -> Iterator[Any]:
    from rich.console import Console
    from rich.progress import Progress as Bar
    from rich.progress import ProgressColumn, TextColumn
    from rich.progress_bar import ProgressBar
    from rich.text import Text

    class Fill(ProgressColumn):
        def render(self, task: Any) -> Any:
            fraction = p.fraction()
            return ProgressBar(total=None if fraction is None else 1.0, completed=fraction or 0.0, width=20)

    class Status(ProgressColumn):
        # One line, however narrow the terminal: the phase is cut, never wrapped.
        def render(self, task: Any) -> Text:
            rate = f" · {_number(p.rate())}/s" if p.fresh else ""
            eta = p.eta()
            left = "finishing" if p.finishing() else "ETA ?" if eta is None else f"ETA {duration(eta)}"
            doing = f" · {p.now_doing}" if p.now_doing else ""
            return Text(f"{left} · {p.counted()}{rate}{doing}", no_wrap=True, overflow="ellipsis")

    console = Console(file=p.stream, markup=False, highlight=False)
    with Bar(TextColumn("{task.description}"), Fill(), Status(), console=console, refresh_per_second=4) as bar:
        bar.add_task(p.what, total=None)
        yield bar
