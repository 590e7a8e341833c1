"""The Glue layer's sources keep their range ends inside the query's checkpoint.

The source's range ends (docs/design/range-ends.md) are part of what a restart needs;
outside the checkpoint (the plain source's default, ``~/.kinesis_dstream/sql-ends``) a
job on a machine whose home does not survive could not resume from its checkpoint alone.
A source is defined before ``forEachBatch`` names its checkpoint, so its options carry a
file (``endsLocationFile``, one per process) that ``forEachBatch`` writes just before the
query starts and the source reads when it builds its reader (:mod:`..sql.ends.opening`).
The place is ``<checkpointLocation>/kinesis-ends``: on S3 the source's S3 end store
writes there directly (conditional puts), so it never waits for the checkpoint mirror.

A script's ``metadataPath`` (or DynamoDB store) wins. A checkpoint that already holds
batches but no range ends at the new place started before this default: its ends stay
where they were (the old default directory), said in one log line, so nothing is lost on
an upgrade.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Mapping
from typing import Any, Optional

from ...aws import ClientSpec
from ...backoff import call_with_retry
from ...sql.config.end_store_options import DEFAULT_STORE_DIR
from ...sql.ends.s3 import is_s3_url, parse_s3_url
from ...sql.ends.store import STORE_BACKOFF

log = logging.getLogger(__name__)

ENDS_DIR = "kinesis-ends"
OPTION = "endsLocationFile"
#: Options by which a script names its own end store (any ``kinesis.`` prefix, any case).
STORE_OPTIONS = ("metadatapath", "metadatacommittertype", "dynamodb.tablename")

_ends_dir: Optional[str] = None


def ends_file() -> str:
    """This process's file naming where the next query's range ends go."""
    global _ends_dir
    if _ends_dir is None:
        _ends_dir = tempfile.mkdtemp(prefix="kinesis_dstream-glue-ends-")
        atexit.register(shutil.rmtree, _ends_dir, True)
    return os.path.join(_ends_dir, "place.json")


def with_deferred_ends(options: Mapping[str, Any]) -> dict:
    """``options`` plus ``endsLocationFile``, unless they name an end store."""
    given = {str(k).lower().removeprefix("kinesis.") for k in options}
    if given & set(STORE_OPTIONS):
        return dict(options)
    return {**options, OPTION: ends_file()}


def ends_place(location: str) -> Optional[str]:
    """``<location>/kinesis-ends`` for an S3 or local checkpoint; None for another scheme
    (the source cannot write there: the default directory is kept)."""
    if is_s3_url(location):
        bucket, prefix = parse_s3_url(location)
        return f"s3://{bucket}/{prefix + '/' if prefix else ''}{ENDS_DIR}"
    if location.startswith("file://"):
        location = location[len("file://") :]
    if "://" in location:
        return None
    return os.path.join(os.path.abspath(os.path.expanduser(location)), ENDS_DIR)


def has_objects(place: str, client_spec: Optional[ClientSpec] = None) -> bool:
    """Whether a local directory or S3 prefix holds anything."""
    if not is_s3_url(place):
        return os.path.isdir(place) and bool(os.listdir(place))
    bucket, prefix = parse_s3_url(place)
    s3 = (client_spec or ClientSpec("s3")).client()
    page = call_with_retry(
        lambda: s3.list_objects_v2(Bucket=bucket, Prefix=f"{prefix}/" if prefix else "", MaxKeys=1),
        STORE_BACKOFF,
        operation=f"ListObjectsV2 of {place}",
        client=s3,
    )
    return bool(page.get("KeyCount", 0))


def choose_place(location: str, resuming: bool, place_has_ends: bool) -> str:
    """Where a query on checkpoint ``location`` keeps its range ends."""
    place = ends_place(location)
    if place is None:
        log.info(
            "range ends of checkpoint %s: in %s (the source writes S3 or local paths only)",
            location,
            DEFAULT_STORE_DIR,
        )
        return DEFAULT_STORE_DIR
    if resuming and not place_has_ends:
        log.warning(
            "checkpoint %s started before range ends were kept inside it: its range ends stay "
            "in %s (the default then); keep that directory, or start a new checkpoint",
            location,
            DEFAULT_STORE_DIR,
        )
        return DEFAULT_STORE_DIR
    return place


def place_ends(location: str, started: bool) -> str:
    """Write the place of the next query's range ends (checkpoint ``location``, which
    holds batches already when ``started``); returns it."""
    place = ends_place(location)
    has_ends = started and place is not None and has_objects(place)
    chosen = choose_place(location, started, has_ends)
    path = ends_file()
    temp = path + ".tmp"
    with open(temp, "w", encoding="utf-8") as handle:
        json.dump({"metadataPath": chosen}, handle)
    os.replace(temp, path)  # a reader never sees half a file
    log.info("range ends of checkpoint %s: %s", location, chosen)
    return chosen


def clear_ends() -> None:
    """The query ended: a later query of the script's own names no place."""
    if _ends_dir is not None:
        try:
            os.remove(os.path.join(_ends_dir, "place.json"))
        except FileNotFoundError:
            pass


def checkpoint_started(location: str) -> bool:
    """Whether checkpoint ``location`` (a local directory or S3) holds a planned batch."""
    if is_s3_url(location):
        return has_objects(location.rstrip("/") + "/offsets")
    if location.startswith("file://"):
        location = location[len("file://") :]
    if "://" in location:
        return True  # a scheme the source cannot read: its ends stay in the default place
    offsets = os.path.join(os.path.expanduser(location), "offsets")
    return os.path.isdir(offsets) and any(not n.startswith(".") for n in os.listdir(offsets))
