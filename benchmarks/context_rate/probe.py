"""How many processes per second this host can start that use CUDA: M processes, P at once,
spread over the GPUs given (issue 13's two-GPU goal; results in
``benchmarks/results/2026-11-23_2xH200_session6.md``).

Each process is ``one_context.py`` (ctypes on ``libcuda``: ``cuInit``, the primary context, a
1 MiB allocation; ``init`` stops after ``cuInit``) or ``one_python_child.py`` (what a GPU child
does at least: NumPy and ``numba.cuda``, a context, one small kernel compiled and launched).
``WRAP`` in a trial's environment runs it in bubblewrap showing every GPU's device node
(``all``) or only its own (``own``, as :mod:`autograder.gpu_nodes` does). Every row prints
processes per second, phase medians (ms) and the host's CPU shares over the trial.

Usage (on the device, numba's wheels on PYTHONPATH, ``bwrap`` on PATH for ``wrap``)::

    python3 benchmarks/context_rate/probe.py OUT.json [all|py|wrap|pyown]
"""
import json, os, statistics, subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor
HERE = os.path.dirname(os.path.abspath(__file__))
import glob
NODES = [n for n in glob.glob("/dev/nvidia*") if not n[len("/dev/nvidia"):].isdigit()]
def one(gpu, mode, extra_env, script):
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(gpu), **extra_env)
    cmd = [sys.executable, "-S", os.path.join(HERE, script), mode] if script == "one_context.py" else [sys.executable, os.path.join(HERE, script), mode]
    wrap = env.pop("WRAP", None)
    if wrap:
        nodes = NODES + (sorted(glob.glob("/dev/nvidia[0-9]*")) if wrap == "all" else [f"/dev/nvidia{gpu}"])
        if wrap != "all":
            env["CUDA_VISIBLE_DEVICES"] = "0"
        b = ["bwrap", "--die-with-parent", "--bind", "/", "/", "--proc", "/proc", "--dev", "/dev"]
        for n in nodes:
            b += ["--dev-bind", n, n]
        cmd = b + ["--"] + cmd
    s = time.monotonic()
    out = subprocess.run(cmd,
                         env=env, capture_output=True, text=True)
    e = time.monotonic()
    try:
        rec = json.loads(out.stdout.strip().splitlines()[-1])
    except Exception:
        rec = {"err": out.stderr[-300:]}
    rec["wall"] = (e - s) * 1e3; rec["exit_after_end"] = (e - rec.get("end", e)) * 1e3
    return rec
def cpu():
    v = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    return v[0] + v[1], v[2], v[3] + v[4], sum(v)
def trial(name, gpus, P, M, mode="ctx", extra_env=None, script="one_context.py"):
    extra_env = extra_env or {}
    c0 = cpu()
    s = time.monotonic()
    with ThreadPoolExecutor(P) as ex:
        recs = list(ex.map(lambda i: one(gpus[i % len(gpus)], mode, extra_env, script), range(M)))
    wall = time.monotonic() - s
    c1 = cpu(); tot = c1[3] - c0[3]
    share = {k: round(100 * (c1[i] - c0[i]) / tot, 1) for i, k in enumerate(("user%", "sys%", "idle%"))}
    errs = [r for r in recs if "err" in r]
    print("buses", sorted({(str(g), r.get("bus")) for g, r in zip([gpus[i % len(gpus)] for i in range(M)], recs)}), file=sys.stderr)
    ok = [r for r in recs if "err" not in r]
    med = lambda k: round(statistics.median(r[k] for r in ok), 1) if ok else None
    row = {"name": name, "gpus": gpus, "P": P, "M": M, "mode": mode, "env": extra_env, "wall_s": round(wall, 2),
           "per_s": round(M / wall, 2), "errors": len(errs), "err0": errs[0]["err"] if errs else None,
           "p50_init_ms": med("init"), "p50_ctx_ms": med("ctx"), "p50_alloc_ms": med("alloc"),
           "p50_wall_ms": med("wall"), "p50_exit_ms": med("exit_after_end"), **share}
    print(json.dumps(row), flush=True)
    return row
if __name__ == "__main__":
    rows = []
    which = sys.argv[2] if len(sys.argv) > 2 else "all"
    if which == "py":
        one1 = {"CUDA_DEVICE_MAX_CONNECTIONS": "1", "OPENBLAS_NUM_THREADS": "1"}
        rows.append(trial("py serial", [0], 1, 6, extra_env=one1, script="one_python_child.py"))
        rows.append(trial("py 1 gpu P12", [0], 12, 72, extra_env=one1, script="one_python_child.py"))
        rows.append(trial("py 2 gpus P24", [0, 1], 24, 144, extra_env=one1, script="one_python_child.py"))
        rows.append(trial("py 1 gpu P24", [0], 24, 144, extra_env=one1, script="one_python_child.py"))
        json.dump(rows, open(sys.argv[1], "w"), indent=1)
        raise SystemExit
    one1 = {"CUDA_DEVICE_MAX_CONNECTIONS": "1"}
    if which == "pyown":  # the fresh-Python rows of "wrap" alone (beside zygote.py)
        e = {"CUDA_DEVICE_MAX_CONNECTIONS": "1", "WRAP": "own", "OPENBLAS_NUM_THREADS": "1"}
        rows.append(trial("py bwrap own 1 gpu P12", [0], 12, 72, extra_env=e, script="one_python_child.py"))
        rows.append(trial("py bwrap own 2 gpus P24", [0, 1], 24, 144, extra_env=e, script="one_python_child.py"))
        json.dump(rows, open(sys.argv[1], "w"), indent=1)
        raise SystemExit
    if which == "wrap":
        for w in ("all", "own"):
            e = dict(one1, WRAP=w)
            rows.append(trial(f"bwrap {w} serial", [0], 1, 8, extra_env=e))
            rows.append(trial(f"bwrap {w} 1 gpu P12", [0], 12, 96, extra_env=e))
            rows.append(trial(f"bwrap {w} 2 gpus P24", [0, 1], 24, 144, extra_env=e))
            rows.append(trial(f"bwrap {w} init only 2 gpus P24", [0, 1], 24, 144, mode="init", extra_env=e))
        e = dict(one1, WRAP="own", OPENBLAS_NUM_THREADS="1")
        rows.append(trial("py bwrap own 1 gpu P12", [0], 12, 72, extra_env=e, script="one_python_child.py"))
        rows.append(trial("py bwrap own 2 gpus P24", [0, 1], 24, 144, extra_env=e, script="one_python_child.py"))
        rows.append(trial("py bwrap own 2 gpus P24 osexit", [0, 1], 24, 144, mode="osexit", extra_env=e, script="one_python_child.py"))
        e = dict(one1, OPENBLAS_NUM_THREADS="1")
        rows.append(trial("py 2 gpus P24 osexit (no bwrap)", [0, 1], 24, 144, mode="osexit", extra_env=e, script="one_python_child.py"))
        json.dump(rows, open(sys.argv[1], "w"), indent=1)
        raise SystemExit
    rows.append(trial("serial 1 gpu", [0], 1, 12, extra_env=one1))
    rows.append(trial("init only, 1 gpu, P12", [0], 12, 96, mode="init", extra_env=one1))
    rows.append(trial("ctx, 1 gpu, P12", [0], 12, 96, extra_env=one1))
    rows.append(trial("ctx, 2 gpus, P24", [0, 1], 24, 120, extra_env=one1))
    rows.append(trial("ctx, 2 gpus, P12", [0, 1], 12, 96, extra_env=one1))
    rows.append(trial("ctx, 1 gpu, P24", [0], 24, 120, extra_env=one1))
    rows.append(trial("ctx+release, 2 gpus, P24", [0, 1], 24, 120, mode="release", extra_env=one1))
    rows.append(trial("ctx default conns, 2 gpus, P24", [0, 1], 24, 120))
    rows.append(trial("ctx, both visible, 2 gpus, P24", ["0,1", "1,0"], 24, 120, extra_env=one1))
    for extra in ({"CUDA_MODULE_LOADING": "EAGER"}, {"CUDA_LAUNCH_BLOCKING": "0", "CUDA_DEVICE_MAX_CONNECTIONS": "1", "CUDA_MODULE_LOADING": "LAZY"}):
        rows.append(trial(f"ctx {extra}, 2 gpus, P24", [0, 1], 24, 120, extra_env=dict(one1, **extra)))
    json.dump(rows, open(sys.argv[1], "w"), indent=1)
