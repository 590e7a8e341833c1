"""The integration tier: local servers on 127.0.0.1 (moto's server, kinesalite, dynalite)
and the command line in subprocesses."""

from __future__ import annotations

from ..support.tiers import mark_tier


def pytest_collection_modifyitems(items):
    mark_tier(items, __file__, "integration")
