"""The MultiLangDaemon's properties files: any bytes give a dict or a syntax error, any
file gives a configuration or one line naming what was wrong.

Valid files are written as ``java.util.Properties.store`` writes them (its escapes, in
:func:`store`), then mutated; our reader is compared with Java's own in the interop tier
(``tests/interop/test_java_properties.py``), only ours is fuzzed here.
"""

from __future__ import annotations

import time

from hypothesis import given
from hypothesis import strategies as st

from kinesis_dstream.multilang.java_properties import (
    PropertiesSyntaxError,
    read_properties_bytes,
)
from kinesis_dstream.multilang.properties import (
    MultiLangConfig,
    PropertiesError,
    parse_properties,
)
from kinesis_dstream.multilang.property_keys import HONOURED, IGNORED

#: Longest a parse of one file may take on a loaded 2-core machine.
BOUND_S = 2.0
REQUIRED = {"executableName": "app.py", "streamName": "s", "applicationName": "a"}
#: Integer keys, and the bounds their values must lie in to be accepted.
NUMERIC = {
    "failoverTimeMillis": (1, 2**63 - 1),
    "maxRecords": (1, 10_000),
    "idleTimeBetweenReadsInMillis": (0, 2**63 - 1),
    "maxPendingProcessRecordsInput": (1, 2**31 - 1),
    "maxCacheByteSize": (1, 2**31 - 1),
    "maxRecordsCount": (1, 2**31 - 1),
    "maxLeasesForWorker": (1, 2**31 - 1),
    "maxLeasesToStealAtOneTime": (0, 2**31 - 1),
    "shardSyncIntervalMillis": (1, 2**63 - 1),
    "timeoutInSeconds": (1, 2**31 - 1),
    "shutdownGraceMillis": (1, 2**63 - 1),
}


def _escape(text: str, is_key: bool) -> str:
    """``Properties.saveConvert``: the escapes ``store`` writes."""
    out = []
    for index, char in enumerate(text):
        if char == " " and (is_key or index == 0):
            out.append("\\ ")
        elif char in "\\=:#!":
            out.append("\\" + char)
        elif char in "\t\n\r\f":
            out.append("\\" + {"\t": "t", "\n": "n", "\r": "r", "\f": "f"}[char])
        elif ord(char) < 0x20 or ord(char) > 0x7E:
            out.append(f"\\u{ord(char):04X}" if ord(char) <= 0xFFFF else _surrogates(char))
        else:
            out.append(char)
    return "".join(out)


def _surrogates(char: str) -> str:
    high, low = divmod(ord(char) - 0x10000, 0x400)
    return f"\\u{0xD800 + high:04X}\\u{0xDC00 + low:04X}"


def store(props: dict) -> bytes:
    lines = ["#written as Properties.store writes"]
    lines += [f"{_escape(k, True)}={_escape(v, False)}" for k, v in props.items()]
    return ("\n".join(lines) + "\n").encode("iso-8859-1")


texts = st.text(st.characters(exclude_categories=["Cs"]), max_size=30)
#: Digits of every script, other numbers, spaces, and the marks of Python's number syntax.
digits_and_look_alikes = st.characters(categories=["Nd", "No", "Zs"]) | st.sampled_from("+-_.eEx")


def timed(function, *args):
    started = time.process_time()  # this process's CPU: a loaded machine is not the parser
    try:
        return function(*args)
    finally:
        assert time.process_time() - started < BOUND_S


@given(st.dictionaries(texts, texts, max_size=8))
def test_a_file_written_as_java_writes_it_reads_back(props):
    assert timed(read_properties_bytes, store(props)) == props


@given(st.binary(max_size=2000))
def test_any_bytes_give_a_dict_or_a_syntax_error(data):
    try:
        props = timed(read_properties_bytes, data)
    except PropertiesSyntaxError as exc:
        assert "\\u" in str(exc)
        return
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in props.items())


@st.composite
def mutated_files(draw) -> bytes:
    keys = sorted(HONOURED) + sorted(IGNORED)[:8] + ["unknownKey"]
    props = dict(REQUIRED)
    for key in draw(st.lists(st.sampled_from(keys), max_size=6)):
        props[key] = draw(texts | st.integers(-(2**70), 2**70).map(str))
    data = bytearray(store(props))
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, max(0, len(data) - 1)))
        op = draw(st.sampled_from(["flip", "delete", "insert"]))
        if op == "flip" and data:
            data[at] = draw(st.integers(0, 255))
        elif op == "delete" and data:
            del data[at]
        else:
            data[at:at] = draw(st.sampled_from([b"\\", b"\\u", b"\n", b"=", b"\\\n", b"9" * 400]))
    return bytes(data)


@given(mutated_files())
def test_any_file_gives_a_configuration_or_one_line_naming_the_problem(data):
    try:
        config = timed(lambda: parse_properties(read_properties_bytes(data), source="app.props"))
    except (PropertiesError, PropertiesSyntaxError) as exc:
        assert "\n" not in str(exc).strip() or "unknown properties" in str(exc)
        return
    assert isinstance(config, MultiLangConfig)


@given(
    st.sampled_from(sorted(NUMERIC)),
    st.one_of(
        st.integers(-(2**70), 2**70).map(str),
        st.text(digits_and_look_alikes, max_size=25),
        texts,
        st.just("9" * 400),
    ),
)
def test_a_numeric_property_is_its_number_in_bounds_or_one_line_naming_the_key(key, value):
    try:
        config = timed(parse_properties, {**REQUIRED, key: value})
    except PropertiesError as exc:
        assert str(exc).startswith(f"{key}=") and "\n" not in str(exc) and len(str(exc)) < 300
        return
    assert isinstance(config, MultiLangConfig)
    if not value.strip():
        return  # no value: the default, as the Java daemon reads an empty one
    low, high = NUMERIC[key]
    number = int(value.strip())  # accepted: decimal digits (any script) and a sign
    assert low <= number <= high
    assert value.strip().lstrip("+-").isdecimal()
