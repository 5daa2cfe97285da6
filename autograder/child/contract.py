"""In the child: build the submission's module from its definitions only
(:mod:`autograder.source.definitions`) and resolve the names its exercise's contract asks for.

Imports no Numba at module level: the harness picks the backend (``NUMBA_ENABLE_CUDASIM``)
before Numba is first imported.
"""

from __future__ import annotations

import linecache
import sys
import types

from autograder.simulator import adapter as sim
from autograder.wire.contract import Contract

_MISSING = object()


def remember_source(path: str, text: str) -> None:
    """Make ``text`` the source that ``inspect`` and ``linecache`` give for ``path``
    (tracebacks; Numba's line info, compiled for the sanitizer and for timing, which warned
    "Could not find source for function" when the sandbox hid ``path``, so that every kernel
    seemed to print something while it was graded)."""
    linecache.cache[path] = (len(text), None, text.splitlines(True), path)


def import_submission(path: str, text: str | None = None, lazy: bool = False,
                      live=(), guard: bool = True) -> types.ModuleType:
    """The submission as a module, built by :func:`autograder.source.definitions.run_definitions`
    (imports, constants and function definitions only) from ``text`` (the grader's copy, sent
    in the request) or, without it, from the file at ``path``. The statements it skipped are
    in ``module.__dict__["__kernelgrade_skipped__"]`` (a list of ``Skipped``). ``lazy``: a
    kernel given a signature is not compiled eagerly (the compile child has no GPU). ``live``:
    the names the contract asks for (:attr:`autograder.wire.contract.Contract.names`); a
    skipped statement binding one is refused
    (:class:`autograder.source.definitions.NotGradable`).

    The module reaches only what the contract names (:mod:`autograder.source.reach`): its
    ``__builtins__`` is its own dict (:func:`autograder.source.reach.student_builtins`: plain
    built-ins, the import gate), so every function it defines imports through the gate and
    has no ``eval``, ``open`` or ``getattr``; and, before its first statement runs, the
    process's audit hook refuses what the module's code is responsible for
    (:func:`autograder.child.guard.install`; ``guard=False`` leaves the process without it: a
    test that imports a submission in its own process). Nothing of the harness is in the
    module: it runs after the harness's own imports."""
    from autograder.source.definitions import run_definitions
    from autograder.source.reach import student_builtins

    if text is None:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    remember_source(path, text)
    module = types.ModuleType("submission")
    module.__file__ = path
    module.__dict__["__builtins__"] = student_builtins()
    sys.modules["submission"] = module
    if guard:
        from .guard import install

        install(module.__dict__)
    skipped = run_definitions(text, path, module.__dict__, lazy=lazy, live=live)
    module.__dict__["__kernelgrade_skipped__"] = skipped
    return module


def defined(module, name: str):
    """``module``'s own binding of ``name`` (no ``getattr``: no module ``__getattr__`` runs),
    or :data:`_MISSING`."""
    return vars(module).get(name, _MISSING)


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


def resolve(module, contract: Contract, path: str, backend: str):
    """Check the constants and the kernel ``contract`` names; returns
    (kernel or None, constants). Raises :class:`ContractError` for what does not fit."""
    consts = {}
    for c in contract.constants:
        name = c.name
        value = defined(module, name)
        if value is _MISSING:
            raise _not_defined(module, name, path, constant=True)
        if type(value) is not int:
            raise ContractError(f"{name} must be an int, got {type(value).__name__} {value!r}")
        if not c.low <= value <= c.high:
            raise ContractError(f"{name} = {value} is outside {c.low}..{c.high}")
        if c.power_of_two and value & (value - 1):
            raise ContractError(f"{name} = {value} is not a power of two")
        consts[name] = value
    for expr, message in contract.checks:
        if not eval(expr, {"__builtins__": {}}, dict(consts)):
            raise ContractError(message.format(**consts))
    for fname in contract.functions:
        fn = defined(module, fname)
        # The submission's own def (a library function bound to the name would run from the
        # grader's frame when called).
        if type(fn) is not types.FunctionType or fn.__globals__ is not module.__dict__:
            raise ContractError(f"the submission does not define a function {fname}(...)")
    name = contract.kernel
    if not name:
        return None, consts
    kernel = defined(module, name)
    if kernel is _MISSING:
        raise _not_defined(module, name, path)
    _check_kernel(kernel, name, contract, path, backend)
    return kernel, consts


def _check_kernel(kernel, name: str, contract: Contract, path: str, backend: str) -> None:
    what = "device function" if contract.device_function else "kernel"
    decorator = "@cuda.jit(device=True)" if contract.device_function else "@cuda.jit"
    if backend == "sim":
        KernelType = sim.FakeCUDAKernel
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
    if is_device != contract.device_function:
        raise ContractError(f"{name} must be declared with {decorator}")
    nargs = py_func.__code__.co_argcount
    if nargs != len(contract.args):
        raise ContractError(
            f"{name} must take {len(contract.args)} arguments "
            f"({', '.join(contract.args)}), it takes {nargs}")
