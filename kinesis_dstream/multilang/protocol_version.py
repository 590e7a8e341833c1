"""Which version of the multilang protocol a child speaks, and what each event becomes.

The Java MultiLangDaemon's messages changed twice, and a child's amazon-kclpy decodes only
the actions of its own era (any other kills it: kclpy 1.4's ``dispatch`` raises
``KeyError: 'k'`` formatting its own error message). Everything else (``initialize``,
``processRecords`` and its records' fields, ``checkpoint`` and its answers, ``status``)
is the same in every version, checked in KCL 1.7.5's ``messages/`` and ``MultiLangProtocol``.

- ``KCL_2X``: a shard's end is ``shardEnded``; a lost lease ``leaseLost`` (no
  checkpointer: a request is answered ``InvalidStateException``); a stop
  ``shutdownRequested`` (it may checkpoint), then ``leaseLost``.
- ``KCL_1X_GRACEFUL``: a shard's end is ``shutdown`` TERMINATE; a lost lease ``shutdown``
  ZOMBIE (a request is answered ``ShutdownException``); a stop ``shutdownRequested``,
  then ``shutdown`` ZOMBIE.
- ``KCL_1X``: as ``KCL_1X_GRACEFUL``, but a stop is ``shutdown`` ZOMBIE alone.

``KCL_2X`` is KCL 2.x and 3.x (amazon-kclpy 2.x, 3.x). ``KCL_1X_GRACEFUL`` is KCL 1.7.6 to
the end of 1.x (amazon-kclpy 1.5.x, KCL 1.9.3), whose graceful shutdown sends
``shutdownRequested`` and then, the lease given up, ``shutdown`` ZOMBIE. ``KCL_1X`` is KCL
1.0 to 1.7.5 (amazon-kclpy 1.0 to 1.4.x): that daemon had no graceful stop (SIGTERM ended
the JVM and its children read the end of their input); here such a child is told
``shutdown`` ZOMBIE at a stop, the one message of its era for "this lease is no longer
yours" (it is released), so it ends through its own shutdown code, and then its stdin
closes.

In 1.x ``shutdown`` TERMINATE's checkpointer allows ``SHARD_END`` (a checkpoint without
arguments is the largest position allowed, which TERMINATE makes ``SHARD_END``); ZOMBIE's
checkpointer belongs to a lease no longer held, so every request is answered
``ShutdownException``, as the KCL 1.x lease coordinator answers it.
"""

from __future__ import annotations

import enum
import logging
import re
from dataclasses import dataclass, replace
from typing import Any, Optional

from . import messages

log = logging.getLogger(__name__)

#: The properties key that declares the version (absent or ``AUTO``: found from the child).
PROPERTY = "multiLangProtocol"
AUTO = "AUTO"


class ProtocolVersion(enum.Enum):
    KCL_2X = "KCL_2X"
    KCL_1X_GRACEFUL = "KCL_1X_GRACEFUL"
    KCL_1X = "KCL_1X"

    @property
    def is_kcl1(self) -> bool:
        return self is not ProtocolVersion.KCL_2X


@dataclass(frozen=True)
class Dialect:
    """What the daemon's events become for a child of one protocol version."""

    shard_end: dict
    lease_lost: dict
    #: Whether the child may ask to checkpoint while it handles ``lease_lost`` (KCL 1.x:
    #: yes, and the lost lease answers ``ShutdownException``; KCL 2.x: no checkpointer).
    lease_lost_checkpoints: bool
    #: A stop's first message (the child may checkpoint); None: the child knows none.
    shutdown_requested: Optional[dict]

    @property
    def shard_end_name(self) -> str:
        return _name(self.shard_end)


def _name(message: dict) -> str:
    reason = message.get("reason")
    return f"{message['action']} {reason}" if reason else message["action"]


DIALECTS = {
    ProtocolVersion.KCL_2X: Dialect(
        messages.shard_ended(), messages.lease_lost(), False, messages.shutdown_requested()
    ),
    ProtocolVersion.KCL_1X_GRACEFUL: Dialect(
        messages.shutdown(messages.TERMINATE),
        messages.shutdown(messages.ZOMBIE),
        True,
        messages.shutdown_requested(),
    ),
    ProtocolVersion.KCL_1X: Dialect(
        messages.shutdown(messages.TERMINATE), messages.shutdown(messages.ZOMBIE), True, None
    ),
}

#: The values ``multiLangProtocol`` takes (any case).
VALUES = (AUTO, *(version.value for version in ProtocolVersion))


def parse_declared(raw: Optional[str]) -> Optional[ProtocolVersion]:
    """The declared version; None for none or ``AUTO``; ValueError naming the values."""
    value = (raw or AUTO).strip().upper()
    if value == AUTO:
        return None
    try:
        return ProtocolVersion(value)
    except ValueError:
        raise ValueError(f"expected one of {', '.join(VALUES)}") from None


def from_actions(actions: Any) -> ProtocolVersion:
    """The version of a child whose amazon_kclpy decodes ``actions``."""
    known = set(actions)
    if {messages.LEASE_LOST, messages.SHARD_ENDED} <= known:
        return ProtocolVersion.KCL_2X
    if messages.SHUTDOWN_REQUESTED in known:
        return ProtocolVersion.KCL_1X_GRACEFUL
    return ProtocolVersion.KCL_1X


def from_kclpy_version(version: str) -> Optional[ProtocolVersion]:
    """The version amazon-kclpy ``version`` speaks (1.5 added shutdownRequested, 2.0 the
    KCL 2.x messages); None if ``version`` is not a version number."""
    match = re.match(r"(\d+)\.(\d+)", version)
    if match is None:
        return None
    major, minor = int(match[1]), int(match[2])
    if major >= 2:
        return ProtocolVersion.KCL_2X
    return ProtocolVersion.KCL_1X_GRACEFUL if minor >= 5 else ProtocolVersion.KCL_1X


#: The region of an AWS Kinesis endpoint (``kinesis.<region>.amazonaws.com[.cn]``).
_AWS_KINESIS_ENDPOINT = re.compile(
    r"(?:https?://)?kinesis(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?/?", re.IGNORECASE
)
#: The KCL 1.x clients' region when the file names none (the AWS SDK 1.x's default).
KCL1_DEFAULT_REGION = "us-east-1"


def kcl1_config(config: Any, version: ProtocolVersion) -> Any:
    """``config`` as a KCL 1.x daemon read the same file, for a child of ``version``.

    KCL 1.x's clients were the AWS SDK 1.x's, built without a region unless ``regionName``
    gave one: their endpoints were us-east-1's whatever the environment said, or
    ``kinesisEndpoint``'s region. And KCL 1.x only polled: a file of its era sets no
    ``retrievalMode``, which KCL 2.x's rule reads as enhanced fan-out when no polling key
    is set; here it reads by polling, as it did (an explicit ``retrievalMode`` wins).
    """
    if not version.is_kcl1:
        return config
    changes: dict = {}
    if not config.region_name:
        endpoint = _AWS_KINESIS_ENDPOINT.fullmatch((config.kinesis_endpoint or "").strip())
        region = endpoint[1] if endpoint else KCL1_DEFAULT_REGION
        log.info(
            "no regionName: region %s, as the KCL 1.x daemon of a %s child used (%s)",
            region,
            version.value,
            "kinesisEndpoint's" if endpoint else "the AWS SDK 1.x's default",
        )
        changes["region_name"] = region
    if config.retrieval_mode == "FANOUT" and not config.retrieval_mode_declared:
        log.info(
            "no retrievalMode: reading by polling (GetRecords), as the KCL 1.x daemon of a "
            "%s child did; add retrievalMode = FANOUT to read with SubscribeToShard",
            version.value,
        )
        changes["retrieval_mode"] = "POLLING"
    return replace(config, **changes) if changes else config
