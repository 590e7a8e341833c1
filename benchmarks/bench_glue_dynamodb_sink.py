"""The Glue DynamoDB sink's write rate into moto's DynamoDB, against boto3's own
batch writer, in one run on one embedded local AWS.

    python -m benchmarks.bench_glue_dynamodb_sink [--rows N] [--no-spark]

(a) baseline: boto3's ``Table.batch_writer()`` putting N items (its TypeSerializer,
    Decimal numbers), one thread;
(b) the sink's task writer alone: the rows as one Arrow batch, converted with Glue's type
    mapping and written by ``TableWriter`` (BatchWriteItem of 25, paced, retried), one
    thread: what one Spark task does;
(c) the whole Glue call, ``glueContext.write_dynamic_frame.from_options(connection_type=
    "dynamodb")`` on local[2] (two tasks), run twice: cold Python workers, then warm.
Each writes its own on-demand table; each table is counted after its write (all N items).
Prints items/s and each one's ratio to (a).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from decimal import Decimal

from benchmarks import results
from kinesis_dstream.local import LocalAWS


def rows(n: int) -> list:
    return [
        {
            "id": i,
            "user": f"u{i % 97}",
            "amount": i * 0.5,
            "tags": ["a", str(i)],
            "ship": {"city": f"city {i % 13}", "zip": f"{10000 + i}"},
        }
        for i in range(n)
    ]


def create_table(client, name: str) -> str:
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "N"}],
        BillingMode="PAY_PER_REQUEST",
    )
    return name


def count(client, table: str) -> int:
    total, start = 0, {}
    while True:
        page = client.scan(TableName=table, Select="COUNT", **start)
        total += page["Count"]
        if "LastEvaluatedKey" not in page:
            return total
        start = {"ExclusiveStartKey": page["LastEvaluatedKey"]}


def bench_boto3(aws: LocalAWS, table: str, data: list) -> float:
    import boto3

    resource = boto3.resource(
        "dynamodb",
        endpoint_url=aws.endpoint_url,
        region_name=aws.region_name,
        aws_access_key_id=aws.access_key_id,
        aws_secret_access_key=aws.secret_access_key,
    )
    start = time.perf_counter()
    with resource.Table(table).batch_writer() as writer:
        for row in data:
            writer.put_item(Item={**row, "amount": Decimal(str(row["amount"]))})
    return time.perf_counter() - start


def bench_task_writer(aws: LocalAWS, table: str, data: list) -> float:
    import pyarrow as pa

    from kinesis_dstream.glue.sinks.dynamodb_types import batch_items, converter
    from kinesis_dstream.glue.sinks.dynamodb_writes import TableWriter

    batch = pa.RecordBatch.from_pylist(data)
    client = aws.client("dynamodb")
    start = time.perf_counter()
    writer = TableWriter(client, table, {"id": "N"}, units_per_s=20_000.0)
    writer.put_all(batch_items(batch, [converter(f.type, f.name) for f in batch.schema]))
    writer.flush()
    return time.perf_counter() - start


def bench_glue(aws: LocalAWS, tables: list, data: list) -> list:
    os.environ.update(aws.env())
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark import SparkConf, SparkContext

    from kinesis_dstream.glue.context import GlueContext
    from kinesis_dstream.glue.frames.dynamicframe import DynamicFrame

    conf = SparkConf().setMaster("local[2]").set("spark.ui.enabled", "false")
    sc = SparkContext(conf=conf)
    sc.setLogLevel("ERROR")
    try:
        glue = GlueContext(sc)
        df = glue.spark_session.createDataFrame(data).repartition(2).cache()
        df.count()
        frame = DynamicFrame.fromDF(df, glue, "rows")
        timings = []
        for table in tables:
            start = time.perf_counter()
            glue.write_dynamic_frame.from_options(
                frame=frame,
                connection_type="dynamodb",
                connection_options={"dynamodb.output.tableName": table},
            )
            timings.append(time.perf_counter() - start)
        return timings
    finally:
        sc.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--no-spark", action="store_true")
    args = parser.parse_args()
    data = rows(args.rows)
    print(f"Load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"on {os.cpu_count()} cores")
    with LocalAWS() as aws:
        client = aws.client("dynamodb")
        names = ["boto3", "task", "glue-cold", "glue-warm"]
        tables = {n: create_table(client, f"bench-{n}") for n in names}
        timings = {
            "boto3 Table.batch_writer() (a)": bench_boto3(aws, tables["boto3"], data),
            "the sink's task writer, one thread (b)": bench_task_writer(
                aws, tables["task"], data
            ),
        }
        if not args.no_spark:
            cold, warm = bench_glue(aws, [tables["glue-cold"], tables["glue-warm"]], data)
            timings["write_dynamic_frame.from_options, local[2], cold workers (c)"] = cold
            timings["write_dynamic_frame.from_options, local[2], warm workers (c)"] = warm
        counts = {n: count(client, t) for n, t in tables.items()}
    print(f"Load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"\n{args.rows:,} rows into moto's DynamoDB (on-demand tables); items counted "
          f"after: {counts}")
    base = timings["boto3 Table.batch_writer() (a)"]
    print("| writer | seconds | items/s | of boto3's rate |")
    print("| --- | ---: | ---: | ---: |")
    for name, seconds in timings.items():
        print(f"| {name} | {seconds:.2f} | {args.rows / seconds:,.0f} | {base / seconds:.2f} |")
    expected = {n: args.rows for n in tables if not (args.no_spark and n.startswith("glue"))}
    missing = {n: c for n, c in counts.items() if n in expected and c != args.rows}
    if missing:
        print(f"NOT every item written: {missing}")
        sys.exit(1)


if __name__ == "__main__":
    results.run(main, "glue-dynamodb-sink", "the Glue DynamoDB sink against boto3's batch writer")
