"""``autograder batch`` killed with SIGKILL at random moments, then resumed, grades exactly like
an uninterrupted run: one result per submission, the same scores, statuses, messages and seeds;
and no process of the killed batch (Dask workers, grading children, sandboxes) outlives it.

The class has 30 submissions; most fail fast (syntax errors cost no child process; a missing
kernel or a TILE_WIDTH out of range cost one import), a few run for real on the simulator
(occupancy functions, and transpose kernels at the exercise's small simulator sizes).
Kill moments are random, each after a random number of stored results (so kills land while
submissions are being graded); ``KERNELGRADE_KILL_SEED`` replays a failing run.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from autograder.batch.store import ResultStore
from conftest import stored_count, ROOT, TEST_DEVICE, SOLUTIONS

pytestmark = pytest.mark.slow

BATCH_SEED = 424242
KILLS = 3
MARKER = "KG_BATCH_KILL_TEST"


def make_class(root: Path) -> list[str]:
    """Write 30 submissions in nbgrader's ``submitted/<student>/<assignment>/`` layout; return
    their keys."""
    subs: dict[str, tuple[str, str]] = {}
    for i in range(18):  # syntax errors on different lines
        body = "from numba import cuda\n" + "TILE_WIDTH = 16\n" * (i % 5) + f"def broken({i}:\n"
        subs[f"s{i:02d}"] = ("01_tiled_matmul", body)
    for i in range(18, 22):
        subs[f"s{i:02d}"] = ("01_tiled_matmul", f"from numba import cuda\nTILE_WIDTH = {8 + i}\n")
    for i in range(22, 25):
        subs[f"s{i:02d}"] = ("01_tiled_matmul", "from numba import cuda\nTILE_WIDTH = 64\n\n"
                             "@cuda.jit\ndef tiled_matmul(A, B, C):\n    pass\n")
    occupancy = (SOLUTIONS / "occupancy.py").read_text()
    subs["s25"] = ("03_occupancy", occupancy)
    subs["s26"] = ("03_occupancy", occupancy.replace("return float(tile_width)",
                                                     "return float(tile_width) / 2"))
    subs["s27"] = ("03_occupancy", "def warps_per_block(threads_per_block, warp_size=32):\n"
                                   "    return threads_per_block // warp_size\n")
    transpose = (SOLUTIONS / "transpose.py").read_text()
    wrong = transpose.replace("B[b_row, b_col] = tile[tx, ty + j]",
                              "B[b_row, b_col] = tile[tx, ty + j] + float32(1.0)")
    assert wrong != transpose
    subs["s28"] = ("05_transpose", transpose)
    subs["s29"] = ("05_transpose", wrong)  # deterministic wrong values (no uninitialised reads)
    keys = []
    for student, (assignment, text) in subs.items():
        folder = root / student / assignment
        folder.mkdir(parents=True)
        (folder / f"{assignment.split('_', 1)[1]}.py").write_text(text)
        keys.append(f"{student}/{assignment}")
    return sorted(keys)


#: The sessions of the batches started (each batch leads its own).
_SESSIONS: set[int] = set()


def _batch(root: Path, db: Path, marker: str) -> subprocess.Popen:
    env = dict(os.environ, **{MARKER: marker})
    proc = subprocess.Popen(
        [sys.executable, "-m", "autograder.cli", "batch", str(root), "--db", str(db),
         "--device", TEST_DEVICE, "--workers", "2", "--seed", str(BATCH_SEED)],
        env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True)
    _SESSIONS.add(proc.pid)
    return proc


def _marked(marker: str) -> list[str]:
    """Live processes whose environment holds ``marker`` (the batch and all it started), or,
    where it cannot be read (the batch and its workers are non-dumpable: only a privileged
    user reads them), that are in a batch's session."""
    found = []
    needle = f"{MARKER}={marker}".encode()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            fields = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
            if fields[0] == "Z":
                continue
            try:
                environ = Path(f"/proc/{name}/environ").read_bytes()
            except PermissionError:
                environ = needle if int(fields[3]) in _SESSIONS else b""
            if needle in environ:
                cmd = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ")
                found.append(f"{name}: {cmd.decode(errors='replace')[:120]}")
        except OSError:
            continue
    return found


def _summary(db: Path) -> dict[str, tuple]:
    store = ResultStore(db)
    try:
        rows = store.rows()
    finally:
        store.close()
    out = {}
    for r in rows:
        res = r["result"]
        # On a GPU, timing verdicts are measurements (ratios, confidence intervals): compared by
        # name only, and left out of the score. On the simulator they are all "skipped".
        timed = res["device"].startswith("gpu")
        tests = tuple((t["name"],) if timed and t["kind"] == "timing"
                      else (t["name"], t["status"], t["points"], t["message"])
                      for t in res["tests"])
        score = round(sum(t["points"] for t in res["tests"]
                          if not (timed and t["kind"] == "timing")), 4)
        out[r["key"]] = (score, res["seed"], res["device"], tests)
    return out


def _run_to_end(root: Path, db: Path, marker: str) -> None:
    proc = _batch(root, db, marker)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err.decode()[-3000:]


@pytest.mark.skipif(shutil.which("nvidia-smi") is None and TEST_DEVICE == "gpu",
                    reason="KERNELGRADE_TEST_DEVICE=gpu needs a GPU")
def test_killed_batch_resumes_to_the_uninterrupted_result(tmp_path):
    kill_seed = int(os.environ.get("KERNELGRADE_KILL_SEED", random.randrange(1 << 30)))
    rng = random.Random(kill_seed)
    root = tmp_path / "submitted"
    keys = make_class(root)
    assert len(keys) == 30
    marker = uuid.uuid4().hex

    reference_db = tmp_path / "reference.sqlite"
    _run_to_end(root, reference_db, marker)
    reference = _summary(reference_db)
    assert sorted(reference) == keys

    db = tmp_path / "killed.sqlite"
    partial = []
    for k in range(KILLS):
        before = stored_count(db)
        target = before + rng.randint(1, 6)
        proc = _batch(root, db, marker)
        deadline = time.monotonic() + 240
        while stored_count(db) < target and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(rng.uniform(0.0, 1.5))
        running = _marked(marker)
        # The batch and its workers, unless the batch has ended or is past its last grading
        # (its workers already closed: a fast class can get there within the pause).
        assert proc.poll() is not None or len(running) >= 2 \
            or stored_count(db) == len(keys), \
            f"the marker does not reach the batch's workers: {running}"
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)  # the batch process only: its children must follow
        proc.wait()
        partial.append(stored_count(db))
        deadline = time.monotonic() + 30
        while _marked(marker) and time.monotonic() < deadline:
            time.sleep(0.25)
        left = _marked(marker)
        assert not left, (f"kill {k + 1} (seed {kill_seed}) left processes behind:\n"
                          + "\n".join(left))
    assert any(0 < n < len(keys) for n in partial), \
        f"no kill landed mid-batch (stored after each kill: {partial}; seed {kill_seed})"

    _run_to_end(root, db, marker)
    resumed = _summary(db)
    assert sorted(resumed) == keys, f"seed {kill_seed}"
    for key in keys:
        assert resumed[key] == reference[key], f"{key} differs after resume (seed {kill_seed})"
    assert not _marked(marker)
