"""Red team (issue 21): links and special files are never followed.

A student hands in a symbolic link to the instructor's solution, to ``/etc/passwd`` or to another
student's notebook, a named pipe, a socket or a device. Each scores 0 with a message that names
the submission and what it is, never the target and never a byte of it; nothing blocks, and no
grading child starts for a refused file. A hard link is just a file. Through ``autograder
grade`` in-process and as a command, and through a real ``nbgrader autograde``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from autograder import exercises, grader
from autograder.wire.results import Status
from autograder.source.submission import (SubmissionError, linked_part, load_source,
                                   read_submission_bytes)
from conftest import ROOT, TEST_DEVICE, env_with_root

EXERCISE = "tiled_matmul"
SOLUTION = exercises.solution_path(EXERCISE)
PASSWD = Path("/etc/passwd")
#: bytes of the link targets that must never reach a message: the solution's kernel name
#: line, and /etc/passwd's first line
SECRETS = ("cuda.syncthreads", "root:")


@pytest.fixture
def no_hang():
    """Fail instead of hanging (a pipe opened for reading without O_NONBLOCK waits for a
    writer forever)."""
    def _stop(*_):
        raise TimeoutError("reading the submission blocked")
    old = signal.signal(signal.SIGALRM, _stop)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


@pytest.fixture
def things(tmp_path) -> dict[str, Path]:
    """One of each kind a student could leave at a submission's path, all named ``*.py``."""
    made = {"to_solution": tmp_path / "to_solution.py", "to_passwd": tmp_path / "to_passwd.py",
            "dangling": tmp_path / "dangling.py", "fifo": tmp_path / "fifo.py",
            "socket": tmp_path / "socket.py", "folder": tmp_path / "folder.py"}
    made["to_solution"].symlink_to(SOLUTION)
    made["to_passwd"].symlink_to(PASSWD)
    made["dangling"].symlink_to(tmp_path / "nowhere.py")
    os.mkfifo(made["fifo"])
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(made["socket"]))
    made["folder"].mkdir()
    yield made
    sock.close()


KINDS = {"to_solution": "a symbolic link", "to_passwd": "a symbolic link",
         "dangling": "a symbolic link", "fifo": "a named pipe (FIFO)", "socket": "a socket",
         "folder": "a folder"}


def _clean(message: str, path: Path) -> None:
    assert str(path) in message
    for secret in SECRETS + (str(SOLUTION), str(PASSWD), "nowhere.py"):
        assert secret not in message, message


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_load_source_refuses_by_name_and_kind(things, kind, no_hang):
    with pytest.raises(SubmissionError) as caught:
        load_source(things[kind])
    assert f"{things[kind]} is {KINDS[kind]}" in str(caught.value)
    _clean(str(caught.value), things[kind])


def test_a_device_is_refused_unread(no_hang):
    with pytest.raises(SubmissionError, match="/dev/zero is a character device"):
        read_submission_bytes("/dev/zero")


def test_a_hard_link_is_just_a_file(tmp_path):
    copy = tmp_path / "copy.py"
    shutil.copy(SOLUTION, copy)
    hard = tmp_path / "hard.py"
    os.link(copy, hard)
    assert load_source(hard).text == SOLUTION.read_text(encoding="utf-8")


def test_folders_above_the_file_are_trusted_and_linked_part_finds_a_students(tmp_path):
    """The grader's own folder may be a link; linked_part finds one a student supplied below
    the folder the grader chose."""
    real = tmp_path / "real"
    (real / "alice").mkdir(parents=True)
    shutil.copy(SOLUTION, real / "alice" / "k.py")
    (tmp_path / "course").symlink_to(real)
    assert load_source(tmp_path / "course" / "alice" / "k.py").text.startswith(
        SOLUTION.read_text(encoding="utf-8")[:40])
    (real / "mallory").symlink_to(real / "alice")
    assert linked_part(tmp_path / "course", tmp_path / "course" / "alice" / "k.py") is None
    assert linked_part(tmp_path / "course", tmp_path / "course" / "mallory" / "k.py") == \
        tmp_path / "course" / "mallory"
    assert linked_part(real, real / "nobody" / "k.py") is None


def test_a_file_over_the_cap_is_refused_without_reading_it_all(tmp_path):
    big = tmp_path / "big.py"
    with open(big, "wb") as f:
        f.truncate(9 * 2**20)  # sparse: nothing written
    with pytest.raises(SubmissionError, match=r"big.py is over 8 MiB"):
        load_source(big)
    (tmp_path / "small.py").write_text("x = 1\n" * 10)
    with pytest.raises(SubmissionError, match="over 16 bytes"):
        read_submission_bytes(tmp_path / "small.py", max_bytes=16)


@pytest.mark.parametrize("kind", ["to_solution", "to_passwd", "fifo"])
def test_grade_gives_0_and_starts_no_child(things, kind, monkeypatch, no_hang):
    """grader.grade: every test an error with the refusal, 0 points; neither the preflight nor
    a grading child runs."""
    from autograder.grading import children
    from autograder.grading import preflight

    def boom(*a, **k):
        raise AssertionError("a refused file started a child or the preflight")
    monkeypatch.setattr(children, "run_all", boom)
    monkeypatch.setattr(preflight, "start", boom)
    result = grader.grade(things[kind], EXERCISE, device=TEST_DEVICE, seed=1)
    assert result.score == 0 and result.max_score == 100
    assert {t.status for t in result.tests} == {Status.ERROR}
    for t in result.tests:
        _clean(t.message, things[kind])
    assert f"is {KINDS[kind]}" in result.tests[0].message


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder.cli", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=120,
                          env=env_with_root())


@pytest.mark.parametrize("kind", ["to_solution", "to_passwd"])
def test_the_command_grades_a_link_0_with_exit_0(things, kind):
    out = _cli("grade", str(things[kind]), "-e", EXERCISE, "--device", "sim", "--json")
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(out.stdout)
    assert result["score"] == 0
    assert "is a symbolic link" in result["tests"][0]["message"]
    for secret in SECRETS + (str(SOLUTION), str(PASSWD)):
        assert secret not in out.stdout and secret not in out.stderr


# --- nbgrader -------------------------------------------------------------------------------

NB_COURSE_TIMEOUT = 900


@pytest.fixture(scope="module")
def linked_course(tmp_path_factory):
    """A real course (``autograder course build``, ``nbgrader generate_assignment``) where
    carol hands in a notebook (no kernel), mallory's notebook is a link to the instructor's
    source notebook (the solution), and trudy's assignment folder is a link to carol's; one
    ``nbgrader autograde`` grades them all."""
    from course.nbhelpers import ASSIGNMENTS, make_course, nbgrader, shared_dir, submit

    assignment = next(a for a, (ex, _) in ASSIGNMENTS.items() if ex == EXERCISE)
    nb_name = ASSIGNMENTS[assignment][1]
    with shared_dir(tmp_path_factory, "kg-released-course") as (released, done):
        if not done:  # as tests/course/conftest.py's released_course: built once a session
            make_course(released)
            (released / ".done").touch()
    course = Path(shutil.copytree(released, tmp_path_factory.mktemp("links") / "course"))
    submit(course, "carol", assignment, code="TILE_WIDTH = 16\n")
    mallory = course / "submitted" / "mallory" / assignment
    mallory.mkdir(parents=True)
    (mallory / nb_name).symlink_to(course / "source" / assignment / nb_name)
    (course / "submitted" / "trudy").mkdir()
    (course / "submitted" / "trudy" / assignment).symlink_to(
        course / "submitted" / "carol" / assignment)
    run = nbgrader(course, "autograde", assignment, "--log-level=WARN",
                   timeout=NB_COURSE_TIMEOUT)
    return course, assignment, nb_name, run


def test_the_preprocessor_judges_what_is_in_submitted(tmp_path):
    """GradeWithAutograder's refusal, from the course folder of the nbgrader command it runs
    in: a linked notebook or student folder, a pipe; the instructor's submitted/ may be a link."""
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Configurable

    from autograder.nbgrader.preprocessor import GradeWithAutograder

    real = tmp_path / "elsewhere"
    (tmp_path / "submitted").symlink_to(real, target_is_directory=True)
    for student in ("ok", "link", "pipe"):
        (real / student / "ps").mkdir(parents=True)
    (real / "ok" / "ps" / "k.ipynb").write_text("{}")
    (real / "link" / "ps" / "k.ipynb").symlink_to(real / "ok" / "ps" / "k.ipynb")
    os.mkfifo(real / "pipe" / "ps" / "k.ipynb")
    (real / "folder").mkdir()
    (real / "folder" / "ps").symlink_to(real / "ok" / "ps")

    class Converter(Configurable):
        coursedir = CourseDirectory(root=str(tmp_path))

    step = GradeWithAutograder(parent=Converter())

    def refusal(student):
        got = step._refusal({"nbgrader": {"student": student, "assignment": "ps",
                                          "notebook": "k"}})
        return got and str(got)

    assert refusal("ok") is None
    assert refusal("link").startswith("link/ps/k.ipynb is a symbolic link")
    assert refusal("folder").startswith("folder/ps is a symbolic link")
    assert refusal("pipe").startswith("pipe/ps/k.ipynb is a named pipe (FIFO)")
    assert GradeWithAutograder()._refusal({"nbgrader": {}}) is None  # not in nbgrader


@pytest.mark.parametrize("student, link", [("mallory", "mallory/{a}/{nb}"),
                                           ("trudy", "trudy/{a}")])
def test_nbgrader_scores_a_linked_notebook_0_with_the_message(linked_course, student, link):
    from course.nbhelpers import output_text, scores, split_solution

    course, assignment, nb_name, _ = linked_course
    got = scores(course, assignment, student)
    hidden = {g: s for g, s in got.items() if "-hidden-" in g}
    assert hidden and all(score == 0 for score, _ in hidden.values()), got
    shown = link.format(a=assignment, nb=nb_name)
    autograded = (course / "autograded" / student / assignment / nb_name).read_text()
    nb = json.loads(autograded)  # what generate_feedback renders for the student
    reports = [output_text(o) for c in nb["cells"] if "-hidden-" in
               c["metadata"].get("nbgrader", {}).get("grade_id", "") for o in c["outputs"]
               if o["output_type"] in ("stream", "display_data")]
    assert reports and all(f"{shown} is a symbolic link" in r for r in reports), reports
    source = json.loads((course / "source" / assignment / nb_name).read_text())
    secrets = [max(region.splitlines(), key=len).strip()
               for c in source["cells"]
               if c.get("metadata", {}).get("nbgrader", {}).get("solution")
               for region in split_solution("".join(c["source"]))[1]]
    assert secrets
    for line in secrets:  # the instructor's code is nowhere in what the student gets back
        assert json.dumps(line)[1:-1] not in autograded


def test_nbgrader_grades_the_others(linked_course):
    from course.nbhelpers import scores

    course, assignment, _, run = linked_course
    assert run.returncode == 0
    carol = scores(course, assignment, "carol")
    assert all(score is not None for score, _ in carol.values()), carol
