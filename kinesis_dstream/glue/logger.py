"""``glueContext.get_logger()``: Glue's logger (``info``, ``warn``, ``error``) on Python's
logging, under the logger name ``awsglue.job`` (the runner shows its INFO lines)."""

from __future__ import annotations

import logging

LOGGER_NAME = "awsglue.job"


class GlueLogger:
    """What ``GlueLogger`` offers a script, writing to ``logging.getLogger("awsglue.job")``."""

    def __init__(self) -> None:
        self._log = logging.getLogger(LOGGER_NAME)

    def debug(self, message: object) -> None:
        self._log.debug("%s", message)

    def info(self, message: object) -> None:
        self._log.info("%s", message)

    def warn(self, message: object) -> None:
        self._log.warning("%s", message)

    warning = warn

    def error(self, message: object) -> None:
        self._log.error("%s", message)
