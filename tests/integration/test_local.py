"""The embedded local AWS: a real moto server in a child process."""

import socket
import subprocess
import sys

import pytest
from botocore.exceptions import EndpointConnectionError

from kinesis_dstream.local import LocalAWS


def port_is_open(port):
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_start_serves_kinesis_and_dynamodb_and_stop_frees_the_port():
    with LocalAWS() as aws:
        port = aws.port
        assert aws.endpoint_url == f"http://127.0.0.1:{port}"
        kinesis = aws.client("kinesis")
        kinesis.create_stream(StreamName="s", ShardCount=1)
        assert kinesis.list_streams()["StreamNames"] == ["s"]
        assert aws.client("dynamodb").list_tables()["TableNames"] == []
        proc = aws._proc
    assert proc.poll() is not None, "the server process must have exited"
    assert not port_is_open(port)
    with pytest.raises(RuntimeError, match="not started"):
        aws.endpoint_url  # noqa: B018


def test_two_servers_at_once_are_independent():
    with LocalAWS() as first, LocalAWS() as second:
        assert first.port != second.port
        first.client("kinesis").create_stream(StreamName="only-in-first", ShardCount=1)
        assert second.client("kinesis").list_streams()["StreamNames"] == []
        assert first.client("kinesis").list_streams()["StreamNames"] == ["only-in-first"]


def test_env_points_the_sdk_at_the_server():
    with LocalAWS() as aws:
        env = aws.env()
        assert env["AWS_ENDPOINT_URL"] == aws.endpoint_url
        code = (
            "import boto3; c = boto3.client('kinesis'); "
            "c.create_stream(StreamName='via-env', ShardCount=1); print('created')"
        )
        out = subprocess.run(
            [sys.executable, "-c", code],
            env={**env, "PATH": ""},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.stdout.strip() == "created", out.stderr
        assert aws.client("kinesis").list_streams()["StreamNames"] == ["via-env"]


def test_stop_twice_is_harmless_and_calls_then_fail_to_connect():
    aws = LocalAWS().start()
    client = aws.client("kinesis")
    aws.stop()
    aws.stop()
    with pytest.raises(EndpointConnectionError):
        client.list_streams()


def test_a_taken_port_is_a_clear_error():
    with LocalAWS() as aws, pytest.raises(RuntimeError, match="exited before serving"):
        LocalAWS(port=aws.port).start()


def test_bad_port_is_rejected():
    with pytest.raises(ValueError, match="70000"):
        LocalAWS(port=70000)


def test_the_public_endpoint_given_goes_where_the_sdks_settings_say_and_is_said_once(
    local_aws, monkeypatch, caplog, unique_name
):
    # kinesis-asl's signature asks for the endpoint; the Glue console writes it into every
    # table: given literally, it means the region's default, which AWS_ENDPOINT_URL_* moves
    from kinesis_dstream import aws
    from kinesis_dstream.aws import ClientSpec, create_client
    from kinesis_dstream.retrieval.streams import ensure_stream

    monkeypatch.setattr(aws, "_SAID", set())  # what earlier tests' clients said: not ours
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL_KINESIS", local_aws.endpoint_url)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", local_aws.access_key_id)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", local_aws.secret_access_key)
    public = f"https://kinesis.{local_aws.region_name}.amazonaws.com"
    caplog.set_level("INFO", logger="kinesis_dstream.aws")
    client = create_client("kinesis", region_name=local_aws.region_name, endpoint_url=public)
    assert client.meta.endpoint_url == local_aws.endpoint_url
    ensure_stream(client, unique_name, 1)  # a real call reaches the local server
    spec = ClientSpec("kinesis", local_aws.region_name, public)
    summary = spec.client().describe_stream_summary(StreamName=unique_name)
    assert summary["StreamDescriptionSummary"]["StreamName"] == unique_name
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("kinesis endpoint")]
    assert said == [
        f"kinesis endpoint: {local_aws.endpoint_url} (the AWS SDK's choice: "
        "AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL, the shared config, else the region's "
        f"default, in place of the given {public}: the region's default)"
    ]
    # any other URL is used as given, and said so
    other = create_client("dynamodb", region_name="us-east-1", endpoint_url=local_aws.endpoint_url)
    assert other.meta.endpoint_url == local_aws.endpoint_url
    assert f"dynamodb endpoint: {local_aws.endpoint_url} (as given)" in [
        r.getMessage() for r in caplog.records
    ]


def test_a_public_sts_endpoint_given_for_a_role_goes_where_the_sdks_settings_say(
    local_aws, monkeypatch, caplog, unique_name
):
    # Glue's awsSTSEndpoint and createStream's stsEndpointUrl are written as AWS's public
    # endpoint too: AssumeRole then goes where AWS_ENDPOINT_URL_STS says, as every client
    from kinesis_dstream import aws
    from kinesis_dstream.aws import AWSCredentials, ClientSpec
    from kinesis_dstream.retrieval.streams import ensure_stream

    monkeypatch.setattr(aws, "_SAID", set())
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL_STS", local_aws.endpoint_url)
    public_sts = f"https://sts.{local_aws.region_name}.amazonaws.com"
    credentials = AWSCredentials(
        access_key_id=local_aws.access_key_id,
        secret_access_key=local_aws.secret_access_key,
        role_arn="arn:aws:iam::123456789012:role/reader",
        role_session_name="reader",
        sts_endpoint_url=public_sts,
    )
    caplog.set_level("INFO", logger="kinesis_dstream.aws")
    client = ClientSpec("kinesis", local_aws.region_name, local_aws.endpoint_url, credentials)
    ensure_stream(client.client(), unique_name, 1)  # signs with the assumed role's keys
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("sts endpoint")]
    assert said and said[0].startswith(f"sts endpoint: {local_aws.endpoint_url} (the AWS SDK's")
    assert f"in place of the given {public_sts}" in said[0]
