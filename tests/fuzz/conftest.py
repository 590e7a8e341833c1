"""The fuzz tier: property-based tests (hypothesis) over every parser of input from outside
the process, each asserting the bad-input rule of ``docs/reliability.md#bad-input``: a
result, a named error of the library's, or a counted corrupt record; never another
exception type, never a call over its bound.

The default run gives each target a short budget (``KINESIS_DSTREAM_FUZZ=short``, 100
examples); CI's slow step runs the tier again with ``KINESIS_DSTREAM_FUZZ=long`` (2,000
examples). The seed is printed in the run's header and with every failure: rerun one with
``python -m pytest tests/fuzz --hypothesis-seed=SEED``.
"""

from __future__ import annotations

import os
import random

import hypothesis
import pytest
from hypothesis import HealthCheck, settings

from ..support.tiers import mark_tier

_BUDGETS = {"short": 100, "long": 2000}
BUDGET = os.environ.get("KINESIS_DSTREAM_FUZZ", "short")
if BUDGET not in _BUDGETS:
    raise ValueError(f"KINESIS_DSTREAM_FUZZ={BUDGET!r}: expected one of {sorted(_BUDGETS)}")

settings.register_profile(
    "kinesis_dstream_fuzz",
    max_examples=_BUDGETS[BUDGET],
    # a loaded machine must not fail a target for being slow: each target bounds its own
    # calls (time, size) and asserts the bound itself
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.load_profile("kinesis_dstream_fuzz")


#: The run's seed: --hypothesis-seed when given, else one of its own (printed in the header
#: and with each failure, so the failure can be replayed exactly).
_SEED: list = []


def _seed(config) -> int:
    if not _SEED:
        given = config.getoption("hypothesis_seed", None)
        _SEED.append(int(given) if given is not None else random.SystemRandom().randrange(2**32))
    return _SEED[0]


def pytest_report_header(config):
    return (
        f"fuzz tier: {_BUDGETS[BUDGET]} examples a target (KINESIS_DSTREAM_FUZZ={BUDGET}); "
        f"replay with --hypothesis-seed={_seed(config)}"
    )


def pytest_collection_modifyitems(config, items):
    mark_tier(items, __file__, "fuzz")
    seed = _seed(config)
    for item in items:
        function = getattr(item, "function", None)
        is_target = getattr(function, "is_hypothesis_test", False)
        if is_target and item.get_closest_marker("fuzz") is not None:
            # the same random stream as --hypothesis-seed=SEED gives
            hypothesis.seed(seed)(function)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed and item.get_closest_marker("fuzz") is not None and _SEED:
        report.sections.append(
            ("fuzz seed", f"replay: python -m pytest '{item.nodeid}' --hypothesis-seed={_SEED[0]}")
        )
