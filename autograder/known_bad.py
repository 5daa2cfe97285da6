"""Known-bad submissions ("mutants") and the verdicts the grader must give them.

A mutant is a ``.py`` file in ``tests/files/<exercise>/mutants/`` whose first comment lines say
what it must get::

    # kernelgrade-expect: concept=failed
    # kernelgrade-expect-gpu: timing=failed

``KIND=STATUS`` means at least one test of that kind (or whose name contains KIND) ends with that
status. Plain ``expect`` lines hold on every backend, ``expect-gpu`` lines on a GPU only. Every
mutant must also lose points.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .results import ExerciseResult

_EXPECT = re.compile(r"^#\s*kernelgrade-expect(-gpu)?:\s*(.+)$")


@dataclass(frozen=True)
class Expectation:
    """``selector`` (a test kind, or part of a test name) must include a test with ``status``."""

    selector: str
    status: str
    gpu_only: bool = False

    def holds(self, result: ExerciseResult) -> bool:
        return any(
            (t.kind.value == self.selector or self.selector in t.name)
            and t.status.value == self.status
            for t in result.tests
        )

    def __str__(self) -> str:
        return f"{self.selector}={self.status}" + (" (gpu)" if self.gpu_only else "")


def expectations(path: str | Path) -> list[Expectation]:
    """Expectations declared in the leading comment lines of ``path``."""
    found = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        m = _EXPECT.match(line.strip())
        if m:
            for item in m.group(2).split(","):
                selector, _, status = item.strip().partition("=")
                found.append(Expectation(selector.strip(), status.strip(), bool(m.group(1))))
        elif line.strip() and not line.startswith("#"):
            break
    return found


def mutants_dir(exercise: str, root: Path | None = None) -> Path:
    root = root or Path(__file__).resolve().parents[1]
    return root / "tests" / "files" / exercise / "mutants"


def mutants(exercise: str, root: Path | None = None) -> list[Path]:
    """The known-bad submissions of ``exercise``, sorted by name."""
    d = mutants_dir(exercise, root)
    return sorted(p for p in d.glob("*.py")) if d.is_dir() else []


def unmet(path: str | Path, result: ExerciseResult) -> list[str]:
    """What ``result`` fails to show of the expectations of known-bad ``path`` (empty: all met)."""
    on_gpu = result.device.startswith("gpu")
    problems = [str(e) for e in expectations(path)
                if (on_gpu or not e.gpu_only) and not e.holds(result)]
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
