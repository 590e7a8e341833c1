"""The reshard check (benchmarks.reshard) catches what it is there to catch: it must be
able to fail, or the reshard matrix proves nothing."""

import pytest

from benchmarks.reliability import record_data
from benchmarks.reshard import check_reshard, percentile

PARENTS = {"p": (), "c": ("p",)}


def rec(key, seq):
    return record_data(key, seq)


def test_a_clean_run_passes_and_measures_the_lag():
    produced = [("k0", 0), ("k0", 1), ("k0", 2)]
    delivered = [(rec(0, 0), "p", 10.0, 1), (rec(0, 1), "p", 10.0, 1), (rec(0, 2), "c", 10.8, 2)]
    report = check_reshard("ok", produced, delivered, PARENTS, 1.0)
    report.assert_ok()
    assert (report.missing, report.duplicates, report.child_before_parent) == (0, 0, 0)
    assert report.lags_s == [pytest.approx(0.8)]


def test_a_child_in_the_same_batch_as_its_parents_last_record_is_caught():
    produced = [("k0", 0), ("k1", 0)]
    delivered = [(rec(0, 0), "p", 10.0, 1), (rec(1, 0), "c", 10.0, 1)]
    report = check_reshard("same batch", produced, delivered, PARENTS, 1.0)
    assert report.child_before_parent == 1


def test_missing_records_and_a_key_out_of_order_are_caught():
    produced = [("k0", 0), ("k0", 1), ("k0", 2)]
    delivered = [(rec(0, 1), "p", 10.0, 1), (rec(0, 0), "c", 11.0, 2)]
    report = check_reshard("bad", produced, delivered, PARENTS, 1.0)
    assert (report.missing, report.order_violations) == (1, 1)
    try:
        report.assert_ok()
    except AssertionError as failure:
        assert "missing" in str(failure) and "order_violations" in str(failure)
    else:
        raise AssertionError("a report with a missing record passed")


def test_the_percentile_is_the_nearest_rank():
    assert percentile([3.0, 1.0, 2.0, 4.0], 95) == 4.0
    assert percentile([1.0, 2.0], 50) == 1.0
    assert percentile([], 95) == 0.0
