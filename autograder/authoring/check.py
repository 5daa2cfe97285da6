"""``autograder check NAME``: is an assignment ready to hand out? (issue 23)

The steps, each a :class:`Step` with what it found:

1. **definition**: ``exercise.py`` loads and defines a valid ``EXERCISE``;
2. **solution and known-bad submissions**: the instructor's solution gets full marks (skipped
   tests aside: on the simulator the GPU-only parts are skipped) and each known-bad submission
   (two at least) gets the verdicts its ``# kernelgrade-expect:`` header states
   (:mod:`autograder.authoring.solutions`), on a GPU where there is one, else on the simulator;
   a known-bad file's ``# kernelgrade-advice:`` must be shown when it is graded, and two files
   with the same failure signature must not give different advice
   (:func:`autograder.exercises.known_bad.advice_conflicts`);
3. **notebook**: the nbgrader source notebook builds from ``notebook.py`` and the solution;
4. **contract text**: the exercise's section of CONTRACTS.md is generated;
   **concept thresholds**: the numbers the concept test tells students of the instructor's kernel
   (:class:`autograder.exercises.base.Use`), each printed beside the one measured from the
   solution's instrumented run (:mod:`autograder.authoring.thresholds`); failed where they
   disagree;
5. **mutation analysis** (``autograder mutants``): every one-edit mutant of the solution loses
   points or is listed as equivalent; on a GPU by default, on the simulator when asked for (it
   grades one file per mutant). Each survivor is named (id, line, edit).

The last line (:func:`verdict`) says ``ready`` only when every step ran and passed and nothing
was left unchecked: on the simulator the timing test, the GPU-only sizes, GPU-only expectations
and (unless asked for) the mutation analysis never run, so it says ``provisional`` and names them.
"""

from __future__ import annotations

from dataclasses import dataclass

from autograder import exercises
from autograder.exercises import known_bad

#: Known-bad submissions an assignment keeps at least.
MIN_KNOWN_BAD = 2


@dataclass(frozen=True)
class Step:
    """One step of the check: ``ok`` is None when it was skipped; ``detail`` says what it
    found (a line per finding); ``unchecked``: what it could not check on this device (on the
    simulator: the timing test, the GPU-only sizes, GPU-only expectations), a line each."""

    name: str
    ok: bool | None
    detail: str
    unchecked: tuple[str, ...] = ()


def verdict(name: str, steps: list[Step], backend: str) -> str:
    """The check's last line for assignment ``name`` checked on ``backend`` (``gpu``, ``sim``):
    the failed steps; else ``provisional`` and what was not checked (a skipped step, points
    that need a GPU) with how to check it; else ``ready``."""
    failed = [s.name for s in steps if s.ok is False]
    if failed:
        return f"{name}: {len(failed)} step(s) failed: {', '.join(failed)}"
    missing = [f"{s.name} (skipped)" for s in steps if s.ok is None]
    missing += [line for s in steps for line in s.unchecked]
    if not missing:
        return f"{name}: ready"
    how = (f"run `autograder check {name} --device gpu` on a machine with a GPU" if backend != "gpu"
           else f"run `autograder check {name} --mutants`")
    return (f"{name}: provisional: every step that ran passed, but this was not checked: "
            f"{'; '.join(missing)}. Before handing it out, {how}.")


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
    lines: list[str] = []
    for r in rows:
        lines.append(f"{r.submission}: expected {r.expected}, got {r.got} on {r.device}: "
                     f"{'ok' if r.ok else 'WRONG'}")
        lines += [f"  - {p}" for p in r.problems]  # the lost tests' own messages
    conflicts = known_bad.advice_conflicts(exercises.mutants(name))
    lines += conflicts  # a '# kernelgrade-advice:' its own file does not get is a row's problem
    ok = all(r.ok for r in rows) and bad >= MIN_KNOWN_BAD and not conflicts
    if bad < MIN_KNOWN_BAD:
        lines.append(f"{bad} known-bad submission(s) in mutants/: keep {MIN_KNOWN_BAD} at least, "
                     "each with its '# kernelgrade-expect:' line")
    unchecked = []
    for r in rows:
        if r.unchecked and r is rows[0]:
            unchecked.append(f"{r.submission}'s tests that {r.device} does not run "
                             f"({', '.join(r.unchecked)})")
        elif r.unchecked:
            unchecked.append(f"{r.submission}'s expectations for another device "
                             f"({', '.join(r.unchecked)})")
    return Step("solution and known-bad submissions", ok, "\n".join(lines), tuple(unchecked))


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


def _thresholds(name: str) -> Step:
    """The concept test's stated numbers beside the solution's measured ones
    (:mod:`autograder.authoring.thresholds`): failed where a student would be told something
    the solution does not do."""
    from autograder.authoring.thresholds import measure

    rows = measure(name)
    if not rows:
        return Step("concept thresholds", True, "no measured bounds (the concept test reads "
                                                "the PTX only)")
    lines = list(dict.fromkeys(r.line() for r in rows))  # a size graded twice, said once
    wrong = [r for r in rows if not r.agrees]
    if wrong:
        lines.append("fix the exercise's Use functions (exercise.py) so that they give what "
                     "the solution does: students read them as the instructor kernel's numbers")
    return Step("concept thresholds", not wrong, "\n".join(lines))


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
    lines = [f"{len(every)} mutants on {backend}: "
             + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.get("counts", {}).items()))]
    for o in analysis.outcomes:  # each one that fails the step, by name, line and edit
        if o.verdict in (run.SURVIVED, run.NOT_GRADED):
            lines.append(f"{o.verdict}: {o.mutant.id}, {o.mutant.description} ({o.why})")
    if analysis.failed:
        lines.append(f"a survivor is a blind spot of the hidden tests: add a case that it fails, "
                     f"or list it in {equivalent.path(name).name} with why it is equivalent")
    lines += list(analysis.warnings)
    judged = analysis.count(run.NOT_JUDGED)
    unchecked = (f"{judged} mutants that lost nothing on {backend} but have points there that "
                 "need a GPU",) if judged else ()
    return Step("mutation analysis", not analysis.failed, "\n".join(lines), unchecked)


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
    steps += [_gradings(name, backend, jobs), _notebook(name), _contract(name),
              _thresholds(name)]
    if mutation if mutation is not None else backend == "gpu":
        steps.append(_mutation(name, backend))
    else:
        steps.append(Step("mutation analysis", None, "skipped on the simulator (--mutants runs "
                                                     "it: one grading per mutant)"))
    return steps
