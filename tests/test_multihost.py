"""``autograder batch --scheduler`` on a real Dask cluster started from the command line, as on
many hosts: a ``dask scheduler`` and two ``dask worker`` processes over TLS (docs/batch.md's
recipe: one certificate and key, given to each with ``--tls-ca-file/--tls-cert/--tls-key``), each
worker in a working folder of its own and unable to see the submissions folder (bubblewrap mounts
an empty tmpfs over it), so grading works only if ``batch`` sends each submission's source, not
its path.

The class is six ``occupancy`` submissions (plain Python functions: a few seconds each on the
simulator): the instructor solution as a ``.py`` file and as a notebook, three mutants, and a
notebook without a list of cells. One test grades it and checks what the results say; the
other SIGKILLs one worker's whole process tree once the first result is stored and checks that
every submission is stored once, with the score an in-process grading gives.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.exercises import known_bad
from autograder.batch.tls import self_signed
from autograder.batch.cluster import client_security
from autograder.grader import gpu_available, grade
from autograder.wire.results import ExerciseResult
from autograder.batch.store import ResultStore
from conftest import stored_count, ROOT, EXERCISES, SOLUTIONS

DASK = Path(sys.executable).with_name("dask")
BATCH_SEED = 1313
MUTANTS = ("floor_warps", "ignores_shared_memory", "one_tile_only")
LEAK_MARK = "kernelgrade-submission-"  # the prefix of a worker's private folders


def _bwrap_works() -> str | None:
    """Why bubblewrap cannot hide a folder from the workers here, or None when it can."""
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed (apt-get install bubblewrap)"
    probe = subprocess.run(["bwrap", "--dev-bind", "/", "/", "--tmpfs", "/tmp", "true"],
                           capture_output=True, text=True)
    return None if probe.returncode == 0 else f"bwrap cannot run here: {probe.stderr.strip()}"


_NO_BWRAP = _bwrap_works()
needs_bwrap = pytest.mark.skipif(_NO_BWRAP is not None, reason=str(_NO_BWRAP))


def _notebook(code: str) -> str:
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": "# Occupancy"},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": code}]})


def make_class(root: Path) -> dict[str, Path]:
    """Six submissions in nbgrader's layout; returns key → file."""
    solution = (SOLUTIONS / "occupancy.py").read_text()
    files = {"ada": ("occupancy.py", solution), "bea": ("occupancy.ipynb", _notebook(solution)),
             "eve": ("occupancy.ipynb", '{"cells": "not a list"}')}
    for student, mutant in zip(("cal", "dan", "fay"), MUTANTS):
        files[student] = ("occupancy.py",
                          (EXERCISES / "occupancy" / "mutants" / f"{mutant}.py").read_text())
    out = {}
    for student, (name, text) in files.items():
        folder = root / student / "07_occupancy"
        folder.mkdir(parents=True)
        (folder / name).write_text(text)
        out[f"{student}/07_occupancy"] = folder / name
    return dict(sorted(out.items()))


class Cluster:
    """A ``dask scheduler`` and two ``dask worker`` processes, each its own process group; the
    workers run under bubblewrap with ``hidden`` replaced by an empty folder."""

    def __init__(self, base: Path, hidden: Path):
        self.base = base
        base.mkdir(parents=True)
        self.file = base / "scheduler.json"
        self.logs: list[Path] = []
        env = dict(os.environ)
        self.tls = _credentials(base / "tls")
        self.scheduler = self._start([str(DASK), "scheduler", "--port", "0", "--no-dashboard",
                                      "--scheduler-file", str(self.file), *self.tls],
                                     base, env, "scheduler")
        self.workers: dict[str, subprocess.Popen] = {}
        self.tmpdirs: dict[str, Path] = {}
        for name in ("w1", "w2"):
            home = base / name
            (home / "tmp").mkdir(parents=True)
            self.tmpdirs[name] = home / "tmp"
            wenv = dict(env, HOME=str(home), TMPDIR=str(home / "tmp"))
            self.workers[name] = self._start(
                ["bwrap", "--dev-bind", "/", "/", "--tmpfs", str(hidden), "--chdir", str(home),
                 "--", str(DASK), "worker", "--scheduler-file", str(self.file), "--nthreads",
                 "1", "--nworkers", "1", "--no-dashboard", "--name", name,
                 "--local-directory", str(home / "dask"), *self.tls], home, wenv, name)

    def _start(self, cmd, cwd, env, name) -> subprocess.Popen:
        log = self.base / f"{name}.log"
        self.logs.append(log)
        with open(log, "wb") as f:
            return subprocess.Popen(cmd, cwd=cwd, env=env, stdout=f, stderr=subprocess.STDOUT,
                                    start_new_session=True)

    def client(self):
        from distributed import Client

        deadline = time.monotonic() + 120
        while not self.file.exists():
            assert time.monotonic() < deadline, "the scheduler wrote no file:\n" + self.tail()
            time.sleep(0.2)
        client = Client(scheduler_file=str(self.file), timeout=60,
                        security=client_security(*self.tls[1::2]))
        client.wait_for_workers(2, timeout=180)
        return client

    def kill(self, name: str) -> int:
        """SIGKILL worker ``name`` and every process under it at once; returns how many."""
        proc = self.workers[name]
        tree = _descendants(proc.pid) + [proc.pid]
        for pid in tree:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait()
        return len(tree)

    def tail(self) -> str:
        return "\n".join(f"--- {log.name}\n" + log.read_text(errors="replace")[-2000:]
                         for log in self.logs if log.exists())

    def close(self) -> None:
        for proc in [*self.workers.values(), self.scheduler]:
            if proc.poll() is None:
                for pid in _descendants(proc.pid) + [proc.pid]:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
            proc.wait()


def _credentials(folder: Path) -> list[str]:
    """One self-signed certificate and its key, as docs/batch.md makes them with openssl,
    written under ``folder``; returns the options that name them."""
    cert, key = self_signed()
    folder.mkdir(mode=0o700)
    (folder / "kg.pem").write_text(cert)
    (folder / "kg.key").write_text(key)
    (folder / "kg.key").chmod(0o600)
    return ["--tls-ca-file", str(folder / "kg.pem"), "--tls-cert", str(folder / "kg.pem"),
            "--tls-key", str(folder / "kg.key")]


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                ppid = int(Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


@pytest.fixture
def cluster(tmp_path):
    """(the cluster, the class folder it cannot see, key → file)."""
    root = tmp_path / "class" / "submitted"
    files = make_class(root)
    c = Cluster(tmp_path / "cluster", tmp_path / "class")
    try:
        yield c, root, files
    finally:
        c.close()


def _batch(root: Path, db: Path, c: Cluster, device: str = "sim") -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "autograder.cli", "batch", str(root), "--db", str(db),
         "--device", device, "--scheduler", str(c.file), "--seed", str(BATCH_SEED), *c.tls],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _rows(db: Path) -> list[dict]:
    store = ResultStore(db)
    try:
        return store.rows()
    finally:
        store.close()


def _verdicts(result: dict) -> tuple:
    return (result["score"], result["pending_points"],
            tuple((t["name"], t["status"], t["points"], t["message"]) for t in result["tests"]))


def test_store_keeps_the_first_result_of_a_key(tmp_path):
    store = ResultStore(tmp_path / "r.sqlite")
    first = {"exercise": "occupancy", "submission": "a.py", "score": 80.0, "max_score": 100.0,
             "provisional": True, "device": "sim", "tests": []}
    assert store.save("ada/07_occupancy", "ada", first)
    assert not store.save("ada/07_occupancy", "ada", dict(first, score=0.0))
    assert [(r["key"], r["score"], r["result"]) for r in store.rows()] == \
        [("ada/07_occupancy", 80.0, first)]


@pytest.mark.slow
@needs_bwrap
def test_batch_grades_on_workers_that_cannot_see_the_submissions(cluster, tmp_path):
    c, root, files = cluster
    client = c.client()
    try:
        seen = client.run(os.path.exists, str(files["ada/07_occupancy"]))
        assert seen and not any(seen.values()), f"a worker sees the submissions: {seen}"
        assert len(set(client.run(os.getcwd).values())) == 2  # a working folder each
    finally:
        client.close()

    db = tmp_path / "results.sqlite"
    proc = _batch(root, db, c)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-3000:] + c.tail()
    rows = {r["key"]: r for r in _rows(db)}
    assert sorted(rows) == sorted(files)
    for key, row in rows.items():
        # Named as this process found it, never by a worker's private folder.
        assert row["submission"] == str(files[key])
        text = json.dumps(row["result"])
        assert LEAK_MARK not in text, f"{key} names a worker's folder: {text[:2000]}"
        for tmp in c.tmpdirs.values():
            assert str(tmp) not in text
        assert row["device"] == "sim" and row["result"]["seed"] == \
            ResultStore.exercise_seed(BATCH_SEED, "occupancy")  # one seed for the class

    ada, bea = rows["ada/07_occupancy"]["result"], rows["bea/07_occupancy"]["result"]
    assert not known_bad.full_marks_problems(ExerciseResult.from_dict(ada))
    assert ada["score"] > 0 and ada["pending_points"] > 0  # sim: the GPU cases are pending
    # The notebook was graded as a notebook: its one code cell is the solution.
    assert _verdicts(bea) == _verdicts(ada)
    for key in ("cal/07_occupancy", "dan/07_occupancy", "fay/07_occupancy"):
        result = ExerciseResult.from_dict(rows[key]["result"])
        assert not known_bad.unmet(files[key], result), key
        assert 0 < result.score < ada["score"]
    eve = rows["eve/07_occupancy"]["result"]
    assert eve["score"] == 0
    assert eve["tests"][0]["message"] == \
        f"{files['eve/07_occupancy']} is not a Jupyter notebook: it has no list of cells"

    # A rerun finds everything stored: nothing is sent, nothing stored twice.
    again = _batch(root, db, c)
    _, err = again.communicate(timeout=300)
    assert again.returncode == 0, err[-3000:]
    assert [r["result"] for r in _rows(db)] == [rows[k]["result"] for k in sorted(rows)]

    if not gpu_available():  # --device gpu needs no GPU here, but the workers' setup fails
        other = tmp_path / "gpu.sqlite"
        gpu = _batch(root, other, c, device="gpu")
        _, err = gpu.communicate(timeout=300)
        assert gpu.returncode == 2, err[-3000:]
        assert "a grading worker could not grade: --device gpu, but no GPU is visible" in err
        assert _rows(other) == []  # a worker's GraderSetupError stores nothing


@pytest.mark.slow
@needs_bwrap
def test_worker_killed_mid_batch_loses_nothing(cluster, tmp_path):
    c, root, files = cluster
    client = c.client()
    db = tmp_path / "results.sqlite"
    proc = _batch(root, db, c)
    try:
        names = {addr: info["name"] for addr, info in
                 client.scheduler_info()["workers"].items()}
        deadline = time.monotonic() + 400
        stored = 0
        while stored < 1:
            assert proc.poll() is None, proc.communicate()[1][-3000:] + c.tail()
            assert time.monotonic() < deadline, "no result stored:\n" + c.tail()
            time.sleep(0.2)
            stored = stored_count(db)
        # The worker that is grading something now (the other may be between tasks).
        busy: list[str] = []
        while not busy:
            assert proc.poll() is None, "the batch ended before a worker could be killed"
            busy = [names[a] for a, keys in client.processing().items() if keys]
            time.sleep(0.05)
        victim = busy[0]
        assert stored_count(db) < len(files), "the batch ended before the kill"
        assert c.kill(victim) >= 3  # bwrap, the nanny and the worker at least
    finally:
        client.close()
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-3000:] + c.tail()
    assert "grader error" not in err

    with sqlite3.connect(db) as con:
        keys = [k for (k,) in con.execute("SELECT key FROM results ORDER BY key")]
    assert keys == sorted(files)  # each submission exactly once
    rows = {r["key"]: r["result"] for r in _rows(db)}
    for key, path in files.items():  # the same grading, here, with the same seed
        want = grade(path, "occupancy", device="sim", preflight=False,
                     seed=ResultStore.exercise_seed(BATCH_SEED, "occupancy")).to_dict()
        assert rows[key]["submission"] == str(path)
        assert _verdicts(rows[key]) == _verdicts(want), key


