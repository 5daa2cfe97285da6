"""A submission as a stream of kernel-aware tokens, each with the source line it came from
(pure: parses, runs nothing).

:func:`token_stream` parses the code, puts it in canonical form
(:mod:`autograder.similarity.normalise`) and writes it out in prefix order: an operator before
its operands, so that sorted operands give one stream. Every number and string is one token
(``N``, ``S``); a chain of attributes on the field's modules is one token
(``cuda.threadIdx.x``). Code that does not parse is read by Python's tokenizer instead, with
every name ``V`` and every number ``N`` (a copy that does not run is still a copy).
"""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass

from ..source import pyast
from .normalise import KNOWN_ROOTS, dotted, normalise_module, skeleton_keys


@dataclass(frozen=True)
class Tokens:
    """``kinds[i]``: token ``i``; ``lines[i]``: its 1-based line in the submission's text."""

    kinds: tuple[str, ...]
    lines: tuple[int, ...]

    def __len__(self) -> int:
        return len(self.kinds)


class _Writer:
    def __init__(self):
        self.kinds: list[str] = []
        self.lines: list[int] = []
        self.line = 0

    def emit(self, kind: str) -> None:
        self.kinds.append(kind)
        self.lines.append(self.line)

    def stmt(self, node: ast.stmt) -> None:
        self.line = getattr(node, "lineno", self.line) or self.line
        name = type(node).__name__
        if isinstance(node, ast.FunctionDef):
            self.emit(f"def/{len(node.args.args)}")
            for s in node.body:
                self.stmt(s)
            self.emit("end")
            return
        if isinstance(node, ast.AugAssign):
            self.emit("aug" + type(node.op).__name__)
            self.expr(node.target)
            self.expr(node.value)
            return
        self.emit(name)
        for field, value in ast.iter_fields(node):
            if field in ("type_comment", "decorator_list", "returns", "type_params"):
                continue
            if isinstance(value, list):
                if value and isinstance(value[0], ast.stmt):
                    line = self.line
                    self.emit("{")
                    for s in value:
                        self.stmt(s)
                    self.line = line
                    self.emit("}")
                else:
                    for v in value:
                        self.expr(v)
            elif isinstance(value, ast.AST):
                self.expr(value)

    def expr(self, node) -> None:
        if node is None:
            return
        if isinstance(node, ast.stmt):
            self.stmt(node)
            return
        where = getattr(node, "lineno", None)
        if isinstance(where, int) and where != self.line:
            # an expression put in by substitution (``row`` read as its expression) keeps the
            # line that defined it, so the view shades the definition too
            line, self.line = self.line, where
            try:
                self._expr(node)
            finally:
                self.line = line
            return
        self._expr(node)

    def _expr(self, node) -> None:
        if isinstance(node, ast.Constant):
            self.emit("S" if isinstance(node.value, (str, bytes)) else "N")
            return
        if isinstance(node, ast.Name):
            self.emit(node.id)
            return
        if isinstance(node, ast.Attribute):
            chain = dotted(node)
            if chain is not None and chain.split(".")[0] in KNOWN_ROOTS:
                self.emit(chain)
                return
            self.emit("." + node.attr)
            self.expr(node.value)
            return
        if isinstance(node, (ast.expr_context, ast.operator, ast.boolop, ast.cmpop,
                             ast.unaryop)):
            self.emit(type(node).__name__)
            return
        if isinstance(node, ast.Call):
            self.emit("call")
            self.expr(node.func)
            for a in node.args:
                self.expr(a)
            for k in node.keywords:
                self.emit("=" + (k.arg or "**"))
                self.expr(k.value)
            self.emit(")")
            return
        if isinstance(node, ast.AST):
            self.emit(type(node).__name__)
            for field, value in ast.iter_fields(node):
                if field == "ctx":
                    continue
                if isinstance(value, list):
                    for v in value:
                        self.expr(v)
                elif isinstance(value, ast.AST):
                    self.expr(value)
            return


def token_stream(text: str, skeleton: str | None = None) -> Tokens:
    """The canonical token stream of the Python code ``text``. ``skeleton``: the code every
    student was given (its top-level statements are left out of ``text``'s). Never raises for
    bad code: code that does not parse is read token by token (:func:`lexical_stream`)."""
    try:
        tree = pyast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return lexical_stream(text)
    try:
        body = normalise_module(tree, skeleton_keys(skeleton))
    except RecursionError:
        return lexical_stream(text)
    writer = _Writer()
    for stmt in body:
        writer.stmt(stmt)
    return Tokens(tuple(writer.kinds), tuple(writer.lines))


def lexical_stream(text: str) -> Tokens:
    """Python's tokens of ``text`` with names ``V``, numbers ``N``, strings ``S``; comments
    and layout left out; stops quietly at the first token the tokenizer refuses."""
    kinds, lines = [], []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.NAME:
                kinds.append(tok.string if tok.string in _KEYWORDS else "V")
            elif tok.type == tokenize.NUMBER:
                kinds.append("N")
            elif tok.type == tokenize.STRING:
                kinds.append("S")
            elif tok.type == tokenize.OP:
                kinds.append(tok.string)
            else:
                continue
            lines.append(tok.start[0])
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return Tokens(tuple(kinds), tuple(lines))


_KEYWORDS = {"def", "for", "while", "if", "else", "elif", "return", "in", "and", "or", "not",
             "cuda", "range", "break", "continue"}
