"""``autograder batch``: grade a whole class with Dask distributed, resumable, no lost grades.

Work is spread over a local Dask cluster by default — one worker per GPU, pinned with
``CUDA_VISIBLE_DEVICES``, or CPU workers on the simulator — or over any Dask scheduler, by address
or scheduler file (for instance a Slurm cluster through dask-jobqueue: docs/batch.md). Each
submission still runs in its own child process (:func:`autograder.grader.grade`).

This process reads each submission and sends its bytes and name to the workers, never its path,
so workers on other hosts need no shared filesystem; a worker writes it into a private temporary
folder and grades it there. Results come back here and are committed to the one SQLite store as
they arrive, each once (:meth:`autograder.store.ResultStore.save` keeps the first). A worker that
dies mid-batch loses nothing: the scheduler gives its submissions to another worker.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import uuid
from pathlib import Path

from . import devices, preflight
from .discovery import NotRegularFile, Skipped, Submission, discover, read_regular
from .errors import GraderSetupError
from .store import ResultStore


def read_submission(sub: Submission) -> dict:
    """What a worker needs to grade ``sub``, read here so that it needs no access to our files:
    ``{"key", "student", "exercise", "name", "data"}``. ``name`` is the file as discovered
    (``str(sub.path)``: what results show as the submission, and where the HTML report finds its
    source), ``data`` its bytes; both are None for a student folder without a notebook or ``.py``
    file. The file is read without following a link anywhere below the class folder
    (:func:`autograder.discovery.read_regular`). Raises
    :class:`autograder.discovery.NotRegularFile` when it became a link or a special file after
    discovery, ``OSError`` when it cannot be read."""
    return {"key": sub.key, "student": sub.student, "exercise": sub.exercise,
            "name": str(sub.path) if sub.path else None,
            "data": read_regular(sub.path, sub.root) if sub.path else None}


def grade_submission(sub: dict, device: str, seed: int, sanitize: bool = True,
                     preflight: bool = True) -> dict:
    """Grade one submission on a Dask worker; returns ``ExerciseResult.to_dict()``.

    ``sub``: :func:`read_submission`'s dict. Its bytes are written into a private temporary
    folder of this worker under the file's own name (a notebook stays ``.ipynb``), graded with
    :func:`autograder.grader.grade`, and the folder is removed; the result names the submission
    by ``sub["name"]`` and no message mentions the temporary folder. A student folder without a
    notebook scores 0 with a message. Never raises for a bad submission (the grader turns those
    into results); raises :class:`autograder.errors.GraderSetupError` when this worker cannot
    grade (its preflight, once per worker process and exercise, unless ``preflight`` is False)."""
    from . import exercises
    from .grader import grade
    from .results import ExerciseResult

    if sub["data"] is None:
        ex = exercises.get(sub["exercise"])
        from .judge_cases import all_tests as _all_tests
        from .results import Status

        result = ExerciseResult(ex.name, sub["key"], device, seed=seed)
        result.tests = _all_tests(ex, Status.ERROR,
                                  f"no .ipynb or .py file was submitted in {sub['key']}")
        return result.to_dict()
    with tempfile.TemporaryDirectory(prefix="kernelgrade-submission-") as tmp:
        file = Path(tmp) / (Path(sub["name"]).name or "submission.py")
        file.write_bytes(sub["data"])
        result = grade(file, sub["exercise"], device=device, seed=seed, sanitize=sanitize,
                       preflight=preflight).to_dict()
        real = os.path.realpath(tmp)
        swaps = [(str(file), sub["name"]), (os.path.join(real, file.name), sub["name"]),
                 (tmp + os.sep, ""), (real + os.sep, ""), (tmp, "."), (real, ".")]
    return _replace_strings(result, swaps)


def _replace_strings(value, swaps: list[tuple[str, str]]):
    """``value`` (JSON-like: dicts, lists, strings) with each ``old`` replaced by ``new`` in
    every string, in the order given."""
    if isinstance(value, str):
        for old, new in swaps:
            value = value.replace(old, new)
        return value
    if isinstance(value, dict):
        return {k: _replace_strings(v, swaps) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace_strings(v, swaps) for v in value]
    return value


def _cores() -> int:
    """The cores this process may run on."""
    return (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
            else os.cpu_count()) or 1


#: The most workers a GPU gets by default.
MAX_WORKERS_PER_GPU = 12
#: GPU memory a worker may need at once: a CUDA context (about 0.5 GiB) and the largest
#: timing's inputs and outputs (``transpose``: 3.2 GB), allocated before the timing waits for
#: the GPU alone.
GPU_BYTES_PER_WORKER = 4 << 30


def default_workers_per_gpu(gpus: int, cores: int, gpu_bytes: int | None = None) -> int:
    """Workers per GPU when none is asked for: three for every four of the host's cores, shared
    among its ``gpus``, at most :data:`MAX_WORKERS_PER_GPU`, at most one per
    :data:`GPU_BYTES_PER_WORKER` of ``gpu_bytes`` (the smallest GPU's memory, when known) and
    at least 1. Measured on an H200 with 16 cores, a class of 300 ``tiled_matmul`` submissions
    without the sanitizer: 8 workers 158 per minute, 12 workers 201, 16 workers 189
    (2026-11-23, ``benchmarks/results/2026-11-23_H200_session5.md``): a grading's children are
    CPU work (starting Python, importing Numba, compiling) beside short GPU work."""
    n = min(MAX_WORKERS_PER_GPU, (3 * cores) // (4 * max(1, gpus)))
    if gpu_bytes:
        n = min(n, gpu_bytes // GPU_BYTES_PER_WORKER)
    return max(1, n)


def local_cluster(backend: str, workers: int | None, workers_per_gpu: int | None = None):
    """A local Dask cluster: ``workers_per_gpu`` workers per GPU (pinned with
    ``CUDA_VISIBLE_DEVICES``; ``workers`` caps the GPUs used; None:
    :func:`default_workers_per_gpu`) on ``gpu``, else ``workers`` CPU workers (default and
    most: the cores this process may run on). Workers sharing a GPU take turns for timing
    (:mod:`autograder.gpulock`)."""
    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "error")  # workers inherit it
    from distributed import Nanny, Scheduler, SpecCluster

    if backend == "gpu":
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        count = max(1, devices.gpu_count() or 0)
        ids = visible.split(",") if visible else [str(i) for i in range(count)]
        ids = ids[: workers or len(ids)]
        per_gpu = workers_per_gpu or default_workers_per_gpu(
            len(ids), _cores(), devices.smallest_gpu_memory_bytes())
        specs = {f"gpu{i}-{j}": {"cls": Nanny, "options": {
                     "nthreads": 1, "env": {"CUDA_VISIBLE_DEVICES": gid}}}
                 for i, gid in enumerate(ids) for j in range(max(1, per_gpu))}
    else:
        # A simulator grading keeps about one core busy (its run child: the simulator's
        # threads share one interpreter lock; the compile child beside it is brief), and its
        # deadlines count CPU time. One worker per core keeps every core busy while each child
        # still gets about half a core or more, far inside the children's wall-time backstops
        # (Limits.wall_factor); more would only queue children for the CPU, so it is the cap.
        cores = _cores()
        n = min(workers or cores, cores)
        specs = {f"cpu{i}": {"cls": Nanny, "options": {"nthreads": 1}} for i in range(n)}
    return SpecCluster(workers=specs, scheduler={"cls": Scheduler,
                                                 "options": {"dashboard_address": None}},
                       silence_logs=40)


def run_batch(root: str | Path, db: str | Path, exercise: str | None = None,
              device: str = "auto", workers: int | None = None, scheduler: str | None = None,
              seed: int | None = None, progress: bool = True, workers_per_gpu: int | None = None,
              sanitize: bool = True,
              seed_per_student: bool | None = None) -> tuple[ResultStore, list[str]]:
    """Grade every submission under ``root`` not yet in ``db``; returns (the store, the keys
    the grader itself failed on, each ``"key: why"``). Raises ``ValueError`` for a bad folder
    (a mixed layout included), device or ``scheduler``, or a ``seed_per_student`` that differs
    from the rule the batch started with.

    ``seed``: the batch's secret seed (first run only). Every submission of one exercise is
    graded with the same seed derived from it (:meth:`ResultStore.exercise_seed`: the class
    faces the same hidden inputs), or, with ``seed_per_student``, one per submission
    (:meth:`ResultStore.submission_seed`); the rule is stored with the seed.

    ``scheduler``: None for a local cluster (:func:`local_cluster`), else a running Dask
    scheduler's address (``tcp://host:8786``) or scheduler file (JSON, as written by ``dask
    scheduler --scheduler-file``); its workers may be on other hosts and need the package, not
    our files (:func:`read_submission`). With a scheduler, ``device="gpu"`` needs no GPU here.

    First, here, the preflight of each exercise to grade (:mod:`autograder.preflight`): if the
    instructor solution loses points, :class:`autograder.errors.GraderSetupError` is raised
    before any work is submitted (skipped for ``gpu`` behind a scheduler when this machine has
    no GPU). Workers check again, once per worker process and exercise, where their setup may
    differ from this process's (a GPU of their own, another machine behind ``scheduler``);
    local simulator workers share this one's and skip it. A worker's ``GraderSetupError``
    stores nothing for that submission, cancels the rest and is raised after the cluster is
    closed (the results stored before it stay; a rerun resumes); so is a scheduler that
    cannot be reached. A file that cannot be read here is a failure (not stored, retried by a
    rerun).

    Everything under ``root`` that is not graded (:func:`autograder.discovery.discover`'s
    :class:`~autograder.discovery.Skipped` entries, and files that became a link or a special
    file between discovery and reading) replaces the store's list of them
    (:meth:`ResultStore.replace_skipped`) before any grading starts: a resume shows the folder
    as it is now."""
    from distributed import Client, as_completed

    remote_gpu = scheduler is not None and device == "gpu" and not devices.gpu_available()
    backend = "gpu" if remote_gpu else devices.resolve_device(device)
    subs, skipped = discover(root, exercise)
    store = ResultStore(db)
    batch_seed = store.batch_seed(seed)
    per_student = store.seed_per_student(seed_per_student)
    done = store.done_keys()
    failures: list[str] = []
    pending: list[tuple[Submission, dict]] = []
    for s in subs:
        if s.key in done:
            continue
        try:
            pending.append((s, read_submission(s)))
        except NotRegularFile as exc:
            skipped.append(Skipped(str(s.path), "changed", f"{exc}; not graded", s.student,
                                   s.exercise, s.key))
        except OSError as exc:
            failures.append(f"{s.key}: cannot read {s.path}: {exc.strerror or exc}")
    stale = done - {s.key for s in subs}  # stored by an earlier run, not graded now
    skipped = [dataclasses.replace(s, reason=f"{s.reason} (a result an earlier run stored "
                                   f"for {s.key} stays in the store)")
               if s.key in stale else s for s in skipped]
    store.replace_skipped([s.to_dict() for s in sorted(skipped, key=lambda s: s.path)])
    if not pending:
        return store, failures
    names = sorted({s.exercise for s, _ in pending})
    client = _connect(scheduler) if scheduler else None  # an unreachable one fails first
    cluster = None
    try:
        if remote_gpu:
            pass  # no GPU here: the workers' own preflight (below) is the check
        elif backend == "gpu":  # side by side on a GPU; one after another on the CPU
            for check in [preflight.start(n, backend, sanitize) for n in names]:
                check.result()
        else:
            for n in names:
                preflight.check(n, backend, sanitize)
        worker_preflight = scheduler is not None or backend == "gpu"
        if client is None:
            cluster = local_cluster(backend, workers, workers_per_gpu)
            client = Client(cluster)
        # A fresh id per run: two batches sharing a scheduler never share a task (the same key
        # would get the other's result), and keys never show the secret seed (dashboards do).
        batch_id = uuid.uuid4().hex[:12]
        futures = {}
        for s, source in pending:
            sub_seed = (ResultStore.submission_seed(batch_seed, s.key) if per_student
                        else ResultStore.exercise_seed(batch_seed, s.exercise))
            fut = client.submit(grade_submission, source, backend, sub_seed, sanitize,
                                worker_preflight, key=f"grade-{s.key}-{batch_id}", pure=False)
            futures[fut] = s
        setup_error = _collect(futures, as_completed(futures), store, failures, progress)
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
    if setup_error is not None:
        raise GraderSetupError(f"a grading worker could not grade: {setup_error}")
    return store, failures


def _connect(scheduler: str):
    """A ``distributed.Client`` of the running scheduler named by ``scheduler``: a scheduler
    file when one exists at that path, else an address. Raises ``ValueError`` for a ``.json``
    path that does not exist, :class:`GraderSetupError` when the scheduler cannot be reached."""
    from distributed import Client

    as_file = Path(scheduler).is_file()
    if not as_file and scheduler.endswith(".json"):
        raise ValueError(f"--scheduler {scheduler}: no such scheduler file")
    try:
        return (Client(scheduler_file=scheduler) if as_file else Client(scheduler))
    except (OSError, TimeoutError, ValueError) as exc:
        raise GraderSetupError(f"cannot reach the Dask scheduler {scheduler}: "
                               f"{exc}") from None


def _collect(futures: dict, completed, store: ResultStore, failures: list[str],
             progress: bool) -> GraderSetupError | None:
    """Store each result as it arrives; a worker's ``GraderSetupError`` stores nothing, cancels
    what is left and is returned."""
    from rich.progress import Progress

    with Progress(disable=not progress, transient=False) as bar:
        task = bar.add_task("grading", total=len(futures))
        for fut in completed:
            sub: Submission = futures[fut]
            try:
                store.save(sub.key, sub.student, fut.result())
            except GraderSetupError as exc:  # that worker's setup: no grade can be trusted
                for other in futures:
                    other.cancel()
                return exc
            except Exception as exc:  # the grader itself failed: not stored, retried next run
                failures.append(f"{sub.key}: {type(exc).__name__}: {exc}")
            bar.advance(task)
