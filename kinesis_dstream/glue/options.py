"""Which of a Glue script's options belong to the Glue layer, and which to the source.

Glue's connection options are taken by ``format("kinesis")`` under their own names
(``streamARN``, ``startingPosition``, ``classification``... see the options reference).
A few belong to the Glue layer and are never passed down: ``typeOfData`` (what kind of
source a table or connection is) and forEachBatch's ``windowSize``,
``checkpointLocation``, ``batchMaxRetries``, ``persistDataFrame`` and ``storageLevel``.
Spark's ``columnNameOfCorruptRecord`` is the reader's
(:mod:`~kinesis_dstream.glue.sources.corrupt_records`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

from .errors import GlueError

log = logging.getLogger(__name__)

TYPE_OF_DATA = "typeOfData"
#: forEachBatch's options (Glue's names), with their defaults where Glue has one.
FOR_EACH_BATCH_KEYS = (
    "windowSize",
    "checkpointLocation",
    "batchMaxRetries",
    "persistDataFrame",
    "storageLevel",
)
GLUE_LAYER_KEYS = frozenset(k.lower() for k in (TYPE_OF_DATA, *FOR_EACH_BATCH_KEYS))
DEFAULT_BATCH_MAX_RETRIES = 3
MAX_BATCH_MAX_RETRIES = 100
DEFAULT_STORAGE_LEVEL = "MEMORY_AND_DISK"
STORAGE_LEVELS = (
    "DISK_ONLY",
    "DISK_ONLY_2",
    "DISK_ONLY_3",
    "MEMORY_AND_DISK",
    "MEMORY_AND_DISK_2",
    "MEMORY_AND_DISK_DESER",
    "MEMORY_ONLY",
    "MEMORY_ONLY_2",
    "OFF_HEAP",
)


def option_text(value: Any) -> str:
    """A Glue option value as Spark takes it: Python's booleans as ``true``/``false``
    (Glue serialises options as JSON), lists and dicts as JSON, the rest as ``str``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value)
    return str(value)


def int_option(value: Any, low: int, high: Optional[int] = None) -> Optional[int]:
    """``value`` (an integer or its text) when it is an integer from ``low`` to ``high``,
    else None (the caller's one-line error names the option)."""
    try:
        number = int(option_text(value).strip())
    except ValueError:
        return None
    return number if number >= low and (high is None or number <= high) else None


def named_option(options: Mapping[str, Any], name: str, default: Any = None) -> Any:
    """Connection option ``name``'s value whatever the case of its name (scripts write
    ``multiline`` and ``multiLine`` alike, as Spark's own options take them); ``default``
    when it is absent or None (Glue's JSON null)."""
    wanted = name.lower()
    for key, value in options.items():
        if str(key).lower() == wanted and value is not None:
            return value
    return default


def check_type_of_data(options: Mapping[str, Any], where: str) -> None:
    """A ``typeOfData`` other than ``kinesis`` is a source this layer does not read."""
    for key, value in options.items():
        if key.lower() == TYPE_OF_DATA.lower() and str(value).strip().lower() != "kinesis":
            raise GlueError(
                f"{where}: {TYPE_OF_DATA}={value!r} is not a Kinesis source; this layer "
                "reads and writes Kinesis streams (and writes S3)"
            )


def source_options(options: Mapping[str, Any], where: str) -> dict:
    """The options to pass to ``format("kinesis")``: the Glue layer's own taken out,
    ``None`` values left out (Glue's JSON null), every value as text."""
    check_type_of_data(options, where)
    passed: dict = {}
    for key, value in options.items():
        if key.lower() in GLUE_LAYER_KEYS:
            if key.lower() != TYPE_OF_DATA.lower():
                log.warning(
                    "%s: option %r belongs to forEachBatch's options; ignored here", where, key
                )
            continue
        if value is not None:
            passed[key] = option_text(value)
    return passed


def merged(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict:
    """``override`` over ``base``, keys compared case-insensitively (as Spark does)."""
    names = {k.lower() for k in override}
    return {**{k: v for k, v in base.items() if k.lower() not in names}, **override}


@dataclass(frozen=True)
class ForEachBatchOptions:
    """forEachBatch's ``options``, checked before anything starts (Glue's defaults)."""

    window_size: str
    checkpoint_location: str
    batch_max_retries: int = DEFAULT_BATCH_MAX_RETRIES
    persist: bool = True
    storage_level: str = DEFAULT_STORAGE_LEVEL

    @classmethod
    def parse(cls, options: Mapping[str, Any]) -> ForEachBatchOptions:
        if not isinstance(options, Mapping):
            raise GlueError(f"forEachBatch: options must be a dict, got {type(options).__name__}")
        for required in ("windowSize", "checkpointLocation"):
            if not str(options.get(required) or "").strip():
                example = '"100 seconds"' if required == "windowSize" else "a directory"
                raise GlueError(
                    f"forEachBatch: option {required!r} is required (e.g. {example}); "
                    f"options given: {sorted(options)}"
                )
        unknown = sorted(set(options) - set(FOR_EACH_BATCH_KEYS))
        if unknown:
            log.warning("forEachBatch: options %s are not Glue's; ignored", unknown)
        retries_text = option_text(options.get("batchMaxRetries", DEFAULT_BATCH_MAX_RETRIES))
        retries = int_option(retries_text, 0, MAX_BATCH_MAX_RETRIES)
        if retries is None:
            raise GlueError(
                f"forEachBatch: option 'batchMaxRetries'={retries_text!r} must be an integer "
                f"in [0, {MAX_BATCH_MAX_RETRIES}]"
            )
        level = option_text(options.get("storageLevel", DEFAULT_STORAGE_LEVEL)).strip().upper()
        if level not in STORAGE_LEVELS:
            raise GlueError(
                f"forEachBatch: option 'storageLevel'={options['storageLevel']!r} is not a "
                f"storage level; one of {', '.join(STORAGE_LEVELS)}"
            )
        persist = option_text(options.get("persistDataFrame", "true")).strip().lower() != "false"
        return cls(
            window_size=option_text(options["windowSize"]).strip(),
            checkpoint_location=option_text(options["checkpointLocation"]).strip(),
            batch_max_retries=retries,
            persist=persist,
            storage_level=level,
        )
