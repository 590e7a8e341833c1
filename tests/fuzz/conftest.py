"""The fuzz tier: property-based tests (hypothesis) over every parser of input from outside
the process, each asserting the bad-input rule of ``docs/reliability.md#bad-input``: a
result, a named error of the library's, or a counted corrupt record; never another
exception type, never a call over its bound.

The default run gives each target a short budget (``KINESIS_DSTREAM_FUZZ=short``, 100
examples); CI's slow step runs the tier again with ``KINESIS_DSTREAM_FUZZ=long`` (2,000
examples). The seed is printed in the run's header and with every failure: rerun one with
``python -m pytest tests/fuzz --hypothesis-seed=SEED``. The budget, profile and seed are
set up by the suite's root conftest (``tests/support/fuzzing.py``), so they hold however
the suite is run.
"""

from __future__ import annotations

from ..support.tiers import mark_tier


def pytest_collection_modifyitems(items):
    mark_tier(items, __file__, "fuzz")
