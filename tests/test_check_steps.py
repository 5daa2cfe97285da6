"""``autograder check``'s mutation step and last line (issue 32, item 16): each survivor is named
with its edit, and ``ready`` is said only where every step ran and nothing was left unchecked."""

from __future__ import annotations

from autograder.authoring import check
from autograder.mutation import run


def _result(score: float, pending: float = 0.0) -> dict:
    tests = [{"name": "hidden: 64x64", "kind": "correctness", "status": "passed" if score else
              "failed", "points": score, "max_points": 10.0, "message": ""}]
    if pending:
        tests.append({"name": "timing: against the instructor's kernel", "kind": "timing",
                      "status": "skipped", "points": 0.0, "max_points": pending, "message": ""})
    return {"device": "gpu", "score": score, "max_score": 10.0 + pending, "tests": tests,
            "pending_points": pending}


def test_the_mutation_step_names_each_survivor(monkeypatch):
    """The analysis runs on the transpose solution's real mutants; the gradings are stand-ins:
    two get full marks (survivors), the rest lose their points."""
    chosen = {}

    def graded(exercise, every, device, *args, **kwargs):
        chosen["ids"] = [m.id for m in every]
        survivors = {m.id for m in every[:2]}
        return {m.id: _result(10.0 if m.id in survivors else 0.0) for m in every}, {}

    monkeypatch.setattr(run, "grade", graded)
    monkeypatch.setattr("autograder.mutation.equivalent.load", lambda path: {})
    step = check._mutation("transpose", "gpu")
    assert step.ok is False
    from autograder.mutation.operators import mutants
    from autograder import exercises

    every = mutants(exercises.solution_path("transpose").read_text(encoding="utf-8"))
    assert "survived 2" in step.detail
    for m in every[:2]:
        line = next(ln for ln in step.detail.splitlines() if m.id in ln)
        assert line == f"survived: {m.id}, {m.description} (full marks)"
    assert not any(m.id in step.detail for m in every[2:])  # the killed ones are only counted


def test_ready_only_when_everything_ran():
    ok = check.Step("definition", True, "")
    assert check.verdict("x", [ok], "gpu") == "x: ready"
    gpu_only = check.Step("solution and known-bad submissions", True, "",
                          ("solution.py's tests that sim does not run (timing (25 points))",))
    line = check.verdict("x", [ok, gpu_only, check.Step("mutation analysis", None, "")], "sim")
    assert line.startswith("x: provisional:") and "ready" not in line
    assert "(timing (25 points))" in line and "mutation analysis (skipped)" in line
    assert "--device gpu" in line
    failed = check.verdict("x", [ok, check.Step("notebook", False, "")], "sim")
    assert failed == "x: 1 step(s) failed: notebook"


def test_concept_thresholds_are_measured_from_the_solution(monkeypatch):
    """Issue 32, item 17: the solution of transpose is graded and its instrumented runs put
    beside the stated numbers; a hand-written number the solution does not reach (1.5 loads
    per output element where it makes 1) fails the step, with both numbers printed."""
    from dataclasses import replace

    from autograder import exercises
    from autograder.authoring import thresholds

    real = exercises.get("transpose")
    rows = thresholds.measure("transpose")
    loads = [r for r in rows if r.quantity == "loads_per_output"]
    assert loads and all(r.agrees and r.measured == 1.0 for r in loads)
    assert all(r.agrees for r in rows)
    wrong_use = replace(real.concept.use, loads_per_output=lambda params: 1.5)
    wrong = replace(real, concept=replace(real.concept, use=wrong_use))
    real_get = exercises.get
    monkeypatch.setattr(exercises, "get",
                        lambda name: wrong if name == "transpose" else real_get(name))
    step = check._thresholds("transpose")
    assert step.ok is False
    line = next(ln for ln in step.detail.splitlines() if ln.startswith("loads_per_output"))
    assert "stated 1.5, measured 1" in line and "WRONG" in line
