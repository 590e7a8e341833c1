"""Glue's auto-decompression of record payloads, chosen by the payload's magic bytes.

Glue decompresses gzip, bzip2, xz, deflate and framed Snappy payloads (and zstd for Avro
files) without being told; so does this module, for every classification. A payload
with a strong magic (gzip, bzip2, xz, zstd, the Snappy framing format's stream
identifier) that then fails to decompress raises :class:`PayloadDecompressError`: the
caller keeps that record as corrupt, it never fails the task.

Deflate: Java's ``Deflater``/``DeflaterOutputStream`` (what a Glue or KPL producer
writes) emit the zlib format, whose 2-byte header carries a check (``(CMF*256+FLG) % 31
== 0``). Two bytes can still be the start of text ("x^", "(S"), so a zlib-looking payload
counts as compressed only when it decompresses completely with a matching Adler-32;
otherwise it is returned unchanged. Raw deflate (no header) cannot be told apart from
arbitrary bytes and is not detected.
"""

from __future__ import annotations

import bz2
import lzma
import zlib
from typing import Any, Callable, Optional

from ...errors import KinesisDStreamError

GZIP = "gzip"
BZIP2 = "bzip2"
XZ = "xz"
ZSTD = "zstd"
SNAPPY = "snappy"
DEFLATE = "deflate"

# A Kinesis record is at most a few MiB; a payload that inflates past this is a
# decompression bomb (or not this codec) and is refused rather than exhausting the
# executor's memory. zstd and framed Snappy are decoded whole (cramjam has no bound).
MAX_DECOMPRESSED_BYTES = 128 * 1024 * 1024

_GZIP_MAGIC = b"\x1f\x8b"
_XZ_MAGIC = b"\xfd7zXZ\x00"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
# The Snappy framing format's stream identifier chunk: type 0xff, length 6, "sNaPpY".
_SNAPPY_FRAMED_MAGIC = b"\xff\x06\x00\x00sNaPpY"
# First bytes that can start a compressed payload (zlib's CMF: CM=8, CINFO<=7); any other
# first byte ("{", a letter, a digit...) skips every check: the common, uncompressed case.
_FIRST_BYTES = frozenset({0x1F, ord("B"), 0xFD, 0x28, 0xFF, *range(0x08, 0x80, 0x10)})


class PayloadDecompressError(KinesisDStreamError):
    """A payload carries a codec's magic bytes but does not decompress with that codec."""

    def __init__(self, codec: str, reason: str) -> None:
        super().__init__(f"payload looks {codec}-compressed but does not decompress: {reason}")
        self.codec = codec


def detect_codec(data: bytes) -> Optional[str]:
    """The codec whose strong magic bytes ``data`` starts with, else None (zlib excluded)."""
    if data[:2] == _GZIP_MAGIC:
        return GZIP
    if data[:3] == b"BZh" and data[3:4].isdigit() and data[3:4] != b"0":
        return BZIP2
    if data[:6] == _XZ_MAGIC:
        return XZ
    if data[:4] == _ZSTD_MAGIC:
        return ZSTD
    if data[:10] == _SNAPPY_FRAMED_MAGIC:
        return SNAPPY
    return None


def _looks_zlib(data: bytes) -> bool:
    if len(data) < 6:  # header + at least an empty block + Adler-32 trailer
        return False
    cmf, flg = data[0], data[1]
    # CM=8 (deflate), CINFO<=7 (window <= 32K), header check, no preset dictionary.
    return cmf & 0x0F == 8 and cmf >> 4 <= 7 and (cmf * 256 + flg) % 31 == 0 and not flg & 0x20


def _inflate_zlib(data: bytes, max_bytes: int) -> Optional[bytes]:
    """The inflated zlib stream, or None when ``data`` is not one complete, checked stream."""
    decompressor = zlib.decompressobj()
    try:
        out = decompressor.decompress(data, max_bytes + 1)
    except zlib.error:
        return None
    if len(out) > max_bytes:
        raise PayloadDecompressError(DEFLATE, f"inflates past {max_bytes} bytes")
    if not decompressor.eof or decompressor.unused_data:
        return None
    return out


def _bounded(make: Callable[[], Any], data: bytes, max_bytes: int) -> bytes:
    """Every stream (gzip member, bzip2 or xz stream) in ``data``, at most ``max_bytes``."""
    out = bytearray()
    while True:
        decompressor = make()
        out += decompressor.decompress(data, max_bytes - len(out) + 1)
        if len(out) > max_bytes:
            raise ValueError(f"inflates past {max_bytes} bytes")
        if not decompressor.eof:
            raise EOFError("the compressed stream ends early")
        data = decompressor.unused_data
        if not data:
            return bytes(out)


def _decode(codec: str, data: bytes, max_bytes: int) -> bytes:
    if codec == GZIP:
        return _bounded(lambda: zlib.decompressobj(16 + zlib.MAX_WBITS), data, max_bytes)
    if codec == BZIP2:
        return _bounded(bz2.BZ2Decompressor, data, max_bytes)
    if codec == XZ:
        return _bounded(lambda: lzma.LZMADecompressor(lzma.FORMAT_XZ), data, max_bytes)
    import cramjam  # imported here: only compressed payloads need the package

    if codec == ZSTD:
        return bytes(cramjam.zstd.decompress(data))
    return bytes(cramjam.snappy.decompress(data))  # the framing format


def decompress(data: bytes, max_bytes: int = MAX_DECOMPRESSED_BYTES) -> tuple[bytes, Optional[str]]:
    """``(payload, codec)``: the decompressed payload and the codec's name, or
    ``(data, None)`` when ``data`` is not compressed.

    Raises :class:`PayloadDecompressError` when a strong magic is present but the rest
    does not decompress (truncated, corrupt, inflating past ``max_bytes``, or the codec's
    package is not installed).
    """
    if not data or data[0] not in _FIRST_BYTES:
        return data, None
    codec = detect_codec(data)
    if codec is None:
        if _looks_zlib(data):
            inflated = _inflate_zlib(data, max_bytes)
            if inflated is not None:
                return inflated, DEFLATE
        return data, None
    try:
        return _decode(codec, data, max_bytes), codec
    except ImportError as e:
        raise PayloadDecompressError(
            codec, f"{e}; install kinesis_dstream[sql] (cramjam) for snappy and zstd"
        ) from e
    except Exception as e:  # each codec has its own error types; all mean "corrupt"
        raise PayloadDecompressError(codec, f"{type(e).__name__}: {e}") from e
