"""A course's own exercise, written outside the package (issue 23's walk-through): the privatized
``histogram`` of ``tests/fixtures/course_histogram/`` (uint8 data, int32 bins that start at zero,
shared-memory bins and atomics, timed), registered with :func:`autograder.exercises.add_folder`
and graded on the test device; and, without a grading child, what it needed of the definition:
every integer dtype's guard values, outputs that start at zero, the timing inputs' ranges, the
concept test's counts against what is asked, and the contract text."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from autograder import exercises
from autograder.wire import buffers
from autograder.authoring import docs
from autograder.judge import collect as judge
from autograder.grading import plan
from autograder.judge.compare import check_margins, compare_output
from autograder.exercises.base import Exercise, Timing, Tolerance

from conftest import ROOT, assert_full_marks, assert_rejected, grade_file

COURSE = ROOT / "tests" / "fixtures" / "course_histogram" / "assignments"
FOLDER = COURSE / "histogram"
SOLUTION = COURSE.parent / "solutions" / "histogram.py"
MUTANTS = sorted((FOLDER / "mutants").glob("*.py"))
DTYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float32", "float64")


@pytest.fixture(scope="module")
def course():
    """The course's folder registered for this module only: the registry is as before after."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(exercises, "_ADDED", list(exercises._ADDED))
        mp.setattr(exercises, "_LOADED", dict(exercises._LOADED))
        assert exercises.add_folder(COURSE) == ["histogram"]
        yield exercises.get("histogram")


@pytest.fixture(scope="module")
def graded(course):
    """One grading of the solution and of each known-bad submission, by file name."""
    files = [SOLUTION] + MUTANTS
    return {("solution.py" if p == SOLUTION else p.name): grade_file(p, "histogram", preflight=False)
            for p in files}


def test_the_registry_finds_the_course_folder(course):
    assert "histogram" in exercises.names() and exercises.folder("histogram") == FOLDER
    assert exercises.solution_path("histogram") == SOLUTION
    assert exercises.mutants("histogram") == MUTANTS and len(MUTANTS) >= 2
    assert course.contract.zeroed == ("bins",)


def test_a_course_folder_overrides_a_built_in_exercise(tmp_path):
    (tmp_path / "block_sum").mkdir()
    (tmp_path / "block_sum" / "exercise.py").write_text(
        "from dataclasses import replace\n"
        "from kernelgrade_assignments.block_sum.exercise import EXERCISE as BUILT_IN\n"
        "EXERCISE = replace(BUILT_IN, title='The course own block sum')\n", encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(exercises, "_ADDED", [])
        mp.setattr(exercises, "_LOADED", {})
        assert exercises.add_folder(tmp_path) == ["block_sum"]
        assert exercises.get("block_sum").title == "The course own block sum"
        assert exercises.folder("block_sum") == tmp_path / "block_sum"
    assert exercises.get("block_sum").title != "The course own block sum"
    with pytest.raises(NotADirectoryError):
        exercises.add_folder(tmp_path / "missing")


def test_the_instructor_solution_gets_full_marks(graded):
    assert_full_marks(graded["solution.py"])


@pytest.mark.parametrize("path", MUTANTS, ids=lambda p: p.stem)
def test_each_known_bad_submission_gets_its_verdict(graded, path):
    assert_rejected(path, graded[path.name])


def test_the_concept_test_states_what_it_counted_against_what_is_asked(graded):
    concept = next(t for t in graded["global_atomics_only.py"].tests if t.kind.value == "concept")
    assert "has 1 atomic operation (cuda.atomic.*; the exercise asks for at least 2)" \
        in concept.message, concept.message
    assert "has no barrier (cuda.syncthreads(); the exercise asks for at least 2)" \
        in concept.message
    assert "uses no atomic" not in concept.message
    racy = next(t for t in graded["no_barrier_before_write_back.py"].tests
                if t.kind.value == "concept")
    assert "has 1 barrier (cuda.syncthreads(); the exercise asks for at least 2)" in racy.message


def test_counted_against_asked_words():
    assert judge.counted_against_asked(0, 1, "memory fence", "memory fences",
                                       "cuda.threadfence()") == \
        "has no memory fence (cuda.threadfence(); the exercise asks for at least 1)"
    assert judge.counted_against_asked(3, 4, "barrier", "barriers", "cuda.syncthreads()") == \
        "has 3 barriers (cuda.syncthreads(); the exercise asks for at least 4)"


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_has_guard_values_it_can_hold(dtype):
    s = buffers.sentinel(dtype)
    assert s.dtype == np.dtype(dtype) and s.shape == (1,)
    values = (np.arange(10) % 7).astype(dtype)
    buf, margin = buffers.guarded_input(values)
    assert (buf[margin:margin + 10] == values).all()
    out, m = buffers.guarded_output((3, 4), dtype)
    assert not buffers.margin_writes(np.concatenate([out[:m], out[m + 12:]])).any()
    out[m + 12] = 1  # one element past the end
    assert "1 past its end" in check_margins("out", out, (3, 4))


def test_integer_sentinels_are_the_old_value_where_it_fits():
    assert buffers.sentinel("int32")[0] == buffers.sentinel("int64")[0] == -0x5EEDBEE
    assert buffers.sentinel("uint8")[0] == 0xA5 and buffers.sentinel("int8")[0] == -91
    with pytest.raises(TypeError, match="no sentinel for dtype bool"):
        buffers.sentinel("bool")


def test_an_output_that_starts_at_zero_keeps_its_guard_bands():
    buf, margin = buffers.guarded_output((256,), "int32", zeroed=True)
    bins, margins = buffers.split_guarded(buf, (256,))
    assert (bins == 0).all() and (margins == buffers.sentinel("int32")[0]).all()
    buf[margin - 1] += 1  # an atomic add just before the start
    assert "1 before its start" in check_margins("bins", buf, (256,))
    assert buffers.start_value("float32", zeroed=True)[0] == 0
    assert np.isnan(buffers.start_value("float32")[0])


def test_a_sentinel_that_is_also_the_right_value_is_not_called_unwritten():
    expected = np.array([0xA5, 3], np.uint8)
    got = np.array([0xA5, 4], np.uint8)
    ok, msg = compare_output("bins", got, expected, Tolerance(exact=True))
    assert not ok and "never written" not in msg and "bins[1]" in msg


def test_the_timing_inputs_follow_the_exercises_ranges(course):
    request = plan.timing_request(course)
    assert request.input_ranges == {"data": (0, 256)}
    assert request.input_specs == {"data": ((1 << 26,), "|u1")}
    block_sum = exercises.get("block_sum")
    assert plan.timing_request(block_sum).input_ranges == {"x": (0.0, 1.0)}


def test_definition_mistakes_are_named_when_the_exercise_is_made(course):
    def remade(**changes):
        fields = {k: getattr(course, k) for k in Exercise.__dataclass_fields__}
        return Exercise(**{**fields, **changes})

    with pytest.raises(ValueError, match=r"input_ranges names 'x'"):
        remade(timing=replace(course.timing, input_ranges={"x": (0, 1)}))
    with pytest.raises(ValueError, match="does not hold uint8 integers"):
        remade(timing=replace(course.timing, input_ranges={"data": (0, 257)}))
    with pytest.raises(ValueError, match="range of data is empty"):
        remade(timing=Timing(params={"n": 8}, points=1.0, input_ranges={"data": (3, 3)}))
    with pytest.raises(ValueError, match=r"Contract.zeroed names \['counts'\]"):
        remade(contract=replace(course.contract, zeroed=("counts",)))


def test_the_contract_text_says_which_output_starts_at_zero(course):
    section = docs.exercise_section(course)
    assert "- Starts at zero: `bins` holds zeros before every launch" in section
    assert "`data` in [0, 256)" in section
    assert "Starts at zero" not in docs.exercise_section(exercises.get("block_sum"))


def test_the_fixture_stays_outside_the_package():
    assert not (exercises.builtin_root() / "histogram").exists()
