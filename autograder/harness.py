"""What runs inside the child process: run the submission's definitions, resolve the contract's
names, launch its kernel on the grader's inputs, time it against the instructor's, and send raw
outputs back over the private channel. It judges nothing: comparison happens in the grader's
process.

Only the submission's imports, constant assignments and function definitions run
(:mod:`autograder.definitions`), from the source text in the request: no top-level statement of
the student's can patch Numba, NumPy or this module, start threads, or write on the channel.

Run as ``python -m autograder.harness CHANNEL_FD``; the request (a pickle from the grader) comes
on standard input and is read in full before any student code runs. Must not import numba before
the backend is chosen (``NUMBA_ENABLE_CUDASIM`` is read at import).

Before numba and any student code, it checks that it imports the grader's own numpy, numba,
numba-cuda and llvmlite (versions and folders, :func:`package_problem`); if not, its only record
is an ``error`` of phase ``environment`` (the grader's setup, not the student's kernel). Its first
record otherwise is ``hello``, with its ``packages``.
"""

from __future__ import annotations

import math
import os
import pickle
import re
import sys
import traceback
import types

from . import buffers, shapes
from .channel import write_record
from .preflight import PACKAGES_ENV, package_facts, package_mismatch

_channel_fd = -1
PTX_LIMIT = 4 << 20
SIM_THREAD_STACK = 1 << 20
# The simulator runs each CUDA thread of a block as a Python thread, and its block manager polls
# them without ever blocking: each time it gets the GIL it keeps it for a whole switch interval
# while the kernel's threads wait. At Python's 5 ms a block of a few threads spends most of its
# CPU time there. Measured per exercise in the harness (benchmarks/results/
# 2026-11-22_sim_speed.md), 0.2 ms was within noise of the best setting at every block size from
# 4 to 1024 threads (2-3.6 times less CPU than 5 ms at 16-64 threads); 0.1 ms and less cost up to
# 1.7 times more at 256-1024 threads. Set in the simulator child only, before the launches.
SIM_SWITCH_INTERVAL = 2e-4


def send(header: dict, arrays=None) -> None:
    write_record(_channel_fd, header, arrays)


def _student_frame(exc: BaseException, path: str) -> int | None:
    """Line number of the innermost traceback frame in the student's file, if any."""
    lineno = None
    for frame, line in traceback.walk_tb(exc.__traceback__):
        if frame.f_code.co_filename == path:
            lineno = line
    if lineno is None:  # Numba typing errors carry the location in the message
        m = re.search(re.escape(path) + r'", line (\d+)', str(exc))
        lineno = int(m.group(1)) if m else None
    return lineno


def _describe(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return "\n".join(lines[:12])


def send_error(phase: str, exc: BaseException, path: str, **extra) -> None:
    lineno = _student_frame(exc, path) or getattr(exc, "submission_lineno", None)
    send({"type": "error", "phase": phase, "message": _describe(exc),
          "lineno": lineno, **extra})


def import_submission(path: str, text: str | None = None, lazy: bool = False) -> types.ModuleType:
    """The submission as a module, built by :func:`autograder.definitions.run_definitions`
    (imports, constants and function definitions only) from ``text`` (the grader's copy, sent
    in the request) or, without it, from the file at ``path``. The statements it skipped are
    in ``module.__dict__["__kernelgrade_skipped__"]`` (a list of ``Skipped``)."""
    from .definitions import run_definitions

    if text is None:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    module = types.ModuleType("submission")
    module.__file__ = path
    sys.modules["submission"] = module
    skipped = run_definitions(text, path, module.__dict__, lazy=lazy)
    module.__dict__["__kernelgrade_skipped__"] = skipped
    return module


def _defined(module, name: str):
    """``module``'s own binding of ``name`` (no ``getattr``: no module ``__getattr__`` runs)."""
    return vars(module).get(name, _MISSING)


_MISSING = object()


class ContractError(Exception):
    """The submission does not define what the contract asks for."""


def _not_defined(module, name: str, path: str, constant: bool = False) -> ContractError:
    """The error for a missing ``name``, with a "did you mean" naming what the submission does
    define: the closest of its own int constants (``constant``) or of its kernels and functions
    (difflib, case ignored), else the kernels and functions it defines."""
    import difflib

    own = {}
    for k, v in vars(module).items():
        if k.startswith("_"):
            continue
        if constant:
            if type(v) is int:
                own[k] = "constant"
            continue
        code = getattr(getattr(v, "py_func", v), "__code__", None)
        if getattr(code, "co_filename", None) == path:
            own[k] = "kernel" if hasattr(v, "py_func") else "function"
    message = f"the submission does not define {name}"
    if not own:
        return ContractError(message)
    lower = {k.lower(): k for k in own}
    close = difflib.get_close_matches(name.lower(), list(lower), n=1, cutoff=0.5)
    if close:
        found = lower[close[0]]
        return ContractError(f"{message}; did you mean {found}? (your code defines the "
                             f"{own[found]} {found}: rename it {name})")
    shown = ", ".join(f"{own[k]} {k}" for k in list(own)[:6])
    return ContractError(f"{message}; your code defines {shown}")


def resolve(module, contract: dict, path: str, backend: str):
    """Check the constants and the kernel the contract names; returns (kernel, constants)."""
    consts = {}
    for c in contract["constants"]:
        name = c["name"]
        value = _defined(module, name)
        if value is _MISSING:
            raise _not_defined(module, name, path, constant=True)
        if type(value) is not int:
            raise ContractError(f"{name} must be an int, got {type(value).__name__} {value!r}")
        if not c["low"] <= value <= c["high"]:
            raise ContractError(f"{name} = {value} is outside {c['low']}..{c['high']}")
        if c["power_of_two"] and value & (value - 1):
            raise ContractError(f"{name} = {value} is not a power of two")
        consts[name] = value
    for expr, message in contract["checks"]:
        if not eval(expr, {"__builtins__": {}}, dict(consts)):
            raise ContractError(message.format(**consts))
    for fname in contract["functions"]:
        if type(_defined(module, fname)) is not types.FunctionType:
            raise ContractError(f"the submission does not define a function {fname}(...)")
    name = contract["kernel"]
    if not name:
        return None, consts
    kernel = _defined(module, name)
    if kernel is _MISSING:
        raise _not_defined(module, name, path)
    _check_kernel(kernel, name, contract, path, backend)
    return kernel, consts


def _check_kernel(kernel, name: str, contract: dict, path: str, backend: str) -> None:
    what = "device function" if contract["device_function"] else "kernel"
    decorator = "@cuda.jit(device=True)" if contract["device_function"] else "@cuda.jit"
    if backend == "sim":
        from numba.cuda.simulator.kernel import FakeCUDAKernel as KernelType
    else:
        from numba.cuda.dispatcher import CUDADispatcher as KernelType
    if type(kernel) is not KernelType:  # exactly: no subclass stands in for a kernel
        raise ContractError(
            f"{name} must be a Numba CUDA {what} ({decorator} def {name}(...)), "
            f"got {type(kernel).__name__}")
    py_func = getattr(kernel, "py_func", None)
    if getattr(getattr(py_func, "__code__", None), "co_filename", None) != path:
        raise ContractError(f"{name} must be defined in the submission itself")
    if backend == "sim":
        is_device = bool(getattr(kernel, "_device", False))
    else:
        is_device = bool(kernel.targetoptions.get("device", False))
    if is_device != contract["device_function"]:
        raise ContractError(f"{name} must be declared with {decorator}")
    nargs = py_func.__code__.co_argcount
    if nargs != len(contract["args"]):
        raise ContractError(
            f"{name} must take {len(contract['args'])} arguments "
            f"({', '.join(contract['args'])}), it takes {nargs}")


def launch_shape(exprs, params: dict, consts: dict) -> tuple[int, ...]:
    return shapes.evaluate(exprs, params, consts)


def compile_ptx(kernel, contract: dict, backend: str) -> str:
    """Compile the kernel's Python function to PTX (no GPU needed; lineinfo on). Raises Numba's
    typing/lowering errors for code a GPU would reject. The grader reads the PTX."""
    from numba import cuda, types as nbtypes

    sig = tuple(eval(s, {"__builtins__": {}}, vars(nbtypes)) for s in contract["signature"])
    cc = cuda.get_current_device().compute_capability if backend == "gpu" else (9, 0)
    ptx, _ = cuda.compile_ptx(kernel.py_func, sig, cc=cc, lineinfo=True,
                              device=contract["device_function"])
    return ptx


def _device_views(cuda, host_buffers: dict, shapes: dict):
    """Copy guarded host buffers to the device; return (device buffers, device views)."""
    dbufs, views = {}, {}
    for name, (buf, margin) in host_buffers.items():
        d = cuda.to_device(buf)
        size = int(math.prod(shapes[name]))
        dbufs[name] = d
        views[name] = d[margin:margin + size].reshape(shapes[name])
    return dbufs, views


def case_views(cuda, contract, consts, case):
    """Guarded device buffers and views for one case's inputs and outputs."""
    host = {}
    shapes = {}
    for name, arr in case["inputs"].items():
        host[name] = buffers.guarded_input(arr)
        shapes[name] = arr.shape
    for name, (shape, dtype) in case["outputs"].items():
        shapes[name] = launch_shape(shape, case["params"], consts)
        host[name] = buffers.guarded_output(shapes[name], dtype)
    return _device_views(cuda, host, shapes)


def run_case(cuda, kernel, contract, consts, case, driver):
    dbufs, views = case_views(cuda, contract, consts, case)
    if driver is not None:
        driver.drive(kernel, views, case["params"], consts)
    else:
        args = [views[a] for a in contract["args"]]
        grid = launch_shape(contract["grid"], case["params"], consts)
        block = launch_shape(contract["block"], case["params"], consts)
        kernel[grid, block](*args)
    cuda.synchronize()
    return {name: dbufs[name].copy_to_host() for name in case["outputs"]}


def run_instrumented(cuda, kernel, contract, consts, case) -> dict:
    """An instrumented simulator launch of one small case (:mod:`autograder.instrument`): races,
    divergent barriers, bank conflicts, divergent branches, global loads. Its outputs are never
    graded."""
    from .instrument import instrumented_launch

    _, views = case_views(cuda, contract, consts, case)
    grid = launch_shape(contract["grid"], case["params"], consts)
    block = launch_shape(contract["block"], case["params"], consts)
    return instrumented_launch(kernel, grid, block, [views[a] for a in contract["args"]],
                               max_blocks=case.get("max_blocks"))


#: The ``device`` record's per-SM facts and the driver attributes they come from.
DEVICE_ATTRIBUTES = {
    "multiprocessors": "MULTIPROCESSOR_COUNT",
    "max_threads_per_sm": "MAX_THREADS_PER_MULTIPROCESSOR",
    "max_blocks_per_sm": "MAX_BLOCKS_PER_MULTIPROCESSOR",
    "shared_per_sm": "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR",
    "registers_per_sm": "MAX_REGISTERS_PER_MULTIPROCESSOR",
    "max_threads_per_block": "MAX_THREADS_PER_BLOCK",
    "shared_per_block": "MAX_SHARED_MEMORY_PER_BLOCK",
    "registers_per_block": "MAX_REGISTERS_PER_BLOCK",
    "reserved_shared_per_block": "RESERVED_SHARED_MEMORY_PER_BLOCK",
}


def device_facts(dev) -> dict:
    """The ``device`` record: the GPU's ``name``, ``compute_capability`` [major, minor] and the
    driver's limits (:data:`DEVICE_ATTRIBUTES`; bytes for shared memory, 32-bit registers); an
    attribute this driver lacks is left out."""
    name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
    facts = {"type": "device", "name": name,
             "compute_capability": [int(x) for x in dev.compute_capability]}
    for key, attr in DEVICE_ATTRIBUTES.items():
        try:
            facts[key] = int(getattr(dev, attr))
        except Exception:  # an older driver or binding without the attribute
            pass
    return facts


def kernel_facts(kernel) -> dict | None:
    """The ``kernel`` record, after the kernel ran on the GPU: Numba's ``regs_per_thread``,
    ``shared_bytes`` (static shared memory per block), ``local_bytes`` per thread and
    ``max_threads_per_block`` of its compiled variant (the most demanding one if several
    signatures were compiled); None when nothing was compiled."""
    overloads = list(getattr(kernel, "overloads", {}).values())
    if not overloads:
        return None
    facts = {"type": "kernel"}
    for key, attr in (("regs_per_thread", "regs_per_thread"),
                      ("shared_bytes", "shared_mem_per_block"),
                      ("local_bytes", "local_mem_per_thread"),
                      ("max_threads_per_block", "max_threads_per_block")):
        values = [int(getattr(o, attr)) for o in overloads]
        facts[key] = min(values) if key == "max_threads_per_block" else max(values)
    return facts


def device_occupancy(threads_per_block: int) -> tuple[dict, int]:
    """This GPU's per-SM limits, as the occupancy exercise's arguments, and the driver's
    occupancy calculator's resident blocks per SM for a small kernel (few registers, no shared
    memory) at ``threads_per_block``."""
    import numpy as np
    from numba import cuda, typeof

    dev = cuda.get_current_device()
    limits = {"max_threads_per_sm": int(dev.MAX_THREADS_PER_MULTIPROCESSOR),
              "max_blocks_per_sm": int(dev.MAX_BLOCKS_PER_MULTIPROCESSOR),
              "shared_bytes_per_sm": int(dev.MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)}

    @cuda.jit
    def small(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = i

    compiled = small.compile((typeof(cuda.device_array(1, np.int32)),))
    blocks = cuda.current_context().get_active_blocks_per_multiprocessor(
        compiled._codelibrary.get_cufunc(), threads_per_block, 0)
    return limits, int(blocks)


def run_calls(module, cases: list[dict], path: str) -> None:
    """Cases of a function exercise: call ``params["call"](**params["args"])``, send the value.
    With ``params["against_driver"]`` the GPU's own limits fill the arguments and the driver's
    occupancy calculator gives the expected value (computed before the student's function runs).
    """
    for case in cases:
        send({"type": "start", "id": case["id"]})
        params = case["params"]
        try:
            args, expected = dict(params["args"]), None
            if params.get("against_driver"):
                limits, expected = device_occupancy(args["threads_per_block"])
                args.update(limits)
            value = _defined(module, params["call"])(**args)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"{params['call']} must return a number, "
                                f"got {type(value).__name__} {value!r:.60}")
        except BaseException as exc:
            send_error("run", exc, path, id=case["id"], fatal=False)
            continue
        send({"type": "case", "id": case["id"], "value": value, "expected": expected,
              "args": args})


def _is_sticky(exc: BaseException) -> bool:
    """A CUDA error after which the context is unusable (illegal address, launch failure)."""
    text = f"{type(exc).__name__} {exc}"
    return any(s in text for s in ("ILLEGAL_ADDRESS", "LAUNCH_FAILED", "UNKNOWN", "MISALIGNED",
                                   "ILLEGAL_INSTRUCTION", "HARDWARE_STACK", "ASSERT"))


TIMING_COPIES = 3
TIMING_COPY_BYTES = 3 << 30


def prepare_timing(cuda, contract, consts, timing):
    """Device inputs (``copies`` rotated sets), the instructor's kernel at the student's
    constants, the launch shape and an L2 flusher: everything :func:`measure_timing` needs."""
    from . import timing as timing_mod

    import numpy as np

    solution = import_solution(timing["solution_path"], consts, timing.get("solution_source"))
    params = timing["params"]
    specs = {name: (tuple(shape), np.dtype(dtype))
             for name, (shape, dtype) in timing["input_specs"].items()}
    input_bytes = sum(int(np.prod(shape)) * dt.itemsize for shape, dt in specs.values())
    copies = max(1, min(TIMING_COPIES, TIMING_COPY_BYTES // max(1, input_bytes)))
    outputs = {name: cuda.device_array(launch_shape(shape, params, consts), dtype)
               for name, (shape, dtype) in timing["outputs"].items()}
    arg_sets = []
    for copy in range(copies):
        views = {name: timing_mod.device_random(cuda, shape, dt, seed=copy)
                 for name, (shape, dt) in specs.items()}
        views.update(outputs)
        arg_sets.append([views[a] for a in contract["args"]])
    return {
        "reference": getattr(solution, contract["kernel"]),
        "arg_sets": arg_sets,
        "grid": launch_shape(contract["grid"], params, consts),
        "block": launch_shape(contract["block"], params, consts),
        "flush": timing_mod.l2_flusher(cuda),
        "min_rounds": timing["min_rounds"],
        "budget_s": timing["budget_s"],
    }


def warm_up(cuda, kernel, prepared) -> None:
    """One launch of each kernel: compiles them before the measurement."""
    for k in (kernel, prepared["reference"]):
        k[prepared["grid"], prepared["block"]](*prepared["arg_sets"][0])
    cuda.synchronize()


def measure_timing(cuda, kernel, prepared) -> dict:
    """The instructor's kernel against itself (the GPU self-check), then the student's against
    the instructor's; returns the raw samples for the grader."""
    from . import timing as timing_mod

    p = prepared
    copies = len(p["arg_sets"])

    def launcher(k):
        return lambda r: k[p["grid"], p["block"]](*p["arg_sets"][r % copies])

    reference = launcher(p["reference"])
    self_check = timing_mod.time_pair(cuda, reference, reference, p["flush"],
                                      min_rounds=8, max_rounds=40, budget_s=3.0)
    main = timing_mod.time_pair(cuda, launcher(kernel), reference, p["flush"],
                                min_rounds=p["min_rounds"], budget_s=p["budget_s"])
    return {"student_ms": main["a_ms"], "instructor_ms": main["b_ms"],
            "self_a_ms": self_check["a_ms"], "self_b_ms": self_check["b_ms"],
            "copies": copies, "seconds": main["seconds"] + self_check["seconds"]}


def import_solution(path: str, consts: dict, text: str | None = None) -> types.ModuleType:
    """The instructor's module with the student's constants (e.g. TILE_WIDTH) set before its
    kernels are first compiled, so timing compares like with like. ``text``: its source, sent
    by the grader in the request (the sandbox shows no solution file); ``path`` names it."""
    module = types.ModuleType("instructor_solution")
    module.__file__ = path
    if text is None:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    exec(compile(text, path, "exec"), module.__dict__)
    for name, value in consts.items():
        setattr(module, name, value)
    return module


def package_problem() -> str | None:
    """How this process's numpy, numba, numba-cuda and llvmlite (versions and folders) differ
    from the grader's, which the grader puts in the environment
    (:data:`autograder.preflight.PACKAGES_ENV`; removed here, before any student code runs);
    None when they agree or the grader sent none."""
    import json

    raw = os.environ.pop(PACKAGES_ENV, None)
    try:
        expected = json.loads(raw) if raw else None
    except ValueError:
        expected = None
    return package_mismatch(expected, package_facts())


def _not_dumpable() -> None:
    """``PR_SET_DUMPABLE`` 0: other processes of the same user (a sibling child) can no longer
    open this one's ``/proc/<pid>/fd``, ``mem`` or ``environ``, nor ptrace it."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE
    except (OSError, AttributeError):
        pass


def main(argv: list[str]) -> int:
    global _channel_fd
    _channel_fd = int(argv[0])
    request = pickle.load(sys.stdin.buffer)
    # A timing child waits for the grader's go (one byte on the old standard input) before it
    # measures: the grader gives it the GPU alone only then.
    go_fd = os.dup(0) if request.get("await_go") else None
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    backend = request["backend"]
    if backend == "sim":
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
        # The simulator runs one thread per CUDA thread; at glibc's default 8 MiB stacks a
        # 1024-thread block reserves 8 GiB, which the sandbox's memory limit (RLIMIT_DATA)
        # counts. Kernel bodies need little stack.
        import threading

        threading.stack_size(SIM_THREAD_STACK)
    else:
        os.environ.pop("NUMBA_ENABLE_CUDASIM", None)
    path, contract, phases = request["source_path"], request["contract"], request["phases"]
    # Before numba and any student code: the same numpy, numba, numba-cuda and llvmlite as the
    # grader, or the grader's setup is at fault (a GraderSetupError there), not the kernel.
    problem = package_problem()
    if problem:
        send({"type": "error", "phase": "environment", "message": problem, "lineno": None})
        return 0
    import warnings

    # Numba's own warnings (low occupancy at small test sizes) are not the student's output.
    os.environ["NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS"] = "0"
    warnings.filterwarnings("ignore", message=".*under-utilization.*")
    from numba import cuda

    if backend == "gpu":
        send(device_facts(cuda.get_current_device()))
    send({"type": "hello", "pid": os.getpid(), "packages": package_facts()})
    if backend != "gpu":
        _not_dumpable()
    try:
        # The compile child has no GPU: a kernel given a signature must not compile eagerly.
        module = import_submission(path, request.get("source_text"), lazy=backend == "compile")
    except BaseException as exc:  # SystemExit and KeyboardInterrupt included
        send_error("import", exc, path)
        return 0
    skipped = [[s.lineno, s.reason] for s in module.__dict__["__kernelgrade_skipped__"][:50]]
    try:
        kernel, consts = resolve(module, contract, path, backend)
    except ContractError as exc:
        send({"type": "error", "phase": "contract", "message": str(exc), "lineno": None,
              "skipped": skipped})
        return 0
    except BaseException as exc:
        send_error("contract", exc, path, skipped=skipped)
        return 0
    send({"type": "imported", "constants": consts, "skipped": skipped})
    if request.get("lineinfo") and backend == "gpu" and kernel is not None:
        kernel.targetoptions["lineinfo"] = True  # sanitizer findings name the student's lines

    if "compile" in phases and kernel is not None:
        try:
            send({"type": "compiled", "ptx": compile_ptx(kernel, contract, backend)[:PTX_LIMIT]})
        except BaseException as exc:
            send_error("compile", exc, path)

    driver = None
    if contract["driver"]:
        import importlib
        driver = importlib.import_module(contract["driver"])

    if backend == "sim":
        sys.setswitchinterval(SIM_SWITCH_INTERVAL)
    if "run" in phases and contract["functions"]:
        run_calls(module, request["cases"], path)
    elif "run" in phases:
        for case in request["cases"]:
            send({"type": "start", "id": case["id"]})
            try:
                outs = run_case(cuda, kernel, contract, consts, case, driver)
            except BaseException as exc:
                send_error("run", exc, path, id=case["id"], fatal=_is_sticky(exc))
                if _is_sticky(exc):
                    return 0
                continue
            send({"type": "case", "id": case["id"]}, outs)
        if backend == "gpu" and kernel is not None and not contract["device_function"]:
            try:  # registers and shared memory of what ran: the occupancy hints
                facts = kernel_facts(kernel)
                if facts:
                    send(facts)
            except Exception:  # noqa: BLE001 - a fact for hints, never a failed grading
                pass

    if "instrument" in phases and request.get("diagnose") and backend == "sim":
        send({"type": "start", "id": "instrument"})
        try:
            report = run_instrumented(cuda, kernel, contract, consts, request["diagnose"])
            send({"type": "instrumented", "report": report})
        except BaseException as exc:
            send_error("instrument", exc, path)

    if "time" in phases and request.get("timing"):
        send({"type": "start", "id": "timing"})
        try:
            prepared = prepare_timing(cuda, contract, consts, request["timing"])
            warm_up(cuda, kernel, prepared)  # JIT both kernels while other work shares the GPU
            if go_fd is not None:
                send({"type": "ready"})
                if os.read(go_fd, 1) != b"g":
                    return 0
            result = measure_timing(cuda, kernel, prepared)
            send({"type": "timing", **result})
        except BaseException as exc:
            send_error("timing", exc, path)
    send({"type": "done"})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
