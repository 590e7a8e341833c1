"""Hypothesis strategies that mutate valid text and JSON: text with characters inserted,
removed or replaced, and JSON with a value replaced, a key removed or added, or the
document cut (edits of structure, where a byte's edit would mostly make it not JSON).

The targets of options, times, offsets and files build valid input with the library's
own writers (an offset's ``to_json``, a range end as the end store writes it, option
values the docs show) and mutate it with these, besides drawing random input."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

#: Any JSON value, nested a little.
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)


ANY_CHARACTER = st.characters()


def mutated_text(text: str, alphabet: st.SearchStrategy = ANY_CHARACTER) -> st.SearchStrategy:
    """``text`` with one to three pieces of ``alphabet`` inserted, removed or replaced."""

    @st.composite
    def edit(draw) -> str:
        value = text
        for _ in range(draw(st.integers(1, 3))):
            at = draw(st.integers(0, len(value)))
            change = draw(st.sampled_from(["insert", "delete", "replace"]))
            if change == "insert":
                value = value[:at] + draw(alphabet) + value[at:]
            elif change == "delete":
                value = value[:at] + value[at + 1 :]
            else:
                value = value[:at] + draw(alphabet) + value[at + 1 :]
        return value

    return edit()


def _paths(value: Any, path: tuple = ()) -> list:
    """Every path into ``value`` (keys and indexes), the root first."""
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*path, index))
    return found


def _replaced(value: Any, path: tuple, new: Any, delete: bool = False) -> Any:
    """A copy of ``value`` with the item at ``path`` set to ``new`` (or deleted)."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    copy = dict(value) if isinstance(value, dict) else list(value)
    if rest:
        copy[head] = _replaced(value[head], rest, new, delete)
    elif delete:
        del copy[head]
    else:
        copy[head] = new
    return copy


def mutated_json(value: Any) -> st.SearchStrategy:
    """``value`` with one to three changes: a value anywhere replaced by any JSON (or a
    string of digits, a bool, a negative number), a key removed, or a key added."""

    @st.composite
    def edit(draw) -> Any:
        current = value
        for _ in range(draw(st.integers(1, 3))):
            path = draw(st.sampled_from(_paths(current)))
            change = draw(st.sampled_from(["replace", "delete", "add"]))
            if change == "delete" and path:
                current = _replaced(current, path, None, delete=True)
            elif change == "add" and isinstance(_at(current, path), dict):
                key = draw(st.text(max_size=6))
                current = _replaced(current, (*path, key), draw(json_values))
            else:
                new = draw(json_values | st.sampled_from(["1", True, -1, 2**64, "TRIM_HORIZON"]))
                current = _replaced(current, path, new)
        return current

    return edit()


def _at(value: Any, path: tuple) -> Any:
    for step in path:
        value = value[step]
    return value


def mutated_document(value: Any) -> st.SearchStrategy:
    """The JSON text of ``value``, mutated as JSON or as text, or cut short."""
    text = json.dumps(value)
    return st.one_of(
        st.just(text),
        mutated_json(value).map(json.dumps),
        mutated_text(text, st.sampled_from('{}[]",:0123456789 ') | st.characters()),
        st.integers(0, len(text)).map(lambda n: text[:n]),
    )
