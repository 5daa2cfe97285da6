"""What a grade cell of an nbgrader notebook shows: one part of an exercise's result, as text.

A part is ``correctness``, ``concept`` or ``timing`` (:class:`autograder.wire.results.Kind`); the
concept part also lists the diagnostic tests (no points of their own: a finding fails the concept
test). For the student (``reveal_hidden=False``, what the grading preprocessor writes into the
autograded notebook and so into the feedback), hidden correctness tests are numbered, not named,
and say only how they ended: their sizes, their messages and the secret seed stay with the
instructor. For an instructor (``reveal_hidden=True``, :func:`autograder.nbgrader.cells.
grade_this_notebook` run by hand) every test is shown as the grader reported it.
"""

from __future__ import annotations

from autograder.wire.results import ExerciseResult, Kind, Status, TestResult, provisional_note

_MARK = {Status.PASSED: "ok  ", Status.SKIPPED: "skip"}

#: What a hidden correctness test says to the student, by how it ended.
HIDDEN_STATUS_TEXT = {
    Status.PASSED: "correct",
    Status.FAILED: "wrong result",
    Status.ERROR: "your code raised an error (run your kernel on sizes of your own to see where)",
    Status.TIMEOUT: "did not finish in time",
    Status.SKIPPED: "not run here",
}
#: ... and a skipped one on the simulator.
HIDDEN_SKIPPED_ON_SIM = "runs on a GPU only"
#: ... one that none of the code ran for (``details["not_run"]``: a refused or empty
#: submission, code that did not load), with that reason in the grader's own words.
HIDDEN_NOT_RUN = "not run: {}"
#: ... and one the race verdict decided (``details["decided_by"]``), whatever its outputs
#: were, or on a size this backend never runs (``details["not_run_here"]``).
HIDDEN_RACE = ("counted as failed: the kernel has a race or a barrier not every thread "
               "reaches (the diagnostics name it)")
HIDDEN_RACE_NOT_RUN = ("not run here (it runs on a GPU only), and counted as failed: the kernel "
                       "has a race or a barrier not every thread reaches (the diagnostics name it)")


def hidden_text(status: Status | str, details: dict | None, device: str) -> str:
    """The few words a hidden correctness test shows the student, from how it ended
    (``status``), its ``details`` and the result's ``device``: never its size, its values or
    the grader's message. Code that never ran says so (:data:`HIDDEN_NOT_RUN`), a case the
    race verdict decided says that (:data:`HIDDEN_RACE`), not "wrong result"."""
    status = Status(status)
    details = details if isinstance(details, dict) else {}
    not_run = details.get("not_run")
    if isinstance(not_run, str) and not_run and status is not Status.SKIPPED:
        return HIDDEN_NOT_RUN.format(not_run)
    if details.get("decided_by") in ("race", "sanitizer") and status is Status.FAILED:
        return HIDDEN_RACE_NOT_RUN if details.get("not_run_here") else HIDDEN_RACE
    if status is Status.SKIPPED and device == "sim":
        return HIDDEN_SKIPPED_ON_SIM
    return HIDDEN_STATUS_TEXT[status]


def part_tests(result: ExerciseResult, kind: str | Kind) -> list[TestResult]:
    """The tests of ``result`` a grade cell of part ``kind`` lists: those of that kind, and for
    ``concept`` the diagnostics too. Raises ``ValueError`` for an unknown kind."""
    kind = Kind(kind)
    kinds = {kind, Kind.DIAGNOSTIC} if kind is Kind.CONCEPT else {kind}
    return [t for t in result.tests if t.kind in kinds]


def part_points(result: ExerciseResult, kind: str | Kind) -> tuple[float, float]:
    """``(points, max_points)`` of the tests of one kind (``correctness``, ``concept``,
    ``timing`` or ``diagnostic``) in ``result``. Raises ``ValueError`` for another kind."""
    kind = Kind(kind)
    tests = [t for t in result.tests if t.kind is kind]
    return (round(sum(t.points for t in tests), 4), round(sum(t.max_points for t in tests), 4))


def part_pending(result: ExerciseResult, kind: str | Kind) -> float:
    """Points of the skipped tests of one kind: neither earned nor lost (on the simulator, the
    timing test and the GPU-only sizes)."""
    kind = Kind(kind)
    return round(sum(t.max_points for t in result.tests
                     if t.kind is kind and t.status is Status.SKIPPED), 4)


def where(result: ExerciseResult) -> str:
    """The device in words: ``"the CUDA simulator"`` or the GPU's name."""
    return "the CUDA simulator" if result.device == "sim" else result.device.partition(":")[2]


def total_line(result: ExerciseResult, hand_points: float = 0.0) -> str:
    """The first line of an exercise's report in a grade cell: its points, the device and the
    provisional note, ``"block_sum: 55 / 100 points in all, graded on the CUDA simulator
    (provisional: 45 points need a GPU)"``. ``hand_points`` (> 0: the points of the
    notebook's cells graded by hand, nbgrader's written answers and tasks, which nbgrader adds
    to the notebook's maximum) makes it say that the points are the autograder's and that the
    hand-graded ones come on top: ``"55 / 100 points from the autograder's tests, ...; the
    written answers (5 points) are graded by hand"``, so it does not contradict nbgrader's
    ``/ 105``."""
    note = result.provisional_note
    graded = (f"graded on {where(result)}" + (f" ({note})" if note else ""))
    if hand_points > 0:
        return (f"{result.exercise}: {result.score:g} / {result.max_score:g} points from the "
                f"autograder's tests, {graded}; the written answers ({hand_points:g} points) "
                "are graded by hand")
    return f"{result.exercise}: {result.score:g} / {result.max_score:g} points in all, {graded}"


def header(result: ExerciseResult, *, reveal_hidden: bool, hand_points: float = 0.0) -> str:
    """The lines that open the first grade cell of an exercise: the total, the device, the
    provisional note (:func:`total_line`, which names ``hand_points``, the notebook's points
    graded by hand, when there are any), how the code was graded (or, with ``reveal_hidden``,
    the seed to replay the run), and the grader's notes (with ``reveal_hidden``, the
    instructor's notes too: the sandbox mode, the statements it skipped)."""
    lines = [total_line(result, hand_points)]
    if not reveal_hidden:
        lines.append("Graded outside this notebook: your code cells in order, in a separate "
                     "process with time limits (test cells and magics left out).")
    elif result.seed is not None:
        lines.append(f"seed {result.seed} (replay: autograder grade NOTEBOOK --exercise "
                     f"{result.exercise} --seed {result.seed})")
    notes = result.notes + (result.instructor_notes if reveal_hidden else [])
    lines += ["  " + n.replace("\n", "\n  ") for n in notes]
    return "\n".join(lines) + "\n"


def _line(t: TestResult, name: str, message: str) -> str:
    mark = _MARK.get(t.status, "FAIL")
    return (f"  [{mark}] {name}: {t.points:g}/{t.max_points:g} ({t.status.value}) "
            f"{message}").rstrip()


def part_title(result: ExerciseResult, kind: str | Kind) -> str:
    """``"correctness: 5 / 60"``, with ``" (provisional: N points need a GPU)"`` when some of
    the part's points were skipped. Raises ``ValueError`` for an unknown kind."""
    kind = Kind(kind)
    points, max_points = part_points(result, kind)
    pending = part_pending(result, kind)
    return (f"{kind.value}: {points:g} / {max_points:g}"
            + (f" ({provisional_note(pending)})" if pending else ""))


def part_rows(result: ExerciseResult, kind: str | Kind, *, reveal_hidden: bool = False
              ) -> list[tuple[str, TestResult, str]]:
    """``(name, test, message)`` for each test of the grade cell of part ``kind``, as the
    reader may see it: without ``reveal_hidden`` a hidden correctness test is named ``hidden
    test N`` and its message is a few words on how it ended (no size, no seed, not the
    grader's message). The text report and the HTML fragment
    (:func:`autograder.report.html.render_part_fragment`) both list these."""
    rows, hidden_no = [], 0
    for t in part_tests(result, kind):
        if t.kind is Kind.CORRECTNESS and t.visibility == "hidden" and not reveal_hidden:
            hidden_no += 1
            text = hidden_text(t.status, t.details, result.device)
            rows.append((f"hidden test {hidden_no}", t, text))
        else:
            rows.append((t.name, t, t.message))
    return rows


def render_part(result: ExerciseResult, kind: str | Kind, *, with_header: bool = False,
                reveal_hidden: bool = False, hand_points: float = 0.0) -> str:
    """The text of the grade cell of part ``kind`` (``correctness``, ``concept`` or ``timing``):
    its points (with ``"provisional: N points need a GPU"`` when some of them were skipped) and
    one line per test. ``with_header`` puts :func:`header` first (``hand_points``: the
    notebook's points graded by hand, which it names). Without ``reveal_hidden``,
    hidden correctness tests read ``hidden test 3`` and a few words on how they ended. Raises
    ``ValueError`` for an unknown kind."""
    lines = [part_title(result, kind)]
    lines += [_line(t, name, message)
              for name, t, message in part_rows(result, kind, reveal_hidden=reveal_hidden)]
    text = "\n".join(lines) + "\n"
    return (header(result, reveal_hidden=reveal_hidden, hand_points=hand_points) + "\n" + text
            if with_header else text)
