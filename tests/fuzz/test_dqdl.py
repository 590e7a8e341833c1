"""Glue Data Quality rulesets (DQDL) as AWS's DQDL reference writes them, mutated, nested
deep, and random text of DQDL's tokens.

The rule (docs/reliability.md#options-positions-and-files): a ruleset, or one GlueError
naming what could not be read; never another exception (a ``RecursionError`` for a
ruleset nested a thousand deep), never a call past its bound.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kinesis_dstream.glue.errors import GlueError
from kinesis_dstream.glue.studio.dqdl import MAX_NESTING, Rule, parse_ruleset

from .json_mutations import mutated_text

#: Rules as AWS's DQDL reference shows them.
RULES = [
    'IsComplete "order-id"',
    'Completeness "colA" between 0.4 and 0.8',
    'ColumnValues "status" in ["active", "pending, closed"]',
    'ColumnValues "code" matches "[a-z]+#1"',
    'ColumnValues "amount" not between 1 and 9 with threshold >= 0.9',
    "RowCount > 100 where \"region = 'eu'\"",
    '(Mean "a" > 3) and ((Sum "b" < 5) or (IsUnique "c"))',
    'ColumnValues "a" in [NULL, EMPTY, "x"]',
    'ColumnLength "s" <= 3',
    "ColumnCount > 10",
    'CustomSql "select count(*) from primary" > 0',
]
PIECES = ["(", ")", "[", "]", ",", '"', "\\", "#", "and", "or", "not", "between", "in", " "]


@st.composite
def rulesets(draw) -> str:
    rules = draw(st.lists(st.sampled_from(RULES), min_size=1, max_size=5))
    if draw(st.booleans()):  # a composite nested around them, maybe past the bound
        depth = draw(st.integers(1, 3 * MAX_NESTING))
        rules[0] = "(" * depth + rules[0] + ")" * depth + " and (RowCount > 0)"
    text = "Rules = [\n    " + ",\n    ".join(rules) + "\n]"
    if draw(st.booleans()):
        text += '\nAnalyzers = [ RowCount, Completeness "colA" ]'
    return draw(st.just(text) | mutated_text(text, st.sampled_from(PIECES) | st.characters()))


def rule_count(rule: Rule) -> int:
    return 1 + sum(rule_count(part) for part in rule.parts)


@given(st.one_of(rulesets(), st.lists(st.sampled_from(PIECES) | st.text(max_size=3)).map("".join)))
def test_a_ruleset_is_read_or_one_glue_error(text):
    try:
        ruleset = parse_ruleset(text)
    except GlueError as exc:
        message = str(exc)
        assert message.startswith("DQDL") and "\n" not in message and len(message) < 1000
        return
    for rule in ruleset.rules + ruleset.analyzers:
        assert rule_count(rule) >= 1
        for constraint in (rule.constraint, rule.threshold):
            if constraint is not None:
                str(constraint)
