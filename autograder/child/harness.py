"""What runs inside the child process: run the submission's definitions, resolve the contract's
names, launch its kernel on the grader's inputs, time it against the instructor's, and send raw
outputs back over the private channel as typed records (:mod:`autograder.wire.protocol`). It judges
nothing: comparison happens in the grader's process.

Only the submission's imports, constant assignments and function definitions run
(:mod:`autograder.source.definitions`), from the source text in the request: no top-level statement of
the student's can patch Numba, NumPy or this module, start threads, or write on the channel.

Run as ``python -m autograder.child.harness CHANNEL_FD`` (:func:`autograder.sandbox.run.run_child`); the
request (:class:`autograder.wire.protocol.Request`, pickled by the grader as its ``to_dict()``) comes
on standard input and is read in full before any student code runs. The order of :func:`main`
is the anti-cheat order:

1. read the whole request; keep a duplicate of standard input only for a child that waits for
   the grader's go bytes (``await_go``: a GPU child says ``ready`` before its first GPU work and
   waits until the grader holds the GPU lock for it), then point standard input at
   ``/dev/null``;
2. choose the backend (``NUMBA_ENABLE_CUDASIM``, read when Numba is imported): no module of the
   child imports Numba before this (:mod:`autograder.child.contract`, :mod:`~.child_cases`,
   :mod:`~.child_device` and :mod:`~.child_timing` import it inside functions only);
3. before Numba and any student code, check that it imports the grader's own numpy, numba,
   numba-cuda and llvmlite (versions and folders, :func:`~.child_device.package_problem`); if
   not, its only record is an ``error`` of phase ``environment`` (the grader's setup, not the
   student's kernel);
4. import Numba (on a GPU, with the CUDA driver initialised in a thread meanwhile,
   :func:`~.child_device.start_driver_early`, except under compute-sanitizer); send ``device``
   (GPU) and ``hello`` (its ``packages``), both before any student code exists (a child that
   dies before them is the grader's setup at fault);
5. off the GPU, make the process undumpable (a sibling child cannot read its memory);
6. where student Python runs during the cases (the simulator; a function exercise), each
   launch in a process of its own (:mod:`autograder.child.apart`), forked here before the
   submission's definitions exist: it does 7 and 8 for its one graded case or instrumented
   run, so no case reads what another left; then ``done``. Else:
7. run the submission's definitions, resolve the contract (``imported`` or an ``error``);
8. compile, run the cases and the timing, as the request's phases ask; then ``done``.
"""

from __future__ import annotations

import os
import pickle
import sys

from . import apart
from .cases import (compile_for_cases, compile_ptx, run_calls, run_cases,
                          run_instrumented)
from autograder.simulator.adapter import SIM_SWITCH_INTERVAL, prepare_simulator
from .channel import open_channel, send, send_error
from .contract import ContractError, import_submission, resolve
from .device import (device_facts, device_record, kernel_facts,  # noqa: F401 (re-exported)
                           kernel_record, not_dumpable, package_problem, start_driver_early)
from .timing import (import_solution, measure_timing,  # noqa: F401 (re-exported)
                           prepare_timing, warm_up)
from autograder.source.definitions import bindings
from autograder.host.environment import package_facts
from autograder.wire.contract import Contract
from autograder.wire.protocol import Compiled, Done, Error, Hello, Imported, Instrumented, Ready, Request, Start, TimingSamples

PTX_LIMIT = 4 << 20
SIM_THREAD_STACK = 1 << 20

__all__ = ["main", "SIM_SWITCH_INTERVAL", "send", "import_submission", "resolve",
           "prepare_timing", "measure_timing", "import_solution", "device_facts", "kernel_facts"]


def _choose_backend(backend: str) -> None:
    if backend == "sim":
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
        # The simulator runs one thread per CUDA thread; at glibc's default 8 MiB stacks a
        # 1024-thread block reserves 8 GiB, which the sandbox's memory limit (RLIMIT_DATA)
        # counts. Kernel bodies need little stack.
        import threading

        threading.stack_size(SIM_THREAD_STACK)
    else:
        os.environ.pop("NUMBA_ENABLE_CUDASIM", None)


def _import_numba(driver_started=None):
    """``numba.cuda``; ``driver_started``: the thread of
    :func:`~.child_device.start_driver_early`, joined once Numba's core is imported."""
    import warnings

    # Numba's own warnings (low occupancy at small test sizes) are not the student's output.
    os.environ["NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS"] = "0"
    warnings.filterwarnings("ignore", message=".*under-utilization.*")
    import importlib

    importlib.import_module("numba")  # the core first: numba.cuda loads the driver's bindings
    if driver_started is not None:
        driver_started.join()
    from numba import cuda

    return cuda


def main(argv: list[str]) -> int:
    """The child: ``argv[0]`` is the channel's file descriptor. Returns the exit status (0)."""
    open_channel(int(argv[0]))
    request = pickle.load(sys.stdin.buffer)
    req = Request.from_dict(request)
    # A GPU child waits for the grader's go (one byte on the old standard input) before its
    # first GPU work: the grader holds the GPU lock for it then (shared for cases, exclusive for
    # a measurement).
    go_fd = os.dup(0) if req.await_go else None
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    backend, path, contract = req.backend, req.source_path, req.contract
    _choose_backend(backend)
    # Before numba and any student code: the same numpy, numba, numba-cuda and llvmlite as the
    # grader, or the grader's setup is at fault (a GraderSetupError there), not the kernel.
    problem = package_problem()
    if problem:
        send(Error("environment", problem))
        return 0
    # On a GPU, the driver starts beside Numba's import (no student code exists yet); not
    # under compute-sanitizer (``lineinfo``: the sanitizer runs), which watches every call.
    cuda = _import_numba(start_driver_early() if backend == "gpu" and not req.lineinfo
                         else None)
    if backend == "gpu":
        send(device_record(cuda.get_current_device()))
    send(Hello(os.getpid(), package_facts()))
    if backend != "gpu":
        not_dumpable()
    if backend == "sim":  # before the import: `from numba.cuda import grid` is one
        prepare_simulator()
    if apart.wanted(req):  # student Python runs in the cases: a process per launch
        if apart.run_apart(req, lambda kind, case, first: _launch_apart(cuda, req, kind, case,
                                                                        first)):
            send(Done())
        return 0
    built = _build(req, announce=True)
    if built is None:
        return 0
    module, kernel, consts = built
    if req.lineinfo and backend == "gpu" and kernel is not None:
        kernel.targetoptions["lineinfo"] = True  # sanitizer findings name the student's lines
    if not _run_phases(cuda, req, module, kernel, consts, go_fd):
        return 0
    send(Done())
    return 0


def _build(req: Request, announce: bool):
    """The submission's module, built from its definitions, and the contract's names resolved:
    (module, kernel, constants), having sent ``imported`` when ``announce``; None when they do
    not build, having sent the ``error`` (phase ``import`` or ``contract``) when ``announce``."""
    backend, path, contract = req.backend, req.source_path, req.contract
    try:
        # The compile child has no GPU: a kernel given a signature must not compile eagerly.
        module = import_submission(path, req.source_text, lazy=backend == "compile",
                                   live=contract.names)
    except BaseException as exc:  # SystemExit and KeyboardInterrupt included
        if announce:
            send_error("import", exc, path)
        return None
    skipped = [[s.lineno, s.reason] for s in module.__dict__["__kernelgrade_skipped__"][:50]]
    try:
        kernel, consts = resolve(module, contract, path, backend)
    except ContractError as exc:
        if announce:
            send(Error("contract", str(exc), skipped=skipped))
        return None
    except BaseException as exc:
        if announce:
            send_error("contract", exc, path, skipped=skipped)
        return None
    if announce:
        send(Imported(consts, skipped, bindings(module.__dict__, path)))
    return module, kernel, consts


def _launch_apart(cuda, req: Request, kind, case, first: bool) -> int:
    """One launch of :func:`autograder.child.apart.run_apart`, in its own process: build the
    definitions (``imported`` sent by the ``first`` only), then run ``case`` (``kind``
    ``"run"``: its ``start`` and ``case`` or ``error`` records) or its instrumented launch
    (``"instrument"``); ``kind`` None builds only. Returns the process's exit status
    (:data:`autograder.child.apart.STOP` when the definitions did not build)."""
    built = _build(req, announce=first)
    if built is None:
        if not first and kind == "run":  # built once, not now: this case alone is lost
            send(Error("run", "your code could not be built again for this case", id=case.id,
                       finding=True))
        return apart.STOP
    module, kernel, consts = built
    path, contract = req.source_path, req.contract
    if kind == "run" and contract.functions:
        run_calls(module, [case], path)
    elif kind == "run":
        driver = None
        if contract.driver:
            from autograder.exercises.package import import_driver
            driver = import_driver(contract.driver, contract.driver_root)
        run_cases(cuda, kernel, contract, consts, [case], driver, path)
    elif kind == "instrument" and kernel is not None:
        send(Start("instrument"))
        try:
            send(Instrumented(run_instrumented(cuda, kernel, contract, consts, case)))
        except BaseException as exc:
            send_error("instrument", exc, path)
    return 0


def _ptx(kernel, contract: Contract, backend: str, launched_as) -> str:
    """The kernel's PTX: that of the compilation its launches will use when there is one (a
    GPU child compiles once), else compiled apart for the contract's signature."""
    if launched_as is not None:
        try:
            return kernel.inspect_asm(launched_as)
        except Exception:  # noqa: BLE001 - compiled apart below, with its own errors
            pass
    return compile_ptx(kernel, contract, backend)


def _granted(go_fd) -> bool:
    """Say ``ready`` and wait for the grader's go byte (:mod:`autograder.grading.children`): before the
    cases (the grader then holds the GPU shared for this child), after them when the child also
    times (the grader's verdict: go only when every case passed) and before the timing's first
    GPU work (the grader then holds the GPU alone). True at once for a child that waits for
    nothing (no ``await_go``); False when the grader said no."""
    if go_fd is None:
        return True
    send(Ready())
    return os.read(go_fd, 1) == b"g"


def _run_phases(cuda, req: Request, module, kernel, consts: dict, go_fd) -> bool:
    """The request's phases, in order, for a child whose cases run no student Python (a GPU's
    kernels, the compile check): compile, run, time. False when the child must stop without
    ``done`` (the GPU context is lost, or no go for the timing's GPU work)."""
    backend, path, contract, phases = req.backend, req.source_path, req.contract, req.phases
    launched_as = None  # the argument types the cases' launches will have, compiled for
    if backend == "gpu" and "run" in phases and kernel is not None:
        if "compile" in phases:  # the PTX the grader reads names the student's lines
            kernel.targetoptions["lineinfo"] = True
        launched_as = compile_for_cases(kernel, contract, consts, req.cases)
    if "compile" in phases and kernel is not None:
        try:
            send(Compiled(_ptx(kernel, contract, backend, launched_as)[:PTX_LIMIT]))
        except BaseException as exc:
            send_error("compile", exc, path)

    driver = None
    if contract.driver:
        from autograder.exercises.package import import_driver
        driver = import_driver(contract.driver, contract.driver_root)

    if "run" in phases:  # a function exercise's, and the simulator's, run apart (apart.py)
        if backend == "gpu" and not _granted(go_fd):  # the GPU, shared with others' cases
            return False
        if not run_cases(cuda, kernel, contract, consts, req.cases, driver, path):
            return False
        if backend == "gpu" and kernel is not None and not contract.device_function:
            try:  # registers and shared memory of what ran: the occupancy hints
                facts = kernel_record(kernel)
                if facts:
                    send(facts)
            except Exception:  # noqa: BLE001 - a fact for hints, never a failed grading
                pass

    if "time" in phases and req.timing:
        if "run" in phases and not _granted(go_fd):  # the verdict: every case passed?
            return True  # no timing for this kernel; the cases are complete
        send(Start("timing"))
        try:
            prepared = prepare_timing(cuda, kernel, contract, consts, req.timing)
            if not _granted(go_fd):  # the GPU alone
                return False
            warm_up(cuda, kernel, prepared)
            send(TimingSamples(**measure_timing(cuda, kernel, prepared)))
        except BaseException as exc:
            send_error("timing", exc, path)
    return True


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
