"""A Glue script read before it runs: a write this layer does not provide is refused when
the job starts, in one line naming the script's line, never after records were read.

A streaming script writes inside its batch function, which first runs when the first
window has records: a write to a connection type this layer does not provide (Redshift,
JDBC, Kafka...), to S3 in a format it does not write (``orc``, ``xml``...) or through a
JDBC catalog connection (``write_dynamic_frame.from_jdbc_conf``) would fail only then.
So the runner reads the script's calls first (its syntax tree, nothing is run) and
refuses such a write that the job will reach: in straight-line code of the script, of a
function the script refers to (the batch function, helpers it calls), inside loops,
``with`` and ``try`` blocks, and under a test of the batch's size (``if
data_frame.count() > 0:``, Glue Studio's guard). Under another test (a job argument, a
field's value) or in an ``except`` handler, Glue may never reach it: it is named in a
warning at start, and refused only if the job gets there.

What is read: ``write_dynamic_frame.from_options``, ``write_dynamic_frame_from_options``,
``write_from_options``, ``getSink`` and ``DynamicFrame.write`` with a literal
``connection_type`` (or a module-level name bound once to one) and, for S3, ``format``.
"""

from __future__ import annotations

import ast
import logging
import os
from dataclasses import dataclass
from typing import Optional

from ..errors import NotProvidedError, not_provided
from ..sinks.connection_types import (
    GLUE_CONNECTION_TYPES,
    connection_refusal,
    s3_format_refusal,
)

log = logging.getLogger(__name__)

#: Writes by connection type: method name -> (the connection type's and the format's
#: positions among the call's arguments, after the frame where the method takes one).
WRITE_CALLS = {
    "from_options": (1, 3),
    "write_dynamic_frame_from_options": (1, 3),
    "write_from_options": (1, 3),
    "getSink": (0, 1),
    "write": (0, 2),  # DynamicFrame.write(connection_type, connection_options, format)
}
#: Writes this layer never provides.
JDBC_CALLS = ("write_dynamic_frame_from_jdbc_conf", "write_from_jdbc_conf", "from_jdbc_conf")
#: Methods of Glue's writer objects (``glueContext.write_dynamic_frame``); the readers
#: (``create_dynamic_frame``) have methods of the same names.
WRITER_METHODS = ("from_options", "from_jdbc_conf")
WRITERS = ("write_dynamic_frame", "write_data_frame")
#: Methods whose call in an ``if`` test makes it a test of the batch's size.
SIZE_TESTS = ("count", "isEmpty", "take", "head", "first", "limit")


@dataclass(frozen=True)
class Finding:
    """A write the layer does not provide, at ``line``; ``reached``: refused at start."""

    line: int
    error: NotProvidedError
    reached: bool


def check_script(path: str) -> None:
    """Refuse the first write of ``path`` this layer does not provide that the job
    reaches; name the conditional ones in warnings. A script that does not parse is
    left to Python, which names its syntax error when it runs."""
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), filename=path)
    except (SyntaxError, ValueError, UnicodeDecodeError):
        return
    name = os.path.basename(path)
    findings = writes_not_provided(tree)
    for finding in findings:
        if finding.reached:
            raise NotProvidedError(
                f"{name} line {finding.line}: {finding.error}; refused before the job "
                "starts, so no record is read"
            )
    for finding in findings:
        log.warning(
            "%s line %d: %s; it is under a condition, so the job fails only if it gets there",
            name,
            finding.line,
            finding.error,
        )


def writes_not_provided(tree: ast.Module) -> list:
    """The :class:`Finding` of each write in ``tree`` this layer does not provide."""
    reader = _Reader(_constants(tree), _referenced_names(tree))
    reader.visit(tree)
    return reader.findings


class _Reader(ast.NodeVisitor):
    """Walks the script keeping whether the code at hand is sure to run."""

    def __init__(self, constants: dict, referenced: set) -> None:
        self.constants = constants
        self.referenced = referenced
        self.findings: list = []
        self._conditional = 0

    def _under(self, conditional: bool, nodes: list) -> None:
        self._conditional += int(conditional)
        for node in nodes:
            self.visit(node)
        self._conditional -= int(conditional)

    def visit_If(self, node: ast.If) -> None:
        self.visit(node.test)
        self._under(not (_size_test(node.test) or _main_test(node.test)), node.body)
        self._under(True, node.orelse)

    def visit_Try(self, node: ast.Try) -> None:
        self._under(False, node.body + node.orelse + node.finalbody)
        self._under(True, list(node.handlers))

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._under(node.name not in self.referenced, node.body)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._under(True, node.body)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self._under(True, [node.test, node.body, node.orelse])

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        self._under(True, list(node.values))

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._under(True, [node.body])

    def visit_Call(self, node: ast.Call) -> None:
        error = self._refusal(node)
        if error is not None:
            self.findings.append(Finding(node.lineno, error, self._conditional == 0))
        self.generic_visit(node)

    def _refusal(self, call: ast.Call) -> Optional[NotProvidedError]:
        func = call.func
        method = func.attr if isinstance(func, ast.Attribute) else None
        if method in WRITER_METHODS and not _on_writer(func):
            return None  # create_dynamic_frame.from_options: a read
        if method in JDBC_CALLS:
            return not_provided(f"{method} (a JDBC connection of the catalog)")
        if method not in WRITE_CALLS:
            return None
        if method == "write" and not _frame_write(call):
            return None
        kind_at, format_at = WRITE_CALLS[method]
        kind = self._argument(call, "connection_type", kind_at)
        if kind is None or (method == "write" and kind.lower() not in GLUE_CONNECTION_TYPES):
            return None
        refusal = connection_refusal(kind, _write_name(call.func))
        if refusal is not None:
            return refusal
        fmt = self._argument(call, "format", format_at)
        if kind.strip().lower() == "s3" and fmt is not None:
            return s3_format_refusal(fmt)
        return None

    def _argument(self, call: ast.Call, name: str, position: int) -> Optional[str]:
        """The call's argument ``name`` (or at ``position``) when its value is known
        before the script runs: a string literal, or a module-level name bound once to
        one."""
        node = next((k.value for k in call.keywords if k.arg == name), None)
        if node is None and position < len(call.args):
            node = call.args[position]
            if any(isinstance(a, ast.Starred) for a in call.args[: position + 1]):
                return None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return self.constants.get(node.id)
        return None


def _frame_write(call: ast.Call) -> bool:
    """Whether a ``.write(...)`` call has DynamicFrame.write's shape (a connection type
    and its options), not a file's ``write(text)``."""
    names = {k.arg for k in call.keywords}
    return "connection_type" in names or len(call.args) + len(call.keywords) >= 2


def _on_writer(func: ast.expr) -> bool:
    """Whether ``func`` is a method of Glue's writer (``….write_dynamic_frame.from_options``)."""
    return (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Attribute)
        and func.value.attr in WRITERS
    )


def _write_name(func: ast.expr) -> str:
    """``write_dynamic_frame.from_options`` for ``glueContext.write_dynamic_frame.from_options``."""
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute):
        return f"{func.value.attr}.{func.attr}"
    return func.attr if isinstance(func, ast.Attribute) else "write"


def _size_test(test: ast.expr) -> bool:
    """Whether ``test`` looks at the batch's size (``data_frame.count() > 0``,
    ``not df.rdd.isEmpty()``, ``len(df.take(1))``...): true once records come."""
    for node in ast.walk(test):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in SIZE_TESTS:
                return True
            if isinstance(func, ast.Name) and func.id == "len":
                return True
    return False


def _main_test(test: ast.expr) -> bool:
    """``if __name__ == "__main__":``, which a job's script passes."""
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in test.comparators)
    )


def _constants(tree: ast.Module) -> dict:
    """Module-level names bound exactly once, to a string literal."""
    bound: dict = {}
    counts: dict = {}
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else []
        for target in targets:
            if isinstance(target, ast.Name):
                counts[target.id] = counts.get(target.id, 0) + 1
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
            and counts.get(node.targets[0].id) == 1
        ):
            bound[node.targets[0].id] = node.value.value
    return bound


def _referenced_names(tree: ast.Module) -> set:
    """Every name the script reads (a function passed to forEachBatch, one it calls)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
    return names
