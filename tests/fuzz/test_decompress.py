"""Payload decompression (``sql/parsing/decompress.py``) against anything a record can hold.

Inputs: payloads written by each codec's own writer (gzip, bzip2, xz, zlib, zstd through
zstandard and cramjam, framed Snappy through cramjam), alone, concatenated, and bombs
(a megabyte of zeros); then mutated: bits flipped, bytes cut, inserted, dropped, the
payload cut short or followed by junk; and random bytes after each codec's magic.

The rule (docs/reliability.md#stream-payloads): ``decompress(data, max_bytes)`` gives
``(payload, codec)`` with at most ``max_bytes`` bytes, or ``(data, None)`` when the payload
is not compressed, or raises ``PayloadDecompressError`` (``PayloadTooLargeError`` past the
bound); nothing else, and no more than the bound (and the codec's own window) is ever in
memory.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import tracemalloc
import zlib

import cramjam
import zstandard
from hypothesis import given
from hypothesis import strategies as st

from kinesis_dstream.sql.parsing.decompress import (
    CODECS,
    PayloadDecompressError,
    PayloadTooLargeError,
    decompress,
)

from .mutations import mutate

BOUND = 64 * 1024
WRITERS = {
    "gzip": lambda d: gzip.compress(d, compresslevel=6),
    "bzip2": lambda d: bz2.compress(d, 1),
    "xz": lambda d: lzma.compress(d, preset=1),
    "deflate": zlib.compress,
    "zstd": lambda d: zstandard.ZstdCompressor(level=3).compress(d),
    "zstd-stream": lambda d: (
        zstandard.ZstdCompressor().compressobj().compress(d)
        + zstandard.ZstdCompressor().compressobj().flush()
    ),
    "zstd-cramjam": lambda d: bytes(cramjam.zstd.compress(d)),
    "snappy": lambda d: bytes(cramjam.snappy.compress(d)),
}
MAGICS = [b"\x1f\x8b", b"BZh9", b"\xfd7zXZ\x00", b"\x28\xb5\x2f\xfd", b"\xff\x06\x00\x00sNaPpY"]
PLAIN = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=200).map(str.encode),
    st.sampled_from([b"\0" * 1_000_000, b'{"a": 1}' * 20_000]),  # bombs past the bound
)


@st.composite
def compressed(draw) -> bytes:
    writer = WRITERS[draw(st.sampled_from(sorted(WRITERS)))]
    parts = [writer(draw(PLAIN)) for _ in range(draw(st.integers(1, 3)))]
    return b"".join(parts)


@st.composite
def mutated(draw) -> bytes:
    return mutate(draw, draw(compressed()), most=4)


PAYLOADS = st.one_of(
    compressed(),
    mutated(),
    st.tuples(st.sampled_from(MAGICS), st.binary(max_size=200)).map(b"".join),
    st.binary(max_size=200),
)


@given(PAYLOADS)
def test_decompress_gives_a_bounded_payload_or_a_named_error(data):
    tracemalloc.start()
    try:
        try:
            out, codec = decompress(data, max_bytes=BOUND)
        except PayloadTooLargeError as exc:
            assert str(BOUND) in str(exc) and exc.codec in CODECS
            out, codec = None, exc.codec
        except PayloadDecompressError as exc:
            assert exc.codec in CODECS and exc.codec in str(exc)
            out, codec = None, exc.codec
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    if out is not None:
        assert codec in CODECS or (codec is None and out == data)
        assert codec is None or len(out) <= BOUND
    # the bound and a step past it, the payload, and a codec's window (xz preset 1: 1 MiB)
    assert peak < 4 * BOUND + 3 * len(data) + 4 * 1024 * 1024
