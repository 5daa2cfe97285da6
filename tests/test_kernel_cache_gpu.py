"""On a GPU: a kernel kept as a cubin entry (autograder.host.kernel_cache) loads into a fresh
dispatcher with no pickle and no compile, and computes what the compiled kernel computes; a
cubin the driver refuses is compiled instead. Run with ``KERNELGRADE_TEST_DEVICE=gpu``; the
compile and load times are printed (``-s``), not asserted."""

from __future__ import annotations

import time

import numpy as np
import pytest

from autograder.host import kernel_cache
from conftest import needs_gpu



def _simulator_in_process() -> bool:
    """Numba reads NUMBA_ENABLE_CUDASIM once, at its import: a run that also collects a module
    setting it (tests/instrument, test_reach, ...) has only the simulator in this process."""
    import os

    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


pytestmark = [pytest.mark.gpu, needs_gpu(), pytest.mark.skipif(
    _simulator_in_process(), reason="Numba is the simulator in this process (another test module "
    "of this run set NUMBA_ENABLE_CUDASIM at collection): run this file on its own")]


def _instructor_kernel():
    """The instructor's tiled_matmul kernel at its own constants, freshly defined (a
    dispatcher with nothing compiled)."""
    from autograder.child.timing import import_solution
    from autograder.exercises import get, solution_path

    path = solution_path(get("tiled_matmul"))
    module = import_solution(str(path), {}, path.read_text())
    kernel = module.tiled_matmul
    kernel.targetoptions["lineinfo"] = True
    return kernel, path.read_text(), module.TILE_WIDTH


def test_the_instructors_kernel_loads_from_its_cubin_and_computes_the_same(tmp_path,
                                                                          monkeypatch):
    from numba import cuda

    n = 256
    rng = np.random.default_rng(1)
    a, b = (cuda.to_device(rng.random((n, n), dtype=np.float32)) for _ in range(2))
    outs = [cuda.device_array((n, n), np.float32) for _ in range(2)]
    monkeypatch.setenv(kernel_cache.CACHE_ENV, str(tmp_path))
    monkeypatch.setenv(kernel_cache.WRITE_ENV, "1")
    monkeypatch.setattr(kernel_cache, "_provided", {})
    warm, text, tile = _instructor_kernel()
    identity = kernel_cache.solution_identity(text, "tiled_matmul", {"TILE_WIDTH": tile})
    began = time.perf_counter()
    assert kernel_cache.compile_for(warm, (a, b, outs[0]), identity) == "compiled"
    compiled_s = time.perf_counter() - began
    entries, bad = kernel_cache.read_folder(tmp_path)
    assert len(entries) == 1 and bad == []
    assert all(data.startswith(kernel_cache.MAGIC) for data in entries.values())  # cubin, no pickle

    monkeypatch.delenv(kernel_cache.WRITE_ENV)
    monkeypatch.delenv(kernel_cache.CACHE_ENV)
    kernel_cache.provide(entries)
    child, _, _ = _instructor_kernel()
    began = time.perf_counter()
    assert kernel_cache.compile_for(child, (a, b, outs[1]), identity) == "loaded"
    loaded_s = time.perf_counter() - began
    grid, block = (n // tile, n // tile), (tile, tile)
    warm[grid, block](a, b, outs[0])
    child[grid, block](a, b, outs[1])
    assert np.array_equal(outs[0].copy_to_host(), outs[1].copy_to_host())
    print(f"\ntiled_matmul: compiled in {compiled_s * 1e3:.0f} ms, loaded from its cubin in "
          f"{loaded_s * 1e3:.1f} ms")


def test_a_cubin_the_driver_refuses_is_compiled_instead(monkeypatch):
    from numba import cuda

    kernel, text, tile = _instructor_kernel()
    n = 64
    a = cuda.device_array((n, n), np.float32)
    identity = kernel_cache.solution_identity(text, "tiled_matmul", {"TILE_WIDTH": tile})
    key = kernel_cache.entry_key(identity, kernel_cache._argtypes((a, a, a)),
                                 dict(kernel.targetoptions), kernel_cache._cc())
    monkeypatch.setattr(kernel_cache, "_provided", {})
    kernel_cache.provide({key: kernel_cache.pack(key, "tiled_matmul", b"\x7fELF not a cubin")})
    assert kernel_cache.compile_for(kernel, (a, a, a), identity) == "compiled, not cached"
    kernel[(n // tile, n // tile), (tile, tile)](a, a, a)
    cuda.synchronize()
