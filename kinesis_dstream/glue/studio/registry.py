"""Registering a visual transform as a ``DynamicFrame`` and ``DataFrame`` method, as
Glue Studio's ``gs_common.enrich_df`` does when a ``gs_*`` module is imported."""

from __future__ import annotations

from typing import Any, Callable

from ..frames.dynamicframe import DynamicFrame

#: The visual transforms registered so far, by method name (``gs_now``…).
REGISTERED: dict[str, Callable[..., Any]] = {}


def register(name: str, function: Callable[..., Any]) -> None:
    """Make ``frame.<name>(...)`` call ``function(data_frame, ...)`` on a DynamicFrame
    (the result wrapped again, keeping its name) and on a Spark DataFrame.

    A frame without columns is returned as it is, as Glue Studio's code does (an empty
    batch has nothing to transform).
    """
    from pyspark.sql import DataFrame

    def on_data_frame(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not self.columns:
            return self
        return function(self, *args, **kwargs)

    def on_dynamic_frame(self: DynamicFrame, *args: Any, **kwargs: Any) -> DynamicFrame:
        df = self.toDF()
        if not df.columns:
            return self
        return DynamicFrame.fromDF(function(df, *args, **kwargs), self.glue_ctx, self.name)

    for method in (on_data_frame, on_dynamic_frame):
        method.__name__ = name
        method.__doc__ = function.__doc__
    setattr(DataFrame, name, on_data_frame)
    setattr(DynamicFrame, name, on_dynamic_frame)
    REGISTERED[name] = function


def column_names(names: Any) -> list[str]:
    """Glue Studio's column lists: a Python list, or one string of comma-separated
    names (``"year,month, day"``), each stripped."""
    if isinstance(names, str):
        return [part.strip() for part in names.split(",") if part.strip()]
    return [str(name) for name in names]


def unquoted(name: str) -> str:
    """A column name as Glue Studio writes it for a name with a dot (`` `a.b` ``)."""
    return name[1:-1] if len(name) > 1 and name[0] == name[-1] == "`" else name


def column(name: str) -> Any:
    """The Spark column of a Glue Studio column name: a backquoted name is one column
    (its dots are part of it); otherwise a dotted path reaches into structs."""
    from pyspark.sql import functions as F

    return F.col(f"`{unquoted(name)}`") if name.startswith("`") else F.col(name)
