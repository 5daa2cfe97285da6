"""An out-of-bounds read, as the student reads it (issue 32, item 4).

``matmul_load_guard_le.py`` guards its A-tile load with ``row <= m``: row ``m`` is read, its value
reaches no output, every output is right. The read is a boundary-check finding of its own
(``diagnostic: boundary checks``); it still costs the concept points (where it cost them
before), and the concept test says what it found: an out-of-bounds access, with the shared
memory and barriers there as asked. It no longer claims a missing barrier that only the
stopped instrumented runs failed to show. A real grading on the simulator.
"""

from __future__ import annotations

from autograder.grader import grade
from autograder.judge import diagnostics
from autograder.report import class_view
from autograder.wire.results import Kind, Status

from instrument.conftest import FILES


def test_an_out_of_bounds_read_is_a_boundary_check_finding_and_the_concept_says_so():
    result = grade(FILES / "matmul_load_guard_le.py", "matmul_any_size", device="sim",
                   preflight=False, seed=7)
    by_name = {t.name: t for t in result.tests}
    bounds = by_name[diagnostics.BOUNDS]
    assert bounds.status is Status.FAILED and "reads A[" in bounds.message, bounds
    assert "add a bounds check" in bounds.message
    memory = by_name[diagnostics.MEMORY]
    assert "reads A[" not in memory.message, memory  # said once, under its own title
    [concept] = [t for t in result.tests if t.kind is Kind.CONCEPT]
    assert concept.status is Status.FAILED and concept.points == 0.0  # points where they were
    msg = concept.message
    assert msg.startswith("failed for an out-of-bounds access (a boundary check), not for how "
                          "the kernel uses shared memory: "), msg
    assert "reads A[" in msg, msg
    # what was found: the shared memory and barriers are there; no barrier claimed missing
    assert "shared memory and barriers were found as the exercise asks" in msg, msg
    assert "of your barriers" not in msg and "where 2 are needed" not in msg, msg
    assert "The exercise asks that tiles" not in msg, msg
    found = class_view.categories(result)
    assert "out-of-bounds access in the instrumented run (a boundary check missing)" in found
