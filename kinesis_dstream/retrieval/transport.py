"""What both shard transports share: the Kinesis client, pickling, and ``with``.

A :class:`~.reader.ShardReader` (GetRecords) or :class:`~.fanout.FanOutShardReader`
(SubscribeToShard) is given a live boto3 client, or a :class:`~..aws.ClientSpec` from
which each process builds (and caches) its own. Only a reader built from a spec can be
sent to another process (an executor task); its live client never is.
"""

from __future__ import annotations

from typing import Any, Optional

from ..aws import ClientSpec


class ShardTransport:
    """Client handling for one shard's reader; subclasses set ``stream_name``/``shard_id``."""

    stream_name: str
    shard_id: str

    def _use_client(self, client: Any) -> None:
        self._spec: Optional[ClientSpec] = client if isinstance(client, ClientSpec) else None
        self._client: Any = None if self._spec else client

    @property
    def client(self) -> Any:
        if self._client is None:
            assert self._spec is not None
            self._client = self._spec.client()
        return self._client

    def _state_to_send(self, **cleared: Any) -> dict:
        """``__dict__`` without the live client (and ``cleared``'s keys set to their
        values); a reader given a live client cannot be sent."""
        if self._spec is None:
            raise TypeError(
                f"{type(self).__name__} for {self.stream_name}/{self.shard_id} holds a live "
                "boto3 client; build it with a ClientSpec to send it to another process"
            )
        return {**self.__dict__, "_client": None, **cleared}

    def close(self) -> None:
        """Release what the transport holds open (nothing, unless a subclass says so)."""

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
