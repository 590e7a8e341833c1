"""What a shard transport hands the read core: pages of raw records.

A transport (:class:`~.polling.PollingTransport` for GetRecords,
:class:`~.fanout.FanOutTransport` for SubscribeToShard) knows how to get the next
:class:`Page` of one shard and nothing about user records: de-aggregation, the start
inside an aggregate, range ends, record bounds and "consumed through" are the
:class:`~.reader.ShardReader`'s, written once above both (the KCL's ``RecordsPublisher``
with its polling and fan-out publishers).

A transport is given a live boto3 client, or a :class:`~..aws.ClientSpec` from which
each process builds (and caches) its own. Only a transport built from a spec can be sent
to another process (an executor task); its live client never is.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

from ..aws import ClientSpec
from .start import StartPosition


@dataclass(frozen=True)
class Page:
    """One GetRecords answer or one SubscribeToShard event."""

    #: Raw Kinesis records (dicts as botocore returns them), in sequence order.
    records: list
    millis_behind_latest: Optional[int]
    #: The page is at the shard's tip: nothing more to read now.
    at_tip: bool
    #: The shard is closed and this is its last page.
    shard_ended: bool = False
    #: Child shard ids the page named at shard end; None: not given (ask ListShards).
    children: Optional[tuple] = None


class ShardTransport:
    """Pages of one shard, from the start :meth:`attach` gives; subclasses do the I/O.

    Built with the transport's own settings; the :class:`~.reader.ShardReader` it is
    given to attaches it to the client, stream, shard and start it reads.
    """

    stream_name: str
    shard_id: str
    #: Pages are pushed (fan-out): a page at the tip ends a read even with records in it,
    #: because the next one may not come for seconds. A polled page at the tip ends a read
    #: only when empty (the next call costs one paced GetRecords).
    pushed = False
    #: Service calls made (GetShardIterator and GetRecords, or SubscribeToShard), each
    #: counted once with its retries.
    calls = 0
    #: Calls answered with throttling, then retried; shard iterators re-made after expiry.
    throttles = 0
    iterators_renewed = 0
    #: Fan-out: wall-clock time of the last successful subscription (None: none, polling).
    subscribed_at: Optional[float] = None

    def attach(
        self,
        client: Any,
        stream_name: str,
        shard_id: str,
        start: StartPosition,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """Point the transport at the shard its reader reads (the reader calls it once)."""
        self.stream_name = stream_name
        self.shard_id = shard_id
        self._spec: Optional[ClientSpec] = client if isinstance(client, ClientSpec) else None
        self._client: Any = None if self._spec else client
        self._start = start
        self._clock = clock
        self._sleep = sleep
        #: The sequence number a new iterator or subscription resumes after: every record
        #: up to it reached the reader whole (None: nothing yet, resume at the start).
        self._received_through: Optional[str] = None

    @property
    def client(self) -> Any:
        if self._client is None:
            assert self._spec is not None
            self._client = self._spec.client()
        return self._client

    @property
    def client_spec(self) -> Optional[ClientSpec]:
        """The spec the client is built from, None for a live client."""
        return self._spec

    def resume_position(self) -> StartPosition:
        """Where a new iterator or subscription starts: after the last record received,
        else the reader's start."""
        if self._received_through is None:
            return self._start
        return StartPosition.after_sequence_number(self._received_through)

    def next_page(self, limit: int) -> Page:
        """The next page after the last one returned (``limit``: records, if it can)."""
        raise NotImplementedError

    @property
    def iterator(self) -> Optional[str]:
        """A shard iterator another reader may continue from, None if there is none."""
        return None

    def check_sendable(self, what: str) -> None:
        """Raise TypeError naming ``what`` unless this can go to another process."""
        if self._spec is None:
            raise TypeError(
                f"{what} for {self.stream_name}/{self.shard_id} holds a live "
                "boto3 client; build it with a ClientSpec to send it to another process"
            )

    def _state_to_send(self, **cleared: Any) -> dict:
        """``__dict__`` without the live client (and ``cleared``'s keys set to their
        values); a transport given a live client cannot be sent."""
        self.check_sendable(type(self).__name__)
        return {**self.__dict__, "_client": None, **cleared}

    def __getstate__(self) -> dict:
        return self._state_to_send()

    def close(self) -> None:
        """Release what the transport holds open (nothing, unless a subclass says so)."""
