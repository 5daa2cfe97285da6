"""Nothing of one submission reaches the next: one grader process (and one ``batch`` worker)
grades a submission that leaves traces, then a correct one, which must get exactly what the
instructor solution gets.

``tests/adversarial/`` shows that a hostile grading leaves nothing on the host
(``fork_left_behind.py``: a double-forked process in its own session; ``writes_outside_scratch.py``:
files outside its scratch folder). Here the question is the *next* grading in the same process:

* **the one that leaves traces** (graded first) is the ``occupancy`` solution whose functions,
  on their first call, write a marker file into its scratch folder, its working folder,
  ``/tmp``, ``/var/tmp``, ``/dev/shm``, ``$HOME`` and ``$TMPDIR``, and leave a ``sleep``
  process behind (double fork, ``setsid``: out of the child's session and process group, as in
  ``fork_left_behind.py``).
  Its answers are right only if it managed to write a marker and fork, so its full marks prove
  the attack happened;
* **the spy** (graded next) is the solution whose functions answer wrongly as soon as they see
  any of those markers (at the same places, and in every ``kernelgrade-*`` scratch folder under
  ``/tmp``) or the ``sleep`` process in ``/proc``. (A kernel cannot look for files, and no
  submission runs Python at top level, :mod:`autograder.source.definitions`; ``occupancy``'s
  functions are plain Python run in the child, so they can look.)

From the grader's side: the ``sleep`` process is gone, no marker is left on the host, and the
spy's tests are exactly the solution's. Both sandbox modes run (``plain``: the reaper; its one
known limit, a literal ``/tmp``, ``/var/tmp`` or ``/dev/shm`` path being the host's, is cleaned
between the two gradings and named below).
"""

from __future__ import annotations

import glob
import os
import re
import secrets
import threading
import time
from pathlib import Path

import pytest

from adversarial.test_adversarial import _sleepers
from autograder.sandbox import mode as sandbox_mode
from autograder.grader import grade
from conftest import ROOT, TEST_DEVICE, SOLUTIONS
from tests.adversarial.lift import reach_lifted  # noqa: F401 (a fixture: the hostile files run)

SOLUTION = SOLUTIONS / "occupancy.py"
# Folders every process on the host shares; bubblewrap gives a child private ones (or none).
SHARED_TMP = ("/tmp", "/var/tmp", "/dev/shm")
FUNCTIONS = ("warps_per_block", "resident_blocks_per_sm", "resident_threads_per_sm",
             "tile_shared_bytes", "global_traffic_reduction")

# Each function of the solution, renamed ``solution_<name>`` (calls included), and a wrapper
# under the contract's name that passes its answer through ``probe``.
_WRAPPER = '''

def {name}(*args, **kwargs):
    return probe(solution_{name}(*args, **kwargs))
'''

_LEAVES_TRACES = '''
MARKER = {marker!r}
SLEEP = {sleep!r}
SHARED_TMP = {shared_tmp!r}
LEFT = []


def probe(answer):
    """Leave the traces once; the right answer only if they were left."""
    import os
    import sys

    if not LEFT:
        here = os.path.dirname(os.path.abspath(sys.modules["submission"].__file__))
        for folder in (here, os.getcwd(), *SHARED_TMP, os.path.expanduser("~"),
                       os.environ.get("TMPDIR", "/tmp")):
            try:
                with open(os.path.join(folder, MARKER), "w") as f:
                    f.write("left by the previous submission\\n")
                LEFT.append(folder)
            except OSError:
                pass
        pid = os.fork()
        if pid == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv("/bin/sleep", ["sleep", SLEEP])
            os._exit(0)
        os.waitpid(pid, 0)
        import time

        time.sleep(0.3)  # the test's watcher sees the process
        LEFT.append(pid)
    return answer if len(LEFT) > 1 else -1
'''

_SPY = '''
MARKER = {marker!r}
SLEEP = {sleep!r}
SHARED_TMP = {shared_tmp!r}


def probe(answer):
    """The right answer only when no trace of the previous submission is visible."""
    import glob
    import os
    import sys

    here = os.path.dirname(os.path.abspath(sys.modules["submission"].__file__))
    places = [here, os.getcwd(), os.path.expanduser("~"), os.environ.get("TMPDIR", "/tmp")]
    places += list(SHARED_TMP)
    places += glob.glob("/tmp/kernelgrade-*") + glob.glob("/tmp/kernelgrade-*/*")
    if any(os.path.exists(os.path.join(p, MARKER)) for p in places):
        return -1
    for pid in os.listdir("/proc"):
        try:
            with open(os.path.join("/proc", pid, "cmdline"), "rb") as f:
                if SLEEP.encode() in f.read():
                    return -1
        except OSError:
            pass
    return answer
'''


def _submission(folder: Path, name: str, probe: str, **values) -> Path:
    """The occupancy solution with every function's answer passed through ``probe`` (its
    ``{placeholders}`` filled from ``values``)."""
    text = SOLUTION.read_text()
    for f in FUNCTIONS:
        text = re.sub(rf"\b{f}\(", f"solution_{f}(", text)
    text += probe.format(**values)
    text += "".join(_WRAPPER.format(name=f) for f in FUNCTIONS)
    path = folder / f"{name}.py"
    path.write_text(text)
    return path


@pytest.fixture(params=["bubblewrap", "plain"])
def mode(request, monkeypatch, tmp_path):
    """The sandbox mode (``KERNELGRADE_SANDBOX``) for this test; a preflight cache of its own."""
    if request.param == "bubblewrap":
        monkeypatch.setenv("KERNELGRADE_SANDBOX", "require")
        if not sandbox_mode.sandbox_status().available:
            pytest.skip(f"needs bubblewrap: {sandbox_mode.sandbox_status().reason}")
    else:
        monkeypatch.setenv("KERNELGRADE_SANDBOX", "off")
    monkeypatch.setenv("KERNELGRADE_CACHE_DIR", str(tmp_path / "cache"))
    return request.param


@pytest.fixture
def traces(tmp_path, mode):
    """(the traces submission, the spy, the marker's file name, the sleep argument); whatever
    survives is removed afterwards. In plain mode the spy does not look in the host's shared
    temporary folders (:func:`_plain_tmp_limit`)."""
    token = secrets.token_hex(4)
    marker = f"kernelgrade-isolation-{token}"
    sleep = f"7777.{int(token, 16) % 10**6:06d}"
    folder = tmp_path / "submissions"
    folder.mkdir()
    made = (_submission(folder, "1_leaves_traces", _LEAVES_TRACES, marker=marker, sleep=sleep,
                        shared_tmp=SHARED_TMP),
            _submission(folder, "2_spy", _SPY, marker=marker, sleep=sleep,
                        shared_tmp=SHARED_TMP if mode != "plain" else ()), marker, sleep)
    yield made
    for path in _host_markers(marker):
        Path(path).unlink(missing_ok=True)
    for pid in _sleepers(sleep):
        os.kill(pid, 9)


def _host_markers(marker: str) -> list[str]:
    """Marker files on the host: the shared temporary folders, $HOME, the project, and every
    scratch folder."""
    places = [*SHARED_TMP, str(Path.home()), str(ROOT), os.getcwd()]
    found = [os.path.join(p, marker) for p in places if os.path.exists(os.path.join(p, marker))]
    return found + glob.glob(f"/tmp/kernelgrade-*/**/{marker}", recursive=True)


class _Watcher:
    """Notes whether the ``sleep`` process ever ran (else the test would prove nothing)."""

    def __init__(self, sleep: str):
        self.sleep, self.seen, self.stop = sleep, False, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            self.seen = self.seen or bool(_sleepers(self.sleep))
            time.sleep(0.05)

    def done(self) -> bool:
        self.stop.set()
        self.thread.join()
        return self.seen


def _gone(sleep: str) -> bool:
    deadline = time.monotonic() + 5  # a SIGKILLed namespace takes a moment to go
    while _sleepers(sleep) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not _sleepers(sleep)


def _tests(result: dict) -> list[tuple]:
    return [(t["name"], t["kind"], t["status"], t["points"], t["message"])
            for t in result["tests"]]


def _plain_tmp_limit(mode: str, marker: str) -> None:
    """Plain mode only: a child writes the host's /tmp, /var/tmp and /dev/shm (no mount
    namespace without bubblewrap, so a literal path there is shared, and a batch worker's next
    submission could read it; the README says to require bubblewrap for real classes). Those
    files are removed here, and the spy does not look there, so the rest of the isolation is
    tested."""
    if mode == "plain":
        for folder in SHARED_TMP:
            Path(folder, marker).unlink(missing_ok=True)


def test_the_next_submission_in_the_same_process_sees_nothing(mode, traces, reach_lifted):
    leaves, spy, marker, sleep = traces
    solution = grade(SOLUTION, "occupancy", device=TEST_DEVICE, seed=7, preflight=False)
    assert solution.score > 0 and solution.score == solution.max_score - solution.pending_points

    watcher = _Watcher(sleep)
    first = grade(leaves, "occupancy", device=TEST_DEVICE, seed=7, preflight=False)
    assert watcher.done(), "the left-behind `sleep` never ran: the attack did not happen"
    assert first.score == solution.score, "it did not manage to write a marker and fork"
    assert _gone(sleep), f"`sleep {sleep}` outlived its grading"
    _plain_tmp_limit(mode, marker)
    assert _host_markers(marker) == [], "a marker file outlived its grading"

    second = grade(spy, "occupancy", device=TEST_DEVICE, seed=7, preflight=False)
    assert _tests(second.to_dict()) == _tests(solution.to_dict()), \
        "the next submission saw the previous one's files or process"
    assert second.score == solution.score
    sandboxes = {n for n in second.instructor_notes if n.startswith("sandbox:")}
    assert bool(sandboxes) == (mode == "plain")


def test_the_next_submission_on_a_batch_worker_sees_nothing(mode, traces, tmp_path,
                                                           reach_lifted):
    """Both graded by one Dask worker process, in turn (discovery order, one worker: on a GPU
    one GPU and one worker on it, not the default several)."""
    from autograder.batch.run import run_batch

    leaves, spy, marker, sleep = traces
    solution = grade(SOLUTION, "occupancy", device=TEST_DEVICE, seed=7, preflight=False)
    watcher = _Watcher(sleep)
    store, failures = run_batch(leaves.parent, tmp_path / "class.sqlite", "occupancy",
                                TEST_DEVICE, workers=1, progress=False, seed=7,
                                workers_per_gpu=1)
    assert watcher.done(), "the left-behind `sleep` never ran: the attack did not happen"
    assert failures == []
    rows = {r["student"]: r for r in store.rows()}
    assert rows[leaves.stem]["score"] == solution.score  # it left its traces
    assert _tests(rows[spy.stem]["result"]) == _tests(solution.to_dict()), \
        "the next submission saw the previous one's files or process"
    assert _gone(sleep), f"`sleep {sleep}` outlived the batch"
    _plain_tmp_limit(mode, marker)
    assert _host_markers(marker) == []
