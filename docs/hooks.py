"""MkDocs hooks: the reference pages are generated from the code at every build.

``on_config`` lists the benchmark result pages (``docs/benchmarks/results/*.md``) in the
navigation, so a new result needs no edit of ``mkdocs.yml``; ``on_files`` adds the pages
``gen_reference.py`` makes. An empty or missing results folder builds too.
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
for path in (str(DOCS.parent), str(DOCS)):
    if path not in sys.path:
        sys.path.insert(0, path)

import gen_reference  # noqa: E402
from mkdocs.structure.files import File  # noqa: E402


def _results_nav(nav: list) -> bool:
    for entry in nav:
        if not isinstance(entry, dict):
            continue
        for value in entry.values():
            if isinstance(value, list):
                pages = [v for e in value if isinstance(e, dict) for v in e.values()]
                if "benchmarks/results.md" in pages:
                    value.extend(
                        {title: f"benchmarks/results/{name}"}
                        for name, title in gen_reference.benchmark_results()
                    )
                    return True
                if _results_nav(value):
                    return True
    return False


def on_config(config):
    _results_nav(config["nav"] or [])
    return config


def on_files(files, config):
    for path, text in gen_reference.pages().items():
        files.append(File.generated(config, path, content=text))
    return files
