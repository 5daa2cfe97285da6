"""One-edit mutants of a solution's source, made by editing its text at one AST node.

Each mutant changes one place of the file and nothing else: the edit replaces the characters of
one operator token, name or expression, so line numbers, comments and the rest of the file stay
as written. Only code inside function bodies is mutated (kernels, device functions, the plain
functions of an exercise such as ``occupancy``); module-level statements (the constants a
contract checks), decorators, default arguments and annotations never are.

A mutant's id is ``L<line>-<operator>-<detail>-<k>``, e.g. ``L23-relop-lt-le-1``: the line of
the edit, the operator, what it changed, and ``k``, the edit's rank among those of the same line,
operator and detail, from the left. It depends on the source alone, so an exercise's list of
equivalent mutants (:mod:`autograder.mutation.equivalent`) keeps matching from one run to the
next as long as the solution keeps its lines.
"""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass
from typing import Iterator

from autograder.source import pyast

#: Operator name -> what it does (``autograder mutants --operator NAME``).
OPERATORS: dict[str, str] = {
    "relop": "a comparison swapped: < <=, > >=, == != (each way)",
    "boolop": "and <-> or",
    "sync": "a cuda.syncthreads() or cuda.threadfence*() call deleted (replaced by pass)",
    "guard": "a guard removed: `if c:` -> `if True:`, `a if c else b` -> `a`",
    "axis": "threadIdx / blockIdx .x <-> .y",
    "int": "an integer literal +1 or -1",
    "augadd": "`+=` -> `=`",
    "index": "a 2-D index swapped: A[i, j] -> A[j, i]",
    "floordiv": "`//` -> `/` (and `//=` -> `/=`)",
    "minmax": "min <-> max",
}

_RELOPS = {ast.Lt: ("<", "<=", "lt-le"), ast.LtE: ("<=", "<", "le-lt"),
           ast.Gt: (">", ">=", "gt-ge"), ast.GtE: (">=", ">", "ge-gt"),
           ast.Eq: ("==", "!=", "eq-ne"), ast.NotEq: ("!=", "==", "ne-eq")}
#: Calls whose deletion the ``sync`` operator tries (as ``cuda.NAME()`` or a bare ``NAME()``).
SYNC_CALLS = ("syncthreads", "threadfence", "threadfence_block", "threadfence_system")
_INDEX_OBJECTS = ("threadIdx", "blockIdx")


@dataclass(frozen=True)
class Mutant:
    """One mutant: ``source`` is the whole mutated file; ``description`` one line,
    ``"line 23 (relop): if i < n: -> if i <= n:"``."""

    id: str
    operator: str
    line: int
    description: str
    source: str


@dataclass(frozen=True)
class _Edit:
    operator: str
    detail: str
    start: int  # character offsets into the source, end excluded
    end: int
    text: str


class _Text:
    """The source with offsets: AST positions (line, UTF-8 byte column) and token positions
    (line, character column) as character offsets into the whole text."""

    def __init__(self, source: str):
        self.source = source
        self.lines = source.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))
        self.tokens = [(tok.string, self.char(*tok.start), self.char(*tok.end))
                       for tok in tokenize.generate_tokens(io.StringIO(source).readline)
                       if tok.type in (tokenize.OP, tokenize.NAME)]

    def char(self, line: int, col: int) -> int:
        """Offset of a token position (character column)."""
        return self.starts[line - 1] + col

    def at(self, line: int, byte_col: int) -> int:
        """Offset of an AST position (UTF-8 byte column)."""
        text = self.lines[line - 1] if line <= len(self.lines) else ""
        return self.starts[line - 1] + len(text.encode("utf-8")[:byte_col].decode("utf-8"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        return (self.at(node.lineno, node.col_offset),
                self.at(node.end_lineno, node.end_col_offset))

    def of(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.source[start:end]

    def parenthesized(self, node: ast.AST) -> tuple[int, int]:
        """The span of ``node`` with the parentheses that enclose it alone, as in ``(b)``."""
        start, end = self.span(node)
        while True:
            before = self.source[:start].rstrip()
            after = self.source[end:].lstrip()
            if not (before.endswith("(") and after.startswith(")")):
                return start, end
            start, end = len(before) - 1, len(self.source) - len(after) + 1

    def token(self, wanted: str, after: int, before: int) -> tuple[int, int] | None:
        """The first operator or name token ``wanted`` between two offsets."""
        for string, start, end in self.tokens:
            if start >= after and end <= before and string == wanted:
                return start, end
        return None

    def line_of(self, offset: int) -> int:
        lo, hi = 0, len(self.starts) - 1
        while lo < hi - 1:
            mid = (lo + hi) // 2
            if self.starts[mid] <= offset:
                lo = mid
            else:
                hi = mid
        return lo + 1


def _function_body_nodes(tree: ast.Module) -> list[ast.AST]:
    """Every node inside the body of a function (any depth), each once, in source order."""
    seen: dict[int, ast.AST] = {}
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for stmt in fn.body:
                for node in ast.walk(stmt):
                    seen.setdefault(id(node), node)
    nodes = [n for n in seen.values() if hasattr(n, "lineno")]
    return sorted(nodes, key=lambda n: (n.lineno, n.col_offset))


def _name(node: ast.AST) -> str | None:
    """``x`` for ``x`` and ``a.b.x``; None otherwise."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _edits(node: ast.AST, text: _Text) -> Iterator[_Edit]:
    """The edits each operator makes at ``node``."""
    if isinstance(node, ast.Compare):
        left = node.left
        for op, right in zip(node.ops, node.comparators):
            if type(op) in _RELOPS:
                old, new, detail = _RELOPS[type(op)]
                found = text.token(old, text.span(left)[1], text.span(right)[0])
                if found:
                    yield _Edit("relop", detail, *found, new)
            left = right
    elif isinstance(node, ast.BoolOp):
        old, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
        start, end = text.span(node)
        pieces, cursor = [], start
        for a, b in zip(node.values, node.values[1:]):
            found = text.token(old, text.span(a)[1], text.span(b)[0])
            if not found:
                return
            pieces += [text.source[cursor:found[0]], new]
            cursor = found[1]
        pieces.append(text.source[cursor:end])
        yield _Edit("boolop", f"{old}-{new}", start, end, "".join(pieces))
    elif (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
          and _name(node.value.func) in SYNC_CALLS):
        yield _Edit("sync", _name(node.value.func), *text.span(node), "pass")
    elif isinstance(node, ast.If):
        yield _Edit("guard", "if", *text.span(node.test), "True")
    elif isinstance(node, ast.IfExp):
        yield _Edit("guard", "ifexp", *text.span(node), text.of(node.body))
    elif (isinstance(node, ast.Attribute) and node.attr in ("x", "y")
          and _name(node.value) in _INDEX_OBJECTS):
        new = "y" if node.attr == "x" else "x"
        end = text.span(node)[1]
        yield _Edit("axis", f"{_name(node.value)}-{node.attr}-{new}", end - 1, end, new)
    elif (isinstance(node, ast.Constant) and type(node.value) is int):
        for delta, sign in ((1, "plus"), (-1, "minus")):
            yield _Edit("int", f"{sign}", *text.span(node), str(node.value + delta))
    elif isinstance(node, ast.AugAssign):
        if isinstance(node.op, ast.Add):
            found = text.token("+=", text.span(node.target)[1], text.span(node.value)[0])
            if found:
                yield _Edit("augadd", "assign", *found, "=")
        elif isinstance(node.op, ast.FloorDiv):
            found = text.token("//=", text.span(node.target)[1], text.span(node.value)[0])
            if found:
                yield _Edit("floordiv", "div", *found, "/=")
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
        found = text.token("//", text.span(node.left)[1], text.span(node.right)[0])
        if found:
            yield _Edit("floordiv", "div", *found, "/")
    elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple) \
            and len(node.slice.elts) == 2:
        (start, mid), (between, end) = (text.parenthesized(e) for e in node.slice.elts)
        yield _Edit("index", "swap", start, end, text.source[between:end]
                    + text.source[mid:between] + text.source[start:mid])
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in ("min", "max"):
        new = "max" if node.func.id == "min" else "min"
        yield _Edit("minmax", f"{node.func.id}-{new}", *text.span(node.func), new)


def _describe(edit: _Edit, text: _Text, mutated: str) -> str:
    """``line N (operator): old line(s) -> new line(s)``, each stripped and joined."""
    first, last = text.line_of(edit.start), text.line_of(max(edit.start, edit.end - 1))
    old = " ".join(ln.strip() for ln in text.lines[first - 1:last])
    removed = text.source[edit.start:edit.end].count("\n") - edit.text.count("\n")
    new = " ".join(ln.strip() for ln in mutated.splitlines()[first - 1:last - removed])
    return f"line {first} ({edit.operator}): {old} -> {new}"


def mutants(source: str, operators: list[str] | None = None) -> list[Mutant]:
    """The one-edit mutants of Python ``source``, in source order, each a valid Python file
    different from ``source`` and from every earlier mutant (a later edit giving the same file
    is left out). ``operators``: only these (names of :data:`OPERATORS`; None: all). Raises
    ``SyntaxError`` when ``source`` is not Python, ``ValueError`` for an unknown operator."""
    unknown = sorted(set(operators or ()) - set(OPERATORS))
    if unknown:
        raise ValueError(f"unknown mutation operator(s) {', '.join(unknown)}; "
                         f"known: {', '.join(OPERATORS)}")
    tree = pyast.parse(source)
    text = _Text(source)
    found: list[Mutant] = []
    ranks: dict[str, int] = {}
    sources = {source}
    for node in _function_body_nodes(tree):
        for edit in _edits(node, text):
            line = text.line_of(edit.start)
            stem = f"L{line}-{edit.operator}-{edit.detail}"
            ranks[stem] = ranks.get(stem, 0) + 1
            mutated = source[:edit.start] + edit.text + source[edit.end:]
            if mutated in sources:
                continue
            try:
                pyast.parse(mutated)
            except SyntaxError:
                continue
            sources.add(mutated)
            if operators is not None and edit.operator not in operators:
                continue
            found.append(Mutant(f"{stem}-{ranks[stem]}", edit.operator, line,
                                _describe(edit, text, mutated), mutated))
    return found
