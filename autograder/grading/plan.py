"""Planning a grading: the cases' inputs from the secret seed, and the requests
(:class:`autograder.wire.protocol.Request`) each child gets."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from autograder import exercises
from autograder.exercises.base import Case, Exercise
from autograder.wire.protocol import CaseRequest, Request, TimingRequest


@dataclass
class PlannedCase:
    """One correctness case of a grading: its index ``id``, its definition ``spec``, the
    ``inputs`` generated for it (NumPy arrays by name) and its ``outputs`` (name → (shape
    expressions, dtype))."""

    id: int
    spec: Case
    inputs: dict
    outputs: dict
    _expected: dict = field(default_factory=dict, repr=False, compare=False)

    def expected(self, reference, params: dict) -> dict:
        """``reference(inputs, params)`` (the exercise's float64 reference), computed once per
        ``params``: the verdict before the timing and the result both judge this case."""
        key = repr(sorted(params.items()))
        if key not in self._expected:
            self._expected[key] = reference(self.inputs, params)
        return self._expected[key]

    def request(self) -> CaseRequest:
        """The case as the child gets it."""
        return CaseRequest(self.id, self.spec.params, self.inputs, self.outputs)


def make_cases(exercise: Exercise, seed: int) -> list[PlannedCase]:
    """Every case of ``exercise`` with inputs drawn from ``seed`` (one child seed per case, so
    a case's inputs do not depend on which other cases run)."""
    seqs = np.random.SeedSequence(seed).spawn(len(exercise.cases))
    made = []
    for i, (case, seq) in enumerate(zip(exercise.cases, seqs)):
        rng = np.random.default_rng(seq)
        made.append(PlannedCase(i, case, exercise.make_inputs(case.params, rng),
                                exercise.outputs(case.params)))
    return made


def evidence_cases(exercise: Exercise, cases, seed: int) -> list[CaseRequest]:
    """The instrumented runs of a grading (:class:`~autograder.exercises.base.Diagnose`): one
    per planned case of ``cases`` (:class:`PlannedCase`, those the backend runs: on a GPU the
    GPU-only sizes too), at that case's own parameters and inputs (the same arrays), with
    ``Diagnose.max_blocks`` blocks and the draw (:func:`block_draw`) that picks the block
    sampled beside the edge blocks. The id is the case's. Empty for an exercise without a
    Diagnose."""
    d = exercise.diagnose
    if d is None:
        return []
    return [CaseRequest(c.id, c.spec.params, c.inputs, c.outputs, d.max_blocks,
                        block_draw(seed, c.id)) for c in cases]


def block_draw(seed: int, case_id: int) -> float:
    """A number in [0, 1), drawn from the grading's secret ``seed`` for case ``case_id`` on a
    stream of its own: which block the case's instrumented launch samples beside its edge
    blocks (:func:`autograder.child.cases.sampled_blocks`). The same on both backends."""
    seq = np.random.SeedSequence([int(seed) & (2 ** 63 - 1), 0xB10C, int(case_id)])
    return float(np.random.default_rng(seq).random())


#: compute-sanitizer (on a GPU) runs at the graded cases with at most this many input
#: elements: its tools slow a launch many times over and cannot run a sample of blocks. The
#: largest cases are analysed by the instrumented run (a sample of their blocks) alone.
SANITIZER_MAX_ELEMENTS = 1 << 18


def input_elements(case) -> int:
    """Elements of a planned case's inputs, all arrays together."""
    return sum(int(getattr(a, "size", 1)) for a in case.inputs.values())


def sanitizer_cases(cases) -> list:
    """The planned ``cases`` compute-sanitizer runs at: those with at most
    :data:`SANITIZER_MAX_ELEMENTS` input elements (graded cases only: no size of its own), or
    the smallest when none is that small. Empty for no cases."""
    cases = list(cases)
    small = [c for c in cases if input_elements(c) <= SANITIZER_MAX_ELEMENTS]
    return small or sorted(cases, key=input_elements)[:1]


def by_visibility(cases) -> tuple[list, list]:
    """The planned ``cases`` as (public, hidden), each in order: the public ones run in a
    child of their own, which alone may show the student what their code said."""
    cases = list(cases)
    return ([c for c in cases if c.spec.visibility == "public"],
            [c for c in cases if c.spec.visibility != "public"])


def timing_request(exercise: Exercise, seed: int = 0) -> TimingRequest:
    """The timing phase of ``exercise``, with the text of every instructor reference
    (``exercises.timing_solution_paths``: the solution, then the kernel with run-time loop
    bounds where the exercise has one; the child times the student against the fastest of them,
    each at its own constants: the same request whatever the student wrote) and an input seed
    drawn from the grading's secret ``seed``. Raises ``FileNotFoundError`` when the solution is
    not installed."""
    t = exercise.timing
    path, *more = exercises.timing_solution_paths(exercise)
    # Only shapes and dtypes: the child fills the inputs on the GPU (gigabytes at these sizes).
    specs = {k: (tuple(shape), np.dtype(dtype).str)
             for k, (shape, dtype) in exercise.inputs(t.params).items()}
    ranges = {k: tuple(t.input_range(k, dtype)) for k, (_, dtype) in specs.items()}
    return TimingRequest(t.params, specs, exercise.outputs(t.params),
                         str(path),
                         # Sent as text: the sandbox shows no solution (see autograder.sandbox.run).
                         path.read_text(encoding="utf-8"), t.min_rounds, t.budget_s,
                         t.full_ratio, t.zero_ratio, timing_input_seed(seed), ranges,
                         [[str(p), p.read_text(encoding="utf-8")] for p in more] or None)


def timing_input_seed(seed: int) -> int:
    """The timing inputs' hash seed for the secret ``seed``: 31 bits, its own stream."""
    return int(np.random.SeedSequence([int(seed), 0x71A1]).generate_state(1)[0]) >> 1


def request(exercise: Exercise, backend: str, phases: list[str], source_file: Path | str,
            cases: list, timing: TimingRequest | None,
            diagnose: CaseRequest | list | None = None,
            lineinfo: bool = False, await_go: bool = False) -> dict:
    """A child's :class:`~autograder.wire.protocol.Request`, in the form
    :func:`autograder.sandbox.run.run_child` takes (``to_dict()``). ``cases``: :class:`PlannedCase`
    or :class:`~autograder.wire.protocol.CaseRequest` items; ``diagnose``: the instrumented
    runs' cases (:func:`evidence_cases`), a list, or one case. The submission's text is read from
    ``source_file`` now: the harness compiles this text, so a sibling child cannot swap the code.
    """
    more = []
    if isinstance(diagnose, list):
        diagnose, more = (diagnose[0], diagnose[1:]) if diagnose else (None, [])
    return Request(
        backend, list(phases), str(source_file), Path(source_file).read_text(encoding="utf-8"),
        exercise.contract,
        [c if isinstance(c, CaseRequest) else c.request() for c in cases],
        timing, diagnose, lineinfo, await_go, more).to_dict()
