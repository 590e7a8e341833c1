"""The pure parts of Glue's transforms: awsglue.gluetypes, resolveChoice's specs, a
DynamicRecord and Map's schema inference (no Spark started)."""

import datetime as dt
import decimal

import pytest
from pyspark.sql import types as T

from kinesis_dstream.glue.errors import GlueError
from kinesis_dstream.glue.frames import gluetypes as G
from kinesis_dstream.glue.frames.records import (
    DynamicRecord,
    conform,
    infer_type,
    merge_types,
    to_plain,
    to_record,
)
from kinesis_dstream.glue.transforms.choices import ResolveSpec, _path_parts, parse_specs


def test_glue_types_have_glue_s_names_json_and_repr():
    assert G.IntegerType.typeName() == "int" and G.StringType.typeName() == "string"
    assert repr(G.DecimalType()) == "DecimalType(10, 2, {})"
    assert G.DecimalType().jsonValue() == {
        "dataType": "decimal",
        "properties": {},
        "precision": 10,
        "scale": 2,
    }
    struct = G.StructType([G.Field("a", G.LongType()), G.Field("b", G.ArrayType(G.StringType()))])
    assert [f.name for f in struct] == ["a", "b"]
    assert struct.hasField("a") and struct.getField("b").dataType.elementType == G.StringType()
    assert repr(struct) == (
        "StructType([Field(a, LongType({}), {}),Field(b, ArrayType(StringType({}), {}), {})], {})"
    )
    json_value = struct.jsonValue()
    assert json_value["fields"][0] == {
        "name": "a",
        "container": {"dataType": "long", "properties": {}},
        "properties": {},
    }
    assert G.StructType.fromJsonValue(json_value) == struct
    choice = G.ChoiceType([G.LongType(), G.StringType()])
    assert repr(choice) == "ChoiceType([LongType({}),StringType({})], {})"
    with pytest.raises(ValueError, match="duplicate choice"):
        choice.add(G.LongType())
    assert repr(G.EnumType(["a", "b", "c", "d"])) == "EnumType([a,b,c,...], {})"


def test_a_spark_schema_in_glue_types_with_the_batch_s_empty_fields_as_null():
    spark = T.StructType(
        [
            T.StructField("a", T.IntegerType()),
            T.StructField(
                "b",
                T.StructType(
                    [T.StructField("c", T.DecimalType(12, 3)), T.StructField("d", T.StringType())]
                ),
            ),
            T.StructField("e", T.ArrayType(T.LongType())),
            T.StructField("f", T.MapType(T.StringType(), T.DoubleType())),
        ]
    )
    glue = G.from_spark(spark, frozenset({("b", "d")}))
    assert glue == G.StructType(
        [
            G.Field("a", G.IntegerType()),
            G.Field(
                "b", G.StructType([G.Field("c", G.DecimalType(12, 3)), G.Field("d", G.NullType())])
            ),
            G.Field("e", G.ArrayType(G.LongType())),
            G.Field("f", G.MapType(G.DoubleType())),
        ]
    )


@pytest.mark.parametrize(
    "text, expected",
    [
        ("cast:long", ResolveSpec("p", "cast", "long")),
        ("project: double", ResolveSpec("p", "project", "double")),
        ("make_cols", ResolveSpec("p", "make_cols")),
        ("MAKE_STRUCT", ResolveSpec("p", "make_struct")),
        ("match_catalog", ResolveSpec("p", "match_catalog")),
    ],
)
def test_resolve_choice_specs_parse(text, expected):
    assert ResolveSpec.parse("p", text) == expected


@pytest.mark.parametrize("text", ["cast", "cast:", "unbox", "make_cols:int", ""])
def test_a_bad_resolve_choice_spec_is_one_line_naming_it(text):
    with pytest.raises(GlueError, match=r"resolveChoice: .* for 'p'"):
        ResolveSpec.parse("p", text)


def test_resolve_choice_arguments_as_glue_checks_them():
    assert parse_specs(("a", "cast:int"), "") == ([ResolveSpec("a", "cast", "int")], None)
    assert parse_specs(None, "make_struct") == ([], ResolveSpec("", "make_struct"))
    with pytest.raises(GlueError, match="both missing"):
        parse_specs(None, "")
    with pytest.raises(GlueError, match="both specified"):
        parse_specs([("a", "cast:int")], "make_cols")
    assert _path_parts("a.items[].price") == ["a", "items", "[]", "price"]
    assert _path_parts("`a.b`[]") == ["a.b", "[]"]


def test_a_dynamic_record_is_a_dict_with_attributes_and_rows_become_records():
    row = T.Row(a=1, s=T.Row(b="x"), l=[T.Row(c=2)], m={"k": 3})
    record = to_record(row)
    assert isinstance(record, DynamicRecord) and isinstance(record["s"], DynamicRecord)
    assert record.s.b == "x" and record["l"][0].c == 2 and record.get("missing") is None
    record.new = 5
    del record["a"]
    assert to_plain(record) == {"s": {"b": "x"}, "l": [{"c": 2}], "m": {"k": 3}, "new": 5}
    with pytest.raises(AttributeError):
        _ = record.a


def test_map_s_schema_keeps_the_input_s_types_where_values_fit_and_merges_records():
    hint = T.StructType(
        [
            T.StructField("n", T.IntegerType()),
            T.StructField("t", T.TimestampType()),
            T.StructField("d", T.DecimalType(10, 2)),
        ]
    )
    value = {"n": 3, "t": dt.datetime(2024, 1, 1), "d": decimal.Decimal("1.50"), "x": 1.5}
    inferred = infer_type(value, hint)
    assert inferred.simpleString() == "struct<n:int,t:timestamp,d:decimal(10,2),x:double>"
    assert infer_type({"n": 2**40}, hint).simpleString() == "struct<n:bigint>"
    conflicts: list = []
    merged = merge_types(
        infer_type({"n": 1, "v": "a"}), infer_type({"n": 2.5, "v": 3, "w": [1]}), conflicts, ()
    )
    assert merged.simpleString() == "struct<n:double,v:string,w:array<bigint>>"
    assert conflicts == [("v",)]
    assert conform({"n": 1, "v": 3}, merged) == (1.0, "3", None)
