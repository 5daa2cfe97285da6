"""Issue 30, goal 5: nothing a student sees comes from a process that held a hidden input.

The public cases run in a child of their own (with their instrumented runs), whose records alone
may carry what the code said to the student; in the hidden cases' child an exception's text,
what the code printed and the instrumented runs' errors are the instructor's, and the student
reads the grader's words. On the simulator every launch runs in a process of its own, so no case
reads what another left (a module-level array, a mutated object)."""

from __future__ import annotations

import json
import os
import re
import signal

import numpy as np
import pytest

from autograder import exercises, grader
from autograder.child import apart
from autograder.grading import children, plan
from autograder.judge.inputs import Grading
from autograder.judge.withheld import WITHHELD, said, withheld
from autograder.nbgrader import notebook as nbb
from autograder.nbgrader.authoring import build_source_notebook
from autograder.nbgrader.preprocessor import GradeWithAutograder
from autograder.report.export import to_gradescope
from autograder.sandbox.run import ChildRun
from autograder.source.submission import load_source
from autograder.wire.protocol import CaseRequest, Error, Request
from autograder.wire.results import ExerciseResult, Kind
from conftest import ROOT, TEST_DEVICE, graded_once

FILES = ROOT / "tests" / "files" / "evidence"
BASE = 900_000_000  # the fixtures write an input x as BASE + x * 2**24: digits their source lacks
SEED = 7


def _marks(x) -> set[int]:
    """The numbers the fixtures write for one case's input ``x`` (its first and last element)."""
    return {BASE + int(np.float32(x[0]) * 16777216), BASE + int(np.float32(x[-1]) * 16777216)}


def _case_marks() -> dict:
    """Each block_sum case of seed :data:`SEED` by its test name: (visibility, its marks)."""
    return {c.spec.name: (c.spec.visibility, _marks(c.inputs["x"]))
            for c in plan.make_cases(exercises.get("block_sum"), SEED)}


def _found(text: str) -> set[int]:
    """The marks in ``text`` (BASE itself is the fixtures' source, which messages quote)."""
    return {int(m) for m in re.findall(r"\b9\d{8}\b", text)} - {BASE}


def _feedback(result: ExerciseResult, source: str, monkeypatch) -> str:
    """What nbgrader's autograde writes into the student's notebook for ``result`` (what
    ``generate_feedback`` shows)."""
    nb = build_source_notebook("block_sum")
    (cell,) = nbb.cells_with(nb, solution=True)
    cell.source = source
    monkeypatch.setattr(grader, "grade", lambda *a, **k: result)
    nb, _ = GradeWithAutograder(allow_provisional=True, device=TEST_DEVICE).preprocess(nb, {})
    return json.dumps([c.get("outputs", []) for c in nb.cells])


def _student_view(result: ExerciseResult, source: str, monkeypatch) -> str:
    """Everything a student may read of ``result``: its notes and test messages, the JSON
    without the instructor's notes, Gradescope's output and tests (hidden ones once published)
    and the nbgrader feedback."""
    plain = result.to_dict()
    plain.pop("instructor_notes")
    gradescope = to_gradescope(result.to_dict())
    return "\n".join([*result.notes, *(t.message for t in result.tests), json.dumps(plain),
                      gradescope["output"], *(t["output"] for t in gradescope["tests"]),
                      _feedback(result, source, monkeypatch)])


def test_what_the_code_says_where_hidden_inputs_are_is_the_instructors(monkeypatch):
    """Every launch raises an exception whose text holds its inputs: the public cases' messages
    show their own, nothing the student reads holds a hidden case's, the instructor's notes
    hold them."""
    path = FILES / "says_its_inputs.py"
    result = graded_once(path, "block_sum", seed=SEED)
    shown = _student_view(result, path.read_text(), monkeypatch)
    marks = _case_marks()
    hidden = set().union(*(m for v, m in marks.values() if v == "hidden"))
    assert not _found(shown) & hidden, sorted(_found(shown) & hidden)
    if TEST_DEVICE == "sim":  # on a GPU the kernel's raise does not compile: nothing is said
        assert _found("\n".join(result.instructor_notes)) & hidden
        for t in result.tests:
            if t.kind is Kind.CORRECTNESS and t.visibility == "public":
                assert _found(t.message) == marks[t.name][1], t.message
            elif t.kind is Kind.CORRECTNESS and t.status.value == "error":
                assert WITHHELD in t.message and "ValueError" in t.message, t.message


def test_no_launch_reads_what_another_left(monkeypatch):
    """Module-level arrays keep every launch's inputs, and a launch that finds another's there
    raises them: none does, so no case's message holds another case's inputs (a public case's
    least of all) and nothing hidden reaches the student."""
    path = FILES / "stash_and_raise.py"
    result = graded_once(path, "block_sum", seed=SEED)
    shown = _student_view(result, path.read_text(), monkeypatch)
    marks = _case_marks()
    every = set().union(*(m for _, m in marks.values()))
    assert not _found(shown) & every, sorted(_found(shown) & every)
    assert not _found("\n".join(result.instructor_notes)) & every   # nothing was ever raised
    for t in result.tests:
        if t.kind is Kind.CORRECTNESS and t.visibility == "public":
            assert not _found(t.message), t.message


def _requests(grading: Grading, tmp_path, monkeypatch) -> list[tuple[str, dict]]:
    made: list[tuple[str, dict]] = []

    def child(request, backend, limits, work, **kw):
        made.append((backend, request))
        return ChildRun()

    def holding(request, limits, work, *a, **kw):
        made.append(("gpu", request))
        return ChildRun()

    monkeypatch.setattr(children, "run_child", child)
    monkeypatch.setattr(children, "run_holding", holding)
    monkeypatch.setattr(children.diagnostics, "run_sanitizers",
                        lambda request, *a, **kw: made.append(("sanitize", request)) or {})
    (tmp_path / "submission.py").write_text(grading.source.text, encoding="utf-8")
    children.run_all(grading, tmp_path)
    return made


def _arrays(request: dict) -> list[np.ndarray]:
    cases = [*request["cases"], *([request["diagnose"]] if request["diagnose"] else []),
             *request["diagnose_more"]]
    return [a for c in cases for a in c["inputs"].values()]


@pytest.mark.parametrize("name", ["block_sum", "tiled_matmul", "occupancy"])
@pytest.mark.parametrize("backend", ["sim", "gpu"])
def test_the_public_cases_run_in_a_child_that_holds_no_hidden_input(name, backend, tmp_path,
                                                                    monkeypatch):
    ex = exercises.get(name)
    cases = plan.make_cases(ex, 5)
    grading = Grading(exercise=ex, source=load_source(exercises.solution_path(ex)),
                      backend=backend, cases=cases, seed=5, sanitize=True)
    made = _requests(grading, tmp_path, monkeypatch)
    hidden = [a for c in cases if c.spec.visibility != "public" for a in c.inputs.values()]
    with_cases = [(kind, r) for kind, r in made if kind != "sanitize" and (
        r["cases"] or r["diagnose"])]
    public = [r for _, r in with_cases if all(
        cases[c["id"]].spec.visibility == "public"
        for c in [*r["cases"], *([r["diagnose"]] if r["diagnose"] else []), *r["diagnose_more"]])]
    assert public, "a child of the public cases"
    ran = {c["id"] for _, r in with_cases for c in r["cases"]}
    assert ran == {c.id for c in grading.runnable}
    for r in public:
        for a in _arrays(r):
            assert not any(a is h or (a.shape == h.shape and np.array_equal(a, h))
                           for h in hidden if isinstance(h, np.ndarray))
    for r in (r for _, r in with_cases if r not in public):   # the others: hidden cases only
        assert all(cases[c["id"]].spec.visibility != "public" for c in r["cases"])
        if r.get("timing"):
            assert backend == "gpu"


def _run(records: list, output: str = "") -> ChildRun:
    return ChildRun(records=[(h, {}) for h in records], output=output)


def test_a_hidden_child_s_words_are_replaced_and_kept_for_the_instructor():
    run = _run([
        {"type": "error", "phase": "environment", "message": "numpy 2.0 is not the grader's"},
        {"type": "error", "phase": "run", "id": 3, "lineno": 12,
         "message": "ValueError: tid=[0, 0, 0] ctaid=[0, 0, 0]: [905123243 902553752]"},
        {"type": "error", "phase": "run", "id": 4, "message": "Leak905123243: x"},
        {"type": "error", "phase": "run", "id": 5, "finding": True, "message": "905123243"},
        {"type": "error", "phase": "timing",
         "message": "CudaAPIError: [700] cuLaunchKernel: CUDA_ERROR_ILLEGAL_ADDRESS 905123243"},
        {"type": "instrumented", "report": {
            "case": 3, "params": {"n": 777},
            "error": {"message": "IndexError: 905123243", "where": 9},
            "out_of_bounds": [{"array": "x", "index": [905123243, 2], "shape": [777, 4]},
                              {"array": "x", "index": [778, -1], "shape": [777, 4]}]}},
    ], output="905123243\n")
    seen, taken = withheld(run, {3: "hidden: n 777"})
    text = json.dumps([h for h, _ in seen.records]) + seen.output
    assert "905123243" not in text and "Leak" not in text
    assert "numpy 2.0 is not the grader's" in text   # the grader's setup, before student code
    errors = [h for h, _ in seen.records if h.get("type") == "error"]
    assert errors[1]["message"] == said("ValueError: x") and errors[1]["lineno"] == 12
    assert errors[2]["message"].startswith("an exception (")
    assert "CudaAPIError (CUDA_ERROR_ILLEGAL_ADDRESS)" in errors[4]["message"]
    report = [h for h, _ in seen.records if h.get("type") == "instrumented"][0]["report"]
    assert report["out_of_bounds"][0]["index"] == ["?", 2]
    assert report["out_of_bounds"][1]["index"] == [778, -1]   # a bounds check's miss, shown
    assert taken.printed == "905123243"
    assert sum("905123243" in n for n in taken.notes) == 5
    assert any(n.startswith("hidden: n 777, phase run") for n in taken.notes)
    kept, _ = withheld(run, findings_kept=True)   # a GPU's driver finding is the driver's
    assert [h for h, _ in kept.records][3]["message"] == "905123243"


def test_the_simulator_s_limit_is_said_again_in_the_simulator_s_words():
    limit = ("SimulatorLimit: tid=[3, 0, 0] ctaid=[1, 0, 0]: cuda.shfl_down_sync is not run by "
             "Numba's CUDA simulator (it has no warp intrinsics: ...); a GPU runs it")
    assert said(limit).startswith("SimulatorLimit: cuda.shfl_down_sync is not run by")
    forged = "SimulatorLimit: cuda.x905123243 is not run by Numba's CUDA simulator"
    assert "905123243" not in said(forged) and not said(forged).startswith("SimulatorLimit")


def _fork_request(n: int) -> Request:
    ex = exercises.get("block_sum")
    cases = [CaseRequest(i, {"n": 1}, {"x": np.zeros(1, np.float32)}, {}) for i in range(n)]
    return Request("sim", ["run"], "s.py", "", ex.contract, cases)


def test_a_launch_whose_process_dies_costs_that_case_only(tmp_path, monkeypatch):
    sent = []
    monkeypatch.setattr(apart, "send", sent.append)

    def launch(kind, case, first):
        (tmp_path / f"ran-{case.id}").write_text("")
        if case.id == 1:
            os.kill(os.getpid(), signal.SIGKILL)
        return 0

    assert apart.run_apart(_fork_request(3), launch)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ran-0", "ran-1", "ran-2"]
    [error] = sent
    assert type(error) is Error and error.phase == "run" and error.id == 1
    assert "SIGKILL" in error.message


def test_no_launch_follows_code_that_does_not_build(tmp_path, monkeypatch):
    monkeypatch.setattr(apart, "send", lambda r: None)
    ran = []

    def launch(kind, case, first):
        (tmp_path / f"ran-{case.id}").write_text("")
        return apart.STOP

    assert not apart.run_apart(_fork_request(3), launch)
    assert [p.name for p in tmp_path.iterdir()] == ["ran-0"] and not ran


def test_each_launch_starts_from_the_state_before_the_first(tmp_path, monkeypatch):
    """What one launch changes in its process's memory, the next never sees."""
    monkeypatch.setattr(apart, "send", lambda r: None)
    state = {"launches": 0}

    def launch(kind, case, first):
        state["launches"] += 1
        (tmp_path / f"seen-{case.id}").write_text(str(state["launches"]))
        return 0

    apart.run_apart(_fork_request(3), launch)
    assert [(tmp_path / f"seen-{i}").read_text() for i in range(3)] == ["1", "1", "1"]
    assert state["launches"] == 0
