"""The MultiLangDaemon properties file: the KCL's keys, spellings and refusals."""

from __future__ import annotations

import logging
from datetime import datetime, timezone

import pytest

from kinesis_dstream.multilang.java_properties import read_properties_text
from kinesis_dstream.multilang.properties import (
    PropertiesError,
    load_properties,
    parse_properties,
)

SAMPLE = """\
# The script that abides by the multi-language protocol.
executableName = sample_kclpy_app.py
streamArn = arn:aws:kinesis:us-east-5:000000000000:stream/kclpysample
streamName = kclpysample
applicationName = PythonKCLSample
AwsCredentialsProvider = DefaultCredentialsProvider
processingLanguage = python/3.8
initialPositionInStream = TRIM_HORIZON
regionName = us-east-1
#failoverTimeMillis = 10000
"""

MINIMAL = {"executableName": "app.py", "streamName": "s", "applicationName": "a"}


def test_the_kclpy_sample_file(tmp_path):
    path = tmp_path / "sample.properties"
    path.write_text(SAMPLE)
    config = load_properties(str(path))
    assert config.executable_name == "sample_kclpy_app.py"
    assert config.stream_name == "kclpysample"  # from the ARN, which takes precedence
    assert config.application_name == "PythonKCLSample"
    assert config.region_name == "us-east-1"  # regionName beats the ARN's region
    assert config.initial_position == "TRIM_HORIZON"
    assert config.credentials.profile is None
    assert config.processing_language == "python/3.8"
    assert config.failover_time_s == 10.0  # the commented line is not read


def test_java_properties_syntax():
    text = "a = 1\n! comment\nb: two words \\\n   continued\nc=3\n  # indented comment\nd\n"
    assert read_properties_text(text) == {"a": "1", "b": "two words continued", "c": "3", "d": ""}


def test_tuning_keys_and_units():
    config = parse_properties(
        {
            **MINIMAL,
            "failoverTimeMillis": "2000",
            "maxRecords": "500",
            "idleTimeBetweenReadsInMillis": "250",
            "maxLeasesForWorker": "4",
            "maxLeasesToStealAtOneTime": "2",
            "shardSyncIntervalMillis": "5000",
            "workerId": "w-1",
            "kinesisEndpoint": "http://127.0.0.1:1",
            "dynamoDBEndpoint": "http://127.0.0.1:2",
            "timeoutInSeconds": "30",
        }
    )
    assert (config.failover_time_s, config.max_records, config.idle_time_between_reads_s) == (
        2.0,
        500,
        0.25,
    )
    assert (config.max_leases_for_worker, config.max_leases_to_steal) == (4, 2)
    assert config.shard_sync_interval_s == 5.0
    assert config.worker_id == "w-1"
    assert (config.kinesis_endpoint, config.dynamodb_endpoint) == (
        "http://127.0.0.1:1",
        "http://127.0.0.1:2",
    )
    assert config.timeout_s == 30.0


@pytest.mark.parametrize("key", ["AwsCredentialsProvider", "AWSCredentialsProvider"])
def test_both_credential_spellings(key):
    default = parse_properties({**MINIMAL, key: "DefaultAWSCredentialsProviderChain"})
    assert default.credentials.profile is None
    config = parse_properties({**MINIMAL, key: "ProfileCredentialsProvider|analytics"})
    assert config.credentials.profile == "analytics"
    with pytest.raises(PropertiesError, match="EnvironmentVariableCredentialsProvider"):
        parse_properties({**MINIMAL, key: "EnvironmentVariableCredentialsProvider"})


def test_at_timestamp_needs_its_timestamp():
    config = parse_properties(
        {
            **MINIMAL,
            "initialPositionInStream": "AT_TIMESTAMP",
            "initialPositionInStreamExtended": "1636609142",
        }
    )
    assert config.initial_position == "AT_TIMESTAMP"
    assert config.initial_timestamp == datetime(2021, 11, 11, 5, 39, 2, tzinfo=timezone.utc)
    with pytest.raises(PropertiesError, match="initialPositionInStreamExtended"):
        parse_properties({**MINIMAL, "initialPositionInStream": "AT_TIMESTAMP"})
    with pytest.raises(PropertiesError, match="epoch seconds"):
        parse_properties(
            {
                **MINIMAL,
                "initialPositionInStream": "AT_TIMESTAMP",
                "initialPositionInStreamExtended": "yesterday",
            }
        )


def test_known_kcl_keys_are_ignored_with_a_log_line(caplog):
    with caplog.at_level(logging.INFO, logger="kinesis_dstream.multilang"):
        parse_properties({**MINIMAL, "metricsLevel": "NONE", "coordinatorStateTableName": "x"})
    assert "metricsLevel" in caplog.text and "ignored" in caplog.text
    assert "coordinatorStateTableName" in caplog.text


def test_unknown_keys_missing_keys_and_bad_values_are_named():
    with pytest.raises(PropertiesError, match="failoverTimeMilis"):
        parse_properties({**MINIMAL, "failoverTimeMilis": "1"})
    with pytest.raises(PropertiesError, match="applicationName is required"):
        parse_properties({"executableName": "x", "streamName": "s"})
    with pytest.raises(PropertiesError, match="streamName"):
        parse_properties({"executableName": "x", "applicationName": "a"})
    with pytest.raises(PropertiesError, match="maxRecords='20000'"):
        parse_properties({**MINIMAL, "maxRecords": "20000"})
    with pytest.raises(PropertiesError, match="initialPositionInStream='EARLIEST'"):
        parse_properties({**MINIMAL, "initialPositionInStream": "EARLIEST"})
    with pytest.raises(PropertiesError, match="not a Kinesis stream ARN"):
        parse_properties({**MINIMAL, "streamArn": "arn:aws:sqs:us-east-1:1:q"})


NUMERIC_KEYS = [
    "failoverTimeMillis",
    "maxRecords",
    "idleTimeBetweenReadsInMillis",
    "maxPendingProcessRecordsInput",
    "maxCacheByteSize",
    "maxRecordsCount",
    "maxLeasesForWorker",
    "maxLeasesToStealAtOneTime",
    "shardSyncIntervalMillis",
    "timeoutInSeconds",
    "shutdownGraceMillis",
]


@pytest.mark.parametrize("key", NUMERIC_KEYS)
@pytest.mark.parametrize(
    "value",
    ["9" * 400, "9223372036854775808", "-5", "1_000", "5e3", "0x10", "1.5", "\u00b2", "5 000"],
)
def test_a_number_java_does_not_read_is_refused_in_one_line_naming_the_key(key, value, tmp_path):
    """Java's converter reads each of these as 0, silently (checked on KCL 2.5.8's
    configurator); ``int``/``float`` took some, and 400 nines ended in OverflowError."""
    path = tmp_path / "app.properties"
    path.write_text(
        "executableName = app.py\nstreamName = s\napplicationName = a\n"
        f"{key} = {value}\n",
        encoding="utf-8",
    )
    with pytest.raises(PropertiesError) as refused:
        load_properties(str(path))
    message = str(refused.value)
    assert message.startswith(f"{key}=") and "expected an integer" in message
    assert str(path) in message and "\n" not in message and len(message) < 300


@pytest.mark.parametrize(
    ("value", "ms"),
    [
        ("5000", 5000),
        ("+5000", 5000),
        ("\u0665\u0660\u0660\u0660", 5000),  # Java's Long.parseLong reads these digits too
        ("\uff15", 5),
        ("0005", 5),
    ],
)
def test_a_number_java_reads_is_read_as_java_reads_it(value, ms):
    assert parse_properties({**MINIMAL, "shutdownGraceMillis": value}).shutdown_grace_s == ms / 1000


def test_a_time_longer_than_a_thread_can_wait_is_read_as_the_longest_wait(caplog):
    import threading

    forever = str(2**63 - 1)  # a long of milliseconds, meant as "forever"
    config = parse_properties({**MINIMAL, "shutdownGraceMillis": forever})
    assert config.shutdown_grace_s == threading.TIMEOUT_MAX
    assert threading.Lock().acquire(timeout=config.shutdown_grace_s)  # a timeout it takes
    assert "shutdownGraceMillis" in caplog.text and "years" in caplog.text


def test_a_key_that_would_change_what_the_app_sees_is_refused():
    with pytest.raises(PropertiesError, match="callProcessRecordsEvenForEmptyRecordList"):
        parse_properties({**MINIMAL, "callProcessRecordsEvenForEmptyRecordList": "true"})
    parse_properties({**MINIMAL, "callProcessRecordsEvenForEmptyRecordList": "false"})


def test_a_missing_file_names_the_path(tmp_path):
    with pytest.raises(PropertiesError, match=r"nope\.properties"):
        load_properties(str(tmp_path / "nope.properties"))


def test_the_kcl_command_reports_a_bad_file_in_one_line(tmp_path, capsys):
    from kinesis_dstream.cli import main

    path = tmp_path / "app.properties"
    path.write_text(
        "executableName = app.py\nstreamName = s\napplicationName = a\nfailoverTimeMilis = 1000\n"
    )
    assert main(["kcl", "--properties", str(path)]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "failoverTimeMilis" in err and str(path) in err


def test_the_kcl_command_has_help(capsys):
    from kinesis_dstream.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["kcl", "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "--properties" in out and "MultiLangDaemon" in out and "SIGTERM" in out


def test_the_java_daemons_own_file_is_accepted():
    """The KCL 2.x/3.x spellings a Java daemon's file has: workerIdentifier, tableName,
    the scheduler and 3.x/3.5 tuning keys (the Java daemon accepts them all)."""
    config = parse_properties(
        {
            **MINIMAL,
            "workerIdentifier": "host-a",
            "tableName": "shared-leases",
            "schedulerInitializationBackoffTimeMillis": "1000",
            "logWarningForTaskAfterMillis": "60000",
            "migrateAllEntitiesToLeaseTable": "true",
            "tableMigrationCompleteBakeTimeSeconds": "300",
            "leaseTableScanTotalSegments": "4",
            "enablePriorityLeaseAssignment": "true",
            "metricsLevel": "NONE",
            "retrievalMode": "POLLING",
        }
    )
    assert config.worker_id == "host-a"
    assert config.table_name == "shared-leases"
    assert config.retrieval_mode == "POLLING"
    assert parse_properties({**MINIMAL, "workerId": "old-name"}).worker_id == "old-name"
    assert parse_properties(MINIMAL).table_name is None  # the application name's table


@pytest.mark.parametrize(
    "extra, mode",
    [
        ({}, "FANOUT"),  # DEFAULT with no polling property: fan-out, as decideForDefault
        ({"retrievalMode": "default"}, "FANOUT"),
        ({"maxRecords": "500"}, "POLLING"),
        ({"idleTimeBetweenReadsInMillis": "250"}, "POLLING"),
        ({"idleTimeBetweenReadsInMillis": "0"}, "FANOUT"),  # Java counts 0 as not set
        ({"retryGetRecordsInSeconds": "5"}, "POLLING"),
        ({"maxGetRecordsThreadPool": "2"}, "POLLING"),
        ({"retrievalMode": "fanout", "maxRecords": "500"}, "FANOUT"),
        ({"retrievalMode": "POLLING"}, "POLLING"),
    ],
)
def test_retrieval_mode_is_decided_as_the_java_daemon_decides(extra, mode):
    assert parse_properties({**MINIMAL, **extra}).retrieval_mode == mode


def test_a_bad_retrieval_mode_is_named():
    with pytest.raises(PropertiesError, match=r"retrievalMode='push'.*FANOUT, POLLING"):
        parse_properties({**MINIMAL, "retrievalMode": "push"})


def test_fan_out_consumer_properties():
    arn = "arn:aws:kinesis:us-east-1:123456789012:stream/s/consumer/c:1"
    config = parse_properties({**MINIMAL, "consumerArn": arn, "retryBackoffMillis": "100"})
    assert (config.consumer_arn, config.consumer_name) == (arn, None)
    assert parse_properties({**MINIMAL, "consumerName": "c2"}).consumer_name == "c2"
