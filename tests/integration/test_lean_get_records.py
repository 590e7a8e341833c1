"""The lean GetRecords path answers as the client's own call does, on real servers.

Every test checks the lean path did answer (``calls``), or did step aside
(``calls_handed_to_botocore``): a silent hand-over to botocore would pass any comparison.
"""

import json
import socket
import threading
from datetime import datetime, timedelta, timezone

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials, RefreshableCredentials
from botocore.exceptions import ClientError, EndpointConnectionError

from kinesis_dstream.aws import create_client
from kinesis_dstream.backoff import Backoff
from kinesis_dstream.retrieval import lean_get_records
from kinesis_dstream.retrieval.reader import ReaderConfig, ShardReader, StartPosition
from kinesis_dstream.retrieval.streams import ensure_stream, list_shards, wait_active
from tests.support.faults import CallErrors

FAST = ReaderConfig(min_call_interval_s=0.0, backoff=Backoff(0.001, 0.01, max_attempts=5))


@pytest.fixture(params=["moto", pytest.param("kinesalite", marks=pytest.mark.kinesalite)])
def server(request):
    return request.getfixturevalue("local_aws" if request.param == "moto" else "kinesalite")


def _stream(client, name, records=0):
    ensure_stream(client, name, 1)
    wait_active(client, name)
    shard_id = list_shards(client, name)[0]["ShardId"]
    if records:
        client.put_records(
            StreamName=name,
            Records=[{"Data": f"r{i}".encode(), "PartitionKey": f"k{i}"} for i in range(records)],
        )
    return shard_id


def _iterator(client, name, shard_id):
    return client.get_shard_iterator(
        StreamName=name, ShardId=shard_id, ShardIteratorType="TRIM_HORIZON"
    )["ShardIterator"]


def test_pages_are_the_clients_pages(server, unique_name):
    client = server.client("kinesis")
    lean = lean_get_records.installed(client)
    assert lean is not None
    shard_id = _stream(client, unique_name, records=25)
    ours = lean.get_records(ShardIterator=_iterator(client, unique_name, shard_id), Limit=10)
    theirs = client.get_records(ShardIterator=_iterator(client, unique_name, shard_id), Limit=10)
    assert lean.calls == 1
    assert ours["Records"] == theirs["Records"] and len(ours["Records"]) == 10
    assert ours.get("MillisBehindLatest") == theirs.get("MillisBehindLatest")
    assert ours["ResponseMetadata"]["HTTPStatusCode"] == 200
    # the next page from our iterator continues where ours ended
    following = lean.get_records(ShardIterator=ours["NextShardIterator"], Limit=100)
    assert [r["Data"] for r in following["Records"]] == [f"r{i}".encode() for i in range(10, 25)]


def test_errors_are_the_clients_errors(server, unique_name):
    client = server.client("kinesis")
    lean = lean_get_records.installed(client)
    _stream(client, unique_name)
    bad = "AAAAAAAAAAE" + "x" * 40
    with pytest.raises(ClientError) as ours:
        lean.get_records(ShardIterator=bad, Limit=10)
    with pytest.raises(ClientError) as theirs:
        client.get_records(ShardIterator=bad, Limit=10)
    assert lean.calls == 1
    assert type(ours.value) is type(theirs.value)
    assert ours.value.response["Error"] == theirs.value.response["Error"]
    assert str(ours.value) == str(theirs.value)


def test_injected_faults_hand_the_call_to_botocore(local_aws, unique_name):
    """A hook registered after the client was built (a test's fault, a user's hook)
    makes the reader's calls botocore's again, so the fault reaches the reader."""
    client = local_aws.client("kinesis")
    lean = lean_get_records.installed(client)
    shard_id = _stream(client, unique_name, records=3)
    faults = CallErrors(
        client,
        "kinesis",
        "GetRecords",
        lambda n: "ProvisionedThroughputExceededException" if n < 2 else None,
    )
    reader = ShardReader(client, unique_name, shard_id, StartPosition.trim_horizon(), config=FAST)
    batch = reader.read(max_calls=1)
    assert [r.data for r in batch.records] == [b"r0", b"r1", b"r2"]
    assert faults.injected == 2 and reader.transport.throttles == 2
    assert lean.calls == 0 and lean.calls_handed_to_botocore == 3
    faults.remove()
    reader.read(max_calls=1)
    assert lean.calls == 1  # the hook gone, the lean path is back


def test_refreshable_credentials_refresh_as_botocore_refreshes_them(local_aws, unique_name):
    import boto3
    import botocore.session

    refreshes = []

    def now():
        return datetime.now(timezone.utc)

    def refresh():
        refreshes.append(1)
        return {
            "access_key": f"AKIDREFRESHED{len(refreshes)}",
            "secret_key": "testing",
            "token": None,
            # inside botocore's advisory window (15 min), outside its mandatory one
            # (10 min): every use refreshes them, and the refreshed ones are usable
            "expiry_time": (now() + timedelta(minutes=12)).isoformat(),
        }

    core = botocore.session.Session()
    core._credentials = RefreshableCredentials.create_from_metadata(
        refresh(), refresh, "test-refresh"
    )
    session = boto3.session.Session(botocore_session=core)
    client = create_client(
        "kinesis",
        region_name=local_aws.region_name,
        endpoint_url=local_aws.endpoint_url,
        session=session,
    )
    lean = lean_get_records.installed(client)
    shard_id = _stream(local_aws.client("kinesis"), unique_name, records=1)
    iterator = _iterator(local_aws.client("kinesis"), unique_name, shard_id)
    before = len(refreshes)
    page = lean.get_records(ShardIterator=iterator, Limit=10)
    assert [r["Data"] for r in page["Records"]] == [b"r0"]
    assert lean.calls == 1
    assert len(refreshes) > before  # the signer's own credentials object refreshed


def test_a_server_that_is_gone_raises_botocores_connection_error(local_aws):
    client = create_client(
        "kinesis",
        region_name="us-east-1",
        endpoint_url="http://127.0.0.1:9",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    lean = lean_get_records.installed(client)
    with pytest.raises(EndpointConnectionError):
        lean.get_records(ShardIterator="x" * 40, Limit=10)


class ClosingServer:
    """An HTTP/1.1 server that answers one GetRecords per connection, then closes it
    without saying so (as a server does with a connection idle past its timeout)."""

    PAGE = b'{"Records":[],"NextShardIterator":"next","MillisBehindLatest":0}'

    def __init__(self):
        self.connections = 0
        self.requests = []  # (head, body) as received
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self.endpoint_url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="closing-server")
        self._thread.start()

    def _serve(self):
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except socket.timeout:
                continue
            self.connections += 1
            with conn:
                conn.settimeout(10)
                received = b""
                while b"\r\n\r\n" not in received:
                    received += conn.recv(65536)
                head, _, body = received.partition(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                while len(body) < length:
                    body += conn.recv(65536)
                self.requests.append((head.decode("latin-1"), body))
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/x-amz-json-1.1\r\n"
                    b"Content-Length: %d\r\n\r\n%s" % (len(self.PAGE), self.PAGE)
                )

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=10)
        self._listener.close()

    def client(self, path="", access_key_id="testing"):
        """A Kinesis client of the library's (the lean path installed) for this server."""
        return create_client(
            "kinesis",
            region_name="us-east-1",
            endpoint_url=self.endpoint_url + path,
            aws_access_key_id=access_key_id,
            aws_secret_access_key="testing",
        )


def test_a_connection_closed_while_idle_is_replaced():
    server = ClosingServer()
    try:
        client = server.client()
        lean = lean_get_records.installed(client)
        pages = [lean.get_records(ShardIterator="first", Limit=10) for _ in range(3)]
        assert [p["NextShardIterator"] for p in pages] == ["next"] * 3
        assert lean.calls == 3 and server.connections == 3
    finally:
        server.stop()


def test_a_retry_after_a_stale_connection_opens_a_new_one():
    """(review) The retry after a connection the server had closed took the next idle
    one, stale too after the same idle spell: the call failed with ConnectionClosedError."""
    server = ClosingServer()
    try:
        client = server.client()
        lean = lean_get_records.installed(client)
        lean.get_records(ShardIterator="first", Limit=10)  # leaves one idle, now stale
        second = lean._pool._connect()
        second.exchange(lean._request(b'{"ShardIterator": "x", "Limit": 1}'))
        lean._pool._idle.append(second)  # two idle connections, both closed by the server
        page = lean.get_records(ShardIterator="again", Limit=10)
        assert page["NextShardIterator"] == "next" and server.connections == 3
    finally:
        server.stop()


def test_hooks_a_client_has_when_it_is_built_keep_its_calls_on_botocore():
    """(review) moto's mock_aws answers from a before-send hook the client has from the
    start: the lean path sent GetRecords past it, to the real endpoint."""
    from moto import mock_aws

    with mock_aws():
        client = create_client("kinesis", region_name="us-east-1")
        client.create_stream(StreamName="mocked", ShardCount=1)
        shard = client.list_shards(StreamName="mocked")["Shards"][0]["ShardId"]
        iterator = client.get_shard_iterator(
            StreamName="mocked", ShardId=shard, ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        client.put_record(StreamName="mocked", Data=b"x", PartitionKey="k")
        assert [r["Data"] for r in client.get_records(ShardIterator=iterator)["Records"]] == [b"x"]
        lean = lean_get_records.installed(client)
        if lean is not None:  # moto's stubber is on every client once moto is imported
            page = lean_get_records.get_records(client, iterator, 10)
            assert [r["Data"] for r in page["Records"]] == [b"x"]
            assert lean.calls == 0 and lean.calls_handed_to_botocore >= 1


def test_a_client_with_the_lean_path_is_freed_with_its_connections():
    """(review) The registry of lean callers held each client for good."""
    import gc
    import weakref

    client = create_client(
        "kinesis",
        region_name="us-east-1",
        endpoint_url="http://127.0.0.1:9",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    assert lean_get_records.installed(client) is not None
    gone = weakref.ref(client)
    del client
    gc.collect()
    assert gone() is None


def test_the_request_on_the_wire_carries_a_valid_signature():
    """What a SigV4 verifier computes from the bytes received (method, path, the headers
    the request says it signed, the body, its own date) is the request's signature."""
    server = ClosingServer()
    try:
        client = server.client("/", access_key_id="AKIDTESTING")
        lean_get_records.installed(client).get_records(ShardIterator="it", Limit=7)
    finally:
        server.stop()
    [(head, body)] = server.requests
    request_line, *lines = head.split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines)
    assert len({line.split(":")[0].lower() for line in lines}) == len(lines)  # no repeats
    scheme, _, fields = headers["Authorization"].partition(" ")
    parts = dict(field.strip().split("=", 1) for field in fields.split(","))
    signed = parts["SignedHeaders"].split(";")
    assert scheme == "AWS4-HMAC-SHA256" and {"host", "x-amz-date", "x-amz-target"} <= set(signed)
    assert parts["Credential"].startswith("AKIDTESTING/") and parts["Credential"].endswith(
        "/us-east-1/kinesis/aws4_request"
    )
    method, path, _ = request_line.split(" ")
    kept = {name: value for name, value in headers.items() if name.lower() in signed}
    check = AWSRequest(method=method, url=server.endpoint_url + path, data=body, headers=kept)
    check.context["timestamp"] = headers["X-Amz-Date"]
    verifier = SigV4Auth(Credentials("AKIDTESTING", "testing"), "kinesis", "us-east-1")
    canonical = verifier.canonical_request(check)
    expected = verifier.signature(verifier.string_to_sign(check, canonical), check)
    assert parts["Signature"] == expected
    assert json.loads(body) == {"ShardIterator": "it", "Limit": 7}


def test_off_switch(local_aws, monkeypatch):
    assert lean_get_records.installed(local_aws.client("kinesis", lean_get_records=False)) is None
    monkeypatch.setenv(lean_get_records.ENVIRONMENT_SWITCH, "0")
    assert lean_get_records.installed(local_aws.client("kinesis")) is None
