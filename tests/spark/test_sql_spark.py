"""The Structured Streaming source on local Spark and moto's server."""

import datetime as dt
import json
import threading
import time

import pytest

from kinesis_dstream import KinesisProducer
from kinesis_dstream.demo.readback import read_all_records
from kinesis_dstream.retrieval.streams import ensure_stream

from ..support.streaming import running
from ..support.waiting import wait_until

pytestmark = pytest.mark.spark


def source(session, local_aws, stream, tmp_path, fmt="kinesis", **options):
    reader = session.readStream.format(fmt)
    base = {
        "streamName": stream,
        "endpointUrl": local_aws.endpoint_url,
        "metadataPath": str(tmp_path / "ends"),
        "initialPosition": "trim_horizon",
    }
    for key, value in {**base, **options}.items():
        reader = reader.option(key, value)
    return reader.load()


def available_now(session, df, tmp_path, name):
    query = (
        df.writeStream.format("memory")
        .queryName(name)
        .option("checkpointLocation", str(tmp_path / f"cp-{name}"))
        .trigger(availableNow=True)
        .start()
    )
    with running(query):
        assert query.awaitTermination(180), f"{name}: AvailableNow did not stop within 180 s"
        assert query.exception() is None, query.exception()
    return query, session.sql(f"select * from {name}").collect()


def test_ten_thousand_records_over_four_shards_arrive_exactly_once_with_every_column(
    session, local_aws, kinesis, unique_name, tmp_path
):
    ensure_stream(kinesis, unique_name, 4)
    with KinesisProducer(unique_name, client=kinesis) as producer:
        for i in range(10_000):
            hash_key = str(i * 2**100) if i % 100 == 0 else None
            producer.put(f"record-{i}", f"key-{i}", hash_key)
    truth = {}
    for record in read_all_records(kinesis, unique_name):
        truth[(record["ShardId"], record["SequenceNumber"])] = record
    assert len(truth) == 10_000
    df = source(session, local_aws, unique_name, tmp_path, fmt="aws-kinesis")
    query = (
        df.writeStream.format("memory")
        .queryName("ten_k")
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(processingTime="500 milliseconds")
        .start()
    )
    with running(query):
        deadline = time.monotonic() + 120
        while session.sql("select count(*) from ten_k").collect()[0][0] < 10_000:
            assert query.exception() is None, query.exception()
            assert time.monotonic() < deadline, "10,000 records not in within 120 s"
            time.sleep(0.5)
        got = session.sql("select * from ten_k").collect()
    assert len(got) == 10_000
    assert {(r.shardId, r.sequenceNumber) for r in got} == set(truth)
    for row in got:
        want = truth[(row.shardId, row.sequenceNumber)]
        assert row.data == want["Data"]
        assert row.partitionKey == want["PartitionKey"]
        assert row.streamName == unique_name  # the awslabs connector's column name
        assert row.subSequenceNumber == 0
        assert row.explicitHashKey is None  # GetRecords keeps none for plain records
        # Spark gives timestamps as naive datetimes in the session's (local) time zone
        arrival = want["ApproximateArrivalTimestamp"].astimezone().replace(tzinfo=None)
        assert row.approximateArrivalTimestamp == arrival
    # per shard, records arrive in sequence order
    for shard in {r.shardId for r in got}:
        seqs = [int(r.sequenceNumber) for r in got if r.shardId == shard]
        assert seqs == sorted(seqs)


def test_at_timestamp_in_each_connectors_spelling(
    session, local_aws, kinesis, unique_name, tmp_path
):
    ensure_stream(kinesis, unique_name, 2)
    with KinesisProducer(unique_name, client=kinesis) as producer:
        for i in range(50):
            producer.put(f"before-{i}", f"k{i}")
    cut = dt.datetime.now(dt.timezone.utc).replace(microsecond=0) + dt.timedelta(seconds=1)
    time.sleep(max(0.0, (cut - dt.datetime.now(dt.timezone.utc)).total_seconds()) + 0.05)
    with KinesisProducer(unique_name, client=kinesis) as producer:
        for i in range(50):
            producer.put(f"after-{i}", f"k{i}")
    pdt = cut.astimezone(dt.timezone(dt.timedelta(hours=-7)))
    spellings = {
        "initialPosition": json.dumps({"at_timestamp": pdt.strftime("%m/%d/%Y %H:%M:%S PDT")}),
        "kinesis.startingPosition": "AT_TIMESTAMP " + cut.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "startingPosition": pdt.isoformat(),
    }
    for n, (option, value) in enumerate(spellings.items()):
        df = (
            session.readStream.format("kinesis")
            .options(
                streamName=unique_name,
                endpointUrl=local_aws.endpoint_url,
                metadataPath=str(tmp_path / f"ends{n}"),
                **{option: value},
            )
            .load()
        )
        _, got = available_now(session, df, tmp_path, f"ts_{n}")
        assert sorted(r.data for r in got) == sorted(f"after-{i}".encode() for i in range(50)), (
            option,
            value,
        )


def test_kpl_aggregates_from_aws_kinesis_agg_arrive_de_aggregated(
    session, local_aws, kinesis, unique_name, tmp_path
):
    from aws_kinesis_agg.aggregator import RecordAggregator

    ensure_stream(kinesis, unique_name, 1)
    aggregator = RecordAggregator()
    sent = []
    for i in range(300):
        data = f"user-{i}"
        sent.append(data.encode())
        full = aggregator.add_user_record(f"pk-{i}", data.encode())
        if full is not None:
            pk, _ehk, blob = full.get_contents()
            kinesis.put_record(StreamName=unique_name, Data=blob, PartitionKey=pk)
    pk, _ehk, blob = aggregator.clear_and_get().get_contents()
    kinesis.put_record(StreamName=unique_name, Data=blob, PartitionKey=pk)
    df = source(session, local_aws, unique_name, tmp_path, maxFetchRecordsPerShard="70")
    query, got = available_now(session, df, tmp_path, "agg")
    assert sorted(r.data for r in got) == sorted(sent)
    by_seq = {}
    for row in got:
        by_seq.setdefault(row.sequenceNumber, []).append(row.subSequenceNumber)
    for subs in by_seq.values():
        assert sorted(subs) == list(range(len(subs)))  # 0, 1, 2, ... within each aggregate
    assert any(len(subs) > 1 for subs in by_seq.values())
    # batches of at most 70 records, ending inside aggregates
    assert max(p["numInputRows"] for p in query.recentProgress) <= 70


@pytest.mark.slow  # 18-20 s: CI's long scenarios; by default test_sql_runner's available-now
# case reads everything there at its start through the same runner
def test_available_now_stops_after_exactly_the_records_there_when_it_starts(
    session, local_aws, kinesis, unique_name, tmp_path
):
    ensure_stream(kinesis, unique_name, 4)
    with KinesisProducer(unique_name, client=kinesis) as producer:
        for i in range(50_000):
            producer.put(f"{i}", f"key-{i}")
    df = source(session, local_aws, unique_name, tmp_path, maxFetchRecordsPerShard="5000")
    query = (
        df.writeStream.format("memory")
        .queryName("avail")
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(availableNow=True)
        .start()
    )
    late = threading.Event()

    def produce_late():  # after the first batch: these arrive after the trigger started
        deadline = time.monotonic() + 120
        while not query.recentProgress and query.isActive and time.monotonic() < deadline:
            time.sleep(0.05)
        with KinesisProducer(unique_name, client=local_aws.client("kinesis")) as producer:
            for i in range(500):
                producer.put(f"late-{i}", f"late-{i}")
        late.set()

    producer_thread = threading.Thread(target=produce_late)
    producer_thread.start()
    with running(query):
        assert query.awaitTermination(300), "AvailableNow did not stop within 300 s"
        assert query.exception() is None, query.exception()
    producer_thread.join(60)
    assert late.is_set()
    count, distinct, late_rows = session.sql(
        "select count(*), count(distinct data), sum(case when data like 'late-%' then 1 else 0 "
        "end) from (select cast(data as string) data from avail)"
    ).collect()[0]
    assert (count, distinct, late_rows) == (50_000, 50_000, 0)
    sizes = [p["numInputRows"] for p in query.recentProgress]
    assert sum(sizes) == 50_000 and max(sizes) <= 4 * 5000


def test_per_shard_and_spark_row_limits_bound_every_micro_batch(
    session, local_aws, kinesis, unique_name, tmp_path
):
    ensure_stream(kinesis, unique_name, 4)
    with KinesisProducer(unique_name, client=kinesis) as producer:
        for i in range(10_000):
            producer.put(f"{i}", f"key-{i}")
    for name, options, bound in (
        ("per_shard", {"maxFetchRecordsPerShard": "1000"}, 4000),
        ("per_batch", {"maxRecordsPerBatch": "2500"}, 2500),
    ):
        df = source(session, local_aws, unique_name, tmp_path / name, **options)
        query = (
            df.writeStream.format("memory")
            .queryName(name)
            .option("checkpointLocation", str(tmp_path / f"cp-{name}"))
            .trigger(processingTime="100 milliseconds")
            .start()
        )
        with running(query):
            deadline = time.monotonic() + 120
            while sum(p["numInputRows"] for p in query.recentProgress) < 10_000:
                assert query.exception() is None, query.exception()
                assert time.monotonic() < deadline, f"{name}: not all read in 120 s"
                time.sleep(0.2)
            sizes = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
        assert sum(sizes) == 10_000 and max(sizes) <= bound, (name, sizes)
        assert len(sizes) >= 10_000 // bound


@pytest.mark.slow  # 10 idle seconds, 12-15 s: CI's long scenarios
def test_an_idle_stream_runs_no_micro_batch(session, local_aws, kinesis, unique_name, tmp_path):
    ensure_stream(kinesis, unique_name, 2)
    batches = []

    def each(batch_df, batch_id):
        batches.append((batch_id, batch_df.count()))

    df = source(session, local_aws, unique_name, tmp_path)
    query = (
        df.writeStream.foreachBatch(each)
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(processingTime="200 milliseconds")
        .start()
    )
    with running(query):
        kinesis.put_record(StreamName=unique_name, Data=b"first", PartitionKey="a")
        wait_until(lambda: batches, 60, "the first batch", failed=query.exception)
        started_idle = time.monotonic()
        while time.monotonic() - started_idle < 10:  # 10 s idle; the query keeps polling
            assert query.exception() is None and query.isActive
            time.sleep(0.5)
        kinesis.put_record(StreamName=unique_name, Data=b"second", PartitionKey="b")
        wait_until(lambda: len(batches) >= 2, 60, "the second batch", failed=query.exception)
        progress = query.lastProgress
    # the batch after 10 idle seconds is the very next one: no empty batch ran between
    assert batches == [(0, 1), (1, 1)]
    assert "millisBehindLatest" in json.dumps(progress["sources"][0]["latestOffset"])


@pytest.mark.parametrize(
    "options, words",
    [
        ({"streamName": "s", "shardsPerTasks": "2"}, ["unknown option 'shardsPerTasks'", "known"]),
        ({"region": "us-east-1"}, ["'streamName' is required"]),
        ({"streamName": "s", "startingPosition": "AT_TIMESTAMP 2020-13-45"}, ["ISO-8601"]),
        (
            {"streamName": "s", "endpoint": "http://a", "endpointUrl": "http://b"},
            ["'endpoint'", "'endpointUrl'"],
        ),
        ({"streamName": "s", "minFetchPeriod": "50ms"}, ["'minFetchPeriod'", "200 ms"]),
    ],
)
def test_bad_options_fail_before_the_query_starts(session, options, words):
    with pytest.raises(Exception) as info:
        session.readStream.format("kinesis").options(**options).load()
    for word in words:
        assert word.lower() in str(info.value).lower()


def test_no_credential_reaches_the_checkpoint_or_the_end_store(
    session, local_aws, kinesis, unique_name, tmp_path
):
    ensure_stream(kinesis, unique_name, 1)
    kinesis.put_record(StreamName=unique_name, Data=b"x", PartitionKey="a")
    secret = f"SECRET{unique_name[-8:]}"  # moto accepts any keys
    df = source(
        session,
        local_aws,
        unique_name,
        tmp_path,
        awsAccessKeyId=f"KEYID{unique_name[-8:]}",
        awsSecretKey=secret,
    )
    _, got = available_now(session, df, tmp_path, "creds")
    assert [r.data for r in got] == [b"x"]
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any("offsets" in str(p) for p in files) and any("ends" in str(p) for p in files)
    for path in files:
        text = path.read_bytes()
        assert secret.encode() not in text and f"KEYID{unique_name[-8:]}".encode() not in text, path
