"""The Glue layer's errors: each one line naming the option, table, method or transform."""

from __future__ import annotations

from ..errors import KinesisDStreamError, KinesisServiceError

#: Where a user reads what the layer provides.
DOCS_PAGE = "docs/glue.md"


class GlueError(KinesisDStreamError, ValueError):
    """A Glue script asked for something wrong: a missing or bad option or argument, a
    missing or non-Kinesis catalog table, a checkpoint Spark cannot write. Names what to
    fix. No restart heals it (a failing service is a :class:`GlueServiceError`)."""


class GlueServiceError(KinesisServiceError):
    """A Glue service call (the Data Catalog's ``GetTable``) failed past its retries:
    throttled, unavailable, refused. Names the table. Not a script error: inside a batch
    function forEachBatch restarts the query as Glue does; ``retriable`` is the cause's."""


class GlueArgumentError(Exception):
    """``getResolvedOptions`` could not resolve the job's arguments (Glue's own name)."""


class NotProvidedError(KinesisDStreamError, NotImplementedError, AttributeError):
    """A part of Glue's API this layer does not provide, named in the message.

    Raised at once where the script reaches it (a call, an attribute, an import), never
    a silent no-op. It is an AttributeError too, so ``hasattr`` and ``getattr`` with a
    default answer as they do for any missing attribute.
    """


def not_provided(what: str, instead: str = "") -> NotProvidedError:
    """The error for ``what`` (``"GlueContext.getSink"``, ``"transform Relationalize"``)."""
    hint = f"; {instead}" if instead else ""
    return NotProvidedError(
        f"{what} is not provided by kinesis_dstream's AWS Glue layer, which runs Glue "
        f"streaming scripts on any PySpark{hint} (what is provided: {DOCS_PAGE})"
    )


class ReportsNotProvided:
    """A Glue surface whose missing public attributes are :func:`not_provided` errors.

    ``glue_name`` is the class's name in Glue (the message names ``GlueContext.getSink``,
    not our module). Private names keep Python's plain AttributeError.
    """

    glue_name = ""

    def __getattr__(self, name: str) -> object:
        if name.startswith("_"):
            raise AttributeError(name)
        raise not_provided(f"{self.glue_name or type(self).__name__}.{name}")


def batch_only(df: object, what: str) -> None:
    """A :class:`GlueError` when ``what`` (a transform over a batch's records) is applied to
    a streaming frame, which has no records yet: Glue jobs apply it in forEachBatch."""
    if getattr(df, "isStreaming", False):
        raise GlueError(
            f"{what} runs on a batch: apply it to the frame forEachBatch hands the batch "
            "function (DynamicFrame.fromDF(data_frame, ...)), not to the stream"
        )
