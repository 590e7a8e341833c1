"""GetRecords as one signed request on a kept-alive connection, with botocore's rules.

A botocore call of GetRecords on an idle shard costs ~1.5 ms of client CPU, nearly all of
it botocore's per-call machinery: parameter validation and serialization, a dozen events,
endpoint rules, the retry handler, urllib3's pool, the response parser. An idle shard is
read about once a second, so that is a core for every ~600 idle shards. This module makes
the same call with what it needs and nothing else:

- the request: ``POST`` of ``{"ShardIterator": ..., "Limit": ...}`` to the endpoint URL
  botocore resolved for the client (``client.meta.endpoint_url``), ``X-Amz-Target``
  ``Kinesis_20131202.GetRecords``, signed by botocore's own SigV4 signer (the class
  botocore signs ``v4`` with: ``SigV4Auth``, or the CRT's where ``awscrt`` is installed)
  with the client's own credentials object (the signer's, so refreshable credentials, an STS role,
  a profile, instance metadata, are refreshed exactly as botocore refreshes them: by
  ``get_frozen_credentials()`` before each signature);
- one connection per concurrent caller, kept alive in a pool, with the client's connect
  and read timeouts;
- a 200 answer decoded by the page decoder (:class:`~.page_decoder.GetRecordsDecoder`,
  which also checks ``x-amz-crc32``); a page it leaves to botocore, and every other answer,
  go through the client's own response parser, and an error raises the same
  ``ClientError`` subclass with the same code and message as the client would (so the
  retry and backoff rules, which key on error codes, work unchanged);
- transport failures raise botocore's own exceptions (``EndpointConnectionError``,
  ``ConnectTimeoutError``, ``ReadTimeoutError``, ``ConnectionClosedError``), as botocore's
  HTTP session maps urllib3's; a kept-alive connection the server closed while idle is
  replaced and the request sent again once (a read: nothing changes on the server).

When it steps aside (every call then goes to ``client.get_records`` unchanged):

- the client has event handlers for GetRecords beyond those it had when this module was
  installed (botocore's own and the page decoder): a test's fault injection
  (``before-call`` returning an error, ``before-parameter-build`` counting calls), a
  user's hook. Checked on every call at the cost of one identity test: botocore replaces
  its handler lookup cache whenever a handler is registered or unregistered;
- at install, anything it does not reproduce: a signature version other than SigV4,
  no credentials, a proxy for the endpoint, a client certificate, botocore retries on
  (the library's clients have them off: one policy, :mod:`..backoff`), a protocol other
  than JSON.

Turned off with ``KINESIS_DSTREAM_LEAN_GET_RECORDS=0`` where clients are built (or
``create_client(..., lean_get_records=False)``). Nothing here logs headers or
credentials.
"""

from __future__ import annotations

import logging
import os
import ssl
import threading
import weakref
from typing import Any, Optional
from urllib.parse import urlsplit

import msgspec
from botocore.auth import AUTH_TYPE_MAPS, _host_from_url
from botocore.awsrequest import AWSRequest, AWSResponse, HeadersDict

from . import keep_alive, page_decoder

log = logging.getLogger(__name__)

#: ``0``, ``false``, ``no`` or ``off`` turns the lean path off for clients built afterwards.
ENVIRONMENT_SWITCH = "KINESIS_DSTREAM_LEAN_GET_RECORDS"
OPERATION = "GetRecords"
_TARGET = "Kinesis_20131202.GetRecords"
_CONTENT_TYPE = "application/x-amz-json-1.1"
_encode = msgspec.json.Encoder().encode


def enabled_by_environment() -> bool:
    """False when :data:`ENVIRONMENT_SWITCH` says ``0``, ``false``, ``no`` or ``off``."""
    value = os.environ.get(ENVIRONMENT_SWITCH, "1").strip().lower()
    return value not in ("0", "false", "no", "off")


def _why_not(client: Any) -> Optional[str]:
    """Why the lean path cannot stand in for ``client``'s GetRecords, or None."""
    model = client.meta.service_model
    if model.service_name != "kinesis":
        return f"service {model.service_name}"
    protocol = getattr(model, "resolved_protocol", None) or model.protocol
    if protocol != "json":
        return f"protocol {protocol}"
    signer = getattr(client, "_request_signer", None)
    if signer is None or signer.signature_version != "v4":
        return "a signature version other than SigV4"
    if client._get_credentials() is None:
        return "no credentials"
    config = client.meta.config
    if (config.retries or {}).get("total_max_attempts", 0) != 1:
        return "botocore retries on"
    if getattr(config, "client_cert", None):
        return "a client certificate"
    session = getattr(client._endpoint, "http_session", None)
    proxies = getattr(session, "_proxy_config", None)
    if session is None or proxies is None:
        return "an HTTP session this module does not know"
    if proxies.proxy_url_for(client.meta.endpoint_url):
        return "a proxy"
    if urlsplit(client.meta.endpoint_url).scheme not in ("http", "https"):
        return f"endpoint {client.meta.endpoint_url}"
    emitter = getattr(client.meta.events, "_emitter", None)
    if not (hasattr(emitter, "_lookup_cache") and hasattr(emitter, "_handlers")):
        return "an event system this module does not know"
    foreign = _foreign_handlers(emitter)
    if foreign:
        # a hook the client had when it was built (moto's mock_aws answers from one,
        # a session's own): bypassing it would send the call elsewhere
        return f"event handlers of its own ({', '.join(foreign)})"
    return None


#: Whose GetRecords handlers the lean path reproduces: botocore's own, the page decoder.
_OWN_HANDLER_MODULES = ("botocore.", f"{page_decoder.__name__}")
#: moto's stubber: on every client of a process that imported moto, answering only while
#: a ``mock_aws`` is on (its ``enabled``), which is looked at on each call.
_MOTO_STUBBER = "moto.core.botocore_stubber"


def _module_of(handler: Any) -> str:
    func = getattr(handler, "func", None)  # functools.partial
    return str(getattr(handler, "__module__", None) or getattr(func, "__module__", None))


def _handlers(emitter: Any) -> list:
    return [h for event in _event_names() for h in emitter._handlers.prefix_search(event)]


def _foreign_handlers(emitter: Any) -> list:
    """The modules of GetRecords' handlers that are neither botocore's, the decoder's
    nor moto's stubber."""
    found: list = []
    for handler in _handlers(emitter):
        module = _module_of(handler)
        own = module.startswith(_OWN_HANDLER_MODULES) or module == _MOTO_STUBBER
        if not own and module not in found:
            found.append(module)
    return found


def _moto_stubbers(emitter: Any) -> list:
    return [h for h in _handlers(emitter) if _module_of(h) == _MOTO_STUBBER]


class LeanGetRecords:
    """GetRecords of one client without botocore's per-call machinery (thread-safe)."""

    def __init__(self, client: Any, exchange: Optional[keep_alive.Exchange] = None) -> None:
        # weakly: this object is the value of a WeakKeyDictionary keyed by the client,
        # and a strong reference back would keep every client (and its sockets) for good
        self._client_ref = weakref.ref(client)
        meta = client.meta
        self._endpoint_url = meta.endpoint_url
        url = urlsplit(self._endpoint_url)
        https = url.scheme == "https"
        path = url.path or "/"
        self._url = f"{url.scheme}://{url.netloc}{path}"
        self._path = path
        # The Host header as the signature has it (botocore's rule: no default port).
        self._host = ("Host", _host_from_url(self._url))
        self._region = meta.region_name
        self._signing_name = meta.service_model.signing_name
        self._credentials = client._get_credentials()
        # The class botocore signs SigV4 with: its own, or the CRT's where awscrt is installed.
        self._signer = AUTH_TYPE_MAPS["v4"]
        self._pool = keep_alive.Pool(
            self._endpoint_url,
            url.hostname or "",
            url.port or (443 if https else 80),
            self._ssl_context(client._endpoint.http_session._verify) if https else None,
            meta.config.connect_timeout,
            meta.config.read_timeout,
            exchange,
        )
        self._operation_model = meta.service_model.operation_model(OPERATION)
        self._output_shape = self._operation_model.output_shape
        #: The client's page decoder; None (it is off): botocore's parser takes every page.
        self._decoder = page_decoder.installed(client)
        self._emitter = meta.events._emitter
        self._handlers = self._handler_snapshot()
        self._stubbers = _moto_stubbers(self._emitter)
        self._checked_cache = self._emitter._lookup_cache
        self._lock = threading.Lock()
        #: Calls answered here, and calls handed to botocore because of new handlers.
        self.calls = 0
        self.calls_handed_to_botocore = 0

    @property
    def _client(self) -> Any:
        client = self._client_ref()
        if client is None:  # only a caller holding the client reaches this object
            raise RuntimeError("lean GetRecords: its client is gone")
        return client

    @staticmethod
    def _ssl_context(verify: Any) -> ssl.SSLContext:
        if verify is False:
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            return context
        from botocore.httpsession import get_cert_path

        path = get_cert_path(verify)
        if path and os.path.isdir(path):
            return ssl.create_default_context(capath=path)
        return ssl.create_default_context(cafile=path)

    def _handler_snapshot(self) -> tuple:
        trie = self._emitter._handlers
        return tuple(tuple(trie.prefix_search(event)) for event in _event_names())

    def _hooks_unchanged(self) -> bool:
        """No handler registered or unregistered since install, beyond a no-op change."""
        cache = self._emitter._lookup_cache
        if cache is self._checked_cache:
            return True
        if self._handler_snapshot() != self._handlers:
            return False
        self._checked_cache = cache  # changed elsewhere (another operation's events)
        return True

    def get_records(self, ShardIterator: str, Limit: int) -> dict:
        """What ``client.get_records(ShardIterator=..., Limit=...)`` returns or raises."""
        if not self._hooks_unchanged() or any(s.enabled for s in self._stubbers):
            with self._lock:
                self.calls_handed_to_botocore += 1
            return self._client.get_records(ShardIterator=ShardIterator, Limit=Limit)
        body = _encode({"ShardIterator": ShardIterator, "Limit": Limit})
        answer = self._pool.post(self._request(body))
        with self._lock:
            self.calls += 1
        status = answer.status
        response = {"status_code": status, "headers": answer.headers, "body": answer.body}
        if status == 200 and self._decoder is not None:
            decoded: dict = {}
            self._decoder(response_dict=response, customized_response_dict=decoded)
            if response["body"] == b"":
                decoded["ResponseMetadata"] = _metadata(status, answer.headers)
                return decoded
        # An error, or a page the decoder leaves to botocore: the client's own parser.
        response["headers"] = HeadersDict(answer.headers)
        parsed = self._client._response_parser.parse(response, self._output_shape)
        parsed.setdefault("ResponseMetadata", {})["RetryAttempts"] = 0
        if status >= 300:
            self._ask_retry_handler(response, parsed)
            code = parsed.get("Error", {}).get("Code")
            raise self._client.exceptions.from_code(code)(parsed, OPERATION)
        return parsed

    def _ask_retry_handler(self, response: dict, parsed: dict) -> None:
        """Emit ``needs-retry`` as botocore does after a first attempt: with retries off
        (checked at install) its handler retries nothing, but marks an error it would have
        retried (``MaxAttemptsReached``), which the error's message then says."""
        http_response = AWSResponse(self._url, response["status_code"], response["headers"], None)
        http_response._content = response["body"]
        self._client.meta.events.emit(
            f"needs-retry.kinesis.{OPERATION}",
            response=(http_response, parsed),
            endpoint=self._client._endpoint,
            operation=self._operation_model,
            attempts=1,
            caught_exception=None,
            request_dict={"context": {}},
        )

    def _request(self, body: bytes) -> keep_alive.Request:
        """The whole HTTP request, signed now (credentials refreshed if they are due)."""
        request = AWSRequest(
            method="POST",
            url=self._url,
            data=body,
            headers={"X-Amz-Target": _TARGET, "Content-Type": _CONTENT_TYPE},
        )
        self._signer(
            self._credentials.get_frozen_credentials(), self._signing_name, self._region
        ).add_auth(request)
        # The CRT's signer adds the Host header it signed; ours comes first, with the same
        # value (botocore's rule for both).
        headers = [self._host]
        headers.extend(item for item in request.headers.items() if item[0].lower() != "host")
        # as http.client asks: the page decoder reads the body as it comes, never gzip
        headers.append(("Accept-Encoding", "identity"))
        headers.append(("Content-Length", str(len(body))))
        return keep_alive.Request("POST", self._path, tuple(headers), body)

    def close(self) -> None:
        """Close the kept-alive connections (new calls open new ones)."""
        self._pool.close()


#: Every event botocore emits in a GetRecords call: a handler on any of them that was
#: not there at install hands the call to botocore.
_EVENT_KINDS = (
    "provide-client-params",
    "before-parameter-build",
    "before-endpoint-resolution",
    "before-call",
    "request-created",
    "choose-signer",
    "before-sign",
    "before-send",
    "response-received",
    "needs-retry",
    "before-parse",
    "after-call",
    "after-call-error",
)


def _event_names() -> tuple:
    return tuple(f"{kind}.kinesis.{OPERATION}" for kind in _EVENT_KINDS)


def _metadata(status: int, headers: dict) -> dict:
    """The ``ResponseMetadata`` botocore adds (request id, status, headers, no retries)."""
    lowered = {key.lower(): value for key, value in headers.items()}
    return {
        "RequestId": lowered.get("x-amzn-requestid", ""),
        "HTTPStatusCode": status,
        "HTTPHeaders": lowered,
        "RetryAttempts": 0,
    }


_INSTALLED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_INSTALLED_LOCK = threading.Lock()


def install(
    client: Any, exchange: Optional[keep_alive.Exchange] = None
) -> Optional[LeanGetRecords]:
    """Make ``client``'s GetRecords calls through :func:`get_records` lean; returns the
    caller, or None (logged at debug level, nothing changed) where it cannot stand in.
    Install after the page decoder: its handler is then one of the client's own.
    ``exchange``: the HTTP of one exchange (the benchmark compares them), else the module's."""
    try:
        reason = _why_not(client)
    except AttributeError as exc:  # a botocore whose internals moved: botocore's path
        reason = f"a botocore this module does not know ({exc})"
    if reason is not None:
        log.debug("lean GetRecords not used for this client: %s", reason)
        return None
    with _INSTALLED_LOCK:
        lean = _INSTALLED.get(client)
        if lean is None:
            lean = _INSTALLED[client] = LeanGetRecords(client, exchange)
        return lean


def installed(client: Any) -> Optional[LeanGetRecords]:
    """The lean caller :func:`install` made for ``client``, if any."""
    return _INSTALLED.get(client)


def get_records(client: Any, shard_iterator: str, limit: int) -> dict:
    """One GetRecords call of ``client``: lean where installed, else boto3's."""
    lean = _INSTALLED.get(client)
    if lean is None:
        return client.get_records(ShardIterator=shard_iterator, Limit=limit)
    return lean.get_records(ShardIterator=shard_iterator, Limit=limit)
