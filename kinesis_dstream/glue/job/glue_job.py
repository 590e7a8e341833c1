"""``awsglue.job.Job``: job bookmarks are not used by streaming jobs (they keep their
place in the query's checkpoint), so ``init`` and ``commit`` only log a debug line."""

from __future__ import annotations

import logging
from typing import Any

from ..errors import GlueError, ReportsNotProvided

log = logging.getLogger(__name__)


class Job(ReportsNotProvided):
    glue_name = "Job"

    @classmethod
    def continuation_options(cls) -> list:
        return [
            "--continuation-option",
            "continuation-enabled",
            "continuation-readonly",
            "continuation-ignore",
        ]

    @classmethod
    def job_bookmark_options(cls) -> list:
        return [
            "--job-bookmark-option",
            "job-bookmark-enable",
            "job-bookmark-pause",
            "job-bookmark-disable",
        ]

    @classmethod
    def job_bookmark_range_options(cls) -> list:
        return ["--job-bookmark-from", "--job-bookmark-to"]

    @classmethod
    def id_params(cls) -> list:
        return ["--JOB_NAME", "--JOB_ID", "--JOB_RUN_ID", "--SECURITY_CONFIGURATION"]

    @classmethod
    def encryption_type_options(cls) -> list:
        return ["--encryption-type", "sse-s3"]

    @classmethod
    def data_lineage_options(cls) -> list:
        return ["--enable-data-lineage"]

    def __init__(self, glue_context_or_spark_session: Any) -> None:
        from pyspark.sql import SparkSession

        from ..context import GlueContext

        if isinstance(glue_context_or_spark_session, GlueContext):
            self._spark_session = glue_context_or_spark_session.spark_session
        elif isinstance(glue_context_or_spark_session, SparkSession):
            self._spark_session = glue_context_or_spark_session
        else:
            raise GlueError(
                "cannot init Job instance given input parameter type: "
                f"{type(glue_context_or_spark_session)}"
            )
        self._name: Any = None

    def init(self, job_name: str, args: Any = {}) -> None:  # noqa: B006 - Glue's signature
        self._name = job_name
        log.debug(
            "Job.init(%r): job bookmarks are not used by streaming jobs; nothing to do", job_name
        )

    def isInitialized(self) -> bool:
        return self._name is not None

    def commit(self) -> None:
        log.debug(
            "Job.commit(%r): job bookmarks are not used by streaming jobs; nothing to do",
            self._name,
        )
