"""Every exercise: its instructor solution gets full marks (skipped tests aside) and each of its
known-bad submissions gets the verdicts its header declares, on the test device."""

import pytest

from autograder import exercises
from autograder.grading import preflight
from conftest import SEED, TEST_DEVICE, assert_rejected, grade_file, graded_once

ALL = exercises.names()
MUTANTS = [(name, path) for name in ALL for path in exercises.mutants(name)]


@pytest.mark.parametrize("name", ALL)
def test_instructor_solution_gets_full_marks(name):
    """The preflight is this test: it grades the solution as ``grade_file`` would (the test
    device, its seed, sanitize on) and raises unless ``known_bad.full_marks_problems`` is empty.
    A pass is kept in this session's cache (conftest) under a key of everything the verdict
    depends on (the code, the sandbox mode, the environment: ``preflight.fingerprint``), so the
    solution is graded once per session, by whichever test needs the exercise first, not again
    here. (``_preflight``, not ``check``: a check this process made under another test's
    environment, a plain sandbox say, does not count.)"""
    assert preflight.PREFLIGHT_SEED == SEED
    preflight._preflight(name, TEST_DEVICE, True)


@pytest.mark.parametrize("name, mutant", MUTANTS, ids=[f"{n}-{p.stem}" for n, p in MUTANTS])
def test_known_bad_submission_is_rejected(name, mutant):
    assert_rejected(mutant, graded_once(mutant, name))


@pytest.mark.parametrize("name", ALL)
def test_every_exercise_keeps_at_least_three_known_bad_submissions(name):
    assert len(exercises.mutants(name)) >= 3


@pytest.mark.parametrize("name", ALL)
def test_points_add_up_to_the_exercise_maximum(name):
    ex = exercises.get(name)
    result = grade_file("no/such/file.py", name)
    assert result.max_score == pytest.approx(ex.max_score)
    assert result.score == 0


@pytest.mark.parametrize("name", ALL)
def test_declared_inputs_are_what_make_inputs_makes(name):
    """The shapes and dtypes a definition declares (the grader sizes the GPU's timing inputs
    from them without making gigabytes) match its inputs, case by case."""
    import numpy as np

    ex = exercises.get(name)
    if ex.inputs is None:
        assert ex.timing is None, f"{name} has a timing test: declare its inputs' shapes"
        pytest.skip(f"{name} declares no input shapes (it has no timing test)")
    for case in ex.cases:
        made = ex.make_inputs(case.params, np.random.default_rng(0))
        declared = ex.inputs(case.params)
        assert {k: (a.shape, a.dtype) for k, a in made.items()} == \
            {k: (tuple(s), np.dtype(d)) for k, (s, d) in declared.items()}, case.params
