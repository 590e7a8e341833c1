"""The Glue layer's sinks in-process on the session's SparkContext: CSV as Glue writes
it (RFC 4180, checked byte for byte, from both writers), a streaming job in the shape of
the issue's (KPL aggregates over several shards, Relationalize, CSV out), and a Kinesis
stream joined with a lookup written to DynamoDB, every record checked in the table."""

# ruff: noqa: F811 (the fixtures imported from test_glue are test arguments here)

import csv
import io
import json

import pytest

from kinesis_dstream.glue.frames.dynamicframe import DynamicFrame
from kinesis_dstream.glue.streaming.foreach_batch import BatchLoop
from kinesis_dstream.glue.transforms import Join, Relationalize
from kinesis_dstream.retrieval.streams import ensure_stream

from ..support.glue import running_loop, s3_objects
from ..support.records import put_records
from ..support.waiting import wait_until
from .test_glue import bucket, glue, glue_env, json_stream, loop_options  # noqa: F401

#: Values a CSV writer must keep whole: a quote, the separator, a newline, a carriage
#: return, the escaper Glue's readers use (backslash), leading and trailing spaces, an
#: empty string and a null.
HARD_TEXTS = [
    'say "hi"',
    "a,b",
    "line1\nline2",
    "cr\rhere",
    "back\\slash",
    " pad ",
    "",
    None,
    'both "x", and \\ y',
    "plain",
]
#: What Glue writes for them (RFC 4180: quoted where needed, a quote doubled; a null is
#: an empty field, an empty string a quoted empty one, as Spark writes them).
HARD_LINES = [
    '0,"say ""hi"""',
    '1,"a,b"',
    '2,"line1\nline2"',
    '3,"cr\rhere"',
    "4,back\\slash",
    "5, pad ",
    '6,""',
    "7,",
    '8,"both ""x"", and \\ y"',
    "9,plain",
]


@pytest.fixture(scope="module")
def hard_texts(glue):
    rows = [(i, text) for i, text in enumerate(HARD_TEXTS)]
    return glue.spark_session.createDataFrame(rows, "id long, text string").coalesce(1)


def _csv_bodies(files):
    return [body.decode("utf-8") for body in files]


@pytest.mark.parametrize("escaper", [None, "\\"])
def test_csv_doubles_quotes_and_keeps_every_value_whole_from_both_writers(
    glue, local_aws, bucket, hard_texts, tmp_path, caplog, escaper
):
    """Quotes inside values were written \\" (Spark's default escape) where Glue writes
    "" (RFC 4180), and leading and trailing spaces were trimmed (Spark's CSV default);
    escaper is a read option on Glue: set on a write it changes nothing but a warning."""
    frame = DynamicFrame.fromDF(hard_texts, glue, "hard")
    options = {} if escaper is None else {"escaper": escaper}
    frame.write("s3", {"path": f"s3://{bucket}/csv{len(options)}/"}, "csv", options)  # executors
    local = tmp_path / "csv"
    frame.write("s3", {"path": str(local)}, "csv", options)  # Spark's own writer
    s3 = local_aws.client("s3")
    executors = _csv_bodies(s3_objects(s3, bucket, f"csv{len(options)}/").values())
    spark_files = _csv_bodies(p.read_bytes() for p in local.rglob("*.csv"))
    expected = "id,text\n" + "\n".join(HARD_LINES) + "\n"
    assert executors == [expected]
    assert spark_files == [expected]
    back = list(csv.reader(io.StringIO(expected, newline="")))
    assert back[1:] == [[str(i), "" if t is None else t] for i, t in enumerate(HARD_TEXTS)]
    warned = [m for m in caplog.messages if "escaper=" in m]
    assert bool(warned) == (escaper is not None)


def test_csv_with_another_quote_character_or_none_as_glue_documents_it(glue, hard_texts, tmp_path):
    frame = DynamicFrame.fromDF(hard_texts.where("id in (0, 1, 4, 8)"), glue, "hard")
    frame.write("s3", {"path": str(tmp_path / "single")}, "csv", {"quoteChar": "'"})
    frame.write("s3", {"path": str(tmp_path / "none")}, "csv", {"quoteChar": "-1"})
    frame.write(
        "s3", {"path": str(tmp_path / "pipe")}, "csv", {"separator": "|", "writeHeader": False}
    )

    def lines(name):
        return sorted(
            line for f in (tmp_path / name).rglob("*.csv") for line in f.read_text().splitlines()
        )

    assert lines("single") == sorted(
        ["id,text", '0,say "hi"', "1,'a,b'", "4,back\\slash", "8,'both \"x\", and \\ y'"]
    )
    assert lines("none") == sorted(
        ["id,text", '0,say "hi"', "1,a,b", "4,back\\slash", '8,both "x", and \\ y']
    )
    assert lines("pipe") == sorted(
        [
            '0,"say ""hi"""'.replace(",", "|", 1),
            "1|a,b",
            "4|back\\slash",
            '8|"both ""x"", and \\ y"',
        ]
    )


pytestmark = [pytest.mark.spark]


# --- a streaming job joined with a lookup, written to DynamoDB --------------------------

CUSTOMERS = [("c0", "Ann", "gold"), ("c1", "Bo", "silver"), ("c2", 'Cy "the" 3rd', "gold")]


def order(i):
    """An order as a producer sends it; customer c3 is not in the lookup (inner join)."""
    return {
        "order_id": i,
        "customer_id": f"c{i % 4}",
        "amount": round(i * 1.25, 2),
        "ship_to": {"city": f"city {i % 3}", "zip": f"{10000 + i}"},
        "tags": ["new", f"t{i}"] if i % 2 else [],
        "coupon": f"SAVE{i}" if i % 5 == 0 else None,
    }


def test_a_stream_joined_with_a_lookup_is_written_to_dynamodb_every_record_checked(
    glue, local_aws, kinesis, unique_name, tmp_path
):
    """The shape of AWS's examples and Glue's streaming labs: each window of a Kinesis
    stream is enriched from a reference table (built in the script) with Join and
    written with write_dynamic_frame_from_options(connection_type="dynamodb"); it
    stopped at the first batch with rows ("connection_type 'dynamodb' is not provided")."""
    dynamodb = local_aws.client("dynamodb")
    table = unique_name
    dynamodb.create_table(
        TableName=table,
        KeySchema=[{"AttributeName": "order_id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "order_id", "AttributeType": "N"}],
        BillingMode="PAY_PER_REQUEST",
    )
    stream = unique_name
    ensure_stream(kinesis, stream, 2)
    sent = [order(i) for i in range(160)]
    put_records(kinesis, stream, len(sent), data=lambda i: json.dumps(sent[i]))
    frame = json_stream(glue, kinesis, stream, inferSchema="true")
    customers = DynamicFrame.fromDF(
        glue.spark_session.createDataFrame(CUSTOMERS, "cust_id string, name string, tier string"),
        glue,
        "customers",
    )

    def processBatch(data_frame, batchId):
        if data_frame.count() > 0:
            orders = DynamicFrame.fromDF(data_frame, glue, "from_data_frame")
            joined = Join.apply(orders, customers, "customer_id", "cust_id").drop_fields(
                ["cust_id"]
            )
            glue.write_dynamic_frame_from_options(
                frame=joined,
                connection_type="dynamodb",
                connection_options={
                    "dynamodb.output.tableName": table,
                    "dynamodb.throughput.write.percent": "1.0",
                },
            )

    expected = {o["order_id"]: o for o in sent if o["customer_id"] != "c3"}
    items: list = []

    def all_written():
        items[:] = dynamodb.scan(TableName=table)["Items"]
        return len(items) >= len(expected)

    with running_loop(BatchLoop, frame, processBatch, loop_options(tmp_path)) as loop:
        wait_until(all_written, 180, f"{len(expected)} items in {table}", failed=loop.failed)
    names = {c: (n, t) for c, n, t in CUSTOMERS}
    got = {int(i["order_id"]["N"]): i for i in items}
    assert sorted(got) == sorted(expected)
    for order_id, item in got.items():
        o = expected[order_id]
        name, tier = names[o["customer_id"]]
        want = {
            "order_id": {"N": str(order_id)},
            "customer_id": {"S": o["customer_id"]},
            "amount": {"N": repr(float(o["amount"]))},
            "ship_to": {
                "M": {"city": {"S": o["ship_to"]["city"]}, "zip": {"S": o["ship_to"]["zip"]}}
            },
            "tags": {"L": [{"S": t} for t in o["tags"]]},
            "name": {"S": name},
            "tier": {"S": tier},
        }
        if o["coupon"] is not None:
            want["coupon"] = {"S": o["coupon"]}  # a field with no value is left out
        assert item == want, order_id


# --- the CSV job: KPL aggregates over several shards, Relationalize, CSV out -----


def csv_field(value):
    """RFC 4180, as Glue's writer is documented to write: quoted when it holds the
    separator, a quote, a newline or a carriage return (a quote doubled); an empty text
    quoted, a null empty."""
    if value is None:
        return ""
    text = str(value)
    if text == "" or any(c in text for c in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def event(i):
    texts = [t for t in HARD_TEXTS if t]
    return {
        "id": i,
        "text": texts[i % len(texts)],
        "user": {"name": f'user "{i}"', "city": "a,b" if i % 2 else "plain"},
        "items": [{"sku": f"s{i}-{j}", "qty": j} for j in range(i % 3)],
    }


def test_a_relationalized_stream_written_as_csv_reads_byte_for_byte_as_rfc_4180(
    glue, local_aws, kinesis, bucket, unique_name, tmp_path
):
    """The issue's job: the 35 rows whose text held a double quote were written with \\"."""
    stream = unique_name
    ensure_stream(kinesis, stream, 4)
    sent = [event(i) for i in range(120)]
    put_records(kinesis, stream, len(sent), data=lambda i: json.dumps(sent[i]), aggregate=True)
    frame = json_stream(glue, kinesis, stream, inferSchema="true")
    path = f"s3://{bucket}/relational/"

    def processBatch(data_frame, batchId):
        if data_frame.count() > 0:
            events = DynamicFrame.fromDF(data_frame, glue, "from_data_frame")
            tables = Relationalize.apply(frame=events, staging_path=str(tmp_path), name="root")
            for name in tables.keys():  # noqa: SIM118 (Glue's collection has no __iter__)
                glue.write_dynamic_frame.from_options(
                    frame=tables.select(name),
                    connection_type="s3",
                    connection_options={"path": f"{path}{name}/"},
                    format="csv",
                )

    s3 = local_aws.client("s3")
    rows: list = []

    def root_rows():
        rows[:] = _csv_rows(s3_objects(s3, bucket, "relational/root/"))
        return len(rows) >= len(sent)

    with running_loop(BatchLoop, frame, processBatch, loop_options(tmp_path)) as loop:
        wait_until(root_rows, 180, f"{len(sent)} root rows", failed=loop.failed)
    by_id = {int(row["id"]): row for row in rows}
    assert sorted(by_id) == [e["id"] for e in sent] and len(rows) == len(sent)
    for e in sent:
        row = by_id[e["id"]]
        assert (row["text"], row["user.name"], row["user.city"]) == (
            e["text"],
            e["user"]["name"],
            e["user"]["city"],
        )
    items = _csv_rows(s3_objects(s3, bucket, "relational/root_items/"))
    assert len(items) == sum(len(e["items"]) for e in sent)


def _csv_rows(objects):
    """Each file's rows as dicts of its header, after checking the file's bytes are the
    RFC 4180 rendering of what it holds (header line, then each row and a newline)."""
    rows = []
    for body in objects.values():
        text = body.decode("utf-8")
        records = list(csv.reader(io.StringIO(text, newline="")))
        header, data = records[0], records[1:]
        rendered = "".join(",".join(csv_field(v) for v in r) + "\n" for r in records)
        assert text == rendered  # byte for byte
        rows.extend(dict(zip(header, r)) for r in data)
    return rows


def test_get_sink_and_dynamic_frame_write_reach_dynamodb_with_glue_s_type_mapping(
    glue, local_aws, unique_name, caplog
):
    """Every Spark type a frame carries, through getSink(...).writeFrame and
    DynamicFrame.write: dates and timestamps as Spark's text, decimals' digits, binary,
    structs and maps as M, arrays as L, a field with no value left out; a row with no
    key is not written, and the driver's log says so."""
    dynamodb = local_aws.client("dynamodb")
    dynamodb.create_table(
        TableName=unique_name,
        KeySchema=[
            {"AttributeName": "k", "KeyType": "HASH"},
            {"AttributeName": "n", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[
            {"AttributeName": "k", "AttributeType": "S"},
            {"AttributeName": "n", "AttributeType": "N"},
        ],
        ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 50},
    )
    df = glue.spark_session.sql(
        """select * from values
           ('a', 1, cast('12.30' as decimal(10,2)), date'2026-04-09',
            timestamp'2026-04-09 07:05:00', x'00ff', true, named_struct('p', 1, 'q', null),
            map('x', 1.5D), array(1, null, 3), cast(null as string)),
           ('b', 2, cast('-0.05' as decimal(10,2)), null, null, null, false, null,
            null, array(), 'set'),
           (null, 3, null, null, null, null, null, null, null, null, 'no key')
           as t(k, n, price, day, at, blob, flag, inner, attrs, nums, note)"""
    )
    frame = DynamicFrame.fromDF(df.where("k = 'a'"), glue, "a")
    options = {"dynamodb.output.tableName": unique_name, "dynamodb.throughput.write.percent": 1.5}
    glue.getSink(connection_type="dynamodb", **options).writeFrame(frame)
    DynamicFrame.fromDF(df.where("k = 'b' or k is null"), glue, "b").write("dynamodb", options)
    items = {i["k"]["S"]: i for i in dynamodb.scan(TableName=unique_name)["Items"]}
    assert items["a"] == {
        "k": {"S": "a"},
        "n": {"N": "1"},
        "price": {"N": "12.30"},  # the decimal's digits (DynamoDB itself keeps 12.3)
        "day": {"S": "2026-04-09"},
        "at": {"S": "2026-04-09 07:05:00"},
        "blob": {"B": b"\x00\xff"},
        "flag": {"BOOL": True},
        "inner": {"M": {"p": {"N": "1"}}},
        "attrs": {"M": {"x": {"N": "1.5"}}},
        "nums": {"L": [{"N": "1"}, {"NULL": True}, {"N": "3"}]},
    }
    assert items["b"] == {
        "k": {"S": "b"},
        "n": {"N": "2"},
        "price": {"N": "-0.05"},
        "flag": {"BOOL": False},
        "nums": {"L": []},
        "note": {"S": "set"},
    }
    assert len(items) == 2
    assert (
        f"DynamoDB table {unique_name}: 1 rows not written (no value for key attribute 'k': 1); "
        "first: no value for key attribute 'k': n='3', note='no key'"
    ) in caplog.messages
