"""Branch hooks by rewriting the kernel's source: every ``if``/``while``/ternary test ``t`` at
line L becomes ``__kg_br(L, t)`` and every ``for x in it`` becomes ``for x in __kg_loop(L, it)``;
a negative integer literal written as a subscript (``x[-1]``, ``A[i, -2]``) becomes
``__kg_neg(-1)``, a :class:`~.proxies.NegativeLiteral` (wrap-around asked for, not a stray
index: the bounds check lets it through). Nothing else changes, and the code keeps its file name and line numbers, so frames, tracebacks
and the other hooks see the student's own lines. Device functions the kernel calls are rewritten
too (see ``swapped_device_functions``).

This costs one cheap call per branch executed, where ``sys.settrace`` would cost one per line.
"""

from __future__ import annotations

import ast
import linecache
from contextlib import contextmanager

from autograder.simulator import adapter as sim

_cache = {}   # (code, file, id of globals) -> factory(br, loop, *closure values) -> function


class _Hooks(ast.NodeTransformer):
    def _wrap(self, name: str, node: ast.AST, expr: ast.expr) -> ast.expr:
        call = ast.Call(func=ast.Name(id=name, ctx=ast.Load()),
                        args=[ast.Constant(node.lineno), expr], keywords=[])
        return ast.copy_location(call, expr)

    def visit_If(self, node):
        self.generic_visit(node)
        node.test = self._wrap("__kg_br", node, node.test)
        return node

    visit_While = visit_If
    visit_IfExp = visit_If

    def visit_For(self, node):
        self.generic_visit(node)
        node.iter = self._wrap("__kg_loop", node, node.iter)
        return node

    def visit_Subscript(self, node):
        self.generic_visit(node)
        if isinstance(node.slice, ast.Tuple):
            node.slice.elts = [self._literal(e) for e in node.slice.elts]
        else:
            node.slice = self._literal(node.slice)
        return node

    @staticmethod
    def _literal(e: ast.expr) -> ast.expr:
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub) \
                and isinstance(e.operand, ast.Constant) and type(e.operand.value) is int:
            call = ast.Call(func=ast.Name(id="__kg_neg", ctx=ast.Load()), args=[e], keywords=[])
            return ast.copy_location(call, e)
        return e


def _find_def(tree: ast.AST, code) -> ast.FunctionDef | None:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == code.co_name:
            first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
            if code.co_firstlineno in (first, node.lineno):
                return node
    return None


def _factory(fn):
    code = fn.__code__
    # Equal code objects from two modules (one file imported twice) run on different globals;
    # the factory keeps its globals alive, so their id stays theirs.
    key = (code, code.co_filename, id(fn.__globals__))
    if key in _cache:
        return _cache[key]
    factory = None
    source = "".join(linecache.getlines(code.co_filename))
    try:
        tree = ast.parse(source, code.co_filename) if source else None
    except SyntaxError:   # the file changed since the kernel was defined
        tree = None
    if tree is not None:
        node = _find_def(tree, code)
        if node is not None:
            node.decorator_list = []
            _Hooks().visit(node)
            params = ["__kg_br", "__kg_loop", "__kg_neg", *code.co_freevars]
            outer = ast.FunctionDef(
                name="__kg_factory",
                args=ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params],
                                   kwonlyargs=[], kw_defaults=[], defaults=[]),
                body=[node, ast.Return(ast.Name(id=node.name, ctx=ast.Load()))],
                decorator_list=[], returns=None)
            if "type_params" in ast.FunctionDef._fields:   # Python 3.12+
                outer.type_params = []
            ast.copy_location(outer, node)
            module = ast.Module(body=[outer], type_ignores=[])
            ast.fix_missing_locations(module)
            namespace = {}
            exec(compile(module, code.co_filename, "exec"), fn.__globals__, namespace)
            factory = namespace["__kg_factory"]
    _cache[key] = factory
    return factory


def instrumented(fn, rec):
    """``fn`` with branch hooks bound to ``rec``; None when its source cannot be read."""
    factory = _factory(fn)
    if factory is None:
        return None
    code = fn.__code__
    from .proxies import NegativeLiteral

    br, loop = rec.branch_hooks(fn.__code__.co_filename)
    cells = [c.cell_contents for c in (fn.__closure__ or ())]
    new = factory(br, loop, NegativeLiteral, *cells)
    n = code.co_argcount
    if (new.__code__.co_argcount, new.__code__.co_varnames[:n]) != (n, code.co_varnames[:n]):
        return None   # the file changed since the kernel was defined
    new.__defaults__ = fn.__defaults__
    new.__kwdefaults__ = fn.__kwdefaults__
    return new


def is_device_function(value) -> bool:
    """A ``@cuda.jit(device=True)`` function: the simulator's ``FakeCUDAKernel`` or, in a
    process with the real CUDA target, a ``CUDADispatcher``."""
    if not hasattr(value, "py_func"):
        return False
    if getattr(value, "_device", False):
        return True
    options = getattr(value, "targetoptions", None)
    return isinstance(options, dict) and bool(options.get("device"))


def _device_functions(fn):
    """(globals dict, name, device function) for each device function ``fn``'s code names."""
    names = set()
    stack = [fn.__code__]
    while stack:
        c = stack.pop()
        names.update(c.co_names)
        stack.extend(k for k in c.co_consts if hasattr(k, "co_names"))
    for name in sorted(names):
        value = fn.__globals__.get(name)
        if is_device_function(value):
            yield fn.__globals__, name, value


@contextmanager
def swapped_device_functions(fn, rec):
    """For the launch, replace the device functions ``fn`` calls (and those they call) with
    rewritten ones, as simulator device functions, in their callers' globals; put the
    originals back afterwards. Yields the Python functions now run for them."""
    saved, seen, todo = [], set(), [fn]
    try:
        while todo:
            f = todo.pop()
            for globs, name, dev in list(_device_functions(f)):
                if (id(globs), name) in seen:
                    continue
                seen.add((id(globs), name))
                new_fn = instrumented(dev.py_func, rec)
                if new_fn is None:
                    if isinstance(dev, sim.FakeCUDAKernel):
                        continue
                    new_fn = dev.py_func   # no source: run it, without branch hooks
                saved.append((globs, name, dev))
                globs[name] = sim.FakeCUDAKernel(new_fn, device=True)
                todo.append(dev.py_func)
        yield [globs[name].py_func for globs, name, _ in saved]
    finally:
        for globs, name, dev in reversed(saved):
            globs[name] = dev
