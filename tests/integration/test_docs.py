"""The documentation cannot drift from the code: every name the code accepts is in the
generated reference, the README's commands are the getting-started page's, and the
pages' marked examples run. No Spark; the examples use the embedded local AWS."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "mkdocs.yml").is_file())
DOCS = ROOT / "docs"


def _load_generator():
    spec = importlib.util.spec_from_file_location("gen_reference", DOCS / "gen_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen = _load_generator()


@pytest.fixture(scope="module")
def pages():
    return gen.pages()


def test_every_connector_option_name_is_in_the_options_reference(pages):
    from kinesis_dstream.sql.config.option_docs import CONNECTOR_NAMES

    page = pages["reference/options.md"]
    names = [
        ("kinesis." + n if connector == "awslabs" else n)
        for connector, spelled in CONNECTOR_NAMES.items()
        for n in spelled
    ]
    assert len(names) == 98
    missing = [n for n in names if f"`{n}`" not in page]
    assert missing == []


def test_every_option_spelling_is_documented_and_every_connector_name_is_accepted(pages):
    from kinesis_dstream.sql.config.option_docs import CONNECTOR_NAMES, OPTION_DOCS
    from kinesis_dstream.sql.config.option_table import SINK_ALIASES, SOURCE_ALIASES

    page = pages["reference/options.md"]
    table = {**SOURCE_ALIASES, **SINK_ALIASES}
    assert sorted(set(table) - set(OPTION_DOCS)) == []
    assert sorted(set(OPTION_DOCS) - set(table)) == []
    accepted = {s.lower() for spellings in table.values() for s in spellings}
    for connector, spelled in CONNECTOR_NAMES.items():
        assert [n for n in spelled if n.lower() not in accepted] == [], connector
    spellings = [s for v in table.values() for s in v]
    assert [s for s in spellings if s not in page] == []
    assert "**undocumented**" not in page


def test_every_createstream_keyword_is_in_the_reference_with_a_description(pages):
    page = pages["reference/createstream.md"]
    keywords = gen.createstream_keywords()
    assert len(keywords) >= 30
    assert [name for name, _, _ in keywords if f"| `{name}` |" not in page] == []
    assert [name for name, _, _ in keywords if name not in gen.KEYWORD_DOCS] == []
    assert sorted(set(gen.KEYWORD_DOCS) - {name for name, _, _ in keywords}) == []
    assert [m for m, _ in gen.builder_methods() if f"`{m}`" not in page] == []


def test_every_kcl_key_the_daemon_reads_is_in_the_reference(pages):
    from kinesis_dstream.multilang import property_keys

    page = pages["reference/kcl-properties.md"]
    keys = property_keys.HONOURED | property_keys.IGNORED
    assert [k for k in sorted(keys) if f"| `{k}` |" not in page] == []
    assert "| `maxRecords` | honoured | 10000 |" in page
    assert "| `callProcessRecordsEvenForEmptyRecordList` | honoured | false | only `false`" in page


def test_every_cli_command_and_option_is_in_the_reference(pages):
    page = pages["reference/cli.md"]
    commands = gen.cli_commands()
    expected = {"local-aws", "leases", "status", "kcl", "consumers", "glue", "glue run", "submit"}
    assert expected <= set(commands)
    for name, parser in commands.items():
        assert f"## `{name}`" in page
        for action in parser._actions:
            assert all(flag in page for flag in action.option_strings), (name, action)


def test_every_published_metric_is_in_the_reference(pages):
    page = pages["reference/metrics.md"]
    names = [name for name, *_ in gen.metrics()]
    expected = {
        "RecordsProcessed",
        "DataBytesProcessed",
        "MillisBehindLatest",
        "GetRecords.Success",
        "GetRecords.Throttled",
        "ReadFailures",
        "Checkpoints",
        "BlockedShards",
        "CurrentLeases",
        "TakenLeases",
        "StolenLeases",
        "LostLeases",
    }
    assert expected <= set(names)
    assert [n for n in names if f"`{n}`" not in page] == []
    assert [n for n in names if n not in gen.METRIC_DOCS] == []
    assert "glue.driver.streaming.maxConsumerLagInMs" in page


def test_the_benchmark_results_page_lists_each_result_file_and_builds_without_any(
    pages, tmp_path, monkeypatch
):
    files = sorted(p.name for p in (DOCS / "benchmarks" / "results").glob("*.md"))
    assert files, "the results folder holds the dated pages"
    assert all(re.match(r"\d{4}-\d{2}-\d{2}-[a-z0-9-]+\.md$", f) for f in files)
    assert [f for f in files if f"(results/{f})" not in pages["benchmarks/results.md"]] == []
    monkeypatch.setattr(gen, "RESULTS", tmp_path / "missing")
    assert gen.benchmark_results() == []
    assert "No results are recorded yet." in gen.results_page()


def _fenced_after(text: str, heading: str) -> list:
    section = text.split(heading, 1)[1]
    return re.findall(r"```bash\n(.*?)```", section.split("\n## ", 1)[0], re.S)


def test_the_readme_is_short_and_its_two_commands_are_the_getting_started_page_s():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    started = (DOCS / "getting-started.md").read_text()
    commands = _fenced_after(readme, "## Two commands")
    assert commands == _fenced_after(started, "## Two commands")
    assert commands == [
        "pip install '.[spark,local]' && python examples/kinesis_wordcount.py --local\n",
        "npm ci --prefix tests/npm && pip install -e '.[test]' && python -m pytest\n",
    ]


def test_the_readme_links_point_at_files_that_exist():
    readme = (ROOT / "README.md").read_text()
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme)
    assert targets
    assert [t for t in targets if not t.startswith("http") and not (ROOT / t).exists()] == []


@pytest.mark.parametrize(
    "page, index",
    [
        (page, i)
        for page in ("getting-started.md", "migrate-dstream.md")
        for i in range(len(gen.marked_blocks(DOCS / page, "run")))
    ],
)
def test_the_pages_marked_examples_run(page, index, tmp_path):
    code = gen.marked_blocks(DOCS / page, "run")[index]
    script = tmp_path / "example.py"
    script.write_text(code)
    done = subprocess.run(
        [sys.executable, str(script)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]


def test_the_shell_commands_of_the_pages_name_examples_that_exist():
    """The word count the getting-started page runs is run by tests/spark/test_examples.py; here
    every ``python examples/...`` a page shows names a file that takes those flags."""
    shown = []
    for page in ("getting-started.md", "migrate-dstream.md", "structured-streaming.md", "glue.md"):
        text = (DOCS / page).read_text()
        shown += re.findall(r"python (examples/\S+\.py)((?: --[a-z-]+)*)", text)
    assert ("examples/kinesis_wordcount.py", " --local") in shown
    for path, flags in shown:
        source = (ROOT / path).read_text()
        assert all(f'"{flag}"' in source for flag in flags.split()), (path, flags)
