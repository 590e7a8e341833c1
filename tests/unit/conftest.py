"""The unit tier: no server, no Spark, no daemon process; the whole tier runs in well under
two minutes (``python -m pytest tests/unit`` or ``-m unit``)."""

from __future__ import annotations

import pytest

from ..support.tiers import mark_tier

# The Glue layer runs on the Structured Streaming source, which needs PySpark >= 4.2 (its
# pyspark.sql.streaming.datasource); on an older PySpark (3.5 on Python 3.9, the version
# matrix's lowest) the modules of these tests cannot be imported; the summary says so.
_GLUE_ON_THE_SOURCE = ["test_glue_catalog.py", "test_glue_file_sink.py", "test_glue_surface.py"]
try:
    import pyspark.sql.streaming.datasource  # noqa: F401

    collect_ignore: list = []
except ImportError:
    collect_ignore = _GLUE_ON_THE_SOURCE


def pytest_terminal_summary(terminalreporter):
    if collect_ignore:
        import pyspark

        terminalreporter.write_line(
            f"unit tier: PySpark {pyspark.__version__} has no Data Source API with admission "
            f"control (>= 4.2): not collected: {', '.join(collect_ignore)}"
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
