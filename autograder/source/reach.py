"""What a submission's code may reach: the contract names numba, numpy and math, and nothing
else (not the grader's package, not frames, builtins or importlib).

The policy, in one place, for the three layers that enforce it:

* **imports** (:func:`import_problem`, :func:`gate`): a submission imports only the modules in
  :data:`MODULES` (``numba``, ``numba.cuda`` and its device-side submodules, Numba's types,
  ``numpy`` and a few of its pure submodules, ``math``), and ``from M import NAME`` binds only
  names of one of those or modules of :data:`MODULES` (``from numba import sys`` and
  ``from numba import config`` bind modules outside it). The gate is the ``__import__`` of the
  submission's built-ins, so ``import`` inside a function goes through it too;
* **built-ins** (:func:`student_builtins`): the submission's module gets its own ``__builtins__``
  dict, the harmless built-ins of :data:`BUILTINS` and every exception class; the rest
  (:data:`REFUSED_BUILTINS`: ``eval``, ``exec``, ``open``, ``getattr``, ``globals``, ``type``, ...)
  raise :class:`ReachError` with a message that says what is allowed. Numba compiles kernels
  with its own built-ins, so a GPU compiles the same code;
* **the source** (:func:`check_functions`, run by
  :func:`autograder.source.definitions.run_definitions` with Numba loaded): in the submission's
  functions (kernels, device functions and plain functions alike), an attribute chain on a module
  (``numba.core.config.os``, ``np.ctypeslib``) may reach only modules of :data:`MODULES`, and a
  module is only read through (``np.float32``), never kept, passed or compared. The spellings
  refused without Numba (attributes with a leading underscore, frame and code introspection, the
  dunder names) are :data:`INTROSPECTION_ATTRS` and :data:`INTROSPECTION_PREFIXES`, which the parse
  check (:mod:`autograder.sandbox.parse_check`) refuses before any child starts.

The child adds a fourth layer that holds whatever a submission spells: an audit hook
(:mod:`autograder.child.guard`) that refuses frames, code objects, ``exec``, new imports, files and
processes to code of the submission's file.
"""

from __future__ import annotations

import ast
import builtins
import sys
import types

#: The roots of everything a submission may import.
ALLOWED_ROOTS = ("numba", "numpy", "math")

#: The modules a submission's code may import, hold or read through. Numba's and NumPy's other
#: modules hold the grader's world (``numba.sys``, ``numba.config.os``, ``numba.cuda.importlib``,
#: ``numpy.ctypeslib``): reaching one is refused.
MODULES = frozenset({
    "numba", "numba.cuda", "numba.cuda.random", "numba.cuda.libdevice", "numba.cuda.fp16",
    "numba.cuda.bf16", "numba.cuda.cg", "numba.cuda.types", "numba.core.types",
    "numpy", "numpy.linalg", "numpy.random", "numpy.fft", "math"})

#: How the messages name what is allowed.
ALLOWED_TEXT = "numba (numba.cuda), numpy and math"

#: The built-ins a submission's code has (with every exception class): what honest kernels and
#: exercises use, and nothing that reaches objects by name or runs code.
BUILTINS = frozenset({
    "abs", "all", "any", "ascii", "bin", "bool", "bytes", "callable", "chr", "complex", "dict",
    "divmod", "enumerate", "filter", "float", "format", "frozenset", "hash", "hex", "int",
    "isinstance", "issubclass", "iter", "len", "list", "map", "max", "min", "next", "oct", "ord",
    "pow", "print", "range", "repr", "reversed", "round", "set", "slice", "sorted", "str", "sum",
    "tuple", "zip", "True", "False", "None", "Ellipsis", "NotImplemented", "__debug__"})

#: Built-ins that stand in the submission's ``__builtins__`` as a refusal with a message.
REFUSED_BUILTINS = ("eval", "exec", "compile", "open", "input", "breakpoint", "help",
                    "getattr", "setattr", "delattr", "hasattr", "globals", "locals", "vars",
                    "dir", "id", "type", "object", "super", "property", "classmethod",
                    "staticmethod", "memoryview", "bytearray", "exit", "quit",
                    "__build_class__", "__loader__", "__spec__")

#: Attributes of frames, code objects, generators, coroutines and tracebacks (with
#: :data:`INTROSPECTION_PREFIXES`): the way from a kernel's body to the harness's variables and
#: built-ins. Refused in a submission's functions, with a leading underscore's.
INTROSPECTION_ATTRS = frozenset({
    "f_back", "f_builtins", "f_globals", "f_locals", "f_code", "f_trace", "f_lasti", "f_lineno",
    "gi_frame", "gi_code", "gi_yieldfrom", "gi_running", "gi_suspended",
    "cr_frame", "cr_code", "cr_await", "cr_running", "cr_origin", "cr_suspended",
    "ag_frame", "ag_code", "ag_await", "ag_running",
    "tb_frame", "tb_next", "tb_lasti", "tb_lineno", "func_globals", "func_code",
    "mro", "modules", "builtins", "importlib"})
INTROSPECTION_PREFIXES = ("f_", "gi_", "cr_", "ag_", "tb_", "co_")

#: Names of NumPy's and Numba's callables (and modules) that read or write files, unpickle, map
#: memory, or register a callable that the library calls later, from whatever frame formats or
#: computes next (print options' ``formatter``, floating-point error callbacks, ufuncs made from
#: Python callables): a submission that registered ``np.load`` as a formatter had the grader's
#: own ``repr`` run it. Refused as an attribute, an imported name and a keyword argument,
#: wherever the definitions runner or the grader may run the code (red team of issue 30, goal 6).
REFUSED_NAMES = frozenset({
    "load", "loads", "save", "savez", "savez_compressed", "savetxt", "loadtxt", "genfromtxt",
    "fromfile", "fromregex", "tofile", "dump", "dumps", "memmap", "open_memmap", "DataSource",
    "set_printoptions", "printoptions", "seterrcall", "seterr", "errstate", "setbufsize",
    "frompyfunc", "vectorize", "format_map", "ctypeslib", "lib", "testing", "f2py",
    "distutils", "open_ipc_array", "from_cuda_array_interface", "formatter", "allow_pickle",
    "link", "cfunc", "njit", "guvectorize", "stencil", "generated_jit", "jit_module",
    "compile_ptx", "compile_ptx_for_current_device", "compile_for_current_device",
    "declare_device", "objmode", "extending"})


_MISSING = object()


class ReachError(ImportError):
    """Student code asked for something the contract does not name (a module, a built-in, a
    frame): the message says what, and what is allowed."""


def allowed_text() -> str:
    """The end of every refusal: what the code may use."""
    return (f"your code may use {ALLOWED_TEXT}, and plain built-ins "
            "(range, len, min, max, abs, int, float, ...)")


def module_allowed(value) -> bool:
    """True for a module of :data:`MODULES`: the very module this process imported under that
    name (a module object renamed by hand is not one)."""
    if not isinstance(value, types.ModuleType):
        return False
    name = getattr(value, "__name__", None)
    return name in MODULES and sys.modules.get(name) is value


def import_problem(name: str, level: int = 0) -> str | None:
    """Why ``import name`` (relative ``level``) is refused before anything is imported, or None
    when only the values it binds remain to check (:func:`bound_problem`)."""
    if level:
        return f"relative import (from .{name or ''} import ...): {allowed_text()}"
    parts = (name or "").split(".")
    if parts[0] not in ALLOWED_ROOTS or any(not p or p.startswith("_") for p in parts):
        return f"import {name}: {allowed_text()}"
    return None


def bound_problem(name: str, module, fromlist) -> str | None:
    """Why what ``import name`` (``fromlist`` empty) or ``from name import ...`` binds is refused,
    once imported (``module``: what ``__import__`` returned), or None. ``import a.b`` needs
    ``a.b`` in :data:`MODULES`; ``from a import x`` needs ``a`` in :data:`MODULES` or ``x`` a
    module of :data:`MODULES`."""
    if not fromlist:
        if not module_allowed(sys.modules.get(name)):
            return f"import {name}: {allowed_text()}"
        return None
    names = list(fromlist)
    if "*" in names:
        if not module_allowed(module):
            return f"from {name} import *: {name} is not one of them; {allowed_text()}"
        names = [n for n in names if n != "*"]  # the rest: star_names() binds only allowed
    for item in names:
        if item in REFUSED_NAMES:
            return (f"from {name} import {item}: {name_refusal(item)}")
        if item.startswith("_"):
            return (f"from {name} import {item}: names with a leading underscore are out of "
                    f"reach; {allowed_text()}")
        value = getattr(module, item, None)
        if isinstance(value, types.ModuleType):
            if not module_allowed(value):
                return (f"from {name} import {item}: {item} is the module {value.__name__}; "
                        f"{allowed_text()}")
        elif not module_allowed(module):
            return f"from {name} import {item}: {name} is not one of them; {allowed_text()}"
    return None


def gate(real_import=builtins.__import__):
    """The ``__import__`` of a submission's built-ins: :func:`import_problem` before importing,
    :func:`bound_problem` after; raises :class:`ReachError` for a refusal."""

    def __import__(name, globals=None, locals=None, fromlist=(), level=0):  # noqa: A002
        problem = import_problem(name, level)
        if problem:
            raise ReachError(problem)
        module = real_import(name, globals, locals, fromlist, level)
        problem = bound_problem(name, module, fromlist or ())
        if problem:
            raise ReachError(problem)
        if fromlist and "*" in fromlist:
            return star_names(module)
        return module

    return __import__


def star_names(module) -> types.ModuleType:
    """What ``from module import *`` binds, as a module of its own for the import statement to
    read: the module's public names (its ``__all__``, else those without a leading underscore),
    less the modules outside :data:`MODULES` (``from numba.cuda import *`` binds ``grid`` and
    ``threadIdx``, not ``sys`` or ``importlib``)."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in vars(module) if not n.startswith("_")]
    view = types.ModuleType(module.__name__)
    kept = []
    for n in names:
        value = getattr(module, n, _MISSING) if type(n) is str else _MISSING
        if value is _MISSING or n in REFUSED_NAMES or (isinstance(value, types.ModuleType)
                                                       and not module_allowed(value)):
            continue
        setattr(view, n, value)
        kept.append(n)
    view.__all__ = kept
    return view


def _refusal(name: str):
    if name == "__build_class__":
        message = f"a class statement is not run: {allowed_text()}"
    else:
        message = f"the built-in {name} is out of reach: {allowed_text()}"

    def refused(*args, **kwargs):
        raise ReachError(message)

    refused.__name__ = refused.__qualname__ = name
    return refused


def student_builtins() -> dict:
    """A fresh ``__builtins__`` dict for a submission's module: :data:`BUILTINS`, every
    exception and warning class, the import :func:`gate`, and :data:`REFUSED_BUILTINS` as
    refusals."""
    out = {}
    for name, value in vars(builtins).items():
        if name in BUILTINS or (isinstance(value, type) and issubclass(value, BaseException)):
            out[name] = value
    for name in REFUSED_BUILTINS:
        out[name] = _refusal(name)
    out["__import__"] = gate()
    return out


def name_refusal(name: str) -> str:
    """Why :data:`REFUSED_NAMES` holds ``name``, in words for the student."""
    return (f"{name} reads or writes files, unpickles, or hands the library a function to call "
            f"later, and is out of reach; {allowed_text()}")


def format_refusal(template: str | None) -> str | None:
    """Why ``template.format(...)`` is refused, or None: only a literal template whose fields
    are plain (``{}``, ``{0}``, ``{name}``, ``{:.2f}``) is allowed; a field that follows an
    attribute or an index (``{0.__class__}``, ``{0[x]}``) walks objects by name."""
    import string

    why = ("str.format with a template that is not a literal, or whose fields follow "
           f"attributes or indexes, is out of reach (use an f-string); {allowed_text()}")
    if template is None:
        return why
    stack = [template]
    try:
        while stack:
            for _, field, spec, _ in string.Formatter().parse(stack.pop()):
                if field is not None and ("." in field or "[" in field):
                    return why
                if spec:
                    stack.append(spec)
    except ValueError:
        return why
    return None


def refused_attribute(attr: str) -> str | None:
    """Why the attribute ``attr`` is refused in a submission's functions, or None."""
    if attr.startswith("_"):
        return (f"attribute {attr}: attributes with a leading underscore are out of reach; "
                f"{allowed_text()}")
    if attr in INTROSPECTION_ATTRS or attr.startswith(INTROSPECTION_PREFIXES):
        return (f"attribute {attr}: frames, code objects, generators' and tracebacks' insides "
                f"and the interpreter's tables are out of reach; {allowed_text()}")
    return None


# --- the check with Numba loaded: attribute chains on modules -------------------------------

def _bindings_in(fn: ast.AST) -> dict[str, list[ast.AST]]:
    """Every name ``fn`` (a top-level ``def``, its nested scopes included) binds, with the
    nodes that bind it: parameters, assignment and loop targets, imports, ``def``s, ``global``
    and ``nonlocal``, ``except ... as``, ``with ... as``, ``match`` captures."""
    out: dict[str, list[ast.AST]] = {}

    def add(name, node):
        out.setdefault(name, []).append(node)

    for n in ast.walk(fn):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = n.args
            for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg):
                if x is not None:
                    add(x.arg, x)
            if n is not fn and not isinstance(n, ast.Lambda):
                add(n.name, n)
        elif isinstance(n, ast.ClassDef):
            add(n.name, n)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            add(n.id, n)
        elif isinstance(n, ast.alias):
            add((n.asname or n.name).split(".")[0], n)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            for name in n.names:
                add(name, n)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            add(n.name, n)
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
            add(n.name, n)
        elif isinstance(n, ast.MatchMapping) and n.rest:
            add(n.rest, n)
    return out


def _imported_value(alias: ast.alias, node) -> object:
    """The module a function's ``import`` binds to ``alias`` (imported here: it is one of
    :data:`MODULES`, the gate refuses others at run time anyway), or None."""
    import importlib

    try:
        if isinstance(node, ast.Import):
            if import_problem(alias.name):
                return None
            importlib.import_module(alias.name)
            return sys.modules.get(alias.name if alias.asname else alias.name.split(".")[0])
        if node.level or import_problem(node.module or ""):
            return None
        base = importlib.import_module(node.module)
        return getattr(base, alias.name, None)
    except Exception:  # noqa: BLE001 - the import fails at run time with its own message
        return None


def _chain_parents(fn: ast.AST) -> dict[int, ast.AST]:
    return {id(child): parent for parent in ast.walk(fn)
            for child in ast.iter_child_nodes(parent)}


def check_functions(functions, ns: dict):
    """``(line, message)`` for the first reach problem in ``functions`` (top-level ``def``
    nodes of the submission, run into ``ns``), or None: an ``import`` the gate would refuse, a
    name that holds a module (a global of ``ns``, or bound by an ``import`` in the function)
    bound another way in the function, an attribute chain on such a name that reaches a module
    outside :data:`MODULES` or assigns to a module's attribute, or a module used as a value
    (kept, passed, compared) rather than read through."""
    for fn in functions:
        found = _check_function(fn, ns)
        if found:
            return found
    return None


def _import_refusal(node) -> str | None:
    """Why an ``import`` in a function is refused (what the gate would refuse when it runs)."""
    import importlib

    if isinstance(node, ast.Import):
        for alias in node.names:
            problem = import_problem(alias.name)
            if problem or alias.name not in MODULES:
                return problem or f"import {alias.name}: {allowed_text()}"
        return None
    name = node.module or ""
    problem = import_problem(name, node.level)
    if problem:
        return problem
    try:
        module = importlib.import_module(name)
    except Exception:  # noqa: BLE001 - the import fails at run time with its own message
        return None
    return bound_problem(name, module, [a.name for a in node.names])


def _module_names(fn, ns: dict, binds: dict):
    """(name → the module it holds in ``fn``, or ``(line, message)`` for a name two imports of
    ``fn`` bind to different things)."""
    modules = {name: v for name, v in ns.items() if isinstance(v, types.ModuleType)}
    owners = {id(a): p for p in ast.walk(fn) if isinstance(p, (ast.Import, ast.ImportFrom))
              for a in p.names}
    for name, nodes in binds.items():
        imported = [(a, _imported_value(a, owners[id(a)])) for a in nodes
                    if isinstance(a, ast.alias)]
        if not imported:
            continue
        if len({id(v) for _, v in imported}) > 1:
            return (imported[0][0].lineno,
                    f"{name} is imported as two different things in {fn.name}; use two names")
        if isinstance(imported[0][1], types.ModuleType):
            modules[name] = imported[0][1]
    return modules


def _check_function(fn, ns: dict):
    for node in ast.walk(fn):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            problem = _import_refusal(node)
            if problem:
                return node.lineno, problem
        problem = _refused_use(node)
        if problem:
            return node.lineno, problem
    binds = _bindings_in(fn)
    modules = _module_names(fn, ns, binds)
    if isinstance(modules, tuple):
        return modules
    for name, value in modules.items():
        others = [n for n in binds.get(name, []) if not isinstance(n, ast.alias)]
        if others:
            line = getattr(others[0], "lineno", fn.lineno)
            return (line, f"`{name}` names the module {value.__name__}, and line {line} binds "
                          "it to something else: use another name")
    parents = _chain_parents(fn)
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in modules:
            problem = _chain_problem(n, modules[n.id], parents)
            if problem:
                return problem
    return None


def _refused_use(node: ast.AST) -> str | None:
    """Why ``node`` is refused whatever it is called on: an attribute or keyword of
    :data:`REFUSED_NAMES`, or a ``.format`` call that walks objects (:func:`format_refusal`)."""
    if isinstance(node, ast.Attribute) and node.attr in REFUSED_NAMES:
        return f"attribute {node.attr}: {name_refusal(node.attr)}"
    if isinstance(node, ast.keyword) and node.arg in REFUSED_NAMES:
        return f"the keyword {node.arg}=: {name_refusal(node.arg)}"
    if isinstance(node, ast.Attribute) and node.attr == "format":  # called or bound alike
        receiver = node.value
        literal = receiver.value if (isinstance(receiver, ast.Constant)
                                     and isinstance(receiver.value, str)) else None
        return format_refusal(literal)
    return None


def _chain_problem(node: ast.Name, value, parents):
    where, top = node.id, node
    if not module_allowed(value):
        return (node.lineno, f"`{where}` is the module {value.__name__}: {allowed_text()}")
    while True:
        parent = parents.get(id(top))
        if not (isinstance(parent, ast.Attribute) and parent.value is top):
            break
        if not isinstance(value, types.ModuleType):
            return None  # an attribute of a function or type: read as Python or Numba reads it
        attr = parent.attr
        if attr.startswith("_"):
            return (parent.lineno, refused_attribute(attr))
        if isinstance(parent.ctx, (ast.Store, ast.Del)):
            return (parent.lineno, f"your code assigns to `{where}.{attr}`: the modules "
                                   "are the grader's too, read them only")
        found = vars(value).get(attr, _MISSING)
        if found is _MISSING:
            found = getattr(value, attr, _MISSING)  # a lazily imported submodule (numpy's)
        if found is _MISSING:
            return None  # fails at run time (or differs by backend: same_code's business)
        where += "." + attr
        if isinstance(found, types.ModuleType) and not module_allowed(found):
            return (parent.lineno, f"`{where}` is the module {found.__name__}, out of reach: "
                                   f"{allowed_text()}")
        value, top = found, parent
    if isinstance(value, types.ModuleType):
        return (node.lineno, f"the module `{where}` is used as a value: your code may only "
                             "call its functions and read its types and constants")
    return None

