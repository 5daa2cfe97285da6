"""Issue 21, red team: every entry of a class folder is graded or listed with its reason, and
no link or special file is ever followed or opened.

Most cases need only :func:`autograder.batch.discovery.discover` (no grading). One small simulator
batch (module-scoped, through the CLI in this process) checks that what was not graded reaches
the console, the store, every export and the class pages, that a file swapped for a link
between discovery and reading is listed and never read, and that no byte of a link's target
(``/etc/passwd``, the instructor solution) appears anywhere.
"""

from __future__ import annotations

import csv
import io
import json
import os
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autograder import exercises
from autograder.batch import run as batch
from autograder.batch import discovery
from autograder.cli import app
from autograder.batch.discovery import NotRegularFile, discover, read_regular
from autograder.batch.store import ResultStore
from conftest import TEST_DEVICE, SOLUTIONS

SOLUTION = SOLUTIONS / "occupancy.py"
PASSWD = Path("/etc/passwd")
BROKEN = "def broken(:\n"  # graded fast: it does not parse


def _kinds(found) -> dict[str, str]:
    """Entry name (relative to nothing: the last two parts) -> kind."""
    return {"/".join(Path(s.path).parts[-2:]): s.kind for s in found.skipped}


def _by_path(found, root: Path) -> dict[str, discovery.Skipped]:
    return {str(Path(s.path).relative_to(root)): s for s in found.skipped}


def _in_time(fn, seconds: float = 20.0):
    """``fn()``'s value; fails (instead of hanging the run) when it takes longer."""
    box = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"{fn} still running after {seconds} s (blocked on a FIFO?)"
    if "error" in box:
        raise box["error"]
    return box["value"]


def _nb(path: Path, student: str, assignment: str, name: str, text: str = BROKEN) -> Path:
    folder = path / student / assignment
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)
    return folder / name


# --- layouts -------------------------------------------------------------------------------


def test_a_flat_folder_with_one_sub_folder_is_an_error_naming_both(tmp_path):
    for s in ("alice", "bob"):
        (tmp_path / f"{s}.py").write_text(BROKEN)
    (tmp_path / "old").mkdir()
    with pytest.raises(ValueError) as err:
        discover(tmp_path, "occupancy")
    text = str(err.value)
    assert "alice.py" in text and "bob.py" in text and "old/" in text and "mixes" in text


def test_a_mixed_class_folder_exits_2_with_the_message(tmp_path):
    (tmp_path / "alice.py").write_text(BROKEN)
    _nb(tmp_path, "bob", "01_occupancy", "occupancy.py")
    res = CliRunner().invoke(app, ["batch", str(tmp_path), "--db", str(tmp_path / "r.sqlite"),
                                   "--device", "sim", "-e", "occupancy"])
    assert res.exit_code == 2
    flat = " ".join(res.output.split())
    assert "alice.py" in flat and "bob/" in flat and "mixes two layouts" in flat
    assert not (tmp_path / "r.sqlite").exists() or not ResultStore(tmp_path / "r.sqlite").rows()


def test_files_beside_folders_that_are_not_submissions_are_listed_not_an_error(tmp_path):
    _nb(tmp_path, "bob", "01_occupancy", "occupancy.py")
    (tmp_path / "README.txt").write_text("instructions")
    (tmp_path / ".DS_Store").write_text("x")
    found = discover(tmp_path)
    assert [s.key for s in found.submissions] == ["bob/01_occupancy"]
    assert _kinds(found) == {f"{tmp_path.name}/README.txt": "not_submission",
                             f"{tmp_path.name}/.DS_Store": "hidden"}


# --- names ---------------------------------------------------------------------------------


def test_an_assignment_that_names_no_exercise_is_listed_with_the_exercises(tmp_path):
    _nb(tmp_path, "alice", "01_occupancy", "occupancy.py")
    _nb(tmp_path, "bob", "hw3", "mine.py")
    found = discover(tmp_path)
    assert [s.key for s in found.submissions] == ["alice/01_occupancy"]
    (item,) = found.skipped
    assert item.kind == "unknown_exercise" and item.path == str(tmp_path / "bob" / "hw3")
    assert item.student == "bob" and "'hw3'" in item.reason
    for name in exercises.names():
        assert name in item.reason


def test_an_assignment_of_another_exercise_is_listed_when_one_is_asked_for(tmp_path):
    _nb(tmp_path, "alice", "01_occupancy", "occupancy.py")
    _nb(tmp_path, "alice", "02_tiled_matmul", "tiled_matmul.py")
    found = discover(tmp_path, "occupancy")
    assert [s.key for s in found.submissions] == ["alice/01_occupancy"]
    (item,) = found.skipped
    assert item.kind == "other_exercise" and "tiled_matmul" in item.reason
    assert "--exercise" in item.reason


def test_a_file_outside_any_assignment_folder_is_listed(tmp_path):
    _nb(tmp_path, "alice", "01_occupancy", "occupancy.py")
    (tmp_path / "bob").mkdir()
    (tmp_path / "bob" / "occupancy.py").write_text(BROKEN)
    (tmp_path / "carol").mkdir()
    found = discover(tmp_path)
    by = _by_path(found, tmp_path)
    assert by["bob/occupancy.py"].kind == "outside_assignment"
    assert by["carol"].kind == "empty"
    assert [s.key for s in found.submissions] == ["alice/01_occupancy"]


# --- two files for one student -------------------------------------------------------------


def test_alice_py_and_alice_ipynb_neither_is_graded(tmp_path):
    (tmp_path / "alice.py").write_text(BROKEN)
    (tmp_path / "alice.ipynb").write_text("{}")
    (tmp_path / "bob.py").write_text(BROKEN)
    found = discover(tmp_path, "occupancy")
    assert [s.key for s in found.submissions] == ["bob/occupancy"]
    dup = [s for s in found.skipped if s.kind == "duplicate"]
    assert sorted(Path(s.path).name for s in dup) == ["alice.ipynb", "alice.py"]
    for s in dup:
        assert "alice.ipynb" in s.reason and "alice.py" in s.reason
        assert s.key == "alice/occupancy" and s.student == "alice"


def test_two_notebooks_in_one_assignment_folder_neither_is_graded(tmp_path):
    _nb(tmp_path, "alice", "01_occupancy", "occupancy.py")
    _nb(tmp_path, "alice", "01_occupancy", "occupancy.ipynb", "{}")
    _nb(tmp_path, "bob", "01_occupancy", "draft.py")
    _nb(tmp_path, "bob", "01_occupancy", "final.py")
    found = discover(tmp_path)
    assert found.submissions == []
    assert {k: v for k, v in _kinds(found).items()} == {
        "01_occupancy/occupancy.py": "duplicate", "01_occupancy/occupancy.ipynb": "duplicate",
        "01_occupancy/draft.py": "duplicate", "01_occupancy/final.py": "duplicate"}


def test_two_assignment_folders_of_one_exercise_neither_is_graded(tmp_path):
    _nb(tmp_path, "alice", "01_occupancy", "occupancy.py")
    _nb(tmp_path, "alice", "occupancy", "occupancy.py")
    found = discover(tmp_path)
    assert found.submissions == []
    assert sorted(s.key for s in found.skipped) == ["alice/01_occupancy", "alice/occupancy"]
    assert {s.kind for s in found.skipped} == {"duplicate"}


def test_extra_files_beside_the_graded_notebook_are_listed(tmp_path):
    graded = _nb(tmp_path, "alice", "01_occupancy", "occupancy.ipynb", "{}")
    _nb(tmp_path, "alice", "01_occupancy", "helper.py")
    _nb(tmp_path, "alice", "01_occupancy", "timestamp.txt", "2026-11-24 10:00:00")
    _nb(tmp_path, "alice", "01_occupancy", ".hidden.py")
    (graded.parent / ".ipynb_checkpoints").mkdir()
    (graded.parent / ".ipynb_checkpoints" / "occupancy-checkpoint.ipynb").write_text("{}")
    found = discover(tmp_path)
    assert [s.path for s in found.submissions] == [graded]
    by = _by_path(found, tmp_path)
    assert by["alice/01_occupancy/helper.py"].kind == "extra"
    assert "occupancy.ipynb" in by["alice/01_occupancy/helper.py"].reason
    assert by["alice/01_occupancy/timestamp.txt"].kind == "nbgrader_timestamp"
    assert by["alice/01_occupancy/.hidden.py"].kind == "hidden"
    assert by["alice/01_occupancy/.ipynb_checkpoints"].kind == "checkpoints"
    assert len(found.skipped) == 4  # the checkpoint's contents: its folder accounts for them


# --- links and special files ---------------------------------------------------------------


def test_links_are_listed_and_never_followed(tmp_path):
    (tmp_path / "bob.py").write_text(BROKEN)
    (tmp_path / "sol.py").symlink_to(SOLUTION)
    (tmp_path / "pw.py").symlink_to(PASSWD)
    (tmp_path / "gone.py").symlink_to(tmp_path / "nowhere.py")
    found = discover(tmp_path, "occupancy")
    assert [s.student for s in found.submissions] == ["bob"]
    kinds = {Path(s.path).name: s.kind for s in found.skipped}
    assert kinds == {"sol.py": "link", "pw.py": "link", "gone.py": "link"}
    for s in found.skipped:
        assert str(SOLUTION) not in s.reason and "passwd" not in s.reason
        assert s.key == f"{s.student}/occupancy" == f"{Path(s.path).stem}/occupancy"


def test_a_linked_student_or_assignment_folder_is_not_searched(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    _nb(elsewhere, "mallory", "01_occupancy", "occupancy.py")
    root = tmp_path / "submitted"
    _nb(root, "alice", "01_occupancy", "occupancy.py")
    (root / "mallory").symlink_to(elsewhere / "mallory")
    (root / "alice" / "02_occupancy").symlink_to(elsewhere / "mallory" / "01_occupancy")
    found = discover(root)
    assert [s.key for s in found.submissions] == ["alice/01_occupancy"]
    assert _kinds(found) == {"submitted/mallory": "link", "alice/02_occupancy": "link"}


def test_a_fifo_is_listed_and_never_opened(tmp_path):
    (tmp_path / "bob.py").write_text(BROKEN)
    os.mkfifo(tmp_path / "eve.py")
    (tmp_path / "via_link.py").symlink_to(tmp_path / "eve.py")
    found = _in_time(lambda: discover(tmp_path, "occupancy"))
    kinds = {Path(s.path).name: (s.kind, s.reason) for s in found.skipped}
    assert kinds["eve.py"][0] == "special" and "FIFO" in kinds["eve.py"][1]
    assert kinds["via_link.py"][0] == "link"


def test_a_txt_file_is_listed(tmp_path):
    (tmp_path / "bob.txt").write_text(BROKEN)
    (tmp_path / "carol.PY").write_text(BROKEN)
    found = discover(tmp_path, "occupancy")
    assert found.submissions == []
    assert {Path(s.path).name: s.kind for s in found.skipped} == {
        "bob.txt": "not_submission", "carol.PY": "not_submission"}


# --- reading: a file swapped after discovery -----------------------------------------------


@pytest.mark.parametrize("swap", ["link", "fifo", "linked_folder"])
def test_a_file_swapped_after_discovery_is_never_read(tmp_path, swap):
    root = tmp_path / "submitted"
    path = _nb(root, "alice", "01_occupancy", "occupancy.py")
    (sub,) = discover(root).submissions
    if swap == "link":
        path.unlink()
        path.symlink_to(PASSWD)
    elif swap == "fifo":
        path.unlink()
        os.mkfifo(path)
    else:  # the assignment folder becomes a link to a folder holding a link's target's copy
        other = tmp_path / "other"
        other.mkdir()
        (other / "occupancy.py").write_text(SOLUTION.read_text())
        (root / "alice" / "01_occupancy" / "occupancy.py").unlink()
        (root / "alice" / "01_occupancy").rmdir()
        (root / "alice" / "01_occupancy").symlink_to(other)
    with pytest.raises(NotRegularFile) as err:
        _in_time(lambda: batch.read_submission(sub))
    assert str(path) in str(err.value) and "root:" not in str(err.value)


def test_read_regular_reads_a_plain_file(tmp_path):
    path = _nb(tmp_path, "alice", "01_occupancy", "occupancy.py", "x = 1\n")
    assert read_regular(path, tmp_path) == b"x = 1\n"
    assert read_regular(path) == b"x = 1\n"


# --- one small batch: console, store, exports ----------------------------------------------


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A flat class on the simulator: bob (graded), alice.py + alice.ipynb, links to the
    solution and to /etc/passwd, a FIFO, a .txt, a hidden file, and carol, whose file becomes a
    link to /etc/passwd between discovery and reading. Returns (temporary folder, class folder,
    db, batch output, the output of a second run after carol.txt is removed and bob.ipynb
    added, exports by format, the store's list of what was not graded after the first run)."""
    tmp = tmp_path_factory.mktemp("classdir")
    root = tmp / "class"
    root.mkdir()
    (root / "bob.py").write_text(BROKEN)
    (root / "alice.py").write_text(BROKEN)
    (root / "alice.ipynb").write_text("{}")
    (root / "sol.py").symlink_to(SOLUTION)
    (root / "pw.py").symlink_to(PASSWD)
    os.mkfifo(root / "fifo.py")
    (root / "carol.txt").write_text("my answer is in the email")
    (root / ".DS_Store").write_text("x")
    (root / "carol.py").write_text(BROKEN)
    db = tmp / "r.sqlite"

    real = batch.discover

    def discover_then_swap(*args, **kw):
        found = real(*args, **kw)
        (root / "carol.py").unlink()
        (root / "carol.py").symlink_to(PASSWD)
        return found

    mp = pytest.MonkeyPatch()
    mp.setattr(batch, "discover", discover_then_swap)
    runner = CliRunner()
    try:
        first = _in_time(lambda: runner.invoke(
            app, ["batch", str(root), "--db", str(db), "-e", "occupancy", "--device",
                  TEST_DEVICE, "--workers", "1", "--html", str(tmp / "html")]), 600)
    finally:
        mp.undo()
    assert first.exit_code == 0, first.output
    after_first = ResultStore(db).skipped()
    (root / "carol.txt").unlink()
    (root / "bob.ipynb").write_text("{}")  # bob, graded by the first run, now has two files
    again = runner.invoke(app, ["batch", str(root), "--db", str(db), "-e", "occupancy",
                                "--device", TEST_DEVICE])
    assert again.exit_code == 0, again.output
    exports = {}
    for fmt in ("csv", "json"):
        res = runner.invoke(app, ["export", "--db", str(db), "--format", fmt])
        assert res.exit_code == 0, res.output
        exports[fmt] = res.stdout
    res = runner.invoke(app, ["export", "--db", str(db), "--format", "gradescope", "--out",
                              str(tmp / "gs")])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["report", "--db", str(db), "--html", str(tmp / "html")])
    assert res.exit_code == 0, res.output
    return tmp, root, db, first.output, again.output, exports, after_first


EXPECTED = {"alice.py": "duplicate", "alice.ipynb": "duplicate", "sol.py": "link",
            "pw.py": "link", "fifo.py": "special", ".DS_Store": "hidden", "carol.py": "link",
            "bob.py": "duplicate", "bob.ipynb": "duplicate"}


def test_the_batch_grades_only_bob(graded):
    tmp, root, db, *_ = graded
    assert [r["student"] for r in ResultStore(db).rows()] == ["bob"]


def test_a_file_swapped_for_a_link_during_the_batch_is_listed(graded):
    *_, after_first = graded
    stored = {Path(s["path"]).name: s for s in after_first}
    assert stored["carol.py"]["kind"] == "changed"
    assert "link" in stored["carol.py"]["reason"]
    assert stored["carol.py"]["key"] == "carol/occupancy"
    assert stored["carol.txt"]["kind"] == "not_submission"


def test_the_store_lists_the_folder_as_it_is_now(graded):
    tmp, root, db, *_ = graded
    stored = {Path(s["path"]).name: s["kind"] for s in ResultStore(db).skipped()}
    assert stored == EXPECTED  # carol.txt, listed by the first run, is gone
    for item in ResultStore(db).skipped():
        assert ("stays in the store" in item["reason"]) == (item["student"] == "bob")


def test_the_console_lists_what_was_not_graded(graded):
    tmp, root, db, first, again, *_ = graded
    for name in ["alice.py", "alice.ipynb", "sol.py", "pw.py", "fifo.py", "carol.py",
                 "carol.txt"]:
        assert name in first, name
    assert "symbolic" in first and "FIFO" in first and "changed" in first
    for name in EXPECTED:
        assert name in again, name
    assert "carol.txt" not in again


def test_every_export_lists_what_was_not_graded(graded):
    tmp, root, db, first, again, exports, _ = graded
    table = list(csv.DictReader(io.StringIO(exports["csv"])))
    notes = [r["note"] for r in table if r["note"].startswith("not graded: ")]
    assert len(notes) == len(EXPECTED)
    for name in EXPECTED:
        assert any(f"{root / name}: " in n for n in notes), name
    assert [r["student"] for r in table if r["score"]] == ["bob"]  # the first run's
    items = json.loads(exports["json"])
    assert sorted(Path(i["path"]).name for i in items if i["graded"] is False) == sorted(
        EXPECTED)
    assert all(i["score"] is None for i in items if not i["graded"])
    listing = json.loads((tmp / "gs" / "not_graded.json").read_text())
    assert sorted(Path(i["path"]).name for i in listing) == sorted(EXPECTED)
    alice = json.loads((tmp / "gs" / "alice" / "occupancy" / "results.json").read_text())
    assert "score" not in alice and "alice.ipynb" in alice["output"]
    for page, n in (("class.html", 9), ("index.html", 8)):  # index.html: the first run's
        text = (tmp / "html" / page).read_text()
        assert f"Not graded ({n})" in text and "pw.py" in text and "carol.py" in text


def test_no_byte_of_a_link_target_is_anywhere(graded):
    tmp, root, db, first, again, exports, _ = graded
    passwd = PASSWD.read_text().splitlines()[0]  # "root:x:0:0:..."
    solution = max(SOLUTION.read_text().splitlines(), key=len)
    assert len(passwd) > 8 and len(solution) > 20
    blobs = {"console": first + again, **exports}
    for path in [db, *tmp.rglob("*")]:
        if path.is_file() and not path.is_symlink() and root not in path.parents:
            blobs[str(path)] = path.read_bytes().decode("utf-8", "replace")
    for where, text in blobs.items():
        assert passwd not in text, f"/etc/passwd's first line in {where}"
        assert solution.strip() not in text, f"the solution's text in {where}"


def test_a_folder_holding_only_a_link_gets_a_0_that_names_the_link(tmp_path):
    """mallory's assignment folder holds only a link: her 0 says what the folder held and why
    it was not graded, not that nothing was submitted."""
    root = tmp_path / "submitted"
    (root / "mallory" / "tiled_matmul").mkdir(parents=True)
    (root / "mallory" / "tiled_matmul" / "tiled_matmul.py").symlink_to(SOLUTION)
    subs, skipped = discover(root)
    [sub] = subs
    assert sub.path is None
    payload = batch.read_submission(sub, skipped)
    result = batch.grade_submission(payload, "sim", 1, preflight=False)
    messages = {t["message"] for t in result["tests"]}
    assert len(messages) == 1
    [message] = messages
    assert "tiled_matmul.py: a symbolic link" in message and result["score"] == 0
