"""A test of a batch function's batch size, read from a Glue script's syntax tree:
``if data_frame.count() > 0:`` (Glue Studio's guard) is true once the batch has records,
``if data_frame.rdd.isEmpty(): return`` false then. The batch function runs when records
come, so the start check (:mod:`~kinesis_dstream.glue.job.script_reach`) takes such a
test for no condition."""

from __future__ import annotations

import ast
from typing import Optional

#: A comparison's operator with its operands swapped (``0 < n`` is ``n > 0``).
SWAPPED = {ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE}


def size_sign(test: ast.expr, frame: Optional[str]) -> int:
    """1 if ``test`` is true once the batch ``frame`` has records (``frame.count() > 0``,
    ``not frame.rdd.isEmpty()``, ``len(frame.take(1))``...), -1 if it is false then, 0 if
    it depends on anything else. An ``and`` is true only if every operand is."""
    if frame is None:
        return 0
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return -size_sign(test.operand, frame)
    if isinstance(test, ast.BoolOp):
        signs = [size_sign(value, frame) for value in test.values]
        decides, other = (-1, 1) if isinstance(test.op, ast.And) else (1, -1)
        if decides in signs:
            return decides
        return other if all(sign == other for sign in signs) else 0
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, op, right = test.left, type(test.ops[0]), test.comparators[0]
        if _count(left, frame) and isinstance(right, ast.Constant):
            return _count_sign(op, right.value)
        if _count(right, frame) and isinstance(left, ast.Constant):
            return _count_sign(SWAPPED.get(op, op), left.value)
        return 0
    if _count(test, frame) or _rows(test, frame):
        return 1
    if isinstance(test, ast.Call) and method_name(test) == "isEmpty" and not test.args:
        return -1 if _frame(test.func.value, frame) else 0  # type: ignore[attr-defined]
    return 0


def _count_sign(op: type, bound: object) -> int:
    """``n <op> bound``, once n (a count of rows) is at least 1."""
    if not isinstance(bound, int) or isinstance(bound, bool):
        return 0
    if (op is ast.Gt and bound < 1) or (op is ast.GtE and bound <= 1):
        return 1
    if op is ast.NotEq and bound < 1:
        return 1
    if (op in (ast.Eq, ast.LtE) and bound < 1) or (op is ast.Lt and bound <= 1):
        return -1
    return 0


def _count(node: ast.expr, frame: str) -> bool:
    """``frame.count()``, ``len(frame.take(1))``: a number of the batch's rows."""
    if not isinstance(node, ast.Call):
        return False
    if method_name(node) == "count" and not node.args:
        return _frame(node.func.value, frame)  # type: ignore[attr-defined]
    return (
        isinstance(node.func, ast.Name)
        and node.func.id == "len"
        and len(node.args) == 1
        and _rows(node.args[0], frame)
    )


def _rows(node: ast.expr, frame: str) -> bool:
    """``frame.take(1)``, ``frame.head()``, ``frame.first()``: the batch's rows, or its
    first, truthy once it has records."""
    if not isinstance(node, ast.Call) or not _frame(getattr(node.func, "value", None), frame):
        return False
    method = method_name(node)
    if method in ("take", "head", "tail"):
        return (not node.args and method == "head") or _positive(node.args)
    return method in ("first", "collect") and not node.args


def _frame(node: Optional[ast.AST], frame: str) -> bool:
    """``frame`` itself, or ``frame.rdd``, ``frame.toDF()``, ``frame.limit(1)``."""
    if isinstance(node, ast.Name):
        return node.id == frame
    if isinstance(node, ast.Attribute) and node.attr == "rdd":
        return _frame(node.value, frame)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        method, args = node.func.attr, node.args
        if (method == "toDF" and not args) or (method == "limit" and _positive(args)):
            return _frame(node.func.value, frame)
    return False


def _positive(args: list) -> bool:
    return (
        len(args) == 1
        and isinstance(args[0], ast.Constant)
        and type(args[0].value) is int
        and args[0].value > 0
    )


def method_name(call: ast.Call) -> Optional[str]:
    """``count`` for ``data_frame.count()``; None for a call of a plain name."""
    return call.func.attr if isinstance(call.func, ast.Attribute) else None
