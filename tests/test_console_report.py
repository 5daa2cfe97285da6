"""What the student sees and what only the instructor sees: quoted code survives rich's markup,
and instructor notes (sandbox mode, skipped statements) stay out of student-facing outputs."""

from __future__ import annotations

from rich.console import Console

from autograder.report import parts as cellreport
from autograder.report import console as console_report
from autograder.report.export import to_gradescope
from autograder.wire.results import ExerciseResult, Kind, Status, TestResult

SANDBOX = "sandbox: bubblewrap unavailable (no user namespaces); ran in a plain child process"
SKIPPED = "the grader runs only your imports ...; it skipped line 9 (`print(C)`)"


def _result() -> ExerciseResult:
    t = TestResult(name="diagnostic: shared-memory races", kind=Kind.DIAGNOSTIC,
                   visibility="hidden", status=Status.FAILED, points=0.0, max_points=0.0,
                   message="line 21: RAW race on sA[ty, tx] between [bold]threads[/bold]")
    c = TestResult(name="public: width 16", kind=Kind.CORRECTNESS, visibility="public",
                   status=Status.PASSED, points=5.0, max_points=5.0, message="correct")
    return ExerciseResult("tiled_matmul", "x.py", "sim", [c, t], seed=1,
                          notes=["your code printed:\nhello"],
                          instructor_notes=[SANDBOX, SKIPPED])


def _printed(result) -> str:
    con = Console(width=400, record=True, color_system=None)
    console_report.print_result(result, con)
    return con.export_text()


def test_code_in_a_message_keeps_its_brackets():
    text = _printed(_result())
    assert "sA[ty, tx]" in text and "[bold]threads[/bold]" in text


def test_instructor_notes_reach_the_console_and_json_but_not_the_student():
    result = _result()
    assert SANDBOX in _printed(result)  # `grade` on a console: the instructor's view
    d = result.to_dict()
    assert d["instructor_notes"] == [SANDBOX, SKIPPED] and d["notes"] == result.notes
    assert ExerciseResult.from_dict(d).instructor_notes == [SANDBOX, SKIPPED]
    student = cellreport.header(result, reveal_hidden=False)
    assert "hello" in student and "sandbox" not in student and "skipped" not in student
    assert SANDBOX in cellreport.header(result, reveal_hidden=True)
    gs = to_gradescope(d)
    assert "sandbox" not in gs["output"] and "hello" in gs["output"]
    assert gs["extra_data"]["instructor_notes"] == [SANDBOX, SKIPPED]


def test_the_html_report_leaves_instructor_notes_out():
    from autograder.report.html import render_result

    page = render_result(_result())
    assert "hello" in page and "bubblewrap" not in page and "print(C)" not in page
