"""What ``autograder batch`` says while it grades: counts, rate and failures, on a terminal or not.

On a terminal (:func:`for_stream` of a TTY) a live rich display::

    grading ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━  12/40 graded · 3.1 per minute · 0 failed · 9:02 left

Anywhere else (a log file, CI) plain lines, one when grading starts, then one at most every
:data:`PLAIN_EVERY_S` seconds while results arrive, and one at the end::

    batch: 12/40 graded, 3.1 per minute, 0 failed, about 9 min left (3 min 52 s so far)

"failed" counts the submissions the grader itself failed on (not stored; a rerun retries them),
never a student's low score.
"""

from __future__ import annotations

import time
from typing import Callable, TextIO

#: Seconds between two plain progress lines (not on a terminal).
PLAIN_EVERY_S = 30.0


def _rate(done: int, seconds: float) -> float:
    """Submissions per minute after ``done`` in ``seconds`` (0 before the first)."""
    return done / seconds * 60.0 if done and seconds > 0 else 0.0


def _duration(seconds: float) -> str:
    """``"3 min 52 s"``, ``"41 s"`` or ``"2 h 5 min"``."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


def summary(done: int, total: int, failed: int, seconds: float) -> str:
    """One plain progress line: ``"batch: 12/40 graded, 3.1 per minute, 0 failed, about 9 min
    left (3 min 52 s so far)"``. ``done`` counts the submissions finished (stored or failed)
    out of ``total``; ``failed`` those the grader failed on; ``seconds`` since grading began."""
    rate = _rate(done, seconds)
    left = ""
    if 0 < done < total and rate > 0:
        left = f", about {_duration((total - done) / rate * 60.0)} left"
    return (f"batch: {done - failed}/{total} graded, {rate:.1f} per minute, {failed} failed"
            f"{left} ({_duration(seconds)} so far)")


class PlainProgress:
    """Plain progress lines on ``stream`` (see the module's docstring); ``clock``: seconds
    (``time.monotonic``)."""

    def __init__(self, total: int, stream: TextIO, every_s: float = PLAIN_EVERY_S,
                 clock: Callable[[], float] = time.monotonic):
        self.total, self.stream, self.every_s, self.clock = total, stream, every_s, clock
        self.done = self.failed = 0

    def __enter__(self) -> "PlainProgress":
        self.start = self.last = self.clock()
        self._say(f"batch: grading {self.total} submission{'s' if self.total != 1 else ''}")
        return self

    def advance(self, failed: bool = False) -> None:
        """One submission finished: stored, or (``failed``) the grader failed on it."""
        self.done += 1
        self.failed += bool(failed)
        now = self.clock()
        if now - self.last >= self.every_s and self.done < self.total:
            self.last = now
            self._say(summary(self.done, self.total, self.failed, now - self.start))

    def __exit__(self, *exc) -> None:
        self._say(summary(self.done, self.total, self.failed, self.clock() - self.start))

    def _say(self, line: str) -> None:
        self.stream.write(line + "\n")
        self.stream.flush()


class RichProgress:
    """A live rich progress bar on a terminal, naming the counts (see the module's
    docstring). ``console``: a :class:`rich.console.Console` on the terminal."""

    def __init__(self, total: int, console):
        from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

        self.total, self.done, self.failed = total, 0, 0
        self.bar = Progress(TextColumn("grading"), BarColumn(),
                            TextColumn("{task.fields[counts]}"),
                            TimeRemainingColumn(), TextColumn("left"),
                            console=console, transient=False)
        self.start = time.monotonic()

    def _counts(self) -> str:
        rate = _rate(self.done, time.monotonic() - self.start)
        return (f"{self.done - self.failed}/{self.total} graded · {rate:.1f} per minute · "
                f"{self.failed} failed")

    def __enter__(self) -> "RichProgress":
        self.bar.__enter__()
        self.task = self.bar.add_task("grading", total=self.total, counts=self._counts())
        return self

    def advance(self, failed: bool = False) -> None:
        """One submission finished: stored, or (``failed``) the grader failed on it."""
        self.done += 1
        self.failed += bool(failed)
        self.bar.update(self.task, advance=1, counts=self._counts())

    def __exit__(self, *exc) -> None:
        self.bar.__exit__(*exc)


class NoProgress:
    """Says nothing (``progress=False``)."""

    def __init__(self, *args, **kw):
        pass

    def __enter__(self) -> "NoProgress":
        return self

    def advance(self, failed: bool = False) -> None:
        pass

    def __exit__(self, *exc) -> None:
        pass


def for_stream(total: int, stream: TextIO):
    """The progress display for ``total`` submissions on ``stream`` (standard error): a rich
    bar when it is a terminal, else plain lines every :data:`PLAIN_EVERY_S` seconds."""
    isatty = getattr(stream, "isatty", None)
    if isatty is not None and isatty():
        from rich.console import Console

        return RichProgress(total, Console(file=stream))
    return PlainProgress(total, stream)
