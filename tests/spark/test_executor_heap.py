"""Python workers freeze their long-lived heap; the driver and other processes never do."""

import gc

import pytest

from kinesis_dstream import executor_heap
from kinesis_dstream.aws import ClientSpec


def _client_in_worker(spec):
    def probe(_):
        import gc

        before = gc.get_freeze_count()
        client = spec.client()  # built here, or by an earlier task of this worker
        tracked = {id(o) for o in gc.get_objects()}
        yield (id(client) in tracked, before, gc.get_freeze_count())

    return probe


@pytest.mark.spark
def test_a_spark_worker_that_built_a_client_leaves_it_out_of_every_collection(spark, local_aws):
    # a spec no other test builds (its read timeout), so the first task in each worker
    # builds the client here
    spec = ClientSpec("kinesis", local_aws.region_name, local_aws.endpoint_url, read_timeout_s=29.5)
    results = spark.parallelize(range(4), 4).mapPartitions(_client_in_worker(spec)).collect()
    assert len(results) == 4
    for client_tracked, _, frozen in results:
        assert not client_tracked  # frozen: PySpark's per-task gc.collect() skips it
        assert frozen > 50_000  # botocore's models and the imports
    assert any(after > before for _, before, after in results)  # a build froze, here


def test_the_driver_never_freezes(local_aws):
    before = gc.get_freeze_count()
    spec = ClientSpec("kinesis", local_aws.region_name, local_aws.endpoint_url, read_timeout_s=7)
    spec.client()
    assert executor_heap.freeze_heap_once() is False
    assert gc.get_freeze_count() == before


def test_the_environment_variable_turns_freezing_off(monkeypatch):
    monkeypatch.setattr(executor_heap, "_in_spark_task", lambda: True)
    monkeypatch.setenv(executor_heap.FREEZE_ENV, "0")
    before = gc.get_freeze_count()
    assert executor_heap.freeze_heap() is False
    assert gc.get_freeze_count() == before
    monkeypatch.delenv(executor_heap.FREEZE_ENV)
    try:
        assert executor_heap.freeze_heap() is True
        assert gc.get_freeze_count() > before
    finally:
        gc.unfreeze()
        executor_heap._frozen_pids.clear()
