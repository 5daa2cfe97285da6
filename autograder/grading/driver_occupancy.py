"""The CUDA driver's occupancy calculator, asked by a process the grader trusts: the expected
values of the ``occupancy`` exercise's GPU cases (``params["against_driver"]``).

A grading child calls the student's plain Python functions, so whatever that process holds is
theirs once their first function runs (its frames, ``gc.get_objects()``, module globals): an
expected value computed there could be read and returned. So the grader asks the driver in
``python -m autograder.grading.driver_occupancy THREADS...`` (:func:`main`), which runs no student
code, on the GPU a child of this process would get (:func:`autograder.sandbox.limits.child_env`): this
GPU's per-SM limits and, for each block size, the resident blocks per SM the driver's
calculator gives for a small kernel (few registers, no shared memory). :func:`fill` puts the
limits into those cases' arguments and keeps the answers in the grader as the cases' expected
values: the child gets the arguments only, and sends back what the student's function returned.

The answers are kept for the process and on disk (``driver_answers/`` in
:func:`autograder.host.cache_folder.cache_dir`, one JSON file per key), like the preflight's:
the key is :func:`autograder.grading.preflight.fingerprint`'s (the GPUs, the driver, the packages,
kernelgrade's code, the environment the children inherit) with the block sizes. A query that
fails is the grader's setup (:class:`~autograder.errors.GraderSetupError`), never the student's.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import subprocess
import sys
import threading
from dataclasses import dataclass, replace
from pathlib import Path

from autograder.host import gpulock
from autograder.errors import GraderSetupError

#: Seconds the query may take (importing Numba, a CUDA context and one small kernel: about 2 s).
QUERY_TIMEOUT_S = 120.0
#: The exercise's argument names for the GPU's limits, and the driver attributes they come from.
LIMITS = {"max_threads_per_sm": "MAX_THREADS_PER_MULTIPROCESSOR",
          "max_blocks_per_sm": "MAX_BLOCKS_PER_MULTIPROCESSOR",
          "shared_bytes_per_sm": "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR"}
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Answers:
    """What the driver said on one GPU: its ``device`` name, its ``limits`` (the keys of
    :data:`LIMITS`: threads, blocks and bytes of shared memory per SM) and ``blocks``, the
    resident blocks per SM of the small kernel by threads per block."""

    device: str
    limits: dict
    blocks: dict

    @classmethod
    def from_json(cls, data, threads) -> "Answers":
        """The query's JSON for block sizes ``threads``; raises ``ValueError`` for one that
        lacks a limit or an answer, or holds anything but non-negative ints there."""
        def count(value) -> int:
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"not a count: {value!r}")
            return value

        if not isinstance(data, dict):
            raise ValueError("not an object")
        limits = {k: count(data["limits"][k]) for k in LIMITS}
        blocks = {int(t): count(data["blocks"][str(int(t))]) for t in threads}
        return cls(str(data.get("device", "")), limits, blocks)

    def to_json(self) -> dict:
        return {"device": self.device, "limits": dict(self.limits),
                "blocks": {str(t): n for t, n in self.blocks.items()}}


# ---------------------------------------------------------------------------------------------
# In the grader


def fill(exercise, cases: list, backend: str) -> list:
    """``cases`` (:class:`autograder.grading.plan.PlannedCase`) with each case of ``exercise`` that is
    compared with the driver (``params["against_driver"]``) and runs on ``backend`` (on the
    simulator: only a ``sim`` one, which no built-in exercise has) made anew: the GPU's limits
    added to its ``params["args"]``, and the driver's answer kept as its expected value (what
    ``c.expected(...)`` returns for those params). Other cases are returned as they are. Raises
    :class:`GraderSetupError` when the driver cannot be asked."""
    from autograder.grading.plan import PlannedCase

    driven = {c.id for c in cases if c.spec.params.get("against_driver")
              and (backend == "gpu" or c.spec.sim)}
    if not driven:
        return cases
    threads = sorted({int(c.spec.params["args"]["threads_per_block"]) for c in cases
                      if c.id in driven})
    got = answers(exercise.name, threads)
    made = []
    for c in cases:
        if c.id not in driven:
            made.append(c)
            continue
        params = {**c.spec.params, "args": {**c.spec.params["args"], **got.limits}}
        new = PlannedCase(c.id, replace(c.spec, params=params), c.inputs, c.outputs)
        blocks = got.blocks[int(params["args"]["threads_per_block"])]
        new.expected(lambda inputs, p, n=blocks: {"value": n}, params)
        made.append(new)
    return made


_memo: dict[tuple, Answers] = {}
_memo_lock = threading.Lock()


def answers(exercise: str, threads: list[int]) -> Answers:
    """The driver's :class:`Answers` for ``threads`` per block on the GPU this process's
    children get: remembered for the process, else read from the disk cache, else asked
    (:func:`ask`) and stored there. Raises :class:`GraderSetupError` when asking fails."""
    from autograder.sandbox.limits import child_env

    env = child_env("gpu")
    memo_key = (env.get("CUDA_VISIBLE_DEVICES"), tuple(threads))
    with _memo_lock:
        if memo_key in _memo:
            return _memo[memo_key]
        path = _cache_path(exercise, threads)
        found = _read(path, threads)
        if found is None:
            found = ask(threads, env)
            _write(path, found)
        _memo[memo_key] = found
        return found


def ask(threads: list[int], env: dict) -> Answers:
    """Run ``python -m autograder.grading.driver_occupancy THREADS...`` with the children's environment
    ``env`` (:func:`autograder.sandbox.limits.child_env`), not sandboxed: it runs no student code.
    Raises :class:`GraderSetupError` with the reason when it fails or answers nonsense."""
    cmd = [sys.executable, "-P", "-m", __name__, *(str(t) for t in threads)]
    try:
        with gpulock.gpu(exclusive=False):  # a CUDA context of its own: GPU work
            out = subprocess.run(cmd, env=env, capture_output=True, text=True,
                                 timeout=QUERY_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GraderSetupError(f"the CUDA driver's occupancy calculator: {exc}") from None
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or [f"exit status {out.returncode}"])[-1]
        raise GraderSetupError(f"the CUDA driver's occupancy calculator could not be asked: "
                               f"{last[:300]}")
    try:
        return Answers.from_json(json.loads(out.stdout.strip().splitlines()[-1]), threads)
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        raise GraderSetupError("the CUDA driver's occupancy calculator gave no usable answer "
                               f"({exc}): {out.stdout.strip()[-200:]!r}") from None


def _cache_path(exercise: str, threads: list[int]) -> Path | None:
    """The disk cache's file for these answers, or None (no cache, or no key can be made)."""
    from autograder.host.cache_folder import cache_dir
    from autograder.grading.preflight_key import fingerprint

    root = cache_dir()
    if root is None:
        return None
    try:
        made = fingerprint(exercise, "gpu", False)
    except OSError as exc:
        log.info("occupancy answers not cached: %s", exc)
        return None
    if made is None:
        return None
    key = hashlib.sha256(f"{made[0]} {sorted(threads)}".encode()).hexdigest()
    return root / "driver_answers" / f"{key}.json"


def _read(path: Path | None, threads: list[int]) -> Answers | None:
    """The cached answers at ``path``; None when there are none or they cannot be used."""
    if path is None:
        return None
    try:
        return Answers.from_json(json.loads(path.read_text(encoding="utf-8")), threads)
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None


def _write(path: Path | None, found: Answers) -> None:
    """Store ``found`` at ``path`` atomically; a folder that cannot be written is no error."""
    if path is None:
        return
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp.write_text(json.dumps(found.to_json()), encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        log.info("occupancy answers: cannot write %s (%s)", path, exc)
        tmp.unlink(missing_ok=True)


# ---------------------------------------------------------------------------------------------
# In the trusted process


def query(threads: list[int]) -> Answers:
    """This GPU's limits and the driver's resident blocks per SM of :func:`_small_kernel` at
    each of ``threads`` per block (device 0 of ``CUDA_VISIBLE_DEVICES``)."""
    from numba import cuda

    dev = cuda.get_current_device()
    name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
    limits = {key: int(getattr(dev, attr)) for key, attr in LIMITS.items()}
    function = _small_kernel()._codelibrary.get_cufunc()
    context = cuda.current_context()
    blocks = {int(t): int(context.get_active_blocks_per_multiprocessor(function, int(t), 0))
              for t in threads}
    return Answers(name, limits, blocks)


@functools.cache
def _small_kernel():
    """A small kernel (one int32 array argument), compiled once, kept so that its module stays
    loaded."""
    import numpy as np
    from numba import cuda, typeof

    @cuda.jit
    def small(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = i

    return small.compile((typeof(cuda.device_array(1, np.int32)),))


def main(argv: list[str]) -> int:
    """``python -m autograder.grading.driver_occupancy THREADS...``: prints :class:`Answers` as one line
    of JSON. Exit status 0, or 1 with the reason on standard error."""
    try:
        threads = [int(t) for t in argv]
    except ValueError:
        threads = []
    if not threads or any(t <= 0 for t in threads):
        print("usage: python -m autograder.grading.driver_occupancy THREADS_PER_BLOCK...",
              file=sys.stderr)
        return 1
    try:
        found = query(threads)
    except Exception as exc:  # noqa: BLE001 - the grader reports it as its setup's fault
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(found.to_json()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
