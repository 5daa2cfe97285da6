"""Run only a submission's definitions: the anti-cheat core of the child process.

The grader needs a submission's names (constants, kernels, device functions, plain functions),
never its top-level statements. Running those statements would let a submission patch Numba or
NumPy, start threads, read the request out of the harness's memory, or write forged records on
the channel, all before the first kernel launch; no check made afterwards in the same process
could be trusted. So the child runs, in order, only:

* imports of ``numba``, ``numpy`` and ``math`` (and their submodules), names without a leading
  underscore;
* assignments of *constant expressions* to plain names (``TILE_WIDTH = 16``,
  ``PADDED = TILE_DIM + 1``, ``SHAPE = (TILE, TILE)``, ``dtype = np.float32``,
  ``jit = cuda.jit``), evaluated here by a small interpreter: literals, names, arithmetic,
  comparisons, tuples, subscripts, attributes without a leading underscore on allowed modules,
  and calls of an allow-listed set of pure functions (``int``, ``min``, ``math.*``, NumPy and
  Numba type constructors, a few NumPy array constructors, ``cuda.jit``);
* ``def`` statements, whose decorators must be ``cuda.jit`` (with literal options from an
  allow-list, and string signatures checked against a signature grammar), whose default values
  must be constant expressions, and whose annotations are dropped. Function bodies are compiled,
  not run.

Everything else (``if`` blocks, loops, calls such as ``kernel[grid, block](...)`` or
``os._exit(0)``, classes, attribute or item assignments) is *skipped* and reported, so a
notebook's own test cells cost nothing and change nothing.

Values read off Numba's modules must be modules, callables or Numba types, never data (so a
submission cannot branch on ``numba.config.ENABLE_CUDASIM``), and comparisons and conditions
take data only: the simulator child and the GPU-compile child build the same definitions.

With this, on a GPU no student Python runs in the child at all: kernels and device functions are
compiled by Numba. On the simulator a kernel's body runs as Python, which is why the grader
counts simulator results only for a kernel that also compiles for a real GPU, from the same
definitions (:func:`bindings`, compared by :func:`autograder.judge.definitions_differ`).

What the simulator runs must be what a GPU compiles, and Numba drops a branch whose condition it
can decide while compiling. So the loader also refuses (:class:`NotGradable`, with the line):

* a skipped statement that binds a name the kept code reads: a kernel, device function or a
  function they call, a later kept statement that such code depends on, or a name the exercise
  asks for (``ON_SIM = None`` then ``ON_SIM = cuda.ldca``: None on the simulator, so skipped
  there, and a function when compiled for a GPU);
* in a kernel or device function, what the simulator and a GPU answer differently: Python type
  tests and other built-ins outside :data:`KERNEL_BUILTINS`, values read off Numba's modules
  (``numba.config.ENABLE_CUDASIM``), a module used as a value, ``try``, ``global``,
  ``nonlocal`` and attributes with a leading underscore (:func:`_check_kernel_body`).
"""

from __future__ import annotations

import ast
import builtins
import math
import types
from dataclasses import dataclass

ALLOWED_MODULES = ("numba", "numpy", "math")
JIT_OPTIONS = frozenset({"device", "inline", "forceinline", "debug", "opt", "lineinfo",
                         "fastmath", "max_registers", "boundscheck", "launch_bounds"})
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
        return isinstance(v, types.ModuleType) and _root_allowed(v.__name__)

    def is_student_function(self, v) -> bool:
        return (type(v) is types.FunctionType
                and getattr(v.__code__, "co_filename", None) == self.path)

    def is_kernel(self, v) -> bool:
        """A dispatcher ``cuda.jit`` made here (simulator or real)."""
        try:
            from numba.cuda.simulator.kernel import FakeCUDAKernel
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
            kwargs[kw.arg] = self.data(kw.value)
        return self.k.jit(*args, **kwargs)

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
    """A string signature (``"void(float32[:, ::1], int32)"``) may only name Numba types:
    Numba ``eval``s it, so anything else could run code."""
    try:
        tree = ast.parse(sig, mode="eval")
    except SyntaxError:
        raise Disallowed(f"signature {sig!r} does not parse") from None
    ok_nodes = (ast.Expression, ast.Call, ast.Name, ast.Subscript, ast.Slice, ast.Tuple,
                ast.Constant, ast.Load)
    for n in ast.walk(tree):
        if not isinstance(n, ok_nodes):
            raise Disallowed(f"signature {sig!r}: {type(n).__name__} is not allowed")
        if isinstance(n, ast.Call) and (not isinstance(n.func, ast.Name) or n.keywords):
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
               "While": "a while loop", "With": "a with block", "Try": "a try block",
               "ClassDef": "a class", "Delete": "a del", "Global": "a global statement",
               "Raise": "a raise", "Assert": "an assert", "AsyncFunctionDef": "an async def",
               "Match": "a match block"}


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

    def exec_node(self, node) -> None:
        code = compile(ast.Module(body=[node], type_ignores=[]), self.path, "exec",
                       dont_inherit=True)
        exec(code, self.ns)

    def run(self, tree: ast.Module) -> None:
        for node in tree.body:
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
            self.exec_node(node)
        elif isinstance(node, ast.ImportFrom):
            if node.module == "__future__":
                return
            if node.level or not node.module or not _root_allowed(node.module):
                raise Disallowed(f"from {node.module} import: only numba, numpy and math are "
                                 "imported")
            for alias in node.names:
                if alias.name != "*" and alias.name.startswith("_"):
                    raise Disallowed(f"name {alias.name} is not imported")
            self.exec_node(node)
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
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            return  # a docstring or a bare literal
        elif isinstance(node, ast.Pass) or _is_main_guard(node):
            return
        else:
            what = _STATEMENTS.get(type(node).__name__, f"a {type(node).__name__} statement")
            raise Disallowed(f"{what} at the top level is not run")

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


class NotGradable(Exception):
    """The definitions the grader runs would not behave as the file does when Python runs it, or
    a kernel reads something that differs between the simulator and a GPU. ``submission_lineno``
    names the line."""

    def __init__(self, message: str, lineno: int):
        super().__init__(message)
        self.submission_lineno = lineno


_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda,
                  ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _scope_walk(node):
    """``node`` and what is under it in the same scope (not the bodies of functions, classes,
    lambdas or comprehensions; their decorators, defaults and bases are in the scope)."""
    yield node
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        inner = [*node.decorator_list, *node.args.defaults,
                 *(d for d in node.args.kw_defaults if d is not None)]
    elif isinstance(node, ast.ClassDef):
        inner = [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]
    elif isinstance(node, _NESTED_SCOPES):
        inner = []
    else:
        inner = list(ast.iter_child_nodes(node))
    for child in inner:
        yield from _scope_walk(child)


def module_bindings(node) -> set[str]:
    """The module-level names a top-level statement binds (or deletes) when Python runs it."""
    names = set()
    for n in _scope_walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            names.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
        elif isinstance(n, ast.alias):
            names.add((n.asname or n.name).split(".")[0])
        elif isinstance(n, ast.ExceptHandler) and n.name:
            names.add(n.name)
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
            names.add(n.name)
        elif isinstance(n, ast.MatchMapping) and n.rest:
            names.add(n.rest)
    return names


def _module_reads(node) -> set[str]:
    """The names a kept top-level statement reads when it runs (for a ``def``: its decorators
    and defaults; its body runs later, see :func:`_global_reads`)."""
    return {n.id for n in _scope_walk(node)
            if n is not node and isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


_GLOBAL_OPS = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL", "DELETE_GLOBAL",
                         "STORE_NAME", "DELETE_NAME"})


def _global_reads(code) -> set[str]:
    """The global names a code object (and the code nested in it) reads or writes."""
    import dis

    names = set()
    for ins in dis.get_instructions(code):
        if ins.opname in _GLOBAL_OPS:
            names.add(ins.argval)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_reads(const)
    return names


def _student_code(value, kinds: _Kinds):
    """The code object of a kernel, device function or function of the submission, or None."""
    fn = getattr(value, "py_func", value) if kinds.is_kernel(value) else value
    return fn.__code__ if kinds.is_student_function(fn) else None


def _kernel_reads(ns: dict, kinds: _Kinds, roots) -> dict[str, str]:
    """Global name → the function that reads it, for the kernels and device functions in
    ``ns``, the functions named in ``roots``, and the functions of the submission those read
    (transitively)."""
    todo = [(name, ns[name]) for name in ns if kinds.is_kernel(ns[name])]
    todo += [(name, ns[name]) for name in roots if name in ns]
    reads: dict[str, str] = {}
    seen = set()
    while todo:
        name, value = todo.pop()
        code = _student_code(value, kinds)
        if code is None or code in seen:
            continue
        seen.add(code)
        for g in sorted(_global_reads(code)):
            reads.setdefault(g, name)
            if g in ns and _student_code(ns[g], kinds) is not None:
                todo.append((g, ns[g]))
    return reads


def _check_skipped_bindings(runner: _Runner, text: str, live) -> None:
    """Refuse a skipped statement that binds a name the kept code reads afterwards: a kernel
    or function that reads it (when no kept statement after the skipped one binds it again), a
    kept statement after it, or a name the contract asks for (``live``). Python would have run
    that statement, so the grader would grade code that behaves otherwise, and the simulator
    and a GPU may even skip different statements. Raises :class:`NotGradable`."""
    kept_after: dict[str, list[int]] = {}
    for node in runner.kept:
        for name in module_bindings(node):
            kept_after.setdefault(name, []).append(node.lineno)
    reads = _kernel_reads(runner.ns, runner.k, live)
    needed = set(reads) | live  # and what the kept statements that bind those read
    grew = True
    while grew:
        grew = False
        for node in runner.kept:
            if module_bindings(node) & needed and not _module_reads(node) <= needed:
                needed |= _module_reads(node)
                grew = True
    lines = text.splitlines()
    for node, reason in runner.skipped_nodes:
        line = node.lineno
        for name in sorted(module_bindings(node)):
            if any(k > line for k in kept_after.get(name, [])):
                continue  # rebound by a kept statement later, as in Python
            reader = None
            if name in reads:
                who = reads[name]
                kind = _function_kind(runner.ns.get(who), runner.k)
                reader = f"your {kind} {who} reads it"
            elif name in live:
                reader = "the exercise asks for it"
            elif name in needed:
                later = next((k for k in runner.kept if k.lineno > line
                              and name in _module_reads(k)
                              and module_bindings(k) & needed), None)
                if later is not None:
                    reader = f"line {later.lineno} reads it"
            if reader is None:
                continue
            code = lines[line - 1].strip()[:60] if 0 < line <= len(lines) else ""
            earlier = [k for k in kept_after.get(name, []) if k < line]
            was = (f"; the grader keeps line {earlier[-1]}'s value instead" if earlier
                   else "")
            raise NotGradable(
                f"line {line} (`{code}`) binds {name} and {reader}, but the grader does not run "
                f"that line ({reason}){was}: your code would not run as it does in Python (nor "
                f"the same on the simulator as on a GPU). Make line {line} a plain constant "
                "assignment, or remove it", line)


# Built-ins a kernel or device function may use: what Numba compiles for a GPU the same way the
# simulator runs it. Type tests (isinstance, type, hasattr, getattr, ...) are not among them:
# the simulator passes its own array objects, and Numba decides such tests while compiling, so
# a branch on one can run on the simulator only.
KERNEL_BUILTINS = frozenset({
    "range", "len", "min", "max", "abs", "int", "float", "bool", "complex", "round", "pow",
    "divmod", "enumerate", "zip", "print", "slice", "tuple", "sum", "any", "all", "reversed",
    "iter", "next", "None", "True", "False"})


def _function_locals(fn: ast.FunctionDef) -> set[str]:
    a = fn.args
    names = {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
    names |= {x.arg for x in (a.vararg, a.kwarg) if x is not None}
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            names.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.Lambda)) and n is not fn:
            names |= _function_locals(n) if isinstance(n, ast.FunctionDef) else {
                x.arg for x in n.args.args}
    return names


def _chain(node):
    """``(root name, [attr, ...])`` for ``name.a.b``, else None."""
    attrs = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return node.id, attrs[::-1]
    return None


def _check_kernel_body(fn: ast.FunctionDef, ns: dict, kinds: _Kinds, what: str) -> None:
    """Refuse, in a kernel or device function, what can run differently on the simulator than
    on a GPU: a built-in outside :data:`KERNEL_BUILTINS`, a setting read off Numba's modules
    (``numba.config.ENABLE_CUDASIM``; ``cuda.ldca``, a function on a GPU, is None on the
    simulator), a module kept in a variable or compared, ``try``, ``global`` and ``nonlocal``,
    and attributes with a leading underscore. Raises :class:`NotGradable`."""
    local = _function_locals(fn)
    refuse = None
    for n in ast.walk(fn):
        line = getattr(n, "lineno", fn.lineno)
        if isinstance(n, (ast.Try, ast.Global, ast.Nonlocal)) or \
                type(n).__name__ == "TryStar":
            refuse = (line, f"`{type(n).__name__.lower().replace('star', '')}` is not "
                      "allowed in a kernel")
        elif isinstance(n, ast.Attribute) and n.attr.startswith("_"):
            refuse = (line, f"attribute {n.attr} is not available in a kernel")
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in local \
                and n.id not in ns and n.id not in KERNEL_BUILTINS:
            if hasattr(builtins, n.id) and not (isinstance(getattr(builtins, n.id), type) and
                                                issubclass(getattr(builtins, n.id),
                                                           BaseException)):
                refuse = (line, f"the built-in {n.id} is not available in a kernel: the "
                          "simulator and a GPU can answer it differently")
        elif isinstance(n, (ast.Attribute, ast.Name)) and isinstance(n.ctx, ast.Load):
            refuse = _module_value_problem(n, ns, kinds, local, fn) or refuse
        if refuse:
            raise NotGradable(f"{what} {fn.name}, line {refuse[0]}: {refuse[1]}", refuse[0])


def _module_value_problem(node, ns, kinds: _Kinds, local, fn):
    """A problem with an attribute chain rooted at a module the kernel reads, or None: a data
    value read off Numba's modules, or a module used as a value."""
    chain = _chain(node)
    if chain is None or chain[0] in local or chain[0] not in ns:
        return None
    root, attrs = chain
    value = ns[root]
    if not kinds.is_module(value):
        return None
    where = root
    for attr in attrs:
        if not isinstance(value, types.ModuleType):
            return None  # an attribute of a function or type: Numba's own business
        if not hasattr(value, attr):
            return None  # the simulator gives kernels more (cuda.threadIdx); Numba decides
        value = getattr(value, attr)
        where += "." + attr
        if kinds.is_data(value):
            if ns[root].__name__.split(".")[0] != "numba":
                return None  # math.pi, np.inf: constants
            return (node.lineno, f"`{where}` is {value!r:.30} here, not a function or type of "
                                 "Numba: a setting, or what the simulator lacks, which differs "
                                 "between the simulator and a GPU; a kernel may not read it")
    if isinstance(value, types.ModuleType) and _used_as_value(node, fn):
        return (node.lineno, f"the module `{where}` is used as a value: a kernel may only "
                             "call its functions and read its types")
    return None


def _used_as_value(node, fn) -> bool:
    """``node`` (a module) is not the base of an attribute: stored, compared, passed."""
    for parent in ast.walk(fn):
        if isinstance(parent, ast.Attribute) and parent.value is node:
            return False
    return True


def _check_kernels(runner: _Runner, defs: dict) -> None:
    """:func:`_check_kernel_body` for every kernel and device function the namespace holds
    (``defs``: first line of a ``def`` → its node)."""
    for name, value in list(runner.ns.items()):
        if not runner.k.is_kernel(value):
            continue
        py_func = getattr(value, "py_func", None)
        code = getattr(py_func, "__code__", None)
        node = defs.get(getattr(code, "co_firstlineno", None))
        if node is None or code.co_filename != runner.path:
            continue
        _check_kernel_body(node, runner.ns, runner.k, _function_kind(value, runner.k))


def _function_kind(value, kinds: _Kinds) -> str:
    """``kernel``, ``device function`` or ``function``."""
    if not kinds.is_kernel(value):
        return "function"
    device = getattr(value, "_device", None)
    if device is None:
        device = bool(getattr(value, "targetoptions", {}).get("device", False))
    return "device function" if device else "kernel"


def run_definitions(text: str, path: str, namespace: dict, lazy: bool = False,
                    live=()) -> list[Skipped]:
    """Run the definitions in ``text`` (compiled as file ``path``) into ``namespace``; return
    the statements skipped. Raises what an allowed statement raises (``ImportError``,
    ``NameError``, ...), with ``submission_lineno`` set, and ``SyntaxError``; raises
    :class:`NotGradable` for a skipped statement that binds a name the kept code reads (or one
    in ``live``: the names the exercise asks for), and for a kernel or device function that
    reads what differs between the simulator and a GPU (:func:`_check_kernel_body`).

    ``lazy``: leave out the signatures given to ``cuda.jit`` (after checking them), so nothing
    compiles eagerly: the GPU-compile child has no GPU to compile for, and compiles the kernel
    for the contract's signature itself."""
    tree = ast.parse(text, filename=path)
    namespace.setdefault("__builtins__", builtins)
    runner = _Runner(path, namespace, _Kinds(path), lazy)
    runner.run(tree)
    _check_skipped_bindings(runner, text, set(live))
    _check_kernels(runner, {n.lineno: n for n in runner.kept if isinstance(n, ast.FunctionDef)})
    return runner.skipped


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
