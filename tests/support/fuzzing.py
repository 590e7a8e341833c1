"""The fuzz tier's budget, profile and seed, set up by the suite's root conftest so that
they hold (and the seed is printed in the header) however the suite is run: the whole
suite, a tier, or one file.

Every hypothesis test of the suite runs under one profile: no deadline (a loaded machine
must not fail a test for being slow; each fuzz target bounds its own calls and asserts the
bound), and ``KINESIS_DSTREAM_FUZZ`` examples a test (``short``: 100, hypothesis' own
default; ``long``: 2,000, CI's slow step). The fuzz tier's targets also share the run's
seed: ``--hypothesis-seed`` when given, else one of the run's own, printed in the header
and with each failure, so the failure can be replayed exactly.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import hypothesis
from hypothesis import HealthCheck, settings

BUDGETS = {"short": 100, "long": 2000}
BUDGET = os.environ.get("KINESIS_DSTREAM_FUZZ", "short")
if BUDGET not in BUDGETS:
    raise ValueError(f"KINESIS_DSTREAM_FUZZ={BUDGET!r}: expected one of {sorted(BUDGETS)}")
FUZZ_DIR = Path(__file__).resolve().parents[1] / "fuzz"

settings.register_profile(
    "kinesis_dstream",
    max_examples=BUDGETS[BUDGET],
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.load_profile("kinesis_dstream")

_SEED: list = []


def run_seed(config) -> int:
    """The run's seed for the fuzz targets (chosen once)."""
    if not _SEED:
        given = config.getoption("hypothesis_seed", None)
        _SEED.append(int(given) if given is not None else random.SystemRandom().randrange(2**32))
    return _SEED[0]


def header(config) -> str:
    return (
        f"fuzz tier: {BUDGETS[BUDGET]} examples a target (KINESIS_DSTREAM_FUZZ={BUDGET}); "
        f"replay with --hypothesis-seed={run_seed(config)}"
    )


def is_fuzz_item(item) -> bool:
    return FUZZ_DIR in Path(str(item.fspath)).resolve().parents


def seed_fuzz_targets(config, items) -> None:
    """The fuzz targets draw from the run's seed: the same stream --hypothesis-seed gives."""
    seed = run_seed(config)
    for item in items:
        function = getattr(item, "function", None)
        if getattr(function, "is_hypothesis_test", False) and is_fuzz_item(item):
            hypothesis.seed(seed)(function)


def replay_section(item) -> tuple:
    return ("fuzz seed", f"replay: python -m pytest '{item.nodeid}' --hypothesis-seed={_SEED[0]}")
