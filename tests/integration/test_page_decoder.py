"""The GetRecords page decoder gives what botocore's parser gives, on real server answers.

Each page a client with the decoder receives is also kept as the bytes on the wire
(``response-received``) and parsed again by botocore's own parser; every field of every
record must match (bytes, strings, ints; arrival times the same instant, ours in UTC).
Every test also checks that the decoder did decode (a silent fallback would pass any
comparison).
"""

import base64
import json
import logging
import random
import zlib
from datetime import timezone

import pytest
from aws_kinesis_agg.aggregator import RecordAggregator as AggRecordAggregator
from botocore.awsrequest import AWSResponse
from botocore.exceptions import ChecksumError, ClientError
from botocore.parsers import create_parser

from kinesis_dstream.aws import create_client
from kinesis_dstream.backoff import Backoff
from kinesis_dstream.errors import DependencyError
from kinesis_dstream.kpl import RecordAggregator, deaggregate
from kinesis_dstream.retrieval import page_decoder
from kinesis_dstream.retrieval.reader import ReaderConfig, ShardReader, StartPosition
from kinesis_dstream.retrieval.streams import ensure_stream, list_shards, wait_active

FAST = ReaderConfig(min_call_interval_s=0.0, backoff=Backoff(0.001, 0.01, max_attempts=5))
ODD_KEYS = ['pk "quoted" \\ back/slash', "ключ-€-😀", "\u2028line\tsep", "k"]


def client_of(server, fast=True):
    return create_client(
        "kinesis",
        region_name=server.region_name,
        endpoint_url=server.endpoint_url,
        aws_access_key_id=server.access_key_id,
        aws_secret_access_key=server.secret_access_key,
        fast_get_records=fast,
    )


@pytest.fixture(params=["moto", pytest.param("kinesalite", marks=pytest.mark.kinesalite)])
def server(request):
    return request.getfixturevalue("local_aws" if request.param == "moto" else "kinesalite")


class Wire:
    """Keeps every GetRecords answer as received (status, headers, body bytes)."""

    def __init__(self, client):
        self.answers = []
        client.meta.events.register("response-received.kinesis.GetRecords", self._keep)

    def _keep(self, response_dict, **_):
        if response_dict is not None:
            self.answers.append(response_dict)


def botocore_parse(client, answer):
    shape = client.meta.service_model.operation_model("GetRecords").output_shape
    return create_parser("json").parse(
        {"body": answer["body"], "headers": answer["headers"], "status_code": 200}, shape
    )


def assert_same_page(ours, theirs):
    ours = {k: v for k, v in ours.items() if k != "ResponseMetadata"}
    theirs = {k: v for k, v in theirs.items() if k != "ResponseMetadata"}
    assert sorted(ours) == sorted(theirs)
    assert len(ours["Records"]) == len(theirs["Records"])
    for mine, want in zip(ours["Records"], theirs["Records"]):
        assert list(mine) == list(want)  # the same keys, in the model's order
        for key, value in want.items():
            assert type(mine[key]) is type(value), key
            assert mine[key] == value, key
        if "ApproximateArrivalTimestamp" in want:
            arrival = mine["ApproximateArrivalTimestamp"]
            assert arrival.tzinfo is timezone.utc
            assert arrival.timestamp() == want["ApproximateArrivalTimestamp"].timestamp()
    for key in ("NextShardIterator", "MillisBehindLatest", "ChildShards"):
        assert (key in ours) == (key in theirs), key
        if key in theirs:
            assert type(ours[key]) is type(theirs[key]) and ours[key] == theirs[key], key


def read_pages(client, stream, shard_id, iterator_type="TRIM_HORIZON", limit=10_000):
    """Every page to the shard's tip (an empty page with no lag) or its end."""
    iterator = client.get_shard_iterator(
        StreamName=stream, ShardId=shard_id, ShardIteratorType=iterator_type
    )["ShardIterator"]
    pages = []
    while iterator is not None and len(pages) < 50:
        page = client.get_records(ShardIterator=iterator, Limit=limit)
        pages.append(page)
        iterator = page.get("NextShardIterator")
        if not page["Records"] and not page.get("MillisBehindLatest"):
            break
    return pages


def check_against_wire(client, wire, pages):
    decoder = page_decoder.installed(client)
    assert decoder is not None and decoder.pages_decoded >= len(pages)
    assert decoder.pages_left_to_botocore == 0
    assert len(wire.answers) == len(pages)
    for page, answer in zip(pages, wire.answers):
        assert_same_page(page, botocore_parse(client, answer))


def first_shard(client, stream):
    return list_shards(client, stream)[0]["ShardId"]


def test_plain_records_with_every_byte_value_match_botocore(server, unique_name):
    client = client_of(server)
    ensure_stream(client, unique_name, 1)
    rng = random.Random(7)
    sent = [bytes(range(256)), bytes(range(255, -1, -1)), rng.randbytes(1024)]
    sent += [bytes([b]) for b in range(256)]
    for start in range(0, len(sent), 100):
        entries = [
            {"Data": d, "PartitionKey": ODD_KEYS[(start + i) % len(ODD_KEYS)]}
            for i, d in enumerate(sent[start : start + 100])
        ]
        assert client.put_records(StreamName=unique_name, Records=entries)["FailedRecordCount"] == 0
    wire = Wire(client)
    pages = read_pages(client, unique_name, first_shard(client, unique_name), limit=100)
    check_against_wire(client, wire, pages)
    got = [r["Data"] for page in pages for r in page["Records"]]
    assert got == sent
    assert all("MillisBehindLatest" in page for page in pages)


def test_kpl_aggregates_match_botocore_and_de_aggregate_alike(local_aws, unique_name):
    client = client_of(local_aws)
    slow = client_of(local_aws, fast=False)
    ensure_stream(client, unique_name, 1)
    users = [(random.Random(i).randbytes(i % 300), f"key-{i}") for i in range(500)]
    ours = RecordAggregator()
    entries = [e for data, key in users for e in ours.add(data, key)] + ours.flush()
    theirs = AggRecordAggregator()
    for data, key in users:
        done = theirs.add_user_record(key, data)
        if done is not None:
            pk, _ehk, data_ = done.get_contents()
            entries.append({"Data": data_, "PartitionKey": pk})
    pk, _ehk, data_ = theirs.clear_and_get().get_contents()
    entries.append({"Data": data_, "PartitionKey": pk})
    for entry in entries:
        client.put_record(StreamName=unique_name, **entry)
    wire = Wire(client)
    shard_id = first_shard(client, unique_name)
    pages = read_pages(client, unique_name, shard_id)
    check_against_wire(client, wire, pages)
    slow_pages = read_pages(slow, unique_name, shard_id)
    assert page_decoder.installed(slow) is None
    ours_users = [u for p in pages for u in deaggregate(p["Records"], shard_id=shard_id)]
    slow_users = [u for p in slow_pages for u in deaggregate(p["Records"], shard_id=shard_id)]
    assert len(ours_users) == 2 * len(users)
    assert [u[:5] for u in ours_users] == [u[:5] for u in slow_users]
    assert [u.approximate_arrival_timestamp for u in ours_users] == [
        u.approximate_arrival_timestamp for u in slow_users
    ]


def test_an_empty_page_at_the_tip_matches_botocore(server, unique_name):
    client = client_of(server)
    ensure_stream(client, unique_name, 1)
    client.put_record(StreamName=unique_name, Data=b"old", PartitionKey="k")
    wire = Wire(client)
    pages = read_pages(client, unique_name, first_shard(client, unique_name), "LATEST")
    check_against_wire(client, wire, pages)
    assert pages[-1]["Records"] == [] and pages[-1]["MillisBehindLatest"] == 0
    assert "NextShardIterator" in pages[-1]


@pytest.mark.kinesalite
def test_a_closed_shards_last_page_matches_botocore(kinesalite, unique_name):
    client = client_of(kinesalite)
    ensure_stream(client, unique_name, 1)
    (parent,) = list_shards(client, unique_name)
    for i in range(20):
        client.put_record(StreamName=unique_name, Data=f"r{i}".encode(), PartitionKey=f"k{i}")
    keys = parent["HashKeyRange"]
    middle = (int(keys["StartingHashKey"]) + int(keys["EndingHashKey"])) // 2
    client.split_shard(
        StreamName=unique_name, ShardToSplit=parent["ShardId"], NewStartingHashKey=str(middle)
    )
    wait_active(client, unique_name)
    wire = Wire(client)
    pages = read_pages(client, unique_name, parent["ShardId"], limit=7)
    check_against_wire(client, wire, pages)
    assert "NextShardIterator" not in pages[-1]  # the closed shard's end
    assert [r["Data"] for p in pages for r in p["Records"]] == [f"r{i}".encode() for i in range(20)]


def answer(body, status=200, content_type="application/x-amz-json-1.1", **headers):
    return {
        "status_code": status,
        "headers": {"content-type": content_type, **headers},
        "body": body,
    }


def decode_like_the_client(response_dict):
    """What a client with the decoder returns for this answer (the endpoint's own steps)."""
    shape = create_client("kinesis", region_name="us-east-1").meta.service_model
    shape = shape.operation_model("GetRecords").output_shape
    custom: dict = {}
    decoder = page_decoder.GetRecordsDecoder()
    decoder(response_dict=response_dict, customized_response_dict=custom)
    parsed = create_parser("json").parse(response_dict, shape)
    parsed.update(custom)
    return parsed, decoder


def botocore_of(body):
    shape = create_client("kinesis", region_name="us-east-1").meta.service_model
    shape = shape.operation_model("GetRecords").output_shape
    return create_parser("json").parse(answer(body), shape)


def test_child_shards_nulls_and_encryption_decode_as_botocore_parses_them():
    # Real Kinesis ends a shard with "NextShardIterator": null and ChildShards (kinesalite
    # and moto send neither); records may carry EncryptionType, and nulls are omitted.
    body = json.dumps(
        {
            "Records": [
                {
                    "SequenceNumber": "49590338271490256608559692538361571095921575989136588898",
                    "ApproximateArrivalTimestamp": 1.795419782103e9,
                    "Data": base64.b64encode(b"\x00\xff").decode(),
                    "PartitionKey": "k",
                    "EncryptionType": "KMS",
                },
                {"SequenceNumber": "2", "Data": "", "PartitionKey": None},
            ],
            "NextShardIterator": None,
            "MillisBehindLatest": 1234,
            "ChildShards": [
                {
                    "ShardId": "shardId-000000000001",
                    "ParentShards": ["shardId-000000000000"],
                    "HashKeyRange": {"StartingHashKey": "0", "EndingHashKey": "17"},
                },
                {"ShardId": "shardId-000000000002", "ParentShards": [], "HashKeyRange": None},
            ],
        }
    ).encode()
    parsed, decoder = decode_like_the_client(answer(body))
    assert decoder.pages_decoded == 1
    assert_same_page(parsed, botocore_of(body))
    assert "NextShardIterator" not in parsed and parsed["Records"][1] == {
        "SequenceNumber": "2",
        "Data": b"",
    }


@pytest.mark.parametrize(
    "body, content_type",
    [
        (b'{"Records": [], "SomethingNew": 1}', "application/x-amz-json-1.1"),
        (b'{"Records": [{"SequenceNumber": "1", "Data": "QQ==\\n"}]}', None),
        (b'{"Records": [], "MillisBehindLatest": "5"}', None),
        (b'{"Records": [{"SequenceNumber": 1, "Data": ""}]}', None),
        (b'{"Records": []}', "application/cbor"),
        (b"not json", None),
        (b"{}", None),
        (b'{"Records": [], "MillisBehindLatest": 0}', None),  # with a bad x-amz-crc32
    ],
)
def test_pages_it_does_not_understand_are_left_to_botocore(body, content_type, caplog):
    response = answer(body) if content_type is None else answer(body, content_type=content_type)
    if body == b'{"Records": [], "MillisBehindLatest": 0}':
        response["headers"]["x-amz-crc32"] = "not-a-number"  # a page it could decode
    with caplog.at_level(logging.WARNING, logger=page_decoder.__name__):
        parsed, decoder = decode_like_the_client(response)
    assert decoder.pages_left_to_botocore == 1 and decoder.pages_decoded == 0
    assert "left to botocore" in caplog.text
    theirs = botocore_of(body)
    assert {k: v for k, v in parsed.items() if k != "ResponseMetadata"} == {
        k: v for k, v in theirs.items() if k != "ResponseMetadata"
    }


def test_error_answers_are_never_touched():
    body = b'{"__type":"ExpiredIteratorException","message":"Iterator expired"}'
    for status in (300, 400, 500):
        response = answer(body, status=status)
        custom: dict = {}
        decoder = page_decoder.GetRecordsDecoder()
        decoder(response_dict=response, customized_response_dict=custom)
        assert custom == {} and response["body"] == body
        assert decoder.pages_decoded == decoder.pages_left_to_botocore == 0


def raise_the_same(call_fast, call_slow):
    with pytest.raises(ClientError) as fast:
        call_fast()
    with pytest.raises(ClientError) as slow:
        call_slow()
    # Each client has its own exception classes: the same name, code, message, status.
    assert type(fast.value).__name__ == type(slow.value).__name__
    assert fast.value.response["Error"] == slow.value.response["Error"]
    status = [e.value.response["ResponseMetadata"]["HTTPStatusCode"] for e in (fast, slow)]
    assert status[0] == status[1]
    return fast.value


def test_service_errors_raise_exactly_what_botocore_raises(server, unique_name):
    fast, slow = client_of(server), client_of(server, fast=False)
    ensure_stream(fast, unique_name, 1)
    shard_id = first_shard(fast, unique_name)
    iterator = fast.get_shard_iterator(
        StreamName=unique_name, ShardId=shard_id, ShardIteratorType="TRIM_HORIZON"
    )["ShardIterator"]
    raise_the_same(
        lambda: fast.get_records(ShardIterator="bogus" + iterator[5:]),
        lambda: slow.get_records(ShardIterator="bogus" + iterator[5:]),
    )
    fast.delete_stream(StreamName=unique_name)
    gone = fast.get_waiter("stream_not_exists")  # kinesalite deletes after a delay
    gone.wait(StreamName=unique_name, WaiterConfig={"Delay": 0.2, "MaxAttempts": 100})
    raise_the_same(
        lambda: fast.get_records(ShardIterator=iterator),
        lambda: slow.get_records(ShardIterator=iterator),
    )


class ExpiredAnswers:
    """Answers GetRecords with Kinesis's HTTP 400 for an expired iterator, as bytes."""

    BODY = b'{"__type":"ExpiredIteratorException","message":"Iterator expired. 0 > 300000"}'

    def __init__(self, client):
        client.meta.events.register("before-send.kinesis.GetRecords", self._answer)

    def _answer(self, request, **_):
        headers = {"content-type": "application/x-amz-json-1.1", "x-amzn-requestid": "r1"}
        raw = _Raw(self.BODY)
        return AWSResponse(request.url, 400, headers, raw)


class _Raw:
    def __init__(self, body):
        self._body = body

    def stream(self, **_):
        yield self._body


def test_an_expired_iterator_raises_what_botocore_raises(local_aws):
    fast, slow = client_of(local_aws), client_of(local_aws, fast=False)
    ExpiredAnswers(fast), ExpiredAnswers(slow)
    error = raise_the_same(
        lambda: fast.get_records(ShardIterator="x" * 10),
        lambda: slow.get_records(ShardIterator="x" * 10),
    )
    assert error.response["Error"]["Code"] == "ExpiredIteratorException"
    assert type(error) is fast.exceptions.ExpiredIteratorException


class Crc32Header:
    """Sets ``x-amz-crc32`` on GetRecords answers before the decoder sees them."""

    def __init__(self, client, wrong_calls=()):
        self.calls = 0
        self.wrong_calls = set(wrong_calls)
        client.meta.events.register_first(page_decoder.EVENT, self._set)

    def _set(self, response_dict, **_):
        crc = zlib.crc32(response_dict["body"]) & 0xFFFFFFFF
        if self.calls in self.wrong_calls:
            crc ^= 1
        self.calls += 1
        response_dict["headers"]["x-amz-crc32"] = str(crc)


def test_crc32_is_checked_and_a_mismatch_is_retried_by_the_reader(local_aws, unique_name):
    client = client_of(local_aws)
    ensure_stream(client, unique_name, 1)
    client.put_records(
        StreamName=unique_name,
        Records=[{"Data": f"r{i}".encode(), "PartitionKey": "k"} for i in range(50)],
    )
    shard_id = first_shard(client, unique_name)
    crc = Crc32Header(client, wrong_calls={1})
    iterator = client.get_shard_iterator(
        StreamName=unique_name, ShardId=shard_id, ShardIteratorType="TRIM_HORIZON"
    )["ShardIterator"]
    assert len(client.get_records(ShardIterator=iterator)["Records"]) == 50  # crc matches
    with pytest.raises(ChecksumError, match="crc32"):
        client.get_records(ShardIterator=iterator)
    crc.wrong_calls = {2}
    reader = ShardReader(client, unique_name, shard_id, StartPosition.trim_horizon(), config=FAST)
    records = reader.read().records  # call 2 fails the check and is retried
    assert [r.data for r in records] == [f"r{i}".encode() for i in range(50)]
    assert crc.calls >= 4
    crc.wrong_calls = set(range(crc.calls, crc.calls + 100))  # never heals: a clear error
    reader = ShardReader(client, unique_name, shard_id, StartPosition.trim_horizon(), config=FAST)
    with pytest.raises(DependencyError, match="checksum"):
        reader.read()


def test_it_is_on_for_kinesis_clients_only_and_can_be_switched_off(local_aws, monkeypatch):
    def build(service, **kwargs):
        return create_client(service, region_name="us-east-1", **kwargs)

    assert page_decoder.installed(build("kinesis")) is not None
    assert page_decoder.installed(build("kinesis", fast_get_records=False)) is None
    with pytest.raises(ValueError, match="Kinesis clients"):
        page_decoder.install(build("dynamodb"))
    monkeypatch.setenv(page_decoder.ENVIRONMENT_SWITCH, "0")
    assert page_decoder.installed(build("kinesis")) is None
    assert page_decoder.installed(build("kinesis", fast_get_records=True)) is not None
    client = build("kinesis", fast_get_records=True)
    first = page_decoder.installed(client)
    assert page_decoder.install(client) is first  # once per client
    page_decoder.uninstall(client)
    assert page_decoder.installed(client) is None


def test_arrival_times_are_the_same_instant_as_botocore_gives():
    rng = random.Random(3)
    stamps = [rng.randrange(10**12, 2 * 10**12) / 1000 for _ in range(2000)]
    stamps += [rng.random() * 2e9 for _ in range(2000)] + [1795419782, 1.795419782103e9]
    records = [
        {"SequenceNumber": str(i), "Data": "", "ApproximateArrivalTimestamp": t}
        for i, t in enumerate(stamps)
    ]
    raw = json.dumps({"Records": records}).encode()
    ours = page_decoder.decode_page(raw)["Records"]
    theirs = botocore_of(raw)["Records"]
    assert [r["ApproximateArrivalTimestamp"] for r in ours] == [
        r["ApproximateArrivalTimestamp"] for r in theirs
    ]
    for mine, want in zip(ours, theirs):  # the same microseconds, printed in UTC
        utc = want["ApproximateArrivalTimestamp"].astimezone(timezone.utc)
        assert repr(mine["ApproximateArrivalTimestamp"]) == repr(utc)
