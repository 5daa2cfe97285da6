"""``autograder batch``: grade a whole class with Dask distributed, resumable, no lost grades.

Work is spread over a local Dask cluster by default — one worker per GPU, pinned with
``CUDA_VISIBLE_DEVICES``, or CPU workers on the simulator — or over any Dask scheduler address
(for instance a Slurm cluster through dask-jobqueue). Each submission still runs in its own child
process (:func:`autograder.grader.grade`). Each result is committed to SQLite as it arrives.
"""

from __future__ import annotations

import os
from dataclasses import asdict
from pathlib import Path

from .discovery import Submission, discover
from .grader import gpu_count
from .store import ResultStore


def grade_submission(sub: dict, device: str, seed: int, sanitize: bool = True) -> dict:
    """Grade one submission on a Dask worker; returns ``ExerciseResult.to_dict()``.

    A student folder without a notebook scores 0 with a message. Never raises for a bad
    submission (the grader turns those into results)."""
    from . import exercises
    from .grader import grade
    from .results import ExerciseResult

    if sub["path"] is None:
        ex = exercises.get(sub["exercise"])
        from .grader import _all_tests
        from .results import Status

        result = ExerciseResult(ex.name, sub["key"], device, seed=seed)
        result.tests = _all_tests(ex, Status.ERROR,
                                  f"no .ipynb or .py file was submitted in {sub['key']}")
        return result.to_dict()
    return grade(sub["path"], sub["exercise"], device=device, seed=seed,
                 sanitize=sanitize).to_dict()


def local_cluster(backend: str, workers: int | None, workers_per_gpu: int = 1):
    """A local Dask cluster: ``workers_per_gpu`` workers per GPU (pinned with
    ``CUDA_VISIBLE_DEVICES``; ``workers`` caps the GPUs used) on ``gpu``, else ``workers`` CPU
    workers (default: the number of cores). Workers sharing a GPU take turns for timing
    (:mod:`autograder.gpulock`)."""
    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "error")  # workers inherit it
    from distributed import Nanny, Scheduler, SpecCluster

    if backend == "gpu":
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        ids = visible.split(",") if visible else [str(i) for i in range(max(1, gpu_count() or 0))]
        ids = ids[: workers or len(ids)]
        specs = {f"gpu{i}-{j}": {"cls": Nanny, "options": {
                     "nthreads": 1, "env": {"CUDA_VISIBLE_DEVICES": gid}}}
                 for i, gid in enumerate(ids) for j in range(max(1, workers_per_gpu))}
    else:
        n = workers or os.cpu_count() or 1
        specs = {f"cpu{i}": {"cls": Nanny, "options": {"nthreads": 1}} for i in range(n)}
    return SpecCluster(workers=specs, scheduler={"cls": Scheduler,
                                                 "options": {"dashboard_address": None}},
                       silence_logs=40)


def run_batch(root: str | Path, db: str | Path, exercise: str | None = None,
              device: str = "auto", workers: int | None = None, scheduler: str | None = None,
              seed: int | None = None, progress: bool = True, workers_per_gpu: int = 1,
              sanitize: bool = True) -> tuple[ResultStore, list[str]]:
    """Grade every submission under ``root`` not yet in ``db``; returns (the store, the keys
    the grader itself failed on). Raises ``ValueError`` for a bad folder or device."""
    from distributed import Client, as_completed

    from .grader import resolve_device

    backend = resolve_device(device)
    subs = discover(root, exercise)
    store = ResultStore(db)
    batch_seed = store.batch_seed(seed)
    done = store.done_keys()
    pending = [s for s in subs if s.key not in done]
    failures: list[str] = []
    if not pending:
        return store, failures
    cluster = None if scheduler else local_cluster(backend, workers, workers_per_gpu)
    with Client(scheduler or cluster) as client:
        futures = {}
        for s in pending:
            d = asdict(s)
            d["path"] = str(s.path) if s.path else None
            fut = client.submit(grade_submission, d, backend,
                                ResultStore.submission_seed(batch_seed, s.key), sanitize,
                                key=f"grade-{s.key}-{batch_seed}", pure=False)
            futures[fut] = s
        _collect(futures, as_completed(futures), store, failures, progress)
    if cluster is not None:
        cluster.close()
    return store, failures


def _collect(futures: dict, completed, store: ResultStore, failures: list[str],
             progress: bool) -> None:
    from rich.progress import Progress

    with Progress(disable=not progress, transient=False) as bar:
        task = bar.add_task("grading", total=len(futures))
        for fut in completed:
            sub: Submission = futures[fut]
            try:
                store.save(sub.key, sub.student, fut.result())
            except Exception as exc:  # the grader itself failed: not stored, retried next run
                failures.append(f"{sub.key}: {type(exc).__name__}: {exc}")
            bar.advance(task)
