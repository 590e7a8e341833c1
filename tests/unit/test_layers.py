"""The package keeps its layers: no import cycle, no upward import, no private import.

Layers, lowest first (a module may import its own layer and those below):

0. foundations: the error tree, ESN order, records, settings and Spark conf parsing,
   bounded JSON (``json_text``),
   backoff, KPL, the ledger, clients (``aws``, with the GetRecords page decoder and the
   lean GetRecords path it installs), metrics, the local AWS server, signal handling,
   periodic threads, optional dependencies, PySpark's internals (``spark_internals``),
   putting a folder on Spark's Python path (``python_path``);
1. reading and leasing: ``retrieval``, ``leases``, the producer and its Schema Registry
   serializer;
2. the three front ends: ``dstream`` (createStream), ``sql`` (the source and sink),
   ``multilang`` (``kinesis-dstream kcl``), the demo, ``status`` (operators' view), and
   ``asl`` (kinesis-asl scripts unchanged: ``kinesis-dstream submit``);
3. the AWS Glue layer (``glue``: Glue's API over the source and sink, its runner);
4. the command line and the package's public surface.
"""

from pathlib import Path

import kinesis_dstream

from ..support.import_rules import cycles, layer_of, layer_violations, read_graph

P = "kinesis_dstream"
LAYERS = [
    [
        f"{P}.errors",
        f"{P}.esn",
        f"{P}.isotime",
        f"{P}.json_text",
        f"{P}.record",
        f"{P}.spark_conf",
        f"{P}.backoff",
        f"{P}.shard_rate",
        f"{P}.token_bucket",
        f"{P}.executor_heap",
        f"{P}.kpl",
        f"{P}.kpl.*",
        f"{P}.aws",
        f"{P}.retrieval.page_decoder",
        f"{P}.retrieval.lean_get_records",
        f"{P}.retrieval.keep_alive",
        f"{P}.metrics",
        f"{P}.local",
        f"{P}.stop_signals",
        f"{P}.periodic",
        f"{P}.extras",
        f"{P}.progress_bar",
        f"{P}.spark_internals",
        f"{P}.arns",
        f"{P}.python_path",
    ],
    [
        f"{P}.retrieval",
        f"{P}.retrieval.*",
        f"{P}.leases",
        f"{P}.leases.*",
        f"{P}.producer",
        f"{P}.schema_registry",
        f"{P}.schema_registry.*",
    ],
    [
        f"{P}.dstream",
        f"{P}.dstream.*",
        f"{P}.sql",
        f"{P}.sql.*",
        f"{P}.sql_lookup",
        f"{P}.multilang",
        f"{P}.multilang.*",
        f"{P}.demo",
        f"{P}.demo.*",
        f"{P}.status",
        f"{P}.status.*",
        f"{P}.asl",
        f"{P}.asl.*",
    ],
    [f"{P}.glue", f"{P}.glue.*"],
    [f"{P}.cli", P],
]
PACKAGE = Path(kinesis_dstream.__file__).parent


def test_no_import_cycle_between_modules():
    assert cycles(read_graph(PACKAGE)) == []


def test_no_module_imports_a_layer_above_its_own():
    graph = read_graph(PACKAGE)
    for module in graph.modules:
        layer_of(module, LAYERS)  # every module has its place in the table
    assert layer_violations(graph, LAYERS) == []


def test_no_private_name_is_imported_from_another_module():
    assert read_graph(PACKAGE).private == []


def test_the_rules_find_a_cycle_an_upward_import_and_a_private_import(tmp_path):
    package = tmp_path / "pkg"
    (package / "low").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "low" / "__init__.py").write_text("")
    (package / "low" / "a.py").write_text("def f():\n    from ..high import g\n")
    (package / "high.py").write_text("from .low.a import f, _hidden\ng = 1\n")
    (package / "typed.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .high import g\n"
    )
    graph = read_graph(package)
    assert cycles(graph) == [["pkg.high", "pkg.low.a"]]  # the lazy import counts
    layers = [["pkg", "pkg.low*", "pkg.typed"], ["pkg.high"]]
    assert layer_violations(graph, layers) == [("pkg.low.a", 0, "pkg.high", 1, 2)]
    assert graph.private == [("pkg.high", "pkg.low.a", "_hidden", 1)]
    assert graph.edges["pkg.typed"] == {}  # TYPE_CHECKING-only imports never run
