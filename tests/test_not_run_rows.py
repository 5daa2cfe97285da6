"""Code that never ran, as the student and the TA read it (issue 32, item 7).

A refused or empty submission runs nothing: its hidden rows say so, never "your code raised an
error". A racy kernel's cases are decided by the race verdict: its hidden rows say that, never
"wrong result" (least of all for sizes the simulator never ran). The class view files an empty
notebook as one with no code. A kernel that fails a correctness test can never earn the timing
points: they are lost, not "provisional: 25 points need a GPU". Real gradings on the simulator.
"""

from __future__ import annotations

import json

import nbformat
import pytest

from autograder import exercises
from autograder.grader import grade
from autograder.judge.collect import TIMING_NEEDS_CORRECT
from autograder.report import class_view
from autograder.report.export import to_gradescope
from autograder.report.parts import (HIDDEN_RACE, HIDDEN_RACE_NOT_RUN, HIDDEN_STATUS_TEXT,
                                     render_part)
from autograder.wire.results import Kind, Status

SYNTAX_ERROR = ("from numba import cuda\nTILE_WIDTH = 16\n\n@cuda.jit\n"
                "def tiled_matmul(A, B, C)\n    pass\n")
RAISED = HIDDEN_STATUS_TEXT[Status.ERROR]


def notebook(tmp_path, *sources: str):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# my notebook")]
                                  + [nbformat.v4.new_code_cell(s) for s in sources])
    path = tmp_path / "submission.ipynb"
    path.write_text(nbformat.writes(nb), encoding="utf-8")
    return path


def hidden_lines(result) -> list[str]:
    text = render_part(result, "correctness", with_header=True)
    return [line for line in text.splitlines() if "] hidden test" in line]


def gradescope_hidden(result) -> list[str]:
    shown = to_gradescope(json.loads(json.dumps(result.to_dict())))["tests"]
    return [t["output"] for t in shown if t["name"].startswith("hidden test")]


@pytest.mark.parametrize("sources, reason", [
    ((SYNTAX_ERROR,), "not run: the code does not parse"),
    ((), "not run: the submission has no code"),
    (("",), "not run: the submission has no code"),
])
def test_hidden_rows_of_code_that_never_ran_say_it_did_not_run(tmp_path, sources, reason):
    result = grade(notebook(tmp_path, *sources), "tiled_matmul", device="sim", preflight=False)
    lines = hidden_lines(result)
    assert lines and all(reason in line for line in lines), lines
    assert not any(RAISED in line or "raised" in line for line in lines), lines
    assert set(gradescope_hidden(result)) == {reason}
    assert not result.provisional


def test_the_class_view_files_an_empty_notebook_as_no_code(tmp_path):
    empty = grade(notebook(tmp_path), "tiled_matmul", device="sim", preflight=False)
    found = class_view.categories(empty)
    assert "no code to grade (an empty notebook or file)" in found, found
    assert "kernel raised an error" not in found, found


def test_a_racy_kernels_hidden_rows_say_race_not_wrong_result():
    """block_sum without the barrier between its steps: every case is decided by the race,
    the GPU-only sizes included (never run on the simulator)."""
    path = exercises.folder("block_sum") / "mutants" / "missing_step_barrier.py"
    result = grade(path, "block_sum", device="sim", preflight=False, seed=7)
    gpu_only = {c.name for c in exercises.get("block_sum").cases if not c.sim}
    hidden = [t for t in result.tests if t.kind is Kind.CORRECTNESS and t.visibility == "hidden"]
    assert gpu_only and {t.name for t in hidden} >= gpu_only
    lines = hidden_lines(result)
    assert not any("wrong result" in line for line in lines), lines
    for t, line in zip(hidden, lines):
        assert (HIDDEN_RACE_NOT_RUN if t.name in gpu_only else HIDDEN_RACE) in line, (t, line)
        if t.name in gpu_only:  # the instructor's message says it never ran either
            assert "not run here" in t.message, t.message
    assert set(gradescope_hidden(result)) == {HIDDEN_RACE, HIDDEN_RACE_NOT_RUN}
    # the timing can never be earned: lost, not pending
    timing = next(t for t in result.tests if t.kind is Kind.TIMING)
    assert timing.status is Status.FAILED and timing.message == TIMING_NEEDS_CORRECT, timing
    assert not result.provisional and "need a GPU" not in render_part(result, "timing")
