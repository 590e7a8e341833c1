"""Glue's Evaluate Data Quality on a batch: a DQDL ruleset's outcomes (``ruleOutcomes``:
``Rule``, ``Outcome``, ``FailureReason``, ``EvaluatedMetrics``, ``EvaluatedRule``) and
each row's (``rowLevelOutcomes``: the frame's columns plus ``DataQualityRulesPass``,
``DataQualityRulesFail``, ``DataQualityRulesSkip`` and ``DataQualityEvaluationResult``).

A rule type this layer does not evaluate is named in one warning when the ruleset is
parsed and its outcome is ``Failed`` with that reason (never a silent pass). On a
streaming job each micro-batch is evaluated by itself: RowCount is the batch's rows,
IsUnique holds within the batch.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import reduce
from typing import Any, Callable, Optional

from ..errors import GlueError
from .dqdl import Rule, Ruleset, parse_ruleset

log = logging.getLogger(__name__)

PASSED, FAILED = "Passed", "Failed"
ROW_COLUMNS = (
    "DataQualityRulesPass",
    "DataQualityRulesFail",
    "DataQualityRulesSkip",
    "DataQualityEvaluationResult",
)

#: Spark SQL type names DQDL's ColumnDataType names (and its aliases).
DATA_TYPES = {
    "STRING": {"string"},
    "INTEGER": {"int", "bigint", "smallint", "tinyint"},
    "INT": {"int", "bigint", "smallint", "tinyint"},
    "LONG": {"bigint"},
    "FLOAT": {"float", "double"},
    "DOUBLE": {"double"},
    "DECIMAL": {"decimal"},
    "BOOLEAN": {"boolean"},
    "DATE": {"date"},
    "TIMESTAMP": {"timestamp", "timestamp_ntz"},
}


@dataclass(frozen=True)
class Outcome:
    """One rule's result on a batch."""

    rule: Rule
    passed: bool
    metrics: dict
    reason: Optional[str] = None


class Evaluator:
    """A parsed ruleset, evaluated on any number of batches."""

    def __init__(self, ruleset: str) -> None:
        self.ruleset: Ruleset = parse_ruleset(ruleset)
        missing = sorted(
            {r.rule_type for r in _leaves(self.ruleset.rules) if r.rule_type not in RULES}
        )
        if missing:
            log.warning(
                "Evaluate Data Quality: rule type(s) %s are not evaluated by kinesis_dstream's "
                "Glue layer; their outcome is Failed (docs/glue.md)",
                ", ".join(missing),
            )

    def rule_outcomes(self, df: Any) -> list:
        """Each rule's :class:`Outcome` on ``df``."""
        return [_evaluate(rule, df) for rule in self.ruleset.rules]

    def rule_outcomes_frame(self, df: Any, outcomes: Optional[list] = None) -> Any:
        """The outcomes as Glue's ``ruleOutcomes`` DataFrame."""
        from pyspark.sql.types import (
            DoubleType,
            MapType,
            StringType,
            StructField,
            StructType,
        )

        schema = StructType(
            [
                StructField("Rule", StringType()),
                StructField("Outcome", StringType()),
                StructField("FailureReason", StringType()),
                StructField("EvaluatedMetrics", MapType(StringType(), DoubleType())),
                StructField("EvaluatedRule", StringType()),
            ]
        )
        rows = [
            (o.rule.text, PASSED if o.passed else FAILED, o.reason, o.metrics, o.rule.text)
            for o in (outcomes if outcomes is not None else self.rule_outcomes(df))
        ]
        return df.sparkSession.createDataFrame(rows, schema)

    def row_level_outcomes(self, df: Any, outcomes: list) -> Any:
        """``df`` with Glue's four row-level columns: a row-level rule (a column's
        values, completeness, uniqueness, length; a composite of them) passes or fails
        for each row; a dataset rule (RowCount, Mean…) and a rule not evaluated are in
        ``DataQualityRulesSkip``, as Glue does. A row without failures is ``Passed``."""
        from pyspark.sql import functions as F

        passes: list = []
        fails: list = []
        skips: list = []
        for outcome in outcomes:
            text = F.lit(outcome.rule.text)
            condition = _row_condition(outcome.rule, df)
            if condition is None:
                skips.append(text)
            else:
                passes.append(F.when(condition, text))
                fails.append(F.when(~condition, text))

        def listed(values: list) -> Any:
            if not values:
                return F.array().cast("array<string>")
            return F.filter(F.array(*values), lambda v: v.isNotNull())

        out = df.withColumn(ROW_COLUMNS[0], listed(passes))
        out = out.withColumn(ROW_COLUMNS[1], listed(fails))
        out = out.withColumn(ROW_COLUMNS[2], listed(skips))
        return out.withColumn(
            ROW_COLUMNS[3], F.when(F.size(ROW_COLUMNS[1]) > 0, FAILED).otherwise(PASSED)
        )


def _leaves(rules: Any) -> list:
    out = []
    for rule in rules:
        out.extend(_leaves(rule.parts) if rule.rule_type == "Composite" else [rule])
    return out


def _scope(rule: Rule, df: Any) -> Any:
    return df.where(rule.where) if rule.where else df


def _column_name(rule: Rule, position: int = 0) -> str:
    try:
        return rule.parameters[position]
    except IndexError:
        raise GlueError(f"DQDL rule {rule.text!r}: needs a quoted column name") from None


def _col(name: str) -> Any:
    from pyspark.sql import functions as F

    return F.col(f"`{name}`")


def _metric_rule(
    metric_name: str, compute: Callable[[Any, Rule], Any], default: Optional[Any] = None
) -> Callable[[Rule, Any], Outcome]:
    """A rule that computes one number and checks it against the rule's constraint
    (``default`` when the rule has none, e.g. IsComplete: ``= 1.0``)."""

    def evaluate(rule: Rule, df: Any) -> Outcome:
        value = compute(_scope(rule, df), rule)
        constraint = rule.constraint or default
        if constraint is None:
            raise GlueError(f"DQDL rule {rule.text!r}: needs a constraint (> 0, between 1 and 9…)")
        subject = f"Column.{rule.parameters[0]}" if rule.parameters else "Dataset.*"
        metrics = {f"{subject}.{metric_name}": float(value)} if value is not None else {}
        passed = constraint.holds(value)
        reason = None if passed else f"Value: {value} does not meet the constraint requirement!"
        return Outcome(rule, passed, metrics, reason)

    return evaluate


def _aggregate(expression: Callable[[str], Any]) -> Callable[[Any, Rule], Any]:
    def compute(df: Any, rule: Rule) -> Any:
        return df.select(expression(_column_name(rule))).first()[0]

    return compute


def _completeness(df: Any, rule: Rule) -> Optional[float]:
    from pyspark.sql import functions as F

    total, present = df.select(F.count(F.lit(1)), F.count(_col(_column_name(rule)))).first()
    return present / total if total else None


def _uniqueness(df: Any, rule: Rule) -> Optional[float]:
    """Deequ's uniqueness, as Glue's: the share of rows whose value occurs once."""
    from pyspark.sql import functions as F

    names = [_col(p) for p in rule.parameters] or [_col(_column_name(rule))]
    total = df.count()
    if not total:
        return None
    once = df.groupBy(*names).count().where(F.col("count") == 1).count()
    return once / total


def _column_values(rule: Rule, df: Any) -> Outcome:
    from pyspark.sql import functions as F

    scoped = _scope(rule, df)
    if rule.constraint is None:
        raise GlueError(f"DQDL rule {rule.text!r}: needs a constraint")
    condition = rule.constraint.condition(_col(_column_name(rule)))
    total, good = scoped.select(F.count(F.lit(1)), F.sum(condition.cast("long"))).first()
    ratio = (good or 0) / total if total else 1.0
    metrics = {f"Column.{rule.parameters[0]}.ColumnValues.Compliance": float(ratio)}
    good = good or 0
    passed = rule.threshold.holds(ratio) if rule.threshold is not None else total == good
    reason = None
    if not passed:
        reason = (
            f"Value: {ratio} does not meet the constraint requirement! "
            f"({total - good} of {total} rows do not)"
        )
    return Outcome(rule, passed, metrics, reason)


def _column_length(rule: Rule, df: Any) -> Outcome:
    from pyspark.sql import functions as F

    length = F.length(_col(_column_name(rule)).cast("string"))
    scoped = _scope(rule, df)
    low, high = scoped.select(F.min(length), F.max(length)).first()
    bad = (
        scoped.where(~rule.constraint.condition(length) & length.isNotNull()).count()
        if rule.constraint
        else 0
    )
    metrics = {}
    if low is not None:
        name = rule.parameters[0]
        metrics = {
            f"Column.{name}.MinimumLength": float(low),
            f"Column.{name}.MaximumLength": float(high),
        }
    reason = None if bad == 0 else f"Value: {bad} rows do not meet the constraint requirement!"
    return Outcome(rule, bad == 0, metrics, reason)


def _column_exists(rule: Rule, df: Any) -> Outcome:
    present = _column_name(rule) in df.columns
    return Outcome(
        rule, present, {}, None if present else f"Column {rule.parameters[0]} does not exist"
    )


def _column_data_type(rule: Rule, df: Any) -> Outcome:
    name = _column_name(rule)
    if name not in df.columns:
        return Outcome(rule, False, {}, f"Column {name} does not exist")
    actual = df.schema[name].dataType.simpleString().split("(")[0]
    if rule.constraint is None or not rule.constraint.operands:
        raise GlueError(f'DQDL rule {rule.text!r}: needs = "TYPE"')
    wanted = {
        t
        for o in rule.constraint.operands
        for t in DATA_TYPES.get(str(o).upper(), {str(o).lower()})
    }
    passed = (actual in wanted) != (rule.constraint.operator.value in ("!=", "not in"))
    return Outcome(rule, passed, {}, None if passed else f"Column {name} is {actual}")


def _is_primary_key(rule: Rule, df: Any) -> Outcome:
    scoped = _scope(rule, df)
    complete = all(
        (_completeness(scoped, Rule(rule.text, "Completeness", (p,))) or 0) == 1
        for p in rule.parameters
    )
    unique = _uniqueness(scoped, rule)
    passed = complete and unique in (None, 1.0)
    return Outcome(rule, passed, {}, None if passed else "Value: not complete and unique")


def _custom_sql(rule: Rule, df: Any) -> Outcome:
    view = "primary"
    df.createOrReplaceTempView(view)
    value = df.sparkSession.sql(_column_name(rule)).first()[0]
    return _metric_rule("CustomSQL", lambda _df, _rule: value)(
        Rule(rule.text, rule.rule_type, (), rule.constraint, rule.threshold), df
    )


def _count_columns(df: Any, rule: Rule) -> int:
    return len(df.columns)


def _row_count(df: Any, rule: Rule) -> int:
    return df.count()


def _composite(rule: Rule, df: Any) -> Outcome:
    parts = [_evaluate(part, df) for part in rule.parts]
    verdicts = [p.passed for p in parts]
    passed = all(verdicts) if rule.combinator == "and" else any(verdicts)
    metrics = {k: v for p in parts for k, v in p.metrics.items()}
    reasons = "; ".join(p.reason for p in parts if p.reason)
    return Outcome(rule, passed, metrics, None if passed else reasons)


def _functions() -> dict:
    from pyspark.sql import functions as F

    from .dqdl import Constraint, Operator

    complete = Constraint(Operator.EQ, (1.0,))
    return {
        "RowCount": _metric_rule("RowCount", _row_count),
        "ColumnCount": _metric_rule("ColumnCount", _count_columns),
        "IsComplete": _metric_rule("Completeness", _completeness, complete),
        "Completeness": _metric_rule("Completeness", _completeness),
        "IsUnique": _metric_rule("Uniqueness", _uniqueness, complete),
        "Uniqueness": _metric_rule("Uniqueness", _uniqueness),
        "Mean": _metric_rule("Mean", _aggregate(lambda c: F.avg(_col(c)))),
        "Sum": _metric_rule("Sum", _aggregate(lambda c: F.sum(_col(c)))),
        "StandardDeviation": _metric_rule(
            "StandardDeviation", _aggregate(lambda c: F.stddev_pop(_col(c)))
        ),
        "DistinctValuesCount": _metric_rule(
            "DistinctValuesCount", _aggregate(lambda c: F.countDistinct(_col(c)))
        ),
        "ColumnValues": _column_values,
        "ColumnLength": _column_length,
        "ColumnExists": _column_exists,
        "ColumnDataType": _column_data_type,
        "IsPrimaryKey": _is_primary_key,
        "CustomSql": _custom_sql,
        "Composite": _composite,
    }


#: The rule types evaluated here (names; the functions are bound on first use).
RULES = frozenset(
    {
        "RowCount",
        "ColumnCount",
        "IsComplete",
        "Completeness",
        "IsUnique",
        "Uniqueness",
        "Mean",
        "Sum",
        "StandardDeviation",
        "DistinctValuesCount",
        "ColumnValues",
        "ColumnLength",
        "ColumnExists",
        "ColumnDataType",
        "IsPrimaryKey",
        "CustomSql",
    }
)


def _evaluate(rule: Rule, df: Any) -> Outcome:
    function = _functions().get(rule.rule_type)
    if function is None:
        reason = f"rule type {rule.rule_type} is not evaluated by kinesis_dstream's Glue layer"
        return Outcome(rule, False, {}, reason)
    return function(rule, df)


def _row_condition(rule: Rule, df: Any) -> Any:
    """The per-row test of a row-level rule (None for a dataset rule)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if rule.rule_type == "Composite":
        parts = [_row_condition(part, df) for part in rule.parts]
        if any(part is None for part in parts):
            return None
        combine = (lambda a, b: a & b) if rule.combinator == "and" else (lambda a, b: a | b)
        return reduce(combine, parts)
    if rule.where or not rule.parameters or rule.parameters[0] not in df.columns:
        return None
    value = _col(rule.parameters[0])
    if rule.rule_type in ("IsComplete", "Completeness"):
        return value.isNotNull()
    if rule.rule_type == "ColumnValues" and rule.constraint is not None:
        return rule.constraint.condition(value)
    if rule.rule_type == "ColumnLength" and rule.constraint is not None:
        length = F.length(value.cast("string"))
        return length.isNull() | rule.constraint.condition(length)
    if rule.rule_type in ("IsUnique", "Uniqueness", "IsPrimaryKey"):
        keys = [_col(p) for p in rule.parameters]
        return F.count(F.lit(1)).over(Window.partitionBy(*keys)) == 1
    return None
