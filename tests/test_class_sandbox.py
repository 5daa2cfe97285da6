"""A class is graded in the sandbox, or plain only on purpose, and then every result says so
(issue 30: ``auto`` on a host without bubblewrap graded a class in plain children, which could
write what the next grading loads). One ``autograder grade`` on a student's laptop keeps working
without bubblewrap."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from autograder.batch import run as batch_run
from autograder.report import export
from autograder.sandbox import mode as sandbox_mode
from conftest import ROOT, SOLUTIONS

NO_BWRAP = sandbox_mode.SandboxStatus(False, "bwrap is not installed")


@pytest.fixture
def no_bubblewrap(monkeypatch):
    monkeypatch.setattr(sandbox_mode, "_status", NO_BWRAP)
    monkeypatch.setattr(sandbox_mode, "_broken", {})
    monkeypatch.delenv("KERNELGRADE_SANDBOX", raising=False)


def test_a_class_without_bubblewrap_is_refused_unless_asked_for(no_bubblewrap, monkeypatch):
    with pytest.raises(sandbox_mode.SandboxUnavailable) as refused:
        sandbox_mode.for_class()
    said = str(refused.value)
    assert "bwrap is not installed" in said and "apt-get install bubblewrap" in said
    assert "--no-sandbox" in said and refused.value.exit_code == 2
    monkeypatch.setenv("KERNELGRADE_SANDBOX", "require")
    with pytest.raises(sandbox_mode.SandboxUnavailable):
        sandbox_mode.for_class()
    monkeypatch.setenv("KERNELGRADE_SANDBOX", "off")
    assert sandbox_mode.for_class() == "off"


def test_a_class_with_bubblewrap_cannot_fall_back_to_plain_children(monkeypatch):
    """Where bubblewrap runs, a class runs under ``require``: a sandboxed child that fails to
    start is the grader's fault (exit 2), never a plain rerun."""
    monkeypatch.setattr(sandbox_mode, "_status", sandbox_mode.SandboxStatus(True))
    monkeypatch.delenv("KERNELGRADE_SANDBOX", raising=False)
    with sandbox_mode.chosen(sandbox_mode.for_class()) as mode:
        assert mode == "require" and sandbox_mode.requested() == "require"
    assert "KERNELGRADE_SANDBOX" not in os.environ


def _without_bwrap_env(tmp_path) -> dict:
    empty = tmp_path / "bin"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "KERNELGRADE_SANDBOX"}
    return {**env, "PATH": str(empty), "PYTHONPATH": str(ROOT)}


def test_the_batch_command_refuses_a_class_without_bubblewrap(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "alice.py").write_text((SOLUTIONS / "occupancy.py").read_text())
    out = subprocess.run([sys.executable, "-m", "autograder.cli", "batch", str(folder), "-e",
                          "occupancy", "--device", "sim", "--db", str(tmp_path / "r.sqlite")],
                         capture_output=True, text=True, env=_without_bwrap_env(tmp_path),
                         cwd=tmp_path, timeout=300)
    assert out.returncode == 2, out.stderr
    assert "bubblewrap cannot run here" in out.stderr and "--no-sandbox" in out.stderr
    assert not (tmp_path / "r.sqlite").exists() or "alice" not in (tmp_path / "r.sqlite"
                                                                   ).read_bytes().decode("latin1")


def test_a_class_graded_plain_on_purpose_says_so_in_every_result(monkeypatch):
    """The worker's side of ``autograder batch --no-sandbox``: the result's field, the
    instructor's note (why), the student's note, and the CSV export's note."""
    monkeypatch.setenv("KERNELGRADE_SANDBOX", "require")  # a worker's own setting
    sub = {"key": "alice", "student": "alice", "exercise": "occupancy",
           "name": "alice/occupancy.py", "data": (SOLUTIONS / "occupancy.py").read_bytes(),
           "why": []}
    result = batch_run.grade_submission(sub, "sim", 7, preflight=False, sandbox="off")
    assert result["sandbox"] == "plain"
    assert sandbox_mode.UNSANDBOXED_NOTE in result["notes"]
    assert any(n.startswith("sandbox: bubblewrap unavailable (KERNELGRADE_SANDBOX=off)")
               for n in result["instructor_notes"])
    assert sandbox_mode.UNSANDBOXED_NOTE in export.note(result)
    assert sandbox_mode.UNSANDBOXED_NOTE not in export.note({**result, "sandbox": "bubblewrap"})


def test_one_grade_on_a_laptop_without_bubblewrap_still_grades(tmp_path):
    out = subprocess.run([sys.executable, "-m", "autograder.cli", "grade",
                          str(SOLUTIONS / "occupancy.py"), "-e", "occupancy", "--device", "sim",
                          "--json"], capture_output=True, text=True,
                         env=_without_bwrap_env(tmp_path), cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    import json

    report = json.loads(out.stdout)
    assert report["sandbox"] == "plain"
    assert report["score"] + report["pending_points"] == report["max_score"]  # the sim's own
