"""Glue Data Quality's rule language (DQDL): ``Rules = [ ... ]`` (and an optional
``Analyzers = [ ... ]``) parsed into :class:`Rule` objects with their constraint.

A rule is its type, its quoted parameters (column names, a SQL query), an optional
constraint (``> 0.9``, ``between 1 and 10``, ``in ["a", "b"]``, ``matches "[a-z]+"``),
an optional ``with threshold`` constraint and an optional ``where "sql"`` filter.
Composite rules (``(rule) and (rule)``) are parsed too, nested at most
:data:`MAX_NESTING` deep (a deeper one is a :class:`GlueError`, not a ``RecursionError``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Optional

from ...errors import shown
from ..errors import GlueError

#: Brackets and parentheses nested deeper than this are refused (composites recurse).
MAX_NESTING = 50
_TOKEN = re.compile(
    r'\s*(?:(?P<string>"(?:[^"\\]|\\.)*")|(?P<number>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)'
    r"|(?P<op>>=|<=|!=|=|>|<)|(?P<punct>[\[\](),])|(?P<word>[A-Za-z_][A-Za-z0-9_.()]*))"
)


class Keyword(Enum):
    """DQDL's value keywords in a ColumnValues condition."""

    NULL = "NULL"
    EMPTY = "EMPTY"
    WHITESPACES_ONLY = "WHITESPACES_ONLY"


def _any_of(value: Any, operands: tuple) -> Any:
    """``value`` is one of ``operands`` (strings or keywords)."""
    from functools import reduce

    from pyspark.sql import functions as F

    text = value.cast("string")
    tests = []
    for operand in operands:
        if operand is Keyword.NULL:
            tests.append(value.isNull())
        elif operand is Keyword.EMPTY:
            tests.append(text == F.lit(""))
        elif operand is Keyword.WHITESPACES_ONLY:
            tests.append((F.length(F.trim(text)) == 0) & (F.length(text) > 0))
        else:
            tests.append(value.isNotNull() & (value == F.lit(operand)))
    return reduce(lambda a, b: a | b, tests)


class Operator(Enum):
    """A DQDL constraint's kind."""

    GT = ">"
    GE = ">="
    LT = "<"
    LE = "<="
    EQ = "="
    NE = "!="
    BETWEEN = "between"
    NOT_BETWEEN = "not between"
    IN = "in"
    NOT_IN = "not in"
    MATCHES = "matches"
    NOT_MATCHES = "not matches"


@dataclass(frozen=True)
class Constraint:
    """``operator`` applied to ``operands`` (numbers or strings)."""

    operator: Operator
    operands: tuple

    def holds(self, value: Any) -> bool:
        """Whether a metric ``value`` meets the constraint (None never does)."""
        if value is None:
            return False
        op, args = self.operator, self.operands
        if op is Operator.BETWEEN:
            return args[0] < value < args[1]
        if op is Operator.NOT_BETWEEN:
            return not args[0] < value < args[1]
        if op in (Operator.IN, Operator.NOT_IN):
            return (value in args) == (op is Operator.IN)
        if op in (Operator.MATCHES, Operator.NOT_MATCHES):
            return (re.fullmatch(args[0], str(value)) is not None) == (op is Operator.MATCHES)
        return _COMPARE[op](value, args[0])

    def condition(self, value: Any) -> Any:
        """The same test on a Spark column, with Glue's nulls: a null value does not
        meet a comparison, a range or ``in``, and does meet ``!=`` and ``not in``
        (unless the operands name ``NULL``)."""
        from pyspark.sql import functions as F

        op, args = self.operator, self.operands
        if op in (Operator.IN, Operator.NOT_IN, Operator.EQ, Operator.NE) and any(
            isinstance(a, Keyword) for a in args
        ):
            test = _any_of(value, args)
            return F.coalesce(test if op in (Operator.IN, Operator.EQ) else ~test, F.lit(False))
        if op is Operator.BETWEEN:
            test = (value > F.lit(args[0])) & (value < F.lit(args[1]))
        elif op is Operator.NOT_BETWEEN:
            test = (value <= F.lit(args[0])) | (value >= F.lit(args[1]))
        elif op is Operator.IN:
            test = value.isin(list(args))
        elif op is Operator.NOT_IN:
            test = value.isNull() | ~value.isin(list(args))
        elif op is Operator.NE:
            test = value.isNull() | (value != F.lit(args[0]))
        elif op is Operator.MATCHES:
            test = value.cast("string").rlike(f"^(?:{args[0]})$")
        elif op is Operator.NOT_MATCHES:
            test = ~value.cast("string").rlike(f"^(?:{args[0]})$")
        else:
            test = _COMPARE[op](value, F.lit(args[0]))
        return F.coalesce(test, F.lit(False))

    def __str__(self) -> str:
        if self.operator in (Operator.BETWEEN, Operator.NOT_BETWEEN):
            return f"{self.operator.value} {_show(self.operands[0])} and {_show(self.operands[1])}"
        if self.operator in (Operator.IN, Operator.NOT_IN):
            return f"{self.operator.value} [{', '.join(_show(a) for a in self.operands)}]"
        return f"{self.operator.value} {_show(self.operands[0])}"


_COMPARE = {
    Operator.GT: lambda a, b: a > b,
    Operator.GE: lambda a, b: a >= b,
    Operator.LT: lambda a, b: a < b,
    Operator.LE: lambda a, b: a <= b,
    Operator.EQ: lambda a, b: a == b,
    Operator.NE: lambda a, b: a != b,
}


@dataclass(frozen=True)
class Rule:
    """One DQDL rule as written (``text``) and parsed."""

    text: str
    rule_type: str
    parameters: tuple = ()
    constraint: Optional[Constraint] = None
    threshold: Optional[Constraint] = None
    where: Optional[str] = None
    #: For a composite rule: "and"/"or" and its parts.
    combinator: str = ""
    parts: tuple = field(default=())


@dataclass(frozen=True)
class Ruleset:
    """A DQDL document's rules and analyzers."""

    rules: tuple
    analyzers: tuple = ()


def parse_ruleset(text: str) -> Ruleset:
    """The ruleset of a DQDL document. Raises :class:`GlueError` naming what it
    cannot read."""
    body = "\n".join(_strip_comment(line) for line in text.splitlines())
    sections: dict[str, tuple] = {}
    for match in re.finditer(r"\b(Rules|Analyzers)\s*=\s*\[", body):
        end = _closing(body, match.end() - 1)
        sections[match.group(1)] = tuple(
            parse_rule(part) for part in _split_top(body[match.end() : end])
        )
    if "Rules" not in sections and "Analyzers" not in sections:
        raise GlueError("DQDL ruleset: no 'Rules = [ ... ]' in it")
    return Ruleset(sections.get("Rules", ()), sections.get("Analyzers", ()))


def parse_rule(text: str) -> Rule:
    """One rule (``IsComplete "id"``, ``ColumnValues "x" between 1 and 9``…)."""
    text = text.strip()
    composite = _split_composite(text)
    if composite:
        combinator, parts = composite
        return Rule(text, "Composite", combinator=combinator, parts=tuple(map(parse_rule, parts)))
    tokens = _tokens(text)
    if not tokens or tokens[0][0] != "word":
        raise GlueError(f"DQDL rule {shown(text)}: it does not start with a rule type")
    rule_type, rest = tokens[0][1], tokens[1:]
    parameters = []
    while rest and rest[0][0] == "string":
        parameters.append(_unquote(rest.pop(0)[1]))
    where = None
    if len(rest) >= 2 and rest[-2] == ("word", "where") and rest[-1][0] == "string":
        where = _unquote(rest[-1][1])
        rest = rest[:-2]
    threshold = None
    for i in range(len(rest) - 1):
        if rest[i] == ("word", "with") and rest[i + 1] == ("word", "threshold"):
            threshold = _constraint(rest[i + 2 :], text)
            rest = rest[:i]
            break
    constraint = _constraint(rest, text) if rest else None
    return Rule(text, rule_type, tuple(parameters), constraint, threshold, where)


def _constraint(tokens: list, text: str) -> Constraint:
    words = [value for _, value in tokens]
    try:
        if tokens[0][0] == "op":
            return Constraint(Operator(words[0]), (_value(tokens[1]),))
        negated = words[0] == "not"
        if negated:
            tokens, words = tokens[1:], words[1:]
        if words[0] == "between" and words[2] == "and":
            op = Operator.NOT_BETWEEN if negated else Operator.BETWEEN
            return Constraint(op, (_value(tokens[1]), _value(tokens[3])))
        if words[0] == "in" and words[1] == "[":
            values = tuple(_value(t) for t in tokens[2:-1] if t[1] != ",")
            return Constraint(Operator.NOT_IN if negated else Operator.IN, values)
        if words[0] == "matches":
            op = Operator.NOT_MATCHES if negated else Operator.MATCHES
            return Constraint(op, (_value(tokens[1]),))
    except (IndexError, ValueError):
        pass
    raise GlueError(f"DQDL rule {shown(text)}: cannot read the constraint {shown(' '.join(words))}")


def _value(token: tuple) -> Any:
    kind, value = token
    if kind == "word" and value in Keyword.__members__:
        return Keyword[value]
    if kind == "string":
        return _unquote(value)
    if kind == "number":
        number = float(value)
        return int(number) if number.is_integer() and "." not in value else number
    raise ValueError(value)


def _tokens(text: str) -> list:
    out, position, end = [], 0, len(text.rstrip())
    while position < end:
        match = _TOKEN.match(text, position)
        if not match or match.end() == position:
            rest = shown(text[position:])
            raise GlueError(f"DQDL rule {shown(text)}: cannot read it from {rest}")
        kind = match.lastgroup or ""
        out.append((kind, match.group(kind)))
        position = match.end()
    return out


def _unquote(quoted: str) -> str:
    return re.sub(r"\\(.)", r"\1", quoted[1:-1])


def _show(value: Any) -> str:
    if isinstance(value, Keyword):
        return value.value
    return f'"{value}"' if isinstance(value, str) else str(value)


def _strip_comment(line: str) -> str:
    in_string = False
    for i, char in enumerate(line):
        if char == '"' and (i == 0 or line[i - 1] != "\\"):
            in_string = not in_string
        elif char == "#" and not in_string:
            return line[:i]
    return line


def _closing(text: str, open_at: int) -> int:
    """Index of the bracket closing the one at ``open_at`` (strings skipped); nesting
    deeper than :data:`MAX_NESTING` is refused."""
    depth, in_string = 0, False
    for i in range(open_at, len(text)):
        char = text[i]
        if char == '"' and text[i - 1] != "\\":
            in_string = not in_string
        elif not in_string and char in "[(":
            depth += 1
            if depth > MAX_NESTING:
                raise GlueError(
                    f"DQDL: {text[open_at : open_at + 60]!r}... nests brackets or parentheses "
                    f"more than {MAX_NESTING} deep"
                )
        elif not in_string and char in "])":
            depth -= 1
            if depth == 0:
                return i
    raise GlueError("DQDL ruleset: a '[' or '(' is never closed")


def _split_top(body: str, separator: str = ",") -> list:
    """``body`` split on ``separator`` outside strings and brackets."""
    parts, depth, in_string, start = [], 0, False, 0
    for i, char in enumerate(body):
        if char == '"' and (i == 0 or body[i - 1] != "\\"):
            in_string = not in_string
        elif not in_string and char in "[(":
            depth += 1
        elif not in_string and char in "])":
            depth -= 1
        elif not in_string and depth == 0 and char == separator:
            parts.append(body[start:i])
            start = i + 1
    parts.append(body[start:])
    return [p.strip() for p in parts if p.strip()]


def _split_composite(text: str) -> Optional[tuple]:
    """``(a) and (b)`` / ``(a) or (b)``: the combinator and the parts, else None."""
    if not text.startswith("("):
        return None
    parts, combinators, position = [], set(), 0
    while position < len(text):
        end = _closing(text, position)
        parts.append(text[position + 1 : end])
        rest = text[end + 1 :].lstrip()
        if not rest:
            break
        word = re.match(r"(and|or)\s*", rest)
        if not word:
            raise GlueError(f"DQDL rule {shown(text)}: expected 'and' or 'or' after a ')'")
        combinators.add(word.group(1))
        position = len(text) - len(rest) + word.end()
    if len(combinators) > 1:
        raise GlueError(f"DQDL rule {shown(text)}: mixes 'and' and 'or' without parentheses")
    return (combinators.pop() if combinators else "and"), parts
