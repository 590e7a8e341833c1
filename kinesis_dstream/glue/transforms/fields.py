"""Glue's field transforms on a DataFrame: ApplyMapping, SelectFields, DropFields,
RenameField, with Glue's paths (``a.b.c``; a name holding a dot in backticks).

A DynamicFrame here is a DataFrame (see :mod:`~kinesis_dstream.glue.frames.dynamicframe`), so
each transform is one
``select`` whose columns rebuild the frame: nested fields by rebuilding their struct (a
null struct stays null), casts by Spark's ``try_cast`` (a value it cannot convert is
null, and counted). A path the frame does not have is skipped with one warning per path
and process, as a Glue record simply lacks it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Optional

from ..errors import GlueError, not_provided
from .cast_failures import counted, failure_count, may_fail

log = logging.getLogger(__name__)

Path = tuple
_WARNED: set = set()
#: Glue's type names where Spark's cast spells them differently; complex types without
#: parameters (Glue Studio writes ``struct``, ``array``) keep the field's own type. A bare
#: ``decimal`` is Glue's ``DecimalType()``, (10, 2) (Spark's bare decimal is (10, 0)).
_GLUE_TYPES = {
    "long": "bigint",
    "short": "smallint",
    "byte": "tinyint",
    "integer": "int",
    "decimal": "decimal(10,2)",
}
_KEEP_TYPE = {"struct", "array", "map", "null", ""}
#: A moved field's column while its old place is dropped.
_MOVING = "__glue_moving_field"


def parse_path(text: str) -> Path:
    """``"a.b"`` -> ``("a", "b")``; ``"`a.b`.c"`` -> ``("a.b", "c")`` (``````: a backtick)."""
    parts: list = []
    current: list = []
    quoted = False
    i = 0
    while i < len(text):
        char = text[i]
        if char == "`":
            if quoted and text[i + 1 : i + 2] == "`":
                current.append("`")
                i += 2
                continue
            quoted = not quoted
        elif char == "." and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
        i += 1
    parts.append("".join(current))
    if quoted or not all(parts):
        raise GlueError(f"field path {text!r} is not a path (a.b.c; `a.b` for a name with a dot)")
    return tuple(parts)


def find_field(schema: Any, path: Path, case_sensitive: bool) -> Optional[tuple]:
    """The path as the frame spells it, and its type; None when the frame lacks it."""
    from pyspark.sql.types import StructType

    actual: list = []
    current = schema
    for name in path:
        if not isinstance(current, StructType):
            return None
        match = next((f for f in current.fields if f.name == name), None)
        if match is None and not case_sensitive:
            match = next((f for f in current.fields if f.name.lower() == name.lower()), None)
        if match is None:
            return None
        actual.append(match.name)
        current = match.dataType
    return tuple(actual), current


def top_column(name: str) -> Any:
    """The top-level column ``name``, whatever characters it holds."""
    from pyspark.sql import functions as F

    return F.col("`" + name.replace("`", "``") + "`")


def column_at(path: Path) -> Any:
    """The column of the (nested) field at ``path``."""
    column = top_column(path[0])
    for name in path[1:]:
        column = column.getField(name)
    return column


def skipped(transform: str, path: str) -> None:
    """One warning per transform, path and process: the frame has no such field."""
    key = (transform, path)
    if key not in _WARNED:
        _WARNED.add(key)
        log.warning("%s: the frame has no field %r; skipped", transform, path)


def _struct(path: Path, children: list) -> Any:
    """A rebuilt struct at ``path`` that stays null where the original is null."""
    from pyspark.sql import functions as F

    original = column_at(path)
    return F.when(original.isNull(), F.lit(None)).otherwise(F.struct(*children))


def _rebuild(schema: Any, prefix: Path, keep: Any, rename: Optional[tuple] = None) -> list:
    """The columns of ``schema`` at ``prefix`` that ``keep(path)`` answers: True (whole),
    False (dropped) or None (a struct to rebuild from its own fields)."""
    from pyspark.sql.types import StructType

    columns = []
    for field in schema.fields:
        path = (*prefix, field.name)
        name = rename[1] if rename is not None and rename[0] == path else field.name
        decision = keep(path)
        if decision is True:
            columns.append(column_at(path).alias(name))
        elif decision is None and isinstance(field.dataType, StructType):
            children = _rebuild(field.dataType, path, keep, rename)
            columns.append(_struct(path, children).alias(name))
    return columns


def _found(df: Any, transform: str, texts: Sequence[str], case_sensitive: bool = True) -> list:
    found = []
    for text in texts:
        hit = find_field(df.schema, parse_path(text), case_sensitive)
        if hit is None:
            skipped(transform, text)
        else:
            found.append(hit[0])
    return found


def _as_list(paths: Any) -> list:
    return [paths] if isinstance(paths, str) else list(paths)


def _under(path: Path, paths: list) -> bool:
    return any(p[: len(path)] == path and len(p) > len(path) for p in paths)


def select_fields(df: Any, paths: Any) -> Any:
    """Only the fields at ``paths`` (and the structs holding them), in the frame's order."""
    wanted = _found(df, "SelectFields", _as_list(paths))

    def keep(path: Path) -> Optional[bool]:
        if any(path[: len(w)] == w for w in wanted):
            return True
        return None if _under(path, wanted) else False

    return df.select(*_rebuild(df.schema, (), keep))


def drop_fields(df: Any, paths: Any) -> Any:
    """Every field but those at ``paths``."""
    dropped = _found(df, "DropFields", _as_list(paths))

    def keep(path: Path) -> Optional[bool]:
        if path in dropped:
            return False
        return None if _under(path, dropped) else True

    return df.select(*_rebuild(df.schema, (), keep))


def rename_field(df: Any, old_name: str, new_name: str) -> Any:
    """``old_name`` renamed ``new_name`` (a full path): in place when both share their
    parent, else moved to the new path (appended to its struct)."""
    found = _found(df, "RenameField", [old_name])
    if not found:
        return df
    old, new = found[0], parse_path(new_name)
    if old[:-1] == new[:-1]:

        def keep(path: Path) -> Optional[bool]:
            return None if _under(path, [old]) else True

        return df.select(*_rebuild(df.schema, (), keep, rename=(old, new[-1])))
    moving = df.withColumn(_MOVING, column_at(old))
    moved = drop_fields(moving, [path_text(old)])
    pairs = [(p, column_at(p)) for p in leaf_paths(moved.schema, ()) if p != (_MOVING,)]
    return moved.select(*_assemble([*pairs, (new, column_at((_MOVING,)))]))


def path_text(path: Path) -> str:
    """A path as Glue writes it (a name with a dot or backtick in backticks)."""
    return ".".join("`" + p.replace("`", "``") + "`" if "." in p or "`" in p else p for p in path)


def leaf_paths(schema: Any, prefix: Path) -> list:
    """Every non-struct field's path, depth first (a move regroups them)."""
    from pyspark.sql.types import StructType

    paths: list = []
    for field in schema.fields:
        path = (*prefix, field.name)
        if isinstance(field.dataType, StructType) and field.dataType.fields:
            paths += leaf_paths(field.dataType, path)
        else:
            paths.append(path)
    return paths


def _assemble(pairs: list) -> list:
    """Columns for (target path, column) pairs: paths sharing a first name nest into one
    struct, in the order the names first appear."""
    from pyspark.sql import functions as F

    order: list = []
    groups: dict = {}
    for path, column in pairs:
        head = path[0]
        if head not in groups:
            order.append(head)
            groups[head] = []
        groups[head].append((path[1:], column))
    columns = []
    for head in order:
        members = groups[head]
        if any(not rest for rest, _ in members):
            if len(members) > 1:
                raise GlueError(f"ApplyMapping: target {head!r} is both a field and a struct")
            columns.append(members[0][1].alias(head))
        else:
            columns.append(F.struct(*_assemble(members)).alias(head))
    return columns


def glue_cast_type(type_name: str) -> Optional[str]:
    """A Glue type name as Spark's cast takes it; None to keep the field's type."""
    text = str(type_name).strip().lower()
    if text in _KEEP_TYPE:
        return None
    if text == "choice":
        raise not_provided("ApplyMapping to type 'choice'", "DynamicFrame choice types")
    return _GLUE_TYPES.get(text, text)


def apply_mapping(df: Any, mappings: Any, case_sensitive: bool = False) -> Any:
    """Glue's ApplyMapping: the frame becomes exactly the mapped fields, each
    ``(source path, source type, target path, target type)``, cast to the target type.
    A value that cannot be cast is null, as Glue makes it, and counted in a warning
    (:mod:`.cast_failures`)."""
    if isinstance(mappings, tuple):
        mappings = [mappings]
    pairs = []
    checks = []
    for mapping in mappings:
        if not isinstance(mapping, tuple):
            raise GlueError(f"ApplyMapping: a mapping must be a tuple, got {mapping!r}")
        if len(mapping) != 4:
            raise not_provided(
                f"ApplyMapping with a mapping of {len(mapping)} elements ({mapping!r})",
                "give (source path, source type, target path, target type)",
            )
        source, _, target, target_type = mapping
        hit = find_field(df.schema, parse_path(source), case_sensitive)
        if hit is None:
            skipped("ApplyMapping", source)
            continue
        column = column_at(hit[0])
        cast = glue_cast_type(target_type)
        if cast is not None:
            converted = column.try_cast(cast)
            if may_fail(hit[1], cast):
                checks.append((f"{source} -> {cast}", failure_count(column, converted)))
            column = converted
        pairs.append((parse_path(target), column))
    return counted(df, checks).select(*_assemble(pairs))
