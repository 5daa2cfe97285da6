"""The grader's own host arithmetic (float64 references, comparisons) uses one BLAS thread.

OpenBLAS's thread pool and ``fork()`` do not mix. The grader starts every child with a
``preexec_fn`` (its resource limits, :mod:`autograder.sandbox`), so ``subprocess`` forks, and it
grades in several threads at once (``autograder solutions --jobs``, ``batch`` workers, a
grading's correctness and timing children side by side). While some threads fork, BLAS calls in
the others stall: on the project's 2-core machine, four threads doing 1000×300×999 float64
matrix products finished none in 40 s beside four threads starting children, and 880 with one
BLAS thread (``tests/test_host_blas.py``). On an H100 host (16 cores) ``autograder solutions
--device gpu`` stopped for minutes with every grading thread inside ``matmul_reference``.
The references are small (the largest correctness case is a few MFLOP), so one thread costs
nothing measurable.
"""

from __future__ import annotations

import functools


@functools.cache
def single_threaded_blas() -> None:
    """Limit this process's BLAS libraries (OpenBLAS, MKL, BLIS) to one thread, once, for the
    rest of the process (through ``threadpoolctl``). Idempotent."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")
