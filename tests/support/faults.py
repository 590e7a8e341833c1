"""Fault injection on real boto3 clients through botocore's event hooks (no mocks).

Each injector registers handlers on one client's event system and returns an object with
counters and ``remove()``. Requests still go to the real server unless the fault says the
call fails, so what the server holds is the ground truth a test checks against.
"""

from __future__ import annotations

import random
from typing import Any, Callable, Optional

from botocore.exceptions import ReadTimeoutError

from .waiting import wait_until


class _CannedResponse:
    """The little of an HTTP response botocore reads from a short-circuited call."""

    def __init__(self, status_code: int) -> None:
        self.status_code = status_code
        self.headers: dict = {}
        self.content = b""


class _PartialAnswers:
    """A batch call answered as partly failed: ``_before`` takes entries out of the
    request, ``_short_circuit`` answers a request left empty without sending it, and
    ``_after`` puts the entries back into the answer as the service reports them."""

    def __init__(self, client: Any, operation: str) -> None:
        self._client = client
        self._hooks = [
            (f"before-parameter-build.{operation}", self._before),
            (f"before-call.{operation}", self._short_circuit),
            (f"after-call.{operation}", self._after),
        ]
        for event, handler in self._hooks:
            client.meta.events.register(event, handler)

    def _before(self, params: dict, context: dict, **_: Any) -> None:
        raise NotImplementedError

    def _short_circuit(self, context: dict, **_: Any) -> Optional[tuple]:
        raise NotImplementedError

    def _after(self, parsed: dict, context: dict, **_: Any) -> None:
        raise NotImplementedError

    def remove(self) -> None:
        for event, handler in self._hooks:
            self._client.meta.events.unregister(event, handler)


class PutRecordsFailures(_PartialAnswers):
    """Make chosen PutRecords entries fail as the service reports it.

    The chosen entries are removed from the request before it is sent (the server never
    sees them) and put back into the response as failed entries carrying ``error_code``,
    with ``FailedRecordCount`` raised to match: exactly what a partially throttled
    PutRecords looks like to the caller.
    """

    def __init__(
        self,
        client: Any,
        fail: Callable[[int, dict], bool],
        error_code: str = "ProvisionedThroughputExceededException",
    ) -> None:
        self._fail = fail
        self._error_code = error_code
        self.failed_entries = 0
        self.calls = 0
        super().__init__(client, "kinesis.PutRecords")

    @classmethod
    def fraction(
        cls, client: Any, fraction: float, seed: int = 0, **kwargs: Any
    ) -> PutRecordsFailures:
        rng = random.Random(seed)
        return cls(client, lambda _i, _entry: rng.random() < fraction, **kwargs)

    def _before(self, params: dict, context: dict, **_: Any) -> None:
        self.calls += 1
        records = params["Records"]
        failed = [i for i, entry in enumerate(records) if self._fail(i, entry)]
        context["injected_failures"] = failed
        if len(failed) == len(records):
            context["injected_all_failed"] = True  # answered in _short_circuit, never sent
            return
        skip = set(failed)
        params["Records"] = [e for i, e in enumerate(records) if i not in skip]

    def _short_circuit(self, context: dict, **_: Any) -> Optional[tuple]:
        # botocore skips the HTTP request when a before-call handler returns a response;
        # an empty result that _after then fills with one failed entry per record.
        if context.get("injected_all_failed"):
            return _CannedResponse(200), {"FailedRecordCount": 0, "Records": []}
        return None

    def _after(self, parsed: dict, context: dict, **_: Any) -> None:
        failed = context.get("injected_failures") or []
        if "Records" not in parsed:
            return
        results = list(parsed["Records"])
        for index in failed:
            results.insert(
                index,
                {"ErrorCode": self._error_code, "ErrorMessage": "Rate exceeded (injected)"},
            )
        parsed["Records"] = results
        parsed["FailedRecordCount"] = parsed.get("FailedRecordCount", 0) + len(failed)
        self.failed_entries += len(failed)


class BatchWriteUnprocessed(_PartialAnswers):
    """Make chosen DynamoDB BatchWriteItem requests come back as partly unprocessed, as
    DynamoDB answers when a table's partitions are busy.

    ``leave(n, count)`` gets the 0-based call number and the request's item count and
    returns how many of its last items to leave unprocessed. They are taken out of the
    request before it is sent (the server never sees them) and returned in the answer's
    ``UnprocessedItems``, so the table holds exactly what was processed.
    """

    def __init__(self, client: Any, leave: Callable[[int, int], int]) -> None:
        self._leave = leave
        self.calls = 0
        self.left_unprocessed = 0
        super().__init__(client, "dynamodb.BatchWriteItem")

    def _before(self, params: dict, context: dict, **_: Any) -> None:
        n, self.calls = self.calls, self.calls + 1
        ((table, requests),) = params["RequestItems"].items()
        count = min(self._leave(n, len(requests)), len(requests))
        if count <= 0:
            return
        context["unprocessed"] = {table: requests[len(requests) - count :]}
        if count == len(requests):
            context["all_unprocessed"] = True  # answered in _short_circuit, never sent
            return
        params["RequestItems"] = {table: requests[: len(requests) - count]}

    def _short_circuit(self, context: dict, **_: Any) -> Optional[tuple]:
        if context.get("all_unprocessed"):
            return _CannedResponse(200), {"UnprocessedItems": {}}
        return None

    def _after(self, parsed: dict, context: dict, **_: Any) -> None:
        unprocessed = context.get("unprocessed")
        if unprocessed:
            parsed["UnprocessedItems"] = unprocessed
            self.left_unprocessed += sum(len(r) for r in unprocessed.values())


class CallCounter:
    """Counts calls of one operation and keeps each call's API parameters."""

    def __init__(self, client: Any, service: str, operation: str) -> None:
        self.requests: list = []
        self._event = f"before-parameter-build.{service}.{operation}"
        self._client = client
        client.meta.events.register(self._event, self._record)

    def _record(self, params: dict, **_: Any) -> Optional[Any]:
        self.requests.append(dict(params))
        return None  # let the real call go ahead

    @property
    def count(self) -> int:
        return len(self.requests)

    def remove(self) -> None:
        self._client.meta.events.unregister(self._event, self._record)


class CallErrors:
    """Answer chosen calls of one operation with a modelled AWS error, without sending.

    ``decide(n)`` gets the 0-based call number and returns an error code or None (let
    the call through). botocore raises the ClientError exactly as for a real answer.
    """

    def __init__(self, client: Any, service: str, operation: str, decide: Callable) -> None:
        self._client = client
        self._event = f"before-call.{service}.{operation}"
        self._decide = decide
        self.calls = 0
        self.injected = 0
        client.meta.events.register(self._event, self._handle)

    def _handle(self, **_: Any) -> Optional[tuple]:
        n, self.calls = self.calls, self.calls + 1
        code = self._decide(n)
        if code is None:
            return None
        self.injected += 1
        return _CannedResponse(400), {
            "Error": {"Code": code, "Message": f"{code} (injected)"},
            "ResponseMetadata": {"HTTPStatusCode": 400},
        }

    def remove(self) -> None:
        self._client.meta.events.unregister(self._event, self._handle)


class Trimmed:
    """GetRecords answers as after the shard's records through ``sequence_number`` were
    trimmed (past the stream's retention): they are left out of every page.

    Kinesis answers an iterator AT or AFTER a trimmed record with the oldest records it
    still holds; the server here keeps every record, so they are cut from its answers.
    """

    def __init__(self, client: Any, sequence_number: str) -> None:
        self._client = client
        self._through = int(sequence_number)
        self.dropped = 0
        client.meta.events.register("after-call.kinesis.GetRecords", self._trim)

    def _trim(self, parsed: dict, **_: Any) -> None:
        records = parsed.get("Records") or []
        kept = [r for r in records if int(r["SequenceNumber"]) > self._through]
        self.dropped += len(records) - len(kept)
        parsed["Records"] = kept

    def remove(self) -> None:
        self._client.meta.events.unregister("after-call.kinesis.GetRecords", self._trim)


class AnswerLost:
    """The first ``calls`` DynamoDB ``operation`` calls land on the server, then their
    answers are 'lost': the caller gets a read timeout (as when a response is late)."""

    def __init__(self, client: Any, operation: str, calls: int = 1) -> None:
        self.client, self.event, self.left = client, f"after-call.dynamodb.{operation}", calls
        client.meta.events.register(self.event, self.lose)

    def lose(self, **_: Any) -> None:
        if self.left > 0:
            self.left -= 1
            raise ReadTimeoutError(endpoint_url="http://lease-table (injected)")

    def remove(self) -> None:
        self.client.meta.events.unregister(self.event, self.lose)


def write_from_outside(table: Any, key: str, write: Callable, timeout_s: float) -> Any:
    """Another writer's conditional ``write`` of lease ``key`` in ``table``; returns the
    written lease. The holder's own renewal between our read and our write makes the
    write miss (seen on a loaded machine), so read and retry until one lands."""
    return wait_until(
        lambda: write(table.get_lease(key)), timeout_s, f"a write to {key} landed", interval_s=0.05
    )
