"""Known-bad submissions ("mutants") and the verdicts the grader must give them.

A mutant is a ``.py`` file in its exercise folder's ``mutants/`` (:mod:`autograder.exercises`) whose first comment lines say
what it must get::

    # kernelgrade-expect: concept=failed
    # kernelgrade-expect-gpu: timing=failed
    # kernelgrade-expect-sim: correctness=error

``KIND=STATUS`` means at least one test of that kind (or whose name contains KIND) ends with that
status. Plain ``expect`` lines hold on every backend, ``expect-gpu`` lines on a GPU only,
``expect-sim`` lines on the simulator only (which raises ``IndexError`` where a GPU silently reads
or writes out of bounds). Every mutant must also lose points.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from autograder.wire.results import ExerciseResult

_EXPECT = re.compile(r"^#\s*kernelgrade-expect(?:-(gpu|sim))?:\s*(.+)$")


@dataclass(frozen=True)
class Expectation:
    """``selector`` (a test kind, or part of a test name) must include a test with ``status``;
    ``backend`` is ``"gpu"`` or ``"sim"`` for a verdict that holds on that backend only."""

    selector: str
    status: str
    backend: str | None = None

    def applies_to(self, device: str) -> bool:
        return self.backend is None or device.startswith(self.backend)

    def holds(self, result: ExerciseResult) -> bool:
        return any(
            (t.kind.value == self.selector or self.selector in t.name)
            and t.status.value == self.status
            for t in result.tests
        )

    def __str__(self) -> str:
        return f"{self.selector}={self.status}" + (f" ({self.backend})" if self.backend else "")


def expectations(path: str | Path) -> list[Expectation]:
    """Expectations declared in the leading comment lines of ``path``."""
    found = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        m = _EXPECT.match(line.strip())
        if m:
            for item in m.group(2).split(","):
                selector, _, status = item.strip().partition("=")
                found.append(Expectation(selector.strip(), status.strip(), m.group(1)))
        elif line.strip() and not line.startswith("#"):
            break
    return found


def unmet(path: str | Path, result: ExerciseResult) -> list[str]:
    """What ``result`` fails to show of the expectations of known-bad ``path`` (empty: all met)."""
    problems = [str(e) for e in expectations(path)
                if e.applies_to(result.device) and not e.holds(result)]
    if result.score >= result.max_score:
        problems.append("got full marks")
    if not expectations(path):
        problems.append("declares no '# kernelgrade-expect:' line")
    return problems


def full_marks_problems(result: ExerciseResult) -> list[str]:
    """Why an instructor solution's result is not full marks (skipped tests excepted)."""
    return [f"{t.name}: {t.status.value} ({t.message})" for t in result.tests
            if t.status.value not in ("passed", "skipped") or
            (t.status.value == "passed" and t.points < t.max_points)]
