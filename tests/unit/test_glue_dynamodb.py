"""The Glue DynamoDB sink's pure parts: Glue's type mapping of a frame's values to
DynamoDB attributes, DynamoDB's item sizes, the connection options as AWS documents
them, the write capacity a task may use, and the token bucket that paces it."""

import math
import re
import struct
from decimal import Decimal

import pytest
from pyspark.sql import Row
from pyspark.sql import types as T

from kinesis_dstream.glue.dynamodb_connection import TableAccess
from kinesis_dstream.glue.errors import GlueError
from kinesis_dstream.glue.sinks.dynamodb_target import DynamoDBTarget, TableShape
from kinesis_dstream.glue.sinks.dynamodb_types import (
    UnwritableValue,
    converter,
    item_size,
    number_text,
    row_converter,
)
from kinesis_dstream.shard_rate import ShardRateLimiter
from kinesis_dstream.token_bucket import TokenBucket

from ..support.clocks import FakeTime

TABLE = {"dynamodb.output.tableName": "orders"}


SCHEMA = T.StructType(
    [
        T.StructField("id", T.LongType()),
        T.StructField("small", T.ByteType()),
        T.StructField("price", T.DecimalType(10, 2)),
        T.StructField("ratio", T.DoubleType()),
        T.StructField("single", T.FloatType()),
        T.StructField("name", T.StringType()),
        T.StructField("blob", T.BinaryType()),
        T.StructField("flag", T.BooleanType()),
        T.StructField(
            "inner",
            T.StructType([T.StructField("p", T.IntegerType()), T.StructField("q", T.StringType())]),
        ),
        T.StructField("tags", T.ArrayType(T.StringType())),
        T.StructField("attrs", T.MapType(T.StringType(), T.DoubleType())),
        T.StructField("nothing", T.NullType()),
        T.StructField("when", T.StringType()),  # a timestamp, cast to text in Spark
    ]
)


def test_each_spark_type_becomes_the_attribute_glue_writes():
    """Rows as a frame's partition holds them in Python (structs are Rows)."""
    single = struct.unpack("f", struct.pack("f", 0.1))[0]  # a FloatType value
    first = (
        1, 7, Decimal("12.30"), 0.1, single, "a", bytearray(b"\x00\xff"), True,
        Row(p=1, q=None), ["x", None], {"k": 1.5, "n": None}, None, "2026-04-09 07:05:00",
    )  # fmt: skip
    second = (
        2, None, Decimal("-0.05"), 1e20, 2.5, "", None, False, None, [], None, None, None,
    )  # fmt: skip
    item = row_converter(SCHEMA)
    assert item(first) == {
        "id": {"N": "1"},
        "small": {"N": "7"},
        "price": {"N": "12.30"},
        "ratio": {"N": "0.1"},
        "single": {"N": "0.1"},  # a 4-byte float as it prints, not 0.10000000149011612
        "name": {"S": "a"},
        "blob": {"B": b"\x00\xff"},
        "flag": {"BOOL": True},
        "inner": {"M": {"p": {"N": "1"}}},  # a field with no value left out
        "tags": {"L": [{"S": "x"}, {"NULL": True}]},  # a list keeps its positions
        "attrs": {"M": {"k": {"N": "1.5"}}},
        "when": {"S": "2026-04-09 07:05:00"},
    }
    assert item(second) == {
        "id": {"N": "2"},
        "price": {"N": "-0.05"},
        "ratio": {"N": "1E+20"},
        "single": {"N": "2.5"},
        "name": {"S": ""},
        "flag": {"BOOL": False},
        "tags": {"L": []},
    }


def test_a_nan_stands_in_for_its_row_and_a_type_with_no_attribute_is_one_line():
    schema = T.StructType([T.StructField("id", T.LongType()), T.StructField("x", T.DoubleType())])
    item = row_converter(schema)
    bad = item((1, math.nan))
    assert isinstance(bad, UnwritableValue)
    assert str(bad) == "nan is not a DynamoDB number (in id=1, x=nan)"
    assert item((2, 1.0)) == {"id": {"N": "2"}, "x": {"N": "1.0"}}
    with pytest.raises(GlueError, match=r"column 'took': Spark type interval day to second has"):
        converter(T.DayTimeIntervalType(), "took")
    with pytest.raises(UnwritableValue):
        number_text(Decimal("Infinity"))


def test_numbers_past_dynamodb_s_range_stand_in_for_their_row():
    """DynamoDB keeps 38 significant digits, magnitudes 1E-130 to 9.99...E+125, and 0."""
    for fits in (0.0, 1e-130, 9.999e125, -9.999e125, 2**63, Decimal("-0.000"), 10**40):
        number_text(fits)
    assert number_text(Decimal("1" * 38)) == "1" * 38
    assert number_text(Decimal("12.30")) == "12.30"  # trailing zeros are not significant
    for past, why in (
        (1e200, "1E+200 is past DynamoDB's number range (magnitude at most 9.99...E+125)"),
        (-1e126, "-1E+126 is past DynamoDB's number range"),
        (5e-324, "5E-324 is past DynamoDB's number range (a magnitude of at least 1E-130"),
        (Decimal("1" * 39), "has 39 significant digits; DynamoDB stores 38"),
        (Decimal("1.5E-131"), "1.5E-131 is past DynamoDB's number range"),
    ):
        with pytest.raises(UnwritableValue, match=re.escape(why)):
            number_text(past)
    schema = T.StructType([T.StructField("m", T.MapType(T.StringType(), T.DoubleType()))])
    assert isinstance(row_converter(schema)(({"x": 1e-300},)), UnwritableValue)  # nested too


def test_item_sizes_are_counted_as_dynamodb_counts_them():
    assert item_size({"id": {"S": "abc"}}) == 2 + 3
    assert item_size({"n": {"N": "12345"}}) == 1 + 4  # one byte a two digits, plus one
    assert item_size({"n": {"N": "-0.00120"}}) == 1 + 2  # leading and trailing zeros trimmed
    assert item_size({"f": {"BOOL": True}, "z": {"NULL": True}}) == 2 + 2
    nested = {"m": {"M": {"ab": {"S": "x"}, "l": {"L": [{"N": "1"}, {"B": b"12"}]}}}}
    # m: 3 + (2 + 1 + 1) + (1 + (3 + (2 + 1) + (2 + 1)) + 1)
    assert item_size(nested) == 1 + 3 + 4 + 11


def test_the_connection_options_as_aws_documents_them(caplog):
    target = DynamoDBTarget.parse(
        {
            **TABLE,
            "dynamodb.throughput.write.percent": "1.0",
            "dynamodb.output.numParallelTasks": 4,
            "dynamodb.output.retry": "100",
            "dynamodb.sts.roleArn": "arn:aws:iam::123456789012:role/writer",
            "dynamodb.region": "eu-west-1",
            "dynamodb.endpoint": "dynamodb.eu-west-1.amazonaws.com",
            "dynamodb.output.batchSize": "25",  # in public scripts; not AWS's
        }
    )
    assert (target.table, target.percent, target.parallel_tasks, target.retry) == (
        "orders",
        1.0,
        4,
        100,
    )
    spec = target.access.client_spec()
    assert (spec.service, spec.region_name, spec.endpoint_url) == (
        "dynamodb",
        "eu-west-1",
        "https://dynamodb.eu-west-1.amazonaws.com",
    )
    assert spec.credentials.role_arn == "arn:aws:iam::123456789012:role/writer"
    assert spec.credentials.role_session_name == "glue-dynamodb-write-sts-session"
    assert any("['dynamodb.output.batchSize'] have no effect" in m for m in caplog.messages)
    defaults = DynamoDBTarget.parse(TABLE)
    assert (defaults.percent, defaults.parallel_tasks, defaults.retry) == (0.5, None, 10)
    assert defaults.access.client_spec().credentials is None
    DynamoDBTarget.parse({**TABLE, "dynamodb.throughput.write.percent": "2"})
    assert any("2.0: AWS documents 0.1 to 1.5; used as given" in m for m in caplog.messages)


@pytest.mark.parametrize(
    "options, message",
    [
        ({}, r"connection_options 'dynamodb.output.tableName' is required"),
        ({**TABLE, "dynamodb.throughput.write.percent": "fast"}, r"percent='fast': give a number"),
        ({**TABLE, "dynamodb.output.numParallelTasks": "1.5"}, r"'1.5': give an integer"),
        ({**TABLE, "dynamodb.output.numParallelTasks": "0"}, r"=0: give an integer >= 1"),
        ({**TABLE, "dynamodb.output.retry": "-1"}, r"retry=-1: give an integer >= 0"),
    ],
)
def test_an_option_the_write_cannot_take_is_one_line(options, message):
    with pytest.raises(GlueError, match=message):
        DynamoDBTarget.parse(options)


def test_each_task_gets_its_share_of_the_write_capacity_as_glue_computes_it():
    """permittedWcuPerTask = TableWCU * percent / numParallelTasks, at least 1."""
    provisioned = TableShape({"id": "N"}, 10.0)
    target = lambda percent: DynamoDBTarget(TableAccess("t"), percent=percent)  # noqa: E731
    assert provisioned.units_per_task(target(0.5), 2) == 2.5
    assert provisioned.units_per_task(target(0.1), 4) == 1.0
    on_demand = TableShape({"id": "N"}, 40_000.0)
    assert on_demand.units_per_task(target(1.0), 8) == 5_000.0


def test_a_token_bucket_starts_full_then_gives_its_rate():
    clock = FakeTime(100.0)
    bucket = TokenBucket(10.0, clock=clock.clock)
    assert bucket.take(10) == 0.0  # a second's worth at once
    assert bucket.take(5) == pytest.approx(0.5)  # in debt: wait for it
    clock.now += 0.5
    assert bucket.take(10) == pytest.approx(1.0)
    clock.now += 60
    assert bucket.take(3) == 0.0  # refilled, never past its capacity
    assert bucket.take(8) == pytest.approx(0.1)
    with pytest.raises(ValueError, match="rate must be > 0"):
        TokenBucket(0)


def test_the_producer_s_shard_pace_waits_for_the_slower_of_records_and_bytes():
    clock = FakeTime(100.0)
    limiter = ShardRateLimiter(100.0, clock=clock.clock)  # 1,000 records and 1 MiB a second
    assert limiter.delay_s([("s1", 500, 1024)]) == 0.0
    assert limiter.delay_s([("s1", 1000, 1024)]) == pytest.approx(0.5)  # records lack
    assert limiter.delay_s([("s2", 1, 3 * 1024 * 1024)]) == pytest.approx(2.0)  # bytes lack
