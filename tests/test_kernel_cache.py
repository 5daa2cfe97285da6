"""The host's cache of compiled kernels (autograder.host.kernel_cache): what its keys tell apart, who
may write it, what a child sees of it, and that no failure of it changes a grading (a miss
compiles). Loading a real compiled kernel needs a GPU: benchmarks/gpu_checks.sh checks that a
timed child on a GPU finds the instructor's kernel in the cache (``instructor_cached``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.host import kernel_cache
from autograder.grading import preflight
from autograder.wire import protocol
from autograder.grading import reference_warmup
from autograder.sandbox import mode as sandbox_mode
from autograder.sandbox import run as sandbox_run
from autograder.sandbox.limits import child_env
from autograder.exercises import get, solution_path


class FakeCompiled:
    """What numba-cuda's compile returns, as far as the cache touches it."""

    def __init__(self, name: str):
        self.name = name

    def _reduce_states(self) -> dict:
        return {"name": self.name}


class FakeKernel:
    """A dispatcher: counts compiles, records overloads added from the cache."""

    def __init__(self, lineinfo: bool = True):
        self.targetoptions = {"lineinfo": lineinfo}
        self.compiles: list = []
        self.overloads: dict = {}

    def compile(self, argtypes):
        self.compiles.append(argtypes)
        return FakeCompiled("k")

    def add_overload(self, compiled, argtypes):
        self.overloads[argtypes] = compiled


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "kernels"
    folder.mkdir()
    monkeypatch.setenv(kernel_cache.CACHE_ENV, str(folder))
    monkeypatch.delenv(kernel_cache.WRITE_ENV, raising=False)
    monkeypatch.setattr(kernel_cache, "_argtypes",
                        lambda args: tuple(type(a).__name__ for a in args))
    monkeypatch.setattr(kernel_cache, "_cc", lambda: (9, 0))
    monkeypatch.setattr(kernel_cache, "events", [])
    return folder


def test_keys_tell_apart_what_the_compiled_code_depends_on():
    key = kernel_cache.entry_key
    base = key("id", ("float32[:, ::1]",), {"lineinfo": True}, (9, 0))
    assert base == key("id", ("float32[:, ::1]",), {"lineinfo": True}, (9, 0))
    assert len({base,
                key("other", ("float32[:, ::1]",), {"lineinfo": True}, (9, 0)),
                key("id", ("float64[:, ::1]",), {"lineinfo": True}, (9, 0)),
                key("id", ("float32[:, ::1]",), {"lineinfo": False}, (9, 0)),
                key("id", ("float32[:, ::1]",), {"lineinfo": True}, (8, 0))}) == 5


def test_the_instructors_kernel_at_other_constants_is_another_entry():
    """Numba's own file cache ignores module globals such as TILE_WIDTH; this one does not."""
    text = solution_path(get("tiled_matmul")).read_text()
    same = kernel_cache.solution_identity(text, "tiled_matmul", {"TILE_WIDTH": 16})
    assert same == kernel_cache.solution_identity(text, "tiled_matmul", {"TILE_WIDTH": 16})
    assert same != kernel_cache.solution_identity(text, "tiled_matmul", {"TILE_WIDTH": 32})
    assert same != kernel_cache.solution_identity(text + "\n", "tiled_matmul",
                                                  {"TILE_WIDTH": 16})


def test_the_warm_up_saves_and_a_child_only_reads(cache, monkeypatch):
    monkeypatch.setenv(kernel_cache.WRITE_ENV, "1")
    warm = FakeKernel()
    kernel_cache.compile_for(warm, [1.0, 2], "solution:x")
    saved = list(cache.glob(f"*{kernel_cache.SUFFIX}"))
    assert len(saved) == 1 and warm.compiles == [("float", "int")]
    assert kernel_cache.events == [("solution:x", "compiled")]

    monkeypatch.delenv(kernel_cache.WRITE_ENV)
    loaded = []
    monkeypatch.setattr(kernel_cache, "load",
                        lambda kernel, argtypes, key: loaded.append(key) or True)
    child = FakeKernel()
    kernel_cache.compile_for(child, [1.0, 2], "solution:x")
    assert child.compiles == [] and loaded == [saved[0].name[:-len(kernel_cache.SUFFIX)]]
    assert kernel_cache.events[-1] == ("solution:x", "loaded")


def test_a_child_writes_nothing_and_a_bad_entry_is_a_miss(cache):
    child = FakeKernel()
    kernel_cache.compile_for(child, [1.0], "solution:y")
    assert child.compiles == [("float",)] and not list(cache.iterdir())
    assert kernel_cache.events == [("solution:y", "compiled, not cached")]

    key = kernel_cache.entry_key("solution:y", ("float",), child.targetoptions, (9, 0))
    (cache / f"{key}{kernel_cache.SUFFIX}").write_bytes(b"not a pickle")
    again = FakeKernel()
    kernel_cache.compile_for(again, [1.0], "solution:y")
    assert again.compiles == [("float",)] and again.overloads == {}


def test_without_identity_or_folder_the_kernel_is_compiled(cache, monkeypatch):
    k = FakeKernel()
    kernel_cache.compile_for(k, [1], None)
    monkeypatch.delenv(kernel_cache.CACHE_ENV)
    kernel_cache.compile_for(k, [1], "solution:z")
    assert k.compiles == [("int",), ("int",)] and kernel_cache.events == []


def _timed_request(text: str = "KERNEL = 1\n") -> dict:
    return {"timing": {"solution_source": text}}


def test_only_a_timed_gpu_child_in_bubblewrap_is_shown_the_folder(tmp_path, monkeypatch):
    monkeypatch.setenv(preflight.CACHE_ENV, str(tmp_path))
    folder = kernel_cache.host_folder("KERNEL = 1\n")
    assert folder.parent == tmp_path / "kernels"
    assert sandbox_run._shown_kernel_cache(_timed_request(), "gpu", True) is None  # not made yet
    folder.mkdir(parents=True)
    assert sandbox_run._shown_kernel_cache(_timed_request(), "gpu", True) == folder.resolve()
    assert sandbox_run._shown_kernel_cache(_timed_request(), "gpu", False) is None  # plain
    assert sandbox_run._shown_kernel_cache(_timed_request(), "sim", True) is None
    assert sandbox_run._shown_kernel_cache({"timing": None}, "gpu", True) is None  # a sanitizer run
    # one folder per solution: a child sees its own exercise's kernels only
    assert kernel_cache.host_folder("OTHER = 2\n") != folder
    monkeypatch.setenv(preflight.CACHE_SWITCH_ENV, "off")
    assert kernel_cache.host_folder("KERNEL = 1\n") is None


def test_the_child_cannot_write_the_folder_it_is_shown(tmp_path):
    if not sandbox_mode.sandbox_status().available:
        pytest.skip(f"needs bubblewrap: {sandbox_mode.sandbox_status().reason}")
    shown = tmp_path / "cache" / "kernels" / "abc"
    shown.mkdir(parents=True)
    (shown / f"entry{kernel_cache.SUFFIX}").write_bytes(b"compiled")
    work = tmp_path / "work"
    work.mkdir()
    probe = ("import os, sys\n"
             "d = sys.argv[1]\n"
             "print(open(os.path.join(d, 'entry.kernel'), 'rb').read().decode())\n"
             "for act in (lambda: open(os.path.join(d, 'x.kernel'), 'wb'),\n"
             "            lambda: os.remove(os.path.join(d, 'entry.kernel'))):\n"
             "    try:\n        act(); print('written')\n"
             "    except OSError as exc:\n        print('refused', exc.errno)\n")
    bwrap = sandbox_run._command("sim", 3, work, True, read_only=(shown.resolve(),))
    cmd = bwrap[:bwrap.index("--")] + ["--", sys.executable, "-P", "-c", probe,
                                       str(shown.resolve())]
    out = subprocess.run(cmd, capture_output=True, text=True, env=child_env("sim"),
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "compiled"
    assert out.stdout.splitlines()[1:] == ["refused 30", "refused 30"]  # EROFS, both
    assert sorted(p.name for p in shown.iterdir()) == [f"entry{kernel_cache.SUFFIX}"]


def test_the_preflight_warms_up_on_a_gpu_only(monkeypatch):
    warmed = []
    monkeypatch.setattr(reference_warmup, "warm", lambda exercise: warmed.append(exercise.name))
    with preflight._warming_up("tiled_matmul", "sim"):
        pass
    assert warmed == []
    with preflight._warming_up("tiled_matmul", "gpu"):
        pass
    assert warmed == ["tiled_matmul"]


def test_a_warm_up_that_cannot_run_gives_a_reason_and_raises_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv(preflight.CACHE_ENV, str(tmp_path))
    assert reference_warmup.warm(get("occupancy")) is None  # no timing test: nothing to do
    monkeypatch.setattr(reference_warmup, "WARMUP_TIMEOUT_S", 120.0)
    env_python = tmp_path / "python"
    env_python.write_text("#!/bin/sh\necho 'CudaSupportError: no CUDA driver' >&2\nexit 1\n")
    env_python.chmod(0o755)
    monkeypatch.setattr(reference_warmup.sys, "executable", str(env_python))
    why = reference_warmup.warm(get("tiled_matmul"))
    assert why == "CudaSupportError: no CUDA driver"
    folder = kernel_cache.host_folder(solution_path(get("tiled_matmul")).read_text())
    assert folder.is_dir() and not list(folder.iterdir())
    monkeypatch.setenv(preflight.CACHE_SWITCH_ENV, "off")
    assert "turned off" in reference_warmup.warm(get("tiled_matmul"))


def test_the_timing_record_says_where_the_instructors_kernel_came_from():
    rec = protocol.TimingSamples([1.0], [1.0], [1.0], [1.0], 3, 0.1, instructor_cached=True)
    back = protocol.TimingSamples.from_header(rec.to_header())
    assert back.instructor_cached is True
    old = {k: v for k, v in rec.to_header().items() if k != "instructor_cached"}
    assert protocol.TimingSamples.from_header(old).instructor_cached is None
    with pytest.raises(protocol.ProtocolError):
        protocol.TimingSamples.from_header({**rec.to_header(), "instructor_cached": "yes"})


def test_the_early_driver_start_is_harmless_without_a_driver(tmp_path):
    """A GPU child starts the CUDA driver in a thread while it imports Numba; where there is no
    driver (this CI machine, or a broken setup) that thread ends quietly and Numba's own import
    and error reporting are what they were."""
    from autograder.child import device as child_device

    probe = tmp_path / "probe.py"
    probe.write_text(
        "from autograder.child.device import start_driver_early\n"
        "thread = start_driver_early()\n"
        "thread.join(30)\n"
        "print('alive' if thread.is_alive() else 'ended')\n")
    out = subprocess.run([sys.executable, str(probe)], capture_output=True, text=True,
                         timeout=60, cwd=str(Path(child_device.__file__).parents[1]))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ended" and out.stderr == ""


def test_the_warm_up_removes_folders_no_warm_up_used_for_a_month(tmp_path, monkeypatch):
    """One folder per instructor solution: an edited solution's old folder goes once no warm-up
    has used it for CACHE_MAX_AGE_S; the folder in use is touched by each warm-up, so it stays."""
    import time

    from autograder.host.cache_folder import CACHE_MAX_AGE_S

    monkeypatch.setenv(preflight.CACHE_ENV, str(tmp_path))
    ours = kernel_cache.host_folder(solution_path(get("tiled_matmul")).read_text())
    stale, recent = ours.parent / "stale", ours.parent / "recent"
    for folder in (ours, stale, recent):
        folder.mkdir(parents=True)
        (folder / f"k{kernel_cache.SUFFIX}").write_bytes(b"compiled")
    month_ago = time.time() - CACHE_MAX_AGE_S - 3600
    for folder in (ours, stale):
        os.utime(folder, (month_ago, month_ago))
    failing = tmp_path / "python"
    failing.write_text("#!/bin/sh\nexit 1\n")
    failing.chmod(0o755)
    monkeypatch.setattr(reference_warmup.sys, "executable", str(failing))
    reference_warmup.warm(get("tiled_matmul"))  # fails to compile; prunes all the same
    assert sorted(p.name for p in ours.parent.iterdir()) == sorted([ours.name, "recent"])
    assert (ours / f"k{kernel_cache.SUFFIX}").exists()
