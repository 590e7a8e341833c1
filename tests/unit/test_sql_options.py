"""Pure logic of the Structured Streaming source: options, positions, offsets, planning."""

import json
from datetime import datetime, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kinesis_dstream.sql.config.options import OptionError, SinkOptions, SourceOptions
from kinesis_dstream.sql.driver.planner import (
    ShardInfo,
    initial_positions,
    merge_shard_list,
    ready_shards,
    split_limit,
)
from kinesis_dstream.sql.offsets import Offset, RangeEnd, ShardRange, make_offset, range_key
from kinesis_dstream.sql.positions import (
    LATEST,
    SHARD_END,
    TRIM_HORIZON,
    PositionError,
    parse_initial_position,
    start_position,
)

BASE = {"streamName": "s", "region": "us-east-1"}


def parse(**extra):
    return SourceOptions.parse({**BASE, **extra})


def test_defaults_and_each_connectors_spelling():
    opts = parse()
    assert opts.initial_position == LATEST
    assert opts.max_records_per_fetch == 10_000
    assert opts.max_fetch_records_per_shard == 100_000
    assert opts.min_fetch_period_ms == 200 and opts.describe_shard_interval_ms == 1000
    assert opts.fail_on_data_loss is False
    databricks = SourceOptions.parse(
        {
            "streamName": "s",
            "region": "eu-west-1",
            "endpoint": "http://e",
            "initialPosition": "earliest",
            "maxRecordsPerFetch": "500",
            "minFetchPeriod": "400ms",
            "shardFetchInterval": "5s",
            "awsAccessKey": "AK",
            "awsSecretKey": "SK",
            "roleArn": "arn:aws:iam::1:role/r",
            "roleExternalId": "x",
        }
    )
    awslabs = SourceOptions.parse(
        {
            "kinesis.streamName": "s",
            "kinesis.region": "eu-west-1",
            "kinesis.endpointUrl": "http://e",
            "kinesis.startingPosition": "TRIM_HORIZON",
            "kinesis.getRecords.numberOfRecordsPerFetch": "500",
            "kinesis.getRecords.fetchIntervalMs": "400",
            "kinesis.describeShardInterval": "5s",
            "kinesis.awsAccessKeyId": "AK",
            "kinesis.awsSecretKey": "SK",
            "kinesis.stsRoleArn": "arn:aws:iam::1:role/r",
            "kinesis.stsSessionName": "kinesis-dstream-sql",
            "kinesis.failOnDataLoss": "true",
        }
    )
    glue = SourceOptions.parse(
        {
            "streamARN": "arn:aws:kinesis:eu-west-1:123456789012:stream/s",
            "endpointUrl": "http://e",
            "startingPosition": "trim_horizon",
            "maxRecordPerRead": "500",
            "idleTimeBetweenReadsInMs": "400",
            "awsSTSRoleARN": "arn:aws:iam::1:role/r",
            "awsSTSSessionName": "kinesis-dstream-sql",
        }
    )
    for opts in (databricks, awslabs, glue):
        assert opts.connection.stream_name == "s"
        assert opts.connection.region_name == "eu-west-1"
        assert opts.connection.endpoint_url == "http://e"
        assert opts.initial_position == TRIM_HORIZON
        assert opts.max_records_per_fetch == 500
        assert opts.min_fetch_period_ms == 400
        assert opts.connection.credentials.role_arn == "arn:aws:iam::1:role/r"
    assert awslabs.fail_on_data_loss and awslabs.describe_shard_interval_ms == 5000
    # secrets never in a repr
    assert "SK" not in repr(databricks) and "AK" not in repr(databricks)


def test_options_are_case_insensitive_and_region_comes_from_the_endpoint():
    opts = SourceOptions.parse(
        {"STREAMNAME": "s", "Endpoint": "https://kinesis.ap-south-1.amazonaws.com"}
    )
    assert opts.connection.region_name == "ap-south-1"


def test_awslabs_kinesis_region_is_the_streams_and_region_the_connectors():
    both = {"kinesis.streamName": "s", "kinesis.region": "us-east-2"}
    cross = SourceOptions.parse({**both, "kinesis.kinesisRegion": "us-west-2"}).connection
    assert cross.client_spec("kinesis").region_name == "us-west-2"  # the stream's
    assert cross.client_spec("dynamodb").region_name == "us-east-2"  # the connector's
    alone = SourceOptions.parse({"streamName": "s", "kinesisRegion": "eu-west-1"}).connection
    assert alone.client_spec("kinesis").region_name == "eu-west-1"
    assert alone.client_spec("dynamodb").region_name == "eu-west-1"
    same = SourceOptions.parse({**both, "kinesis.kinesisRegion": "us-east-2"}).connection
    assert same.client_spec("kinesis").region_name == "us-east-2"
    sink = SinkOptions.parse({**both, "kinesis.kinesisRegion": "us-west-2"}).connection
    assert sink.client_spec("kinesis").region_name == "us-west-2"


@pytest.mark.parametrize(
    "options, words",
    [
        (
            {"streamName": "s", "region": "r", "streamNme": "x"},
            ["unknown option 'streamNme'", "streamName"],
        ),
        ({"region": "r"}, ["'streamName' is required"]),
        (
            {**BASE, "endpoint": "http://a", "kinesis.endpointUrl": "http://b"},
            ["'endpoint'='http://a'", "'kinesis.endpointUrl'='http://b'", "aliases"],
        ),
        (
            {**BASE, "initialPosition": "latest", "startingPosition": "trim_horizon"},
            ["'initialPosition'", "'startingPosition'"],
        ),
        ({**BASE, "minFetchPeriod": "100ms"}, ["'minFetchPeriod'='100ms'", "200 ms"]),
        ({**BASE, "getRecords.fetchIntervalMs": "150"}, ["fetchIntervalMs", "200 ms"]),
        (
            {**BASE, "startingPosition": "AT_TIMESTAMP yesterday"},
            ["'startingPosition'", "yesterday"],
        ),
        ({**BASE, "startingPosition": "2023-08-30T19:00:05"}, ["no zone"]),
        (
            {**BASE, "initialPosition": '{"at_timestamp": "13/45/2020 10:00:00 PDT"}'},
            ["does not match"],
        ),
        ({**BASE, "maxRecordsPerFetch": "20000"}, ["'maxRecordsPerFetch'", "[1, 10000]"]),
        ({**BASE, "maxFetchRecordsPerShard": "many"}, ["not an integer"]),
        ({**BASE, "failOnDataLoss": "yes"}, ["'failOnDataLoss'", "true or false"]),
        ({**BASE, "awsAccessKey": "AK"}, ["go together"]),
        ({**BASE, "consumerType": "Push"}, ["GetRecords or SubscribeToShard"]),
        ({**BASE, "metadataPath": "hdfs://nn/x"}, ["'metadataPath'", "DYNAMODB"]),
        (
            {**BASE, "streamARN": "arn:aws:kinesis:us-east-1:123456789012:stream/other"},
            ["different streams"],
        ),
        ({**BASE, "aggregationEnabled": "true"}, ["unknown option 'aggregationEnabled'"]),
        ({**BASE, "describeShardInterval": "0"}, ["'describeShardInterval'", "> 0"]),
        ({**BASE, "idleShardPollMs": "10min"}, ["'idleShardPollMs'='10min'", "[0, 60000] ms"]),
        (
            {
                "streamARN": "arn:aws:kinesis:eu-west-1:123456789012:stream/s",
                "region": "us-east-1",
            },
            ["'region'='us-east-1'", "different regions"],
        ),
    ],
)
def test_bad_options_fail_with_one_clear_error(options, words):
    with pytest.raises(ValueError) as info:
        SourceOptions.parse(options)
    for word in words:
        assert word in str(info.value)


def test_sink_options():
    opts = SinkOptions.parse({**BASE, "kinesis.sink.aggregationEnabled": "true"})
    assert opts.aggregation_enabled
    with pytest.raises(OptionError, match="unknown option 'initialPosition'"):
        SinkOptions.parse({**BASE, "initialPosition": "latest"})


T = datetime(2020, 6, 25, 17, 23, 45, tzinfo=timezone.utc)  # 10:23:45 PDT


@pytest.mark.parametrize(
    "text",
    [
        '{"at_timestamp": "06/25/2020 10:23:45 PDT"}',
        '{"at_timestamp": "06/25/2020 10:23:45 PDT", "format": "MM/dd/yyyy HH:mm:ss ZZZ"}',
        '{"at_timestamp": "2020-06-25T10:23:45-07:00", "format": "yyyy-MM-dd\'T\'HH:mm:ssXXX"}',
        "AT_TIMESTAMP 2020-06-25T17:23:45Z",
        "at_timestamp 2020-06-25T10:23:45-07:00",
        "2020-06-25T10:23:45-07:00",
        "2020-06-25T17:23:45.000Z",
        # Java's full month name and a quote in the pattern
        '{"at_timestamp": "June 25 2020 10:23:45 PDT", "format": "MMMM dd yyyy HH:mm:ss ZZZ"}',
        '{"at_timestamp": "25 Jun 2020 at 10:23:45 -0700", '
        '"format": "dd MMM yyyy \'at\' HH:mm:ss Z"}',
    ],
)
def test_at_timestamp_in_all_three_spellings(text):
    position = parse_initial_position(text, "option")
    assert position == {"ts": "2020-06-25T17:23:45.000000Z"}
    start = start_position(position)
    assert start.iterator_type == "AT_TIMESTAMP" and start.timestamp == T


@pytest.mark.parametrize("text", ["noon", "AT_TIMESTAMP", '{"at": 1}', "{bad json"])
def test_malformed_positions(text):
    with pytest.raises(PositionError, match="option"):
        parse_initial_position(text, "option 'initialPosition'")


def test_positions_resume_after_the_last_included_record():
    after = start_position({"seq": "42", "sub": 3})
    assert after.iterator_type == "AT_SEQUENCE_NUMBER" and after.drop_through == (42, 3)
    at = start_position({"seq": "42", "sub": -1})
    assert at.iterator_type == "AT_SEQUENCE_NUMBER" and at.drop_through is None
    assert start_position(SHARD_END) is None
    assert start_position(TRIM_HORIZON).iterator_type == "TRIM_HORIZON"


def test_offset_json_has_a_fixed_key_order_and_string_sequence_numbers():
    entries = {
        "shardId-000000000001": {
            "seq": "49590338271490256608559692538361571095921575989136588898",
            "sub": 2,
        },
        "shardId-000000000000": ShardRange(TRIM_HORIZON, 1000, None),
        "shardId-000000000002": SHARD_END,
    }
    offset = make_offset("s", "q", 7, entries)
    text = json.dumps(offset.to_json())
    assert text == json.dumps(Offset.from_json(json.loads(text)).to_json())
    assert text.index("shardId-000000000000") < text.index("shardId-000000000001")
    assert list(json.loads(text)) == ["v", "stream", "query", "gen", "shards"]
    assert '"49590338271490256608559692538361571095921575989136588898"' in text
    assert list(json.loads(text)["shards"]["shardId-000000000000"]["range"]) == [
        "from",
        "limit",
        "cutoff",
    ]
    assert offset.finished() == {"shardId-000000000002"}
    # a range's key depends on the query, the generation, the shard and the range
    r = ShardRange(TRIM_HORIZON, 1000, None)
    keys = {
        range_key(make_offset("s", q, g, {}), shard, r)
        for q in ("q1", "q2")
        for g in (1, 2)
        for shard in ("a", "b")
    }
    assert len(keys) == 8
    end = RangeEnd(3, {"seq": "5", "sub": 0}, {"seq": "5", "sub": 0}, children=("c",))
    assert RangeEnd.from_json(json.loads(json.dumps(end.to_json()))) == end


def info(shard_id, *parents, closed=False):
    return ShardInfo(shard_id, frozenset(parents), ("0", "1"), closed)


def test_children_wait_for_their_parents_and_new_shards_start_at_trim_horizon():
    shards = {"p": info("p", closed=True), "a": info("a", "p"), "b": info("b", "p")}
    # LATEST is pinned to the query's start: AT_TIMESTAMP of it, on the open shards
    now = datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=timezone.utc)
    pinned = {"ts": "2024-05-01T12:00:00.123456Z"}
    assert initial_positions(shards, LATEST, now) == {"a": pinned, "b": pinned}
    start = initial_positions(shards, TRIM_HORIZON, now)
    assert ready_shards(start, shards) == ["p"]
    assert ready_shards({**start, "p": SHARD_END}, shards) == ["a", "b"]
    # a split while running: the children appear, start at TRIM_HORIZON, wait for p
    merged, lost = merge_shard_list({"p": {"seq": "9", "sub": 0}}, shards)
    assert merged == {"p": {"seq": "9", "sub": 0}, "a": TRIM_HORIZON, "b": TRIM_HORIZON}
    assert lost == [] and ready_shards(merged, shards) == ["p"]
    # a merge of a and b into m: m waits for both
    shards2 = {**shards, "m": info("m", "a", "b")}
    positions = {"p": SHARD_END, "a": SHARD_END, "b": {"seq": "3", "sub": 0}}
    merged, _ = merge_shard_list(positions, shards2)
    assert ready_shards(merged, shards2) == ["b"]
    merged["b"] = SHARD_END
    assert ready_shards(merged, shards2) == ["m"]


def test_expired_shards_are_dropped_or_reported_lost():
    shards = {"c": info("c", "p")}
    merged, lost = merge_shard_list({"p": SHARD_END, "c": TRIM_HORIZON, "x": SHARD_END}, shards)
    assert merged == {"p": SHARD_END, "c": TRIM_HORIZON} and lost == []
    merged, lost = merge_shard_list({"p": {"seq": "1", "sub": 0}, "c": TRIM_HORIZON}, shards)
    assert lost == ["p"] and merged["p"] == SHARD_END


@given(
    shards=st.integers(1, 8),
    per_shard=st.integers(1, 5000),
    max_rows=st.one_of(st.none(), st.integers(1, 50_000)),
    gen=st.integers(0, 100),
)
def test_split_limit_never_exceeds_either_bound(shards, per_shard, max_rows, gen):
    ids = [f"s{i}" for i in range(shards)]
    limits = split_limit(ids, per_shard, max_rows, gen)
    assert all(0 < n <= per_shard for n in limits.values())
    if max_rows is not None:
        assert sum(limits.values()) <= max_rows
        assert sum(limits.values()) == min(max_rows, per_shard * shards)
    else:
        assert limits == {s: per_shard for s in ids}


@pytest.mark.parametrize(
    "options, words",
    [
        # a Databricks format naming a field twice (strptime raised re.error)
        (
            {
                "initialPosition": '{"at_timestamp": "6 06 2020 10:00:00 UTC", "format": '
                '"MMMM MM yyyy HH:mm:ss ZZZ"}'
            },
            ["'initialPosition'", "gives the month twice"],
        ),
        (
            {
                "initialPosition": '{"at_timestamp": "2020 2020 10:00 UTC", "format": '
                '"yyyy yyyy HH:mm ZZZ"}'
            },
            ["'initialPosition'", "gives the year twice"],
        ),
        (
            {"initialPosition": '{"at_timestamp": "2020 10:00 UTC", "format": "yyyy QQ ZZZ"}'},
            ["'initialPosition'", "'QQ' is not a field"],
        ),
        # a zone past Java's ZoneOffset (timezone() raised a bare ValueError)
        (
            {"initialPosition": '{"at_timestamp": "06/25/2020 10:23:45 +99:00"}'},
            ["'initialPosition'", "'+99:00'", "out of range"],
        ),
        # instants the offsets cannot hold (astimezone raised OverflowError)
        ({"startingPosition": "0001-01-01T00:00:00+01:00"}, ["'startingPosition'", "out of range"]),
        ({"startingPosition": "9999-12-31T23:59:59-01:00"}, ["'startingPosition'", "out of range"]),
        # numbers past a Java long or any wait (OverflowError, or an endless wait)
        ({"fetchBufferSize": "9" * 361}, ["'fetchBufferSize'", "(361 characters)"]),
        ({"describeShardInterval": "9" * 400}, ["'describeShardInterval'", "longer than any wait"]),
        ({"maxFetchRecordsPerShard": "9" * 5000}, ["'maxFetchRecordsPerShard'", "Java long"]),
    ],
)
def test_hostile_values_are_the_options_error(options, words):
    with pytest.raises(OptionError) as info:
        SourceOptions.parse({**BASE, **options})
    message = str(info.value)
    assert all(word in message for word in words), message
    assert len(message) < 400


def test_a_timestamp_before_year_1000_keeps_four_digits_and_reads_back():
    position = parse_initial_position("0005-01-01T00:00:00Z", "o")
    assert position == {"ts": "0005-01-01T00:00:00.000000Z"}
    assert start_position(position).timestamp == datetime(5, 1, 1, tzinfo=timezone.utc)


def test_timestamps_keep_microseconds_and_utc():
    position = parse_initial_position("2020-06-25T10:23:45.123456+02:00", "o")
    assert position == {"ts": "2020-06-25T08:23:45.123456Z"}
    assert start_position(position).timestamp == datetime(
        2020, 6, 25, 8, 23, 45, 123456, tzinfo=timezone.utc
    )
