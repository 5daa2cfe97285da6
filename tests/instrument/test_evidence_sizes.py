"""Issue 30, goal 1: evidence comes from the launches that earn the points. Every graded case is
also run instrumented (races, barriers, memory), at its own size and inputs, on a sample of its
blocks that includes the edge blocks and one drawn from the secret seed; on a GPU the GPU-only
sizes too, and compute-sanitizer at graded sizes only. No analysis runs at a size of its own."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

from autograder import exercises
from autograder.child.cases import sampled_blocks
from autograder.exercises import known_bad
from autograder.exercises.base import Diagnose
from autograder.grading import children, plan
from autograder.judge import concept_use, diagnostics
from autograder.judge.inputs import Grading
from autograder.sandbox.run import ChildRun
from autograder.source.submission import load_source
from autograder.wire.results import Kind, Status
from conftest import ROOT, grade_file, run_file_on_the_simulator, simulator_in_process

FILES = ROOT / "tests" / "files" / "evidence"
DIAGNOSED = [n for n in exercises.names() if exercises.get(n).diagnose is not None]


def _requests(grading: Grading, tmp_path, monkeypatch) -> list[tuple[str, dict]]:
    """Every child request ``children.run_all`` makes for ``grading``, as (kind, request), with
    no child started: ``sim``, ``compile`` and ``gpu`` children, and ``sanitize`` runs."""
    made: list[tuple[str, dict]] = []

    def child(request, backend, limits, work, **kw):
        made.append((backend, request))
        return ChildRun()

    def holding(request, limits, work, *a, **kw):
        made.append(("gpu", request))
        return ChildRun()

    def sanitizers(request, *a, **kw):
        made.append(("sanitize", request))
        return {}

    monkeypatch.setattr(children, "run_child", child)
    monkeypatch.setattr(children, "run_holding", holding)
    monkeypatch.setattr(children.diagnostics, "run_sanitizers", sanitizers)
    (tmp_path / "submission.py").write_text(grading.source.text, encoding="utf-8")
    children.run_all(grading, tmp_path)
    return made


def _grading(name: str, backend: str, seed: int = 5) -> Grading:
    ex = exercises.get(name)
    return Grading(exercise=ex, source=load_source(exercises.solution_path(ex)), backend=backend,
                   cases=plan.make_cases(ex, seed), seed=seed, sanitize=True)


def _instrumented(made) -> list[dict]:
    return [c for _, r in made if "instrument" in r["phases"]
            for c in ([r["diagnose"]] if r["diagnose"] else []) + r["diagnose_more"]]


@pytest.mark.parametrize("backend", ["sim", "gpu"])
@pytest.mark.parametrize("name", DIAGNOSED)
def test_every_graded_case_is_analysed_at_its_own_size_and_inputs_and_no_other(
        name, backend, tmp_path, monkeypatch):
    grading = _grading(name, backend)
    made = _requests(grading, tmp_path, monkeypatch)
    analysed = _instrumented(made)
    graded = {c.id: c for c in grading.runnable}
    assert sorted(c["id"] for c in analysed) == sorted(graded)   # each once, GPU-only on a GPU
    for c in analysed:
        case = graded[c["id"]]
        assert c["params"] == case.spec.params
        assert all(c["inputs"][k] is case.inputs[k] for k in case.inputs)   # the same arrays
        assert c["max_blocks"] == grading.exercise.diagnose.max_blocks
    sanitized = [c for kind, r in made if kind == "sanitize" for c in r["cases"]]
    assert (backend == "gpu") == bool(sanitized)
    for c in sanitized:
        assert c["params"] == graded[c["id"]].spec.params
        assert all(c["inputs"][k] is graded[c["id"]].inputs[k] for k in c["inputs"])


def test_the_sanitizer_runs_at_the_graded_cases_up_to_its_size():
    ex = exercises.get("block_sum")
    cases = plan.make_cases(ex, 1)
    chosen = plan.sanitizer_cases(cases)
    assert chosen and set(c.id for c in chosen) <= set(c.id for c in cases)
    assert all(plan.input_elements(c) <= plan.SANITIZER_MAX_ELEMENTS for c in chosen)
    assert [c.id for c in plan.sanitizer_cases(cases[-1:])] == [cases[-1].id]  # never none


@pytest.mark.parametrize("grid, max_blocks", [((5, 1, 1), 3), ((3, 4, 1), 3), ((2, 2, 1), 2),
                                              ((7, 3, 2), 4), ((9, 1, 1), 1)])
def test_a_sample_holds_the_edge_blocks_and_the_seed_decides_the_rest(grid, max_blocks):
    every = list(np.ndindex(*grid))
    last = every[-1]
    drawn = set()
    for u in np.linspace(0, 0.999, 60):
        picked = sampled_blocks(grid, max_blocks, float(u))
        assert max_blocks <= len(picked) == len(set(picked))
        assert len(picked) <= max_blocks + (2 * sum(g > 1 for g in grid) if max_blocks > 1 else 0)
        assert picked == sorted(picked) and set(picked) <= set(every)
        assert last in picked   # the block partial in every dimension, always
        if max_blocks >= 3:
            assert every[0] in picked
        drawn |= set(picked)
    if max_blocks >= 2:   # any block may be the one drawn: none is known to go unwatched
        assert drawn == set(every)
    assert sampled_blocks(grid, max_blocks, 0.5) == sampled_blocks(grid, max_blocks, 0.5)
    assert sampled_blocks(grid, len(every), 0.3) is None   # no more blocks than asked: all


@pytest.mark.parametrize("grid", [(9, 1, 1), (5, 4, 1), (4, 3, 2)])
def test_the_drawn_block_runs_beside_its_neighbours(grid):
    """A block never runs without the blocks before and after it in each grid dimension: a
    kernel cannot tell the sample by an unrun predecessor, nor race with one unseen."""
    every = list(np.ndindex(*grid))

    def neighbours(b):
        return {tuple(c + step if e == d else c for e, c in enumerate(b))
                for d, n in enumerate(grid) for step in (-1, 1) if 0 <= b[d] + step < n}

    for u in np.linspace(0, 0.999, 40):
        picked = sampled_blocks(grid, 3, float(u))
        edges = set(sampled_blocks(grid, 2, None))
        assert any(neighbours(b) <= set(picked) for b in set(picked) - edges), picked
    assert len(every) > 3


def test_the_draw_comes_from_the_secret_seed_case_by_case():
    draws = {plan.block_draw(seed, case) for seed, case in itertools.product(range(4), range(4))}
    assert len(draws) == 16 and all(0 <= d < 1 for d in draws)
    assert plan.block_draw(3, 2) == plan.block_draw(3, 2)


def test_a_diagnose_of_its_own_size_is_accepted_unused_with_a_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        d = Diagnose(params={"width": 37}, max_blocks=2, seeded={"width": (33, 63)})
    assert any(issubclass(w.category, FutureWarning) and "unused" in str(w.message)
               for w in caught)
    ex = exercises.get("tiled_matmul")
    from dataclasses import replace
    cases = plan.make_cases(ex, 1)
    evidence = plan.evidence_cases(replace(ex, diagnose=d), cases, 1)
    assert [e.params for e in evidence] == [c.spec.params for c in cases]


def test_a_barrier_kept_only_at_the_sizes_once_analysed_is_found_at_the_graded_ones():
    """The second barrier of a tiled matmul, kept only at 37 and the primes from 33 to 63 (the
    sizes the instrumented runs used before): its race is found at the graded sizes, every
    correctness case fails (the race decides) and so does the concept test."""
    path = FILES / "barrier_at_instrumented_sizes.py"
    result = grade_file(path, "tiled_matmul", seed=3)
    shown = "\n".join(f"  {t.name}: {t.status.value} {t.message[:200]}" for t in result.tests)
    assert not known_bad.unmet(path, result), shown
    graded = {c.params["width"] for c in exercises.get("tiled_matmul").cases}
    races = next(t for t in result.tests if t.name == diagnostics.RACES)
    assert "race on shared array" in races.message
    import re
    sizes = {int(w) for w in re.findall(r"\(at width (\d+)\)", races.message)}
    assert sizes and sizes <= graded, races.message
    for t in result.tests:
        if t.kind is Kind.CORRECTNESS and t.status is not Status.SKIPPED:
            assert t.status is Status.FAILED and t.points == 0, shown


def _evidence_reports(name: str, gpu_only: bool) -> tuple[list[dict], list]:
    """The instructor solution's instrumented reports at each graded case of ``name`` (the
    simulator's, or with ``gpu_only`` the GPU-only ones), as the grader's children make them."""
    from numba import cuda

    from autograder.child.cases import run_instrumented
    from autograder.child.contract import import_submission, resolve

    ex = exercises.get(name)
    path = str(exercises.solution_path(ex))
    kernel, consts = resolve(import_submission(path, guard=False), ex.contract, path, "sim")
    cases = [c for c in plan.make_cases(ex, 11) if c.spec.sim != gpu_only]
    return [run_instrumented(cuda, kernel, ex.contract, consts, c)
            for c in plan.evidence_cases(ex, cases, 11)], cases


def _assert_clean(name: str, reports: list[dict]) -> None:
    ex = exercises.get(name)
    source = load_source(exercises.solution_path(ex))
    for r in reports:
        assert r["error"] is None and not r["races"] and not r["divergent_barriers"], r["params"]
    merged = diagnostics.merged(reports)
    grading = Grading(exercise=ex, source=source, backend="sim")
    assert diagnostics.concept_problems(grading, merged, {}) == []
    assert concept_use.problems(ex, source, merged) == []


@pytest.mark.parametrize("name", DIAGNOSED)
def test_the_instructor_solutions_are_clean_at_every_simulated_graded_size(name, request):
    """No finding, and every concept bound met (:class:`autograder.exercises.base.Use`,
    ``Diagnose``'s thresholds), at each graded size the simulator runs."""
    simulator_in_process(request)
    reports, _ = _evidence_reports(name, gpu_only=False)
    _assert_clean(name, reports)


@pytest.mark.slow
@pytest.mark.parametrize("name", DIAGNOSED)
def test_the_instructor_solutions_are_clean_at_every_gpu_only_graded_size(name, request):
    """The same at the GPU-only sizes, which a GPU grading analyses in its simulator child
    (seconds of CPU time each: ``benchmarks/evidence_sizes.py``)."""
    simulator_in_process(request)
    reports, cases = _evidence_reports(name, gpu_only=True)
    if not cases:
        pytest.skip(f"{name} has no GPU-only case")
    _assert_clean(name, reports)


def test_in_a_fresh_interpreter_the_solutions_are_clean():
    """The solutions' checks resolve their kernels as the simulator child does: where a
    parallel run imported Numba for a GPU target first, they run again here."""
    run_file_on_the_simulator(__file__, minimum=len(DIAGNOSED),
                              select="simulated_graded_size and not fresh")


@pytest.mark.gpu
def test_on_a_gpu_compute_sanitizer_runs_at_the_graded_sizes(tmp_path):
    """KERNELGRADE_TEST_DEVICE=gpu: racecheck runs at graded sizes, so it finds the race of a
    barrier kept only at the sizes once analysed (at those, there is none to find)."""
    from autograder.grader import gpu_available
    from autograder.grading.devices import default_limits
    from autograder.judge import sanitizer
    from conftest import TEST_DEVICE

    if TEST_DEVICE != "gpu" or not gpu_available() or sanitizer.executable() is None:
        pytest.skip("needs a CUDA GPU and compute-sanitizer (KERNELGRADE_TEST_DEVICE=gpu)")
    ex = exercises.get("tiled_matmul")
    source = load_source(FILES / "barrier_at_instrumented_sizes.py")
    (tmp_path / "submission.py").write_text(source.text, encoding="utf-8")
    grading = Grading(exercise=ex, source=source, backend="gpu", cases=plan.make_cases(ex, 3),
                      limits=default_limits("gpu"), seed=3, sanitize=True)
    kids = children.run_all(grading, tmp_path)
    assert kids.sanitized.get("racecheck") is not None and kids.sanitized["racecheck"].count
    analysed = {tuple(r.get("params", {}).items())
                for h, _ in kids.instrumented.of_type("instrumented")
                for r in [h.get("report") or {}]}
    assert analysed == {tuple(c.spec.params.items()) for c in grading.cases}
