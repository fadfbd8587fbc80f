"""The one-turn baseline of a model on the pools: the reference every reward compares with.

ST-Bench's reward compares a candidate's metric values with those of the single-agent baseline of
the same model on the same query, run once and cached, never with the gold. Here the baseline is
the built-in `one_turn` workflow run as a candidate (so through the harness, journaled, and run
once however often it is asked for), and its values are the metrics the harness recomputed from
its artifacts. A query the baseline did not answer has no reference (the reward's weights are then
0.40 sanity / 0.60 target).
"""

from __future__ import annotations

from stages.evaluation.agents.llm.workflows import builtin_workflow
from stages.optimize.candidates import Evaluator
from stages.optimize.reward import Baseline, recomputed_metrics

BASELINE_WORKFLOW = "one_turn"


def baseline_values(evaluator: Evaluator, query_ids: list[str]) -> Baseline:
    """Run the baseline where it has not run, and its recomputed metric values per query."""
    _, records, _ = evaluator.run(builtin_workflow(BASELINE_WORKFLOW), query_ids)
    return {query_id: ({} if record.infra_error else
                       recomputed_metrics(evaluator.benchmark, query_id, record, evaluator.artifacts))
            for query_id, record in records.items()}
