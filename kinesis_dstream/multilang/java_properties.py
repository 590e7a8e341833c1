"""Java ``.properties`` files, read exactly as ``java.util.Properties.load`` reads them.

The Java MultiLangDaemon loads its file with ``Properties.load(InputStream)``, so a user's
existing file must mean the same here, escapes and all (tested against ``java`` itself in
``tests/interop/test_java_properties.py``):

- natural lines end at ``\\n``, ``\\r`` or ``\\r\\n``; leading white space (space, tab,
  form feed) is skipped; a line whose first other character is ``#`` or ``!`` is a
  comment (a comment never continues, whatever it ends with);
- a line ending in an odd number of backslashes continues on the next one, whose leading
  white space is skipped (a ``#`` there is text); at the end of the file the backslash
  is dropped;
- the key ends at the first unescaped ``=``, ``:`` or white space; white space, then one
  ``=`` or ``:``, then white space separate it from the value, which keeps its trailing
  white space;
- in keys and values ``\\t``, ``\\n``, ``\\r``, ``\\f`` and ``\\uXXXX`` are those
  characters (two ``\\uXXXX`` of a UTF-16 surrogate pair are one character, as in
  Java's strings: ``Properties.store`` writes a character past U+FFFF so), any other
  escaped character is itself;
- bytes are ISO 8859-1 (``load(InputStream)``); anything else needs ``\\uXXXX``;
- a key given twice keeps its last value.
"""

from __future__ import annotations

WHITE_SPACE = " \t\f"
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


class PropertiesSyntaxError(ValueError):
    """A ``\\uXXXX`` escape that is not four hex digits (Java: IllegalArgumentException)."""


def _logical_lines(text: str) -> list:
    """The logical lines of ``text``: comments and blank lines out, continuations joined."""
    lines: list = []
    natural = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    current: list = []  # parts of a logical line being continued
    for line in natural:
        stripped = line.lstrip(WHITE_SPACE)
        if not any(current):  # nothing read yet: a new logical line, as in Java
            current = []
            if not stripped or stripped[0] in "#!":
                continue
        elif not stripped:  # an empty continuation line ends the logical line
            lines.append("".join(current))
            current = []
            continue
        trailing = len(stripped) - len(stripped.rstrip("\\"))
        if trailing % 2 == 1:
            current.append(stripped[:-1])
            continue
        current.append(stripped)
        lines.append("".join(current))
        current = []
    if any(current):  # the file ended on a continuation: Java drops the backslash
        lines.append("".join(current))
    return lines


def _split(line: str) -> tuple:
    """(key, value) of a logical line, both still escaped."""
    index, length = 0, len(line)
    while index < length:
        char = line[index]
        if char == "\\":
            index += 2
            continue
        if char in "=:" or char in WHITE_SPACE:
            break
        index += 1
    key, rest = line[:index], line[index:]
    rest = rest.lstrip(WHITE_SPACE)
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(WHITE_SPACE)
    return key, rest


def unescape(text: str) -> str:
    """Java's ``loadConvert``: the escapes of a key or value."""
    if "\\" not in text:
        return text
    out: list = []
    index, length = 0, len(text)
    while index < length:
        char = text[index]
        index += 1
        if char != "\\":
            out.append(char)
            continue
        if index >= length:  # a lone backslash at the very end: Java keeps nothing
            break
        char = text[index]
        index += 1
        if char == "u":
            digits = text[index : index + 4]
            if len(digits) < 4 or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise PropertiesSyntaxError(f"malformed \\uxxxx escape: \\u{digits!s}")
            out.append(chr(int(digits, 16)))
            index += 4
        else:
            out.append(_ESCAPES.get(char, char))
    text = "".join(out)
    if any("\ud800" <= c <= "\udfff" for c in text):  # Java's strings are UTF-16
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return text


def read_properties_text(text: str) -> dict:
    """Parse Java ``.properties`` text into a dict (the last value of a key wins)."""
    props: dict = {}
    for line in _logical_lines(text):
        key, value = _split(line)
        props[unescape(key)] = unescape(value)
    return props


def read_properties_bytes(data: bytes) -> dict:
    """Parse a ``.properties`` file's bytes as ``Properties.load(InputStream)``: ISO 8859-1."""
    return read_properties_text(data.decode("iso-8859-1"))
