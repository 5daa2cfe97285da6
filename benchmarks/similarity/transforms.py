"""The edits students make to disguise a copied kernel, as functions of source text
(deterministic for a seed): each takes the code and returns it changed."""

from __future__ import annotations

import ast
import json
import random
import re

KEEP = {"cuda", "numba", "float32", "float64", "int32", "np", "math", "range", "min", "max",
        "abs", "int", "float", "len", "True", "False", "None"}

NEW_NAMES = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota", "kappa",
             "lam", "mu", "nu", "xi", "omic", "pi_", "rho", "sigma", "tau", "ups", "phi", "chi",
             "psi", "omega", "q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8"]


def _strip(text: str) -> ast.Module:
    tree = ast.parse(text)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and \
                isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            body.pop(0)
    return tree


def rename(text: str, rng: random.Random) -> str:
    """Every local name, parameter and helper function renamed (the contract's names kept)."""
    tree = _strip(text)
    contract = {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and
                any("jit" in ast.unparse(d) and "device" not in ast.unparse(d)
                    for d in n.decorator_list)}
    constants = {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets
                 if isinstance(t, ast.Name)}
    names = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} |
                   {a.arg for n in ast.walk(tree) if isinstance(n, ast.arg) for a in [n]} |
                   {n.name for n in tree.body if isinstance(n, ast.FunctionDef)})
    names = [n for n in names if n not in KEEP and n not in contract and n not in constants]
    pool = NEW_NAMES[:]
    rng.shuffle(pool)
    mapping = dict(zip(names, pool))

    class R(ast.NodeTransformer):
        def visit_Name(self, node):
            node.id = mapping.get(node.id, node.id)
            return node

        def visit_arg(self, node):
            node.arg = mapping.get(node.arg, node.arg)
            return node

        def visit_FunctionDef(self, node):
            node.name = mapping.get(node.name, node.name)
            self.generic_visit(node)
            return node
    return ast.unparse(R().visit(tree)) + "\n"


def reorder(text: str, rng: random.Random) -> str:
    """Adjacent independent assignments swapped, in every block."""
    tree = _strip(text)

    def rw(s):
        reads = {n.id for n in ast.walk(s) if isinstance(n, ast.Name) and
                 isinstance(n.ctx, ast.Load)}
        writes = {n.id for n in ast.walk(s) if isinstance(n, ast.Name) and
                  not isinstance(n.ctx, ast.Load)}
        return reads, writes

    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list) or isinstance(node, ast.Module):
            continue
        i = 0
        while i + 1 < len(body):
            a, b = body[i], body[i + 1]
            if isinstance(a, ast.Assign) and isinstance(b, ast.Assign) and \
                    not isinstance(a.value, ast.Call) and not isinstance(b.value, ast.Call):
                ra, wa = rw(a)
                rb, wb = rw(b)
                if not (wa & (rb | wb) or ra & wb):
                    body[i], body[i + 1] = b, a
                    i += 2
                    continue
            i += 1
    return ast.unparse(tree) + "\n"


def reindent(text: str, rng: random.Random) -> str:
    """Two-space indentation, blank lines moved."""
    out = []
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        depth = (len(line) - len(stripped)) // 4
        if stripped:
            out.append("  " * depth + stripped)
        if rng.random() < 0.2:
            out.append("")
    return "\n".join(out) + "\n"


def comments(text: str, rng: random.Random) -> str:
    """Comments of one's own added, the original's removed."""
    words = ["# load the data", "# sync here", "# my index", "# accumulate", "# bounds",
             "# TODO check", "# compute result", "# shared memory part"]
    out = []
    for line in text.splitlines():
        code = line.split("#")[0].rstrip() if "#" in line and "'" not in line and '"' not in line \
            else line
        if code.strip() and rng.random() < 0.3:
            indent = code[: len(code) - len(code.lstrip())]
            out.append(indent + rng.choice(words))
        if code.strip() or not line.strip():
            out.append(code)
    return "\n".join(out) + "\n"


def constant(text: str, rng: random.Random) -> str:
    """A module constant changed (16 -> 32 and the like)."""
    def change(m):
        value = int(m.group(2))
        return f"{m.group(1)}{value * 2 if value <= 64 else value // 2}"
    return re.sub(r"^([A-Z_]+ = )(\d+)$", change, text, count=1, flags=re.M)


def loop(text: str, rng: random.Random) -> str:
    """One ``for v in range(...)`` rewritten as a ``while`` loop."""
    tree = _strip(text)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for i, s in enumerate(body):
            if isinstance(s, ast.For) and isinstance(s.target, ast.Name) and \
                    isinstance(s.iter, ast.Call) and getattr(s.iter.func, "id", "") == "range" \
                    and not any(isinstance(n, (ast.Break, ast.Continue)) for n in ast.walk(s)):
                args = s.iter.args
                start, stop, step = ((ast.Constant(0), args[0], ast.Constant(1)) if len(args) == 1
                                     else (args[0], args[1], ast.Constant(1)) if len(args) == 2
                                     else args)
                v = s.target.id
                init = ast.Assign(targets=[ast.Name(v, ast.Store())], value=start, lineno=0)
                w = ast.While(test=ast.Compare(left=ast.Name(v, ast.Load()), ops=[ast.Lt()],
                                               comparators=[stop]),
                              body=s.body + [ast.AugAssign(target=ast.Name(v, ast.Store()),
                                                           op=ast.Add(), value=step)],
                              orelse=[])
                body[i:i + 1] = [init, w]
                return ast.unparse(ast.fix_missing_locations(tree)) + "\n"
    return ast.unparse(tree) + "\n"


def dead_code(text: str, rng: random.Random) -> str:
    """Unused variables and an ``if False:`` branch added to the kernel."""
    tree = _strip(text)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    extra = ast.parse("unused_counter = 0\nif False:\n    unused_counter = 1\n"
                      "scratch = cuda.threadIdx.x * 3 + 1\n").body
    at = rng.randrange(0, max(1, len(fn.body) // 2))
    fn.body[at:at] = extra
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def bug(text: str, rng: random.Random) -> str:
    """One bug added: the first ``<`` made ``<=`` (or a barrier dropped)."""
    if " < " in text:
        return text.replace(" < ", " <= ", 1)
    return text.replace("cuda.syncthreads()", "pass", 1)


SETUP = ("import numba\nimport numpy as np\nfrom numba import cuda\n\n"
         "if numba.config.ENABLE_CUDASIM:\n    print(\"Numba's CUDA simulator: slow, keep sizes "
         "small\")\nelif cuda.is_available():\n    print(\"GPU:\", "
         "cuda.get_current_device().name)\nelse:\n    print(\"No CUDA GPU found: uncomment the "
         "two lines above and restart the kernel\")\n")


def notebook(text: str) -> str:
    """The code as a notebook's JSON: the released setup cell, then the student's cell."""
    def cell(src):
        return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                "source": src.splitlines(keepends=True)}
    nb = {"cells": [cell(SETUP), cell(text)], "metadata": {}, "nbformat": 4,
          "nbformat_minor": 5}
    return json.dumps(nb, indent=1)


def fragment(first: str, second: str) -> str:
    """A copy from two sources: the first file whole, and the second file's kernel pasted
    after it under another name (an attempt kept beside the answer)."""
    a, b = _strip(first), _strip(second)
    names = {n.name for n in a.body if isinstance(n, ast.FunctionDef)}
    extra = [n for n in b.body if isinstance(n, ast.FunctionDef)]
    for n in extra:
        if n.name in names:
            n.name += "_attempt"
    a.body += extra
    return ast.unparse(a) + "\n"


TRANSFORMS = {"rename": rename, "reorder": reorder, "reindent": reindent, "comments": comments,
              "constant": constant, "loop": loop, "dead_code": dead_code, "bug": bug}
