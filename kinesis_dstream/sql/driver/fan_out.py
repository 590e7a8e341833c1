"""Enhanced fan-out in the source: its options and the driver's stream consumers.

Three spellings ask for SubscribeToShard: Databricks' ``consumerMode=efo``, the awslabs
connector's ``consumerType=SubscribeToShard`` and Glue's ``fanoutConsumerARN`` (a
consumer that exists: used as is, never registered or deregistered). The consumer is
found or registered by name on the driver (:class:`StreamConsumers`); each range is then
read in its executor task by the one :class:`~...retrieval.reader.ShardReader` over a
:class:`~...retrieval.fanout.FanOutTransport` with that consumer's ARN, which travels in
the range's partition.

Names: ``consumerName`` (one for every stream, or a comma-separated list matched to the
streams by position), else ``consumerNamePrefix`` (default ``kinesis_dstream_``) plus the
query's id in its offsets: stable across restarts from one checkpoint, so a restarted
query finds its own consumer, as Databricks' default (the query id) does.
"""

from __future__ import annotations

import logging
import re
import uuid
from dataclasses import dataclass, field
from typing import Any, Optional

from ...arns import note_arn
from ...errors import shown
from ...retrieval.fanout import FanOutConfig
from ..config.connection import OptionError
from ..config.option_values import bool_value, int_value, positive_time_ms

log = logging.getLogger(__name__)

DEFAULT_CONSUMER_PREFIX = "kinesis_dstream_"
#: Databricks' consumerRefreshInterval default, and its maximum.
DEFAULT_REFRESH_MS = 300_000.0
MAX_REFRESH_MS = 3_600_000.0


@dataclass(frozen=True)
class FanOutOptions:
    """How the source reads with SubscribeToShard; None in SourceOptions: polling."""

    #: One name per stream, by position (empty: the prefix plus the query's id).
    consumer_names: tuple = ()
    consumer_name_prefix: str = DEFAULT_CONSUMER_PREFIX
    #: Glue's fanoutConsumerARN: this consumer, registered by someone else.
    consumer_arn: Optional[str] = None
    require_deregistration: bool = False
    refresh_interval_ms: float = DEFAULT_REFRESH_MS
    subscribe: FanOutConfig = field(default_factory=FanOutConfig)

    def name_for(self, stream_index: int, query: str) -> str:
        if self.consumer_names:
            return self.consumer_names[stream_index]
        return f"{self.consumer_name_prefix}{query}"


def parse_fan_out(found: dict, stream_count: int) -> Optional[FanOutOptions]:
    """The fan-out options, or None when the source polls (the default)."""
    mode = str(found.get("consumerMode", ("", "polling"))[1]).strip().lower()
    if mode not in ("polling", "efo"):
        raise OptionError(f"option {found['consumerMode'][0]!r} must be polling or efo")
    kind = str(found.get("consumerType", ("", "GetRecords"))[1]).strip().lower()
    if kind not in ("getrecords", "subscribetoshard"):
        raise OptionError(
            f"option {found['consumerType'][0]!r} must be GetRecords or SubscribeToShard"
        )
    asks = [found[n] for n in ("consumerMode", "consumerType") if n in found]
    if (
        "consumerMode" in found
        and "consumerType" in found
        and (mode == "efo") != (kind == "subscribetoshard")
    ):
        raise OptionError(
            f"options {asks[0][0]!r}={shown(asks[0][1])} and {asks[1][0]!r}={shown(asks[1][1])} "
            "disagree on polling and enhanced fan-out; give one"
        )
    arn = str(found["fanoutConsumerARN"][1]).strip() if "fanoutConsumerARN" in found else None
    if mode != "efo" and kind != "subscribetoshard" and arn is None:
        return None
    names: tuple = ()
    if "consumerName" in found:
        key, value = found["consumerName"]
        names = tuple(n.strip() for n in str(value).split(","))
        if len(names) == 1:
            names = names * stream_count
        if len(names) != stream_count or not all(names):
            raise OptionError(
                f"option {key!r}={shown(value)}: give one consumer name, or one per stream "
                f"({stream_count}), comma-separated in the streams' order"
            )
    if arn is not None:
        note_arn(arn, "option 'fanoutConsumerARN'")
        if stream_count != 1:
            raise OptionError("option 'fanoutConsumerARN' names one stream's consumer")
        if names:
            raise OptionError("options 'fanoutConsumerARN' and 'consumerName' both name it")
    prefix = str(found.get("consumerNamePrefix", ("", DEFAULT_CONSUMER_PREFIX))[1])
    refresh = positive_time_ms(found, "consumerRefreshInterval", DEFAULT_REFRESH_MS)
    if refresh > MAX_REFRESH_MS:
        raise OptionError(
            f"option {found['consumerRefreshInterval'][0]!r} must be at most 3600s, got "
            f"{shown(found['consumerRefreshInterval'][1])}"
        )
    subscribe = FanOutConfig(
        subscribe_timeout_s=positive_time_ms(found, "subscribeToShardTimeout", 60_000.0, 1000.0)
        / 1000.0,
        subscribe_max_retries=int_value(found, "subscribeToShardMaxRetries", 10, 0, 1000),
    )
    return FanOutOptions(
        consumer_names=names,
        consumer_name_prefix=prefix,
        consumer_arn=arn,
        require_deregistration=bool_value(found, "requireConsumerDeregistration", False),
        refresh_interval_ms=refresh,
        subscribe=subscribe,
    )


#: The suffix a run adds to its own consumer's name (see StreamConsumers).
_LEFTOVER = re.compile(r"[0-9a-f]{8}")


class StreamConsumers:
    """The consumer of one stream of a running query: found or registered lazily (its
    default name needs the query's id), re-checked once per batch, deregistered on a
    graceful stop when asked. Driver-side; one owner (the source runner)."""

    def __init__(
        self, client: Any, stream_name: str, stream_index: int, options: FanOutOptions
    ) -> None:
        self._client = client
        self.stream_name = stream_name
        self._index = stream_index
        self.options = options
        self.handle: Any = None
        # A consumer this runner will deregister at its stop gets a name of its own: a
        # restarted query's runner must never adopt one that its predecessor, still
        # stopping, is about to delete (a name the user gave is the user's to keep unique).
        self._suffix = ""
        if options.require_deregistration and not options.consumer_names:
            self._suffix = "_" + uuid.uuid4().hex[:8]
        #: Consumers of earlier runs of the query found registered and deregistered.
        self.leftovers_deregistered = 0

    def arn(self, query: str) -> str:
        """The consumer's ARN, registering it (and waiting until ACTIVE) if need be."""
        from ...retrieval.consumer_handle import ConsumerHandle

        if self.handle is None:
            options = self.options
            if self._suffix:
                self._deregister_leftovers(options.name_for(self._index, query) + "_")
            self.handle = ConsumerHandle(
                self._client,
                self.stream_name,
                consumer_name=None
                if options.consumer_arn
                else options.name_for(self._index, query) + self._suffix,
                consumer_arn=options.consumer_arn,
                reregister=True,
                refresh_interval_s=options.refresh_interval_ms / 1000.0,
            )
            log.info(
                "stream %s is read with enhanced fan-out consumer %s",
                self.stream_name,
                self.handle.arn,
            )
        else:
            self.handle.refresh()
        return str(self.handle.arn)

    def _deregister_leftovers(self, prefix: str) -> None:
        """Deregister this query's consumers that earlier runs left registered (a driver
        killed before its graceful stop): each run names its own (``prefix`` + 8 hex
        digits), and without this every crash left one more, billed, until the stream's
        limit of consumers refused a registration. Spark runs one query id at a time, so
        none of them is in use; one its predecessor is still deleting is left to it.
        Best effort: a failure is logged and the query goes on."""
        from ...retrieval.consumers import ConsumerStatus, deregister_consumer, list_consumers

        try:
            leftovers = [
                c
                for c in list_consumers(self._client, self.stream_name)
                if c.name.startswith(prefix)
                and _LEFTOVER.fullmatch(c.name[len(prefix) :])
                and c.status is ConsumerStatus.ACTIVE
            ]
            for consumer in leftovers:
                deregister_consumer(self._client, self.stream_name, consumer_arn=consumer.arn)
                self.leftovers_deregistered += 1
                log.warning(
                    "stream %s: deregistered fan-out consumer %s, left registered by an "
                    "earlier run of this query that did not stop gracefully",
                    self.stream_name,
                    consumer.name,
                )
        except Exception as exc:
            log.warning(
                "stream %s: could not deregister the fan-out consumers earlier runs of this "
                "query left (%s); they stay registered",
                self.stream_name,
                exc,
            )

    def stop(self) -> None:
        """On a graceful stop: deregister, if asked (never a consumer given by ARN)."""
        if self.handle is not None and self.options.require_deregistration:
            self.handle.deregister()
