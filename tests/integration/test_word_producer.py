"""The word producer, run as its users run it: the console script and main()."""

import subprocess
import sys
from collections import Counter

from kinesis_dstream.demo import word_producer
from kinesis_dstream.demo.readback import read_all_records
from kinesis_dstream.retrieval.streams import ensure_stream


def parse_totals(text, title="Totals for the words sent"):
    lines = text.splitlines()
    start = lines.index(title) + 1
    totals = Counter()
    for line in lines[start:]:
        if not line.startswith("("):
            break
        word, count = line.strip("()").split(", ")
        totals[word] = int(count)
    return totals


def test_printed_totals_equal_the_words_in_the_stream(
    local_aws, kinesis, unique_name, capsys, monkeypatch
):
    for name, value in local_aws.env().items():
        monkeypatch.setenv(name, value)
    ensure_stream(kinesis, unique_name, 2)
    code = word_producer.main(
        [
            unique_name,
            local_aws.endpoint_url,
            "300",
            "5",
            "--rounds",
            "2",
            "--seed",
            "3",
            "--region",
            local_aws.region_name,
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert out.count("Sent 300 records") == 2
    printed = parse_totals(out)
    assert sum(printed.values()) == 300 * 2 * 5
    assert set(printed) <= set(word_producer.WORDS)
    in_stream = Counter()
    for record in read_all_records(kinesis, unique_name):
        in_stream.update(record["Data"].decode().split(" "))
    assert printed == in_stream


def run_script(args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "kinesis_dstream.demo.word_producer", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_non_integer_rate_is_a_usage_error_exit_2():
    result = run_script(["s", "http://127.0.0.1:1", "fast", "5"])
    assert result.returncode == 2
    assert "usage:" in result.stderr and "records-per-sec" in result.stderr


def test_zero_words_is_a_usage_error_exit_2():
    result = run_script(["s", "http://127.0.0.1:1", "10", "0"])
    assert result.returncode == 2
    assert "words-per-record must be a positive integer" in result.stderr


def test_missing_positionals_without_local_are_a_usage_error():
    result = run_script(["s"])
    assert result.returncode == 2 and "required" in result.stderr


def test_unknown_stream_is_one_clear_line_naming_stream_and_endpoint(local_aws, unique_name):
    env = {**local_aws.env(), "PATH": ""}
    result = run_script([unique_name, local_aws.endpoint_url, "10", "2"], env=env)
    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert unique_name in lines[0] and local_aws.endpoint_url in lines[0]


def test_create_stream_creates_it_with_the_shards_asked(local_aws, kinesis, unique_name):
    env = {**local_aws.env(), "PATH": ""}
    result = run_script(
        [
            unique_name,
            local_aws.endpoint_url,
            "50",
            "3",
            "--rounds",
            "1",
            "--create-stream",
            "--shards",
            "3",
        ],
        env=env,
    )
    assert result.returncode == 0, result.stderr
    summary = kinesis.describe_stream_summary(StreamName=unique_name)["StreamDescriptionSummary"]
    assert summary["OpenShardCount"] == 3
    assert len(read_all_records(kinesis, unique_name)) == 50


def test_local_mode_reads_back_and_checks():
    result = run_script(["--local", "--rounds", "2", "--seed", "5"])
    assert result.returncode == 0, result.stderr
    assert parse_totals(result.stdout) == parse_totals(
        result.stdout, "Totals for the words read back from the stream"
    )
    assert "OK: the stream holds exactly the words sent" in result.stdout


def test_local_mode_with_aggregate_reads_back_every_word():
    result = run_script(["--local", "--aggregate", "--rounds", "1", "--seed", "6"])
    assert result.returncode == 0, result.stderr
    assert sum(parse_totals(result.stdout).values()) == 1000 * 10
    assert "OK: the stream holds exactly the words sent" in result.stdout


def test_glue_registry_records_are_framed_and_read_back(capsys):
    code = word_producer.main(
        ["--local", "--rounds", "1", "--seed", "5", "--glue-registry", "words", "--zlib"]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    # read back by decoding each record's registry frame and Avro datum
    assert parse_totals(out) == parse_totals(out, "Totals for the words read back from the stream")
    assert "OK: the stream holds exactly the words sent" in out


def test_zlib_without_a_registry_is_a_usage_error():
    result = run_script(["--local", "--zlib"])
    assert result.returncode == 2 and "give --glue-registry" in result.stderr
