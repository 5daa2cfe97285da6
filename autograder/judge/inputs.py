"""What one grading is about and what its children returned: :class:`Grading`, made once by
:func:`autograder.grading.steps.grade_submission` and passed down to the children
(:func:`autograder.grading.children.run_all`) and the judges instead of the same five to nine
loose values, and :class:`Children`, the runs those judges read.

Both live here, in ``judge/``, because this is the lowest layer that may name every field's type
(``Limits`` and ``ChildRun`` come from ``sandbox/``, which the foundations may not import),
and ``grading/`` lies above it (``tests/test_layers.py``). Neither does anything: they are
values."""

from __future__ import annotations

from dataclasses import dataclass, field

from autograder.exercises.base import Exercise
from autograder.sandbox.limits import Limits
from autograder.sandbox.run import ChildRun
from autograder.source.submission import Source


@dataclass(frozen=True, kw_only=True)
class Grading:
    """One grading of one submission: ``exercise`` (its definition), ``source`` (the
    submission's text and line map, :class:`autograder.source.submission.Source`), ``backend``
    (``"gpu"`` or ``"sim"``, resolved), ``cases`` (every planned case,
    :class:`autograder.grading.plan.PlannedCase`, GPU-only sizes included; a tuple),
    ``limits`` (each child's deadlines and caps), ``seed`` (the secret seed the inputs came
    from) and ``sanitize`` (run compute-sanitizer beside the graded child on a GPU)."""

    exercise: Exercise
    source: Source
    backend: str
    cases: tuple = ()
    limits: Limits = field(default_factory=Limits)
    seed: int = 0
    sanitize: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "cases", tuple(self.cases))

    @property
    def runnable(self) -> tuple:
        """The cases this backend runs: all of them on a GPU; on the simulator those whose
        definition allows it (``Case.sim``; the others are judged ``skipped``)."""
        return tuple(c for c in self.cases if self.backend == "gpu" or c.spec.sim)


@dataclass(frozen=True, kw_only=True)
class Children:
    """What a grading's children returned: ``run`` (the correctness child whose records are read
    first: the public cases' child when they ran apart from the hidden ones, else the only one;
    on a GPU the cases' part of the graded child, :func:`autograder.grading.children.split_timing`),
    ``hidden`` (the hidden cases' child when they ran apart from the public ones; None: they
    did not), ``compiled`` (whose PTX the concept test reads: a GPU child, the compile child on
    the simulator; None: none ran), ``instrumented`` (the instrumented runs' records, every
    child's together; None: none ran), ``timing`` (the timing's part; None: it did not
    measure), ``sanitized`` (compute-sanitizer reports by tool; empty when none ran) and
    ``withheld`` (what children that held hidden inputs said, for the instructor only:
    :class:`autograder.judge.withheld.Withheld`; the runs above are the copies the student may
    read, :func:`autograder.judge.withheld.withheld`)."""

    run: ChildRun
    hidden: ChildRun | None = None
    compiled: ChildRun | None = None
    instrumented: ChildRun | None = None
    timing: ChildRun | None = None
    sanitized: dict = field(default_factory=dict)
    withheld: list = field(default_factory=list)

    def run_for(self, case) -> ChildRun:
        """The child that ran planned ``case`` (:class:`autograder.grading.plan.PlannedCase`)."""
        if self.hidden is not None and case.spec.visibility != "public":
            return self.hidden
        return self.run
