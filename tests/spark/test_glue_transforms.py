"""Glue's transforms and DynamicFrame API on static batches, each against the input and
output AWS documents for it (the PySpark transforms reference and the DynamicFrame
class's examples), on the session's SparkSession."""
# ruff: noqa: F811 (the fixtures imported from test_glue are test arguments here)

from __future__ import annotations

import json
import logging
import re

import pytest
from pyspark.sql import Row
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    DoubleType,
    LongType,
    NullType,
    StringType,
    StructField,
    StructType,
)

from kinesis_dstream.glue.errors import GlueError
from kinesis_dstream.glue.frames import gluetypes as G
from kinesis_dstream.glue.frames.dynamicframe import (
    DynamicFrame,
    DynamicFrameCollection,
    ResolveOption,
)
from kinesis_dstream.glue.transforms import (
    Coalesce,
    DropFields,
    DropNullFields,
    ErrorsAsDynamicFrame,
    Filter,
    FlatMap,
    Join,
    Map,
    MapToCollection,
    Relationalize,
    Repartition,
    ResolveChoice,
    SelectFields,
    SelectFromCollection,
    Spigot,
    SplitFields,
    SplitRows,
    Unbox,
    Union,
    UnnestFrame,
)

from ..support.glue import json_rows, s3_objects
from .test_glue import bucket, glue, glue_env  # noqa: F401


def frame(glue, rows, schema=None, name="") -> DynamicFrame:
    return DynamicFrame(glue.spark_session.createDataFrame(rows, schema), glue, name)


def medicare(glue) -> DynamicFrame:
    """The shape of AWS's medicare examples (Filter, Map)."""
    schema = (
        "`Provider Id` long, `Provider Name` string, `Provider Street Address` string, "
        "`Provider City` string, `Provider State` string, `Provider Zip Code` long"
    )
    rows = [
        (10001, "SOUTHEAST ALABAMA", "1108 ROSS CLARK CIRCLE", "DOTHAN", "AL", 36301),
        (10005, "MARSHALL MEDICAL", "2505 U S HIGHWAY 431", "BOAZ", "AL", 35957),
        (10011, "ST VINCENTS EAST", "50 MEDICAL PARK EAST", "MONTGOMERY", "AL", 35235),
        (50002, "ST ROSE HOSPITAL", "27200 CALAROGA AVE", "SACRAMENTO", "CA", 94545),
        (50006, "ST JOSEPH HOSPITAL", "2700 DOLBEER ST", "EUREKA", "CA", 95501),
    ]
    return frame(glue, rows, schema, "medicare")


def test_filter_keeps_the_records_the_predicate_accepts_as_the_medicare_example(glue):
    sac_or_mon = medicare(glue).filter(
        f=lambda x: (
            x["Provider State"] in ["CA", "AL"]
            and x["Provider City"] in ["SACRAMENTO", "MONTGOMERY"]
        )
    )
    assert sorted(r["Provider Id"] for r in sac_or_mon.toDF().collect()) == [10011, 50002]
    assert sac_or_mon.toDF().schema == medicare(glue).toDF().schema
    assert sac_or_mon.errorsCount() == 0


def test_glue_studio_s_filter_node_with_regex_and_nested_fields(glue):
    rows = [("ab-1", 7, {"zone": "eu"}), ("xx", 9, {"zone": "eu"}), ("ab-2", 3, None)]
    dyf = frame(glue, rows, "code string, n int, place struct<zone:string>")
    kept = Filter.apply(
        frame=dyf,
        f=lambda row: (
            bool(re.match("ab-", row["code"])) and row["n"] > 5 and row.place.zone == "eu"
        ),
        transformation_ctx="Filter_node1",
    )
    assert [r.code for r in kept.toDF().collect()] == ["ab-1"]
    # a null struct: row["place"]["zone"] is a TypeError, which drops the record as Glue
    kept = Filter.apply(frame=dyf, f=lambda row: row["place"]["zone"] == "eu")
    assert sorted(r.code for r in kept.toDF().collect()) == ["ab-1", "xx"]
    assert kept.errorsCount() == 0


def test_a_predicate_that_fails_otherwise_makes_error_records_counted_and_kept(glue, caplog):
    def odd(row):
        if row["n"] == 2:
            raise RuntimeError("bad record")
        return row["n"] % 2 == 1

    caplog.set_level(logging.WARNING, "kinesis_dstream.glue")
    dyf = frame(glue, [(1,), (2,), (3,), (4,)], "n int")
    kept = dyf.filter(odd)
    assert sorted(r.n for r in kept.toDF().collect()) == [1, 3]
    assert (kept.errorsCount(), kept.stageErrorsCount()) == (1, 1)
    later = kept.select_fields(["n"])
    assert (later.errorsCount(), later.stageErrorsCount()) == (1, 0)
    errors = ErrorsAsDynamicFrame.apply(later).toDF().collect()
    assert [(e.transformation, json.loads(e.record)) for e in errors] == [("Filter", {"n": 2})]
    assert "RuntimeError: bad record" in errors[0].errorMessage
    assert "Filter: 1 records failed" in caplog.text


def test_map_merges_address_fields_into_a_struct_as_the_medicare_example(glue):
    def merge_address(rec):
        rec["Address"] = {}
        rec["Address"]["Street"] = rec["Provider Street Address"]
        rec["Address"]["City"] = rec["Provider City"]
        rec["Address"]["State"] = rec["Provider State"]
        rec["Address"]["Zip.Code"] = rec["Provider Zip Code"]
        rec["Address"]["Array"] = [rec["Provider Street Address"], rec["Provider City"]]
        del rec["Provider Street Address"]
        del rec["Provider City"]
        del rec["Provider State"]
        del rec["Provider Zip Code"]
        return rec

    mapped = Map.apply(frame=medicare(glue), f=merge_address)
    df = mapped.toDF()
    assert df.columns == ["Provider Id", "Provider Name", "Address"]
    assert df.schema["Provider Id"].dataType == LongType()  # the input's type kept
    address = df.schema["Address"].dataType
    assert [f.name for f in address.fields] == ["Street", "City", "State", "Zip.Code", "Array"]
    assert address["Zip.Code"].dataType == LongType()
    assert address["Array"].dataType == ArrayType(StringType())
    first = df.where("`Provider Id` = 10001").first()
    assert first.Address.City == "DOTHAN" and first.Address["Zip.Code"] == 36301


def test_map_infers_conflicting_types_as_strings_and_failures_as_errors(glue, caplog):
    def change(rec):
        if rec.n == 3:
            return None
        rec.v = "text" if rec.n == 1 else rec.n * 1.5
        rec.new = rec.n
        return rec

    caplog.set_level(logging.WARNING, "kinesis_dstream.glue")
    mapped = frame(glue, [(1,), (2,), (3,)], "n int").map(change)
    df = mapped.toDF()
    assert df.schema["v"].dataType == StringType()
    assert df.schema["new"].dataType == LongType()  # a new field: inferred from Python ints
    assert sorted((r.n, r.v) for r in df.collect()) == [(1, "text"), (2, "3.0")]
    assert mapped.errorsCount() == 1
    assert (
        "returned NoneType instead of DynamicRecord"
        in mapped.errorsAsDynamicFrame().toDF().first().errorMessage
    )
    assert "are strings here" in caplog.text and "v" in caplog.text


def test_drop_null_fields_drops_the_fields_without_a_value_as_the_persons_example(glue):
    df = glue.spark_session.createDataFrame(
        [("p1", None, ("a", None)), ("p2", None, ("b", None))],
        "id string, family_name string, name struct<given:string, note:string>",
    ).withColumn("empty_column", F.lit(None).cast(NullType()))
    dyf = DynamicFrame.fromDF(df, glue, "persons_with_nulls")
    schema = dyf.schema()
    assert isinstance(schema, G.StructType)
    assert schema.getField("empty_column").dataType == G.NullType()
    assert schema.getField("family_name").dataType == G.NullType()  # no value in the batch
    assert schema.getField("id").dataType == G.StringType()
    no_nulls = DropNullFields.apply(dyf)
    assert no_nulls.toDF().columns == ["id", "name"]
    assert no_nulls.toDF().schema["name"].dataType.names == ["given"]
    assert [r.name.given for r in no_nulls.toDF().orderBy("id").collect()] == ["a", "b"]


def test_glue_studio_s_drop_null_fields_helper_shape_runs(glue):
    """The helper Glue Studio's Drop Null Fields node writes (our own copy of its shape)."""
    from kinesis_dstream.glue.frames.gluetypes import ArrayType, IntegerType, NullType, StringType
    from kinesis_dstream.glue.frames.gluetypes import StructType as GlueStruct

    def find_nulls(schema, path, output, null_strings, null_ints, dyf):
        if isinstance(schema, GlueStruct):
            for field in schema:
                prefix = path + "." if path != "" else path
                output = find_nulls(
                    field.dataType, prefix + field.name, output, null_strings, null_ints, dyf
                )
        elif isinstance(schema, ArrayType):
            pass
        elif isinstance(schema, NullType):
            output.append(path)
        else:
            values = {
                row[path.split(".")[-1]] for row in dyf.toDF().select(path).distinct().collect()
            }
            values = {v.strip() if isinstance(v, str) else v for v in values}
            if (isinstance(schema, StringType) and values <= null_strings) or (
                isinstance(schema, IntegerType) and values <= null_ints
            ):
                output.append(path)
        return output

    dyf = frame(
        glue, [("a", "", -1, None), ("b", "null", -1, None)], "k string, s string, i int, z string"
    )
    nulls = find_nulls(dyf.schema(), "", [], {"", "null"}, {-1}, dyf)
    assert nulls == ["s", "i", "z"]
    assert DropFields.apply(frame=dyf, paths=nulls).toDF().columns == ["k"]


def test_join_is_an_equality_join_keeping_both_frames_fields(glue):
    persons = frame(
        glue, [("p1", "Ann"), ("p2", "Bob"), ("p3", None)], "id string, name string", "persons"
    )
    memberships = frame(
        glue,
        [("p1", "o1"), ("p1", "o2"), ("p2", "o1"), (None, "o3")],
        "person_id string, organization_id string",
        "memberships",
    )
    joined = Join.apply(persons, memberships, "id", "person_id")
    assert joined.name == "personsmemberships"
    assert joined.toDF().columns == ["id", "name", "person_id", "organization_id"]
    assert sorted((r.id, r.organization_id) for r in joined.toDF().collect()) == [
        ("p1", "o1"),
        ("p1", "o2"),
        ("p2", "o1"),
    ]
    same = persons.join(["id"], ["id"], frame(glue, [("p1", 3)], "id string, n int"))
    assert same.toDF().columns == ["id", "name", "n"] and same.count() == 1


def test_split_fields_and_split_rows_give_two_named_frames(glue):
    dyf = frame(
        glue,
        [(5, "a", 1.0), (15, "b", 2.0), (25, "c", None), (None, "d", 4.0)],
        "age int, n string, x double",
        "people",
    )
    split = SplitFields.apply(dyf, ["age", "x"])
    assert sorted(split.keys()) == ["people1", "people2"]
    assert split["people1"].toDF().columns == ["age", "x"]
    assert split["people2"].toDF().columns == ["n"]
    rows = SplitRows.apply(dyf, {"age": {">": 10, "<": 20}}, "teens", "others")
    assert [r.n for r in rows.select("teens").toDF().collect()] == ["b"]
    assert sorted(r.n for r in rows.select("others").toDF().collect()) == ["a", "c", "d"]
    with pytest.raises(GlueError, match="'~' is not a comparison"):
        SplitRows.apply(dyf, {"age": {"~": 1}})


def test_resolve_choice_casts_and_projects_at_nested_paths_and_counts_failures(glue, caplog):
    caplog.set_level(logging.WARNING, "kinesis_dstream.glue")
    dyf = frame(
        glue,
        [("1", ("2.5", [("3",)])), ("x", ("4", [("y",)]))],
        "`provider id` string, s struct<rate:string, items:array<struct<price:string>>>",
    )
    out = ResolveChoice.apply(
        dyf,
        specs=[
            ("provider id", "cast:long"),
            ("s.rate", "project:double"),
            ("s.items[].price", "cast:int"),
        ],
    ).toDF()
    assert out.schema["provider id"].dataType == LongType()
    assert out.schema["s"].dataType["rate"].dataType == DoubleType()
    assert (
        out.schema["s"].dataType["items"].dataType.elementType["price"].dataType.simpleString()
        == "int"
    )
    got = sorted(
        ((r["provider id"], r.s.rate, [i.price for i in r.s["items"]]) for r in out.collect()),
        key=str,
    )
    assert got == [(1, 2.5, [3]), (None, 4.0, [None])]
    assert "could not be cast" in caplog.text
    same = dyf.resolveChoice(choice="make_cols")
    assert same.toDF().schema == dyf.toDF().schema
    with pytest.raises(GlueError, match="both specified"):
        dyf.resolveChoice(specs=[("a", "cast:int")], choice="make_struct")


def test_resolve_choice_match_catalog_casts_to_the_table_s_types(glue, local_aws, unique_name):
    client = local_aws.client("glue")
    client.create_database(DatabaseInput={"Name": unique_name})
    columns = [{"Name": "n", "Type": "bigint"}, {"Name": "when", "Type": "date"}]
    client.create_table(
        DatabaseName=unique_name,
        TableInput={"Name": "t", "StorageDescriptor": {"Columns": columns}},
    )
    dyf = frame(glue, [("7", "2024-01-02", "k")], "n string, `when` string, other string")
    out = dyf.resolveChoice(choice="match_catalog", database=unique_name, table_name="t").toDF()
    assert [(f.name, f.dataType.simpleString()) for f in out.schema.fields] == [
        ("n", "bigint"),
        ("when", "date"),
        ("other", "string"),
    ]
    assert out.first().n == 7


def test_to_df_resolve_options_cast_the_field(glue):
    dyf = frame(glue, [("3",)], "a string")
    df = dyf.toDF([ResolveOption("a", "Cast", LongType())])
    assert df.schema["a"].dataType == LongType() and df.first().a == 3


def test_unnest_and_relationalize_flatten_and_pivot_arrays_as_the_legislators_example(glue):
    schema = StructType(
        [
            StructField("id", StringType()),
            StructField(
                "name",
                StructType([StructField("first", StringType()), StructField("last", StringType())]),
            ),
            StructField(
                "contact_details",
                ArrayType(
                    StructType(
                        [StructField("type", StringType()), StructField("value", StringType())]
                    )
                ),
            ),
            StructField("links", ArrayType(StringType())),
        ]
    )
    rows = [
        ("p1", ("Ann", "Lee"), [("fax", "1"), ("phone", "2")], ["a.org"]),
        ("p2", ("Bob", "Ray"), None, ["b.org", "c.org"]),
    ]
    dyf = frame(glue, rows, schema, "l_history")
    assert UnnestFrame.apply(dyf).toDF().columns == [
        "id",
        "name.first",
        "name.last",
        "contact_details",
        "links",
    ]
    dfc = Relationalize.apply(frame=dyf, staging_path="s3://unused/", name="hist_root")
    assert list(dfc.keys()) == ["hist_root", "hist_root_contact_details", "hist_root_links"]
    root = dfc.select("hist_root").toDF()
    assert root.columns == ["id", "name.first", "name.last", "contact_details", "links"]
    contacts = dfc.select("hist_root_contact_details").toDF()
    assert contacts.columns == [
        "id",
        "index",
        "contact_details.val.type",
        "contact_details.val.value",
    ]
    links = dfc["hist_root_links"].toDF()
    assert links.columns == ["id", "index", "links.val"]
    by_person = {r.id: r for r in root.collect()}
    assert by_person["p2"].contact_details is None
    ann = sorted(
        (r["index"], r["contact_details.val.type"])
        for r in contacts.collect()
        if r.id == by_person["p1"].contact_details
    )
    assert ann == [(0, "fax"), (1, "phone")]
    bob = sorted(r["links.val"] for r in links.collect() if r.id == by_person["p2"].links)
    assert bob == ["b.org", "c.org"]


def test_unbox_parses_a_json_string_field_into_a_struct(glue, caplog):
    caplog.set_level(logging.WARNING, "kinesis_dstream.glue")
    address = json.dumps({"Street": "1108 ROSS", "City": "DOTHAN", "Zip": 36301})
    dyf = frame(glue, [(1, address), (2, None), (3, "{not json")], "id long, AddressString string")
    out = Unbox.apply(frame=dyf, path="AddressString", format="json").toDF()
    assert [f.name for f in out.schema["AddressString"].dataType.fields] == [
        "City",
        "Street",
        "Zip",
    ]
    got = {r.id: r.AddressString for r in out.collect()}
    assert got[1].City == "DOTHAN" and got[1].Zip == 36301
    assert got[2] is None and got[3] is None
    assert "Unbox: 1 values of 'AddressString' are not json" in caplog.text


def test_union_repartition_coalesce_keep_every_record(glue):
    a = frame(glue, [(1, "x")], "n int, s string", "a")
    b = frame(glue, [(2, 2.5)], "n int, d double", "b")
    united = Union.apply(frame1=a, frame2=b)
    assert united.toDF().columns == ["n", "s", "d"]
    assert sorted(r.n for r in united.toDF().collect()) == [1, 2]
    assert Repartition.apply(united, 3).getNumPartitions() == 3
    assert Coalesce.apply(Repartition.apply(united, 3), 1).getNumPartitions() == 1
    assert united.repartition(2).coalesce(1).count() == 2


def test_collections_select_map_flatmap_as_glue_studio_s_custom_transform(glue):
    def custom(glueContext, dfc) -> DynamicFrameCollection:
        df = dfc.select(list(dfc.keys())[0]).toDF().withColumn("twice", F.col("n") * 2)  # noqa: RUF015 (Glue Studio's shape)
        return DynamicFrameCollection(
            {"CustomTransform0": DynamicFrame.fromDF(df, glueContext, "x")}, glueContext
        )

    source = frame(glue, [(1,), (2,)], "n int", "src")
    dfc = custom(glue, DynamicFrameCollection({"src": source}, glue))
    picked = SelectFromCollection.apply(dfc=dfc, key=list(dfc.keys())[0], transformation_ctx="pick")  # noqa: RUF015
    assert sorted(r.twice for r in picked.toDF().collect()) == [2, 4]
    assert len(dfc) == 1 and next(iter(dfc.values())) is picked
    mapped = MapToCollection.apply(dfc, lambda f, ctx: f.select_fields(["n"]))
    assert mapped["CustomTransform0"].toDF().columns == ["n"]
    flat = FlatMap.apply(
        dfc=mapped, BaseTransform=SplitFields, frame_name="frame", paths=["n"], name1="a", name2="b"
    )
    assert sorted(flat.keys()) == ["a", "b"]
    assert SelectFromCollection.apply(dfc, "missing").count() == 0


def test_spigot_writes_a_sample_to_s3_and_returns_the_frame(glue, local_aws, bucket):
    dyf = frame(glue, [(i,) for i in range(5)], "n int")
    same = Spigot.apply(dyf, f"s3://{bucket}/spigot/", {"topk": 2})
    assert same is dyf
    rows = json_rows(s3_objects(local_aws.client("s3"), bucket, "spigot/"))
    assert len(rows) == 2 and {row["n"] for _, row in rows} <= set(range(5))


def test_select_fields_and_rename_on_nested_paths(glue):
    dyf = frame(glue, [Row(a=Row(b=1, c=2), d=3)])
    assert (
        SelectFields.apply(dyf, ["a.c"]).toDF().schema.simpleString()
        == "struct<a:struct<c:bigint>>"
    )
    assert dyf.rename_field("a.b", "a.bee").toDF().schema["a"].dataType.names == ["bee", "c"]


def test_a_record_transform_on_the_stream_itself_is_one_line_naming_where_it_runs(glue):
    stream = DynamicFrame(glue.spark_session.readStream.format("rate").load(), glue, "s")
    for apply in (
        lambda: Filter.apply(frame=stream, f=lambda row: True),
        lambda: Map.apply(frame=stream, f=lambda rec: rec),
        lambda: Relationalize.apply(frame=stream, name="root"),
    ):
        with pytest.raises(GlueError, match="runs on a batch: apply it to the frame forEachBatch"):
            apply()
