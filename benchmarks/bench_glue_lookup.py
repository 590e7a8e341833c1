"""A streaming job's S3 lookup read again every batch through the Glue layer, beside plain
pyarrow reading the same files.

    python -m benchmarks.bench_glue_lookup [--rows 100000] [--files 4] [--batches 5]

One local AWS (moto's server, a child process) and one bucket holding the same lookup of
N rows (a country code, a name, a population, a rank, a date: ~45 B a row as CSV) twice:
as CSV with a header and as Parquet, in F files each. Then, in one run, for each format:

(a) plain pyarrow, in a child process of its own: pyarrow's S3 filesystem reads the F
    files whole into one table (``pyarrow.csv.read_csv`` / ``pyarrow.parquet.read_table``),
    as a script without Spark would; its time inside the process and its peak RSS;
(b) the Glue layer on local[2]: what a job does each batch when it reads its lookup again,
    ``glueContext.create_dynamic_frame.from_options(connection_type="s3", ...)`` then a
    join of a batch of 1,000 orders with it, ``count()``: the first time (the session's
    Python workers and the executors' S3 filesystem start), then B times more (the
    median, and the fastest); the planning (listing, CSV's inference job) apart from the
    read. Memory: the peak RSS of the benchmark's process tree (the driver's Python,
    Spark's JVM, its Python workers; not the local AWS's server) sampled every 20 ms
    during the reads, how far it rose above the tree's RSS before them, and the tree by
    kind after them (each worker's peak over its life: what one task reading files
    holds);
(c) Spark's own reader (``spark.read.csv`` / ``.parquet``) over local copies of the same
    files, where Spark has a filesystem (the path Glue's own readers take on Glue), with
    the same join, as a floor for (b).

Before (b), the session's first Python data source read (a trivial source of one row) is
timed on its own: Spark pays it once a session, whichever source comes first (in a
streaming job, its Kinesis source, before the first batch), so (b)'s first read is the
lookup's own.

(d) a DynamoDB lookup of M items (``--items``, 1,000: a priority table) read again each
    batch through the table a crawler makes of it
    (``create_dynamic_frame.from_catalog``, two segments), then joined with the orders:
    the planning (GetTable, DescribeTable, the Scan that types the columns) apart from
    the read (a second Scan) and the join; the median of B reads after the first.

Every read must hold exactly N rows (M items) and the join must find every order's match.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from benchmarks import results
from kinesis_dstream.local import LocalAWS

BUCKET = "bench-glue-lookup"
ORDERS = 1_000
SAMPLE_S = 0.02


#: Processes left out of the tree's figures: the local AWS's server (not the reader's).
EXCLUDED: set = set()


def tree_members(root: int) -> set:
    """``root`` and every process below it (from /proc), but :data:`EXCLUDED`'s."""
    parents: dict = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                parents[int(entry)] = int(fields[1])
            except (OSError, IndexError, ValueError):
                continue
    members, frontier = {root}, [root]
    while frontier:
        pid = frontier.pop()
        children = [
            c for c, p in parents.items() if p == pid and c not in members and c not in EXCLUDED
        ]
        members.update(children)
        frontier.extend(children)
    return members


def status_bytes(pid: int, field: str) -> int:
    """``VmRSS`` (now) or ``VmHWM`` (the process's peak) of ``pid``, 0 once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def tree_rss_bytes(root: int) -> int:
    """The RSS of ``root`` and every process below it."""
    return sum(status_bytes(pid, "VmRSS") for pid in tree_members(root))


def tree_breakdown(root: int) -> str:
    """The tree's processes by kind: Spark's JVM, this Python, Spark's Python workers
    (their RSS now, and the largest one's peak over its life)."""
    jvm = python = 0
    workers: list = []
    for pid in tree_members(root):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()
        except OSError:
            continue
        rss = status_bytes(pid, "VmRSS")
        if pid == root:
            python += rss
        elif command.endswith("java"):
            jvm += rss
        elif "python" in command:
            workers.append((rss, status_bytes(pid, "VmHWM")))
    largest = max((peak for _, peak in workers), default=0)
    return (
        f"JVM {mib(jvm)}, driver's Python {mib(python)}, {len(workers)} Python workers "
        f"{mib(sum(rss for rss, _ in workers))} (the largest worker's peak {mib(largest)})"
    )


class PeakRSS:
    """The peak RSS of this process's tree while the block runs (a sampling thread,
    stopped and joined at the block's end), and the tree's RSS before it."""

    def __enter__(self) -> PeakRSS:
        self.before = tree_rss_bytes(os.getpid())
        self.peak = self.before
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, name="rss-sampler", daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(SAMPLE_S):
            self.peak = max(self.peak, tree_rss_bytes(os.getpid()))

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)
        self.peak = max(self.peak, tree_rss_bytes(os.getpid()))


def lookup_rows(n: int) -> list:
    rng = random.Random(7)
    return [
        {
            "code": f"C{i:06d}",
            "name": f"Country {i} " + "x" * rng.randint(0, 12),
            "population_m": round(rng.uniform(0.01, 1500), 3),
            "rank": i,
            "updated": f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}",
        }
        for i in range(n)
    ]


def write_lookup(aws, rows: list, files: int, local_dir: Path) -> dict:
    """The lookup as CSV and Parquet in ``files`` files each, on S3 and locally; bytes."""
    import io

    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    s3 = aws.client("s3")
    s3.create_bucket(Bucket=BUCKET)
    size = {"csv": 0, "parquet": 0}
    per = -(-len(rows) // files)
    for part in range(files):
        table = pa.Table.from_pylist(rows[part * per : (part + 1) * per])
        for fmt in ("csv", "parquet"):
            buffer = io.BytesIO()
            if fmt == "csv":
                pcsv.write_csv(table, buffer)
            else:
                pq.write_table(table, buffer)
            body = buffer.getvalue()
            size[fmt] += len(body)
            key = f"{fmt}/part-{part:05d}.{fmt}"
            s3.put_object(Bucket=BUCKET, Key=key, Body=body)
            (local_dir / fmt).mkdir(parents=True, exist_ok=True)
            (local_dir / key).write_bytes(body)
    return size


PLAIN_PYARROW = textwrap.dedent(
    """
    import resource, sys, time
    import pyarrow as pa, pyarrow.csv as pcsv, pyarrow.parquet as pq
    from pyarrow import fs
    fmt, endpoint, region, key, secret = sys.argv[1:6]
    s3 = fs.S3FileSystem(access_key=key, secret_key=secret, region=region,
                         endpoint_override=endpoint.split("://", 1)[1], scheme="http")
    start = time.perf_counter()
    paths = [f.path for f in s3.get_file_info(fs.FileSelector("{bucket}/" + fmt))]
    tables = []
    for path in sorted(paths):
        if fmt == "csv":
            with s3.open_input_stream(path) as stream:
                tables.append(pcsv.read_csv(stream))
        else:
            tables.append(pq.read_table(path, filesystem=s3))
    table = pa.concat_tables(tables)
    took = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(table.num_rows, took, peak)
    """
).replace("{bucket}", BUCKET)


def plain_pyarrow(aws, fmt: str) -> tuple:
    """(rows, seconds, peak RSS bytes) of (a), in a child process."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            PLAIN_PYARROW,
            fmt,
            aws.endpoint_url,
            aws.region_name,
            aws.access_key_id,
            aws.secret_access_key,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    rows, took, peak = done.stdout.split()
    return int(rows), float(took), int(peak)


class OneRowReader(DataSourceReader):
    def partitions(self):
        return [InputPartition(0)]

    def read(self, partition):
        yield (1,)


class OneRowSource(DataSource):
    """A trivial Python data source (one row): Spark's first-read cost of a session."""

    @classmethod
    def name(cls):
        return "bench-one-row"

    def reader(self, schema):
        return OneRowReader()


def first_python_source_read(spark) -> float:
    spark.dataSource.register(OneRowSource)
    start = time.perf_counter()
    spark.read.format("bench-one-row").schema("x long").load().count()
    return time.perf_counter() - start


def glue_read(glue, fmt: str, orders) -> tuple:
    """(plan seconds, read seconds, lookup rows, joined rows) of one read of (b)."""
    from kinesis_dstream.glue.transforms import Join

    start = time.perf_counter()
    lookup = glue.create_dynamic_frame.from_options(
        connection_type="s3",
        connection_options={"paths": [f"s3://{BUCKET}/{fmt}/"], "recurse": True},
        format=fmt,
        format_options={"withHeader": True} if fmt == "csv" else {},
    )
    planned = time.perf_counter()
    joined = Join.apply(frame1=orders, frame2=lookup, keys1=["country"], keys2=["code"])
    matched = joined.count()
    read = time.perf_counter()
    rows = lookup.count()  # checked, not timed
    return planned - start, read - planned, rows, matched


def spark_read(spark, fmt: str, local_dir: Path, orders_df) -> tuple:
    """(seconds, lookup rows, joined rows) of (c)."""
    start = time.perf_counter()
    path = str(local_dir / fmt)
    if fmt == "csv":
        df = spark.read.option("header", "true").option("inferSchema", "true").csv(path)
    else:
        df = spark.read.parquet(path)
    matched = orders_df.join(df, orders_df.country == df.code).count()
    took = time.perf_counter() - start
    return took, df.count(), matched


def dynamodb_lookup(aws, items: int) -> str:
    """A table of ``items`` customer priorities and the crawler's catalog table over it;
    the catalog table's name."""
    ddb, glue = aws.client("dynamodb"), aws.client("glue")
    table = "bench_priorities"
    ddb.create_table(
        TableName=table,
        KeySchema=[{"AttributeName": "customer", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "customer", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    for start in range(0, items, 25):
        requests = [
            {
                "PutRequest": {
                    "Item": {"customer": {"S": f"C{i:06d}"}, "priority": {"N": str(i % 7)}}
                }
            }
            for i in range(start, min(items, start + 25))
        ]
        ddb.batch_write_item(RequestItems={table: requests})
    glue.create_database(DatabaseInput={"Name": "bench"})
    params = {"classification": "dynamodb", "typeOfData": "table"}
    arn = f"arn:aws:dynamodb:{aws.region_name}:123456789012:table/{table}"
    glue.create_table(
        DatabaseName="bench",
        TableInput={
            "Name": table,
            "Parameters": params,
            "StorageDescriptor": {"Location": arn, "Parameters": params, "Columns": []},
        },
    )
    return table


def dynamodb_read(glue, table: str, orders) -> tuple:
    """(plan seconds, read and join seconds, items, joined rows) of one read of (d)."""
    from kinesis_dstream.glue.transforms import Join

    start = time.perf_counter()
    lookup = glue.create_dynamic_frame.from_catalog(
        database="bench", table_name=table, additional_options={"dynamodb.splits": "2"}
    )
    planned = time.perf_counter()
    matched = Join.apply(orders, lookup, "country", "customer").count()
    read = time.perf_counter()
    return planned - start, read - planned, lookup.count(), matched


def mib(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--batches", type=int, default=5, help="warm reads after the first")
    parser.add_argument("--items", type=int, default=1_000, help="the DynamoDB lookup's items")
    args = parser.parse_args()
    n = args.rows
    rows = lookup_rows(n)
    with LocalAWS() as aws, tempfile.TemporaryDirectory() as temp:
        EXCLUDED.add(aws.pid)
        local_dir = Path(temp)
        sizes = write_lookup(aws, rows, args.files, local_dir)
        os.environ.update(aws.env())
        os.environ["PYSPARK_PYTHON"] = sys.executable
        print(
            f"lookup: {n:,} rows in {args.files} files on moto's S3 (child process): CSV "
            f"{mib(sizes['csv'])}, Parquet {mib(sizes['parquet'])}; local[2] on "
            f"{os.cpu_count()} cores; a batch of {ORDERS:,} orders joined with it"
        )
        plain = {fmt: plain_pyarrow(aws, fmt) for fmt in ("csv", "parquet")}
        priorities = dynamodb_lookup(aws, args.items)
        from pyspark.sql import SparkSession

        from kinesis_dstream.glue.context import GlueContext
        from kinesis_dstream.glue.frames.dynamicframe import DynamicFrame

        spark = (
            SparkSession.builder.master("local[2]")
            .appName("bench-glue-lookup")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
        glue = GlueContext(spark)
        rng = random.Random(1)
        sent = [(i, f"C{rng.randrange(n):06d}") for i in range(ORDERS)]
        orders_df = spark.createDataFrame(sent, "order_id long, country string").cache()
        orders_df.count()
        orders = DynamicFrame.fromDF(orders_df, glue, "orders")
        print(
            f"the session's first Python data source read (one row): "
            f"{first_python_source_read(spark):.2f} s"
        )
        for fmt in ("csv", "parquet"):
            with PeakRSS() as memory:
                first = glue_read(glue, fmt, orders)
                warm = [glue_read(glue, fmt, orders) for _ in range(args.batches)]
            floor = [spark_read(spark, fmt, local_dir, orders_df) for _ in range(2)][-1]
            counts = [(first[2], first[3]), (floor[1], floor[2]), *((w[2], w[3]) for w in warm)]
            if any(c != (n, ORDERS) for c in counts) or plain[fmt][0] != n:
                raise SystemExit(f"{fmt}: (rows, joined) {counts}, pyarrow {plain[fmt][0]} rows")
            totals = [w[0] + w[1] for w in warm]
            _, p_s, p_peak = plain[fmt]
            print(f"\n{fmt}:")
            print(f"  (a) plain pyarrow, into one table: {p_s:.2f} s, peak RSS {mib(p_peak)}")
            print(
                f"  (b) Glue layer, first read + join: {first[0] + first[1]:.2f} s "
                f"(planning {first[0]:.2f} s, read and join {first[1]:.2f} s)"
            )
            print(
                f"      again each batch ({args.batches}x): median "
                f"{statistics.median(totals):.2f} s, fastest {min(totals):.2f} s (planning median "
                f"{statistics.median(w[0] for w in warm):.2f} s, read and join "
                f"{statistics.median(w[1] for w in warm):.2f} s); "
                f"{statistics.median(totals) / p_s:.1f}x plain pyarrow"
            )
            print(
                f"      process tree RSS: {mib(memory.before)} before, peak {mib(memory.peak)} "
                f"(+{mib(memory.peak - memory.before)})"
            )
            print(f"      processes now: {tree_breakdown(os.getpid())}")
            print(f"  (c) Spark's own reader on local copies + join: {floor[0]:.2f} s")
        first = dynamodb_read(glue, priorities, orders)
        warm = [dynamodb_read(glue, priorities, orders) for _ in range(args.batches)]
        # orders name countries C000000... of the S3 lookup: those below --items match
        expected = sum(1 for _, code in sent if int(code[1:]) < args.items)
        counts = [(first[2], first[3]), *((w[2], w[3]) for w in warm)]
        if any(c != (args.items, expected) for c in counts):
            raise SystemExit(f"dynamodb: (items, joined) {counts}, not {(args.items, expected)}")
        print(f"\ndynamodb, {args.items:,} items through a crawler's catalog table, 2 segments:")
        print(
            f"  (d) first read + join: {first[0] + first[1]:.2f} s (planning {first[0]:.2f} s); "
            f"again each batch ({args.batches}x): median "
            f"{statistics.median(w[0] + w[1] for w in warm):.2f} s (planning median "
            f"{statistics.median(w[0] for w in warm):.2f} s, read and join median "
            f"{statistics.median(w[1] for w in warm):.2f} s)"
        )
        spark.stop()


if __name__ == "__main__":
    results.run(main, "glue-lookup", "A Glue job's S3 lookup read each batch")
