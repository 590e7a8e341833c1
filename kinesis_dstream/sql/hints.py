"""Shard iterators as hints: what a read does when the one it was given is refused.

The driver's peek hands its iterator to the range's task (``RangePartition.start_iterator``)
and a task hands the one it stopped at to the next peek (``RangeEnd.next_iterator``; see
docs/design/range-ends.md). A hint saves a GetShardIterator and nothing depends on it: an
expired one is made again by the transport, and one refused for another reason (an
``InvalidArgumentException``: an iterator Kinesis does not accept) is dropped and the
read made once more from its position. Without that a task would fail on every Spark
retry (the hint is in the pickled partition), and a query's restart on every attempt
(the next peek's hint is in the recorded end).
"""

from __future__ import annotations

import logging
from typing import Any

from ..errors import DependencyError, KinesisServiceError, ThrottledError

log = logging.getLogger(__name__)


def hint_refused(reader: Any, hinted: bool, exc: KinesisServiceError, what: str) -> bool:
    """Whether ``reader``, given an iterator (``hinted``), failed with ``exc`` before its first
    page (nothing received, nothing lost) for a reason of the iterator's own: then it is
    logged, naming ``what``, and the caller reads again with a reader from the position.

    Throttling and unavailability are the service's, not the iterator's: those are
    retried as any read's are.
    """
    if not hinted or getattr(reader.transport, "page_iterator", None) is not None:
        return False
    if isinstance(exc, (ThrottledError, DependencyError)):
        return False
    log.warning(
        "%s: the shard iterator it was given was refused (%s); making one from its position",
        what,
        exc,
    )
    return True
