"""Issue 22: textbook-correct variants of each timed exercise (``variants/`` in its folder: loop
bounds from ``cuda.blockDim``, ``cuda.grid()`` indexing, the course material's own kernel) get
full points on a GPU, timing included: a student is never timed against a reference that only a
compile-time constant makes faster (see each exercise's timing reference)."""

from __future__ import annotations

import pytest

from autograder import exercises
from autograder.results import Kind

from .conftest import grade_file, needs_gpu

VARIANTS = [(name, path) for name in exercises.names() for path in exercises.variants(name)]


def test_every_timed_exercise_lists_variants():
    timed = {e.name for e in exercises.all_exercises() if e.timing}
    assert timed <= {name for name, _ in VARIANTS}


@needs_gpu("grades each textbook variant on a GPU with its timing")
@pytest.mark.gpu
@pytest.mark.parametrize("name,path", VARIANTS, ids=[f"{n}/{p.stem}" for n, p in VARIANTS])
def test_textbook_variant_gets_full_points_on_a_gpu(name, path):
    result = grade_file(path, name, sanitize=False)
    timing = [t for t in result.tests if t.kind == Kind.TIMING]
    assert timing and timing[0].points == timing[0].max_points, timing[0].message if timing else ""
    lost = [f"{t.name}: {t.status.value} {t.message[:160]}" for t in result.tests
            if t.points < t.max_points]
    assert not lost, "\n".join(lost)
