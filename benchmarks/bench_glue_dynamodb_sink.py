"""The Glue DynamoDB sink's write rate into moto's DynamoDB, against boto3's own
batch writer, in one run on one embedded local AWS.

    python -m benchmarks.bench_glue_dynamodb_sink [--rows N] [--rounds N] [--no-spark]

(a) baseline: boto3's ``Table.batch_writer()`` putting N items (its TypeSerializer,
    Decimal numbers), one thread;
(b) the sink's task writer alone: the rows as a partition holds them, converted with
    Glue's type mapping and written by ``TableWriter`` (BatchWriteItem of 25, paced,
    retried), one thread: what one Spark task does;
(c) the whole Glue call, ``glueContext.write_dynamic_frame.from_options(connection_type=
    "dynamodb")`` on local[2] (two tasks): once with cold Python workers, then warm.
(a), (b) and (c) run in turn, ``--rounds`` times (the machine's load by others moves
each figure; interleaved rounds expose it to all three alike). Each write has its own
on-demand table, counted after (all N items). Prints each round's seconds, the median
items/s and its ratio to (a)'s.
"""

from __future__ import annotations

import argparse
import os
import statistics
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
    from pyspark.sql import Row
    from pyspark.sql import types as T

    from kinesis_dstream.glue.sinks.dynamodb_types import row_converter
    from kinesis_dstream.glue.sinks.dynamodb_writes import TableWriter

    schema = T.StructType(
        [
            T.StructField("id", T.LongType()),
            T.StructField("user", T.StringType()),
            T.StructField("amount", T.DoubleType()),
            T.StructField("tags", T.ArrayType(T.StringType())),
            T.StructField(
                "ship",
                T.StructType(
                    [T.StructField("city", T.StringType()), T.StructField("zip", T.StringType())]
                ),
            ),
        ]
    )
    rows = [
        (r["id"], r["user"], r["amount"], r["tags"], Row(r["ship"]["city"], r["ship"]["zip"]))
        for r in data
    ]
    client = aws.client("dynamodb")
    start = time.perf_counter()
    writer = TableWriter(client, table, {"id": "N"}, units_per_s=20_000.0)
    writer.put_all(map(row_converter(schema), rows))
    writer.flush()
    return time.perf_counter() - start


class GlueWriter:
    """The whole Glue call on local[2]: a SparkContext started once, the rows cached in
    two partitions; ``write(table)`` times one ``write_dynamic_frame.from_options``."""

    def __init__(self, aws: LocalAWS, data: list) -> None:
        os.environ.update(aws.env())
        os.environ["PYSPARK_PYTHON"] = sys.executable
        from pyspark import SparkConf, SparkContext

        from kinesis_dstream.glue.context import GlueContext
        from kinesis_dstream.glue.frames.dynamicframe import DynamicFrame

        conf = SparkConf().setMaster("local[2]").set("spark.ui.enabled", "false")
        self.sc = SparkContext(conf=conf)
        self.sc.setLogLevel("ERROR")
        self.glue = GlueContext(self.sc)
        df = self.glue.spark_session.createDataFrame(data).repartition(2).cache()
        df.count()
        self.frame = DynamicFrame.fromDF(df, self.glue, "rows")

    def write(self, table: str) -> float:
        start = time.perf_counter()
        self.glue.write_dynamic_frame.from_options(
            frame=self.frame,
            connection_type="dynamodb",
            connection_options={"dynamodb.output.tableName": table},
        )
        return time.perf_counter() - start

    def stop(self) -> None:
        self.sc.stop()


BOTO3 = "boto3 Table.batch_writer() (a)"
TASK = "the sink's task writer, one thread (b)"
GLUE = "write_dynamic_frame.from_options, local[2], warm workers (c)"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-spark", action="store_true")
    args = parser.parse_args()
    data = rows(args.rows)
    print(f"Load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"on {os.cpu_count()} cores")
    timings: dict = {BOTO3: [], TASK: []}
    tables: list = []
    with LocalAWS() as aws:
        client = aws.client("dynamodb")

        def table(name: str) -> str:
            tables.append(create_table(client, f"bench-{name}-{len(tables)}"))
            return tables[-1]

        glue = None if args.no_spark else GlueWriter(aws, data)
        try:
            if glue is not None:
                cold = glue.write(table("glue-cold"))
                timings[GLUE] = []
            for _ in range(args.rounds):  # interleaved: the load others put on the machine
                timings[BOTO3].append(bench_boto3(aws, table("boto3"), data))
                timings[TASK].append(bench_task_writer(aws, table("task"), data))
                if glue is not None:
                    timings[GLUE].append(glue.write(table("glue")))
        finally:
            if glue is not None:
                glue.stop()
        counts = {t: count(client, t) for t in tables}
    print(f"Load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"\n{args.rows:,} rows into moto's DynamoDB (on-demand tables), {args.rounds} "
          f"interleaved rounds; every table counted after: "
          f"{'all ' + format(args.rows, ',') if set(counts.values()) == {args.rows} else counts}")
    if glue is not None:
        print(f"first Glue write (cold Python workers): {cold:.2f} s, "
              f"{args.rows / cold:,.0f} items/s")
    base = statistics.median(timings[BOTO3])
    print("| writer | seconds, each round | median items/s | of boto3's (medians) |")
    print("| --- | --- | ---: | ---: |")
    for name, seconds in timings.items():
        median = statistics.median(seconds)
        each = ", ".join(f"{s:.2f}" for s in seconds)
        print(f"| {name} | {each} | {args.rows / median:,.0f} | {base / median:.2f} |")
    missing = {t: c for t, c in counts.items() if c != args.rows}
    if missing:
        print(f"NOT every item written: {missing}")
        sys.exit(1)


if __name__ == "__main__":
    results.run(main, "glue-dynamodb-sink", "the Glue DynamoDB sink against boto3's batch writer")
