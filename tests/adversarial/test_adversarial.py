"""Hostile submissions: each must score 0 (none of the points it tries to steal), and the grader
must carry on — alive, within its deadlines, with no process of the child's left running and no
file written outside the child's scratch folder (where bubblewrap runs).

Every file in ``files/`` says what it tries and what it must get in its leading comments:

``# adversarial: WHAT``                    what it tries (required)
``# adversarial-exercise: NAME``           the exercise it is graded as (required)
``# kernelgrade-expect[-sim|-gpu]: K=S``   a test of kind K ends with status S (autograder.exercises.known_bad)
``# adversarial-message[-sim]: TEXT``      some test's message contains TEXT (-sim: on the simulator)
``# adversarial-note: TEXT``               some note of the result contains TEXT
``# adversarial-orphan: ARG``              no ``sleep ARG`` process may survive grading
``# adversarial-marker: PATH``             PATH must not exist after grading
``# adversarial-outside: NAME``            no NAME file in the package, the project or /tmp
``# adversarial-limits: I C T``            import, case and total timeouts in seconds
``# adversarial-needs: bubblewrap``        skipped (with the reason) where bubblewrap cannot run
``# adversarial-lift: reach``               graded with the reach layers lifted (``lift.py``), as if
                                           the file had got past them: it tests what holds after

Runs on the simulator by default and on a GPU with ``KERNELGRADE_TEST_DEVICE=gpu``.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import time
from pathlib import Path

import pytest

from autograder.exercises import known_bad
from autograder.sandbox import mode as sandbox_mode
from autograder.grader import default_limits
from autograder.sandbox.limits import Limits
from conftest import ROOT, TEST_DEVICE, grade_file
from tests.adversarial.lift import lifted_reach

FILES = Path(__file__).resolve().parent / "files"
HOSTILE = sorted(FILES.glob("*.py"))
_HEADER = re.compile(r"^#\s*adversarial(?:-([a-z-]+))?:\s*(.*)$")


def headers(path: Path) -> dict[str, list[str]]:
    """The ``# adversarial-KEY: value`` lines of ``path`` (the leading comment block)."""
    found: dict[str, list[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        m = _HEADER.match(line)
        if m:
            found.setdefault(m.group(1) or "what", []).append(m.group(2).strip())
    return found


def _sleepers(arg: str) -> list[int]:
    """PIDs of live ``sleep ARG`` processes (zombies excluded)."""
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if cmd[:2] == [b"sleep", arg.encode()] and state != "Z":
            pids.append(int(name))
    return pids


def _outside_paths(name: str) -> list[Path]:
    return [ROOT / "autograder" / name, ROOT / name, Path("/tmp") / name,
            Path.home() / name]


def _limits(h: dict) -> Limits:
    if "limits" in h:
        i, c, t = (float(x) for x in h["limits"][0].split())
        return Limits(import_timeout=i, case_timeout=c, total_timeout=t)
    base = default_limits("sim" if TEST_DEVICE == "sim" else "gpu")
    return Limits(import_timeout=base.import_timeout, case_timeout=20, total_timeout=90)


def _cleanup(h: dict) -> None:
    for marker in h.get("marker", []):
        Path(marker).unlink(missing_ok=True)
    for name in h.get("outside", []):
        for p in _outside_paths(name):
            p.unlink(missing_ok=True)
    for arg in h.get("orphan", []):
        for pid in _sleepers(arg):
            os.kill(pid, 9)


def test_the_suite_is_large_enough():
    assert len(HOSTILE) >= 15
    for path in HOSTILE:
        h = headers(path)
        assert h.get("what") and h.get("exercise"), f"{path.name}: missing headers"


@pytest.mark.parametrize("path", HOSTILE, ids=[p.stem for p in HOSTILE])
def test_hostile_submission_gets_nothing_and_the_grader_carries_on(path: Path):
    h = headers(path)
    bwrap = sandbox_mode.sandbox_status().available
    if "bubblewrap" in h.get("needs", []) and not bwrap:
        pytest.skip(f"needs bubblewrap: {sandbox_mode.sandbox_status().reason}")
    _cleanup(h)
    limits = _limits(h)
    seen: set[str] = set()
    watching = threading.Event()

    def watch():  # proves the orphan really ran: a test that finds none would prove nothing
        while not watching.is_set():
            seen.update(arg for arg in h.get("orphan", []) if _sleepers(arg))
            time.sleep(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        with lifted_reach() if "reach" in h.get("lift", []) else contextlib.nullcontext():
            result = grade_file(path, h["exercise"][0], limits=limits)
        watching.set()
        watcher.join()
        shown = "\n".join(f"  {t.name}: {t.status.value} {t.message[:160]}" for t in result.tests)

        assert result.score == 0, f"{path.name} scored {result.score}:\n{shown}"
        problems = [str(e) for e in known_bad.expectations(path)
                    if e.applies_to(result.device) and not e.holds(result)]
        assert not problems, f"{path.name}: {problems}\n{shown}"
        for text in h.get("message", []) + (h.get("message-sim", []) if result.device == "sim"
                                             else []):
            assert any(text in t.message for t in result.tests), \
                f"{path.name}: no message contains {text!r}\n{shown}"
        for text in h.get("note", []):
            assert any(text in n for n in result.notes), f"{path.name}: notes {result.notes}"
        if not bwrap:
            assert any(n.startswith("sandbox: bubblewrap unavailable")
                       for n in result.instructor_notes)

        for arg in h.get("orphan", []):
            assert arg in seen, f"`sleep {arg}` never ran: the attack did not happen"
            deadline = time.monotonic() + 5  # a SIGKILLed namespace takes a moment to go
            while _sleepers(arg) and time.monotonic() < deadline:
                time.sleep(0.2)
            assert not _sleepers(arg), f"{path.name} left `sleep {arg}` running"
        for marker in h.get("marker", []):
            assert not Path(marker).exists(), f"{path.name} created {marker}"
        if bwrap:
            for name in h.get("outside", []):
                written = [str(p) for p in _outside_paths(name) if p.exists()]
                assert not written, f"{path.name} wrote outside its scratch folder: {written}"
    finally:
        watching.set()
        _cleanup(h)
