"""``awsgluedq.transforms.EvaluateDataQuality``: Glue Studio's Evaluate Data Quality
node, as its generated code calls it.

``EvaluateDataQuality().process_rows(frame=, ruleset=, publishing_options=,
additional_options=)`` gives a DynamicFrameCollection of ``ruleOutcomes`` and
``rowLevelOutcomes``; ``EvaluateDataQuality.apply(frame=, ruleset=, …)`` gives the
``ruleOutcomes`` frame. Results are published to the job's log (one line a call);
Glue's other publishing (the Data Quality console, CloudWatch metrics, an S3 prefix)
is named in one warning and not done.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from typing import Any

from ..frames.dynamicframe import DynamicFrame, DynamicFrameCollection
from .data_quality import Evaluator

log = logging.getLogger(__name__)

#: publishing_options that would send results to AWS, which this layer does not do.
PUBLISHING = (
    "enableDataQualityResultsPublishing",
    "enableDataQualityCloudWatchMetrics",
    "resultsS3Prefix",
)
_warned: set = set()


@functools.lru_cache(maxsize=64)
def evaluator(ruleset: str) -> Evaluator:
    """The parsed ruleset (parsed, and its missing rule types named, once)."""
    return Evaluator(ruleset)


class EvaluateDataQuality:
    """Glue's Evaluate Data Quality transform on a batch's frame."""

    @classmethod
    def apply(
        cls,
        frame: Any,
        ruleset: str,
        publishing_options: Mapping[str, Any] = {},
        additional_options: Mapping[str, Any] = {},
    ) -> DynamicFrame:
        """The ``ruleOutcomes`` DynamicFrame (Rule, Outcome, FailureReason,
        EvaluatedMetrics, EvaluatedRule)."""
        return cls()(frame, ruleset, publishing_options, additional_options)

    def __call__(
        self,
        frame: Any,
        ruleset: str,
        publishing_options: Mapping[str, Any] = {},
        additional_options: Mapping[str, Any] = {},
    ) -> DynamicFrame:
        collection = self.process_rows(frame, ruleset, publishing_options, additional_options)
        return collection.select("ruleOutcomes")

    def process_rows(
        self,
        frame: Any,
        ruleset: str,
        publishing_options: Mapping[str, Any] = {},
        additional_options: Mapping[str, Any] = {},
    ) -> DynamicFrameCollection:
        """``ruleOutcomes`` and ``rowLevelOutcomes`` of ``frame`` (a DynamicFrame or a
        DataFrame) under the DQDL ``ruleset``."""
        df = frame.toDF() if isinstance(frame, DynamicFrame) else frame
        glue_ctx = getattr(frame, "glue_ctx", None)
        rules = evaluator(ruleset)
        outcomes = rules.rule_outcomes(df)
        context = (publishing_options or {}).get("dataQualityEvaluationContext", "")
        _publish(context, outcomes, publishing_options or {})
        frames = {
            "ruleOutcomes": rules.rule_outcomes_frame(df, outcomes),
            "rowLevelOutcomes": rules.row_level_outcomes(df, outcomes),
        }
        return DynamicFrameCollection(
            {key: DynamicFrame.fromDF(value, glue_ctx, key) for key, value in frames.items()},
            glue_ctx,
        )


def _publish(context: str, outcomes: list, options: Mapping[str, Any]) -> None:
    asked = [name for name in PUBLISHING if options.get(name)]
    if asked and tuple(asked) not in _warned:
        _warned.add(tuple(asked))
        log.warning(
            "Evaluate Data Quality: publishing_options %s have no effect here: results "
            "are written to this log only (docs/glue.md)",
            ", ".join(asked),
        )
    failed = [o for o in outcomes if not o.passed]
    log.info(
        "Evaluate Data Quality %s: %d rules, %d passed, %d failed%s",
        context or "(no context)",
        len(outcomes),
        len(outcomes) - len(failed),
        len(failed),
        "".join(f"; {o.rule.text}: {o.reason}" for o in failed),
    )
