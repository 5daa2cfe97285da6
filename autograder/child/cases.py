"""In the child: compile the kernel to PTX, launch it on each case's guarded buffers, call a
function exercise's functions, run the instrumented launch; each result goes to the grader as
a record (:mod:`autograder.wire.protocol`) and is judged there, never here."""

from __future__ import annotations

from autograder.wire import buffers
from autograder.wire.contract import Contract
from autograder.wire.protocol import CaseRequest, CaseResult, Start
from autograder.wire.shapes import evaluate as launch_shape
from .channel import send, send_error
from .contract import defined

STICKY = ("ILLEGAL_ADDRESS", "LAUNCH_FAILED", "UNKNOWN", "MISALIGNED", "ILLEGAL_INSTRUCTION",
          "HARDWARE_STACK", "ASSERT")


def compile_ptx(kernel, contract: Contract, backend: str) -> str:
    """Compile the kernel's Python function to PTX (no GPU needed; lineinfo on). Raises Numba's
    typing/lowering errors for code a GPU would reject. The grader reads the PTX."""
    from numba import cuda, types as nbtypes

    sig = tuple(eval(s, {"__builtins__": {}}, vars(nbtypes)) for s in contract.signature)
    cc = cuda.get_current_device().compute_capability if backend == "gpu" else (9, 0)
    ptx, _ = cuda.compile_ptx(kernel.py_func, sig, cc=cc, lineinfo=True,
                              device=contract.device_function)
    return ptx


def compile_for_cases(kernel, contract: Contract, consts: dict, cases: list):
    """Compile ``kernel`` for the argument types its cases' launches will have (C-contiguous
    device arrays of each input's and output's dtype and rank) before the first launch, which
    then finds it compiled: the JIT (CPU work) stays outside the grading's hold of the GPU and
    outside every case's time limit. An exercise with a driver (which launches its own kernels
    around the student's device function) has its driver's ``prepare(function, consts)`` do it
    (:func:`prepare_driver`). Kernels with a scalar argument, and device functions without a
    driver, compile at their first launch as before; a kernel that fails to compile is left to
    fail there, in its case, with the same message. Returns the first case's argument types (a
    tuple of Numba types) once compiled for them, else None (always for a driver)."""
    import numpy as np
    from numba import from_dtype, types

    if contract.driver and kernel is not None:
        prepare_driver(kernel, contract, consts)
    if contract.driver or contract.device_function or kernel is None:
        return None
    compiled: list = []
    for case in cases:
        shapes = {n: (a.dtype, a.ndim) for n, a in case.inputs.items()}
        shapes.update({n: (np.dtype(dtype), len(launch_shape(shape, case.params, consts)))
                       for n, (shape, dtype) in case.outputs.items()})
        if any(a not in shapes for a in contract.args):
            break
        sig = tuple(types.Array(from_dtype(shapes[a][0]), shapes[a][1], "C")
                    for a in contract.args)
        if sig in compiled:
            continue
        try:
            kernel.compile(sig)
        except Exception:  # noqa: BLE001 - the case's launch reports it
            break
        compiled.append(sig)
    return compiled[0] if compiled else None


def prepare_driver(function, contract: Contract, consts: dict) -> None:
    """Call ``prepare(function, consts)`` of the exercise's driver module
    (``contract.driver``), when it has one: it compiles the driver's kernels for the
    student's ``function`` before the cases start. Whatever it raises is dropped: the first
    case's launch compiles again and reports the failure in that case, with its own message.
    Raises ``ImportError`` for a driver module that is not installed (the grader's setup)."""
    from autograder.exercises.package import import_driver

    prepare = getattr(import_driver(contract.driver, contract.driver_root), "prepare", None)
    if prepare is None:
        return
    try:  # the student's code may run while compiling (typing), SystemExit included
        prepare(function, consts)
    except BaseException:  # noqa: BLE001 - the first case's launch reports it
        pass


def case_views(cuda, consts: dict, case: CaseRequest, zeroed=()):
    """Guarded device buffers (:mod:`autograder.wire.buffers`) for one case's inputs and outputs,
    and the views the kernel gets: (buffers by name, views by name). The outputs named in
    ``zeroed`` (the contract's) start at zero, the others poisoned."""
    host, sizes = {}, {}
    for name, arr in case.inputs.items():
        host[name] = buffers.guarded_input(arr)
        sizes[name] = arr.shape
    for name, (shape, dtype) in case.outputs.items():
        sizes[name] = launch_shape(shape, case.params, consts)
        host[name] = buffers.guarded_output(sizes[name], dtype, name in zeroed)
    dbufs, views = {}, {}
    for name, (buf, margin) in host.items():
        d = cuda.to_device(buf)
        dbufs[name] = d
        views[name] = buffers.inner(d, margin, sizes[name])
    return dbufs, views


def run_case(cuda, kernel, contract: Contract, consts: dict, case: CaseRequest, driver) -> dict:
    """Launch ``kernel`` on ``case`` (through the exercise's ``driver`` module, if any); the
    whole guarded output buffers, copied to the host, by name."""
    dbufs, views = case_views(cuda, consts, case, contract.zeroed)
    if driver is not None:
        driver.drive(kernel, views, case.params, consts)
    else:
        args = [views[a] for a in contract.args]
        grid = launch_shape(contract.grid, case.params, consts)
        block = launch_shape(contract.block, case.params, consts)
        kernel[grid, block](*args)
    cuda.synchronize()
    return {name: dbufs[name].copy_to_host() for name in case.outputs}


def is_sticky(exc: BaseException) -> bool:
    """A CUDA error after which the context is unusable (illegal address, launch failure)."""
    text = f"{type(exc).__name__} {exc}"
    return any(s in text for s in STICKY)


def run_cases(cuda, kernel, contract: Contract, consts: dict, cases: list, driver,
              path: str) -> bool:
    """Each case: a ``start`` record, then ``case`` (outputs) or ``error`` (phase ``run``).
    False when an error left the GPU context unusable (no further case can run)."""
    for case in cases:
        send(Start(case.id))
        try:
            outs = run_case(cuda, kernel, contract, consts, case, driver)
        except BaseException as exc:
            send_error("run", exc, path, id=case.id, fatal=is_sticky(exc))
            if is_sticky(exc):
                return False
            continue
        send(CaseResult(case.id, outs))
    return True


def run_calls(module, cases: list, path: str) -> None:
    """Cases of a function exercise: call ``params["call"](**params["args"])``, send the value
    (the grader knows what it should be; the child never does)."""
    for case in cases:
        send(Start(case.id))
        params = case.params
        try:
            value = defined(module, params["call"])(**params["args"])
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"{params['call']} must return a number, "
                                f"got {type(value).__name__} {value!r:.60}")
        except BaseException as exc:
            send_error("run", exc, path, id=case.id, fatal=False)
            continue
        send(CaseResult(case.id, value=value))


def run_instrumented(cuda, kernel, contract: Contract, consts: dict, case: CaseRequest) -> dict:
    """An instrumented simulator launch of one small case (:mod:`autograder.instrument`): races,
    divergent barriers, out-of-bounds accesses, bank conflicts, divergent branches, global
    loads; the report's ``params`` names the case's size. Its outputs are never graded."""
    from ..instrument import instrumented_launch

    _, views = case_views(cuda, consts, case, contract.zeroed)
    grid = launch_shape(contract.grid, case.params, consts)
    block = launch_shape(contract.block, case.params, consts)
    report = instrumented_launch(kernel, grid, block, [views[a] for a in contract.args],
                                 max_blocks=case.max_blocks)
    report["constants"] = dict(consts)   # what the grader's concept bounds are computed at
    report["params"] = dict(case.params)   # which size: findings are merged by the grader
    return report
