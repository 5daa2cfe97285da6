"""Short student-facing messages from an instrumented-run report.

Each message is a dict: ``concept`` (barrier, race, bank_conflict, divergence, global_loads,
uninitialized, error), ``severity`` (error, warning, info), ``line`` and ``file`` (the first
location involved, to map to a notebook cell; None for a message about no line), ``locations`` (all of them, as
``{"file", "line"}``) and ``text``. ``where(file, line)`` renders a location in the text; the
default writes "line N", with the file's name for a file other than the kernel's.
"""

from __future__ import annotations

import os

from .bank_advice import advice

_SEVERITY = {"error": 0, "warning": 1, "info": 2}
_HAZARD = {"RAW": "read-after-write", "WAR": "write-after-read", "WAW": "write-after-write"}


def _default_where(kernel_file):
    def where(file, line):
        if file in (None, kernel_file):
            return f"line {line}"
        return f"{os.path.basename(file)}, line {line}"
    return where


def _thread(index, blockdim) -> str:
    if blockdim[1] == 1 and blockdim[2] == 1:
        return f"thread {index[0]}"
    if blockdim[2] == 1:
        return f"thread ({index[0]}, {index[1]})"
    return f"thread ({index[0]}, {index[1]}, {index[2]})"


def _times(n: int, word: str = "time") -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _element(array, index) -> str:
    return f"{array}[{', '.join(str(i) for i in index)}]"


def _msg(concept, severity, locs, text):
    first = locs[0] if locs else {}
    locations = []
    for loc in locs:
        loc = {"file": loc.get("file"), "line": loc["line"]}
        if loc not in locations:
            locations.append(loc)
    return {"concept": concept, "severity": severity, "line": first.get("line"),
            "file": first.get("file"), "locations": locations, "text": text}


def _barriers(report, where, file):
    out = []
    for b in report.get("divergent_barriers") or []:
        locs = [{**a, "file": a.get("file", file)} for a in b["arrivals"]]
        total = b["block_threads"]
        if len(locs) == 1:
            a = locs[0]
            fewer = (f" (down to {b['fewest_threads']} later)"
                     if b.get("fewest_threads", a["threads"]) < a["threads"] else "")
            text = (f"{where(a['file'], a['line'])}: this barrier is reached by only "
                    f"{a['threads']} of {total} threads of the block{fewer}; the other threads "
                    f"{'finish the kernel' if b['exited'] else 'wait elsewhere'} without "
                    f"it. Every thread of a block must reach the same cuda.syncthreads(): "
                    f"move it out of the if, or past the early return.")
        else:
            parts = ", ".join(f"{a['threads']} threads at {where(a['file'], a['line'])}"
                              for a in locs)
            if b["exited"]:
                parts += f", {b['exited']} finished"
            text = (f"{where(locs[0]['file'], locs[0]['line'])}: the threads of one block "
                    f"wait at different barriers ({parts}). Every thread of a "
                    f"block must reach the same cuda.syncthreads() call.")
        out.append(_msg("barrier", "error", locs, text))
    return out


def _races(report, where, file):
    grouped = {}
    for r in report.get("races") or []:
        pair = tuple(sorted((r["first"]["line"], r["second"]["line"])))
        grouped.setdefault((r["array"], pair, r.get("space", "shared"), r.get("scope", "block")),
                           []).append(r)
    out = []
    for (array, _, space, scope), races in grouped.items():
        r = races[0]
        a, b = r["first"], r["second"]
        fa, fb = a.get("file", file), b.get("file", file)
        verb = {"read": "reads", "write": "writes", "atomic": "updates"}
        kinds = "/".join(sorted({_HAZARD[x["kind"]] for x in races}))
        atomic = (", or update the element with cuda.atomic"
                  if any(x["kind"] == "WAW" for x in races) else "")
        who_b = _thread(b["thread"], report["blockdim"])
        who_a = _thread(a["thread"], report["blockdim"])
        if scope == "grid":
            who_b += f" of block {tuple(b.get('block', ()))}"
            who_a += f" of block {tuple(a.get('block', ()))}"
            between = ("in another block, with no fence protocol between them (blocks run in "
                       "any order)")
            fix = ("Let each element be written by one block only, or order the blocks: "
                   "cuda.threadfence() then an atomic in the block that goes first, an atomic "
                   "then cuda.threadfence() in the one that waits for it")
        else:
            between = "with no cuda.syncthreads() in between"
            fix = f"Put a cuda.syncthreads() between them{atomic}"
        text = (f"{where(fb, b['line'])}: race on {space} array {array}: "
                f"{who_b} {verb[b['access']]} "
                f"{_element(array, r['index'])} at {where(fb, b['line'])} while "
                f"{who_a} {verb[a['access']]} it at "
                f"{where(fa, a['line'])}, {between} ({kinds}, "
                f"{_times(sum(x['count'] for x in races))}). {fix}.")
        out.append(_msg("race", "error", [{"line": b["line"], "file": fb},
                                          {"line": a["line"], "file": fa}], text))
    return out


def _uninitialized(report, where, file):
    out = []
    for e in report.get("uninitialized_reads") or []:
        f = e.get("file", file)
        text = (f"{where(f, e['line'])}: {_thread(e['thread'], report['blockdim'])} of block "
                f"{tuple(e['block'])} reads {_element(e['array'], e['index'])}, which no thread "
                f"of its block wrote ({_times(e['count'], 'read')} at this line): its value is "
                f"whatever the memory held. Write every shared element a thread reads (a "
                f"halo, a partial tile's padding) before the barrier that precedes the read.")
        out.append(_msg("uninitialized", "error", [{"line": e["line"], "file": f}], text))
    return out


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _banks(report, where, file):
    out = []
    for c in report.get("bank_conflicts") or []:
        f = c.get("file", file)
        verb = "reading" if c["access"] == "read" else "writing"
        text = (f"{where(f, c['line'])}: {verb} {c['array']} is a {c['max_ways']}-way "
                f"shared-memory bank conflict ({c['conflicted_instructions']} of "
                f"{c['instructions']} warp accesses conflict): the lanes of a warp hit the "
                f"same bank at different addresses. {_capital(advice(c))}.")
        out.append(_msg("bank_conflict", "warning", [{"line": c["line"], "file": f}], text))
    return out


def _divergence(report, where, file, min_fraction):
    out = []
    div = report.get("divergent_branches") or {}
    for d in div.get("by_line", []):
        if d["divergent"] < min_fraction * d["warp_branches"]:
            continue
        f = d.get("file", file)
        text = (f"{where(f, d['line'])}: this branch splits warps {_times(d['divergent'])} "
                f"out of {d['warp_branches']} (lanes of one warp take different sides, so the warp "
                f"runs both). Arrange the work so whole warps take the same side.")
        out.append(_msg("divergence", "info", [{"line": d["line"], "file": f}], text))
    return out


def _loads(report, max_per_output):
    per = report.get("global_loads_per_output")
    if per is None or max_per_output is None or per <= max_per_output:
        return []
    g = report["global_loads"]
    outputs = sum(g["outputs_written"].values())
    text = (f"each output element costs {per:g} global-memory loads ({g['loads']} loads "
            f"for {_times(outputs, 'element')}); at most {max_per_output:g} are expected. "
            f"Load tiles into shared memory once and reuse them.")
    return [_msg("global_loads", "warning",
                 [{"file": report.get("file"), **loc} for loc in g["by_line"]], text)]


def messages(report: dict, where=None, max_loads_per_output: float | None = None,
             min_divergent_fraction: float = 0.25) -> list[dict]:
    """Student-facing messages for ``report``, errors first, then by line. A branch line is
    mentioned when at least ``min_divergent_fraction`` of its warp executions diverge; loads per
    output element are mentioned (as a warning) only above ``max_loads_per_output``."""
    file = report.get("file")
    where = where or _default_where(file)
    out = []
    err = report.get("error")
    if err:
        loc = err.get("where") or {}
        at = f"{where(loc.get('file', file), loc['line'])}: " if loc else ""
        text = (f"{at}the instrumented run stopped: {err['message']} "
                f"({_thread(err['thread'], report['blockdim'])}, block {tuple(err['block'])}).")
        out.append(_msg("error", "error", [loc] if loc else [], text))
    out += _barriers(report, where, file)
    out += _races(report, where, file)
    out += _uninitialized(report, where, file)
    out += _banks(report, where, file)
    out += _divergence(report, where, file, min_divergent_fraction)
    out += _loads(report, max_loads_per_output)
    for m in out:
        for loc in [m] + m["locations"]:
            if loc["line"] is not None and loc["file"] is None:
                loc["file"] = file
    return sorted(out, key=lambda m: (_SEVERITY[m["severity"]],
                                      m["line"] if m["line"] is not None else 1 << 30))
