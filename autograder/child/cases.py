"""In the child: compile the kernel to PTX, launch it on each case's guarded buffers, call a
function exercise's functions, run the instrumented launch; each result goes to the grader as
a record (:mod:`autograder.wire.protocol`) and is judged there, never here."""

from __future__ import annotations

from contextlib import contextmanager

from autograder.wire import buffers
from autograder.wire.contract import Contract
from autograder.wire.protocol import CaseRequest, CaseResult, Start
from autograder.wire.shapes import evaluate as launch_shape
from .channel import send, send_error
from .contract import defined

STICKY = ("ILLEGAL_ADDRESS", "LAUNCH_FAILED", "UNKNOWN", "MISALIGNED", "ILLEGAL_INSTRUCTION",
          "HARDWARE_STACK", "ASSERT")


#: The compute capability the compile check targets where no GPU is known (the simulator's
#: compile child, on a laptop, CI or Gradescope): the H100's and H200's, which the house grades on.
TARGET_CC = (9, 0)


def compile_ptx(kernel, contract: Contract, backend: str) -> str:
    """Compile the kernel's Python function to PTX for the GPU's compute capability (on a GPU)
    or :data:`TARGET_CC` (elsewhere), lineinfo on, for the argument types a GPU compiles it for
    (the contract's signature, or the kernel's own declared one that takes it:
    :func:`declared_for`). Needs no CUDA driver off the GPU: the device functions the kernel
    calls compile for the same target (:func:`compiling_for`). Raises Numba's typing/lowering
    errors for code a GPU would reject, and ``TypeError`` for a declared signature no launch
    fits. The grader reads the PTX."""
    from numba import cuda, types as nbtypes

    sig = tuple(eval(s, {"__builtins__": {}}, vars(nbtypes)) for s in contract.signature)
    if not contract.device_function:
        sig = declared_for(kernel.py_func, sig)
    if backend == "gpu":
        cc = tuple(cuda.get_current_device().compute_capability)
        ptx, _ = cuda.compile_ptx(kernel.py_func, sig, cc=cc, lineinfo=True,
                                  device=contract.device_function)
        return ptx
    with compiling_for(TARGET_CC):
        ptx, _ = cuda.compile_ptx(kernel.py_func, sig, cc=TARGET_CC, lineinfo=True,
                                  device=contract.device_function)
    return ptx


def declared_for(py_func, launched: tuple) -> tuple:
    """The argument types a GPU compiles the kernel ``py_func`` for when its launches pass
    ``launched`` (a tuple of Numba types): ``launched`` itself for a kernel decorated without a
    signature; for ``@cuda.jit("void(float32[:], float32[:])")`` (a signature or a list of
    them), the first declared signature that ``launched`` converts to, as a GPU's dispatcher
    picks it. The compile child imports the submission lazily (signatures left out: a GPU
    compiles them at import, which needs a driver), so this reads the decorator again from the
    kernel's source with the loader's own evaluator. Raises ``TypeError`` when no declared
    signature takes ``launched`` (a GPU refuses every launch: "No matching definition")."""
    from numba.cuda.descriptor import cuda_target

    declared = declared_signatures(py_func)
    if not declared:
        return launched
    typing = cuda_target.typing_context
    for args in declared:
        if len(args) == len(launched) and all(
                typing.can_convert(have, want) is not None for have, want in zip(launched, args)):
            return args
    shown = " or ".join("(" + ", ".join(map(str, a)) + ")" for a in declared)
    raise TypeError(f"the kernel's declared signature takes {shown}, but the exercise launches "
                    f"it with ({', '.join(map(str, launched))}): a GPU finds no matching "
                    "definition for any launch")


def declared_signatures(py_func) -> list[tuple] | None:
    """The argument types of the signatures given to ``py_func``'s ``cuda.jit`` decorator in its
    source (``linecache``: the child registers the submission's text), evaluated as the loader
    evaluates them (:mod:`autograder.source.definitions`); None when it was given none or its
    source cannot be read."""
    import ast
    import linecache

    from numba.core import sigutils

    from autograder.source import definitions

    code = py_func.__code__
    try:
        tree = ast.parse("".join(linecache.getlines(code.co_filename)))
    except (SyntaxError, ValueError):
        return None
    node = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
                 and n.name == code.co_name and n.lineno == code.co_firstlineno), None)
    if node is None:
        return None
    ev = definitions._Evaluator(py_func.__globals__, definitions._Kinds(code.co_filename))
    for deco in node.decorator_list:
        if not isinstance(deco, ast.Call) or not deco.args:
            continue
        try:
            value = ev.eval(deco.args[0])
            if ev.k.is_student_function(value):
                continue
            value = ev._signature(value, deco.args[0])
        except Exception:  # noqa: BLE001 - the loader ran it already; nothing to add here
            return None
        sigs = value if isinstance(value, list) else [value]
        return [sigutils.normalize_signature(one)[0] for one in sigs]
    return None


class _Target:
    """What Numba's dispatcher reads of "the current device" while compiling: its compute
    capability, and nothing that needs a driver."""

    def __init__(self, cc: tuple[int, int]):
        self.compute_capability = tuple(cc)


@contextmanager
def compiling_for(cc: tuple[int, int]):
    """While it lasts, Numba compiles device functions for compute capability ``cc`` without
    asking a CUDA driver. numba-cuda (0.30.4) compiles a ``@cuda.jit(device=True)`` function
    when a kernel's typing first calls it (``CUDADispatcher.compile_device``) for
    ``get_current_device().compute_capability``, which creates a CUDA context: on a machine
    without a driver (a laptop, CI, Gradescope) every kernel that calls a device function
    failed the compile check with ``CudaSupportError`` although a GPU compiles it
    (``cuda.compile_ptx`` itself takes ``cc`` and needs no driver). Only the dispatcher
    module's own reference is replaced, and put back afterwards."""
    from numba.cuda import dispatcher

    saved = dispatcher.get_current_device
    dispatcher.get_current_device = lambda: _Target(cc)
    try:
        yield
    finally:
        dispatcher.get_current_device = saved


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
    (the grader knows what it should be; the child never does) as a Python ``int`` or ``float``
    (:func:`plain_number`)."""
    for case in cases:
        send(Start(case.id))
        params = case.params
        try:
            value = plain_number(defined(module, params["call"])(**params["args"]),
                                 params["call"])
        except BaseException as exc:
            send_error("run", exc, path, id=case.id, fatal=False)
            continue
        send(CaseResult(case.id, value=value))


def plain_number(value, name: str) -> int | float:
    """A function's returned number as a Python ``int`` or ``float``: NumPy's integer and float
    scalars (``np.min([...])`` is an ``int64``) are numbers as Python's are. Raises
    ``TypeError`` naming ``name`` for anything else: a bool (Python's or NumPy's), a string, an
    array, None."""
    import numpy as np

    kind = type(value)
    if kind is int or kind is float:
        return value
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    raise TypeError(f"{name} must return a number, got {kind.__name__}"
                    + (f" {value!r:.60}" if isinstance(value, str) else ""))


def sampled_blocks(grid_dim, max_blocks: int | None, draw: float | None) -> list | None:
    """The blocks an instrumented launch of a graded case runs, in the simulator's order: None
    (every block) when the grid has at most ``max_blocks`` (or ``max_blocks`` is None). Else the
    edge blocks first: the last block (partial in every dimension, where guards diverge and
    bounds are crossed), the first, the blocks last in one dimension, then evenly spaced ones
    (:func:`autograder.instrument.launch.select_blocks`), ``max_blocks - 1`` of them, and one
    more chosen by ``draw`` (in [0, 1), drawn from the grading's secret seed) among the blocks
    left, so no block is known to go unwatched, with its neighbours: the blocks before and
    after it in every grid dimension (up to ``2 * 3`` more). A block then never runs without the
    blocks it may hand data to or take data from beside it: a read of what its predecessor
    stored, or a store to an element a neighbour also stores, is seen as the cross-block race it
    is on a GPU, and a kernel cannot tell the sampled launch by a neighbour that did not run.
    Without a draw (or with ``max_blocks`` 1), the first ``max_blocks`` edge blocks."""
    import numpy as np

    from ..instrument.launch import select_blocks

    grid_dim = tuple(int(g) for g in grid_dim)
    every = list(np.ndindex(*grid_dim))
    if max_blocks is None or len(every) <= max_blocks:
        return None
    if max_blocks < 2:
        draw = None
    edges = list(dict.fromkeys([every[-1], *select_blocks(grid_dim, max_blocks)]))
    fixed = edges[:max_blocks - 1] if draw is not None else edges[:max_blocks]
    if draw is not None:
        rest = [b for b in every if b not in set(fixed)]
        drawn = rest[min(len(rest) - 1, int(float(draw) * len(rest)))]
        fixed.append(drawn)
        for d, n in enumerate(grid_dim):
            for step in (-1, 1):
                if 0 <= drawn[d] + step < n:
                    near = tuple(c + step if e == d else c for e, c in enumerate(drawn))
                    if near not in fixed:
                        fixed.append(near)
    order = {b: i for i, b in enumerate(every)}
    return sorted(fixed, key=order.__getitem__)


def run_instrumented(cuda, kernel, contract: Contract, consts: dict, case: CaseRequest) -> dict:
    """An instrumented simulator launch of a graded case (:mod:`autograder.instrument`) at its
    own size and inputs, on fresh buffers: races, divergent barriers, out-of-bounds accesses,
    bank conflicts, divergent branches, global loads; ``case.max_blocks`` blocks of it
    (:func:`sampled_blocks`). The report's ``params`` names the case's size and ``case`` its id.
    Its outputs are never graded."""
    from numba.cuda.errors import normalize_kernel_dimensions

    from ..instrument import instrumented_launch

    _, views = case_views(cuda, consts, case, contract.zeroed)
    grid = launch_shape(contract.grid, case.params, consts)
    block = launch_shape(contract.block, case.params, consts)
    grid_dim, _ = normalize_kernel_dimensions(grid, block)
    report = instrumented_launch(kernel, grid, block, [views[a] for a in contract.args],
                                 blocks=sampled_blocks(grid_dim, case.max_blocks,
                                                       case.block_draw))
    report["constants"] = dict(consts)   # what the grader's concept bounds are computed at
    report["params"] = dict(case.params)   # which size: findings are merged by the grader
    report["case"] = case.id
    return report
