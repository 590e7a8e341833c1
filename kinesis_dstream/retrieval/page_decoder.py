"""GetRecords pages decoded without botocore's shape-driven parser.

botocore turns a GetRecords page (JSON, base64 data, epoch timestamps) into Python
objects at about 35k-50k records/s per core: a Python call per value of its output
shape, ``base64.b64decode`` per record and a new ``tzlocal()`` per timestamp. That bounds a
core to ~17 full-rate (2 MiB/s) shards of 1 KiB records. This module decodes a
*successful* page itself and leaves everything else to botocore: signing, credentials,
endpoints, retries, error parsing, and any page this decoder does not fully understand.

How: a handler of the client's ``before-parse.kinesis.GetRecords`` event (botocore >=
1.35.16 passes ``customized_response_dict``). For a 200 answer with a JSON content type it
checks ``x-amz-crc32`` when the header is there, decodes the body with msgspec into typed
structs (base64 decoded in C), builds the same dicts botocore's parser would, puts them
into ``customized_response_dict`` and empties the body, so botocore's parser adds only
``ResponseMetadata`` and merges ours. :func:`install` registers it on one client's own
event system; :func:`~kinesis_dstream.aws.create_client` does that for the Kinesis
clients the library builds unless ``KINESIS_DSTREAM_FAST_GET_RECORDS=0`` (or
``create_client(..., fast_get_records=False)``).

Left to botocore (it parses the page as if this module did not exist): status codes
other than 200 (errors must reach its error parser and the retry logic unchanged), a
content type that is not JSON, a body that is not bytes, and any page the typed decode
rejects: invalid JSON, a key our types do not know (a field a newer service adds; a
newer botocore may model it), a null where a value is required, a type other than the
model's, base64 that is not canonical (botocore's decoder is more lenient). Each such
page is counted (:attr:`GetRecordsDecoder.pages_left_to_botocore`); the first per client
is logged as a warning with the reason, later ones at debug level.

Checksum: botocore checks ``x-amz-crc32`` only for DynamoDB; here a GetRecords page that
carries the header is checked, and a mismatch raises botocore's own ``ChecksumError``
(the body was damaged on the way). It is not handed to botocore's parser (that would
parse the damaged bytes); our callers' retry policy treats it as a transport failure and
retries the call (:data:`~kinesis_dstream.backoff.TRANSPORT_ERRORS`).

Datetimes: ``ApproximateArrivalTimestamp`` comes back as a UTC ``datetime`` where
botocore gives ``tzlocal()``: the same instant, equal under ``==`` and ``<``, with the same
microseconds (both round the epoch float with ``datetime.fromtimestamp``); only its
printed offset differs on a machine whose local zone is not UTC. Everything downstream
compares instants or converts to UTC (Spark and Arrow timestamps), so nothing changes.

Everything else is what botocore returns: the same keys in the model's order, keys with
a null value omitted (``NextShardIterator`` at a closed shard), ``bytes`` data, ``str``
sequence numbers, ``int`` ``MillisBehindLatest``, ``ChildShards`` as lists and dicts
(``tests/integration/test_page_decoder.py`` compares both on real server answers).
"""

import logging
import os
import threading
import weakref
import zlib
from datetime import datetime, timezone
from typing import Any, Callable, Optional

import msgspec
from botocore.exceptions import ChecksumError

log = logging.getLogger(__name__)

EVENT = "before-parse.kinesis.GetRecords"
#: ``0``, ``false``, ``no`` or ``off`` turns the decoder off for clients built afterwards.
ENVIRONMENT_SWITCH = "KINESIS_DSTREAM_FAST_GET_RECORDS"
_UNIQUE_ID = "kinesis_dstream.page_decoder"
_JSON_TYPES = frozenset(
    {"application/x-amz-json-1.1", "application/x-amz-json-1.0", "application/json"}
)
_UTC = timezone.utc


def enabled_by_environment() -> bool:
    """False when :data:`ENVIRONMENT_SWITCH` says ``0``, ``false``, ``no`` or ``off``."""
    value = os.environ.get(ENVIRONMENT_SWITCH, "1").strip().lower()
    return value not in ("0", "false", "no", "off")


def _build_decoder() -> Callable[[bytes], Any]:
    """msgspec's decoder of a GetRecords page, typed as the Kinesis model has it.

    (Evaluated annotations, no ``from __future__ import annotations`` in this module:
    msgspec reads the types of these function-local structs at class creation.)

    Every struct forbids unknown fields (such a page is left to botocore). Optional
    fields default to None, which :func:`decode_page` omits as botocore omits nulls.
    Records are never part of a cycle: ``gc=False`` spares the collector 10,000 objects
    a page.
    """

    class RecordStruct(msgspec.Struct, forbid_unknown_fields=True, gc=False):
        SequenceNumber: str
        Data: bytes
        ApproximateArrivalTimestamp: Optional[float] = None
        PartitionKey: Optional[str] = None
        EncryptionType: Optional[str] = None

    class HashKeyRangeStruct(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
        StartingHashKey: Optional[str] = None
        EndingHashKey: Optional[str] = None

    class ChildShardStruct(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
        ShardId: Optional[str] = None
        ParentShards: Optional[list[str]] = None
        HashKeyRange: Optional[HashKeyRangeStruct] = None

    class Page(msgspec.Struct, forbid_unknown_fields=True):
        Records: list[RecordStruct]
        NextShardIterator: Optional[str] = None
        MillisBehindLatest: Optional[int] = None
        ChildShards: Optional[list[ChildShardStruct]] = None

    return msgspec.json.Decoder(Page).decode


_decode = _build_decoder()
#: What a page that the typed decode rejects raises.
_REJECTED: tuple = (msgspec.DecodeError, ValueError, OverflowError, OSError, TypeError)


def decode_page(body: bytes) -> dict:
    """The fields of a GetRecords JSON body, as botocore's parser returns them.

    Raises (``msgspec.DecodeError``, ``ValueError``, ...) for anything it does not fully
    understand; the caller then leaves the page to botocore. No ``ResponseMetadata``.
    """
    page = _decode(body)
    records: list = []
    append = records.append
    fromtimestamp = datetime.fromtimestamp
    stamps: dict = {}  # a page's records share few arrival times (millisecond precision)
    for record in page.Records:
        epoch = record.ApproximateArrivalTimestamp
        if epoch is None or record.PartitionKey is None or record.EncryptionType is not None:
            append(_sparse_record(record))
            continue
        arrival = stamps.get(epoch)
        if arrival is None:
            arrival = stamps[epoch] = fromtimestamp(epoch, _UTC)
        append(
            {
                "SequenceNumber": record.SequenceNumber,
                "ApproximateArrivalTimestamp": arrival,
                "Data": record.Data,
                "PartitionKey": record.PartitionKey,
            }
        )
    parsed: dict = {"Records": records}
    if page.NextShardIterator is not None:
        parsed["NextShardIterator"] = page.NextShardIterator
    if page.MillisBehindLatest is not None:
        parsed["MillisBehindLatest"] = page.MillisBehindLatest
    if page.ChildShards is not None:
        parsed["ChildShards"] = msgspec.to_builtins(page.ChildShards)
    return parsed


def _sparse_record(record: Any) -> dict:
    """A record with a null or absent optional field, or an encryption type: as botocore."""
    out: dict = {"SequenceNumber": record.SequenceNumber}
    if record.ApproximateArrivalTimestamp is not None:
        out["ApproximateArrivalTimestamp"] = datetime.fromtimestamp(
            record.ApproximateArrivalTimestamp, _UTC
        )
    out["Data"] = record.Data
    if record.PartitionKey is not None:
        out["PartitionKey"] = record.PartitionKey
    if record.EncryptionType is not None:
        out["EncryptionType"] = record.EncryptionType
    return out


def _header(headers: Any, name: str) -> Optional[str]:
    """A header by lower-case name; botocore's headers are case-insensitive, a dict is not."""
    value = headers.get(name)
    if value is None:
        for key, candidate in headers.items():
            if key.lower() == name:
                return candidate
    return value


class GetRecordsDecoder:
    """The ``before-parse`` handler of one client, with its counters (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: Pages decoded here, and pages of a 200 answer left to botocore's parser.
        self.pages_decoded = 0
        self.pages_left_to_botocore = 0

    def __call__(self, response_dict: dict, customized_response_dict: dict, **_: Any) -> None:
        if response_dict.get("status_code") != 200:
            return  # errors go to botocore's error parser and retry logic untouched
        headers = response_dict.get("headers") or {}
        body = response_dict.get("body")
        content_type = (_header(headers, "content-type") or "").split(";")[0].strip().lower()
        if not isinstance(body, bytes) or content_type not in _JSON_TYPES:
            self._leave(f"content type {content_type or 'absent'!r}")
            return
        expected = _header(headers, "x-amz-crc32")
        if expected is not None and not expected.isdigit():
            self._leave(f"x-amz-crc32 header {expected!r} is not a number")
            return
        if expected is not None:
            actual = zlib.crc32(body) & 0xFFFFFFFF
            if actual != int(expected):
                raise ChecksumError(
                    checksum_type="crc32 (GetRecords page)",
                    expected_checksum=int(expected),
                    actual_checksum=actual,
                )
        try:
            parsed = decode_page(body)
        except _REJECTED as exc:
            self._leave(f"{type(exc).__name__}: {exc}")
            return
        customized_response_dict.update(parsed)
        response_dict["body"] = b""  # botocore's parser then adds ResponseMetadata only
        with self._lock:
            self.pages_decoded += 1

    def _leave(self, reason: str) -> None:
        with self._lock:
            self.pages_left_to_botocore += 1
            first = self.pages_left_to_botocore == 1
        (log.warning if first else log.debug)(
            "GetRecords page left to botocore's parser (%s); the decoder counts these "
            "(pages_left_to_botocore) and warns once per client",
            reason,
        )


_INSTALLED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_INSTALLED_LOCK = threading.Lock()


def install(client: Any) -> Optional[GetRecordsDecoder]:
    """Decode ``client``'s successful GetRecords pages here; returns the handler.

    Only on this client (its own event system). None, with nothing changed, where the
    decoder cannot run: a model whose protocol is not JSON.
    Installing twice returns the first handler.
    """
    model = client.meta.service_model
    if model.service_name != "kinesis":
        raise ValueError(f"the GetRecords page decoder is for Kinesis clients, not {model}")
    protocol = getattr(model, "resolved_protocol", None) or model.protocol
    if protocol != "json":
        log.debug("GetRecords page decoder not installed (protocol %s)", protocol)
        return None
    with _INSTALLED_LOCK:
        decoder = _INSTALLED.get(client)
        if decoder is None:
            decoder = _INSTALLED[client] = GetRecordsDecoder()
            client.meta.events.register(EVENT, decoder, unique_id=_UNIQUE_ID)
        return decoder


def installed(client: Any) -> Optional[GetRecordsDecoder]:
    """The decoder :func:`install` put on ``client``, if any."""
    with _INSTALLED_LOCK:
        return _INSTALLED.get(client)


def uninstall(client: Any) -> None:
    """Give ``client``'s GetRecords pages back to botocore's parser."""
    with _INSTALLED_LOCK:
        if _INSTALLED.pop(client, None) is not None:
            client.meta.events.unregister(EVENT, unique_id=_UNIQUE_ID)
