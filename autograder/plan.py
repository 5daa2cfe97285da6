"""Planning a grading: the cases' inputs from the secret seed, and the requests
(:class:`autograder.protocol.Request`) each child gets."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import exercises
from .exercises.base import Case, Exercise
from .protocol import CaseRequest, Request, TimingRequest


@dataclass
class PlannedCase:
    """One correctness case of a grading: its index ``id``, its definition ``spec``, the
    ``inputs`` generated for it (NumPy arrays by name) and its ``outputs`` (name → (shape
    expressions, dtype))."""

    id: int
    spec: Case
    inputs: dict
    outputs: dict

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


def diagnose_case(exercise: Exercise, seed: int) -> CaseRequest:
    """The small case of the instrumented run (and the sanitizers), from the secret seed."""
    d = exercise.diagnose
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(len(exercise.cases) + 1)[-1])
    return CaseRequest("diagnose", d.params, exercise.make_inputs(d.params, rng),
                       exercise.outputs(d.params), d.max_blocks)


@functools.lru_cache(maxsize=None)
def _timing_input_specs(name: str) -> dict:
    """Shapes and dtypes of an exercise's timing inputs (the child fills them on the GPU): as
    its definition declares them, else from inputs made once (gigabytes at timing sizes)."""
    ex = exercises.get(name)
    if ex.inputs is not None:
        return {k: (tuple(shape), np.dtype(dtype).str)
                for k, (shape, dtype) in ex.inputs(ex.timing.params).items()}
    made = ex.make_inputs(ex.timing.params, np.random.default_rng(0))
    return {k: (tuple(a.shape), a.dtype.str) for k, a in made.items()}


def timing_request(exercise: Exercise) -> TimingRequest:
    """The timing phase of ``exercise``, with its instructor solution's text (found through
    ``exercises.solution_path``; raises ``FileNotFoundError`` when it is not installed)."""
    t = exercise.timing
    path = exercises.solution_path(exercise)
    return TimingRequest(t.params, _timing_input_specs(exercise.name), exercise.outputs(t.params),
                         str(path),
                         # Sent as text: the sandbox shows no solution (see autograder.sandbox).
                         path.read_text(encoding="utf-8"), t.min_rounds, t.budget_s)


def request(exercise: Exercise, backend: str, phases: list[str], source_file: Path | str,
            cases: list, timing: TimingRequest | None, diagnose: CaseRequest | None = None,
            lineinfo: bool = False, await_go: bool = False) -> dict:
    """A child's :class:`~autograder.protocol.Request`, in the form
    :func:`autograder.sandbox.run_child` takes (``to_dict()``). ``cases``: :class:`PlannedCase`
    or :class:`~autograder.protocol.CaseRequest` items. The submission's text is read from
    ``source_file`` now: the harness compiles this text, so a sibling child cannot swap the code.
    """
    return Request(
        backend, list(phases), str(source_file), Path(source_file).read_text(encoding="utf-8"),
        exercise.contract.to_dict(),
        [c if isinstance(c, CaseRequest) else c.request() for c in cases],
        timing, diagnose, lineinfo, await_go).to_dict()
