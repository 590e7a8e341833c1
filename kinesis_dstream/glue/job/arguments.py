"""``awsglue.utils.getResolvedOptions``: a job's ``--NAME value`` arguments, as Glue
resolves them (Glue 6: no abbreviated names unless ``allow_abbrev=True``)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import NoReturn, Optional

from ..errors import GlueArgumentError
from .glue_job import Job

#: Every argument resolved so far in this process (Glue keeps them too).
resolved_arguments: dict = {}


class GlueArgumentParser(argparse.ArgumentParser):
    """Raises :class:`GlueArgumentError` instead of exiting, as Glue's does ("so that we
    can surface the errors"). Without argparse's ``-h``: Glue's parser has it, so a job
    argument ``-h`` or ``--help`` printed a usage and ended the job with status 0, as if
    it had run; here it is an unknown argument, ignored as every other one."""

    def __init__(self, allow_abbrev: bool = False) -> None:
        super().__init__(allow_abbrev=allow_abbrev, add_help=False)

    def error(self, message: str) -> NoReturn:
        raise GlueArgumentError(message)

    def exit(self, status: int = 0, message: Optional[str] = None) -> NoReturn:
        raise GlueArgumentError(message or f"the job's arguments ended argparse ({status})")


def _reserved(option: str, options: Sequence[str]) -> None:
    if option in options:
        raise RuntimeError("Using reserved arguments " + option)


def getResolvedOptions(
    args: Sequence[str], options: Sequence[str], allow_abbrev: bool = False
) -> dict:
    """``{name: value}`` for each of ``options`` (each a required ``--name``; ``TempDir``
    and ``RedshiftTempDir`` optional, each the other's default), Glue's reserved job
    arguments, and ``job_bookmark_option`` (``job-bookmark-disable`` unless given).
    ``args[0]`` (the script) is skipped; unknown arguments are ignored, as in Glue."""
    parser = GlueArgumentParser(allow_abbrev=allow_abbrev)
    bookmark, continuation = Job.job_bookmark_options(), Job.continuation_options()
    _reserved(continuation[0][2:], options)
    _reserved(bookmark[0][2:], options)
    parser.add_argument(bookmark[0], choices=bookmark[1:], required=False)
    parser.add_argument(continuation[0], choices=continuation[1:], required=False)
    for option in Job.job_bookmark_range_options():
        _reserved(option[2:], options)
        parser.add_argument(option, required=False)
    for option in Job.id_params()[1:]:
        _reserved(option, options)
        parser.add_argument(option, required=False)
    encryption = Job.encryption_type_options()
    _reserved(encryption[0], options)
    parser.add_argument(encryption[0], choices=encryption[1:])
    lineage = Job.data_lineage_options()
    _reserved(lineage[0], options)
    parser.add_argument(lineage[0], required=False)
    names = [o for o in options if o not in {"RedshiftTempDir", "TempDir"}]
    parser.add_argument("--RedshiftTempDir", required=False)
    parser.add_argument("--TempDir", required=False)
    for name in names:
        parser.add_argument("--" + name, required=True)
    parsed, _ = parser.parse_known_args(list(args[1:]))
    values = vars(parsed)
    if values.get("TempDir") is not None:
        values["RedshiftTempDir"] = values["TempDir"]
    elif values.get("RedshiftTempDir") is not None:
        values["TempDir"] = values["RedshiftTempDir"]
    old_style = values.pop("continuation_option", None)
    if values.get("job_bookmark_option") is None:
        if old_style is None:
            values["job_bookmark_option"] = bookmark[3]
        else:
            values["job_bookmark_option"] = bookmark[continuation.index(old_style)]
    absent = [
        o for o in Job.job_bookmark_range_options() if values.get(o[2:].replace("-", "_")) is None
    ]
    if values["job_bookmark_option"] == "job-bookmark-pause":
        if len(absent) == 1:
            raise RuntimeError("Missing option or value for " + absent[0])
    elif not absent:
        raise RuntimeError("Invalid option(s)" + " ".join(Job.job_bookmark_range_options()))
    resolved_arguments.update(values)
    return values
