"""Each tier's conftest marks the tests under its folder, so a tier also runs by marker."""

from __future__ import annotations

from pathlib import Path

import pytest


def mark_tier(items: list, conftest_file: str, marker: str) -> None:
    """Add ``marker`` to every collected test whose file sits under ``conftest_file``'s folder.

    ``pytest_collection_modifyitems`` in a folder's conftest sees every collected item, not
    only its folder's, hence the path check.
    """
    folder = Path(conftest_file).resolve().parent
    mark = getattr(pytest.mark, marker)
    for item in items:
        if folder in Path(str(item.fspath)).resolve().parents:
            item.add_marker(mark)
