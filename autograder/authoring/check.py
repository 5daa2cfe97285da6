"""``autograder check NAME``: is an assignment ready to hand out? (issue 23)

The steps, each a :class:`Step` with what it found:

1. **definition**: ``exercise.py`` loads and defines a valid ``EXERCISE``;
2. **solution and known-bad submissions**: the instructor's solution gets full marks (skipped
   tests aside: on the simulator the GPU-only parts are skipped) and each known-bad submission
   (two at least) gets the verdicts its ``# kernelgrade-expect:`` header states
   (:mod:`autograder.authoring.solutions`), on a GPU where there is one, else on the simulator;
3. **notebook**: the nbgrader source notebook builds from ``notebook.py`` and the solution;
4. **contract text**: the exercise's section of CONTRACTS.md is generated;
5. **mutation analysis** (``autograder mutants``): every one-edit mutant of the solution loses
   points or is listed as equivalent; on a GPU by default, on the simulator when asked for (it
   grades one file per mutant).
"""

from __future__ import annotations

from dataclasses import dataclass

from autograder import exercises

#: Known-bad submissions an assignment keeps at least.
MIN_KNOWN_BAD = 2


@dataclass(frozen=True)
class Step:
    """One step of the check: ``ok`` is None when it was skipped; ``detail`` says what it
    found (a line per finding)."""

    name: str
    ok: bool | None
    detail: str


def _definition(name: str) -> Step:
    try:
        ex = exercises.get(name)
    except Exception as exc:  # noqa: BLE001 - the author's code: any error is the finding
        return Step("definition", False, f"{type(exc).__name__}: {exc}")
    return Step("definition", True, f"{ex.title} (assignment {ex.assignment}, "
                                    f"{len(ex.cases)} cases, {ex.max_score:g} points)")


def _gradings(name: str, device: str, jobs: int) -> Step:
    from autograder.authoring.solutions import check_all

    rows = check_all([name], device, jobs=jobs)
    bad = len(exercises.mutants(name))
    lines = [f"{r.submission}: expected {r.expected}, got {r.got} on {r.device}: "
             f"{'ok' if r.ok else 'WRONG'}" for r in rows]
    ok = all(r.ok for r in rows) and bad >= MIN_KNOWN_BAD
    if bad < MIN_KNOWN_BAD:
        lines.append(f"{bad} known-bad submission(s) in mutants/: keep {MIN_KNOWN_BAD} at least, "
                     "each with its '# kernelgrade-expect:' line")
    return Step("solution and known-bad submissions", ok, "\n".join(lines))


def _notebook(name: str) -> Step:
    from autograder.nbgrader.authoring import build_source_notebook

    try:
        nb = build_source_notebook(name)
    except Exception as exc:  # noqa: BLE001 - the author's notebook text
        return Step("notebook", False, f"{type(exc).__name__}: {exc}")
    return Step("notebook", True, f"{len(nb.cells)} cells")


def _contract(name: str) -> Step:
    from autograder.authoring.docs import exercise_section

    try:
        text = exercise_section(exercises.get(name))
    except Exception as exc:  # noqa: BLE001 - the author's definition
        return Step("contract text", False, f"{type(exc).__name__}: {exc}")
    return Step("contract text", True, text.strip())


def _mutation(name: str, device: str) -> Step:
    from autograder.mutation import equivalent, run
    from autograder.mutation.operators import mutants

    every = mutants(exercises.solution_path(name).read_text(encoding="utf-8"))
    listed = equivalent.load(equivalent.path(name))
    results, errors = run.grade(name, every, device, None, True, None, progress=False)
    backend = next((r["device"] for r in results.values()), device)
    analysis = run.analyse(name, every, listed, results, errors, backend,
                           {m.id for m in every}, False)
    verdicts = analysis.to_dict()
    return Step("mutation analysis", not analysis.failed,
                f"{len(every)} mutants on {backend}: "
                + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.get("counts", {}).items())))


def check(name: str, device: str = "auto", mutation: bool | None = None,
          jobs: int = 2) -> list[Step]:
    """Run the steps for assignment ``name`` on ``device`` (``auto``, ``gpu``, ``sim``);
    ``mutation``: run the mutation analysis (None: on a GPU only). Later steps are skipped once
    the definition fails or the solution is missing. Raises
    :class:`autograder.exercises.UnknownExercise` and what
    :func:`autograder.grading.devices.resolve_device` raises: the grader's setup, not the
    assignment."""
    from autograder.grading.devices import resolve_device

    backend = resolve_device(device)
    exercises.folder(name)
    steps = [_definition(name)]
    if not steps[0].ok:
        return steps
    try:
        exercises.solution_path(name)
    except FileNotFoundError as exc:
        return steps + [Step("solution", False, str(exc))]
    steps += [_gradings(name, backend, jobs), _notebook(name), _contract(name)]
    if mutation if mutation is not None else backend == "gpu":
        steps.append(_mutation(name, backend))
    else:
        steps.append(Step("mutation analysis", None, "skipped on the simulator (--mutants runs "
                                                     "it: one grading per mutant)"))
    return steps
