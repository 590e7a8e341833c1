"""Glue Studio's visual transforms (``gs_*``) and Evaluate Data Quality node on a batch's
frame, called as Glue Studio's generated code calls them, checked against AWS's
documented examples where the docs give input and output."""

import datetime
import logging
import sys

import pytest
from pyspark.sql import functions as F

from kinesis_dstream.glue import install
from kinesis_dstream.glue.context import GlueContext
from kinesis_dstream.glue.frames.dynamicframe import DynamicFrame

pytestmark = pytest.mark.spark

MODULES = [
    "gs_now",
    "gs_derived",
    "gs_concat",
    "gs_split",
    "gs_array_to_cols",
    "gs_explode",
    "gs_flatten",
    "gs_format_timestamp",
    "gs_to_timestamp",
    "gs_uuid",
    "gs_sequence_id",
    "gs_null_rows",
    "gs_pivot",
    "gs_unpivot",
    "gs_regex_extract",
]


@pytest.fixture(scope="module")
def glue(session):
    """The shim installed as `kinesis-dstream glue run` installs it; afterwards the
    modules, the path and the methods added to Spark's DataFrame are taken back."""
    from pyspark.sql import DataFrame

    from kinesis_dstream.glue.studio.registry import REGISTERED

    saved_path, saved_env = list(sys.path), dict(session.sparkContext.environment)
    install(session.sparkContext)
    yield GlueContext(session)
    sys.path[:] = saved_path
    session.sparkContext.environment.clear()
    session.sparkContext.environment.update(saved_env)
    shim = ("awsglue", "awsgluedq", "gs_")
    for name in [m for m in sys.modules if m.startswith(shim)]:
        del sys.modules[name]
    for name in list(REGISTERED):
        for cls in (DataFrame, DynamicFrame):
            if name in vars(cls):
                delattr(cls, name)
        del REGISTERED[name]


def frame(glue, rows, schema):
    return DynamicFrame.fromDF(glue.spark_session.createDataFrame(rows, schema), glue, "source")


def rows_of(dyf, *columns):
    df = dyf.toDF() if isinstance(dyf, DynamicFrame) else dyf
    return sorted((tuple(r[c] for c in columns) for r in df.collect()), key=repr)


def test_each_visual_transform_module_registers_a_frame_method_on_import(glue):
    import importlib

    for module in MODULES:
        importlib.import_module(module)
    source = frame(glue, [(1,)], "a int")
    assert [m for m in MODULES if not callable(getattr(source, m, None))] == []
    assert [m for m in MODULES if not callable(getattr(source.toDF(), m, None))] == []


def test_concatenate_columns_as_documented_with_a_spacer_and_a_null_value(glue):
    import gs_concat  # noqa: F401

    days = frame(
        glue, [("01", "01", "2020"), ("02", "01", None)], "day string, month string, year string"
    )
    out = days.gs_concat(colName="date", colList=["year", "month", "day"], spacer="-")
    assert rows_of(out, "date") == [("-01-02",), ("2020-01-01",)]
    marked = days.gs_concat(colName="date", colList=["year", "day"], spacer="/", nullString="NA")
    assert rows_of(marked, "date") == [("2020/01",), ("NA/02",)]


def test_split_string_then_array_to_columns_as_documented(glue):
    import gs_array_to_cols  # noqa: F401
    import gs_split  # noqa: F401

    products = frame(
        glue, [(1, "sports,winter"), (3, "videogames")], "product_id int, categories string"
    )
    split = products.gs_split(colName="categories", pattern=",", newColName="categories_arr")
    assert rows_of(split, "product_id", "categories_arr") == [
        (1, ["sports", "winter"]),
        (3, ["videogames"]),
    ]
    subnets = frame(glue, [("54.240.197.238",), ("192.168.0.1",), ("192.168",)], "subnet string")
    arrays = subnets.gs_split(colName="subnet", pattern="\\.")
    octets = arrays.gs_array_to_cols(
        colName="subnet", colList="first_octect, fourth_octect", indexes="1,4"
    )
    assert rows_of(octets, "first_octect", "fourth_octect") == [
        ("192", "1"),
        ("192", None),
        ("54", "238"),
    ]
    in_order = arrays.gs_array_to_cols(colName="subnet", colList="a,b")
    assert rows_of(in_order, "a", "b") == [("192", "168"), ("192", "168"), ("54", "240")]


def test_explode_as_documented_with_and_without_nulls(glue):
    import gs_explode  # noqa: F401

    products = frame(
        glue,
        [(1, ["sports", "winter"]), (3, ["videogames"]), (5, [])],
        "product_id int, category array<string>",
    )
    outer = products.gs_explode(colName="category", newCol="category", outer=True)
    assert outer.toDF().columns == ["product_id", "category"]
    assert rows_of(outer, "product_id", "category") == [
        (1, "sports"),
        (1, "winter"),
        (3, "videogames"),
        (5, None),
    ]
    inner = products.gs_explode(colName="category", newCol="item")
    assert inner.toDF().columns == ["product_id", "category", "item"]
    assert [r[0] for r in rows_of(inner, "product_id")] == [1, 1, 3]


def test_flatten_as_documented_and_to_the_levels_asked(glue):
    import gs_flatten  # noqa: F401

    people = frame(
        glue,
        [(1, (("+1", "555"), "x"))],
        "id int, phone_numbers struct<home_phone:struct<country_code:string,number:string>,"
        "kind:string>",
    )
    assert people.gs_flatten().toDF().columns == [  # AWS's example
        "id",
        "phone_numbers.home_phone.country_code",
        "phone_numbers.home_phone.number",
        "phone_numbers.kind",
    ]
    one = people.gs_flatten(maxLevels=1, separator="_").toDF()
    assert one.columns == ["id", "phone_numbers_home_phone", "phone_numbers_kind"]
    assert one.first()["phone_numbers_home_phone"]["number"] == "555"


def test_remove_null_rows_and_its_extended_option(glue):
    import gs_null_rows  # noqa: F401

    rows = frame(
        glue, [(1, "x", [1]), (None, None, None), (None, "", [])], "n int, s string, a array<int>"
    )
    assert rows_of(rows.gs_null_rows(), "s") == [("",), ("x",)]
    assert rows_of(rows.gs_null_rows(extended=True), "s") == [("x",)]


def test_pivot_and_unpivot_rows_checked_by_hand(glue):
    import gs_pivot  # noqa: F401
    import gs_unpivot  # noqa: F401

    sales = frame(
        glue,
        [("eu", "jan", 1.0), ("eu", "jan", 3.0), ("eu", "feb", 5.0), ("us", "jan", 7.0)],
        "region string, month string, amount double",
    )
    pivoted = sales.gs_pivot(aggCol="amount", aggFunction="mean", colList=["month"])
    assert rows_of(pivoted, "region", "jan", "feb") == [("eu", 2.0, 5.0), ("us", 7.0, None)]
    wide = frame(glue, [("eu", 1, 2)], "region string, jan int, feb int")
    long = wide.gs_unpivot(unpivotName="month", unpivotValue="amount", cols=["jan", "feb"])
    assert rows_of(long, "region", "month", "amount") == [("eu", "feb", 2), ("eu", "jan", 1)]


def test_timestamps_now_format_and_to_timestamp(glue):
    import gs_format_timestamp  # noqa: F401
    import gs_now  # noqa: F401
    import gs_to_timestamp  # noqa: F401

    events = frame(
        glue,
        [(1673964111000, "2022-11-02T14:40:59.915Z", "1673964111")],
        "ms long, iso string, mixed string",
    )
    stamped = events.gs_now(colName="loaded", dateFormat="%Y%m%d %Hh").gs_now(colName="at")
    row = stamped.toDF().first()
    today = datetime.datetime.now().strftime("%Y%m%d")
    assert row["loaded"].startswith(today) and row["loaded"].endswith("h")
    assert isinstance(row["at"], datetime.datetime)
    converted = (
        events.gs_to_timestamp(colName="ms", colType="milliseconds", newColName="from_ms")
        .gs_to_timestamp(colName="iso", colType="iso")
        .gs_to_timestamp(colName="mixed", colType="autodetect")
    )
    seconds = (
        converted.toDF()
        .select(F.unix_timestamp("from_ms"), F.unix_timestamp("iso"), F.unix_timestamp("mixed"))
        .first()
    )
    assert tuple(seconds) == (1673964111, 1667400059, 1673964111)
    formatted = converted.gs_format_timestamp(
        colName="from_ms", dateFormat="yyyy", newColName="year"
    )
    assert formatted.toDF().first()["year"] == "2023"
    with pytest.raises(ValueError, match="colType 'weeks'"):
        events.gs_to_timestamp(colName="ms", colType="weeks")


def test_derived_uuid_identifier_and_regex_extractor(glue):
    import gs_derived  # noqa: F401
    import gs_regex_extract  # noqa: F401
    import gs_sequence_id  # noqa: F401
    import gs_uuid  # noqa: F401

    source = frame(
        glue, [(2, 3, "ab-12"), (4, 5, "cd-34"), (6, 7, "zz")], "q int, p int, code string"
    )
    derived = source.gs_derived(colName="total", expr="q * p")
    assert sorted(r["total"] for r in derived.toDF().collect()) == [6, 20, 42]
    ids = source.gs_uuid().gs_sequence_id(colName="seq").toDF()
    assert sorted(r["seq"] for r in ids.collect()) == [0, 1, 2]
    assert {len(r["uuid"]) for r in ids.collect()} == {36} and ids.select(
        "uuid"
    ).distinct().count() == 3
    unique = source.gs_sequence_id(unique=True).toDF()
    assert unique.schema["id"].dataType.simpleString() == "decimal(38,0)"
    assert (
        unique.select("id").distinct().count() == 3 and unique.agg(F.min("id")).first()[0] > 10**24
    )
    letters = source.gs_regex_extract(
        colName="code", regex="([a-z]+)-(\\d+)", newCols="word,number"
    )
    assert rows_of(letters, "word", "number") == [("", ""), ("ab", "12"), ("cd", "34")]


def test_extract_json_path_and_autobalance_processing(glue):
    import gs_extract_json  # noqa: F401
    import gs_repartition  # noqa: F401

    logs = frame(
        glue,
        [('{"log": "started", "pod": {"app": "web"}}',), ('{"log": "x"}',)],
        "message string",
    )
    out = logs.gs_extract_json(
        colName="message", jsonPaths="log,pod.app", colList="log, pod_app", dropCol=True
    )
    assert out.toDF().columns == ["log", "pod_app"]
    assert rows_of(out, "log", "pod_app") == [("started", "web"), ("x", None)]
    assert logs.gs_repartition(numPartitionsStr="3").toDF().rdd.getNumPartitions() == 3


def test_the_nodes_glue_studio_writes_as_script_helpers_run_on_a_batch(glue):
    """SQL Query, Aggregate, Union, Drop Duplicates and Limit: Glue Studio defines a
    helper in the script for each (these in that shape) over toDF and fromDF."""
    from pyspark.sql import functions as SqlFuncs

    spark = glue.spark_session

    def sparkSqlQuery(glueContext, query, mapping, transformation_ctx):
        for alias, dyf in mapping.items():
            dyf.toDF().createOrReplaceTempView(alias)
        return DynamicFrame.fromDF(spark.sql(query), glueContext, transformation_ctx)

    def sparkAggregate(glueContext, parentFrame, groups, aggs, transformation_ctx):
        functions = [getattr(SqlFuncs, name)(column) for column, name in aggs]
        result = parentFrame.toDF().groupBy(*groups).agg(*functions)
        return DynamicFrame.fromDF(result, glueContext, transformation_ctx)

    source = frame(glue, [("a", 1), ("a", 2), ("b", 3), ("b", 3)], "k string, v int")
    query = sparkSqlQuery(glue, "select k, v * 10 as v from src", {"src": source}, "q")
    assert rows_of(query, "v") == [(10,), (20,), (30,), (30,)]
    totals = sparkAggregate(glue, source, ["k"], [["v", "sum"]], "agg")
    assert rows_of(totals, "k", "sum(v)") == [("a", 3), ("b", 6)]
    unique = DynamicFrame.fromDF(source.toDF().dropDuplicates(), glue, "dedup")
    assert unique.count() == 3
    assert DynamicFrame.fromDF(source.toDF().limit(2), glue, "limit").count() == 2


def test_a_blank_frame_is_returned_as_it_is(glue):
    import gs_now  # noqa: F401

    blank = DynamicFrame.fromDF(glue.spark_session.range(0).select(), glue, "blank")
    assert blank.gs_now() is blank


RULESET = """
    # Example rules: Completeness "colA" between 0.4 and 0.8, ColumnCount > 10
    Rules = [
        IsComplete "id",
        IsUnique "id",
        Completeness "name" >= 0.6,
        ColumnValues "amount" between 0 and 100,
        ColumnValues "kind" in ["a", "b"] with threshold > 0.5,
        RowCount = 4,
        ColumnExists "missing",
        ColumnLength "name" <= 3,
        Mean "amount" > 20,
        DetectAnomalies "RowCount"
    ]
"""


def test_evaluate_data_quality_as_glue_studio_generates_it(glue, caplog):
    """Four rows checked by hand: ids 1,2,3,3 (complete, not unique), names 3 of 4,
    amounts 10, 50, 120, 30 (one out of range; mean 52.5), kinds a, b, c, a."""
    from awsglue.transforms import SelectFromCollection
    from awsgluedq.transforms import EvaluateDataQuality

    source = frame(
        glue,
        [
            (1, "ann", 10.0, "a"),
            (2, "bob", 50.0, "b"),
            (3, None, 120.0, "c"),
            (3, "carla", 30.0, "a"),
        ],
        "id int, name string, amount double, kind string",
    )
    with caplog.at_level(logging.INFO):
        node = EvaluateDataQuality().process_rows(
            frame=source,
            ruleset=RULESET,
            publishing_options={
                "dataQualityEvaluationContext": "EvaluateDataQuality_node1",
                "enableDataQualityCloudWatchMetrics": True,
                "enableDataQualityResultsPublishing": True,
            },
            additional_options={"performanceTuning.caching": "CACHE_NOTHING"},
        )
    rule_outcomes = SelectFromCollection.apply(dfc=node, key="ruleOutcomes", transformation_ctx="r")
    outcomes = {
        r["Rule"]: (r["Outcome"], r["FailureReason"]) for r in rule_outcomes.toDF().collect()
    }
    assert {rule: outcome for rule, (outcome, _) in outcomes.items()} == {
        'IsComplete "id"': "Passed",
        'IsUnique "id"': "Failed",
        'Completeness "name" >= 0.6': "Passed",
        'ColumnValues "amount" between 0 and 100': "Failed",
        'ColumnValues "kind" in ["a", "b"] with threshold > 0.5': "Passed",
        "RowCount = 4": "Passed",
        'ColumnExists "missing"': "Failed",
        'ColumnLength "name" <= 3': "Failed",
        'Mean "amount" > 20': "Passed",
        'DetectAnomalies "RowCount"': "Failed",
    }
    assert "not evaluated" in outcomes['DetectAnomalies "RowCount"'][1]
    metrics = {r["Rule"]: r["EvaluatedMetrics"] for r in rule_outcomes.toDF().collect()}
    assert metrics['Mean "amount" > 20'] == {"Column.amount.Mean": 52.5}
    assert metrics['IsUnique "id"'] == {"Column.id.Uniqueness": 0.5}
    rows = SelectFromCollection.apply(dfc=node, key="rowLevelOutcomes").toDF()
    assert rows.columns[:4] == ["id", "name", "amount", "kind"]
    by_name = {r["name"]: r for r in rows.collect()}
    results = [r["DataQualityEvaluationResult"] for r in rows.orderBy("amount").collect()]
    assert results == ["Passed", "Failed", "Passed", "Failed"]  # amounts 10, 30, 50, 120
    assert 'ColumnValues "amount" between 0 and 100' in by_name[None]["DataQualityRulesFail"]
    assert 'ColumnLength "name" <= 3' in by_name["carla"]["DataQualityRulesFail"]
    assert 'IsUnique "id"' in by_name["ann"]["DataQualityRulesPass"]
    assert by_name["ann"]["DataQualityRulesFail"] == []
    assert by_name["ann"]["DataQualityRulesSkip"] == [  # dataset rules, as Glue's
        "RowCount = 4",
        'ColumnExists "missing"',
        'Mean "amount" > 20',
        'DetectAnomalies "RowCount"',
    ]
    log = caplog.text
    assert "DetectAnomalies are not evaluated" in log
    assert (
        "enableDataQualityResultsPublishing, enableDataQualityCloudWatchMetrics have no effect"
        in log
    )
    assert "EvaluateDataQuality_node1: 10 rules, 5 passed, 5 failed" in log


def test_evaluate_data_quality_apply_and_the_default_ruleset_of_a_target_node(glue):
    from awsgluedq.transforms import EvaluateDataQuality

    source = frame(glue, [(1,), (None,)], "id int")
    results = EvaluateDataQuality.apply(
        frame=source,
        ruleset='Rules = [ IsComplete "id", (RowCount > 1) and (ColumnCount > 0) ]',
        publishing_options={"dataQualityEvaluationContext": "ctx"},
    )
    assert results.toDF().columns == [
        "Rule",
        "Outcome",
        "FailureReason",
        "EvaluatedMetrics",
        "EvaluatedRule",
    ]
    assert rows_of(results.select_fields(["Rule", "Outcome"]), "Rule", "Outcome") == [
        ("(RowCount > 1) and (ColumnCount > 0)", "Passed"),
        ('IsComplete "id"', "Failed"),
    ]
    DEFAULT_DATA_QUALITY_RULESET = """
        Rules = [
            ColumnCount > 0
        ]
    """
    EvaluateDataQuality().process_rows(
        frame=source,
        ruleset=DEFAULT_DATA_QUALITY_RULESET,
        publishing_options={
            "dataQualityEvaluationContext": "EvaluateDataQuality_node2",
            "enableDataQualityResultsPublishing": True,
        },
        additional_options={
            "dataQualityResultsPublishing.strategy": "BEST_EFFORT",
            "observations.scope": "ALL",
        },
    )
