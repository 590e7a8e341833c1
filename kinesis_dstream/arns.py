"""ARNs as AWS takes them: any partition, any account text.

``arn:<partition>:<service>:<region>:<account>:<resource>``, split as AWS's own parsers
split it (botocore's ``ArnParser``): AWS's services check an ARN's parts against what they
hold, not its shape, so an ARN the console or a CDK stack wrote with an unusual account
(Glue Studio scripts carry ``arn:aws:kinesis:eu-west-1:12345678910:stream/metric-stream``)
works there. A stream ARN is refused only where it names no stream (not an ARN, another
service, another resource, no region or name); an account that is not 12 digits is named in
one warning, once per ARN, since a call with it may fail at AWS.
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass
from typing import Optional

from botocore.utils import ArnParser, InvalidArnException

log = logging.getLogger(__name__)

#: What a stream name may be (Kinesis: 1-128 of these).
STREAM_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")
_REGION = re.compile(r"[a-z0-9-]+")
_ACCOUNT = re.compile(r"\d{12}")

_warned: set = set()
_warned_lock = threading.Lock()


@dataclass(frozen=True)
class Arn:
    """An ARN's six parts (the resource whole: ``stream/<name>``, ``role/<name>``...)."""

    partition: str
    service: str
    region: str
    account: str
    resource: str


def parse_arn(text: str) -> Optional[Arn]:
    """The parts of ``text``, None if it is not an ARN of an AWS partition (``aws``,
    ``aws-cn``, ``aws-us-gov``...)."""
    try:
        parts = ArnParser().parse_arn(str(text).strip())
    except InvalidArnException:
        return None
    if not parts["partition"].startswith("aws"):
        return None
    return Arn(
        parts["partition"], parts["service"], parts["region"], parts["account"], parts["resource"]
    )


def note_account(arn: Arn, what: str) -> None:
    """One warning, once per ARN in this process, where its account is not 12 digits."""
    if _ACCOUNT.fullmatch(arn.account):
        return
    text = f"arn:{arn.partition}:{arn.service}:{arn.region}:{arn.account}:{arn.resource}"
    with _warned_lock:
        if text in _warned:
            return
        _warned.add(text)
    log.warning(
        "%s %s: its account %r is not 12 digits; used as given (AWS may refuse it)",
        what,
        text,
        arn.account,
    )


def parse_stream_arn(text: str, what: str = "stream ARN") -> Optional[tuple]:
    """(region, stream name) of a Kinesis stream ARN, None if ``text`` names no stream.

    ``arn:<partition>:kinesis:<region>:<account>:stream/<name>``; any partition, any
    account text (warned once where it is not 12 digits: :func:`note_account`).
    """
    arn = parse_arn(text)
    if arn is None or arn.service != "kinesis":
        return None
    kind, _, name = arn.resource.partition("/")
    if kind != "stream" or not _REGION.fullmatch(arn.region) or not STREAM_NAME.fullmatch(name):
        return None
    note_account(arn, what)
    return arn.region, name


def note_arn(text: Optional[str], what: str) -> None:
    """For an ARN option that is used as given (a role, a consumer): warn once where its
    account is not 12 digits; anything else is left to the service that takes it."""
    if text:
        arn = parse_arn(text)
        if arn is not None:
            note_account(arn, what)
