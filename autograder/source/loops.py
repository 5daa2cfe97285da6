"""A kernel's loops and what bounds them, read off its source: is a loop's trip count set by the
block's size read at run time (``cuda.blockDim``), or by the contract's compile-time constants?

One reading for both places that ask. The timing times a kernel whose loops the block's size
bounds at run time against the instructor's kernel bounded the same way
(:func:`autograder.timing.measure.loop_bounds_at_run_time`); the hints tell the student which of
those loops the compiler kept as loops (:mod:`autograder.judge.hints`). A loop bounded at run
time cannot be unrolled, which costs a textbook kernel 1.3-1.4x against compile-time bounds
(issue 22: a reduction from ``cuda.blockDim.x // 2``, a transpose stepping by
``cuda.blockDim.y``).

Which parts bound a loop: a ``while``'s test; a ``for ... in range(...)``'s start, stop and step
(each sets how often it runs: ``range(cuda.blockDim.x // 2, 0, -1)`` counts down from the
block's size, ``range(0, TILE_DIM, cuda.blockDim.y)`` runs ``TILE_DIM / blockDim.y`` times);
any other ``for``'s iterable. A part is *the block size* when it reads ``cuda.blockDim``,
directly or through a local name assigned from it, and not the thread's position
(``cuda.threadIdx``, ``blockIdx``, ``gridDim``, ``laneid``, ``cuda.grid``, ``cuda.gridsize``,
directly or through a name): ``i = cuda.blockIdx.x * cuda.blockDim.x + tid`` is an index, and a
loop from or to it runs a different number of times in each thread whatever the block's size.
For the same reason a range's step is the block size only when its start and stop read no
thread position: ``range(tid, n, cuda.blockDim.x)`` strides by blocks from each thread's own
start, as the instructor's ``range(tid, n, BLOCK_SIZE)`` does, and neither is unrolled.

Nothing is imported or run; parsing goes through :func:`autograder.source.pyast.parse`. Not
seen: a bound that reads ``cuda.blockDim`` only to fold it away (``cuda.blockDim.x * 0``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace

from autograder.source import pyast

#: Attributes of ``cuda`` that say where a thread is (or how large the grid is), not the block.
POSITION = frozenset({"threadIdx", "blockIdx", "gridDim", "laneid", "grid", "gridsize"})


@dataclass(frozen=True)
class Loop:
    """One loop: its ``line``, its ``bound`` as source (a ``while``'s test, a ``for``'s
    iterable), whether the block's size read at run time bounds it (``block_size``), whether
    the contract's compile-time constants alone do (``constants``: some part of it is computed
    from them, with literals and locals assigned from them only; never when ``block_size``) and
    whether it lies inside another loop (``nested``)."""

    line: int
    bound: str
    block_size: bool
    constants: bool
    nested: bool = False  # inside another loop of the function (a tile's inner loop)


def loops(text: str, kernel: str | None = None, constants=()) -> list[Loop]:
    """The loops of the function ``kernel`` in source ``text`` (the last top-level definition
    of that name), or, with ``kernel`` None, of every function with a ``jit`` decorator; by
    line. ``constants``: the contract's constant names (``BLOCK_SIZE``). Empty for text that
    does not parse or has no such function."""
    try:
        tree = pyast.parse(text)
    except (SyntaxError, ValueError):
        return []
    if kernel is not None:
        found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == kernel]
        functions = found[-1:]
    else:
        functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
                     and any("jit" in ast.unparse(d) for d in n.decorator_list)]
    out: dict[int, Loop] = {}
    for fn in functions:
        reading = _Reading(fn, tuple(constants))
        inner = {id(n) for outer in ast.walk(fn) if isinstance(outer, (ast.For, ast.While))
                 for n in ast.walk(outer)
                 if n is not outer and isinstance(n, (ast.For, ast.While))}
        for node in ast.walk(fn):
            if isinstance(node, (ast.For, ast.While)) and id(node) not in out:
                out[id(node)] = replace(reading.loop(node), nested=id(node) in inner)
    return sorted(out.values(), key=lambda loop: (loop.line, loop.bound))


def _reads(node, attrs: frozenset | set) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr in attrs for n in ast.walk(node))


def _bound(target) -> list[str]:
    """The local names an assignment to ``target`` binds (``a``, ``a, b``), not the array or
    the index of an element it stores into (``sums[tid]``)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for e in target.elts for name in _bound(e)]
    if isinstance(target, ast.Starred):
        return _bound(target.value)
    return []


def _names(node) -> set[str]:
    """Names read, not those called (``range``, ``min``, ...)."""
    called = {id(c.func) for c in ast.walk(node) if isinstance(c, ast.Call)}
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and id(n) not in called}


class _Reading:
    """One function's locals, classified: ``block`` (assigned from ``cuda.blockDim``, directly
    or through another such local), ``position`` (likewise from the thread's position),
    ``fixed`` (the constants and locals assigned only from them and literals)."""

    def __init__(self, fn: ast.FunctionDef, constants: tuple[str, ...]):
        self.constants = constants
        self.assigns: dict[str, list] = {}  # local name -> the values assigned to it
        for n in ast.walk(fn):
            if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and n.value is not None:
                for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
                    for name in _bound(t):
                        self.assigns.setdefault(name, []).append(n.value)
        self.block = self._tainted({"blockDim"})
        self.position = self._tainted(POSITION)
        self.fixed = {c for c in constants if c not in self.assigns}
        changed = True
        while changed:
            changed = False
            for name, values in self.assigns.items():
                if name not in self.fixed and all(
                        not _reads(v, {"blockDim"}) and _names(v) <= self.fixed | {name}
                        for v in values):
                    self.fixed.add(name)
                    changed = True

    def _tainted(self, attrs) -> set[str]:
        tainted: set[str] = set()
        changed = True
        while changed:
            changed = False
            for name, values in self.assigns.items():
                if name not in tainted and any(_reads(v, attrs) or _names(v) & tainted
                                               for v in values):
                    tainted.add(name)
                    changed = True
        return tainted

    def _position(self, node) -> bool:
        return _reads(node, POSITION) or bool(_names(node) & self.position)

    def _block_size(self, node) -> bool:
        return ((_reads(node, {"blockDim"}) or bool(_names(node) & self.block))
                and not self._position(node))

    def _by_constants(self, node) -> bool:
        read = _names(node)
        return (not _reads(node, {"blockDim"}) and bool(read) and read <= self.fixed
                and any(_derives(r, self.constants, self.assigns) for r in read))

    def loop(self, node: ast.For | ast.While) -> Loop:
        bound = node.test if isinstance(node, ast.While) else node.iter
        every = [bound]
        if (isinstance(bound, ast.Call) and isinstance(bound.func, ast.Name)
                and bound.func.id == "range"):
            every = list(bound.args)
        parts = every
        if len(every) == 3 and any(self._position(p) for p in every[:2]):
            parts = every[:2]  # a block-stride step from the thread's own start: no bound
        block_size = any(self._block_size(p) for p in parts)
        constants = not block_size and any(self._by_constants(p) for p in every)
        return Loop(node.lineno, ast.unparse(bound), block_size, constants)


def _derives(name: str, constants, assigns: dict, seen: frozenset = frozenset()) -> bool:
    """True when ``name`` is one of ``constants`` or a local assigned from one."""
    if name in constants:
        return True
    if name in seen:
        return False
    reads = set()
    for v in assigns.get(name, []):
        reads |= {n.id for n in ast.walk(v) if isinstance(n, ast.Name)}
    return any(_derives(r, constants, assigns, seen | {name}) for r in reads)
