"""The concept test's numbers, measured from the instructor's solution (issue 32, item 17).

An exercise's :class:`autograder.exercises.base.Use` states what the instructor's kernel does at
a case ("loads A and B 2 x width / TILE times per output element"), and a student whose kernel
falls short reads that number as the instructor kernel's ("the instructor's kernel ... needs
about 1.5"). Those numbers are written by hand. :func:`measure` grades the solution once on the
simulator (its own sandboxed children, the instrumented runs at every size the simulator runs)
and puts each stated number beside the one the solution's instrumented run measured, so that
``autograder check`` prints them and fails when a student would be told something the
solution does not do.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autograder import exercises

#: A stated number may differ from the measured one by this fraction before the check fails
#: (the student is told "about"; a boundary tile or a rounding moves the count a little).
TOLERANCE = 0.2

#: Use's functions of a case, and their names in the rows.
QUANTITIES = ("loads_per_output", "shared_inputs_per_output", "reads_by_one_thread",
              "steps_per_output", "outputs_from_shared")


@dataclass(frozen=True)
class Threshold:
    """One stated number beside the measured one: ``quantity`` (a :class:`Use` field), at the
    case ``size`` (its parameters and the solution's constants, in words), ``stated`` (what the
    exercise's function gives), ``measured`` (the solution's instrumented run), ``bound`` (what
    a student's kernel may reach before the concept test fails, in the same unit, with the
    exercise's factor)."""

    quantity: str
    size: str
    stated: float
    measured: float
    bound: str

    @property
    def claim(self) -> str:
        """What a student is told of the stated number, as the concept test words it: the
        instructor's kernel needs ``about`` it, has ``at least`` it, or ``at most`` it."""
        return {"shared_inputs_per_output": "at least", "reads_by_one_thread": "at most",
                "steps_per_output": "at most"}.get(self.quantity, "about")

    @property
    def agrees(self) -> bool:
        """What a student is told (:attr:`claim`) holds of the solution: ``about`` within
        :data:`TOLERANCE`, ``at least`` / ``at most`` with that slack."""
        slack = TOLERANCE * max(abs(self.measured), abs(self.stated), 1e-9)
        if self.claim == "at least":
            return self.measured >= self.stated - slack
        if self.claim == "at most":
            return self.measured <= self.stated + slack
        return abs(self.stated - self.measured) <= slack

    def line(self) -> str:
        flag = "" if self.agrees else (f": WRONG: students are told the instructor's kernel "
                                       f"has {self.claim} {self.stated:.3g}")
        return (f"{self.quantity} at {self.size}: stated {self.stated:.3g}, measured "
                f"{self.measured:.3g} ({self.bound}){flag}")


def _bound(use, quantity: str, stated: float) -> str:
    if quantity == "loads_per_output":
        return f"students fail above {use.load_factor:g} x stated = {use.load_factor * stated:.3g}"
    if quantity == "shared_inputs_per_output":
        return f"students fail below {use.read_fraction:g} x stated = " \
               f"{use.read_fraction * stated:.3g}"
    if quantity == "reads_by_one_thread":
        return f"students fail above {use.thread_reads_factor:g} x stated = " \
               f"{use.thread_reads_factor * stated:.3g}"
    if quantity == "steps_per_output":
        return f"students fail above {use.steps_factor:g} x stated = " \
               f"{use.steps_factor * stated:.3g}"
    return f"students fail below 0.5 x stated = {0.5 * stated:.3g}"


def compare(exercise, report: dict) -> list[Threshold]:
    """The stated numbers of ``exercise``'s :class:`Use` beside the measured ones, at each
    instrumented run of ``report`` (:func:`autograder.judge.diagnostics.instrument_report`
    of the solution's grading). Per-block loads (``Use.block_loads``) are left out: they are
    judged block by block."""
    from autograder.judge import concept_use

    use = exercise.concept.use if exercise.concept else None
    if use is None or not isinstance(report, dict):
        return []
    rows = []
    for run in concept_use.each_run(report):
        params = concept_use.at(exercise, run)
        got = concept_use.measured(exercise, run)
        size = ", ".join(f"{k} {v}" for k, v in params.items()) or "the graded size"
        for quantity in QUANTITIES:
            stated_fn = getattr(use, quantity)
            if quantity == "outputs_from_shared":
                if not stated_fn:
                    continue
                stated = 1.0 if stated_fn is True else stated_fn(params)
            elif stated_fn is None or (quantity == "loads_per_output"
                                       and use.block_loads is not None):
                continue
            else:
                stated = stated_fn(params)
            if got.get(quantity) is None:
                continue
            rows.append(Threshold(quantity, size, float(stated), float(got[quantity]),
                                  _bound(use, quantity, float(stated))))
    return rows


def measure(name: str, seed: int | None = None) -> list[Threshold]:
    """Grade the solution of exercise ``name`` on the simulator (sandboxed children, as any
    grading) and :func:`compare` its instrumented runs with the exercise's stated numbers.
    ``seed``: the cases' (default: the preflight's). Raises ``FileNotFoundError`` without a
    solution and :class:`autograder.errors.GraderSetupError` when the grader cannot run here."""
    from autograder.grading import children, driver_occupancy, plan
    from autograder.grading.devices import default_limits
    from autograder.grading.preflight import PREFLIGHT_SEED
    from autograder.judge import diagnostics
    from autograder.judge.inputs import Grading
    from autograder.sandbox.run import scratch_dir
    from autograder.source.submission import load_source

    exercise = exercises.get(name)
    if exercise.concept is None or exercise.concept.use is None or exercise.diagnose is None:
        return []
    source = load_source(exercises.solution_path(exercise))
    seed = PREFLIGHT_SEED if seed is None else seed
    cases = driver_occupancy.fill(exercise, plan.make_cases(exercise, seed), "sim")
    grading = Grading(exercise=exercise, source=source, backend="sim", cases=cases,
                      limits=default_limits("sim"), seed=seed, sanitize=False)
    with scratch_dir() as tmp:
        (Path(tmp) / "submission.py").write_text(source.text, encoding="utf-8")
        kids = children.run_all(grading, Path(tmp))
    return compare(exercise, diagnostics.instrument_report(kids.instrumented))
