"""The Spark examples of the getting-started and migration pages run as written: each
block marked ``<!-- run: spark -->`` is extracted from the Markdown and run as a script
against the embedded local AWS it starts itself."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "mkdocs.yml").is_file())
DOCS = ROOT / "docs"
PAGES = ("getting-started.md", "migrate-dstream.md")


def _marked_blocks(page: str) -> list:
    spec = importlib.util.spec_from_file_location("gen_reference", DOCS / "gen_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.marked_blocks(DOCS / page, "run: spark")


CASES = [(page, i) for page in PAGES for i in range(len(_marked_blocks(page)))]


def test_each_page_has_a_spark_example():
    assert {page for page, _ in CASES} == set(PAGES)


@pytest.mark.parametrize("page, index", CASES)
def test_the_pages_spark_examples_run(page, index, tmp_path):
    script = tmp_path / "example.py"
    script.write_text(_marked_blocks(page)[index])
    done = subprocess.run(
        [sys.executable, str(script)],
        env={
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "PYSPARK_PYTHON": sys.executable,
        },
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
