"""Glue's ``classification`` grok: a log line into typed columns, by a grok pattern.

A grok pattern is a regular expression with references ``%{PATTERN}``,
``%{PATTERN:field}`` and ``%{PATTERN:field:type}`` to named patterns: Glue's built-in
ones (:mod:`.grok_patterns`) and the ``grokCustomPatterns`` (one ``NAME definition`` a
line, ``\\n``-separated), which may refer to each other. Every named capture, nested
ones included and ``UNWANTED`` excepted, is one column, in the order its reference
opens in the expanded pattern. Types are Glue's (``byte``, ``boolean``, ``short``,
``int``, ``long``, ``float``, ``double``; ``string`` by default), and java-grok's
``date``/``datetime`` with a Java date format (``%{HTTPDATE:ts;date;dd/MMM/yyyy:HH:mm:ss
Z}``, as Glue's ``COMMONAPACHELOG_DATATYPED`` writes it; ``;`` and ``:`` both separate).
An inline definition ``%{NAME:field=definition}`` defines NAME where it stands.

Matching follows Glue: one line at a time, the pattern against the whole line (one
trailing line break is dropped first); ``\\w``, ``\\d``, ``\\s`` and ``\\b`` are ASCII, as
in Java's regular expressions. A name is looked up exactly (custom patterns before
built-in ones), then case-insensitively when one pattern has it that way: Glue's own
example defines ``digit \\d`` and uses ``%{DIGIT:digit:int}``.

Engines: Glue's built-ins use atomic groups, lookbehind and (``BOOLEAN``) a
case-insensitive flag inside a group. The ``regex`` package has all of them on every
Python this library supports and scopes that flag to its group as Java does; Python's
own ``re`` has atomic groups only from 3.11 and refuses the flag ("global flags not at
the start"), but where it compiles a pattern it is faster (``benchmarks/bench_payload.py``:
3.0-3.5x on ``%{COMBINEDAPACHELOG}``'s expression alone, 1.5x on a whole parse). So a
pattern is compiled with ``re`` when ``re`` takes it without a warning, else with
``regex`` (README: why each dependency).
"""

from __future__ import annotations

import datetime as dt
import re
import warnings
from dataclasses import dataclass, field
from typing import Any, Optional

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
    StructField,
    StructType,
    TimestampType,
)

from ...extras import require
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
_DEFINITION_LINE = re.compile(r"\s*([A-Za-z0-9_]+)\s+(.*?)\s*")
_MAX_DEPTH = 100
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
class _Expansion:
    """The state of one pattern's expansion into a regular expression."""

    custom: dict
    fields: list = field(default_factory=list)  # GrokField per named group, in order
    used: dict = field(default_factory=dict)  # pattern name -> (definition, source)

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
        out, last = [], 0
        for start, end, inner in _references(text):
            out.append(text[last:start])
            last = end
            reference, has_definition, definition = inner.partition("=")
            name, _, spec = reference.partition(":")
            if not _NAME.fullmatch(name):
                raise GrokError(f"grok reference %{{{inner}}} does not start with a pattern name")
            if name in stack:
                raise GrokError(
                    f"grok patterns refer to each other in a loop: {' -> '.join((*stack, name))}"
                )
            if has_definition:
                body, source = definition, "inline"
            else:
                body, source = self.lookup(name, stack)
            self.used.setdefault(name, (body, source))
            column = self._field(spec, inner) if spec else None
            if column is not None:
                self.fields.append(column)
                index = len(self.fields) - 1  # before the nested ones: pre-order
                out.append(f"(?P<g{index}>{self.expand(body, (*stack, name))})")
            else:
                out.append(f"(?:{self.expand(body, (*stack, name))})")
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
        if date_format is not None:
            _strptime_format(date_format, name)  # refused at compile time, not per line
        return GrokField(name, type_name, date_format)


def _strptime_format(java: str, field_name: str) -> str:
    """A Java date format (SimpleDateFormat's common letters) as a strptime format."""
    out = []
    for match in _JAVA_DATE_TOKEN.finditer(java):
        token = match.group(0)
        if token.startswith("'"):
            out.append(token[1:-1].replace("%", "%%") or "'")
        elif token[0].isalpha():
            if token not in _JAVA_DATE:
                raise GrokError(
                    f"grok field {field_name!r}: date format {java!r} uses {token!r}, which is "
                    f"not supported here (supported: {', '.join(sorted(_JAVA_DATE))})"
                )
            out.append(_JAVA_DATE[token])
        else:
            out.append(token.replace("%", "%%"))
    return "".join(out)


@dataclass(frozen=True)
class GrokPattern:
    """A compiled grok pattern: :meth:`match` a line into its :attr:`fields`' values.

    Picklable (the regular expression is compiled again where it is unpickled).
    """

    pattern: str
    custom_patterns: Optional[str]
    regex_text: str
    fields: tuple
    #: "auto" (``re`` when it takes the pattern, else ``regex``), "re" or "regex".
    engine: str = "auto"
    _compiled: Any = field(default=None, compare=False, repr=False)

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_compiled": None}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    @property
    def struct(self) -> StructType:
        """One column per distinct field name, in order (the first one's type)."""
        seen: dict = {}
        for f in self.fields:
            seen.setdefault(f.name, f)
        return StructType([StructField(f.name, f.spark_type, True) for f in seen.values()])

    def _matcher(self) -> Any:
        if self._compiled is None:
            compiled = compile_regex(self.regex_text, self.engine)
            names = [f.name for f in self.struct.fields]
            slots: list = [[] for _ in names]
            for i, f in enumerate(self.fields):
                slots[names.index(f.name)].append(compiled.groupindex[f"g{i}"] - 1)
            converters = [_converter(self.fields[i]) for i in _first_of_each(self.fields)]
            object.__setattr__(self, "_compiled", (compiled.fullmatch, slots, converters))
        return self._compiled

    def match(self, line: str) -> Optional[list]:
        """The values of :attr:`struct`'s columns, or None when the line does not match.

        A field whose group did not take part is None; an empty capture is None for a
        typed field and "" for a string. A ``date`` value that does not fit its format
        raises ValueError.
        """
        fullmatch, slots, converters = self._matcher()
        if line.endswith("\n"):
            line = line[:-2] if line.endswith("\r\n") else line[:-1]
        found = fullmatch(line)
        if found is None:
            return None
        groups = found.groups()
        values = []
        for slot, convert in zip(slots, converters):
            value = groups[slot[0]]
            for extra in slot[1:]:  # a name captured twice: the first that took part
                if value is not None:
                    break
                value = groups[extra]
            values.append(None if value is None else convert(value))
        return values


def _first_of_each(fields: tuple) -> list:
    seen: dict = {}
    for i, f in enumerate(fields):
        seen.setdefault(f.name, i)
    return list(seen.values())


def _converter(grok_field: GrokField) -> Any:
    """Text -> the value handed to the column's converter: "" is None for typed fields."""
    if grok_field.type_name == "string":
        return str
    if grok_field.type_name in ("date", "datetime"):
        if grok_field.date_format is None:
            return lambda v: v or None  # ISO-8601 text, read by the timestamp converter
        directives = _strptime_format(grok_field.date_format, grok_field.name)

        def parse_date(v: str) -> Optional[dt.datetime]:
            if not v:
                return None
            stamp = dt.datetime.strptime(v, directives)
            return stamp if stamp.tzinfo else stamp.replace(tzinfo=dt.timezone.utc)

        return parse_date
    return lambda v: v or None


def compile_regex(text: str, engine: str = "auto") -> Any:
    """``text`` compiled (ASCII classes, as Java's) by ``engine`` (see the module's doc)."""
    if engine in ("auto", "re"):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # e.g. "possible nested set": a POSIX class
                return re.compile(text, re.ASCII)
        except (re.error, Warning, RecursionError, OverflowError):
            if engine == "re":
                raise
    require("regex", "sql", "classification grok")
    import regex

    return regex.compile(text, regex.ASCII)


def compile_grok(
    pattern: Optional[str], custom_patterns: Optional[str] = None, engine: str = "auto"
) -> GrokPattern:
    """The compiled ``grokPattern``; :class:`GrokError` (one line naming the pattern at
    fault) when it is empty, names an undefined pattern, loops, or does not compile.
    ``engine`` forces one regular expression engine (for comparing them)."""
    require("regex", "sql", "classification grok")
    import regex

    if not pattern or not pattern.strip():
        raise GrokError("classification grok needs option grokPattern (e.g. %{COMBINEDAPACHELOG})")
    expansion = _Expansion(parse_definitions(custom_patterns, "option grokCustomPatterns"))
    text = expansion.expand(pattern)
    columns: dict = {}
    for f in expansion.fields:
        if columns.setdefault(f.name, f).type_name != f.type_name:
            raise GrokError(
                f"grok field {f.name!r} is captured as {columns[f.name].type_name} and as "
                f"{f.type_name}; give it one type"
            )
    try:
        compile_regex(text, "regex" if engine == "auto" else engine)
    except (regex.error, re.error) as exc:
        raise GrokError(_culprit(expansion, pattern, exc)) from None
    return GrokPattern(pattern, custom_patterns, text, tuple(expansion.fields), engine)


def _culprit(expansion: _Expansion, pattern: str, exc: Exception) -> str:
    """Which definition does not compile: the first used one that fails alone."""
    import regex

    for name, (body, source) in expansion.used.items():
        try:
            compile_regex(_Expansion(expansion.custom).expand(body, (name,)), "regex")
        except (regex.error, GrokError) as inner:
            return f"grok pattern {name} ({source}) does not compile: {inner}"
    return f"option grokPattern {pattern!r} does not compile: {exc}"
