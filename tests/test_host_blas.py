"""The grader's host arithmetic keeps going while other threads start children (see
autograder.host.blas): OpenBLAS's thread pool stalls beside fork() otherwise."""

import subprocess
import sys

SCENARIO = r"""
import subprocess, sys, threading, time
import numpy as np
if sys.argv[1] == "grader":
    from autograder.host.blas import single_threaded_blas
    single_threaded_blas()
PRODUCTS, SECONDS = 20, 60
done = {"products": 0, "spawned": 0}
finished = threading.Event()

def products():
    rng = np.random.default_rng(0)
    A, B = rng.random((1000, 300)), rng.random((300, 999))  # a float64 reference's size
    while not finished.is_set():
        A @ B
        done["products"] += 1
        if done["products"] >= PRODUCTS:
            finished.set()

def spawn():  # as the sandbox starts children: a preexec_fn, so subprocess forks
    while not finished.is_set():
        subprocess.run(["true"], preexec_fn=lambda: None)
        done["spawned"] += 1

workers = [threading.Thread(target=products, daemon=True) for _ in range(4)]
spawners = [threading.Thread(target=spawn) for _ in range(4)]
for t in workers + spawners:
    t.start()
finished.wait(SECONDS)
finished.set()
for t in spawners:
    t.join()
print(done["products"], done["spawned"])
"""


def test_references_keep_going_while_children_are_forked():
    """Four threads multiply reference-sized matrices while four others start children
    without pause: the products reach 20 within 60 s. (With OpenBLAS's own thread pool, none
    finished in 40 s in this project's measurements on 2 cores.)"""
    out = subprocess.run([sys.executable, "-c", SCENARIO, "grader"], capture_output=True,
                         text=True, timeout=120)  # a stall: TimeoutExpired, a failure
    assert out.returncode == 0, out.stderr
    products, spawned = map(int, out.stdout.split())
    assert products >= 20, (products, spawned)
    assert spawned >= 20, (products, spawned)  # the children were started meanwhile


def test_the_grader_limits_blas_to_one_thread_before_grading(tmp_path):
    from threadpoolctl import threadpool_info

    from autograder.grader import grade

    grade(tmp_path / "missing.py", "tiled_matmul", device="sim", preflight=False)
    blas = [p for p in threadpool_info() if p["user_api"] == "blas"]
    assert blas and all(p["num_threads"] == 1 for p in blas), blas


def test_children_get_one_blas_thread_whatever_the_graders_environment(monkeypatch):
    """OpenBLAS threads spin at NumPy's import (about 2 s of CPU per child on a 16-core host):
    every child's environment asks for one thread, even when the grader's asks for more."""
    from autograder.sandbox.limits import child_env
    from autograder.host.blas import ONE_THREAD_ENV

    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "16")
    monkeypatch.setenv("OMP_NUM_THREADS", "16")
    for backend in ("gpu", "sim", "compile"):
        env = child_env(backend)
        for key, value in ONE_THREAD_ENV.items():
            assert env[key] == value, (backend, key)


def test_the_command_line_sets_one_blas_thread_before_numpy_loads():
    """The ``autograder`` command's own process: the variables are set before NumPy is
    imported (a fresh interpreter that imports the CLI module)."""
    import subprocess
    import sys

    probe = ("import os, sys; import autograder.cli; "
             "print(os.environ.get('OPENBLAS_NUM_THREADS'), 'numpy' in sys.modules)")
    env = {k: v for k, v in __import__("os").environ.items()
           if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         env=env, check=True)
    assert out.stdout.split() == ["1", "True"]


def test_gpu_children_get_one_hardware_queue_unless_the_host_says_otherwise(monkeypatch):
    """A GPU child's CUDA context gets one work queue (cheaper to create; the children use one
    stream), the simulator's none of it, and an explicit setting of the host is kept."""
    from autograder.sandbox.limits import child_env

    monkeypatch.delenv("CUDA_DEVICE_MAX_CONNECTIONS", raising=False)
    assert child_env("gpu")["CUDA_DEVICE_MAX_CONNECTIONS"] == "1"
    assert "CUDA_DEVICE_MAX_CONNECTIONS" not in child_env("sim")
    monkeypatch.setenv("CUDA_DEVICE_MAX_CONNECTIONS", "4")
    assert child_env("gpu")["CUDA_DEVICE_MAX_CONNECTIONS"] == "4"
