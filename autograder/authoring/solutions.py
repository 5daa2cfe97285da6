"""``autograder solutions``: grade every instructor solution and every known-bad submission.

An instructor solution must lose no points (skipped tests aside); a known-bad submission must get
the verdicts its header declares (see :mod:`autograder.exercises.known_bad`) and lose points.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from autograder import exercises
from autograder.exercises import known_bad
from autograder.grading.devices import resolve_device
from autograder.grader import grade


# Gradings at once on one GPU: cases share it, timing runs take it alone in turn. 8: with one
# BLAS thread per child and the lock held only for GPU work, `--jobs 8` gave 0 wrong verdicts
# in 55 rows on an H100 and on H200s, four times (81-90 s; 2026-11-23).
DEFAULT_GPU_JOBS = 8


@dataclass
class CheckRow:
    """One graded file: what it should get, what it got, and whether that is acceptable."""

    exercise: str
    submission: str
    expected: str
    got: str
    ok: bool
    seconds: float
    device: str
    #: What is wrong, a line each: the solution's lost tests with their messages, or the
    #: known-bad file's unmet expectations (empty when ``ok``).
    problems: tuple[str, ...] = ()
    #: What this grading could not check on its device: the skipped tests that carry points
    #: (name and points: on the simulator, the timing test and the GPU-only sizes), and a
    #: known-bad file's expectations for the other backend.
    unchecked: tuple[str, ...] = ()


def _got(result) -> str:
    shown = [f"{t.kind.value}={t.status.value}" for t in result.tests
             if t.status.value not in ("passed", "skipped")]
    summary = ", ".join(dict.fromkeys(shown)) or "all passed"
    return f"{result.score:g}/{result.max_score:g}" + ("*" if result.provisional else "") + \
        f" ({summary})"


def submissions(name: str) -> list[Path]:
    """The files ``autograder solutions`` grades for exercise ``name``: its instructor solution
    first, then its known-bad submissions (:func:`autograder.exercises.mutants`)."""
    return [exercises.solution_path(name), *exercises.mutants(name)]


def check_submission(name: str, path: Path, device: str, seed: int | None = None) -> CheckRow:
    """Grade ``path`` (the solution of exercise ``name`` or one of its known-bad submissions) on
    ``device`` and say whether it got what it should. Raises what :func:`grade` raises for the
    grader's setup (:class:`autograder.errors.GraderSetupError`)."""
    start = time.monotonic()
    # No preflight: this is the preflight's own check, shown row by row.
    result = grade(path, name, device=device, seed=seed, preflight=False)
    skipped = tuple(f"{t.name} ({t.max_points:g} points)" for t in result.tests
                    if t.status.value == "skipped" and t.max_points > 0)
    if Path(path) == exercises.solution_path(name):
        problems = known_bad.full_marks_problems(result)
        return CheckRow(name, Path(path).name, "full marks", _got(result), not problems,
                        time.monotonic() - start, result.device, tuple(problems), skipped)
    every = known_bad.expectations(path)
    wanted = [str(e) for e in every if e.applies_to(result.device)]
    elsewhere = tuple(str(e) for e in every if not e.applies_to(result.device))
    problems = known_bad.unmet(path, result)
    return CheckRow(name, f"mutants/{Path(path).name}", ", ".join(wanted) or "?", _got(result),
                    not problems, time.monotonic() - start, result.device, tuple(problems),
                    elsewhere)


def check_exercise(name: str, device: str, seed: int | None = None) -> list[CheckRow]:
    """Rows for the solution and the mutants of exercise ``name`` graded on ``device``, one
    after another."""
    return [check_submission(name, path, device, seed) for path in submissions(name)]


def expects_timeout(path: Path, backend: str) -> bool:
    """True when ``path`` is a known-bad submission whose header expects a ``timeout`` on
    ``backend`` (``gpu`` or ``sim``): a kernel that never ends, whose grading waits out a case's
    time limit, the slowest gradings of ``autograder solutions``."""
    return any(e.status == "timeout" and e.applies_to(backend)
               for e in known_bad.expectations(path))


def submission_order(tasks: list[tuple[str, Path]], backend: str) -> list[int]:
    """The indexes of ``tasks`` (``(exercise, path)`` pairs) in the order to start their
    gradings on ``backend``: those expected to time out (:func:`expects_timeout`) first, so
    that their waits overlap the other gradings instead of ending the run; then the others;
    each group in the order given."""
    slow = [expects_timeout(path, backend) for _, path in tasks]
    return sorted(range(len(tasks)), key=lambda i: not slow[i])


def check_all(names: list[str], device: str, seed: int | None = None, jobs: int = 1,
              on_exercise=None) -> list[CheckRow]:
    """Rows for every exercise of ``names`` (in that order, each exercise's solution first),
    with up to ``jobs`` gradings at once: threads of this process, each grading's code still in
    its own sandboxed children (on a GPU, correctness runs share it and each timing run has it
    alone, :mod:`autograder.host.gpulock`). Gradings start slowest first (:func:`submission_order`);
    rows keep the order above. ``on_exercise(rows)`` is called, in the calling thread, as soon
    as all of an exercise's rows are in (its rows in the order above). The first exception of a
    grading (a ``GraderSetupError``) is raised once the gradings under way have ended; none
    starts after. ``device``: ``auto``, ``gpu`` or ``sim`` (``auto`` is resolved here only to
    order the gradings; each grading resolves it again)."""
    tasks = [(name, path) for name in names for path in submissions(name)]
    rows: dict[int, CheckRow] = {}
    left = {name: sum(1 for n, _ in tasks if n == name) for name in names}
    backend = resolve_device(device) if device == "auto" else device
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(check_submission, *tasks[i], device, seed): i
                   for i in submission_order(tasks, backend)}
        try:
            for future in as_completed(futures):
                i = futures[future]
                rows[i] = future.result()
                name = tasks[i][0]
                left[name] -= 1
                if not left[name] and on_exercise is not None:
                    on_exercise([rows[k] for k in sorted(rows) if tasks[k][0] == name])
        except BaseException:
            for future in futures:
                future.cancel()
            raise
    return [rows[i] for i in sorted(rows)]


def progress_line(done: int, total: int, name: str, rows: list[CheckRow]) -> str:
    """One line for an exercise whose rows are all in (``done`` of ``total`` exercises), e.g.
    ``[2/6] matmul_any_size: 5 graded, all ok, 31.4 s on sim`` (the rows' grading seconds added
    up); a wrong verdict is named."""
    wrong = [r.submission for r in rows if not r.ok]
    verdict = "all ok" if not wrong else f"{len(wrong)} WRONG ({', '.join(wrong)})"
    devices = ", ".join(dict.fromkeys(r.device for r in rows if r.device)) or "?"
    seconds = sum(r.seconds for r in rows)
    return (f"[{done}/{total}] {name}: {len(rows)} graded, {verdict}, {seconds:.1f} s "
            f"on {devices}")
