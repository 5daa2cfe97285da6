"""The one module that adapts Numba's CUDA simulator (numba-cuda's ``numba.cuda.simulator``).

* **The child's settings** (:func:`prepare_simulator`), applied once the simulator is chosen and
  before any kernel runs: a block's threads run one at a time in a fixed order, a short thread
  switch interval, shared arrays that every thread of a block really shares, every spelling of
  the kernel API a GPU accepts, and ``cuda.jit``'s GPU options.
* **The simulator's own classes** that the instrumentation (:mod:`autograder.instrument`), the
  definitions runner (:mod:`autograder.source.definitions`) and the child's contract read:
  ``from autograder.simulator import adapter as sim`` then ``sim.FakeCUDAKernel``, ... (the
  names of :data:`PARTS`, imported on first use, so that importing this module imports no
  Numba).

No other module of the package imports ``numba.cuda.simulator`` (``tests/test_layers.py``), so a
new numba-cuda release is met here. See ``docs/architecture.md``, "The layers".
"""

from __future__ import annotations

import importlib
import sys
import threading
from contextlib import contextmanager

from autograder.wire.exception_text import exception_text

# Where a block's lanes run all at once (they let go: a kernel spinning on another of its
# threads), they compete for the interpreter lock as in Numba's own simulator, whose polling
# block manager kept it for a whole switch interval while the kernel's threads waited. Measured
# there (benchmarks/results/2026-11-22_sim_speed.md), 0.2 ms was within noise of the best
# setting at every block size from 4 to 1024 threads (2-3.6 times less CPU than Python's 5 ms
# at 16-64 threads). Lanes in turn do not compete: one runs at a time.
SIM_SWITCH_INTERVAL = 2e-4


def prepare_simulator() -> None:
    """Set :data:`SIM_SWITCH_INTERVAL`, run blocks one lane at a time
    (:func:`lanes_in_turn`), make the simulator's shared arrays thread-safe
    (:func:`thread_safe_shared_arrays`), let ``x.shape[-1]`` work as on a GPU
    (:func:`negative_shape_indices`), give kernels ``numba.cuda``'s kernel API under every
    spelling a GPU accepts (:func:`kernel_api_spellings`) and let ``cuda.jit`` take the options
    a GPU takes (:func:`gpu_jit_options`), and let a kernel call a device function with keyword
    arguments (:func:`device_calls_with_keywords`), load and store through numba-cuda's cache
    hints (:func:`cache_hints`) and call libdevice's functions (:func:`libdevice_functions`).
    Idempotent; called before the submission is
    imported (``from numba.cuda import grid`` is an import)."""
    sys.setswitchinterval(SIM_SWITCH_INTERVAL)
    lanes_in_turn()
    thread_safe_shared_arrays()
    negative_shape_indices()
    kernel_api_spellings()
    gpu_jit_options()
    device_calls_with_keywords()
    cache_hints()
    libdevice_functions()


#: The simulator's classes and functions that other modules use, by the name they are used
#: under: ``(numba-cuda module, its name there)``.
PARTS = {
    "FakeCUDAKernel": ("numba.cuda.simulator.kernel", "FakeCUDAKernel"),
    "push_kernel_context": ("numba.cuda.simulator.kernel", "_push_kernel_context"),
    "FakeCUDAModule": ("numba.cuda.simulator.kernelapi", "FakeCUDAModule"),
    "FakeCUDAAtomic": ("numba.cuda.simulator.kernelapi", "FakeCUDAAtomic"),
    "FakeCUDALocal": ("numba.cuda.simulator.kernelapi", "FakeCUDALocal"),
    "Dim3": ("numba.cuda.simulator.kernelapi", "Dim3"),
    "swapped_cuda_module": ("numba.cuda.simulator.kernelapi", "swapped_cuda_module"),
    "kernelapi": ("numba.cuda.simulator.kernelapi", None),
    "ArgHint": ("numba.cuda.simulator.args", "ArgHint"),
    "InOut": ("numba.cuda.simulator.args", "InOut"),
    "FakeCUDAArray": ("numba.cuda.simulator.cudadrv.devicearray", "FakeCUDAArray"),
    "FakeWithinKernelCUDAArray": ("numba.cuda.simulator.cudadrv.devicearray",
                                  "FakeWithinKernelCUDAArray"),
}


def __getattr__(name: str):
    """A name of :data:`PARTS`, read from numba-cuda at each use (a part this module swaps, such
    as ``swapped_cuda_module``, is the swapped one). Raises ``AttributeError`` for other names."""
    try:
        module_name, attr = PARTS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    module = importlib.import_module(module_name)
    return module if attr is None else getattr(module, attr)


# CPU seconds without a hand-over before a block's lanes all run at once (simulator.scheduler).
PATIENCE = 0.5
# The most lanes kept parked between launches (threads of 1 MiB stack, reused by block shape).
MAX_PARKED_LANES = 2048


class _Runners:
    """One :class:`~autograder.simulator.scheduler.BlockRunner` per block shape, reused by
    every launch of the child; the oldest is closed when more than :data:`MAX_PARKED_LANES`
    lanes would be parked."""

    def __init__(self):
        self.by_shape: dict = {}

    def get(self, block_dim: tuple[int, int, int]):
        from autograder.simulator.scheduler import BlockRunner

        runner = self.by_shape.pop(block_dim, None)
        if runner is None:
            runner = BlockRunner(None, block_dim, patience=PATIENCE)
        self.by_shape[block_dim] = runner   # now the newest
        while sum(len(r.lanes) for r in self.by_shape.values()) > MAX_PARKED_LANES \
                and len(self.by_shape) > 1:
            oldest = next(iter(self.by_shape))
            self.by_shape.pop(oldest).close()
        return runner


_RUNNERS = _Runners()


class LanesInTurn:
    """Stands in for the simulator's ``BlockManager`` (numba-cuda 0.30.4, made for each block
    of a launch with the kernel, grid, block shape and debug flag): the block's threads run one
    at a time in thread-id order, each to its next barrier, by a reused runner.

    Numba's manager starts a thread per CUDA thread for every block and polls them while they
    all compete for the interpreter lock; about half of a simulated grading's CPU time went to
    the kernel's system calls of that competition. A fixed order also makes a racy kernel's
    outputs the same on every run, so its grade is. The error raised is Numba's: the first
    failing thread's exception, its message prefixed with ``tid=[x, y, z] ctaid=[x, y, z]: ``."""

    def __init__(self, f, grid_dim, block_dim, debug):
        self.f, self.block_dim, self.debug = f, tuple(block_dim), debug

    def run(self, grid_point, *args):
        from autograder.simulator.scheduler import KernelFailure

        runner = _RUNNERS.get(self.block_dim)
        runner.fn, runner.debug = self.f, self.debug
        try:
            runner.run_block(tuple(int(g) for g in grid_point), args)
        except KernelFailure as failure:
            raise _as_numba_error(failure, runner.lanes[failure.tid]) from None


def _as_numba_error(failure, lane) -> BaseException:
    exc = failure.exc
    where = f"tid={list(lane.threadIdx)} ctaid={list(failure.block)}"
    text = exception_text(exc)
    message = f"{where}: {text}" if text else where
    try:
        error = type(exc)(message)
    except Exception:  # noqa: BLE001 - an exception type with another constructor
        error = exc
    return error.with_traceback(exc.__traceback__)


def lanes_in_turn() -> None:
    """Make the simulator run every block with :class:`LanesInTurn`. Idempotent."""
    from numba.cuda.simulator import kernel

    kernel.BlockManager = LanesInTurn


def negative_shape_indices() -> None:
    """Let a kernel index its arrays' ``shape`` from the end, as Numba's GPU target does
    (``x.shape[-1]`` compiles and is the last dimension there; measured on an H100, 2026-11-24).
    The simulator (numba-cuda 0.30.4, ``FakeShape``) raises ``IndexError`` for it, so an honest
    kernel that a GPU runs lost every point on the simulator. Idempotent."""
    from numba.cuda.simulator.cudadrv import devicearray

    devicearray.FakeShape.__getitem__ = tuple.__getitem__


def thread_safe_shared_arrays() -> None:
    """Make ``cuda.shared.array`` in the simulator give every thread of a block the same array.

    The simulator (numba-cuda 0.30.4, ``FakeCUDAShared.array``) keys a block's shared arrays by
    the calling line and makes one on the first call: a look-up, then ``np.empty``, then a store,
    with no lock. A thread switch between the look-up and the store (likelier with
    :data:`SIM_SWITCH_INTERVAL`) gives two threads two uninitialized arrays, so a correct kernel
    reads garbage: seen once, the block_scan solution's preflight with a whole block wrong
    ("first at out[1]: got -536668266"). The same method, under a lock. Idempotent."""
    import numpy as np
    from numba.cuda.simulator import kernelapi

    shared = kernelapi.FakeCUDAShared
    if getattr(shared.array, "thread_safe", False):
        return
    original = shared.array
    lock = threading.Lock()

    def array(self, shape, dtype, alignment=None):
        if shape == 0 or alignment is not None:  # dynamic shared memory, or an error
            return original(self, shape, dtype, alignment)
        if isinstance(dtype, kernelapi.types.Type):
            dtype = kernelapi.numpy_support.as_dtype(dtype)
        caller = sys._getframe(1)  # the kernel's line, as the simulator keys it
        key = (caller.f_code.co_filename, caller.f_lineno)
        with lock:
            found = self._allocations.get(key)
            if found is None:
                found = self._allocations[key] = np.empty(shape, dtype)
        return found

    array.thread_safe = True
    shared.array = array


# -- numba.cuda's kernel API, however a kernel names it -------------------------------------------

#: What ``numba.cuda`` gives a kernel on a GPU (numba-cuda 0.30.4) and the simulator's stand-in
#: for the module (``FakeCUDAModule``) answers in a kernel, but the simulator's ``numba.cuda``
#: module itself lacks: on the simulator only a kernel global that *is* ``numba.cuda`` is
#: swapped for the stand-in, so ``import numba.cuda`` then ``numba.cuda.grid(2)``,
#: ``import numba as nb; nb.cuda.grid(1)`` and ``from numba.cuda import grid`` failed there.
KERNEL_API = ("threadIdx", "blockIdx", "blockDim", "gridDim", "warpsize", "laneid", "grid",
              "gridsize", "syncthreads", "syncthreads_count", "syncthreads_and",
              "syncthreads_or", "threadfence", "threadfence_block", "threadfence_system",
              "shared", "local", "const", "atomic", "cg", "popc", "fma", "cbrt", "brev", "clz",
              "ffs", "selp")

#: What a GPU runs and Numba's simulator has no implementation of (numba-cuda 0.30.4): the warp
#: intrinsics (shuffles, votes, matches, ``syncwarp``, ``activemask``, ``lanemask_lt``) and
#: ``nanosleep``. A kernel that calls one raises :class:`SimulatorLimit` on the simulator.
GPU_ONLY = ("activemask", "all_sync", "any_sync", "ballot_sync", "eq_sync", "lanemask_lt",
            "match_all_sync", "match_any_sync", "nanosleep", "shfl_down_sync", "shfl_sync",
            "shfl_up_sync", "shfl_xor_sync", "syncwarp")

#: Names whose value is the running thread's own: never swapped for one value per launch.
PER_THREAD = ("threadIdx", "blockIdx", "laneid")


class SimulatorLimit(Exception):
    """The kernel asked for what Numba's CUDA simulator cannot run and a GPU can (a warp
    intrinsic, :data:`GPU_ONLY`): the grader's limit, not an error of the kernel. The judge
    reads it by its name (:data:`autograder.judge.collect.SIMULATOR_LIMIT`) and reports the
    case as one that needs a GPU; a submission's own exception of that name only turns its own
    error into a skipped case, no points either way."""


def _context():
    """The simulator's kernel API of the running launch (``FakeCUDAModule``), or None."""
    from numba.cuda.simulator import kernel

    return kernel._get_kernel_context()


class KernelName:
    """What ``from numba.cuda import NAME`` binds on the simulator, for a NAME of the kernel API
    (:data:`KERNEL_API`, :data:`GPU_ONLY`): in a kernel it is the running launch's own
    (``threadIdx.x``, ``shared.array(...)``, ``grid(1)``). Like the stub class a GPU binds it is
    callable and never data, so the simulator's and the GPU compile's definitions agree
    (:func:`autograder.source.definitions.bindings`). A launch swaps it in the kernel's
    globals for the launch's own value (:func:`swapped_kernel_names`), except for the names of
    :data:`PER_THREAD`, read at each use."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"<numba.cuda.{self.name} on the simulator>"

    def _value(self):
        ctx = _context()
        if ctx is None:  # AttributeError: getattr(name, "py_func", None) and hasattr stay quiet
            raise AttributeError(f"numba.cuda.{self.name} is usable in a kernel only")
        return getattr(ctx, self.name)

    def __call__(self, *args, **kwargs):
        return self._value()(*args, **kwargs)

    def __getattr__(self, attr: str):
        if attr.startswith("_"):
            raise AttributeError(attr)
        return getattr(self._value(), attr)


class _ThreadInt(KernelName):
    """:class:`KernelName` for a per-thread integer (``laneid``): an int in arithmetic,
    comparisons and indexing."""

    __slots__ = ()

    def __index__(self) -> int:
        return int(self._value())

    __int__ = __index__

    def __hash__(self) -> int:
        return hash(self.__index__())


def _int_method(op: str):
    def method(self, *other):
        return getattr(self.__index__(), op)(*other)

    method.__name__ = op
    return method


for _op in ("add", "radd", "sub", "rsub", "mul", "rmul", "floordiv", "rfloordiv", "truediv",
            "rtruediv", "mod", "rmod", "and", "rand", "or", "ror", "xor", "rxor", "lshift",
            "rlshift", "rshift", "rrshift", "pow", "rpow", "neg", "pos", "abs", "invert",
            "eq", "ne", "lt", "le", "gt", "ge", "bool", "float"):
    setattr(_ThreadInt, f"__{_op}__", _int_method(f"__{_op}__"))
del _op

_NAMES: dict[str, KernelName] = {}


def kernel_name(name: str) -> KernelName:
    """The one :class:`KernelName` of ``name`` (so a launch can find it by identity)."""
    found = _NAMES.get(name)
    if found is None:
        found = _NAMES[name] = (_ThreadInt if name == "laneid" else KernelName)(name)
    return found


def _gpu_only(name: str):
    def stand_in(self, *args, **kwargs):
        raise SimulatorLimit(
            f"cuda.{name} is not run by Numba's CUDA simulator (it has no warp intrinsics: "
            "shuffles, votes, matches, syncwarp, activemask, lanemask_lt, nanosleep); a GPU "
            "runs it")

    stand_in.__name__ = name
    return stand_in


def kernel_api_spellings() -> None:
    """Give kernels on the simulator ``numba.cuda``'s kernel API however they name it, as a GPU
    does: through the module (``import numba.cuda`` then ``numba.cuda.grid(2)``,
    ``import numba as nb`` then ``nb.cuda.shared.array``: the simulator's ``numba.cuda`` answers
    :data:`KERNEL_API` and :data:`GPU_ONLY` names with the running launch's own, by a module
    ``__getattr__``, so a call adds no frame), by name (``from numba.cuda import grid,
    threadIdx`` and ``import *``: :class:`KernelName`, swapped per launch by
    :func:`swapped_kernel_names`) or through the module's own name (``cuda``, ``cu``: Numba's
    swap, kept). :data:`GPU_ONLY` names raise :class:`SimulatorLimit` in a kernel. Idempotent."""
    import numba.cuda as module
    from numba.cuda.simulator import kernel, kernelapi

    if getattr(module.__dict__.get("__getattr__"), "kernelgrade", False):
        return
    fake = kernelapi.FakeCUDAModule
    for name in GPU_ONLY:
        if not hasattr(fake, name):
            setattr(fake, name, _gpu_only(name))
    if "__getattr__" not in vars(fake):
        fake.__getattr__ = _numba_type
    previous = module.__dict__.get("__getattr__")
    names = frozenset(KERNEL_API + GPU_ONLY)

    def __getattr__(name: str):
        if name in names:
            ctx = _context()
            return kernel_name(name) if ctx is None else getattr(ctx, name)
        if previous is not None:
            return previous(name)
        raise AttributeError(f"module 'numba.cuda' has no attribute {name!r}")

    __getattr__.kernelgrade = True
    if "__all__" not in module.__dict__:  # import *: the public names, and the kernel API
        module.__all__ = sorted({n for n in vars(module) if not n.startswith("_")} | names)
    module.__getattr__ = __getattr__
    kernelapi.swapped_cuda_module = swapped_kernel_names
    kernel.swapped_cuda_module = swapped_kernel_names


def _numba_type(self, name: str):
    """A kernel's ``cuda.int32`` / ``cuda.float32`` on the simulator: the launch's stand-in for
    ``numba.cuda`` has only the kernel API, while a GPU's ``numba.cuda`` also names Numba's
    scalar types (the ones ``numba`` exports). Raises ``AttributeError`` for anything else."""
    import numba
    from numba.core import types

    value = getattr(numba, name, None) if not name.startswith("_") else None
    if isinstance(value, types.Type):
        return value
    raise AttributeError(f"module 'numba.cuda' has no attribute {name!r}")


_KEEP = object()


def _launch_value(value, cuda, fake):
    """What a kernel global ``value`` is during a launch whose kernel API is ``fake``: ``fake``
    for ``numba.cuda`` itself (Numba's rule), the launch's own value for a
    :class:`KernelName` not of :data:`PER_THREAD`, else :data:`_KEEP`."""
    if value is cuda:
        return fake
    if fake is not None and type(value) is KernelName and value.name not in PER_THREAD \
            and _NAMES.get(value.name) is value:
        return getattr(fake, value.name)
    return _KEEP


@contextmanager
def swapped_kernel_names(fn, fake_cuda_module):
    """Numba's ``swapped_cuda_module`` (numba-cuda 0.30.4; the same locks, counts and saved
    values, so a device function's call within the launch swaps nothing again), which also
    swaps the kernel API names a kernel imported from ``numba.cuda`` (:func:`_launch_value`):
    ``syncthreads()`` then calls the launch's own method, with no frame of ours between the
    kernel's line and the barrier that records it."""
    from numba import cuda
    from numba.cuda.simulator import kernelapi as api

    globs = fn.__globals__
    gid = id(globs)
    with api._locks_register_lock:
        lock = api._globals_locks[gid]
    with lock:
        if api._swap_refcount[gid] == 0:
            orig, new = {}, {}
            for k, v in globs.items():
                value = _launch_value(v, cuda, fake_cuda_module)
                if value is not _KEEP:
                    orig[k], new[k] = v, value
            api._swap_orig[gid] = orig
            globs.update(new)
        api._swap_refcount[gid] += 1
    try:
        yield
    finally:
        with lock:
            api._swap_refcount[gid] -= 1
            if api._swap_refcount[gid] == 0:
                globs.update(api._swap_orig.pop(gid))
                del api._swap_refcount[gid]


#: ``cuda.jit`` options that only steer code generation for a GPU (line info, registers, launch
#: bounds, inlining in NVVM): Numba's GPU target takes them, the simulator's ``jit``
#: (numba-cuda 0.30.4) raised ``TypeError`` for them, and they change nothing a kernel computes.
GPU_CODEGEN_OPTIONS = ("lineinfo", "max_registers", "launch_bounds", "forceinline")


def gpu_jit_options() -> None:
    """Make the simulator's ``numba.cuda.jit`` take :data:`GPU_CODEGEN_OPTIONS` and drop them,
    as a GPU compiles ``@cuda.jit(lineinfo=True, max_registers=32)``: an honest kernel written
    with them lost every point on the simulator ("importing your code failed: TypeError: jit()
    got an unexpected keyword argument 'lineinfo'"). Every other argument goes to the
    simulator's own ``jit``. Idempotent."""
    import functools

    import numba.cuda as module

    original = module.jit
    if getattr(original, "kernelgrade", False):
        return

    @functools.wraps(original)
    def jit(*args, **kwargs):
        for name in GPU_CODEGEN_OPTIONS:
            kwargs.pop(name, None)
        return original(*args, **kwargs)

    jit.kernelgrade = True
    module.jit = jit


# -- device functions called with keyword arguments ------------------------------------------------

_DEVICE_CALL = """
def factory(launch):
    def __call__(self, *args, **kwargs):
        if self._device or _kernel_context:
            with swapped_cuda_module(self.fn, _get_kernel_context()):
                return self.fn(*args, **kwargs)
        return launch(self, *args, **kwargs)
    __call__.kernelgrade = True
    return __call__
"""


def device_calls_with_keywords() -> None:
    """Let a kernel call a device function with keyword arguments (``corner(by=..., t=32)``),
    as Numba's GPU target does (it binds them to the function's parameters while typing the
    call): the simulator's ``FakeCUDAKernel.__call__`` (numba-cuda 0.30.4) took positional
    arguments only, so an honest kernel got "your kernel raised TypeError: ... unexpected
    keyword argument". Python binds the keywords to the device function's signature; a
    launch (``kernel[grid, block](...)``) is Numba's own, which takes no keywords, as on a GPU.

    The new ``__call__`` is Numba's, with ``**kwargs``, and runs with the globals of Numba's
    simulator module as the one it replaces did (compiled here, under this file's name): its
    frame is a library's, not the grader's, so the child's audit hook
    (:mod:`autograder.child.guard`) still judges what a device function does by the kernel's
    frames beneath it. Idempotent."""
    import types

    from numba.cuda.simulator import kernel

    cls = kernel.FakeCUDAKernel
    if getattr(cls.__call__, "kernelgrade", False):
        return
    code = compile(_DEVICE_CALL, __file__, "exec")
    factory_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    factory = types.FunctionType(factory_code, vars(kernel), "factory")
    cls.__call__ = factory(cls.__call__)


# -- cache-hinted loads and stores -----------------------------------------------------------------

#: numba-cuda's loads with a cache hint (``numba.cuda.cache_hints``): on a GPU ``cuda.ldcg(x, i)``
#: is ``x[i]`` read through another cache path (``ld.global.cg``).
CACHE_HINT_LOADS = ("ldca", "ldcg", "ldcs", "ldlu", "ldcv")
#: Its stores with a cache hint: ``cuda.stcg(x, i, v)`` is ``x[i] = v`` (``st.global.cg``).
CACHE_HINT_STORES = ("stcg", "stcs", "stwb", "stwt")


def cache_hints() -> None:
    """Give the simulator numba-cuda's cache-hinted loads and stores, which it defines as None
    (numba-cuda 0.30.4): a kernel loading with ``cuda.ldcg(x, i)`` was refused ("`cuda.ldcg` is
    None here") and got 0. A hint changes where a GPU caches the element, never its value, so
    on the simulator a load is ``operator.getitem`` and a store ``operator.setitem``: C
    functions, with no frame between the kernel's line and the array, so the instrumented run
    records them as the kernel's own loads and stores, at its line. Through the module
    (``cuda.ldcg``, also in a launch) and by name (``from numba.cuda import ldcg``).
    Idempotent."""
    import operator

    import numba.cuda as module
    from numba.cuda.simulator import kernelapi

    for names, op in ((CACHE_HINT_LOADS, operator.getitem),
                      (CACHE_HINT_STORES, operator.setitem)):
        for name in names:
            if getattr(module, name, None) is None:
                setattr(module, name, op)
            if getattr(kernelapi.FakeCUDAModule, name, None) is None:
                setattr(kernelapi.FakeCUDAModule, name, op)


# -- libdevice ----------------------------------------------------------------------------------------

def libdevice_functions() -> None:
    """Give the simulator's ``numba.cuda.libdevice`` the functions of
    :mod:`autograder.simulator.libdevice` in place of its documentation stubs, which return None
    (numba-cuda 0.30.4): an honest kernel calling ``libdevice.fmaf`` computed NaN and was told
    its outputs were wrong. Each function computes what the GPU does or raises
    :class:`SimulatorLimit`. Idempotent."""
    import types

    import numba.cuda.libdevice as module

    from autograder.simulator.libdevice import functions

    if getattr(module, "_kernelgrade", False):
        return
    names = [n for n, v in vars(module).items() if not n.startswith("_")
             and isinstance(v, types.FunctionType) and v.__module__ == module.__name__]
    for name, fn in functions(names).items():
        setattr(module, name, fn)
    module._kernelgrade = True
