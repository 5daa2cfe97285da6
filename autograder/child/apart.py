"""In the child: every launch in a process of its own, so that no case reads what another left.

On the simulator a kernel's body runs as Python: a module-level array, a mutated default or an
attribute set on an imported module would carry one case's inputs into the next launch (issue
30: a hidden case's inputs, kept that way, reached a later case's message). A child that runs
student Python during its cases (the simulator's children; a function exercise's, on either
backend) therefore forks one process per launch (:func:`run_apart`): each graded case, then each
instrumented run, in order, one at a time. Every process is forked from the child before any of
the submission's definitions exist in it, builds them itself
(:func:`autograder.child.contract.import_submission`), runs its one launch, sends its records on
the channel the child inherited and exits; whatever the launch left in memory ends with it. An
instrumented run is a launch of its own too: a kernel cannot tell it from a graded one by what an
earlier launch left behind.

Costs (measured on the 2-core development VM, Numba imported): about 11 ms of CPU time per
fork and 4-7 ms to build the definitions again, against 0.1-1 s for a simulated launch.

The process's exit status is the only thing the child reads back: :data:`STOP` when the
submission did not build (its ``error`` record was sent; no launch follows), 0 when the launch
ran to its end. Any other ending (a signal, a crash) makes the child send an ``error`` record of
its own for that launch, in the grader's words, and go on with the next.
"""

from __future__ import annotations

import os
import signal
import sys
import warnings

from autograder.wire.protocol import Error, Request

from .channel import send

#: Exit status of a forked process whose submission did not build: nothing more runs.
STOP = 3


def wanted(req: Request) -> bool:
    """Whether ``req``'s child runs each launch apart: it runs cases or instrumented launches
    and student Python runs during them (the simulator, or a function exercise)."""
    if not ({"run", "instrument"} & set(req.phases)):
        return False
    return req.backend == "sim" or bool(req.contract.functions)


def launches(req: Request) -> list[tuple[str, object]]:
    """The launches of ``req``, in order, as (kind, case): ``("run", case)`` for each graded
    case, then ``("instrument", case)`` for each instrumented run (the simulator's only); a
    single ``(None, None)`` (build and check the definitions only) when there is none."""
    jobs: list[tuple[str, object]] = []
    if "run" in req.phases:
        jobs += [("run", c) for c in req.cases]
    if "instrument" in req.phases and req.backend == "sim":
        jobs += [("instrument", c) for c in ([req.diagnose] if req.diagnose else [])
                 + list(req.diagnose_more)]
    return jobs or [(None, None)]


def forked(job) -> tuple[int, str]:
    """Run ``job()`` (returns an exit status) in a forked process and wait for it: (its exit
    status, or -1 for a signal; how it ended, in words). Standard output and error are flushed
    on both sides of the fork, so nothing printed is lost or printed twice."""
    _flush()
    with warnings.catch_warnings():  # Python 3.12 warns of fork() beside a driver's threads
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the forked process, which never returns
        code = 1
        try:
            code = int(job() or 0)
        except BaseException:  # noqa: BLE001 - the launch sent its own error, or none
            code = 1
        finally:
            _flush()
            os._exit(code)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return -1, f"it was killed by signal {name}"
    code = os.WEXITSTATUS(status)
    return code, f"it ended with exit code {code}"


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001 - a closed or replaced stream
            pass


def run_apart(req: Request, launch) -> bool:
    """Each launch of ``req`` (:func:`launches`) in a forked process of its own, in order:
    ``launch(kind, case, first)`` runs in it, builds the submission's definitions (sending
    ``imported`` when ``first``, its ``error`` and :data:`STOP` when they do not build) and
    returns an exit status. A process that ends otherwise than with 0 or :data:`STOP` costs
    its launch only: an ``error`` record says so (phase ``run`` with the case's id, or
    ``instrument``) and the next launch runs. Returns False when the definitions did not build
    (no ``done`` follows), else True."""
    for n, (kind, case) in enumerate(launches(req)):
        code, how = forked(lambda: launch(kind, case, n == 0))
        if code == STOP and n == 0:
            return False
        if code in (0, STOP) or kind is None:
            continue
        if kind == "run":
            send(Error("run", f"the process that ran this case ended before it returned "
                       f"({how}; over the memory limit?)", id=case.id))
        else:
            send(Error("instrument", f"the instrumented run ended before its report ({how})"))
    return True
