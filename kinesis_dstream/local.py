"""An embedded local AWS: moto's server on 127.0.0.1, on a free port.

Each :class:`LocalAWS` runs moto's server (its WSGI app under werkzeug, as moto's
``ThreadedMotoServer`` does) in a child Python process.
moto keeps its state in process-wide globals, so two servers in one process would share
streams and tables; a child process per server keeps them apart, keeps moto's work off
the Spark driver's GIL, and is reachable from Spark's Python workers like any endpoint.
The child watches its stdin and exits when the parent closes it or dies, so even a
``kill -9`` of the parent leaves no server behind.

moto's server answers on threads, but moto is not thread-safe: its Kinesis, DynamoDB and
S3 backends read, decide and write shared state without a lock (a shard's next sequence
number, a condition and the update it guards, an object's existence and its creation).
The child therefore runs each of those services' requests one at a time
(:class:`_ServiceLocks`); other services are served as moto serves them. That patches
nothing in moto and only in the server the library starts.
"""

from __future__ import annotations

import logging
import select
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Optional

from .aws import create_client
from .extras import require

log = logging.getLogger(__name__)

#: The line a child prints once it serves: this marker, a space, the bound port.
READY_MARKER = "KINESIS_DSTREAM_LOCAL_AWS_READY"
_START_TIMEOUT_S = 60.0
_STOP_TIMEOUT_S = 10.0
_CHILD_CODE = "from kinesis_dstream.local import _serve; _serve({port}, {services!r})"

#: Dummy credentials accepted by moto; never real secrets.
LOCAL_ACCESS_KEY_ID = "testing"
LOCAL_SECRET_ACCESS_KEY = "testing"
LOCAL_REGION = "us-east-1"

#: moto's services whose requests run one at a time in the server the library starts:
#: each of these backends reads, decides and writes shared state without a lock, and
#: concurrent requests lost acknowledged writes or both won one condition (measured in
#: docs/reliability.md, "The embedded local AWS").
SERIALIZED_SERVICES = ("kinesis", "dynamodb", "s3")


class LocalEndpoint:
    """An AWS endpoint served on 127.0.0.1 once ``port`` is set: its URL, the SDK
    environment that points any AWS tool at it, and boto3 clients for it."""

    label = "local AWS"
    region_name = LOCAL_REGION
    access_key_id = LOCAL_ACCESS_KEY_ID
    secret_access_key = LOCAL_SECRET_ACCESS_KEY
    port: Optional[int] = None

    @property
    def endpoint_url(self) -> str:
        if self.port is None:
            raise RuntimeError(f"{self.label} is not started")
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict:
        """The AWS SDK environment variables that point any AWS tool at this server."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint_url,
            "AWS_ACCESS_KEY_ID": self.access_key_id,
            "AWS_SECRET_ACCESS_KEY": self.secret_access_key,
            "AWS_REGION": self.region_name,
            "AWS_DEFAULT_REGION": self.region_name,
        }

    def client(self, service: str, **kwargs: Any) -> Any:
        """A boto3 client for ``service`` on this server."""
        return create_client(
            service,
            region_name=self.region_name,
            endpoint_url=self.endpoint_url,
            aws_access_key_id=self.access_key_id,
            aws_secret_access_key=self.secret_access_key,
            **kwargs,
        )


class LocalAWS(LocalEndpoint):
    """moto's server in a child process; a context manager yielding itself.

    >>> with LocalAWS() as aws:
    ...     kinesis = aws.client("kinesis")

    ``endpoint_url``, ``region_name``, ``access_key_id`` and ``secret_access_key`` are set
    once started; :meth:`env` gives them as the AWS SDK environment variables.
    """

    def __init__(self, port: int = 0, region_name: str = LOCAL_REGION) -> None:
        if not 0 <= port <= 65535:
            raise ValueError(f"port must be 0 (any free port) or 1-65535, got {port}")
        self.region_name = region_name
        self._requested_port = port
        self._proc: Optional[subprocess.Popen[str]] = None
        self.port: Optional[int] = None

    @property
    def pid(self) -> Optional[int]:
        """The server process's id while it runs (benchmarks tell its CPU from ours)."""
        return None if self._proc is None else self._proc.pid

    #: Names the server in logs and errors; subclasses serving something else change it.
    label = "local AWS (moto)"
    #: The services whose requests the child runs one at a time (benchmarks measure the
    #: cost against a subclass that sets none).
    serialized_services: tuple = SERIALIZED_SERVICES

    def command(self, port: int) -> list:
        """The child process that serves on ``port`` and prints the ready line."""
        require("moto", "local", "the embedded local AWS")  # here: one line, not a child's
        code = _CHILD_CODE.format(port=port, services=tuple(self.serialized_services))
        return [sys.executable, "-c", code]

    def start(self) -> LocalAWS:
        if self._proc is not None:
            raise RuntimeError(f"{self.label} is already started")
        self._proc = subprocess.Popen(
            self.command(self._requested_port),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            self.port = self._await_ready(self._proc)
        except BaseException:
            self.stop()
            raise
        log.info("%s serving at %s", self.label, self.endpoint_url)
        return self

    def _await_ready(self, proc: subprocess.Popen[str]) -> int:
        assert proc.stdout is not None
        deadline = time.monotonic() + _START_TIMEOUT_S
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise RuntimeError(f"{self.label} did not start within {_START_TIMEOUT_S:.0f}s")
            ready, _, _ = select.select([proc.stdout], [], [], remaining)
            if not ready:
                continue
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(
                    f"{self.label} exited before serving (exit code {proc.wait()}); "
                    "its error is on stderr above"
                )
            if line.startswith(READY_MARKER):
                return int(line.split()[1])

    def stop(self) -> None:
        """Stop the server and wait for its process; safe to call twice."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        for close in (proc.stdin, proc.stdout):
            if close is not None:
                close.close()  # the child exits when its stdin closes
        try:
            proc.wait(timeout=_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=_STOP_TIMEOUT_S)
        self.port = None

    def __enter__(self) -> LocalAWS:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _ServiceLocks:
    """moto's dispatcher (a WSGI app) with one lock per serialized service: a request to
    one of them runs alone among that service's requests, start to answer built.

    A lock per service, not one for the server: services share no state in moto, so
    DynamoDB's lease renewals never wait behind a long Kinesis GetRecords. Reads take
    the lock too: moto's reads iterate what its writes change (a shard's records, a
    table's items), and under the child's one GIL concurrent reads would gain nothing.
    """

    def __init__(self, dispatcher: Any, services: tuple = SERIALIZED_SERVICES) -> None:
        self._dispatcher = dispatcher
        self._locks = {service: threading.Lock() for service in services}

    def __call__(self, environ: dict, start_response: Any) -> Any:
        app = self._dispatcher.get_application(environ)  # moto's own routing, its own lock
        lock = self._locks.get(getattr(app, "service", None))
        if lock is None:
            return app(environ, start_response)
        with lock:
            return app(environ, start_response)


def _serve(port: int, services: tuple = SERIALIZED_SERVICES) -> None:
    """Child-process entry: serve until stdin closes (parent stopped us or died).

    This is moto's ThreadedMotoServer built by hand: that class waits forever for a
    server that failed to bind, where werkzeug's ``make_server`` here exits at once with
    its "port in use" message, which the parent reports. ``services`` are run one request
    at a time (benchmarks pass none to measure what that costs).
    """
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
    # A terminal's Ctrl-C reaches every process of its group: the parent decides when the
    # server stops (a command stopping gracefully may still need it) and closes stdin then.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from moto.moto_server import werkzeug_app
    from werkzeug.serving import make_server

    # A newer moto keeps S3 metadata keys' underscores through its own handler; an older
    # moto serves with werkzeug's, as its ThreadedMotoServer then did.
    handler = getattr(werkzeug_app, "MotoRequestHandler", None)
    dispatcher = werkzeug_app.DomainDispatcherApplication(werkzeug_app.create_backend_app)
    app = _ServiceLocks(dispatcher, services)
    server = make_server("127.0.0.1", port, app, threaded=True, request_handler=handler)
    thread = threading.Thread(target=server.serve_forever, name="moto-server", daemon=True)
    thread.start()
    print(f"{READY_MARKER} {server.server_address[1]}", flush=True)
    try:
        sys.stdin.read()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
        thread.join(timeout=_STOP_TIMEOUT_S)
