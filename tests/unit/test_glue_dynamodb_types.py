"""DynamoDB's attribute types as Glue maps them, both ways, without AWS: items read into a
frame's types (merged over a table's items), values that no longer fit, the writer's
direction, the export's DynamoDB JSON, and the Scan's pace on an injected clock."""

from decimal import Decimal

import pytest
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DecimalType,
    DoubleType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
)

from kinesis_dstream.glue.dynamodb_connection import TableAccess
from kinesis_dstream.glue.frames import dynamodb_types as types
from kinesis_dstream.glue.sinks.dynamodb_types import row_converter
from kinesis_dstream.glue.sources.dynamodb_options import DynamoDBRead
from kinesis_dstream.glue.sources.dynamodb_scan import (
    consumed_units,
    ddb_json,
    record_struct,
    shaped,
)

ITEM = {
    "id": {"S": "c1"},
    "priority": {"N": "3"},
    "weight": {"N": "0.25"},
    "huge": {"N": "123456789012345678901234567890"},
    "raw": {"B": b"\x00\x01"},
    "vip": {"BOOL": True},
    "gone": {"NULL": True},
    "tags": {"SS": ["b", "a"]},
    "scores": {"NS": ["1", "2"]},
    "list": {"L": [{"S": "x"}, {"N": "1"}]},
    "address": {"M": {"city": {"S": "Lyon"}, "zip": {"N": "69001"}}},
}


def test_an_item_s_attributes_are_typed_as_glue_s_dynamodb_reader_types_them():
    item = types.plain_item(ITEM)
    assert item["priority"] == 3 and item["weight"] == 0.25 and item["gone"] is None
    assert item["huge"] == Decimal("123456789012345678901234567890")
    assert item["tags"] == ["b", "a"]  # in the order DynamoDB returns the set
    assert types.item_struct(item).simpleString() == (
        "struct<id:string,priority:bigint,weight:double,huge:decimal(38,0),raw:binary,"
        "vip:boolean,gone:string,tags:array<string>,scores:array<bigint>,"
        "list:array<string>,address:struct<city:string,zip:bigint>>"
    )


def test_a_field_s_types_merge_over_the_items_and_its_values_follow():
    first = types.item_struct(types.plain_item({"id": {"S": "a"}, "n": {"N": "1"}}))
    second = types.item_struct(
        types.plain_item({"id": {"N": "7"}, "n": {"N": "1.5"}, "m": {"M": {"k": {"N": "1"}}}})
    )
    merged = types.merge_items(first, second)
    assert merged.simpleString() == "struct<id:string,n:double,m:struct<k:bigint>>"
    dropped: list = []
    as_text = types.conformer(StringType(), dropped.append)
    assert [as_text(v) for v in (7, True, b"\x00", [1, "a"], {"k": Decimal("2")})] == [
        "7",
        "true",
        "AA==",
        '[1,"a"]',
        '{"k":"2"}',
    ]
    struct = types.conformer(merged, dropped.append)
    assert struct({"id": "a", "n": 1, "m": {"k": "changed", "new": 2}}) == {
        "id": "a",
        "n": 1.0,
        "m": {"k": None},  # a nested value that no longer fits: null
    }
    assert dropped == [types.DROPPED_UNKNOWN, types.DROPPED_MISFIT]  # told, to be counted
    array = types.conformer(ArrayType(LongType()), dropped.append)
    assert array([1, "x", None]) == [1, None, None] and dropped[-1] == types.DROPPED_MISFIT
    assert len(dropped) == 3  # a null member is no misfit
    with pytest.raises(ValueError):
        types.conformer(LongType(), dropped.append)("x")  # the caller nulls it and counts it


def test_values_written_by_the_sink_read_back_as_they_were():
    # the two directions are two modules (the sink's and the reader's): a round trip
    # through both gives the row back
    schema = StructType(
        [
            StructField("id", StringType()),
            StructField("n", LongType()),
            StructField("x", DoubleType()),
            StructField("d", DecimalType(3, 2)),
            StructField("ok", BooleanType()),
            StructField("raw", BinaryType()),
            StructField("none", StringType()),
            StructField("list", ArrayType(LongType())),
            StructField("map", MapType(StringType(), ArrayType(BooleanType()))),
        ]
    )
    row = ("a", 3, 1.5, Decimal("2.50"), False, b"z", None, [1, None], {"k": [True]})
    item = row_converter(schema)(row)
    assert item == {
        "id": {"S": "a"},
        "n": {"N": "3"},
        "x": {"N": "1.5"},
        "d": {"N": "2.50"},
        "ok": {"BOOL": False},
        "raw": {"B": b"z"},
        "list": {"L": [{"N": "1"}, {"NULL": True}]},
        "map": {"M": {"k": {"L": [{"BOOL": True}]}}},
    }  # a field with no value is left out
    assert types.plain_item(item) == {
        "id": "a",
        "n": 3,
        "x": 1.5,
        "d": 2.5,
        "ok": False,
        "raw": b"z",
        "list": [1, None],
        "map": {"k": [True]},
    }
    with pytest.raises(types.AttributeValueError, match="not a DynamoDB attribute type"):
        types.plain({"X": 1})


def test_the_export_shape_is_dynamodb_json_in_an_item_struct():
    read = DynamoDBRead(TableAccess("t"), 1, 10.0, ddb_json=True)
    record = shaped(read, {"id": {"S": "a"}, "n": {"N": "1"}, "raw": {"B": b"\x00"}})
    assert record == {"Item": {"id": {"S": "a"}, "n": {"N": "1"}, "raw": {"B": "AA=="}}}
    assert record_struct(read, record).simpleString() == (
        "struct<Item:struct<id:struct<S:string>,n:struct<N:string>,raw:struct<B:string>>>"
    )
    assert ddb_json({"NS": [1, 2]}) == {"NS": ["1", "2"]}
    plain = DynamoDBRead(TableAccess("t"), 1, 10.0)
    assert isinstance(record_struct(plain, shaped(plain, {"id": {"S": "a"}})), StructType)


def test_a_page_s_read_units_are_dynamodb_s_or_estimated_by_size():
    """(The segment's pace is the library's TokenBucket, tested with the sink's.)"""
    assert consumed_units({"ConsumedCapacity": {"CapacityUnits": 2.5}}) == 2.5
    assert consumed_units({"Items": [{"k": {"S": "x" * 8000}}]}) > 0.5  # estimated by size
