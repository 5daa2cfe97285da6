"""A submission's code in a canonical form, so that the edits students use to disguise a copy
change nothing (pure: parses with ``ast``, runs nothing).

What is made alike, in order (:func:`normalise_module`):

- **comments, docstrings, ``pass``** are gone (the parser drops comments);
- **the released skeleton**: top-level statements the skeleton also has (imports, the setup
  cell) are dropped (``skeleton``);
- **module constants** (``TILE_WIDTH = 16``) are folded into the code that uses them, and every
  number is abstracted (a constant changed changes nothing);
- **dead code**: statements after ``return`` / ``break`` / ``continue``, ``if False:``
  bodies, and stores to local names never read;
- **one-use names** are replaced by the expression they hold (forward substitution):
  ``row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y`` then ``C[row, col]`` reads as
  the index expression itself, and ``col, row = cuda.grid(2)`` is expanded to the same thing;
- **index arithmetic**: ``+``, ``*``, ``and``, ``or`` operands are sorted, ``a > b`` reads as
  ``b < a``, ``x = x + e`` as ``x += e``;
- **loops**: ``i = a`` / ``while i < b: ...; i += s`` reads as ``for i in range(a, b, s)``,
  and ``range(n)`` as ``range(0, n, 1)``;
- **statement order**: within a basic block (between barriers, calls and control flow)
  independent statements are put in one canonical order (a topological order of their
  data dependences, smallest first);
- **identifiers**: a kernel's parameters are named by position, shared and local arrays,
  loop variables and other locals by their role, helper functions ``F``; the field's names
  (``cuda.threadIdx.x``, ``cuda.syncthreads``) stay, as they say what the kernel does.

The result is a list of functions (``ast.FunctionDef``) and top-level statements, each node
keeping the line number it came from, for :mod:`autograder.similarity.tokens`.
"""

from __future__ import annotations

import ast

from ..source import pyast
import copy

#: Modules whose attributes keep their spelled name (``cuda.threadIdx.x``): the field's words.
KNOWN_ROOTS = {"cuda", "numba", "math", "np", "numpy", "nb"}

#: Calls with no side effect, whose result may replace a name that holds it.
PURE_CALLS = {"cuda.grid", "cuda.gridsize", "min", "max", "abs", "int", "float", "len",
              "range", "float32", "float64", "int32", "int64", "uint32", "numba.float32",
              "numba.int32", "np.float32", "np.int32", "np.float64", "math.sqrt", "math.ceil",
              "math.floor", "math.exp", "math.log", "round"}

#: Casts of a constant that read as the constant (``float32(0.0)`` is ``0.0``).
CASTS = {"float32", "float64", "int32", "int64", "float", "int", "numba.float32",
         "np.float32", "np.float64", "np.int32", "numba.int32", "uint32"}

#: Declarations of arrays: a name that holds one is an array ("S" shared, "L" local).
ARRAY_DECLARATIONS = {"cuda.shared.array": "S", "cuda.local.array": "L",
                      "cuda.const.array_like": "K"}

_COMMUTATIVE = (ast.Add, ast.Mult, ast.BitAnd, ast.BitOr, ast.BitXor)
_SWAPPED = {ast.Gt: ast.Lt, ast.GtE: ast.LtE}


def dotted(node: ast.AST) -> str | None:
    """``cuda.threadIdx.x`` for a chain of attributes on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


def key(node: ast.AST) -> str:
    """A canonical sort key of an expression or statement (no line numbers)."""
    return ast.dump(node, annotate_fields=False, include_attributes=False)


# ---------------------------------------------------------------------------------------------
# Module level: constants, the skeleton, functions


def _constant_value(node: ast.AST, constants: dict) -> bool:
    """Whether ``node`` is built of numbers and known constants only."""
    return all(isinstance(n, (ast.Constant, ast.BinOp, ast.UnaryOp, ast.operator,
                              ast.unaryop, ast.expr_context, ast.Tuple))
               or (isinstance(n, ast.Name) and n.id in constants)
               for n in ast.walk(node))


def module_constants(tree: ast.Module) -> dict[str, ast.AST]:
    """Top-level ``NAME = <numbers and constants>`` assignments (assigned once)."""
    counts: dict[str, int] = {}
    for node in tree.body:
        for target in getattr(node, "targets", []) + (
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []):
            if isinstance(target, ast.Name):
                counts[target.id] = counts.get(target.id, 0) + 1
    constants: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name) and counts[node.targets[0].id] == 1 and \
                _constant_value(node.value, constants):
            constants[node.targets[0].id] = node.value
    return constants


def skeleton_keys(skeleton: str | None) -> set[str]:
    """The keys of the top-level statements of the released skeleton (the student's own
    functions there hold only ``raise NotImplementedError()``, so a student's real one never
    matches); empty when there is none or it does not parse."""
    if not skeleton:
        return set()
    try:
        tree = pyast.parse(skeleton)
    except (SyntaxError, ValueError):
        return set()
    return {key(s) for s in tree.body}


def normalise_module(tree: ast.Module, skeleton: set[str] = frozenset()) -> list[ast.stmt]:
    """The canonical form of a parsed submission: its functions (sorted by their normalised
    code, so that reordering them changes nothing) and then its other top-level statements
    (imports, constants and the skeleton's statements left out). Line numbers are kept."""
    constants = module_constants(tree)
    functions = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef,
                                                                 ast.AsyncFunctionDef))}
    out_functions, rest = [], []
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)) or key(stmt) in skeleton:
            continue
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id in constants:
            continue
        if _is_docstring(stmt):
            continue
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out_functions.append(normalise_function(stmt, constants, functions))
        else:
            rest.append(stmt)
    if rest:
        holder = ast.FunctionDef(name="<module>", args=ast.arguments(
            posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=rest, decorator_list=[], returns=None, type_params=[])
        holder.lineno = rest[0].lineno
        rest_fn = normalise_function(holder, constants, functions, module_level=True)
    else:
        rest_fn = None
    out_functions.sort(key=key)
    return out_functions + ([rest_fn] if rest_fn is not None and rest_fn.body else [])


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)


# ---------------------------------------------------------------------------------------------
# One function


class _Names:
    """What each local name of a function is: assignments, loads, role."""

    def __init__(self, fn: ast.FunctionDef):
        self.stores: dict[str, int] = {}
        self.loads: dict[str, int] = {}
        self.loop_vars: set[str] = set()
        self.arrays: dict[str, str] = {}
        for node in ast.walk(fn):
            if isinstance(node, ast.Name):
                table = self.loads if isinstance(node.ctx, ast.Load) else self.stores
                table[node.id] = table.get(node.id, 0) + 1
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                self.loads[node.target.id] = self.loads.get(node.target.id, 0) + 1
            if isinstance(node, ast.For):
                self.loop_vars |= {n.id for n in ast.walk(node.target)
                                   if isinstance(n, ast.Name)}
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                    dotted(node.value.func) in ARRAY_DECLARATIONS:
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        self.arrays[t.id] = ARRAY_DECLARATIONS[dotted(node.value.func)]


def normalise_function(fn: ast.FunctionDef, constants: dict, functions: set[str],
                       module_level: bool = False) -> ast.FunctionDef:
    """``fn`` in canonical form (a new tree; ``fn`` is not changed)."""
    fn = copy.deepcopy(fn)
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
    fn.body = _prune(fn.body)
    fn.body = _expand_tuples(fn.body)
    fn.body = _while_to_for(fn.body)
    _Fold(constants).visit(fn)
    for _ in range(8):
        changed = _substitute(fn, params, module_level)
        changed |= _drop_dead_stores(fn, module_level)
        if not changed:
            break
    _Accumulate().visit(fn)
    names = _Names(fn)
    _Rename(params, names, functions, set(constants)).visit(fn)
    _Canonical().visit(fn)
    fn.body = _order_blocks(fn.body)
    fn.decorator_list = []
    fn.returns = None
    fn.args = ast.arguments(posonlyargs=[], args=[ast.arg(arg=f"P{i}") for i in
                                                  range(len(params))],
                            kwonlyargs=[], kw_defaults=[], defaults=[])
    return fn


def _prune(body: list[ast.stmt]) -> list[ast.stmt]:
    """Docstrings, ``pass``, code after a jump and ``if False:`` branches dropped (recursively)."""
    out = []
    for stmt in body:
        if isinstance(stmt, ast.Pass) or _is_docstring(stmt):
            continue
        if isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Constant):
            out.extend(_prune(stmt.body if stmt.test.value else stmt.orelse))
            continue
        if isinstance(stmt, ast.While) and isinstance(stmt.test, ast.Constant) and \
                not stmt.test.value:
            continue
        for field in ("body", "orelse", "finalbody"):
            if isinstance(getattr(stmt, field, None), list) and \
                    not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                setattr(stmt, field, _prune(getattr(stmt, field)))
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            stmt.body = _prune(stmt.body)
        if isinstance(stmt, (ast.If, ast.For, ast.While)) and not stmt.body:
            if isinstance(stmt, ast.If) and stmt.orelse:
                stmt.test = ast.UnaryOp(op=ast.Not(), operand=stmt.test)
                stmt.body, stmt.orelse = stmt.orelse, []
            else:
                continue
        out.append(stmt)
        if isinstance(stmt, (ast.Return, ast.Break, ast.Continue, ast.Raise)):
            break
    return out


def _grid_expansion(axis: str) -> ast.expr:
    def attr(kind):
        return ast.Attribute(value=ast.Attribute(value=ast.Name(id="cuda", ctx=ast.Load()),
                                                 attr=kind, ctx=ast.Load()),
                             attr=axis, ctx=ast.Load())
    return ast.BinOp(left=ast.BinOp(left=attr("blockIdx"), op=ast.Mult(),
                                    right=attr("blockDim")),
                     op=ast.Add(), right=attr("threadIdx"))


def _expand_tuples(body: list[ast.stmt]) -> list[ast.stmt]:
    """``a, b = x, y`` into two assignments; ``col, row = cuda.grid(2)`` (and ``cuda.grid(1)``)
    into the index arithmetic it stands for (recursively)."""
    out = []
    for stmt in body:
        for field in ("body", "orelse", "finalbody"):
            if isinstance(getattr(stmt, field, None), list):
                setattr(stmt, field, _expand_tuples(getattr(stmt, field)))
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
            if isinstance(value, ast.Call) and dotted(value.func) == "cuda.grid" and \
                    value.args and isinstance(value.args[0], ast.Constant):
                if isinstance(target, ast.Tuple):
                    for name, axis in zip(target.elts, "xyz"):
                        out.append(ast.copy_location(ast.Assign(
                            targets=[name], value=_grid_expansion(axis)), stmt))
                    continue
                if value.args[0].value == 1:
                    stmt.value = _grid_expansion("x")
            elif isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and \
                    len(target.elts) == len(value.elts) and \
                    all(isinstance(t, ast.Name) for t in target.elts):
                loaded = {n.id for v in value.elts for n in ast.walk(v) if isinstance(n, ast.Name)}
                if not loaded & {t.id for t in target.elts}:
                    for t, v in zip(target.elts, value.elts):
                        out.append(ast.copy_location(ast.Assign(targets=[t], value=v), stmt))
                    continue
        out.append(stmt)
    return out


def _range_parts(call: ast.Call) -> list[ast.expr] | None:
    if not (isinstance(call, ast.Call) and dotted(call.func) == "range") or call.keywords:
        return None
    args = list(call.args)
    if len(args) == 1:
        return [ast.Constant(0), args[0], ast.Constant(1)]
    if len(args) == 2:
        return [args[0], args[1], ast.Constant(1)]
    if len(args) == 3:
        return args
    return None


def _while_to_for(body: list[ast.stmt]) -> list[ast.stmt]:
    """``i = a; while i < b: ...; i += s`` as ``for i in range(a, b, s): ...``; every ``range``
    with its three arguments (recursively)."""
    out: list[ast.stmt] = []
    for stmt in body:
        for field in ("body", "orelse", "finalbody"):
            if isinstance(getattr(stmt, field, None), list):
                setattr(stmt, field, _while_to_for(getattr(stmt, field)))
        if isinstance(stmt, ast.For):
            parts = _range_parts(stmt.iter)
            if parts:
                stmt.iter = ast.Call(func=ast.Name(id="range", ctx=ast.Load()), args=parts,
                                     keywords=[])
        if isinstance(stmt, ast.While) and not stmt.orelse and stmt.body:
            test, last = stmt.test, stmt.body[-1]
            if isinstance(test, ast.Compare) and len(test.ops) == 1:
                left, op, right = test.left, test.ops[0], test.comparators[0]
                if isinstance(op, (ast.Gt, ast.GtE)):
                    left, right = right, left
                    op = ast.Lt() if isinstance(op, ast.Gt) else ast.LtE()
                if isinstance(op, ast.Lt) and isinstance(left, ast.Name) and \
                        isinstance(last, ast.AugAssign) and isinstance(last.op, ast.Add) and \
                        isinstance(last.target, ast.Name) and last.target.id == left.id and \
                        not any(isinstance(n, ast.Name) and n.id == left.id and
                                not isinstance(n.ctx, ast.Load)
                                for s in stmt.body[:-1] for n in ast.walk(s)):
                    start: ast.expr = ast.Name(id=left.id, ctx=ast.Load())
                    if out and isinstance(out[-1], ast.Assign) and \
                            len(out[-1].targets) == 1 and \
                            isinstance(out[-1].targets[0], ast.Name) and \
                            out[-1].targets[0].id == left.id:
                        start = out.pop().value
                    loop = ast.For(target=ast.Name(id=left.id, ctx=ast.Store()),
                                   iter=ast.Call(func=ast.Name(id="range", ctx=ast.Load()),
                                                 args=[start, right, last.value], keywords=[]),
                                   body=stmt.body[:-1] or [ast.Pass()], orelse=[],
                                   type_comment=None)
                    out.append(ast.copy_location(loop, stmt))
                    continue
        out.append(stmt)
    return out


class _Fold(ast.NodeTransformer):
    """Module constants inlined; casts of a constant read as the constant."""

    def __init__(self, constants: dict):
        self.constants = constants

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and node.id in self.constants:
            return ast.copy_location(ast.Constant(value=0), node)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        if dotted(node.func) in CASTS and len(node.args) == 1 and not node.keywords and \
                isinstance(node.args[0], ast.Constant):
            return node.args[0]
        return node


def _block_lists(fn: ast.AST):
    """Every statement list in ``fn`` with the loop variables bound around it."""
    def walk(body, loops):
        yield body, loops
        for stmt in body:
            inner = loops
            if isinstance(stmt, ast.For):
                inner = loops | {n.id for n in ast.walk(stmt.target) if isinstance(n, ast.Name)}
            for field in ("body", "orelse", "finalbody"):
                sub = getattr(stmt, field, None)
                if isinstance(sub, list) and not isinstance(stmt, (ast.FunctionDef,
                                                                   ast.ClassDef)):
                    yield from walk(sub, inner)
            for handler in getattr(stmt, "handlers", []):
                yield from walk(handler.body, inner)
    yield from walk(fn.body, frozenset())


def _pure(expr: ast.expr) -> bool:
    for n in ast.walk(expr):
        if isinstance(n, ast.Call) and dotted(n.func) not in PURE_CALLS:
            return False
        if isinstance(n, (ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom, ast.Lambda)):
            return False
    return True


def _substitute(fn: ast.FunctionDef, params: list[str], module_level: bool) -> bool:
    """Replace each name assigned once (in a statement list, from a pure expression whose
    names do not change) by its expression; True when something changed."""
    if module_level:
        return False
    names = _Names(fn)
    stable = set(params) | {n for n, c in names.stores.items() if c == 1}
    stable -= names.loop_vars
    for body, loops in _block_lists(fn):
        for i, stmt in enumerate(body):
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and
                    isinstance(stmt.targets[0], ast.Name)):
                continue
            name = stmt.targets[0].id
            if names.stores.get(name) != 1 or name in names.loop_vars or \
                    name in names.arrays or not _pure(stmt.value):
                continue
            used = {n.id for n in ast.walk(stmt.value) if isinstance(n, ast.Name)}
            if name in used or not used <= (stable | loops | {"cuda", "numba", "math", "np",
                                                               "range", "min", "max", "abs",
                                                               "int", "float", "len"}) | \
                    set(PURE_CALLS):
                continue
            value = stmt.value
            del body[i]

            class _Replace(ast.NodeTransformer):
                def visit_Name(self, node):
                    if node.id == name and isinstance(node.ctx, ast.Load):
                        return copy.deepcopy(value)
                    return node
            _Replace().visit(fn)
            return True
    return False


def _drop_dead_stores(fn: ast.FunctionDef, module_level: bool) -> bool:
    """Assignments to local names never read (``x = ...``, ``x += ...``), from pure
    expressions or array declarations; True when something changed."""
    if module_level:
        return False
    read = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    changed = False
    for body, _ in _block_lists(fn):
        keep = []
        for stmt in body:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else (
                [stmt.target] if isinstance(stmt, ast.AugAssign) else None)
            if targets and all(isinstance(t, ast.Name) and t.id not in read for t in targets) \
                    and (_pure(stmt.value) or (isinstance(stmt.value, ast.Call) and
                                               dotted(stmt.value.func) in ARRAY_DECLARATIONS)):
                changed = True
                continue
            keep.append(stmt)
        body[:] = keep
    return changed


class _Accumulate(ast.NodeTransformer):
    """``x = x + e`` (or ``x = e + x`` for a commutative operator) as ``x += e``."""

    def visit_Assign(self, node):
        self.generic_visit(node)
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and \
                isinstance(node.value, ast.BinOp):
            name = node.targets[0].id
            value = node.value
            if isinstance(value.left, ast.Name) and value.left.id == name:
                return ast.copy_location(ast.AugAssign(target=node.targets[0], op=value.op,
                                                       value=value.right), node)
            if isinstance(value.op, _COMMUTATIVE) and isinstance(value.right, ast.Name) and \
                    value.right.id == name:
                return ast.copy_location(ast.AugAssign(target=node.targets[0], op=value.op,
                                                       value=value.left), node)
        return node


class _Canonical(ast.NodeTransformer):
    """Commutative operands sorted, comparisons turned to ``<``/``<=`` (after renaming, so
    the order does not depend on the names)."""

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, _COMMUTATIVE):
            operands = []

            def flatten(n):
                if isinstance(n, ast.BinOp) and type(n.op) is type(node.op):
                    flatten(n.left)
                    flatten(n.right)
                else:
                    operands.append(n)
            flatten(node)
            operands.sort(key=key)
            result = operands[0]
            for o in operands[1:]:
                result = ast.BinOp(left=result, op=type(node.op)(), right=o)
            return ast.copy_location(result, node)
        return node

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        values = []
        for v in node.values:
            values.extend(v.values if isinstance(v, ast.BoolOp) and
                          type(v.op) is type(node.op) else [v])
        node.values = sorted(values, key=key)
        return node

    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) > 1:
            parts = []
            left = node.left
            for op, right in zip(node.ops, node.comparators):
                parts.append(self.visit_Compare(ast.Compare(left=left, ops=[op],
                                                            comparators=[right])))
                left = right
            return ast.copy_location(ast.BoolOp(op=ast.And(), values=sorted(parts, key=key)),
                                     node)
        op = node.ops[0]
        if type(op) in _SWAPPED:
            return ast.copy_location(ast.Compare(left=node.comparators[0],
                                                 ops=[_SWAPPED[type(op)]()],
                                                 comparators=[node.left]), node)
        if isinstance(op, (ast.Eq, ast.NotEq)):
            a, b = sorted([node.left, node.comparators[0]], key=key)
            node.left, node.comparators = a, [b]
        return node


class _Rename(ast.NodeTransformer):
    """Names by role: parameters ``P<i>``, arrays ``S`` / ``L``, loop variables ``I``, other
    locals ``V``, helper functions ``F``, module constants ``C``; builtins and the field's
    modules as spelled."""

    def __init__(self, params, names: _Names, functions, constants):
        self.params = {p: f"P{i}" for i, p in enumerate(params)}
        self.names = names
        self.functions = functions
        self.constants = constants

    def visit_Name(self, node):
        n = node.id
        if n in self.params:
            node.id = self.params[n]
        elif n in self.names.arrays:
            node.id = self.names.arrays[n]
        elif n in self.names.loop_vars:
            node.id = "I"
        elif n in self.functions:
            node.id = "F"
        elif n in self.constants:
            node.id = "C"
        elif n in self.names.stores:
            node.id = "V"
        return node

    def visit_FunctionDef(self, node):
        node.name = "F"
        self.generic_visit(node)
        return node


def _reads_writes(stmt: ast.stmt) -> tuple[set[str], set[str]]:
    reads, writes = set(), set()
    for n in ast.walk(stmt):
        if isinstance(n, ast.Name):
            (reads if isinstance(n.ctx, ast.Load) else writes).add(n.id)
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
        reads.add(stmt.target.id)
    for target in getattr(stmt, "targets", []) + ([stmt.target] if isinstance(
            stmt, ast.AugAssign) else []):
        if isinstance(target, ast.Subscript):
            root = target.value
            while isinstance(root, (ast.Subscript, ast.Attribute)):
                root = root.value
            if isinstance(root, ast.Name):
                writes.add(root.id)
    return reads, writes


def _movable(stmt: ast.stmt) -> bool:
    return isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and _pure(
        stmt.value) if stmt.value is not None else False


def _order_blocks(body: list[ast.stmt]) -> list[ast.stmt]:
    """Independent simple statements of each basic block in one canonical order
    (recursively)."""
    for stmt in body:
        for field in ("body", "orelse", "finalbody"):
            if isinstance(getattr(stmt, field, None), list):
                setattr(stmt, field, _order_blocks(getattr(stmt, field)))
    out: list[ast.stmt] = []
    run: list[ast.stmt] = []
    for stmt in body + [None]:
        if stmt is not None and isinstance(stmt, (ast.Assign, ast.AugAssign)) and \
                _movable(stmt):
            run.append(stmt)
            continue
        out.extend(_topological(run))
        run = []
        if stmt is not None:
            out.append(stmt)
    return out


def _topological(run: list[ast.stmt]) -> list[ast.stmt]:
    if len(run) < 2:
        return run
    rw = [_reads_writes(s) for s in run]
    before = {j: {i for i in range(j) if rw[i][1] & (rw[j][0] | rw[j][1]) or
                  rw[i][0] & rw[j][1]} for j in range(len(run))}
    keys = [key(s) for s in run]
    done: list[int] = []
    left = set(range(len(run)))
    while left:
        ready = [j for j in left if before[j] <= set(done)]
        j = min(ready, key=lambda j: (keys[j], j))
        done.append(j)
        left.remove(j)
    return [run[j] for j in done]
