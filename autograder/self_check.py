"""``autograder solutions``: grade every instructor solution and every known-bad submission.

An instructor solution must lose no points (skipped tests aside); a known-bad submission must get
the verdicts its header declares (see :mod:`autograder.known_bad`) and lose points.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from . import exercises, known_bad
from .grader import grade, solution_path


@dataclass
class CheckRow:
    """One graded file: what it should get, what it got, and whether that is acceptable."""

    exercise: str
    submission: str
    expected: str
    got: str
    ok: bool
    seconds: float
    device: str


def _got(result) -> str:
    shown = [f"{t.kind.value}={t.status.value}" for t in result.tests
             if t.status.value not in ("passed", "skipped")]
    summary = ", ".join(dict.fromkeys(shown)) or "all passed"
    return f"{result.score:g}/{result.max_score:g}" + ("*" if result.provisional else "") + \
        f" ({summary})"


def check_exercise(name: str, device: str, seed: int | None = None) -> list[CheckRow]:
    """Rows for the solution and the mutants of exercise ``name`` graded on ``device``."""
    ex = exercises.get(name)
    rows = []
    start = time.monotonic()
    # No preflight: this is the preflight's own check, shown row by row.
    result = grade(solution_path(ex), name, device=device, seed=seed, preflight=False)
    problems = known_bad.full_marks_problems(result)
    rows.append(CheckRow(name, f"solutions/{ex.solution}", "full marks", _got(result),
                         not problems, time.monotonic() - start, result.device))
    for path in known_bad.mutants(name):
        start = time.monotonic()
        result = grade(path, name, device=device, seed=seed, preflight=False)
        wanted = [str(e) for e in known_bad.expectations(path) if e.applies_to(result.device)]
        rows.append(CheckRow(name, f"mutants/{Path(path).name}", ", ".join(wanted) or "?",
                             _got(result), not known_bad.unmet(path, result),
                             time.monotonic() - start, result.device))
    return rows


def progress_line(done: int, total: int, name: str, rows: list[CheckRow]) -> str:
    """One line for an exercise whose rows are all in (``done`` of ``total`` exercises), e.g.
    ``[2/6] matmul_any_size: 5 graded, all ok, 31.4 s on sim``; a wrong verdict is named."""
    wrong = [r.submission for r in rows if not r.ok]
    verdict = "all ok" if not wrong else f"{len(wrong)} WRONG ({', '.join(wrong)})"
    devices = ", ".join(dict.fromkeys(r.device for r in rows if r.device)) or "?"
    seconds = sum(r.seconds for r in rows)
    return (f"[{done}/{total}] {name}: {len(rows)} graded, {verdict}, {seconds:.1f} s "
            f"on {devices}")
