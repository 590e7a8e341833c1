"""Reading Spark configuration the way Spark does: keys, defaults, time strings, and
where spark-submit finds its Spark and its ``spark-defaults.conf``."""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Mapping
from typing import Any, Optional

from .errors import shown

#: Spark's time suffixes (JavaUtils.timeStringAs), in milliseconds; a bare number is ms.
_TIME_UNITS_MS = {
    "us": 0.001,
    "ms": 1.0,
    "s": 1000.0,
    "m": 60_000.0,
    "min": 60_000.0,
    "h": 3_600_000.0,
    "d": 86_400_000.0,
}
_TIME = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$")


def parse_time_ms(value: Any, key: str = "time") -> float:
    """``"100ms"``, ``"2s"``, ``"1min"`` or a bare number of milliseconds -> milliseconds.

    Raises ValueError naming ``key`` and the value when it is not a time.
    """
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        millis = float(value)
    else:
        match = _TIME.match(str(value).lower())
        if not match or match.group(2) not in ("", *_TIME_UNITS_MS):
            raise ValueError(
                f"{key}: {shown(value)} is not a time; use a number with a unit "
                f"({', '.join(_TIME_UNITS_MS)}), e.g. '100ms' or '2s'"
            )
        millis = float(match.group(1)) * _TIME_UNITS_MS.get(match.group(2), 1.0)
    if millis < 0:
        raise ValueError(f"{key}: {shown(value)} is negative")
    return millis


def conf_get(conf: Any, key: str) -> Optional[str]:
    """``key`` from a SparkConf, a dict or None; None when unset."""
    if conf is None:
        return None
    value = conf.get(key, None)
    return None if value is None else str(value)


def parse_positive_int(value: Any, key: str) -> int:
    try:
        number = int(str(value).strip())
    except ValueError:
        raise ValueError(f"{key}: {shown(value)} is not an integer") from None
    if number < 1:
        raise ValueError(f"{key}: must be >= 1, got {number}")
    return number


def spark_home(environ: Mapping[str, str]) -> Optional[str]:
    """The Spark a ``spark-submit`` runs from: ``SPARK_HOME``, else pip's PySpark (its
    package folder holds ``bin/spark-submit`` and ``jars/``); None when neither."""
    if environ.get("SPARK_HOME"):
        return environ["SPARK_HOME"]
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        return None
    home = os.path.dirname(spec.origin)
    return home if os.path.isfile(os.path.join(home, "bin", "spark-submit")) else None


def spark_defaults_path(environ: Mapping[str, str]) -> Optional[str]:
    """The ``spark-defaults.conf`` spark-submit reads (``SPARK_CONF_DIR``, else the Spark's
    ``conf/``), or None when there is none."""
    conf_dir = environ.get("SPARK_CONF_DIR")
    if not conf_dir:
        home = spark_home(environ)
        conf_dir = os.path.join(home, "conf") if home else None
    path = os.path.join(conf_dir, "spark-defaults.conf") if conf_dir else None
    return path if path and os.path.isfile(path) else None
