"""The grader's own host arithmetic (float64 references, comparisons) uses one BLAS thread.

OpenBLAS's thread pool and ``fork()`` do not mix. The grader starts every child with a
``preexec_fn`` (its resource limits, :func:`autograder.sandbox.limits.limiter`), so
``subprocess`` forks, and it grades in several threads at once (``autograder solutions --jobs``, ``batch`` workers, a
grading's children side by side). While some threads fork, BLAS calls in
the others stall: on the project's 2-core machine, four threads doing 1000×300×999 float64
matrix products finished none in 40 s beside four threads starting children, and 880 with one
BLAS thread (``tests/test_host_blas.py``). On an H100 host (16 cores) ``autograder solutions
--device gpu`` stopped for minutes with every grading thread inside ``matmul_reference``.
The references are small (the largest correctness case is a few MFLOP), so one thread costs
nothing measurable.

Every child process gets one BLAS thread from its environment (:data:`ONE_THREAD_ENV`, set by
:func:`autograder.sandbox.limits.child_env` and, for its own process, by the command line): OpenBLAS starts a
thread per core when NumPy is imported, and those threads spin before they sleep. On a 16-core
H100 host ``python -c "import numpy"`` used 2.15 s of CPU time in 0.35 s of wall time, and
0.24 s with ``OPENBLAS_NUM_THREADS=1`` (2026-11-23): about 2 s of CPU per child, 6 per grading,
which a class on a shared host pays on every submission. Children run no BLAS worth a thread.
"""

from __future__ import annotations

import functools
import os

#: Environment variables that give OpenBLAS, OpenMP and MKL one thread (read when they load).
ONE_THREAD_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def one_thread_at_load() -> None:
    """Set :data:`ONE_THREAD_ENV` in this process's environment where it is not set, so that a
    BLAS loaded later (NumPy's import) starts no thread pool. The command line's first step."""
    for key, value in ONE_THREAD_ENV.items():
        os.environ.setdefault(key, value)


@functools.cache
def single_threaded_blas() -> None:
    """Limit this process's BLAS libraries (OpenBLAS, MKL, BLIS) to one thread, once, for the
    rest of the process (through ``threadpoolctl``). Idempotent."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")
