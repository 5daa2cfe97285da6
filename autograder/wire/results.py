"""Typed grading results, rendered elsewhere (``autograder.report``).

The field names and values follow the JSON contract in CONTRACTS.md ("The command line").
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum


WITHHELD_NOTE = "said while hidden inputs were present (not shown to the student): "
"""How an instructor note begins when the student's code said it in a child that held hidden
inputs: such words may carry those inputs, so they stay in the instructor's console and stored
row and out of every file a student could be shown (Gradescope's ``results.json`` included)."""


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


@dataclass(kw_only=True)
class TestResult:
    """One graded test, built with keywords only (``TestResult(name=..., kind=..., ...)``).

    ``points`` lies in ``[0, max_points]``; ``message`` is written for the student (the failing
    size, how many elements are wrong, the first bad index with got/expected, or why it was skipped).
    ``details``: optional JSON-serialisable data for pictures (HTML report), never needed to
    read the verdict: for a failed correctness case ``{"wrong_mask": {...}}`` (see
    :func:`autograder.judge.compare.wrong_mask`), for a timing test ``{"timing": {...}}`` (samples in
    ms, ratio and its 95 % interval), for the hints test ``{"hints": [...]}``
    (:mod:`autograder.judge.hints`). ``None`` when there is nothing to show; left out of
    :meth:`to_dict` then, so the JSON of a result without details is as before.
    """

    __test__ = False  # not a pytest test class

    name: str
    kind: Kind
    visibility: str  # "public" or "hidden"
    status: Status
    points: float
    max_points: float
    message: str = ""
    details: dict | None = None

    def to_dict(self) -> dict:
        d = asdict(self)
        d["kind"] = self.kind.value
        d["status"] = self.status.value
        if d["details"] is None:
            del d["details"]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "TestResult":
        """The inverse of :meth:`to_dict` (a stored row's test); unknown keys are ignored."""
        return cls(name=d["name"], kind=Kind(d["kind"]), visibility=d.get("visibility", "hidden"),
                   status=Status(d["status"]), points=float(d.get("points", 0.0)),
                   max_points=float(d.get("max_points", 0.0)), message=d.get("message", ""),
                   details=d.get("details"))


@dataclass
class ExerciseResult:
    """All tests of one submission for one exercise.

    ``device`` is ``"sim"`` or ``"gpu:<device name>"``; ``seed`` is the secret seed the inputs
    came from, so an instructor can replay the run (``autograder grade --seed``). ``phases_s``
    splits the child's wall time in seconds: ``startup`` (interpreter, numba, CUDA context),
    ``import`` (the student's module), ``compile`` (PTX check), ``tests``, ``timing``.
    ``notes`` are for the student (what their code printed before any test started or in a run
    of public tests only, else that it printed something); ``instructor_notes`` only for the
    instructor's views (the console of ``grade``, the JSON, the stored row, Gradescope's
    ``extra_data`` less the :data:`WITHHELD_NOTE` ones): how the child ran (sandbox mode), which top-level statements of the
    submission the grader skipped, and what the code printed once a hidden test could have run
    (:func:`autograder.judge.cases.printed_for_student`). Student-facing outputs (HTML report,
    nbgrader grade cells, Gradescope's ``output``) show ``notes`` alone. ``sandbox``: how its
    children ran, ``"bubblewrap"``, ``"user"`` (a root grader without bubblewrap, each child as
    an unprivileged user of its own: :mod:`autograder.sandbox.dropuser`) or ``"plain"`` (graded
    without the sandbox: the instructor's notes say why, the student's notes say so); ``""`` when
    no child ran (a refused file).
    """

    exercise: str
    submission: str
    device: str
    tests: list[TestResult] = field(default_factory=list)
    seed: int | None = None
    notes: list[str] = field(default_factory=list)
    phases_s: dict[str, float] = field(default_factory=dict)
    instructor_notes: list[str] = field(default_factory=list)
    sandbox: str = ""

    @property
    def score(self) -> float:
        return round(sum(t.points for t in self.tests), 4)

    @property
    def max_score(self) -> float:
        return round(sum(t.max_points for t in self.tests), 4)

    @property
    def provisional(self) -> bool:
        """True when a skipped test carries points (timing or a size the simulator cannot run):
        the score is not final. Skipped diagnostics, worth nothing, leave it final."""
        return self.pending_points > 0

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

    @classmethod
    def from_dict(cls, d: dict) -> "ExerciseResult":
        """The inverse of :meth:`to_dict` (e.g. a row of :class:`autograder.batch.store.ResultStore`);
        score, provisional and pending points are recomputed from the tests."""
        return cls(d["exercise"], d.get("submission", ""), d.get("device", ""),
                   [TestResult.from_dict(t) for t in d.get("tests", [])], d.get("seed"),
                   list(d.get("notes", [])), dict(d.get("phases_s", {})),
                   list(d.get("instructor_notes", [])), str(d.get("sandbox", "")))

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
            "instructor_notes": list(self.instructor_notes),
            "sandbox": self.sandbox,
            "phases_s": dict(self.phases_s),
            "tests": [t.to_dict() for t in self.tests],
        }


def provisional_note(pending_points: float) -> str:
    """The one wording for a score that is not final: ``"provisional: 40 points need a GPU"``."""
    return f"provisional: {pending_points:g} points need a GPU"
