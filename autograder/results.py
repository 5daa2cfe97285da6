"""Typed grading results, rendered elsewhere (``autograder.report``).

The field names and values follow the JSON contract in CONTRACTS.md ("The command line").
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum


class Kind(str, Enum):
    """What a test judges."""

    CORRECTNESS = "correctness"
    CONCEPT = "concept"
    TIMING = "timing"
    DIAGNOSTIC = "diagnostic"


class Status(str, Enum):
    """How a test ended. ``SKIPPED`` earns no points and makes the result provisional."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    TIMEOUT = "timeout"
    SKIPPED = "skipped"


@dataclass
class TestResult:
    """One graded test.

    ``points`` lies in ``[0, max_points]``; ``message`` is written for the student (the failing
    size, how many elements are wrong, the first bad index with got/expected, or why it was skipped).
    """

    __test__ = False  # not a pytest test class

    name: str
    kind: Kind
    visibility: str  # "public" or "hidden"
    status: Status
    points: float
    max_points: float
    message: str = ""

    def to_dict(self) -> dict:
        d = asdict(self)
        d["kind"] = self.kind.value
        d["status"] = self.status.value
        return d


@dataclass
class ExerciseResult:
    """All tests of one submission for one exercise.

    ``device`` is ``"sim"`` or ``"gpu:<device name>"``; ``seed`` is the secret seed the inputs
    came from, so an instructor can replay the run (``autograder grade --seed``). ``phases_s``
    splits the child's wall time in seconds: ``startup`` (interpreter, numba, CUDA context),
    ``import`` (the student's module), ``compile`` (PTX check), ``tests``, ``timing``.
    """

    exercise: str
    submission: str
    device: str
    tests: list[TestResult] = field(default_factory=list)
    seed: int | None = None
    notes: list[str] = field(default_factory=list)
    phases_s: dict[str, float] = field(default_factory=dict)

    @property
    def score(self) -> float:
        return round(sum(t.points for t in self.tests), 4)

    @property
    def max_score(self) -> float:
        return round(sum(t.max_points for t in self.tests), 4)

    @property
    def provisional(self) -> bool:
        return any(t.status is Status.SKIPPED for t in self.tests)

    @property
    def pending_points(self) -> float:
        """Points of skipped tests: not earned here, not lost either (on the simulator, the
        timing test and the GPU-only sizes)."""
        return round(sum(t.max_points for t in self.tests if t.status is Status.SKIPPED), 4)

    @property
    def provisional_note(self) -> str:
        """``"provisional: N points need a GPU"`` for a provisional result, else ``""``: the
        wording every report, export and gradebook comment uses."""
        return provisional_note(self.pending_points) if self.provisional else ""

    def to_dict(self) -> dict:
        return {
            "exercise": self.exercise,
            "submission": self.submission,
            "device": self.device,
            "score": self.score,
            "max_score": self.max_score,
            "provisional": self.provisional,
            "pending_points": self.pending_points,
            "seed": self.seed,
            "notes": list(self.notes),
            "phases_s": dict(self.phases_s),
            "tests": [t.to_dict() for t in self.tests],
        }


def provisional_note(pending_points: float) -> str:
    """The one wording for a score that is not final: ``"provisional: 40 points need a GPU"``."""
    return f"provisional: {pending_points:g} points need a GPU"
