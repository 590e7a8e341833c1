"""PySpark 2.x-3.3's ``createStream`` positional layout, told from 3.4's by the values' types.

PySpark 3.4 (SPARK-38881) put ``metricsLevel`` before ``storageLevel``::

    2.x-3.3: ..., checkpointInterval, storageLevel, awsAccessKeyId, awsSecretKey, decoder,
             stsAssumeRoleArn, stsSessionName, stsExternalId
    3.4+:    ..., checkpointInterval, metricsLevel, storageLevel, awsAccessKeyId, ...

Scripts of the older era pass ``StorageLevel.MEMORY_AND_DISK_2`` eighth, which 3.4+
takes as the metrics level. A ``StorageLevel`` is never a metrics level (an int), so the
eighth value tells the layouts apart: a ``StorageLevel`` there is read as the older
layout, once the values after it have that layout's types too (strings or None for the
keys and STS names, a callable decoder), with one warning a process naming it. A call
whose values fit neither layout, or could be either (None eighth: 3.3's storageLevel or
3.4's metricsLevel), is refused in one line naming the keywords to use. Keyword calls
are the same in both eras and are never remapped.
"""

from __future__ import annotations

import functools
import logging
import threading
from typing import Any, Callable, TypeVar, cast

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])

#: createStream's positional arguments both layouts share: ssc ... checkpointInterval.
SHARED_POSITIONS = 7
#: The positional arguments after them, PySpark 2.x-3.3's order.
PYSPARK_33_TAIL = (
    "storageLevel",
    "awsAccessKeyId",
    "awsSecretKey",
    "decoder",
    "stsAssumeRoleArn",
    "stsSessionName",
    "stsExternalId",
)
#: ... and PySpark 3.4+'s (this library's signature).
PYSPARK_34_TAIL = ("metricsLevel", *PYSPARK_33_TAIL)
_TEXT = ("awsAccessKeyId", "awsSecretKey", "stsAssumeRoleArn", "stsSessionName", "stsExternalId")

_warned = threading.Event()


def _is_storage_level(value: Any) -> bool:
    try:
        from pyspark.storagelevel import StorageLevel
    except ImportError:  # without PySpark nothing is a StorageLevel (createStream says so)
        return False
    return isinstance(value, StorageLevel)


def _misfit(name: str, value: Any) -> bool:
    """Whether ``value`` cannot be PySpark 2.x-3.3's ``name``."""
    if name in _TEXT:
        return value is not None and not isinstance(value, str)
    if name == "decoder":
        return not callable(value)
    return False


def _described(name: str, value: Any) -> str:
    """The misfit value for the error line: its type only where it may be a key or a
    secret (never its text: the line reaches logs), else its repr."""
    if name in _TEXT:
        return f"a {type(value).__name__}"
    return repr(value)


def map_older_layout(args: tuple, kwargs: dict) -> tuple:
    """``(args, kwargs)`` of a createStream call, the older layout's tail moved to keywords.

    Returns them unchanged for a 3.4+ call (or one with at most seven positional values);
    raises TypeError in one line for a call neither layout can take as it stands.
    """
    tail = args[SHARED_POSITIONS:]
    if not tail:
        return args, kwargs
    eighth = tail[0]
    if eighth is None:
        raise TypeError(
            "createStream: the 8th positional argument is None, which is storageLevel in "
            "PySpark 2.x-3.3 and metricsLevel since 3.4 (SPARK-38881): pass it by keyword "
            "(storageLevel=None for the default MEMORY_AND_DISK_2, or "
            "metricsLevel=MetricsLevel.DETAILED)"
        )
    if not _is_storage_level(eighth):
        return args, kwargs  # 3.4+'s metricsLevel (checked with the other values)
    if len(tail) > len(PYSPARK_33_TAIL):
        raise TypeError(
            f"createStream: {len(args)} positional arguments with a StorageLevel 8th: PySpark "
            f"2.x-3.3's layout takes at most {SHARED_POSITIONS + len(PYSPARK_33_TAIL)} (..., "
            f"checkpointInterval, {', '.join(PYSPARK_33_TAIL)}): pass the ones after "
            "checkpointInterval by keyword"
        )
    for offset, (name, value) in enumerate(zip(PYSPARK_33_TAIL, tail)):
        if _misfit(name, value):
            raise TypeError(
                f"createStream: the 8th positional argument is a StorageLevel, as in PySpark "
                f"2.x-3.3's layout (..., checkpointInterval, {', '.join(PYSPARK_33_TAIL)}), "
                f"but the {SHARED_POSITIONS + offset + 1}th, {name} there, is "
                f"{_described(name, value)}: pass the arguments after checkpointInterval by "
                "keyword "
                f"({name}=..., storageLevel=..., metricsLevel=...)"
            )
    given = dict(zip(PYSPARK_33_TAIL, tail))
    twice = sorted(set(given) & set(kwargs))
    if twice:
        raise TypeError(
            f"createStream: {twice[0]} given positionally (PySpark 2.x-3.3's layout, a "
            f"StorageLevel 8th) and by keyword"
        )
    if not _warned.is_set():
        _warned.set()
        log.warning(
            "createStream: a StorageLevel 8th is PySpark 2.x-3.3's positional layout "
            "(..., checkpointInterval, %s); PySpark 3.4 put metricsLevel before "
            "storageLevel (SPARK-38881). Read in that older layout; pass the arguments "
            "after checkpointInterval by keyword to run the same on every PySpark",
            ", ".join(PYSPARK_33_TAIL),
        )
    return args[:SHARED_POSITIONS], {**kwargs, **given}


def accepts_older_layout(create_stream: F) -> F:
    """``create_stream`` (this library's signature, 3.4+'s) also called in PySpark
    2.x-3.3's positional layout (:func:`map_older_layout`). Its signature stays the
    wrapped function's (``inspect.signature`` follows ``__wrapped__``)."""

    @functools.wraps(create_stream)
    def create(*args: Any, **kwargs: Any) -> Any:
        args, kwargs = map_older_layout(args, kwargs)
        return create_stream(*args, **kwargs)

    return cast(F, create)  # for type checkers, the wrapped signature
