"""Glue Studio's pure logic: DQDL rulesets parsed as AWS's DQDL reference writes them,
their constraints' verdicts (``between`` is exclusive, as Glue's), and Python date
formats turned into Spark's patterns."""

import pytest

from kinesis_dstream.glue.errors import GlueError
from kinesis_dstream.glue.studio.dqdl import Keyword, Operator, parse_rule, parse_ruleset
from kinesis_dstream.glue.studio.timestamps import java_date_format


def test_a_ruleset_with_comments_analyzers_and_every_constraint_form():
    ruleset = parse_ruleset(
        """
        # Example rules: Completeness "colA" between 0.4 and 0.8, ColumnCount > 10
        Rules = [
            IsComplete "order-id",
            Completeness "colA" between 0.4 and 0.8,
            ColumnValues "status" in ["active", "pending, closed"],
            ColumnValues "code" matches "[a-z]+#1",
            ColumnValues "amount" not between 1 and 9 with threshold >= 0.9,
            RowCount > 100 where "region = 'eu'",
            (Mean "a" > 3) and ((Sum "b" < 5) or (IsUnique "c"))
        ],
        Analyzers = [ RowCount, Completeness "colA" ]
        """
    )
    rules = {r.rule_type: r for r in ruleset.rules}
    assert [r.rule_type for r in ruleset.analyzers] == ["RowCount", "Completeness"]
    assert (
        rules["IsComplete"].parameters == ("order-id",) and rules["IsComplete"].constraint is None
    )
    between = rules["Completeness"].constraint
    assert between.operator is Operator.BETWEEN and between.operands == (0.4, 0.8)
    assert [between.holds(v) for v in (0.4, 0.5, 0.8)] == [False, True, False]  # exclusive
    status, code, amount = [r for r in ruleset.rules if r.rule_type == "ColumnValues"]
    assert status.constraint.operands == ("active", "pending, closed")
    assert code.constraint.holds("abc#1") and not code.constraint.holds("abc#12")
    assert amount.constraint.operator is Operator.NOT_BETWEEN
    assert amount.threshold.operator is Operator.GE and amount.threshold.operands == (0.9,)
    assert rules["RowCount"].where == "region = 'eu'" and rules["RowCount"].constraint.holds(101)
    composite = rules["Composite"]
    assert composite.combinator == "and"
    assert [p.rule_type for p in composite.parts] == ["Mean", "Composite"]
    assert composite.parts[1].combinator == "or"


def test_constraints_and_keywords_read_as_written():
    assert parse_rule('ColumnValues "a" = NULL').constraint.operands == (Keyword.NULL,)
    rule = parse_rule('ColumnValues "a" in [NULL, EMPTY, "x"]')
    assert rule.constraint.operands == (Keyword.NULL, Keyword.EMPTY, "x")
    assert str(rule.constraint) == 'in [NULL, EMPTY, "x"]'
    assert parse_rule("RowCount = 4").constraint.holds(4)
    assert parse_rule('ColumnLength "s" <= 3').constraint.holds(3)
    assert parse_rule('ColumnValues "s" not in [1, 2]').constraint.holds(3)
    assert parse_rule('ColumnValues "s" not matches "a+"').constraint.holds("b")


@pytest.mark.parametrize(
    "text, message",
    [
        ("IsComplete", None),
        ('ColumnValues "x" between 1', "cannot read the constraint"),
        ('"x" > 1', "does not start with a rule type"),
        ('(RowCount > 1) and (Mean "x" > 1) or (IsComplete "y")', "mixes 'and' and 'or'"),
    ],
)
def test_rules_it_cannot_read_are_named_in_one_line(text, message):
    if message is None:
        assert parse_rule(text).parameters == ()
        return
    with pytest.raises(GlueError, match=message):
        parse_rule(text)


@pytest.mark.parametrize(
    "text",
    [
        "Rules = [ " + "(" * 1000 + 'IsComplete "a"' + ")" * 1000 + " ]",
        'Rules = [ (IsComplete "a") and ' + "(" * 999 + "]",
        "Rules = [ " + "[" * 1000 + "]" * 1000 + " ]",
    ],
)
def test_a_ruleset_nested_a_thousand_deep_is_refused_not_a_recursion_error(text):
    with pytest.raises(GlueError, match="more than 50 deep"):
        parse_ruleset(text)


def test_composite_rules_nested_as_deep_as_allowed_are_read():
    rule = parse_rule("(" * 49 + 'IsComplete "a"' + ")" * 49)
    for _ in range(48):
        assert rule.rule_type == "Composite"
        rule = rule.parts[0]
    assert rule.parts[0].rule_type == "IsComplete"


def test_a_document_without_rules_is_refused():
    with pytest.raises(GlueError, match=r"no 'Rules = \[ \.\.\. \]'"):
        parse_ruleset('IsComplete "id"')


@pytest.mark.parametrize(
    "python, java",
    [
        ("%Y-%m-%d %H:%M:%S", "yyyy-MM-dd HH:mm:ss"),
        ("%Y%m%d%H%M%S", "yyyyMMddHHmmss"),
        ("%d/%m/%Y", "dd/MM/yyyy"),
        ("%Y-%m-%dT%H:%M:%S.%f", "yyyy-MM-dd'T'HH:mm:ss.SSSSSS"),
        ("yyyy-MM-dd", "yyyy-MM-dd"),  # Spark's pattern already
        ("%H h %M", "HH 'h' mm"),
    ],
)
def test_python_date_formats_become_spark_patterns(python, java):
    assert java_date_format(python) == java


def test_a_python_code_without_a_spark_equivalent_is_named():
    with pytest.raises(GlueError, match="%Q has no Spark equivalent"):
        java_date_format("%Y %Q")
