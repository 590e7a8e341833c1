"""The tier's own check: its profile is loaded, and a target runs the whole budget."""

from hypothesis import given, settings
from hypothesis import strategies as st

from ..support.fuzzing import BUDGET, BUDGETS


def test_a_target_runs_the_tiers_budget_with_no_deadline():
    assert settings().deadline is None
    runs = []

    @given(st.binary(min_size=8))
    def target(data):
        runs.append(data)

    target()
    assert len(runs) >= BUDGETS[BUDGET]
