"""Run only a submission's definitions: the anti-cheat core of the child process.

The grader needs a submission's names (constants, kernels, device functions, plain functions),
never its top-level statements. Running those statements would let a submission patch Numba or
NumPy, start threads, read the request out of the harness's memory, or write forged records on
the channel, all before the first kernel launch; no check made afterwards in the same process
could be trusted. So the child runs, in order, only:

* imports of ``numba``, ``numpy`` and ``math`` (and their submodules), names without a leading
  underscore, through the module's import gate: what they bind is a module of
  :data:`autograder.source.reach.MODULES` or a name of one (``from numba import config`` and
  ``from numba import sys`` are skipped);
* assignments of *constant expressions* to plain names (``TILE_WIDTH = 16``,
  ``PADDED = TILE_DIM + 1``, ``SHAPE = (TILE, TILE)``, ``dtype = np.float32``,
  ``jit = cuda.jit``), evaluated here by a small interpreter: literals, names, arithmetic,
  comparisons, tuples, subscripts, attributes without a leading underscore on allowed modules,
  and calls of an allow-listed set of pure functions (``int``, ``min``, ``math.*``, NumPy and
  Numba type constructors, a few NumPy array constructors, ``cuda.jit``);
* ``def`` statements (and ``NAME = lambda ...``, run as the ``def`` it stands for), whose
  decorators must be ``cuda.jit`` (with literal options from an
  allow-list, and string signatures checked against a signature grammar; ``cuda.jit(...)(f)``
  on a function of the file is the same decorator), whose default values
  must be constant expressions, and whose annotations are dropped. Function bodies are compiled,
  not run.

A top-level ``if`` whose test is a constant expression and whose branches hold only
assignments runs the branch taken (``if DEBUG: BLOCK_SIZE = 64``). Everything else (other ``if``
blocks, loops, calls such as ``kernel[grid, block](...)`` or
``os._exit(0)``, classes, attribute or item assignments) is *skipped* and reported, so a
notebook's own test cells cost nothing and change nothing.

Values read off Numba's modules must be modules, callables or Numba types, never data (so a
submission cannot branch on ``numba.config.ENABLE_CUDASIM``), and comparisons and conditions
take data only: the simulator child and the GPU-compile child build the same definitions.

The module has its own built-ins (:func:`autograder.source.reach.student_builtins`), and the
functions the grader calls may not reach beyond what the contract names
(:func:`autograder.source.reach.check_functions`: imports and attribute chains on modules).

With this, on a GPU no student Python runs in the child at all: kernels and device functions are
compiled by Numba. On the simulator a kernel's body runs as Python, which is why the grader
counts simulator results only for a kernel that also compiles for a real GPU, from the same
definitions (:func:`bindings`, compared by :func:`autograder.judge.collect.definitions_differ`).

What the simulator runs must be what a GPU compiles: the checks that make sure of it are in
:mod:`autograder.source.same_code` (:class:`NotGradable`).
"""

from __future__ import annotations

import ast
import builtins
import math
import types
from dataclasses import dataclass

from autograder.simulator import adapter as sim
from autograder.source import pyast, reach
from autograder.source.same_code import NotGradable, check_kernels, check_skipped_bindings  # noqa: F401

ALLOWED_MODULES = ("numba", "numpy", "math")
JIT_OPTIONS = frozenset({"device", "inline", "forceinline", "debug", "opt", "lineinfo",
                         "fastmath", "max_registers", "boundscheck", "launch_bounds",
                         "shared_memory_carveout", "cache"})
#: Options of :data:`JIT_OPTIONS` checked and then left out: ``cache=True`` asks Numba to keep
#: the compiled kernel in files beside the submission and to load it from there next time, which
#: changes nothing a kernel computes; the grader compiles every submission afresh.
DROPPED_JIT_OPTIONS = frozenset({"cache"})
_SAFE_BUILTINS = ("int", "float", "bool", "complex", "abs", "min", "max", "round", "pow",
                  "divmod", "len", "tuple", "range", "True", "False", "None")
_NUMPY_CONSTRUCTORS = ("array", "asarray", "zeros", "ones", "full", "arange", "linspace",
                       "empty", "dtype", "float16", "float32", "float64", "int8", "int16",
                       "int32", "int64", "uint8", "uint16", "uint32", "uint64", "intp",
                       "bool_", "complex64", "complex128")
_MAX_ARRAY_ELEMENTS = 1 << 24


class Disallowed(Exception):
    """A construct the grader does not run; the statement holding it is skipped."""


@dataclass(frozen=True)
class Skipped:
    """A top-level statement that was not run: its first line and why."""

    lineno: int
    reason: str


def _root_allowed(name: str) -> bool:
    parts = name.split(".")
    return parts[0] in ALLOWED_MODULES and not any(p.startswith("_") for p in parts)


def _is_dunder(name: str) -> bool:
    return name.startswith("__")


class _Kinds:
    """Classifies values with Numba and NumPy loaded (after the backend was chosen)."""

    def __init__(self, path: str):
        import numba
        import numpy as np
        from numba.core import types as nbtypes
        from numba.core.typing.templates import Signature

        self.np, self.path = np, path
        self.Type, self.Signature, self.nbtypes = nbtypes.Type, Signature, nbtypes
        from numba import cuda

        self.jit = cuda.jit
        callables = {getattr(builtins, n) for n in _SAFE_BUILTINS
                     if callable(getattr(builtins, n))}
        callables |= {v for v in vars(math).values() if isinstance(v, types.BuiltinFunctionType)}
        callables |= {getattr(np, n) for n in _NUMPY_CONSTRUCTORS if hasattr(np, n)}
        self.callables = callables
        self.array_makers = {getattr(np, n) for n in ("array", "asarray", "zeros", "ones", "full",
                                                       "arange", "linspace", "empty")}
        self.numba = numba

    def is_data(self, v) -> bool:
        np = self.np
        t = type(v)
        if t in (int, float, complex, bool, str, bytes, type(None)):
            return True
        if t in (tuple, list):
            return all(self.is_data(x) for x in v)
        if isinstance(v, np.generic) and not isinstance(v, np.object_):
            return True
        if t is np.ndarray:
            return v.dtype != object
        return False

    def is_type(self, v) -> bool:
        np = self.np
        if isinstance(v, (self.Type, self.Signature, np.dtype)):
            return True
        if isinstance(v, type) and issubclass(v, np.generic):
            return True
        if type(v) in (tuple, list):
            return all(self.is_type(x) or self.is_data(x) for x in v)
        return False

    def is_module(self, v) -> bool:
        """One of the modules a submission may reach (:data:`autograder.source.reach.MODULES`)."""
        return reach.module_allowed(v)

    def is_student_function(self, v) -> bool:
        return (type(v) is types.FunctionType
                and getattr(v.__code__, "co_filename", None) == self.path)

    def is_kernel(self, v) -> bool:
        """A dispatcher ``cuda.jit`` made here (simulator or real)."""
        try:
            FakeCUDAKernel = sim.FakeCUDAKernel
        except Exception:  # pragma: no cover
            FakeCUDAKernel = None
        try:
            from numba.cuda.dispatcher import CUDADispatcher
        except Exception:  # pragma: no cover - the simulator replaces the package
            CUDADispatcher = None
        return type(v) in tuple(t for t in (FakeCUDAKernel, CUDADispatcher) if t)


class _Evaluator:
    """Evaluates one constant expression under the rules in the module docstring."""

    def __init__(self, ns: dict, kinds: _Kinds, lazy: bool = False):
        self.ns, self.k, self.lazy = ns, kinds, lazy
        self.decorators: dict[int, object] = {}   # what cuda.jit(...) returned, by id

    def data(self, node):
        v = self.eval(node)
        if not self.k.is_data(v):
            raise Disallowed(f"`{ast.unparse(node)}` is not a constant value")
        return v

    def eval(self, node):
        meth = getattr(self, "_" + type(node).__name__, None)
        if meth is None:
            raise Disallowed(f"{type(node).__name__} expressions are not run")
        return meth(node)

    def _Constant(self, node):
        return node.value

    def _Name(self, node):
        name = node.id
        if _is_dunder(name):
            raise Disallowed(f"the name {name} is not available")
        if name in self.ns:
            return self.ns[name]
        if name in _SAFE_BUILTINS:
            return getattr(builtins, name)
        if hasattr(builtins, name):
            raise Disallowed(f"the built-in {name} is not available")
        raise NameError(f"name '{name}' is not defined", name=name)

    def _Attribute(self, node):
        if node.attr.startswith("_"):
            raise Disallowed(f"attribute {node.attr} is not available")
        if node.attr in reach.REFUSED_NAMES:
            raise Disallowed(f"attribute {node.attr}: {reach.name_refusal(node.attr)}")
        base = self.eval(node.value)
        k = self.k
        if k.is_module(base):
            value = getattr(base, node.attr)
            if isinstance(value, types.ModuleType) and not k.is_module(value):
                raise Disallowed(f"module {value.__name__} is not available")
            if k.is_data(value) and base.__name__.split(".")[0] == "numba":
                raise Disallowed(f"`{ast.unparse(node)}` is a setting, not a constant")
            return value
        if k.is_type(base) or k.is_data(base):
            value = getattr(base, node.attr)
            if callable(value) and not k.is_type(value):
                raise Disallowed(f"method {node.attr} is not run")
            return value
        raise Disallowed(f"attributes of `{ast.unparse(node.value)}` are not available")

    def _BinOp(self, node):
        left, right = self.data(node.left), self.data(node.right)
        if isinstance(node.op, ast.Pow) and type(right) is int and abs(right) > 4096:
            raise Disallowed("an exponent that large is not a constant")
        if isinstance(node.op, (ast.LShift,)) and type(right) is int and right > 4096:
            raise Disallowed("a shift that large is not a constant")
        return _BINOPS[type(node.op)](left, right)

    def _UnaryOp(self, node):
        return _UNARYOPS[type(node.op)](self.data(node.operand))

    def _BoolOp(self, node):
        is_and = isinstance(node.op, ast.And)
        value = None
        for v in node.values:
            value = self.data(v)
            if bool(value) != is_and:
                return value
        return value

    def _Compare(self, node):
        left = self.data(node.left)
        for op, comp in zip(node.ops, node.comparators):
            right = self.data(comp)
            if not _CMPOPS[type(op)](left, right):
                return False
            left = right
        return True

    def _IfExp(self, node):
        return self.eval(node.body) if self.data(node.test) else self.eval(node.orelse)

    def _Tuple(self, node):
        return tuple(self._element(e) for e in node.elts)

    def _List(self, node):
        return [self._element(e) for e in node.elts]

    def _element(self, node):
        if isinstance(node, ast.Starred):
            raise Disallowed("* in a constant is not run")
        v = self.eval(node)
        if not (self.k.is_data(v) or self.k.is_type(v)):
            raise Disallowed(f"`{ast.unparse(node)}` is not a constant value")
        return v

    def _Subscript(self, node):
        base = self.eval(node.value)
        if not (self.k.is_data(base) or self.k.is_type(base)):
            raise Disallowed(f"`{ast.unparse(node.value)}` cannot be indexed here")
        return base[self._index(node.slice)]

    def _index(self, node):
        if isinstance(node, ast.Slice):
            return slice(*(None if p is None else self.data(p)
                           for p in (node.lower, node.upper, node.step)))
        if isinstance(node, ast.Tuple):
            return tuple(self._index(e) for e in node.elts)
        return self.data(node)

    def _Call(self, node):
        func = self.eval(node.func)
        k = self.k
        if func is k.jit:
            return self._jit_call(node)
        if self.decorators.get(id(func)) is func:
            return self._decorate(func, node)
        allowed = func in k.callables if _hashable(func) else False
        if not (allowed or isinstance(func, k.Type)):
            raise Disallowed(f"calling `{ast.unparse(node.func)}` is not run")
        if any(isinstance(a, ast.Starred) for a in node.args) or \
                any(kw.arg is None for kw in node.keywords):
            raise Disallowed("* and ** in a call are not run")
        args = [self._element(a) for a in node.args]
        kwargs = {kw.arg: self._element(kw.value) for kw in node.keywords}
        if func in k.array_makers:
            self._check_array_size(func, args, kwargs)
        return func(*args, **kwargs)

    def _check_array_size(self, func, args, kwargs):
        np = self.k.np
        if func in (np.array, np.asarray):
            return
        size = 0
        if func in (np.arange, np.linspace):
            nums = [a for a in args if isinstance(a, (int, float, np.number))]
            if func is np.linspace:
                size = int(kwargs.get("num", args[2] if len(args) > 2 else 50))
            elif nums:
                lo, hi = (0, nums[0]) if len(nums) == 1 else (nums[0], nums[1])
                step = nums[2] if len(nums) > 2 else 1
                size = int(abs((hi - lo) / step)) if step else 0
        else:
            shape = kwargs.get("shape", args[0] if args else 0)
            dims = shape if isinstance(shape, (tuple, list)) else (shape,)
            size = int(np.prod([int(d) for d in dims])) if dims else 1
        if size > _MAX_ARRAY_ELEMENTS:
            raise Disallowed("an array that large is not a constant")

    def _jit_call(self, node):
        """``cuda.jit(...)`` with literal options, a signature, or a function of this file."""
        if any(isinstance(a, ast.Starred) for a in node.args) or \
                any(kw.arg is None for kw in node.keywords):
            raise Disallowed("* and ** in cuda.jit(...) are not run")
        args = []
        for a in node.args:
            v = self.eval(a)
            if self.k.is_student_function(v):
                args.append(v)
            else:
                sig = self._signature(v, a)
                if not self.lazy:  # lazy: compiled later for the contract's signature
                    args.append(sig)
        kwargs = {}
        for kw in node.keywords:
            if kw.arg not in JIT_OPTIONS:
                raise Disallowed(f"cuda.jit option {kw.arg}= is not allowed here")
            value = self.data(kw.value)
            if kw.arg not in DROPPED_JIT_OPTIONS:
                kwargs[kw.arg] = value
        made = self.k.jit(*args, **kwargs)
        if callable(made) and not self.k.is_kernel(made):   # a decorator: cuda.jit(sig)
            self.decorators[id(made)] = made
        return made

    def _decorate(self, decorator, node):
        """``cuda.jit(...)(f)``: the decorator ``cuda.jit(...)`` returned, called on one
        function of this file, as ``@cuda.jit(...)`` above its ``def`` would be."""
        if len(node.args) != 1 or node.keywords or isinstance(node.args[0], ast.Starred):
            raise Disallowed(f"`{ast.unparse(node)}`: cuda.jit(...) is called on one function")
        fn = self.eval(node.args[0])
        if not self.k.is_student_function(fn):
            raise Disallowed(f"`{ast.unparse(node)}`: cuda.jit(...) is called on a function "
                             "defined in this file")
        return decorator(fn)

    def _signature(self, v, node):
        if isinstance(v, str):
            check_signature_string(v, self.k)
            return v
        if type(v) in (tuple, list):
            return type(v)(self._signature(x, node) for x in v)
        if isinstance(v, (self.k.Type, self.k.Signature)):
            return v
        raise Disallowed(f"`{ast.unparse(node)}` is not a kernel signature")


def _hashable(v) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True


import operator as _op  # noqa: E402

_BINOPS = {ast.Add: _op.add, ast.Sub: _op.sub, ast.Mult: _op.mul, ast.Div: _op.truediv,
           ast.FloorDiv: _op.floordiv, ast.Mod: _op.mod, ast.Pow: _op.pow,
           ast.LShift: _op.lshift, ast.RShift: _op.rshift, ast.BitOr: _op.or_,
           ast.BitAnd: _op.and_, ast.BitXor: _op.xor}
_UNARYOPS = {ast.UAdd: _op.pos, ast.USub: _op.neg, ast.Not: _op.not_, ast.Invert: _op.invert}
_CMPOPS = {ast.Eq: _op.eq, ast.NotEq: _op.ne, ast.Lt: _op.lt, ast.LtE: _op.le, ast.Gt: _op.gt,
           ast.GtE: _op.ge, ast.Is: _op.is_, ast.IsNot: _op.is_not,
           ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}


def check_signature_string(sig: str, kinds: _Kinds) -> None:
    """A string signature (``"void(float32[:, ::1], int32)"``,
    ``"UniTuple(int64, 2)(int64, int64)"``) may only name Numba types and type classes, call
    them with such types and int, str or None constants, and call or index what those give:
    Numba ``eval``s it, so anything else could run code. Raises :class:`Disallowed`."""
    try:
        tree = pyast.parse(sig, mode="eval")
    except SyntaxError:
        raise Disallowed(f"signature {sig!r} does not parse") from None
    ok_nodes = (ast.Expression, ast.Call, ast.Name, ast.Subscript, ast.Slice, ast.Tuple,
                ast.Constant, ast.Load)
    for n in ast.walk(tree):
        if not isinstance(n, ok_nodes):
            raise Disallowed(f"signature {sig!r}: {type(n).__name__} is not allowed")
        if isinstance(n, ast.Call) and (n.keywords or not isinstance(
                n.func, (ast.Name, ast.Call, ast.Subscript))):
            # a type (float32), or a type made of types (UniTuple(int64, 2), float32[:])
            raise Disallowed(f"signature {sig!r} calls something other than a type")
        if isinstance(n, ast.Constant) and type(n.value) not in (int, str, type(None)):
            raise Disallowed(f"signature {sig!r} holds a {type(n.value).__name__}")
        if isinstance(n, ast.Name):
            v = vars(kinds.nbtypes).get(n.id)
            is_type_class = isinstance(v, type) and issubclass(v, kinds.Type)
            if n.id.startswith("_") or not (isinstance(v, kinds.Type) or is_type_class):
                raise Disallowed(f"signature {sig!r}: {n.id} is not a Numba type")


def _targets(node) -> list[str]:
    if isinstance(node, ast.Name):
        if _is_dunder(node.id):
            raise Disallowed(f"assigning {node.id} is not run")
        return [node.id]
    if isinstance(node, (ast.Tuple, ast.List)):
        return [n for e in node.elts for n in _targets(e)]
    raise Disallowed("only plain names are assigned")


def _assign(ns: dict, target, value) -> None:
    if isinstance(target, ast.Name):
        ns[target.id] = value
        return
    values = list(value)
    if len(values) != len(target.elts):
        raise ValueError(f"cannot unpack {len(values)} values into {len(target.elts)} names")
    for t, v in zip(target.elts, values):
        _assign(ns, t, v)


_STATEMENTS = {"Expr": "a call or expression", "If": "an if block", "For": "a for loop",
               "FunctionDef": "a def", "Import": "an import", "ImportFrom": "an import",
               "While": "a while loop", "With": "a with block", "Try": "a try block",
               "ClassDef": "a class", "Delete": "a del", "Global": "a global statement",
               "Raise": "a raise", "Assert": "an assert", "AsyncFunctionDef": "an async def",
               "Match": "a match block"}


def _lambda_as_def(node):
    """``NAME = lambda ARGS: EXPR`` at the top level as the ``def NAME(ARGS): return EXPR`` it
    is to Python (the same checks as any ``def``: constant defaults, the reach of its body);
    any other statement as is."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Lambda)):
        return node
    fn = ast.FunctionDef(name=node.targets[0].id, args=node.value.args,
                         body=[ast.copy_location(ast.Return(value=node.value.body),
                                                 node.value.body)],
                         decorator_list=[], returns=None, type_comment=None)
    ast.copy_location(fn, node)
    fn.end_lineno, fn.end_col_offset = node.end_lineno, node.end_col_offset
    return fn


def _check_branches(node: ast.If) -> None:
    """Both branches of a top-level ``if`` (and of the ``if`` blocks within) hold only
    assignments, ``pass`` and literals; else :class:`Disallowed`."""
    for stmt in (*node.body, *node.orelse):
        if isinstance(stmt, ast.If):
            _check_branches(stmt)
        elif not (isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Pass)) or (
                isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant))):
            what = _STATEMENTS.get(type(stmt).__name__, f"a {type(stmt).__name__} statement")
            raise Disallowed(f"an if block at the top level is run only when it holds plain "
                             f"assignments; this one holds {what}")


def _is_main_guard(node) -> bool:
    return (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
            and isinstance(node.test.left, ast.Name) and node.test.left.id == "__name__")


def _bound_names(node) -> list[str]:
    """Names a skipped statement would have bound (for the NameError hint)."""
    names = []
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            names.append(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(n.name)
        elif isinstance(n, ast.alias):
            names.append((n.asname or n.name).split(".")[0])
    return names


class _Runner:
    def __init__(self, path: str, ns: dict, kinds: _Kinds, lazy: bool = False):
        self.path, self.ns, self.k = path, ns, kinds
        self.ev = _Evaluator(ns, kinds, lazy)
        self.skipped: list[Skipped] = []
        self.skipped_names: dict[str, int] = {}
        self.skipped_nodes: list[tuple[ast.stmt, str]] = []
        self.kept: list[ast.stmt] = []

    def skip(self, node, reason: str) -> None:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        self.skipped.append(Skipped(first, reason))
        self.skipped_nodes.append((node, reason))
        for name in _bound_names(node):
            self.skipped_names.setdefault(name, node.lineno)

    def exec_import(self, node) -> None:
        """Run an import through the namespace's gate (:func:`autograder.source.reach.gate`):
        what it would bind outside :data:`autograder.source.reach.MODULES` is skipped."""
        try:
            self.exec_node(node)
        except reach.ReachError as exc:
            raise Disallowed(str(exc)) from None

    def exec_node(self, node) -> None:
        code = compile(ast.Module(body=[node], type_ignores=[]), self.path, "exec",
                       dont_inherit=True)
        exec(code, self.ns)

    def run(self, tree: ast.Module) -> None:
        for node in tree.body:
            node = _lambda_as_def(node)
            try:
                self.statement(node)
                if not _is_main_guard(node):  # never run, as when Python imports the file
                    self.kept.append(node)
            except Disallowed as exc:
                self.skip(node, str(exc))
            except Exception as exc:
                exc.submission_lineno = getattr(exc, "submission_lineno", None) or node.lineno
                self._hint(exc)
                raise

    def _hint(self, exc: Exception) -> None:
        if isinstance(exc, NameError) and getattr(exc, "name", None) in self.skipped_names:
            line = self.skipped_names[exc.name]
            exc.args = (f"{exc.args[0]} (the statement on line {line} that would define it is "
                        "not run by the grader: it runs only imports of numba, numpy and math, "
                        "constant assignments and function definitions)",)

    def statement(self, node) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not _root_allowed(alias.name):
                    raise Disallowed(f"import {alias.name}: only numba, numpy and math are "
                                     "imported")
            self.exec_import(node)
        elif isinstance(node, ast.ImportFrom):
            if node.module == "__future__":
                return
            if node.level or not node.module or not _root_allowed(node.module):
                raise Disallowed(f"from {node.module} import: only numba, numpy and math are "
                                 "imported")
            for alias in node.names:
                if alias.name != "*" and alias.name.startswith("_"):
                    raise Disallowed(f"name {alias.name} is not imported")
            self.exec_import(node)
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                _targets(t)
            value = self.ev.eval(node.value)
            for t in node.targets:
                _assign(self.ns, t, value)
        elif isinstance(node, ast.AnnAssign):
            if node.value is None or not isinstance(node.target, ast.Name):
                raise Disallowed("only plain names are assigned")
            _targets(node.target)
            self.ns[node.target.id] = self.ev.eval(node.value)
        elif isinstance(node, ast.AugAssign):
            if not isinstance(node.target, ast.Name):
                raise Disallowed("only plain names are assigned")
            _targets(node.target)
            load = ast.Name(id=node.target.id, ctx=ast.Load())
            self.ns[node.target.id] = self.ev.eval(ast.BinOp(load, node.op, node.value))
        elif isinstance(node, ast.FunctionDef):
            self.function(node)
        elif isinstance(node, ast.If) and not _is_main_guard(node):
            self.if_block(node)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            return  # a docstring or a bare literal
        elif isinstance(node, ast.Pass) or _is_main_guard(node):
            return
        else:
            what = _STATEMENTS.get(type(node).__name__, f"a {type(node).__name__} statement")
            raise Disallowed(f"{what} at the top level is not run")

    def if_block(self, node: ast.If) -> None:
        """A top-level ``if`` whose test is a constant expression and whose branches hold only
        assignments (``if DEBUG: BLOCK_SIZE = 64`` / ``else: BLOCK_SIZE = 256``): the branch
        Python takes is run. Its test is data only (never a setting read off Numba), so the
        simulator child and the GPU-compile child take the same branch. Raises
        :class:`Disallowed` for any other ``if``, which is skipped whole."""
        _check_branches(node)
        try:
            test = self.ev.data(node.test)
        except Disallowed as exc:
            raise Disallowed(f"an if block at the top level is run only when its test is a "
                             f"constant ({exc})") from None
        for stmt in node.body if test else node.orelse:
            self.statement(stmt)

    def function(self, node: ast.FunctionDef) -> None:
        if _is_dunder(node.name):
            raise Disallowed(f"def {node.name} is not run")
        decorators = [self.decorator(d) for d in node.decorator_list]
        a = node.args
        defaults = tuple(self.ev.data(d) for d in a.defaults)
        kwdefaults = {arg.arg: self.ev.data(d)
                      for arg, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None}
        bare = ast.FunctionDef(
            name=node.name,
            args=ast.arguments(
                posonlyargs=[ast.arg(arg=x.arg) for x in a.posonlyargs],
                args=[ast.arg(arg=x.arg) for x in a.args],
                vararg=ast.arg(arg=a.vararg.arg) if a.vararg else None,
                kwonlyargs=[ast.arg(arg=x.arg) for x in a.kwonlyargs],
                kw_defaults=[None] * len(a.kwonlyargs),
                kwarg=ast.arg(arg=a.kwarg.arg) if a.kwarg else None,
                defaults=[]),
            body=node.body, decorator_list=[], returns=None, type_comment=None)
        ast.copy_location(bare, node)
        ast.fix_missing_locations(bare)
        self.exec_node(bare)
        fn = self.ns[node.name]
        fn.__defaults__ = defaults or None
        fn.__kwdefaults__ = kwdefaults or None
        obj = fn
        for deco in reversed(decorators):
            obj = deco(obj)
        self.ns[node.name] = obj

    def decorator(self, node):
        target = node.func if isinstance(node, ast.Call) else node
        try:
            is_jit = self.ev.eval(target) is self.k.jit
        except Disallowed:
            is_jit = False
        if not is_jit:
            raise Disallowed(f"decorator @{ast.unparse(node)}: only @cuda.jit is allowed")
        if isinstance(node, ast.Call):
            deco = self.ev._jit_call(node)
            if not callable(deco) or self.k.is_kernel(deco):
                raise Disallowed(f"decorator @{ast.unparse(node)} is not a decorator")
            return deco
        return self.k.jit


def run_definitions(text: str, path: str, namespace: dict, lazy: bool = False,
                    live=()) -> list[Skipped]:
    """Run the definitions in ``text`` (compiled as file ``path``) into ``namespace``; return
    the statements skipped. Raises what an allowed statement raises (``ImportError``,
    ``NameError``, ...), with ``submission_lineno`` set, and ``SyntaxError``; raises
    :class:`NotGradable` for a skipped statement that binds a name the kept code reads (or one
    in ``live``: the names the exercise asks for), and for a kernel or device function that
    reads what differs between the simulator and a GPU (:mod:`autograder.source.same_code`).

    ``lazy``: leave out the signatures given to ``cuda.jit`` (after checking them), so nothing
    compiles eagerly: the GPU-compile child has no GPU to compile for, and compiles the kernel
    for the contract's signature itself."""
    tree = pyast.parse(text, filename=path)
    namespace.setdefault("__builtins__", reach.student_builtins())
    runner = _Runner(path, namespace, _Kinds(path), lazy)
    runner.run(tree)
    check_skipped_bindings(runner, text, set(live))
    defs = {n.lineno: n for n in runner.kept if isinstance(n, ast.FunctionDef)}
    check_kernels(runner, defs)
    _check_reach(runner, defs, set(live))
    return runner.skipped


def _check_reach(runner, defs: dict, live: set) -> None:
    """:func:`autograder.source.reach.check_functions` on the functions the grader may run:
    the kernels and device functions, the functions the contract names (``live``) and the
    submission's functions those read. Raises :class:`NotGradable` with the line."""
    from autograder.source.same_code import _kernel_reads

    names = set(_kernel_reads(runner.ns, runner.k, live)) | live
    names |= {n for n, v in runner.ns.items() if runner.k.is_kernel(v)}
    nodes = []
    for name in sorted(names):
        value = runner.ns.get(name)
        fn = getattr(value, "py_func", value) if runner.k.is_kernel(value) else value
        if not runner.k.is_student_function(fn):
            continue
        node = defs.get(fn.__code__.co_firstlineno)
        if node is not None and node not in nodes:
            nodes.append(node)
    found = reach.check_functions(nodes, runner.ns)
    if found:
        line, message = found
        raise NotGradable(f"line {line}: {message}", line)


def bindings(namespace: dict, path: str) -> dict[str, str]:
    """What each name of the submission's namespace holds, as text the simulator child and the
    GPU-compile child can compare: a data value's type and value (a digest for arrays), a
    type's name, a module's name, a kernel's or function's name and first line; other
    callables (Numba's, NumPy's) as ``callable``."""
    import hashlib

    kinds = _Kinds(path)
    out = {}
    for name, v in namespace.items():
        if _is_dunder(name):
            continue
        if kinds.is_data(v):
            if isinstance(v, kinds.np.ndarray):
                digest = hashlib.sha256(v.tobytes()).hexdigest()[:16]
                out[name] = f"data:ndarray:{v.dtype}:{v.shape}:{digest}"
            else:
                out[name] = f"data:{type(v).__name__}:{v!r}"[:200]
        elif kinds.is_module(v) or isinstance(v, types.ModuleType):
            out[name] = f"module:{getattr(v, '__name__', '?')}"
        elif kinds.is_kernel(v) or kinds.is_student_function(v):
            code = getattr(getattr(v, "py_func", v), "__code__", None)
            kind = "kernel" if kinds.is_kernel(v) else "function"
            out[name] = f"{kind}:{getattr(code, 'co_name', '?')}:" \
                        f"{getattr(code, 'co_firstlineno', '?')}"
        elif kinds.is_type(v):
            out[name] = f"type:{v}"[:200]
        elif callable(v):
            out[name] = "callable"
        else:
            out[name] = f"object:{type(v).__name__}"
    return out
