"""Bugs that outputs cannot show lose the concept points through a whole grading: reads whose
value is never used, a negative index that wraps, and a barrier kept only at the size the
instrumented run once published (it runs at the graded cases' sizes now). A shared tile
overflowed at the widest mask is a known-bad submission of its exercise's folder
(``mutants/tile_overflow_at_widest_mask.py``). On a GPU the outputs are right for all of them;
the instrumented simulator runs (both backends) find them."""

import re

import pytest

from autograder import exercises
from autograder.exercises import known_bad
from autograder.wire.results import Kind, Status
from conftest import grade_file
from .conftest import FILES

CASES = [
    ("matmul_load_guard_le.py", "matmul_any_size", ["reads A[", "but A has shape (",
                                                     "add a bounds check"]),
    ("scan_wraps_negative.py", "block_scan", ["reads x[-1], but x has shape",
                                              "negative index wraps"]),
    ("scan_barrier_at_published_size.py", "block_scan", ["race on shared array scan"]),
]


def _concept(result):
    [concept] = [t for t in result.tests if t.kind is Kind.CONCEPT]
    return concept


@pytest.mark.parametrize("name, exercise, texts", CASES, ids=[c[0][:-3] for c in CASES])
def test_a_bug_outputs_cannot_show_loses_the_concept_points(name, exercise, texts):
    path = FILES / name
    result = grade_file(path, exercise)
    shown = "\n".join(f"  {t.name}: {t.status.value} {t.message[:300]}" for t in result.tests)
    assert not known_bad.unmet(path, result), shown
    concept = _concept(result)
    assert concept.status is Status.FAILED and concept.points == 0, shown
    for text in texts:
        assert text in concept.message, f"{text!r} not in the concept message:\n{shown}"


def test_the_race_is_found_at_a_graded_size_not_at_the_one_the_barrier_was_kept_for():
    """The fixture keeps its barrier at n 1499 only, the size the instrumented run once
    published: the runs happen at the graded cases' sizes now, none of them 1499."""
    ex = exercises.get("block_scan")
    assert "n == 1499" in (FILES / "scan_barrier_at_published_size.py").read_text()
    graded = {c.params["n"] for c in ex.cases}
    assert 1499 not in graded
    result = grade_file(FILES / "scan_barrier_at_published_size.py", "block_scan")
    message = _concept(result).message
    sizes = {int(n) for n in re.findall(r"\(at n (\d+)", message)}
    assert sizes and sizes <= graded, message
