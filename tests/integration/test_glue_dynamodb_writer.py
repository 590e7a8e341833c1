"""The Glue DynamoDB sink's writer against moto's DynamoDB (the suite's local AWS):
requests of at most 25 items, a key written twice in one request, rows DynamoDB cannot
take, UnprocessedItems sent again until written or failing loudly past the bound,
throttled calls retried ``dynamodb.output.retry`` times, the pace, and the table's
shape as DescribeTable gives it. What moto does not check (numbers past DynamoDB's range,
key lengths) against dynalite, which refuses them as DynamoDB does. Faults are botocore
event hooks on the real client."""

from decimal import Decimal

import pytest
from pyspark.sql import types as T

from kinesis_dstream.backoff import Backoff
from kinesis_dstream.errors import ThrottledError
from kinesis_dstream.glue.errors import GlueError
from kinesis_dstream.glue.sinks.dynamodb_target import DynamoDBTarget, TableShape
from kinesis_dstream.glue.sinks.dynamodb_types import UnwritableValue, row_converter
from kinesis_dstream.glue.sinks.dynamodb_writes import TableWriter

from ..support.clocks import FakeTime
from ..support.faults import BatchWriteUnprocessed, CallCounter, CallErrors
from ..support.glue import wait_table_active


def create_table(dynamodb, name, keys=(("id", "N"),), capacity=None):
    """A table keyed by ``keys`` (name, type), on demand unless ``capacity`` (WCU)."""
    kinds = ("HASH", "RANGE")
    extra = (
        {"BillingMode": "PAY_PER_REQUEST"}
        if capacity is None
        else {"ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": capacity}}
    )
    dynamodb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": n, "KeyType": k} for (n, _), k in zip(keys, kinds)],
        AttributeDefinitions=[{"AttributeName": n, "AttributeType": t} for n, t in keys],
        **extra,
    )
    wait_table_active(dynamodb, name)
    return name


def scan(dynamodb, table):
    items, start = [], {}
    while True:
        page = dynamodb.scan(TableName=table, **start)
        items.extend(page["Items"])
        if "LastEvaluatedKey" not in page:
            return items
        start = {"ExclusiveStartKey": page["LastEvaluatedKey"]}


def item(i, **more):
    return {"id": {"N": str(i)}, "v": {"S": f"value {i}"}, **more}


@pytest.fixture
def dynamodb(local_aws):
    return local_aws.client("dynamodb")


@pytest.fixture
def table(dynamodb, unique_name):
    return create_table(dynamodb, unique_name)


def test_items_go_in_requests_of_25_and_a_key_twice_in_one_request_keeps_the_later(dynamodb, table):
    calls = CallCounter(dynamodb, "dynamodb", "BatchWriteItem")
    writer = TableWriter(dynamodb, table, {"id": "N"}, units_per_s=40_000)
    rows = [item(i) for i in range(60)]
    rows.insert(10, item(3, v={"S": "later 3"}))  # same key as an item of the same request
    writer.put_all(rows)
    writer.flush()
    calls.remove()
    assert [len(r["RequestItems"][table]) for r in calls.requests] == [25, 25, 10]
    stored = {int(i["id"]["N"]): i["v"]["S"] for i in scan(dynamodb, table)}
    assert stored == {i: ("later 3" if i == 3 else f"value {i}") for i in range(60)}
    assert (writer.counts.written, writer.counts.replaced, writer.counts.requests) == (60, 1, 3)


def test_rows_dynamodb_cannot_take_are_counted_and_named_and_the_others_written(dynamodb, table):
    writer = TableWriter(dynamodb, table, {"id": "N"}, units_per_s=40_000)
    writer.put_all(
        [
            item(1),
            {"v": {"S": "no key"}},
            {"id": {"S": "text"}},
            UnwritableValue("nan is not a DynamoDB number (in id=2, x=nan)"),
            item(3, big={"S": "x" * (400 * 1024)}),
            item(4),
        ]
    )
    writer.flush()
    assert sorted(int(i["id"]["N"]) for i in scan(dynamodb, table)) == [1, 4]
    assert dict(writer.counts.skipped) == {
        "no value for key attribute 'id'": 1,
        "key attribute 'id' is not of the table's type N": 1,
        "a value with no DynamoDB attribute": 1,
        "item of 409615 bytes, over DynamoDB's 400 KB": 1,
    }
    assert writer.counts.skipped_rows[0] == "no value for key attribute 'id': v='no key'"
    assert len(writer.counts.skipped_rows) == 3  # the first ones named, all counted


def test_numbers_and_keys_dynamodb_refuses_leave_their_rows_out_and_the_others_written(
    dynalite, unique_name
):
    """dynalite refuses a request holding a number past DynamoDB's range or a key over
    its length, as DynamoDB does: each such row is counted and named, its 25-item
    request's other rows are written, the boundaries are written."""
    dynamodb = dynalite.client("dynamodb")
    table = create_table(dynamodb, unique_name, keys=(("pk", "S"), ("sk", "S")))
    schema = T.StructType(
        [
            T.StructField("pk", T.StringType()),
            T.StructField("sk", T.StringType()),
            T.StructField("v", T.DoubleType()),
        ]
    )
    rows = [(f"k{i}", "s", float(i)) for i in range(21)]
    rows += [
        ("big", "s", 1e200),
        ("tiny", "s", 5e-324),
        ("p" * 2049, "s", 1.0),
        ("long sort key", "s" * 1025, 1.0),
        ("p" * 2048, "s" * 1024, 9.999e125),  # at DynamoDB's limits: written
        ("smallest", "s", 1e-130),
    ]
    writer = TableWriter(dynamodb, table, {"pk": "S", "sk": "S"}, units_per_s=40_000)
    writer.put_all(map(row_converter(schema), rows))
    writer.flush()
    stored = {i["pk"]["S"] for i in scan(dynamodb, table)}
    assert stored == {f"k{i}" for i in range(21)} | {"p" * 2048, "smallest"}
    assert dict(writer.counts.skipped) == {
        "a value with no DynamoDB attribute": 2,
        "partition key 'pk' over DynamoDB's 2048 bytes": 1,
        "sort key 'sk' over DynamoDB's 1024 bytes": 1,
    }
    assert writer.counts.skipped_rows[0].startswith(
        "a value with no DynamoDB attribute: 1E+200 is past DynamoDB's number range"
    )
    assert "(in pk='big', sk='s', v=1e+200)" in writer.counts.skipped_rows[0]
    assert writer.counts.refused_requests == 0  # each caught before it was sent


def test_a_request_dynamodb_refuses_whole_is_sent_again_an_item_a_request(dynalite, unique_name):
    """An item the writer's checks do not foresee (39 significant digits, not from a
    frame's row) fails its request in dynalite as in DynamoDB: the 25 items are sent
    again one a request, the refused one counted with DynamoDB's reason, 24 written."""
    dynamodb = dynalite.client("dynamodb")
    table = create_table(dynamodb, unique_name)
    writer = TableWriter(dynamodb, table, {"id": "N"}, units_per_s=40_000)
    rows = [item(i) for i in range(24)]
    rows.insert(7, item(99, v={"N": "1" * 39}))
    calls = CallCounter(dynamodb, "dynamodb", "BatchWriteItem")
    writer.put_all(rows)
    writer.flush()
    calls.remove()
    assert sorted(int(i["id"]["N"]) for i in scan(dynamodb, table)) == list(range(24))
    reason = (
        "refused by DynamoDB (ValidationException: Attempting to store more than 38 "
        "significant digits in a Number)"
    )
    assert dict(writer.counts.skipped) == {reason: 1}
    assert writer.counts.skipped_rows == [f"{reason}: id='99', v='{'1' * 39}'"]
    assert [len(r["RequestItems"][table]) for r in calls.requests] == [25] + [1] * 25
    assert (writer.counts.written, writer.counts.refused_requests) == (24, 1)


def test_items_refused_every_time_are_each_sent_alone_once_and_counted(dynamodb, table):
    """Nothing retried forever: a request refused whole, then each of its items."""
    refused = CallErrors(dynamodb, "dynamodb", "BatchWriteItem", lambda n: "ValidationException")
    writer = TableWriter(dynamodb, table, {"id": "N"}, units_per_s=40_000)
    writer.put_all(item(i) for i in range(30))
    writer.flush()
    refused.remove()
    assert refused.calls == 2 + 30  # the two requests, then each item once
    reason = "refused by DynamoDB (ValidationException: ValidationException (injected))"
    assert dict(writer.counts.skipped) == {reason: 30}
    assert (writer.counts.written, writer.counts.refused_requests) == (0, 2)
    assert scan(dynamodb, table) == []


def test_unprocessed_items_are_sent_again_until_dynamodb_takes_them(dynamodb, table):
    """Each of the first four answers leaves its last 7 items unprocessed."""
    unprocessed = BatchWriteUnprocessed(dynamodb, lambda n, count: 7 if n < 4 else 0)
    time = FakeTime()
    writer = TableWriter(dynamodb, table, {"id": "N"}, 40_000, sleep=time.sleep, clock=time.clock)
    writer.put_all(item(i) for i in range(50))
    writer.flush()
    unprocessed.remove()
    assert sorted(int(i["id"]["N"]) for i in scan(dynamodb, table)) == list(range(50))
    assert unprocessed.left_unprocessed == 28
    assert (writer.counts.written, writer.counts.resent) == (50, 28)
    assert len([s for s in time.sleeps if s > 0]) >= 1  # backed off before sending again


def test_items_dynamodb_never_takes_fail_the_write_past_the_bound_naming_table_and_count(
    dynamodb, table
):
    unprocessed = BatchWriteUnprocessed(dynamodb, lambda n, count: 4)
    time = FakeTime()
    bound = Backoff(initial_delay_s=0.5, max_delay_s=2.0, max_attempts=10**6, max_elapsed_s=30)
    writer = TableWriter(
        dynamodb, table, {"id": "N"}, 40_000, unprocessed=bound, sleep=time.sleep, clock=time.clock
    )
    writer.put_all(item(i) for i in range(10))
    with pytest.raises(ThrottledError) as failed:
        writer.flush()
    unprocessed.remove()
    assert str(failed.value).startswith(
        f"BatchWriteItem to table {table}: 4 items still unprocessed after "
    )
    assert "the batch fails and runs again (nothing is dropped)" in str(failed.value)
    assert time.now >= 30  # the bound, on the writer's clock
    assert sorted(int(i["id"]["N"]) for i in scan(dynamodb, table)) == list(range(6))


def test_a_throttled_call_is_retried_dynamodb_output_retry_times(dynamodb, table):
    time = FakeTime()
    errors = CallErrors(
        dynamodb,
        "dynamodb",
        "BatchWriteItem",
        lambda n: "ProvisionedThroughputExceededException" if n < 2 else None,
    )
    writer = TableWriter(
        dynamodb, table, {"id": "N"}, 40_000, retry=2, sleep=time.sleep, clock=time.clock
    )
    writer.put_all(item(i) for i in range(5))
    writer.flush()
    errors.remove()
    assert len(scan(dynamodb, table)) == 5 and errors.injected == 2
    always = CallErrors(
        dynamodb, "dynamodb", "BatchWriteItem", lambda n: "ProvisionedThroughputExceededException"
    )
    writer = TableWriter(
        dynamodb, table, {"id": "N"}, 40_000, retry=1, sleep=time.sleep, clock=time.clock
    )
    writer.put_all([item(7)])
    with pytest.raises(ThrottledError, match=f"BatchWriteItem to table {table}"):
        writer.flush()
    always.remove()
    assert always.calls == 2  # one call and one retry


def test_the_writes_keep_to_the_task_s_share_of_the_write_capacity(dynamodb, table):
    """10 WCU a second: 30 items of under 1 KB take 2 s after the bucket's first second's
    worth (25 at once would be 1.5 s early, then 5 more 0.5 s later)."""
    time = FakeTime()
    writer = TableWriter(dynamodb, table, {"id": "N"}, 10.0, sleep=time.sleep, clock=time.clock)
    writer.put_all(item(i) for i in range(30))
    writer.flush()
    assert time.sleeps == [pytest.approx(1.5), pytest.approx(0.5)]
    assert len(scan(dynamodb, table)) == 30


def test_binary_and_composite_keys_and_nested_values_are_written_as_given(dynamodb, unique_name):
    table = create_table(dynamodb, unique_name, keys=(("pk", "B"), ("sk", "S")))
    writer = TableWriter(dynamodb, table, {"pk": "B", "sk": "S"}, 40_000)
    nested = {
        "pk": {"B": b"\x00\x01"},
        "sk": {"S": "a"},
        "m": {"M": {"n": {"N": "12.30"}, "l": {"L": [{"S": "x"}, {"NULL": True}]}}},
    }
    writer.put_all([nested, {"pk": {"B": b""}, "sk": {"S": "empty key"}}])
    writer.flush()
    (stored,) = scan(dynamodb, table)
    assert stored["pk"] == {"B": b"\x00\x01"}
    assert stored["m"]["M"]["l"] == {"L": [{"S": "x"}, {"NULL": True}]}
    assert Decimal(stored["m"]["M"]["n"]["N"]) == Decimal("12.30")
    assert dict(writer.counts.skipped) == {"key attribute 'pk' is empty": 1}


def test_the_table_s_keys_and_capacity_as_describe_table_gives_them(
    dynamodb, local_aws, unique_name, monkeypatch
):
    for name, value in local_aws.env().items():
        if name != "AWS_ENDPOINT_URL":
            monkeypatch.setenv(name, value)
    # the connector's own names for the endpoint and region
    env = {"dynamodb.endpoint": local_aws.endpoint_url, "dynamodb.region": "us-east-1"}
    provisioned = create_table(dynamodb, f"{unique_name}-p", (("a", "S"), ("b", "N")), 10)
    shape = TableShape.describe(
        DynamoDBTarget.parse({"dynamodb.output.tableName": provisioned, **env})
    )
    assert (shape.keys, shape.write_capacity) == ({"a": "S", "b": "N"}, 10.0)
    on_demand = create_table(dynamodb, f"{unique_name}-o")
    target = DynamoDBTarget.parse({"dynamodb.output.tableName": on_demand, **env})
    assert TableShape.describe(target).write_capacity == 40_000  # as Glue counts it
    missing = DynamoDBTarget.parse({"dynamodb.output.tableName": f"{unique_name}-x", **env})
    with pytest.raises(GlueError, match=rf"table '{unique_name}-x' does not exist \(endpoint "):
        TableShape.describe(missing)
