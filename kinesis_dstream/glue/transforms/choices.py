"""Glue's ``resolveChoice`` on a DataFrame-backed frame, and ``toDF``'s ResolveOptions.

On Glue a field whose records hold values of several types is a choice type, and
``resolveChoice`` resolves it: ``cast:type`` and ``project:type`` convert every value to
one type, ``make_cols`` splits it into ``name_type`` columns, ``make_struct`` makes it a
struct of one field per type, ``match_catalog`` casts to a catalog table's types. A
DataFrame column has one type, so here:

- ``cast:type`` and ``project:type`` cast the field (Spark's ``try_cast``: a value that
  cannot be converted is null, and counted, as ApplyMapping's casts), at a nested path
  (``a.b``) or inside arrays (``items[].price``);
- ``make_cols`` and ``make_struct`` leave the field as it is: it has no second type;
- ``match_catalog`` casts every field the table has to the table's column type.

A path the frame lacks is skipped with one warning, as Glue finds no choice there.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Optional

from ..errors import GlueError
from .cast_failures import counted, failure_count, may_fail
from .fields import find_field, glue_cast_type, parse_path, skipped, top_column

log = logging.getLogger(__name__)

#: Actions that name a type after a colon, and those that do not.
TYPED_ACTIONS = ("cast", "project")
PLAIN_ACTIONS = ("make_cols", "make_struct", "match_catalog")


@dataclass(frozen=True)
class ResolveSpec:
    """One ``(path, action)`` of ``resolveChoice``: ``action`` is cast, project,
    make_cols, make_struct or match_catalog; ``type_name`` that of cast and project."""

    path: str
    action: str
    type_name: Optional[str] = None

    @classmethod
    def parse(cls, path: str, text: str) -> ResolveSpec:
        action, _, type_name = str(text).strip().partition(":")
        action = action.strip().lower()
        if action in TYPED_ACTIONS:
            if not type_name.strip():
                raise GlueError(
                    f"resolveChoice: {text!r} for {path!r} names no type ({action}:type)"
                )
            return cls(path, action, type_name.strip())
        if action in PLAIN_ACTIONS and not type_name:
            return cls(path, action)
        raise GlueError(
            f"resolveChoice: {text!r} for {path!r} is not an action "
            "(cast:type, project:type, make_cols, make_struct, match_catalog)"
        )


def parse_specs(specs: Any, choice: str) -> tuple:
    """Glue's arguments as (the specs, the default action or None), with Glue's errors."""
    if specs is None and not choice:
        raise GlueError("Parameter specs and option are both missing, add one.")
    if specs is not None and choice:
        raise GlueError("Parameter specs and option are both specified, choose one.")
    if isinstance(specs, tuple):
        specs = [specs]
    parsed = []
    for spec in specs or []:
        if not isinstance(spec, (tuple, list)) or len(spec) != 2:
            raise GlueError(f"resolveChoice: a spec is (path, action), got {spec!r}")
        parsed.append(ResolveSpec.parse(str(spec[0]), str(spec[1])))
    default = ResolveSpec.parse("", choice) if choice else None
    return parsed, default


def _path_parts(text: str) -> list:
    """``"items[].price"`` -> ``["items", "[]", "price"]``."""
    parts: list = []
    for name in parse_path(text):
        while name.endswith("[]"):
            name = name[:-2]
            parts.append(name) if name else None
            parts.append("[]")
            name = ""
        if name:
            parts.append(name)
    return parts


def change_at(column: Any, parts: list, change: Any) -> Any:
    """``column`` with ``change`` applied at ``parts`` under it (structs, arrays)."""
    from pyspark.sql import functions as F

    if not parts:
        return change(column)
    head, rest = parts[0], parts[1:]
    if head == "[]":
        return F.transform(column, lambda element: change_at(element, rest, change))
    return column.withField(head, change_at(column.getField(head), rest, change))


def _cast(df: Any, text: str, type_name: str, checks: list) -> Optional[tuple]:
    """(top-level column, its new value) casting the field at ``text``; None when the
    frame lacks it. A cast that can fail adds its count to ``checks``."""
    parts = _path_parts(text)
    field_type = None  # known, and its cast counted, outside arrays
    if "[]" not in parts:
        hit = find_field(df.schema, tuple(parts), False)
        if hit is None:
            skipped("resolveChoice", text)
            return None
        parts, field_type = list(hit[0]), hit[1]
    elif not any(f.name == parts[0] for f in df.schema.fields):
        skipped("resolveChoice", text)
        return None
    target = glue_cast_type(type_name)
    if target is None:
        return None
    if field_type is not None and may_fail(field_type, target):
        source = top_column(parts[0])
        for name in parts[1:]:
            source = source.getField(name)
        checks.append((f"{text} -> {target}", failure_count(source, source.try_cast(target))))
    return parts[0], change_at(top_column(parts[0]), parts[1:], lambda c: c.try_cast(target))


def resolve_choice(
    df: Any, specs: list, default: Optional[ResolveSpec], catalog_columns: Any
) -> Any:
    """The frame with ``specs`` (or ``default`` for every field) applied;
    ``catalog_columns()`` gives a match_catalog's table columns (``[{Name, Type}]``).
    The casts that can fail are counted on the frame as it came (one pass)."""
    todo = list(specs)
    if default is not None:
        todo = [
            ResolveSpec(f"`{f.name}`", default.action, default.type_name) for f in df.schema.fields
        ]
    casts: list = []
    for spec in todo:
        if spec.action in TYPED_ACTIONS:
            casts.append((spec.path, spec.type_name or ""))
        elif spec.action == "match_catalog":
            types = {str(c["Name"]).lower(): str(c["Type"]) for c in catalog_columns()}
            for field in df.schema.fields:
                wanted = types.get(field.name.lower())
                if wanted and spec.path in ("", f"`{field.name}`", field.name):
                    casts.append((f"`{field.name}`", wanted))
        # make_cols, make_struct: a DataFrame field has one type, nothing to split
    checks: list = []
    changes = [c for c in (_cast(df, path, type_name, checks) for path, type_name in casts) if c]
    df = counted(df, checks, "resolveChoice")
    for column, value in changes:
        df = df.withColumn(column, value)
    return df


#: ``ResolveOption.action`` of ``toDF`` (Glue's names) and the resolveChoice action.
RESOLVE_OPTION_ACTIONS = {"project": "project", "cast": "cast", "keepasstruct": "make_struct"}


def resolve_options(df: Any, options: Any) -> Any:
    """``toDF([ResolveOption(path, action, target)])``: Project and Cast cast the field to
    ``target`` (a Spark or Glue type); KeepAsStruct leaves it."""
    specs = []
    for option in options:
        action = RESOLVE_OPTION_ACTIONS.get(str(getattr(option, "action", "")).lower())
        if action is None:
            raise GlueError(
                f"toDF: {option!r} is not a ResolveOption (Project, Cast, KeepAsStruct)"
            )
        if action == "make_struct":
            continue
        target = getattr(option, "target", None)
        if target is None:
            raise GlueError(f"Missing target type for resolve action {option.action}.")
        type_name = target.simpleString() if hasattr(target, "simpleString") else target.typeName()
        specs.append(ResolveSpec(option.path, action, type_name))
    return resolve_choice(df, specs, None, list)


class ResolveOption:
    """Glue's ``awsglue.dynamicframe.ResolveOption(path, action, target)``."""

    def __init__(self, path: str, action: str, target: Any = None) -> None:
        self.path = path
        self.action = action
        self.target = target

    def __repr__(self) -> str:
        return f"ResolveOption({self.path!r}, {self.action!r}, {self.target!r})"
