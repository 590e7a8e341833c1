"""Sequence numbers from outside: only Kinesis's spelling is one, and order is integer order.

Kinesis documents a sequence number as ``0|([1-9]\\d{0,128})`` (its API reference). Every
parser of one (:class:`ExtendedSequenceNumber`, a reader's start position, a child's
checkpoint) accepts exactly that, in ASCII digits: another script's digits, a leading zero
or a sign never give a second spelling of one number.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kinesis_dstream.esn import (
    ESN_LATEST,
    ESN_SHARD_END,
    ExtendedSequenceNumber,
    is_sequence_number,
)
from kinesis_dstream.retrieval.start import StartPosition

#: An independent oracle: the documented pattern, ASCII only.
KINESIS_PATTERN = re.compile(r"0|[1-9][0-9]{0,128}", re.ASCII)
SENTINELS = ("AT_TIMESTAMP", "TRIM_HORIZON", "LATEST", "SHARD_END")

numbers = st.integers(0, 10**129 - 1)
#: Digits of every script (Unicode category Nd), and look-alikes: what isdigit() takes.
any_digits = st.text(
    st.characters(categories=["Nd", "No"]) | st.sampled_from("0123456789+- _"), max_size=140
)
candidates = st.one_of(
    numbers.map(str),
    any_digits,
    st.text(max_size=140),
    numbers.map(lambda n: "0" + str(n)),
    st.sampled_from(SENTINELS),
)


@given(candidates)
def test_a_sequence_number_is_exactly_kinesiss_pattern_in_ascii(text):
    assert is_sequence_number(text) == bool(KINESIS_PATTERN.fullmatch(text))


@given(candidates, st.integers(-(2**70), 2**70))
def test_an_extended_sequence_number_is_made_or_refused_with_value_error(text, sub):
    try:
        esn = ExtendedSequenceNumber(text, sub)
    except ValueError as exc:
        assert "sequence number" in str(exc) and len(str(exc)) < 400
        assert not (text in SENTINELS or is_sequence_number(text)) or not 0 <= sub < 2**63
        return
    assert text in SENTINELS or is_sequence_number(text)
    assert 0 <= esn.sub_sequence_number < 2**63
    if not esn.is_sentinel:  # numbers rank above every sentinel but SHARD_END
        assert ESN_LATEST < esn < ESN_SHARD_END
        assert esn.numeric_key() == (int(text), sub)


@given(st.one_of(st.floats(), st.text(max_size=5), st.none(), st.booleans(), st.binary()))
def test_a_sub_sequence_number_that_is_not_an_int_is_a_type_error(sub):
    with pytest.raises(TypeError, match="sub-sequence number"):
        ExtendedSequenceNumber("1", sub)


@given(numbers, numbers, st.integers(0, 2**63 - 1), st.integers(0, 2**63 - 1))
def test_order_is_the_integers_order_then_the_sub_sequence_numbers(a, b, sub_a, sub_b):
    left = ExtendedSequenceNumber(str(a), sub_a)
    right = ExtendedSequenceNumber(str(b), sub_b)
    assert (left < right) == ((a, sub_a) < (b, sub_b))
    assert (left == right) == ((a, sub_a) == (b, sub_b))
    assert (left == right) <= (hash(left) == hash(right))
    assert ExtendedSequenceNumber(str(a)) == ExtendedSequenceNumber(str(a), 0)


@given(candidates, st.sampled_from(["AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER"]))
def test_a_readers_start_takes_the_same_sequence_numbers(text, iterator_type):
    try:
        StartPosition(iterator_type, sequence_number=text)
    except ValueError as exc:
        assert iterator_type in str(exc) and len(str(exc)) < 400
        assert not is_sequence_number(text)
        return
    assert is_sequence_number(text)
