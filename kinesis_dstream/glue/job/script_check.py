"""A Glue script read before it runs: a write this layer does not provide is refused when
the job starts, in one line naming the script's line, never after records were read, but
only where the job is sure to get there: a script that runs on Glue is never refused.

A streaming script writes inside its batch function, which first runs when the first
window has records: a write to a connection type this layer does not provide (Redshift,
JDBC, Kafka...), to S3 in a format it does not write (``orc``, ``xml``...) or through a
JDBC catalog connection (``write_dynamic_frame.from_jdbc_conf``) would fail only then.
So the runner reads the script's calls first (its syntax tree, nothing is run) and
refuses such a write the job is sure to make
(:mod:`~kinesis_dstream.glue.job.script_reach`: on the script's straight line, in a
function it surely calls or hands to ``forEachBatch``, under a test of the batch's size
such as Glue Studio's ``if data_frame.count() > 0:``). Any other (under a job argument's
test, a ``match`` case, a loop, an ``except`` handler, in a function reached only by
value, or in a script whose names the reading cannot follow) Glue may never reach: it is
named in a warning at start, and fails only if the job gets there.

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
from .script_reach import binding_counts, sure_calls

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


@dataclass(frozen=True)
class Finding:
    """A write the layer does not provide, at ``line``; ``reached``: the job is sure to
    get there, so it is refused at start."""

    line: int
    error: NotProvidedError
    reached: bool


def check_script(path: str) -> None:
    """Refuse the first write of ``path`` this layer does not provide that the job is
    sure to reach; name the others in warnings. A script that does not parse is left to
    Python, which names its syntax error when it runs; one nested too deeply to read is
    named in a warning, and not checked."""
    name = os.path.basename(path)
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), filename=path)
    except (SyntaxError, ValueError, UnicodeDecodeError, RecursionError):
        return
    try:
        findings = writes_not_provided(tree)
    except RecursionError:  # Python may still run it: never refused for our own limit
        log.warning(
            "%s is nested too deeply to read before it runs: its writes are not checked at start",
            name,
        )
        return
    for finding in findings:
        if finding.reached:
            raise NotProvidedError(
                f"{name} line {finding.line}: {finding.error}; refused before the job "
                "starts, so no record is read"
            )
    for finding in findings:
        log.warning(
            "%s line %d: %s; the job may never get there (a condition, a loop, a call by "
            "value), so it starts, and fails if it does",
            name,
            finding.line,
            finding.error,
        )


def writes_not_provided(tree: ast.Module) -> list:
    """The :class:`Finding` of each write in ``tree`` this layer does not provide, in the
    script's order."""
    sure = sure_calls(tree)
    constants = _constants(tree)
    calls = sorted(
        (n for n in ast.walk(tree) if isinstance(n, ast.Call)),
        key=lambda n: (n.lineno, n.col_offset),
    )
    return [
        Finding(call.lineno, error, call in sure)
        for call in calls
        for error in [_refusal(call, constants)]
        if error is not None
    ]


def _refusal(call: ast.Call, constants: dict) -> Optional[NotProvidedError]:
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
    kind = _argument(call, "connection_type", kind_at, constants)
    if kind is None or (method == "write" and kind.lower() not in GLUE_CONNECTION_TYPES):
        return None
    refusal = connection_refusal(kind, _write_name(call.func))
    if refusal is not None:
        return refusal
    fmt = _argument(call, "format", format_at, constants)
    if kind.strip().lower() == "s3" and fmt is not None:
        return s3_format_refusal(fmt)
    return None


def _argument(call: ast.Call, name: str, position: int, constants: dict) -> Optional[str]:
    """The call's argument ``name`` (or at ``position``) when its value is known before
    the script runs: a string literal, or a module-level name bound once to one."""
    node = next((k.value for k in call.keywords if k.arg == name), None)
    if node is None and position < len(call.args):
        node = call.args[position]
        if any(isinstance(a, ast.Starred) for a in call.args[: position + 1]):
            return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return constants.get(node.id)
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


def _constants(tree: ast.Module) -> dict:
    """Module-level names bound exactly once in the whole script, to a string literal."""
    bindings = binding_counts(tree)
    return {
        node.targets[0].id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        and bindings[node.targets[0].id] == 1
    }
