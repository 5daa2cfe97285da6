"""How many processes per second this host can start that use CUDA: M processes, P at once,
spread over the GPUs given (issue 13's two-GPU goal; results in
``benchmarks/results/2026-11-23_2xH200_session6.md``).

Each process is ``one_context.py`` (ctypes on ``libcuda``: ``cuInit``, the primary context, a
1 MiB allocation; ``init`` stops after ``cuInit``) or ``one_python_child.py`` (what a GPU child
does at least: NumPy and ``numba.cuda``, a context, one small kernel compiled and launched).
``WRAP`` in a trial's environment runs it in bubblewrap showing every GPU's device node
(``all``) or only its own (``own``, as :mod:`autograder.sandbox.gpu_nodes` does). Every row prints
processes per second, phase medians (ms) and the host's CPU shares over the trial. The phases
are ``init``, ``ctx``, ``alloc`` and ``rel``; for ``one_python_child.py`` they are the imports,
the context, the compile and the launch.

Usage (on the device, numba's wheels on PYTHONPATH, ``bwrap`` on PATH for ``wrap``)::

    python3 benchmarks/context_rate/probe.py OUT.json [all|py|wrap|pyown]
"""

from __future__ import annotations

import glob
import json
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
#: The driver's shared nodes (nvidiactl, nvidia-uvm, ...): every node but the GPUs' own.
SHARED_NODES = [n for n in glob.glob("/dev/nvidia*") if not n[len("/dev/nvidia"):].isdigit()]
ONE_QUEUE = {"CUDA_DEVICE_MAX_CONNECTIONS": "1"}
PYTHON_CHILD = "one_python_child.py"


def _command(gpu, mode: str, script: str, env: dict) -> list[str]:
    """The process's command line, in bubblewrap when ``env`` has ``WRAP`` (which it loses)."""
    cmd = [sys.executable] + (["-S"] if script == "one_context.py" else []) + [
        os.path.join(HERE, script), mode]
    wrap = env.pop("WRAP", None)
    if not wrap:
        return cmd
    if wrap == "all":
        nodes = SHARED_NODES + sorted(glob.glob("/dev/nvidia[0-9]*"))
    else:  # its own GPU's node only, which is then its device 0
        nodes = SHARED_NODES + [f"/dev/nvidia{gpu}"]
        env["CUDA_VISIBLE_DEVICES"] = "0"
    bwrap = ["bwrap", "--die-with-parent", "--bind", "/", "/", "--proc", "/proc", "--dev", "/dev"]
    for node in nodes:
        bwrap += ["--dev-bind", node, node]
    return bwrap + ["--"] + cmd


def one(gpu, mode: str, extra_env: dict, script: str) -> dict:
    """Run one process on ``gpu``; its JSON line, with ``wall`` and ``exit_after_end`` (ms),
    or ``{"err": ...}``."""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(gpu), **extra_env)
    cmd = _command(gpu, mode, script, env)
    start = time.monotonic()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    end = time.monotonic()
    try:
        rec = json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        rec = {"err": out.stderr[-300:]}
    rec["wall"] = (end - start) * 1e3
    rec["exit_after_end"] = (end - rec.get("end", end)) * 1e3
    return rec


def cpu() -> tuple[int, int, int, int]:
    """The host's CPU ticks so far: user, system, idle (with iowait), all."""
    v = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    return v[0] + v[1], v[2], v[3] + v[4], sum(v)


def trial(name: str, gpus: list, P: int, M: int, mode: str = "ctx",
          extra_env: dict | None = None, script: str = "one_context.py") -> dict:
    """``M`` processes, ``P`` at a time, process i on ``gpus[i % len(gpus)]``; prints and
    returns the row."""
    extra_env = extra_env or {}
    on = [gpus[i % len(gpus)] for i in range(M)]
    c0 = cpu()
    start = time.monotonic()
    with ThreadPoolExecutor(P) as ex:
        recs = list(ex.map(lambda g: one(g, mode, extra_env, script), on))
    wall = time.monotonic() - start
    c1 = cpu()
    total = c1[3] - c0[3]
    share = {k: round(100 * (c1[i] - c0[i]) / total, 1)
             for i, k in enumerate(("user%", "sys%", "idle%"))}
    print("buses", sorted({(str(g), r.get("bus")) for g, r in zip(on, recs)}), file=sys.stderr)
    errs = [r for r in recs if "err" in r]
    ok = [r for r in recs if "err" not in r]

    def med(key):
        return round(statistics.median(r[key] for r in ok), 1) if ok else None

    row = {"name": name, "gpus": gpus, "P": P, "M": M, "mode": mode, "env": extra_env,
           "wall_s": round(wall, 2), "per_s": round(M / wall, 2), "errors": len(errs),
           "err0": errs[0]["err"] if errs else None,
           "p50_init_ms": med("init"), "p50_ctx_ms": med("ctx"), "p50_alloc_ms": med("alloc"),
           "p50_wall_ms": med("wall"), "p50_exit_ms": med("exit_after_end"), **share}
    print(json.dumps(row), flush=True)
    return row


def trials_all() -> list[dict]:
    """Bare contexts (no sandbox): 1 or 2 GPUs, 12 or 24 at a time, and the settings tried."""
    rows = [trial("serial 1 gpu", [0], 1, 12, extra_env=ONE_QUEUE),
            trial("init only, 1 gpu, P12", [0], 12, 96, mode="init", extra_env=ONE_QUEUE),
            trial("ctx, 1 gpu, P12", [0], 12, 96, extra_env=ONE_QUEUE),
            trial("ctx, 2 gpus, P24", [0, 1], 24, 120, extra_env=ONE_QUEUE),
            trial("ctx, 2 gpus, P12", [0, 1], 12, 96, extra_env=ONE_QUEUE),
            trial("ctx, 1 gpu, P24", [0], 24, 120, extra_env=ONE_QUEUE),
            trial("ctx+release, 2 gpus, P24", [0, 1], 24, 120, mode="release",
                  extra_env=ONE_QUEUE),
            trial("ctx default conns, 2 gpus, P24", [0, 1], 24, 120),
            trial("ctx, both visible, 2 gpus, P24", ["0,1", "1,0"], 24, 120,
                  extra_env=ONE_QUEUE)]
    for extra in ({"CUDA_MODULE_LOADING": "EAGER"},
                  {"CUDA_LAUNCH_BLOCKING": "0", "CUDA_DEVICE_MAX_CONNECTIONS": "1",
                   "CUDA_MODULE_LOADING": "LAZY"}):
        rows.append(trial(f"ctx {extra}, 2 gpus, P24", [0, 1], 24, 120,
                          extra_env=dict(ONE_QUEUE, **extra)))
    return rows


def trials_py() -> list[dict]:
    """Fresh Python children (no sandbox)."""
    env = dict(ONE_QUEUE, OPENBLAS_NUM_THREADS="1")
    return [trial("py serial", [0], 1, 6, extra_env=env, script=PYTHON_CHILD),
            trial("py 1 gpu P12", [0], 12, 72, extra_env=env, script=PYTHON_CHILD),
            trial("py 2 gpus P24", [0, 1], 24, 144, extra_env=env, script=PYTHON_CHILD),
            trial("py 1 gpu P24", [0], 24, 144, extra_env=env, script=PYTHON_CHILD)]


def trials_pyown() -> list[dict]:
    """Fresh Python children in bubblewrap with their own node (beside ``zygote.py``)."""
    env = dict(ONE_QUEUE, WRAP="own", OPENBLAS_NUM_THREADS="1")
    return [trial("py bwrap own 1 gpu P12", [0], 12, 72, extra_env=env, script=PYTHON_CHILD),
            trial("py bwrap own 2 gpus P24", [0, 1], 24, 144, extra_env=env,
                  script=PYTHON_CHILD)]


def trials_wrap() -> list[dict]:
    """In bubblewrap: every GPU's node against the process's own."""
    rows = []
    for wrap in ("all", "own"):
        env = dict(ONE_QUEUE, WRAP=wrap)
        rows += [trial(f"bwrap {wrap} serial", [0], 1, 8, extra_env=env),
                 trial(f"bwrap {wrap} 1 gpu P12", [0], 12, 96, extra_env=env),
                 trial(f"bwrap {wrap} 2 gpus P24", [0, 1], 24, 144, extra_env=env),
                 trial(f"bwrap {wrap} init only 2 gpus P24", [0, 1], 24, 144, mode="init",
                       extra_env=env)]
    rows += trials_pyown()
    env = dict(ONE_QUEUE, WRAP="own", OPENBLAS_NUM_THREADS="1")
    rows.append(trial("py bwrap own 2 gpus P24 osexit", [0, 1], 24, 144, mode="osexit",
                      extra_env=env, script=PYTHON_CHILD))
    rows.append(trial("py 2 gpus P24 osexit (no bwrap)", [0, 1], 24, 144, mode="osexit",
                      extra_env=dict(ONE_QUEUE, OPENBLAS_NUM_THREADS="1"), script=PYTHON_CHILD))
    return rows


TRIALS = {"all": trials_all, "py": trials_py, "wrap": trials_wrap, "pyown": trials_pyown}

if __name__ == "__main__":
    rows = TRIALS[sys.argv[2] if len(sys.argv) > 2 else "all"]()
    with open(sys.argv[1], "w") as f:
        json.dump(rows, f, indent=1)
