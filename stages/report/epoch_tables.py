"""The report's tables of repeated runs (`evaluate.epochs`); none when every agent ran once.

`Repeated runs`: per agent run in several epochs, the mean score (the score the other tables show),
its standard error over the epochs, their spread (max - min) and each epoch's score. `pass@k`: per
hypothesis task and such agent, the chance that one of k runs of a query gets the answer right
(stages/scoring/aggregate/epochs.py).
"""

from __future__ import annotations

from stages.report.formatting import MISSING, fmt_number, fmt_percent
from stages.report.inputs import ReportInputs
from stages.report.tables import Table, ranked_agents


def epoch_tables(inputs: ReportInputs) -> list[Table]:
    """The two tables, or none when no agent ran a query more than once."""
    repeated = [agent for agent in ranked_agents(inputs.metrics) if inputs.metrics[agent].epochs.n > 1]
    if not repeated:
        return []
    return [spread_table(inputs, repeated), pass_at_k_table(inputs, repeated)]


def spread_table(inputs: ReportInputs, agents: list[str]) -> Table:
    """Mean score, standard error, spread and each epoch's score per agent."""
    most = max(inputs.metrics[agent].epochs.n for agent in agents)
    rows = tuple((agent, str(epochs.n), fmt_number(inputs.metrics[agent].score), fmt_number(epochs.se, 2),
                  fmt_number(epochs.spread), *[fmt_number(score) for score in epochs.scores],
                  *[MISSING] * (most - len(epochs.scores)))
                 for agent in agents for epochs in [inputs.metrics[agent].epochs])
    return Table("repeated-runs", "Repeated runs", "Agents that ran each query several times (epochs, each "
                 "with its own seed where the endpoint takes one): the score is the mean of the epochs' scores; "
                 "SE its standard error (the epochs' standard deviation over the square root of their number); "
                 "spread the best epoch's score less the worst's.",
                 ("agent", "epochs", "score", "SE", "spread", *[f"epoch {n}" for n in range(most)]), rows)


def pass_at_k_table(inputs: ReportInputs, agents: list[str]) -> Table:
    """pass@k (0-100 %) per hypothesis task and agent, k = 1 .. the agent's epochs."""
    most = max(inputs.metrics[agent].epochs.n for agent in agents)
    rows = tuple((task_id, agent, *[fmt_percent(entry.pass_at_k.get(str(k))) for k in range(1, most + 1)])
                 for agent in agents for task_id, entry in sorted(inputs.tasks[agent].tasks.items())
                 if entry.pass_at_k)
    return Table("pass-at-k", "pass@k on hypothesis tasks", "The chance that at least one of k runs of a query "
                 "gets the hypothesis answer right, averaged over the task's queries (unbiased estimator over "
                 "each query's scored runs; — where a query has fewer than k).",
                 ("task", "agent", *[f"pass@{k}" for k in range(1, most + 1)]), rows)
