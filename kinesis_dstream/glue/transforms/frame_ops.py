"""Glue's frame-level transforms on DataFrames: Join, Union, SplitRows, and the batch's
empty fields (``schema()``'s NullTypes, what DropNullFields drops)."""

from __future__ import annotations

import logging
from typing import Any

from ..errors import GlueError
from .fields import column_at, find_field, leaf_paths, parse_path

log = logging.getLogger(__name__)

#: SplitRows' comparison operators, as Glue names them.
COMPARISONS = {
    "<": lambda c, v: c < v,
    ">": lambda c, v: c > v,
    "<=": lambda c, v: c <= v,
    ">=": lambda c, v: c >= v,
    "=": lambda c, v: c == v,
    "==": lambda c, v: c == v,
    "!=": lambda c, v: c != v,
}


def _paths(df: Any, texts: Any, side: str) -> list:
    if isinstance(texts, str):
        texts = [texts]
    found = []
    for text in texts:
        hit = find_field(df.schema, parse_path(text), True)
        if hit is None:
            raise GlueError(f"Join: {side} frame has no key field {text!r} (has {df.columns})")
        found.append(hit[0])
    return found


def join(left: Any, keys1: Any, keys2: Any, right: Any) -> Any:
    """Glue's equality join: the rows of both whose keys are equal (a null key matches
    nothing), with every field of both frames. A field of the same name in both is
    kept once: a pair of keys of one name hold one value; any other such field keeps
    the first frame's value, with one warning naming it."""
    paths1, paths2 = _paths(left, keys1, "the first"), _paths(right, keys2, "the second")
    if len(paths1) != len(paths2):
        raise GlueError(f"Join: {len(paths1)} keys of the first frame, {len(paths2)} of the second")
    a, b = left.alias("__glue_left"), right.alias("__glue_right")
    condition = None
    for p1, p2 in zip(paths1, paths2):
        equal = _qualified("__glue_left", p1) == _qualified("__glue_right", p2)
        condition = equal if condition is None else condition & equal
    joined = a.join(b, condition, "inner")
    shared_keys = {p1[0] for p1, p2 in zip(paths1, paths2) if p1 == p2 and len(p1) == 1}
    clashes = [c for c in right.columns if c in left.columns and c not in shared_keys]
    if clashes:
        log.warning(
            "Join: fields %s are in both frames; the first frame's values are kept", clashes
        )
    columns = [_qualified("__glue_left", (c,)).alias(c) for c in left.columns]
    columns += [
        _qualified("__glue_right", (c,)).alias(c) for c in right.columns if c not in left.columns
    ]
    return joined.select(*columns)


def _qualified(alias: str, path: tuple) -> Any:
    from pyspark.sql import functions as F

    column = F.col(f"{alias}.`" + path[0].replace("`", "``") + "`")
    for name in path[1:]:
        column = column.getField(name)
    return column


def union(first: Any, second: Any) -> Any:
    """All the records of both, fields matched by name (a field one lacks is null there)."""
    return first.unionByName(second, allowMissingColumns=True)


def split_rows(df: Any, comparison_dict: Any) -> tuple:
    """(the rows meeting every comparison, the others): ``{"age": {">": 10, "<": 20}}``;
    a null value meets no comparison."""
    from pyspark.sql import functions as F

    condition = F.lit(True)
    for path, comparisons in dict(comparison_dict).items():
        hit = find_field(df.schema, parse_path(path), True)
        if hit is None:
            raise GlueError(f"SplitRows: the frame has no field {path!r}")
        for operator, value in dict(comparisons).items():
            compare = COMPARISONS.get(str(operator).strip())
            if compare is None:
                raise GlueError(
                    f"SplitRows: {operator!r} is not a comparison ({', '.join(COMPARISONS)})"
                )
            condition = condition & compare(column_at(hit[0]), F.lit(value))
    matched = F.coalesce(condition, F.lit(False))
    return df.where(matched), df.where(~matched)


def empty_paths(df: Any) -> frozenset:
    """The paths of the batch's fields (struct members included) with no value in any
    record: Glue's schema of the records has them as NullType. A streaming frame (no
    records yet) and an empty batch have none."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import NullType

    if df.isStreaming:
        return frozenset()
    paths = [
        p for p in leaf_paths(df.schema, ()) if not isinstance(_type_at(df.schema, p), NullType)
    ]
    if not paths:
        return frozenset()
    present = [F.max(column_at(p).isNotNull().cast("int")) for p in paths]
    seen = df.select(F.count(F.lit(1)), *present).first()
    if not seen[0]:
        return frozenset()  # no records: the declared types stand
    return frozenset(p for i, p in enumerate(paths) if not seen[i + 1])


def _type_at(schema: Any, path: tuple) -> Any:
    hit = find_field(schema, path, True)
    return hit[1] if hit else None
