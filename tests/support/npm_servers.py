"""kinesalite and dynalite (npm) as local servers, run like the embedded moto server, and
kinesalite behind a front that speaks enhanced fan-out (:class:`EfoKinesalite`).

They are installed by ``npm ci --prefix tests/npm`` (the README's test command does it);
``serve.js`` binds them to 127.0.0.1 on a free port and exits when our stdin closes.
"""

from __future__ import annotations

import json
import os
import shutil

from kinesis_dstream.local import LocalAWS

#: tests/npm: package.json and the lock file stay where `npm ci --prefix tests/npm` installs.
NPM_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "npm")


class NodeServer(LocalAWS):
    """``kinesalite`` or ``dynalite`` in a child node process; same API as LocalAWS."""

    #: npm packages the server loads (checked before it starts, for a clear error).
    packages: tuple = ()

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self.label = f"{name} (npm)"
        self.packages = self.packages or (name,)

    def arguments(self) -> list:
        """What ``serve.js`` gets after the server's name and port."""
        return []

    def command(self, port: int) -> list:
        node = shutil.which("node")
        missing = [
            package
            for package in self.packages
            if not os.path.isdir(os.path.join(NPM_DIR, "node_modules", package))
        ]
        if node is None or missing:
            raise RuntimeError(
                f"{self.label} is not installed ({', '.join(missing) or 'node'} missing): "
                "run `npm ci --prefix tests/npm` (needs Node.js on PATH)"
            )
        return [node, os.path.join(NPM_DIR, "serve.js"), self.name, str(port), *self.arguments()]


class EfoKinesalite(NodeServer):
    """kinesalite behind a front (``tests/npm/efo/``) that answers enhanced fan-out.

    The front answers Register/Describe/List/DeregisterStreamConsumer and SubscribeToShard
    (event streams boto3 reads: the initial response, SubscribeToShardEvents, a closed
    shard's last event with ``ChildShards`` and no continuation number), and
    UpdateShardCount as a series of SplitShard/MergeShards calls; every other call goes to
    kinesalite unchanged. Same API as LocalAWS (``endpoint_url``, ``env()``,
    ``client()``, ``start``/``stop``, a context manager).

    ``subscription_s``: a subscription's life (Kinesis: 300). ``resubscribe_interval_s``:
    a subscribe call for the same consumer and shard within this of the last successful one
    is ``ResourceInUseException`` (Kinesis: 5); later, it takes the open one over.
    ``consumer_delay_s``: CREATING before ACTIVE, and DELETING before gone.
    ``heartbeat_s``: an empty event at least this often on an idle shard (Kinesis: ~5).
    ``poll_interval_s``: how often a subscription reads kinesalite for new records.
    ``reshard_step_s``: how long kinesalite takes over one SplitShard or MergeShards.
    """

    packages = ("kinesalite", "@smithy/eventstream-codec")

    def __init__(
        self,
        subscription_s: float = 300.0,
        resubscribe_interval_s: float = 5.0,
        consumer_delay_s: float = 0.2,
        heartbeat_s: float = 5.0,
        poll_interval_s: float = 0.15,
        reshard_step_s: float = 0.2,
    ) -> None:
        super().__init__("kinesalite-efo")
        self.label = "kinesalite + enhanced fan-out front (npm)"
        for name, value in locals().items():
            if name.endswith("_s") and not value > 0:
                raise ValueError(f"EfoKinesalite: {name} must be > 0, got {value}")
        self.subscription_s = subscription_s
        self.resubscribe_interval_s = resubscribe_interval_s
        self._options = {
            "lifetimeMs": round(subscription_s * 1000),
            "resubscribeMs": round(resubscribe_interval_s * 1000),
            "consumerActivateMs": round(consumer_delay_s * 1000),
            "consumerDeleteMs": round(consumer_delay_s * 1000),
            "heartbeatMs": round(heartbeat_s * 1000),
            "pollMs": round(poll_interval_s * 1000),
            "reshardStepMs": round(reshard_step_s * 1000),
        }

    def arguments(self) -> list:
        return [json.dumps(self._options)]
