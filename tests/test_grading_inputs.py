"""One grading is one immutable value (issue 23): :class:`autograder.judge.inputs.Grading`, made
once by :func:`autograder.grading.steps.grade_submission` and read by the children and the
judges. No grading child runs here."""

from __future__ import annotations

import dataclasses

import pytest

from autograder import exercises
from autograder.grading import plan
from autograder.grading import steps
from autograder.grading.devices import default_limits
from autograder.judge.inputs import Children, Grading
from autograder.sandbox.run import ChildRun
from autograder.source.submission import Source


@pytest.fixture(scope="module")
def tiled():
    ex = exercises.get("tiled_matmul")
    return ex, plan.make_cases(ex, 7)


def test_a_grading_cannot_change_and_the_simulator_runs_only_its_sim_cases(tiled):
    ex, cases = tiled
    sim = Grading(exercise=ex, source=Source("x = 1\n", "submission.py"), backend="sim",
                  cases=cases, seed=7)
    assert isinstance(sim.cases, tuple) and len(sim.cases) == len(ex.cases)
    with pytest.raises(dataclasses.FrozenInstanceError):
        sim.seed = 8
    gpu_only = {c.spec.name for c in cases if not c.spec.sim}
    assert gpu_only, "tiled_matmul has sizes only a GPU runs"
    assert {c.spec.name for c in sim.runnable} == {c.spec.name for c in cases} - gpu_only
    assert dataclasses.replace(sim, backend="gpu").runnable == sim.cases
    with pytest.raises(TypeError):
        Grading(ex, Source("", "submission.py"), "sim")
    with pytest.raises(dataclasses.FrozenInstanceError):
        Children(run=ChildRun()).timing = ChildRun()


def test_grade_submission_hands_one_grading_down(monkeypatch, tiled):
    """The grading the children and judges get carries the submission's source, every planned
    case, the backend's default limits when none were given, the result's seed and the
    sanitizer switch."""
    ex, _ = tiled
    seen = []

    def stand_in(grading, result):
        seen.append(grading)
        result.tests = []
        return result

    monkeypatch.setattr(steps, "_grade_source", stand_in)
    path = exercises.solution_path(ex)
    result = steps.grade_submission(path, ex, "sim", 11, None, True)
    [grading] = seen
    assert grading.exercise is ex and grading.backend == "sim" and grading.sanitize is True
    assert grading.seed == result.seed == 11
    assert grading.limits == default_limits("sim")
    assert grading.source.text == path.read_text(encoding="utf-8")
    assert [c.spec.name for c in grading.cases] == [c.name for c in ex.cases]
