"""What the simulator runs must be what a GPU compiles: the loader's checks, which
:func:`autograder.source.definitions.run_definitions` calls once the definitions ran.

Numba drops a branch whose condition it can decide while compiling, so the loader also refuses (:class:`NotGradable`, with the line):

* a skipped statement that binds a name the kept code reads: a kernel, device function or a
  function they call, a later kept statement that such code depends on, or a name the exercise
  asks for (``ON_SIM = None`` then ``ON_SIM = cuda.compile_all``: None on the simulator, so
  skipped there, and a function when compiled for a GPU);
* in a kernel or device function, what the simulator and a GPU answer differently: Python type
  tests and other built-ins outside :data:`KERNEL_BUILTINS`, values read off Numba's modules
  (``numba.config.ENABLE_CUDASIM``), a module used as a value, ``try``, ``global``,
  ``nonlocal`` and attributes with a leading underscore (:func:`_check_kernel_body`).

The checks take the loader's runner (its namespace ``ns``, the kept and skipped statements, its
``k``: a classifier of values with Numba loaded) and import neither Numba nor the loader.
"""

from __future__ import annotations

import ast
import builtins
import types


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


def _student_code(value, kinds):
    """The code object of a kernel, device function or function of the submission, or None."""
    fn = getattr(value, "py_func", value) if kinds.is_kernel(value) else value
    return fn.__code__ if kinds.is_student_function(fn) else None


def _kernel_reads(ns: dict, kinds, roots) -> dict[str, str]:
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


def check_skipped_bindings(runner, text: str, live) -> None:
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


def _check_kernel_body(fn: ast.FunctionDef, ns: dict, kinds, what: str) -> None:
    """Refuse, in a kernel or device function, what can run differently on the simulator than
    on a GPU: a built-in outside :data:`KERNEL_BUILTINS`, a setting read off Numba's modules
    (``numba.config.ENABLE_CUDASIM``; ``cuda.compile_all``, a function on a GPU, is None on the
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


def _module_value_problem(node, ns, kinds, local, fn):
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


def check_kernels(runner, defs: dict) -> None:
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


def _function_kind(value, kinds) -> str:
    """``kernel``, ``device function`` or ``function``."""
    if not kinds.is_kernel(value):
        return "function"
    device = getattr(value, "_device", None)
    if device is None:
        device = bool(getattr(value, "targetoptions", {}).get("device", False))
    return "device function" if device else "kernel"
