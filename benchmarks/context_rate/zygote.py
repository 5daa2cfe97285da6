"""A zygote: a Python that has imported NumPy and ``numba.cuda`` (no CUDA call yet) and forks
``N`` children, ``P`` at a time, each doing what ``one_python_child.py`` does after its imports
(a context, one small kernel compiled and launched). Prints one JSON line: children per second
and the phase medians (ms). Usage: ``python3 zygote.py N P`` (run one per GPU, each with its
own ``CUDA_VISIBLE_DEVICES``, inside bubblewrap to show it only its GPU's node)."""
import json, os, statistics, sys, time
t_start = time.monotonic()
from one_python_child import gpu_work  # NumPy and numba.cuda, imported once here
t_imported = time.monotonic()


def child(w) -> None:
    ctx, compiled, launched = gpu_work()
    os.write(w, (json.dumps({"ctx": ctx * 1e3, "compile": compiled * 1e3,
                             "launch": launched * 1e3}) + "\n").encode())
    os._exit(0)


def main(n: int, p: int) -> None:
    r, w = os.pipe()
    started = done = 0
    s = time.monotonic()
    while done < n:
        while started < n and started - done < p:
            if os.fork() == 0:
                os.close(r)
                child(w)
            started += 1
        os.wait()
        done += 1
    wall = time.monotonic() - s
    os.close(w)
    recs = [json.loads(ln) for ln in os.fdopen(r).read().splitlines() if ln.strip()]
    med = lambda key: round(statistics.median(x[key] for x in recs), 1) if recs else None
    print(json.dumps({"n": n, "p": p, "ok": len(recs), "wall_s": round(wall, 2),
                      "per_s": round(n / wall, 2), "import_s": round(t_imported - t_start, 2),
                      "p50_ctx_ms": med("ctx"), "p50_compile_ms": med("compile"),
                      "p50_launch_ms": med("launch")}), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
