"""``autograder batch`` as a TA meets it (issue 32, item 10): how far it is, on a terminal and in
a log file, and per-student pages marked as the instructor's.

The real command runs on a class of two (the occupancy exercise: plain functions, quick on the
simulator): with standard error in a file it writes plain lines that name the counts, the rate
and the failures; on a pseudo-terminal it draws rich's live display naming the same. Its HTML
pages carry a red "Instructor only" banner; a public run's page and a student's nbgrader
feedback fragment carry none.
"""

from __future__ import annotations

import io
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from autograder.report import html
from autograder.wire.results import ExerciseResult, Kind, Status, TestResult
from conftest import SOLUTIONS, TEST_DEVICE

EXERCISE = "occupancy"


def class_of(root: Path, students=("alice", "bob")) -> Path:
    folder = root / "submitted"
    folder.mkdir(parents=True)
    for student in students:
        (folder / f"{student}.py").write_text((SOLUTIONS / f"{EXERCISE}.py").read_text())
    return folder


def batch_command(folder: Path, db: Path, *more: str) -> list[str]:
    return [sys.executable, "-m", "autograder.cli", "batch", str(folder), "--exercise",
            EXERCISE, "--db", str(db), "--device", TEST_DEVICE, "--workers", "1", *more]


def test_batch_into_a_log_file_says_counts_rate_and_failures_and_marks_its_pages(tmp_path):
    folder, db, out = class_of(tmp_path), tmp_path / "r.sqlite", tmp_path / "html"
    with open(tmp_path / "batch.log", "w") as log:  # not a terminal
        run = subprocess.run(batch_command(folder, db, "--html", str(out)), stderr=log,
                             stdout=subprocess.PIPE, text=True, timeout=900)
    said = (tmp_path / "batch.log").read_text()
    assert run.returncode == 0, said[-3000:]
    assert "batch: grading 2 submissions" in said
    assert re.search(r"batch: 2/2 graded, \d+\.\d per minute, 0 failed \(", said), said
    assert "\x1b[" not in said and "%" not in said  # plain lines, no bar, no bare percentage
    # the per-student pages and the index are the instructor's, and say so first
    pages = sorted(out.glob("*.html"))
    assert len(pages) == 3 and pages[-1].name == "index.html"
    for page in pages:
        text = page.read_text()
        banner = text.index('<div class="instructor-only">Instructor only')
        assert banner < text.index("<h1>"), page.name
        assert "<title>Instructor only: " in text
    alice = pages[0].read_text()
    assert "the hidden test sizes and the secret seed" in alice
    assert "hidden: " in alice and " · seed " in alice  # what the banner warns of


def test_batch_on_a_terminal_draws_a_live_display_naming_the_counts(tmp_path):
    folder, db = class_of(tmp_path, ("alice",)), tmp_path / "r.sqlite"
    master, slave = pty.openpty()
    proc = subprocess.Popen(batch_command(folder, db), stderr=slave, stdout=subprocess.DEVNULL,
                            env={**os.environ, "COLUMNS": "160", "TERM": "xterm"})
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 600)
        if not ready:
            break
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    assert proc.wait(timeout=600) == 0
    os.close(master)
    screen = b"".join(chunks).decode("utf-8", "replace")
    assert "\x1b[" in screen  # a live display, drawn with terminal codes
    assert re.search(r"1/1 graded · \d+\.\d per minute · 0 failed", screen), screen[-2000:]
    assert "batch: " not in screen  # no plain lines on a terminal


# --- the two displays, without a batch ------------------------------------------------------

def test_plain_lines_come_at_most_every_30_seconds_and_at_the_end():
    from autograder.batch import progress

    now = [0.0]
    out = io.StringIO()
    with progress.PlainProgress(5, out, clock=lambda: now[0]) as shown:
        for t, failed in ((10, False), (20, True), (45, False), (50, False), (80, False)):
            now[0] = t
            shown.advance(failed)
    lines = out.getvalue().splitlines()
    assert lines == [
        "batch: grading 5 submissions",
        "batch: 2/5 graded, 4.0 per minute, 1 failed, about 30 s left (45 s so far)",
        "batch: 4/5 graded, 3.8 per minute, 1 failed (1 min 20 s so far)",
    ]


def test_the_terminal_display_names_graded_total_rate_and_failures():
    from autograder.batch import progress

    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=140)
    with progress.RichProgress(3, console) as shown:
        shown.advance()
        shown.advance(failed=True)
    assert re.search(r"1/3 graded · \d+\.\d per minute · 1 failed", out.getvalue())


def test_for_stream_picks_plain_lines_off_a_terminal():
    from autograder.batch import progress

    assert isinstance(progress.for_stream(3, io.StringIO()), progress.PlainProgress)


# --- which pages are marked --------------------------------------------------------------------

def _result(seed, hidden: bool) -> ExerciseResult:
    r = ExerciseResult(EXERCISE, "alice.py", "sim", seed=seed)
    r.tests = [TestResult(name="public: 256 threads are 8 warps", kind=Kind.CORRECTNESS,
                          visibility="public", status=Status.PASSED, points=5, max_points=5,
                          message="correct")]
    if hidden:
        r.tests.append(TestResult(name="hidden: 24×24 float tiles", kind=Kind.CORRECTNESS,
                                  visibility="hidden", status=Status.FAILED, points=0,
                                  max_points=5, message="returned 2304, expected 4608"))
    return r


@pytest.mark.parametrize("seed,hidden,marked", [
    (1234, True, "the hidden test sizes and the secret seed"),
    (None, True, "the hidden test sizes"), (1234, False, "the secret seed"),
    (None, False, "")])  # the last: `autograder grade --public --html`, the student's own page
def test_a_page_is_marked_instructor_only_when_it_shows_what_students_may_not_see(
        seed, hidden, marked):
    page = html.render_result(_result(seed, hidden))
    assert (f"this page shows {marked}." in page) == bool(marked)
    assert ('class="instructor-only"' in page) == bool(marked)
    # a student's nbgrader feedback fragment never is (it holds no hidden case, no seed)
    fragment = html.render_part_fragment(_result(seed, hidden), "correctness",
                                         with_header=True)
    assert "Instructor only" not in fragment and "24×24" not in fragment
