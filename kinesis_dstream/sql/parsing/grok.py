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

Engine and bound: Glue's built-ins use atomic groups, lookbehind and (``BOOLEAN``) a
case-insensitive flag inside a group. The ``regex`` package has all of them on every
Python this library supports and scopes that flag to its group as Java does (Python's
own ``re`` has atomic groups only from 3.11 and refuses the flag), and, unlike ``re``,
it can stop a match: a pattern such as ``%{DATA:a},%{DATA:b},%{DATA:c},%{DATA:d}`` on a
line of commas backtracks exponentially (minutes for 400 characters). Every match is
bounded by :data:`MATCH_TIMEOUT_S`; a line that takes longer is corrupt, with the reason
"grok match timed out after 1 s". Where ``re`` compiled a pattern it was faster
(``%{COMBINEDAPACHELOG}``: 3.9x on the expression alone, 1.77x on a whole parse,
``benchmarks/bench_payload.py``), but it cannot be bounded.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from pyspark.sql.types import (
    DataType,
    DateType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from ...extras import require
from . import payload_types
from .grok_expansion import GROK_TYPES as GROK_TYPES
from .grok_expansion import UNWANTED as UNWANTED
from .grok_expansion import Expansion, GrokField, strptime_format
from .grok_expansion import GrokError as GrokError
from .grok_expansion import GrokTimeoutError as GrokTimeoutError
from .grok_expansion import parse_definitions as parse_definitions

#: The longest one line's match may take (wall clock); the line is corrupt after it.
#: Ordinary lines take microseconds; the bound only stops runaway backtracking.
MATCH_TIMEOUT_S = 1.0

#: Glue's grokLog ``MISSING`` default: this capture in a typed column is null (with
#: ``StrictMode`` false, Glue's default), as in Glue's COMMONAPACHELOG_DATATYPED lines.
MISSING = "-"


@dataclass(frozen=True)
class GrokPattern:
    """A compiled grok pattern: :meth:`match` a line into its :attr:`fields`' values.

    Picklable (the regular expression is compiled again where it is unpickled).
    """

    pattern: str
    custom_patterns: Optional[str]
    regex_text: str
    fields: tuple
    #: The bound of one line's match (:data:`MATCH_TIMEOUT_S`).
    match_timeout_s: float = MATCH_TIMEOUT_S
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
            compiled = compile_regex(self.regex_text)
            names = [f.name for f in self.struct.fields]
            slots: list = [[] for _ in names]
            for i, f in enumerate(self.fields):
                slots[names.index(f.name)].append(compiled.groupindex[f"g{i}"] - 1)
            object.__setattr__(self, "_compiled", (compiled.fullmatch, slots))
        return self._compiled

    def match(self, line: str) -> Optional[list]:
        """The captured text of :attr:`struct`'s columns, or None when the line does not
        match; a field whose group did not take part is None. :meth:`column_converter`
        turns the text into the column's values. :class:`GrokTimeoutError` when the
        match takes longer than :attr:`match_timeout_s`."""
        fullmatch, slots = self._matcher()
        if line.endswith("\n"):
            line = line[:-2] if line.endswith("\r\n") else line[:-1]
        try:
            found = fullmatch(line, timeout=self.match_timeout_s)
        except TimeoutError:
            raise GrokTimeoutError(
                f"grok match timed out after {self.match_timeout_s:g} s"
            ) from None
        if found is None:
            return None
        groups = found.groups()
        values = []
        for slot in slots:
            value = groups[slot[0]]
            for extra in slot[1:]:  # a name captured twice: the first that took part
                if value is not None:
                    break
                value = groups[extra]
            values.append(value)
        return values

    def column_converter(self, column: int, data_type: DataType) -> Callable[[str], Any]:
        """Captured text of :attr:`struct`'s column number ``column`` -> a value of
        ``data_type`` (the pattern's type, or option schema's). In a column that is not a
        string an empty capture and :data:`MISSING` are None; a ``date`` field's Java
        format reads a timestamp or date column. ValueError when the text does not fit:
        the parser counts that as any value that does not fit its column."""
        base = payload_types.converter(data_type, from_text=True)
        if isinstance(data_type, StringType):
            return base  # kept as captured
        grok_field = self.fields[_first_of_each(self.fields)[column]]
        parse = None
        if grok_field.date_format is not None and isinstance(data_type, (TimestampType, DateType)):
            parse = _date_parser(grok_field)

        def convert(text: str) -> Any:
            if not text or text == MISSING:
                return None
            return base(text if parse is None else parse(text))

        return convert


def _first_of_each(fields: tuple) -> list:
    seen: dict = {}
    for i, f in enumerate(fields):
        seen.setdefault(f.name, i)
    return list(seen.values())


def _date_parser(grok_field: GrokField) -> Callable[[str], dt.datetime]:
    """Text in the field's Java date format -> a datetime (UTC when it has no offset)."""
    assert grok_field.date_format is not None
    directives = strptime_format(grok_field.date_format, grok_field.name)

    def parse_date(text: str) -> dt.datetime:
        stamp = dt.datetime.strptime(text, directives)
        return stamp if stamp.tzinfo else stamp.replace(tzinfo=dt.timezone.utc)

    return parse_date


def compile_regex(text: str) -> Any:
    """``text`` compiled by the ``regex`` package, with ASCII classes as Java's."""
    require("regex", "sql", "classification grok")
    import regex

    return regex.compile(text, regex.ASCII)


def compile_grok(
    pattern: Optional[str],
    custom_patterns: Optional[str] = None,
    match_timeout_s: float = MATCH_TIMEOUT_S,
) -> GrokPattern:
    """The compiled ``grokPattern``; :class:`GrokError` (one line naming the pattern at
    fault) when it is empty, names an undefined pattern, loops, expands too far, or does
    not compile. Each line's match is bounded by ``match_timeout_s``."""
    require("regex", "sql", "classification grok")
    import regex

    if not pattern or not pattern.strip():
        raise GrokError("classification grok needs option grokPattern (e.g. %{COMBINEDAPACHELOG})")
    expansion = Expansion(parse_definitions(custom_patterns, "option grokCustomPatterns"))
    text = expansion.expand(pattern)
    columns: dict = {}
    for f in expansion.fields:
        if columns.setdefault(f.name, f).type_name != f.type_name:
            raise GrokError(
                f"grok field {f.name!r} is captured as {columns[f.name].type_name} and as "
                f"{f.type_name}; give it one type"
            )
    try:
        compile_regex(text)
    except regex.error as exc:
        raise GrokError(_culprit(expansion, pattern, exc)) from None
    fields = tuple(expansion.fields)
    return GrokPattern(pattern, custom_patterns, text, fields, match_timeout_s)


def _culprit(expansion: Expansion, pattern: str, exc: Exception) -> str:
    """Which definition does not compile: the first used one that fails alone, the
    innermost first (one that only uses a broken one fails alone too)."""
    import regex

    for name, (body, source) in expansion.used.items():
        try:
            compile_regex(Expansion(expansion.custom).expand(body, (name,)))
        except (regex.error, GrokError) as inner:
            return f"grok pattern {name} ({source}) does not compile: {inner}"
    return f"option grokPattern {pattern!r} does not compile: {exc}"
