"""`kinesis-dstream local-aws`: runs until Ctrl-C and prints what to export."""

import signal
import subprocess
import sys

import boto3


def test_local_aws_command_serves_until_interrupted():
    proc = subprocess.Popen(
        [sys.executable, "-m", "kinesis_dstream.cli", "local-aws"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = []
        while not lines or not lines[-1].startswith("Press Ctrl-C"):
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            lines.append(line.strip())
        exports = dict(
            line.removeprefix("export ").split("=", 1)
            for line in lines
            if line.startswith("export ")
        )
        assert exports["AWS_ENDPOINT_URL"].startswith("http://127.0.0.1:")
        client = boto3.client(
            "kinesis",
            endpoint_url=exports["AWS_ENDPOINT_URL"],
            region_name=exports["AWS_REGION"],
            aws_access_key_id=exports["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=exports["AWS_SECRET_ACCESS_KEY"],
        )
        assert client.list_streams()["StreamNames"] == []
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
