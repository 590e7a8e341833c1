"""The unit tier: no server, no Spark, no daemon process; the whole tier runs in well under
two minutes (``python -m pytest tests/unit`` or ``-m unit``)."""

from __future__ import annotations

import pytest

from ..support.tiers import mark_tier

# The Glue layer runs on the Structured Streaming source, which needs PySpark >= 4.2 (its
# pyspark.sql.streaming.datasource); on an older PySpark (3.5 on Python 3.9, the version
# matrix's lowest) the layer is refused and its tests' modules cannot be imported: they are
# not collected, and the summary says so.
try:
    import pyspark.sql.streaming.datasource  # noqa: F401

    collect_ignore_glob: list = []
except ImportError:
    # the batch reader too: its plan's partitions are the Data Source API's
    collect_ignore_glob = ["test_glue_*.py", "test_batch_*.py"]


def pytest_terminal_summary(terminalreporter):
    if collect_ignore_glob:
        import pyspark

        terminalreporter.write_line(
            f"unit tier: PySpark {pyspark.__version__} has no Data Source API with admission "
            "control (>= 4.2), which the Glue layer and batch reads need: "
            f"{', '.join(collect_ignore_glob)} not collected"
        )


#: Fixtures that start a server, Spark or a peer: a test asking for one belongs to another tier.
NOT_HERE = frozenset(
    {
        "local_aws",
        "kinesis",
        "stream",
        "kinesalite",
        "dynalite",
        "dynamodb_server",
        "dynamodb",
        "ministack",
        "mini",
        "efo_kinesalite",
        "efo",
        "spark",
        "session",
        "ssc",
        "kclpy",
        "aws_env",
    }
)


def pytest_collection_modifyitems(items):
    mark_tier(items, __file__, "unit")
    for item in items:
        if item.get_closest_marker("unit") is None:
            continue
        needs = NOT_HERE.intersection(getattr(item, "fixturenames", ()))
        if needs:
            raise pytest.UsageError(
                f"{item.nodeid} is in tests/unit but asks for {sorted(needs)}: "
                "move it to tests/integration, tests/spark or tests/interop"
            )


@pytest.fixture(autouse=True)
def glue_warnings_not_yet_given(monkeypatch):
    """The Glue writers name an ignored option once a process; a test that asserts on that
    warning must not depend on whether an earlier test in the session gave it already."""
    from kinesis_dstream.glue.sinks import file_target

    monkeypatch.setattr(file_target, "_warned", set())
