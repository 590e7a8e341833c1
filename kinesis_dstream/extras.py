"""Optional dependencies: a missing one is one line naming the extra that installs it.

``pip install kinesis_dstream`` brings what the kcl daemon, the producer and the lease
commands need; Spark, the Structured Streaming source and the local AWS server are
extras, so that installing the library on Databricks, EMR or Glue never replaces the
cluster's own PySpark.
"""

from __future__ import annotations

import importlib


class MissingExtraError(ImportError):
    """An optional dependency is not installed; the message says which extra to install."""


def require(module: str, extra: str, what: str) -> None:
    """Import ``module`` or raise :class:`MissingExtraError` naming ``extra`` for ``what``."""
    try:
        importlib.import_module(module)
    except ImportError:
        raise MissingExtraError(
            f"{what} needs {module}, which is not installed: pip install 'kinesis_dstream[{extra}]'"
        ) from None
