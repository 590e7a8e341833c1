"""``kinesis-dstream status`` with a stream that does not exist: one line, exit 1.

As a missing lease table is: the lease table exists (with leases), the stream named
does not, and the command must say so once instead of printing a report with the error
on every shard's line. On moto.
"""

from __future__ import annotations

import pytest

from kinesis_dstream.cli import main
from kinesis_dstream.leases import LeaseTable
from kinesis_dstream.leases.lease import Lease
from kinesis_dstream.retrieval.streams import ensure_stream


@pytest.mark.parametrize("output", ["table", "json"])
def test_an_unknown_stream_is_one_line_naming_it_and_exit_1(
    aws_env, unique_name, capsys, output
):
    local_aws = aws_env
    table = LeaseTable(local_aws.client("dynamodb"), unique_name)
    table.create_if_missing()
    for i in range(3):
        assert table.create_lease(Lease(f"shardId-{i:012d}"))
    missing = f"{unique_name}-no-such-stream"
    code = main(
        [
            *("status", "--app", unique_name, "--stream", missing),
            *("--endpoint-url", local_aws.endpoint_url, "--region", local_aws.region_name),
            *(("--json",) if output == "json" else ()),
        ]
    )
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert code == 1 and captured.out == "", captured.out
    assert "\n" not in err and err.startswith("kinesis-dstream: error: "), err
    assert f"stream '{missing}' does not exist" in err and local_aws.endpoint_url in err


def test_a_stream_that_exists_is_reported_as_before(aws_env, unique_name, capsys):
    local_aws = aws_env
    ensure_stream(local_aws.client("kinesis"), unique_name, 1)
    table = LeaseTable(local_aws.client("dynamodb"), unique_name)
    table.create_if_missing()
    assert table.create_lease(Lease("shardId-000000000000"))
    code = main(
        [
            *("status", "--app", unique_name, "--stream", unique_name),
            *("--endpoint-url", local_aws.endpoint_url, "--region", local_aws.region_name),
        ]
    )
    captured = capsys.readouterr()
    assert code == 0 and captured.err == "", captured.err
    assert f"1 shard(s) of stream '{unique_name}'" in captured.out
