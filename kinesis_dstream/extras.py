"""Optional dependencies: a missing one is one line naming the extra that installs it.

``pip install kinesis_dstream`` brings what the kcl daemon, the producer and the lease
commands need; Spark, the Structured Streaming source and the local AWS server are
extras, so that installing the library on Databricks, EMR or Glue never replaces the
cluster's own PySpark.
"""

from __future__ import annotations

import importlib
import importlib.metadata


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


def missing_release(package: str, release: str, what: str, instead: str) -> MissingExtraError:
    """The one-line error for ``what``, which needs ``package`` >= ``release``, on an older
    one; ``instead`` says what works there. Raise it where the newer release's import
    fails, rather than letting an ImportError from deep inside reach the user."""
    try:
        installed = f"{package} {importlib.metadata.version(package)}"
    except importlib.metadata.PackageNotFoundError:
        installed = f"{package} is not installed"
    return MissingExtraError(f"{what} needs {package} >= {release}; this is {installed}. {instead}")
