"""``autograder batch``: grade a whole class with Dask distributed, resumable, no lost grades.

Work is spread over a local Dask cluster by default — one worker per GPU, pinned with
``CUDA_VISIBLE_DEVICES``, or CPU workers on the simulator — or over any Dask scheduler, by address
or scheduler file (for instance a Slurm cluster through dask-jobqueue: docs/batch.md). Each
submission still runs in its own child process (:func:`autograder.grader.grade`).

This process reads each submission and sends its bytes and name to the workers, never its path,
so workers on other hosts need no shared filesystem; a worker writes it into a private temporary
folder and grades it there. Results come back here and are committed to the one SQLite store as
they arrive, each once (:meth:`autograder.batch.store.ResultStore.save` keeps the first). A worker that
dies mid-batch loses nothing: the scheduler gives its submissions to another worker.

A class is graded in the sandbox (bubblewrap), or, asked for on purpose (``--no-sandbox``),
plain with every result saying so (:func:`autograder.sandbox.mode.for_class`); the mode goes
with each submission to its worker.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import sys
import uuid
from pathlib import Path

from autograder import settings
from autograder.grading import devices
from autograder.grading import preflight
from autograder.batch.cluster import connect, local_cluster
from autograder.batch.discovery import NotRegularFile, Skipped, Submission, discover, read_regular
from autograder.errors import GraderSetupError
from autograder.batch.store import ResultStore
from autograder.sandbox import mode as sandbox_mode


def read_submission(sub: Submission, skipped: list[Skipped] = ()) -> dict:
    """What a worker needs to grade ``sub``, read here so that it needs no access to our files:
    ``{"key", "student", "exercise", "name", "data", "why"}``. ``name`` is the file as discovered
    (``str(sub.path)``: what results show as the submission, and where the HTML report finds its
    source), ``data`` its bytes; both are None for a student folder without a notebook or ``.py``
    file; ``why``: then, what the folder held instead (``skipped``'s reasons for ``sub.key``).
    The file is read without following a link anywhere below the class folder
    (:func:`autograder.batch.discovery.read_regular`). Raises
    :class:`autograder.batch.discovery.NotRegularFile` when it became a link or a special file after
    discovery, ``OSError`` when it cannot be read."""
    return {"key": sub.key, "student": sub.student, "exercise": sub.exercise,
            "name": str(sub.path) if sub.path else None,
            "data": read_regular(sub.path, sub.root) if sub.path else None,
            "why": [] if sub.path else [f"{Path(k.path).name}: {k.reason}" for k in skipped
                                        if k.key == sub.key]}


def grade_submission(sub: dict, device: str, seed: int, sanitize: bool = True,
                     preflight: bool = True, sandbox: str | None = None) -> dict:
    """Grade one submission on a Dask worker; returns ``ExerciseResult.to_dict()``.

    ``sub``: :func:`read_submission`'s dict. Its bytes are written into a private temporary
    folder of this worker under the file's own name (a notebook stays ``.ipynb``), graded with
    :func:`autograder.grader.grade`, and the folder is removed; the result names the submission
    by ``sub["name"]`` and no message mentions the temporary folder. A student folder without a
    notebook scores 0 with a message (naming what its folder held instead: ``sub["why"]``, the
    reasons its entries were not graded). Never raises for a bad submission (the grader turns those
    into results); raises :class:`autograder.errors.GraderSetupError` when this worker cannot
    grade (its preflight, once per worker process and exercise, unless ``preflight`` is False)."""
    from autograder import exercises
    from autograder.grader import grade
    from autograder.wire.results import ExerciseResult

    if sandbox is not None:  # a worker grades one class: its processes keep to its mode
        os.environ[settings.SANDBOX] = sandbox
    if sub["data"] is None:
        ex = exercises.get(sub["exercise"])
        from autograder.judge.cases import all_tests as _all_tests
        from autograder.wire.results import Status

        result = ExerciseResult(ex.name, sub["key"], device, seed=seed)
        why = "; ".join(sub.get("why") or [])
        result.tests = _all_tests(ex, Status.ERROR,
                                  f"no .ipynb or .py file that can be graded was submitted in "
                                  f"{sub['key']}" + (f" ({why})" if why else ""))
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


def run_batch(root: str | Path, db: str | Path, exercise: str | None = None,
              device: str = "auto", workers: int | None = None, scheduler: str | None = None,
              seed: int | None = None, progress: bool = True, workers_per_gpu: int | None = None,
              sanitize: bool = True,
              seed_per_student: bool | None = None, scheduler_security=None,
              insecure_scheduler: bool = False) -> tuple[ResultStore, list[str]]:
    """Grade every submission under ``root`` not yet in ``db``; returns (the store, the keys
    the grader itself failed on, each ``"key: why"``). Raises ``ValueError`` for a bad folder
    (a mixed layout included), device or ``scheduler``, or a ``seed_per_student`` that differs
    from the rule the batch started with.

    ``progress``: say how far the grading is on standard error (a live display on a terminal,
    a plain line every 30 s elsewhere: :mod:`autograder.batch.progress`).

    ``seed``: the batch's secret seed (first run only). Every submission of one exercise is
    graded with the same seed derived from it (:meth:`ResultStore.exercise_seed`: the class
    faces the same hidden inputs), or, with ``seed_per_student``, one per submission
    (:meth:`ResultStore.submission_seed`); the rule is stored with the seed.

    ``scheduler``: None for a local cluster (:func:`autograder.batch.cluster.local_cluster`: on
    127.0.0.1, over TLS with credentials made for this batch), else a running Dask scheduler's
    address (``tls://host:8786``) or scheduler file (JSON, as written by ``dask scheduler
    --scheduler-file``), reached with ``scheduler_security`` (a ``distributed.Security``; None:
    Dask's configuration) by :func:`autograder.batch.cluster.connect`, which refuses a scheduler
    without TLS (``ValueError``) unless ``insecure_scheduler``. Its workers may be on other
    hosts and need the package, not our files (:func:`read_submission`). With a scheduler,
    ``device="gpu"`` needs no GPU here.

    First, here, the preflight of each exercise to grade (:mod:`autograder.grading.preflight`): if the
    instructor solution loses points, :class:`autograder.errors.GraderSetupError` is raised
    before any work is submitted (skipped for ``gpu`` behind a scheduler when this machine has
    no GPU). Workers check again, once per worker process and exercise, where their setup may
    differ from this process's (a GPU of their own, another machine behind ``scheduler``);
    local simulator workers share this one's and skip it. A worker's ``GraderSetupError``
    stores nothing for that submission, cancels the rest and is raised after the cluster is
    closed (the results stored before it stay; a rerun resumes); so is a scheduler that
    cannot be reached. A file that cannot be read here is a failure (not stored, retried by a
    rerun).

    Everything under ``root`` that is not graded (:func:`autograder.batch.discovery.discover`'s
    :class:`~autograder.batch.discovery.Skipped` entries, and files that became a link or a special
    file between discovery and reading) replaces the store's list of them
    (:meth:`ResultStore.replace_skipped`) before any grading starts: a resume shows the folder
    as it is now.

    The class is graded in the sandbox, or plain only under ``KERNELGRADE_SANDBOX=off``
    (:func:`autograder.sandbox.mode.for_class`, checked first: without bubblewrap, a
    :class:`autograder.sandbox.mode.SandboxUnavailable` before anything is read or stored)."""
    with sandbox_mode.chosen(sandbox_mode.for_class()) as sandbox:
        return _run_batch(root, db, exercise, device, workers, scheduler, seed, progress,
                          workers_per_gpu, sanitize, seed_per_student, scheduler_security,
                          insecure_scheduler, sandbox)


def _run_batch(root, db, exercise, device, workers, scheduler, seed, progress, workers_per_gpu,
               sanitize, seed_per_student, scheduler_security, insecure_scheduler,
               sandbox: str) -> tuple[ResultStore, list[str]]:
    """:func:`run_batch`, in the class's sandbox mode ``sandbox``."""
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
            pending.append((s, read_submission(s, skipped)))
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
    client = (connect(scheduler, scheduler_security, insecure_scheduler) if scheduler
              else None)  # an unreachable one fails first
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
                                worker_preflight, sandbox, key=f"grade-{s.key}-{batch_id}",
                                pure=False)
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


def _collect(futures: dict, completed, store: ResultStore, failures: list[str],
             progress: bool) -> GraderSetupError | None:
    """Store each result as it arrives; a worker's ``GraderSetupError`` stores nothing, cancels
    what is left and is returned. With ``progress``, says how far it is on standard error
    (:func:`autograder.batch.progress.for_stream`: a live display on a terminal, plain lines
    elsewhere)."""
    from . import progress as shown

    display = (shown.for_stream(len(futures), sys.stderr) if progress
               else shown.NoProgress())
    with display:
        for fut in completed:
            sub: Submission = futures[fut]
            failed = False
            try:
                store.save(sub.key, sub.student, fut.result())
            except GraderSetupError as exc:  # that worker's setup: no grade can be trusted
                for other in futures:
                    other.cancel()
                return exc
            except Exception as exc:  # the grader itself failed: not stored, retried next run
                failures.append(f"{sub.key}: {type(exc).__name__}: {exc}")
                failed = True
            display.advance(failed)
