"""Grok pattern expansion: ``%{NAME:field:type}`` references into one regular expression.

The definitions are Glue's built-ins (:mod:`.grok_patterns`) and ``grokCustomPatterns``
(``NAME definition`` lines), which may refer to each other; :class:`Expansion` replaces
every reference by its definition, recursively, and records one :class:`GrokField` per
named capture in the order its reference opens. :mod:`.grok` compiles and matches the
result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from pyspark.sql.types import (
    BooleanType,
    ByteType,
    DataType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    TimestampType,
)

from .grok_patterns import BUILTIN_PATTERNS

#: A capture by this name gives no column (Glue's built-ins use it for nested ones).
UNWANTED = "UNWANTED"
GROK_TYPES: dict[str, DataType] = {
    "byte": ByteType(),
    "boolean": BooleanType(),
    "short": ShortType(),
    "int": IntegerType(),
    "long": LongType(),
    "float": FloatType(),
    "double": DoubleType(),
    "string": StringType(),
    "date": TimestampType(),
    "datetime": TimestampType(),
}
_NAME = re.compile(r"[A-Za-z0-9_]+")
#: ``NAME=definition``, ``NAME:field=definition``, ``NAME:field:type=definition``: an
#: inline definition; a ``=`` after a date format (``%{DATA:x;date;yyyy=MM}``) is not one.
_INLINE_DEFINITION = re.compile(
    rf"([A-Za-z0-9_]+(?::[^:;=]*(?:[:;]\s*(?i:{'|'.join(GROK_TYPES)})\s*)?)?)=(.*)", re.S
)
_DEFINITION_LINE = re.compile(r"\s*([A-Za-z0-9_]+)\s+(.*?)\s*")
_MAX_DEPTH = 100
#: The longest regular expression a pattern may expand to: definitions that use others
#: several times multiply (22 levels of two uses each are 37 MB and minutes to build).
MAX_EXPANDED_CHARS = 1_000_000
# Java SimpleDateFormat letters -> strptime directives (the common ones).
_JAVA_DATE = {
    "yyyy": "%Y", "yy": "%y", "MMMM": "%B", "MMM": "%b", "MM": "%m", "M": "%m",
    "dd": "%d", "d": "%d", "HH": "%H", "H": "%H", "hh": "%I", "h": "%I", "mm": "%M",
    "m": "%M", "ss": "%S", "s": "%S", "SSS": "%f", "Z": "%z", "XXX": "%z", "X": "%z",
    "EEEE": "%A", "EEE": "%a", "a": "%p",
}  # fmt: skip
_JAVA_DATE_TOKEN = re.compile(r"'[^']*'|([A-Za-z])\1*|[^A-Za-z']+")


class GrokError(ValueError):
    """A grok pattern that cannot be used: names the pattern and what is wrong."""


class GrokTimeoutError(ValueError):
    """One line's match took longer than its bound; the message is the corrupt reason."""


@dataclass(frozen=True)
class GrokField:
    """One column: its name, Glue type, and a date format for ``date`` fields."""

    name: str
    type_name: str = "string"
    date_format: Optional[str] = None

    @property
    def spark_type(self) -> DataType:
        return GROK_TYPES[self.type_name]


def parse_definitions(text: Optional[str], where: str) -> dict:
    """``NAME definition`` lines (``\\n``-separated; blank and ``#`` lines skipped)."""
    patterns: dict = {}
    for number, line in enumerate((text or "").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _DEFINITION_LINE.fullmatch(line)
        if match is None:
            raise GrokError(
                f"{where} line {number} {line.strip()!r} is not 'NAME definition' (a name of "
                "letters, digits and '_', a space, then the pattern)"
            )
        patterns[match.group(1)] = match.group(2)
    return patterns


_BUILTINS = parse_definitions(BUILTIN_PATTERNS, "Glue's built-in patterns")


def _references(text: str) -> list:
    """``(start, end, inner)`` of each ``%{...}`` in ``text``, nested braces balanced."""
    found = []
    i = text.find("%{")
    while i >= 0:
        depth, j = 0, i + 1
        while j < len(text):
            char = text[j]
            if char == "\\":
                j += 2
                continue
            depth += char == "{"
            depth -= char == "}"
            if depth == 0:
                break
            j += 1
        if depth != 0:
            raise GrokError(f"'%{{' at position {i} of {text!r} is never closed by '}}'")
        found.append((i, j + 1, text[i + 2 : j]))
        i = text.find("%{", j + 1)
    return found


@dataclass
class Expansion:
    """The state of one pattern's expansion into a regular expression."""

    custom: dict
    fields: list = field(default_factory=list)  # GrokField per named group, in order
    #: pattern name -> (definition, source), each after the definitions it uses
    used: dict = field(default_factory=dict)

    def lookup(self, name: str, stack: tuple) -> tuple:
        for table, source in ((self.custom, "grokCustomPatterns"), (_BUILTINS, "built-in")):
            if name in table:
                return table[name], source
        folded = [
            (n, table, source)
            for table, source in ((self.custom, "grokCustomPatterns"), (_BUILTINS, "built-in"))
            for n in table
            if n.lower() == name.lower()
        ]
        if len(folded) == 1:
            found, table, source = folded[0]
            return table[found], source
        inside = f" (inside %{{{stack[-1]}}})" if stack else ""
        raise GrokError(f"grok pattern %{{{name}}}{inside} is not defined (nor built in)")

    def expand(self, text: str, stack: tuple = ()) -> str:
        if len(stack) > _MAX_DEPTH:
            raise GrokError(f"grok patterns nest deeper than {_MAX_DEPTH}: {' -> '.join(stack)}")
        out, last, size = [], 0, len(text)
        for start, end, inner in _references(text):
            out.append(text[last:start])
            last = end
            inline = _INLINE_DEFINITION.fullmatch(inner)
            reference, definition = inline.groups() if inline else (inner, None)
            name, _, spec = reference.partition(":")
            if not _NAME.fullmatch(name):
                raise GrokError(f"grok reference %{{{inner}}} does not start with a pattern name")
            if name in stack:
                raise GrokError(
                    f"grok patterns refer to each other in a loop: {' -> '.join((*stack, name))}"
                )
            if definition is not None:
                body, source = definition, "inline"
            else:
                body, source = self.lookup(name, stack)
            column = self._field(spec, inner) if spec else None
            group = "?:"
            if column is not None:
                self.fields.append(column)
                group = f"?P<g{len(self.fields) - 1}>"  # before the nested ones: pre-order
            expanded = self.expand(body, (*stack, name))
            # Listed once the definitions it uses are: innermost first, for culprit().
            self.used.setdefault(name, (body, source))
            out.append(f"({group}{expanded})")
            size += len(out[-1])
            if size > MAX_EXPANDED_CHARS:
                where = f"%{{{stack[-1]}}}" if stack else "option grokPattern"
                raise GrokError(
                    f"grok pattern {where} expands to more than {MAX_EXPANDED_CHARS:,} "
                    f"characters of regular expression (patterns that use others several "
                    f"times multiply: {' -> '.join((*stack, name))})"
                )
        out.append(text[last:])
        return "".join(out)

    @staticmethod
    def _field(spec: str, inner: str) -> Optional[GrokField]:
        parts = re.split(r"[:;]", spec, maxsplit=2)
        name = parts[0].strip()
        if not name or name == UNWANTED:
            return None
        type_name = parts[1].strip().lower() if len(parts) > 1 else "string"
        if type_name not in GROK_TYPES:
            raise GrokError(
                f"grok field {name!r} in %{{{inner}}} has type {parts[1]!r}; Glue's types: "
                "byte, boolean, short, int, long, float, double, string (and date, datetime)"
            )
        date_format = parts[2] if len(parts) > 2 else None
        if date_format is not None:  # refused at compile time, not per line
            strptime_format(date_format, name, f"%{{{inner}}}")
        return GrokField(name, type_name, date_format)


def strptime_format(java: str, field_name: str, reference: str = "") -> str:
    """A Java date format (SimpleDateFormat's common letters) as a strptime format.

    :class:`GrokError` naming the field (and its ``reference``, ``%{...}``) for a letter
    not supported here, and for a field given twice (``yyyy yyyy``, ``d dd``): strptime
    compiles each directive into a named group and refuses a second one, on every line.
    """
    where = f"grok field {field_name!r}" + (f" in {reference}" if reference else "")
    out = []
    seen: dict = {}  # strptime directive -> the Java letters that gave it
    for match in _JAVA_DATE_TOKEN.finditer(java):
        token = match.group(0)
        if token.startswith("'"):
            out.append(token[1:-1].replace("%", "%%") or "'")
        elif token[0].isalpha():
            if token not in _JAVA_DATE:
                raise GrokError(
                    f"{where}: date format {java!r} uses {token!r}, which is "
                    f"not supported here (supported: {', '.join(sorted(_JAVA_DATE))})"
                )
            directive = _JAVA_DATE[token]
            if directive in seen:
                raise GrokError(
                    f"{where}: date format {java!r} gives one field twice ({seen[directive]!r} "
                    f"and {token!r}); Python's strptime reads each field once"
                )
            seen[directive] = token
            out.append(directive)
        else:
            out.append(token.replace("%", "%%"))
    return "".join(out)
