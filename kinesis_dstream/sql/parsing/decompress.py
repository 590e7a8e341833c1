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

The bound: no payload inflates past :data:`MAX_DECOMPRESSED_BYTES` (128 MiB), whatever
its codec; one that would raises :class:`PayloadTooLargeError` (a corrupt record) before
more than that is in memory. gzip, bzip2, xz and zlib are decoded with the standard
library's output limit, zstd with ``zstandard``'s streaming decoder fed at most what
cannot pass the bound, framed Snappy chunk by chunk: unless the payload is too short
to pass the bound, every chunk's size is read from its header first, and the total
checked before ``cramjam`` decodes (and checks every CRC).
"""

from __future__ import annotations

import bz2
import lzma
import threading
import zlib
from typing import Any, Callable, Optional

from ...errors import KinesisDStreamError

GZIP = "gzip"
BZIP2 = "bzip2"
XZ = "xz"
ZSTD = "zstd"
SNAPPY = "snappy"
DEFLATE = "deflate"
#: Every codec :func:`decompress` reads.
CODECS = (GZIP, BZIP2, XZ, ZSTD, SNAPPY, DEFLATE)

# A Kinesis record is at most 10 MiB; a payload that inflates past this is a
# decompression bomb (or not this codec) and is refused rather than exhausting the
# executor's memory. Every codec is decoded in steps that stop at the bound.
MAX_DECOMPRESSED_BYTES = 128 * 1024 * 1024

#: Compressed bytes handed to a decoder at a time. A stream's decoder copies the input
#: left after its end (``unused_data``): in pieces, a payload of many tiny streams (gzip
#: members, bzip2 or xz streams, zstd frames) costs each end one piece, not the rest of
#: the payload (quadratic: 1 s for 1 MiB of empty gzip members when given whole).
_PIECE = 8 * 1024
#: zstd's most output per input byte: a 4-byte block (RLE: a 3-byte header and one byte)
#: decodes to at most 128 KiB (RFC 8878, Block_Maximum_Size). zstandard's decompressobj
#: takes no output limit, so it is given at most (room left / this) bytes at a time.
_ZSTD_MAX_RATIO = 128 * 1024 // 4
#: ... but never less than this many bytes: near the bound, (room left / ratio) is a byte
#: or none, and a payload of megabytes that decode to nothing (skippable frames) would be
#: fed a byte a call (0.8 s of CPU a MiB). At this floor one call may pass the bound by at
#: most 256 x 32 KiB = 8 MiB before the bound is seen.
_ZSTD_MIN_PIECE = 256
#: The most memory an xz stream's decoder may take (its dictionary): xz -9 uses 64 MiB. A
#: header asking more is refused rather than allocated.
_XZ_MEMLIMIT = 80 * 1024 * 1024
#: Snappy's most output per input byte: its densest element, a copy with a 2-byte
#: offset, is 3 bytes for at most 64. A payload shorter than the bound over this cannot
#: pass it: only a longer one has its chunks' sizes read first.
_SNAPPY_MAX_RATIO = 22
#: The Snappy framing format's bound on one chunk's uncompressed data.
_SNAPPY_CHUNK_BYTES = 65_536

_GZIP_MAGIC = b"\x1f\x8b"
_XZ_MAGIC = b"\xfd7zXZ\x00"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
# The Snappy framing format's stream identifier chunk: type 0xff, length 6, "sNaPpY".
_SNAPPY_FRAMED_MAGIC = b"\xff\x06\x00\x00sNaPpY"
# First bytes that can start a compressed payload (zlib's CMF: CM=8, CINFO<=7); any other
# first byte ("{", a letter, a digit...) skips every check: the common, uncompressed case.
_FIRST_BYTES = frozenset({0x1F, ord("B"), 0xFD, 0x28, 0xFF, *range(0x08, 0x80, 0x10)})


_ZSTD = threading.local()


class PayloadDecompressError(KinesisDStreamError):
    """A payload carries a codec's magic bytes but does not decompress with that codec."""

    def __init__(self, codec: str, reason: str) -> None:
        super().__init__(f"payload looks {codec}-compressed but does not decompress: {reason}")
        self.codec = codec


class PayloadTooLargeError(PayloadDecompressError):
    """A compressed payload that inflates past the bound (a decompression bomb)."""

    def __init__(self, codec: str, max_bytes: int) -> None:
        KinesisDStreamError.__init__(
            self,
            f"payload is {codec}-compressed and inflates past {max_bytes} bytes, the bound "
            "on one record's payload",
        )
        self.codec = codec
        self.max_bytes = max_bytes


class _OverBound(Exception):
    """Raised inside a codec's loop; :func:`decompress` names the codec and the bound."""


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
        raise PayloadTooLargeError(DEFLATE, max_bytes)
    if not decompressor.eof or decompressor.unused_data:
        return None
    return out


def _streams(make: Callable[[], Any], data: bytes, max_bytes: int, zstd: bool = False) -> bytes:
    """Every stream (gzip member, bzip2 or xz stream, zstd frame) in ``data``, decoded a
    piece at a time; :class:`_OverBound` as soon as the output passes ``max_bytes``."""
    if len(data) <= (max(1, max_bytes // _ZSTD_MAX_RATIO) if zstd else _PIECE):
        # The common case, one stream in one piece: one call, no copies (else from the top).
        decoder = make()
        out = decoder.decompress(data) if zstd else decoder.decompress(data, max_bytes + 1)
        if len(out) > max_bytes:
            raise _OverBound()
        if decoder.eof and not decoder.unused_data:
            return out
    view = memoryview(data)
    out = bytearray()
    at = 0
    while True:
        decoder = make()
        while not decoder.eof:
            room = max_bytes - len(out)
            if zstd:  # no output limit: little enough input that it cannot pass the bound
                piece = view[at : at + max(_ZSTD_MIN_PIECE, room // _ZSTD_MAX_RATIO)]
                chunk = decoder.decompress(piece)
            else:
                piece = view[at : at + _PIECE]
                chunk = decoder.decompress(piece, room + 1)
            if not piece:
                raise EOFError("the compressed stream ends early")
            out += chunk
            if len(out) > max_bytes:
                raise _OverBound()
            # all of the piece was taken, but what follows the stream's end
            at += len(piece) - len(decoder.unused_data)
        if at >= len(view):
            return bytes(out)


def _snappy_size(data: bytes, max_bytes: int) -> int:
    """The size a Snappy framed stream decodes to, from its chunks' headers (a compressed
    chunk's is the length its raw Snappy data starts with), before anything is decoded;
    :class:`_OverBound` past ``max_bytes``. The decoder then checks every length and CRC."""
    import cramjam

    decompress_raw_len = cramjam.snappy.decompress_raw_len
    view = memoryview(data)
    at = total = 0
    end = len(data)
    while at < end:
        kind = data[at]
        length = data[at + 1] | data[at + 2] << 8 | data[at + 3] << 16 if at + 4 <= end else -1
        if length < 0 or at + 4 + length > end:
            raise EOFError(f"the chunk at byte {at} ends early")
        if kind <= 0x01:  # compressed, uncompressed data: a CRC-32C, then the data
            size = decompress_raw_len(view[at + 8 : at + 4 + length]) if kind == 0 else length - 4
            if length < 4 or size > _SNAPPY_CHUNK_BYTES:
                raise ValueError(f"the chunk at byte {at} holds {size:,} bytes, past 65,536")
            total += size
            if total > max_bytes:
                raise _OverBound()
        elif 0x02 <= kind <= 0x7F:
            raise ValueError(f"the chunk at byte {at} has the reserved type {kind}")
        at += 4 + length
    return total


def _zstd_decoder() -> Any:
    """This thread's zstd decompressor. Making one (its context) takes 12 us, decoding a
    small payload with it a fiftieth of that; each frame's decompressobj resets it, and a
    thread uses one at a time, so it is reused, never shared between threads."""
    decoder = getattr(_ZSTD, "decoder", None)
    if decoder is None:
        import zstandard  # imported here: only zstd payloads need the package

        decoder = _ZSTD.decoder = zstandard.ZstdDecompressor()
    return decoder


def _decode(codec: str, data: bytes, max_bytes: int) -> bytes:
    if codec == GZIP:
        return _streams(lambda: zlib.decompressobj(16 + zlib.MAX_WBITS), data, max_bytes)
    if codec == BZIP2:
        return _streams(bz2.BZ2Decompressor, data, max_bytes)
    if codec == XZ:
        xz = lzma.FORMAT_XZ
        return _streams(lambda: lzma.LZMADecompressor(xz, _XZ_MEMLIMIT), data, max_bytes)
    if codec == ZSTD:
        return _streams(_zstd_decoder().decompressobj, data, max_bytes, zstd=True)
    import cramjam  # imported here: only compressed payloads need the package

    if len(data) * _SNAPPY_MAX_RATIO > max_bytes:
        _snappy_size(data, max_bytes)
    return bytes(cramjam.snappy.decompress(data))  # the framing format


def decompress(data: bytes, max_bytes: int = MAX_DECOMPRESSED_BYTES) -> tuple[bytes, Optional[str]]:
    """``(payload, codec)``: the decompressed payload and the codec's name, or
    ``(data, None)`` when ``data`` is not compressed.

    Raises :class:`PayloadDecompressError` when a strong magic is present but the rest
    does not decompress (truncated, corrupt, or the codec's package is not installed), and
    :class:`PayloadTooLargeError` (one) as soon as it inflates past ``max_bytes``: no codec
    decodes more than that (and one step) into memory.
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
    except _OverBound:
        raise PayloadTooLargeError(codec, max_bytes) from None
    except ImportError as e:
        raise PayloadDecompressError(
            codec, f"{e}; install kinesis_dstream[sql] (cramjam, zstandard) for snappy and zstd"
        ) from e
    except Exception as e:  # each codec has its own error types; all mean "corrupt"
        raise PayloadDecompressError(codec, f"{type(e).__name__}: {e}") from e
