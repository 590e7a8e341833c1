"""The one way the fuzz targets mutate what a writer wrote: a few edits at drawn places.

Each edit is one of: flip a bit, cut the rest off, insert a few bytes, drop a byte, set a
byte to an edge value (00, 7F, 80, FF), append junk, repeat a prefix; a target adds its
own (deep nesting, huge numbers...) through ``more``.
"""

from __future__ import annotations

from typing import Callable

from hypothesis import strategies as st

#: An edit: (draw, the buffer, a position in it) -> None, changing the buffer in place.
Edit = Callable[[Callable, bytearray, int], None]


def _flip(draw, buf: bytearray, at: int) -> None:
    buf[at] ^= 1 << draw(st.integers(0, 7))


def _cut(draw, buf: bytearray, at: int) -> None:
    del buf[at:]


def _insert(draw, buf: bytearray, at: int) -> None:
    buf[at:at] = draw(st.binary(min_size=1, max_size=8))


def _drop(draw, buf: bytearray, at: int) -> None:
    del buf[at]


def _edge(draw, buf: bytearray, at: int) -> None:
    buf[at] = draw(st.sampled_from([0x00, 0x7F, 0x80, 0xFF]))


def _junk(draw, buf: bytearray, at: int) -> None:
    buf += draw(st.binary(min_size=1, max_size=16))


def _repeat(draw, buf: bytearray, at: int) -> None:
    buf += buf[: at + 1]


EDITS: tuple = (_flip, _cut, _insert, _drop, _edge, _junk, _repeat)


def mutate(draw: Callable, data: bytes, more: tuple = (), most: int = 3) -> bytes:
    """``data`` after 0 to ``most`` edits drawn from :data:`EDITS` and ``more``."""
    buf = bytearray(data)
    for _ in range(draw(st.integers(0, most))):
        if not buf:
            break
        edit = draw(st.sampled_from(EDITS + more))
        edit(draw, buf, draw(st.integers(0, len(buf) - 1)))
    return bytes(buf)
