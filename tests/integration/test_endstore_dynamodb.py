"""The DynamoDB end store on moto's server: its writes are retried as its reads are
(awslabs' metadataNumRetries family), also when an answer is lost after the write landed."""

from __future__ import annotations

import logging

import pytest

from kinesis_dstream.aws import AWSCredentials, ClientSpec
from kinesis_dstream.backoff import Backoff
from kinesis_dstream.sql.driver.range_ends import RangeEnds
from kinesis_dstream.sql.ends.store import DynamoDBEndStore
from kinesis_dstream.sql.offsets import CorruptOffsetError, RangeEnd

from ..support.faults import AnswerLost, CallErrors

FAST = Backoff(initial_delay_s=0.01, max_delay_s=0.05, max_attempts=4)


@pytest.fixture
def store(local_aws, unique_name):
    credentials = AWSCredentials(local_aws.access_key_id, local_aws.secret_access_key)
    spec = ClientSpec("dynamodb", local_aws.region_name, local_aws.endpoint_url, credentials)
    ends = DynamoDBEndStore(unique_name, spec, backoff=FAST)
    ends.ensure_table()
    return ends


def end(n):
    return RangeEnd(n, {"seq": str(1000 + n), "sub": 0}, last={"seq": str(999 + n), "sub": 0})


def test_a_throttled_write_of_a_range_end_is_retried(store):
    throttled = CallErrors(
        store.client_spec.client(),
        "dynamodb",
        "PutItem",
        lambda n: "ProvisionedThroughputExceededException" if n == 0 else None,
    )
    try:
        assert store.put_if_absent("range-1", end(3)) == end(3)
    finally:
        throttled.remove()
    assert throttled.injected == 1 and throttled.calls == 2
    assert store.get("range-1") == end(3)
    assert store.put_if_absent("range-1", end(5)) == end(3)  # the first write stays


@pytest.mark.parametrize(
    "item, what",
    [
        ({"end": {"S": "null"}}, "not an object"),
        ({"end": {"S": '{"count": "1"}'}}, "'count' is '1'"),
        ({"end": {"N": "5"}}, "not JSON"),
        ({}, "not JSON"),
    ],
)
def test_a_corrupted_range_end_item_is_one_error_naming_table_and_key(store, item, what):
    client = store.client_spec.client()
    client.put_item(TableName=store.table_name, Item={"rangeKey": {"S": "range-9"}, **item})
    with pytest.raises(CorruptOffsetError) as info:
        store.get("range-9")
    message = str(info.value)
    assert message.startswith(f"end-store item range-9 of DynamoDB table {store.table_name}: ")
    assert what in message, message


def test_a_write_whose_answer_was_lost_reads_back_its_own_end(store):
    lost = AnswerLost(store.client_spec.client(), "PutItem")
    try:
        assert store.put_if_absent("range-2", end(7)) == end(7)
    finally:
        lost.remove()
    assert lost.left == 0 and store.get("range-2") == end(7)


def test_a_throttled_query_marker_is_retried(store):
    throttled = CallErrors(
        store.client_spec.client(),
        "dynamodb",
        "PutItem",
        lambda n: "ThrottlingException" if n == 0 else None,
    )
    try:
        assert store.mark("query-a") is False  # created now
    finally:
        throttled.remove()
    assert throttled.injected == 1
    assert store.mark("query-a") is True  # there already


def test_a_clean_up_the_store_refuses_is_counted_and_the_query_goes_on(store, caplog):
    ends = RangeEnds(store, "s")
    assert store.put_if_absent("range-old", end(1)) == end(1)
    denied = CallErrors(
        store.client_spec.client(), "dynamodb", "DeleteItem", lambda n: "AccessDeniedException"
    )
    caplog.set_level(logging.INFO, logger="kinesis_dstream.sql.driver.range_ends")
    try:
        ends.forget(["range-old"])  # raised before: the query failed at its commit
        ends.forget(["range-old"])
    finally:
        denied.remove()
    assert ends.ends_not_deleted == 2 and store.get("range-old") == end(1)
    warnings = [r for r in caplog.records if "deleting old range ends" in r.getMessage()]
    assert len(warnings) == 1 and "AccessDeniedException" in warnings[0].getMessage()
    ends.forget(["range-old"])  # allowed again: deleted, and the recovery said
    assert store.get("range-old") is None
    assert "works again" in caplog.text
