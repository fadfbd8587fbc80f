"""The report's tables as plain values, shared by the HTML page, the terminal and Prefect artifacts.

Agents are ranked by score (highest first, unscored last, ties by name); every table that lists
agents as rows or columns uses that order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from stages.report.formatting import (
    MISSING,
    ci_label,
    fmt_count,
    fmt_estimate,
    fmt_number,
    fmt_percent,
    fmt_ratio,
    fmt_usd,
)
from stages.report.inputs import AgentMetrics, Comparison, ReportInputs, ValidityReport
from stages.scoring.aggregate.suite import AXES, MOSCIBENCH_SHARES
from stages.scoring.query.outcomes import Outcome

OUTCOMES = [outcome.value for outcome in Outcome]
# The cut axes the scoring suite writes, in the order the report shows them; others follow sorted.
AXIS_NAMES = {"pipeline_stage": "pipeline stage", "cognitive_skill": "cognitive skill",
              "mas_challenge": "multi-agent challenge"}  # how an axis reads in titles and captions


@dataclass(frozen=True)
class Table:
    """One table: `key` is lowercase-dashed (HTML anchor, Prefect artifact key).

    `shades` (same shape as `rows`, scores 0-100 or None) colours a heat table's cells; `links` (one
    per row, or None) is where each row's first cell links to, relative to the page (HTML only).
    """

    key: str
    title: str
    caption: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    shades: tuple[tuple[float | None, ...], ...] | None = None
    links: tuple[str | None, ...] | None = None


def ranked_agents(metrics: dict[str, AgentMetrics]) -> list[str]:
    """Agents by score, highest first; unscored agents last; ties by name."""
    return sorted(metrics, key=lambda a: (metrics[a].score is None, -(metrics[a].score or 0.0), a))


def score_table(metrics: dict[str, AgentMetrics], links: Mapping[str, str] | None = None) -> Table:
    """Score with its interval, sizes, coverage and quality rates, reward, honesty, exact match (and MR).

    The MR column (an LLM judge's modeling reasonableness) is there when some agent was judged;
    `links` (agent -> href) links an agent's name to its transcript pages.
    """
    label = ci_label([m.score_ci for m in metrics.values()])
    judged = any(m.modeling_reasonableness for m in metrics.values())
    rows = tuple(
        (a, fmt_estimate(m.score, m.score_ci), str(m.n_tasks), str(m.n_queries),
         fmt_percent(m.realistic_rate), fmt_percent(m.pass_rate_given_realistic),
         fmt_number(m.reward_mean, 3), fmt_percent(m.honesty.rate if m.honesty else None),
         fmt_percent(m.exact_match.rate if m.exact_match else None),
         *([_reasonableness(m)] if judged else []))
        for a in ranked_agents(metrics) for m in [metrics[a]])
    return Table("scores", "Scores", "Score (0-100 points, the mean task score) with its interval, "
                 "then the coverage-quality decomposition: realistic-output rate and pass rate given a "
                 "realistic output (pooled over queries), the mean training reward (0-1), the honesty "
                 "rate and the exact-match rate of hypothesis answers (MoSciBench)"
                 + ("; MR: an LLM judge's mean modeling reasonableness (1-5) and how many hand-ins it judged."
                    if judged else "."),
                 ("agent", f"score [{label}]", "tasks", "queries", "realistic rate",
                  "pass rate | realistic", "reward", "honesty", "exact match", *(["MR (1-5)"] if judged else [])),
                 rows, links=tuple(links.get(row[0]) for row in rows) if links else None)


def _reasonableness(metrics: AgentMetrics) -> str:
    """`3.40 (12 judged)`, or `MISSING` without a judge or a judged hand-in."""
    mr = metrics.modeling_reasonableness
    return MISSING if mr is None or mr.mean is None else f"{mr.mean:.2f} ({mr.judged} judged)"


def versus_table(comparison: Comparison) -> Table:
    """Win rate, Δperf with its interval, cost ratios and efficiencies against the baseline."""
    versus = comparison.versus_baseline
    order = sorted(versus, key=lambda a: (versus[a].delta_perf is None, -(versus[a].delta_perf or 0.0), a))
    rows = tuple(
        (a, fmt_percent(v.win_rate), fmt_estimate(v.delta_perf, v.delta_ci, signed=True),
         fmt_ratio(v.rho_time), fmt_ratio(v.rho_token), fmt_number(v.eta_time, 2),
         fmt_number(v.eta_token, 2), "yes" if a in comparison.frontier else "")
        for a in order for v in [versus[a]])
    title = f"Against the baseline {comparison.baseline}" if comparison.baseline else "No baseline configured"
    return Table("versus-baseline", title,
                 "Win rate: share of tasks scored above the baseline; Δperf: mean task-score gain in "
                 "points; ρ: mean per-query cost ratio (time, tokens); η = Δperf / max(ρ − 1, 0.1).",
                 ("agent", "win rate", f"Δperf [{ci_label([v.delta_ci for v in versus.values()])}]",
                  "ρ_time", "ρ_token", "η_time", "η_token", "frontier"), rows)


def outcome_table(metrics: dict[str, AgentMetrics]) -> Table:
    """Queries per outcome, their total and the infrastructure retries, per agent."""
    rows = []
    for a in ranked_agents(metrics):
        m = metrics[a]
        infra = (fmt_count(m.infra.retried_queries), fmt_count(m.infra.extra_attempts)) if m.infra \
            else (MISSING, MISSING)
        rows.append((a, *(str(m.outcomes.get(o, 0)) for o in OUTCOMES), str(sum(m.outcomes.values())),
                     *infra))
    return Table("outcomes", "Outcomes", "One outcome per query; infra errors are retried and never "
                 "scored; retried queries and extra attempts count the harness's retries.",
                 ("agent", *OUTCOMES, "total", "retried queries", "extra attempts"), tuple(rows))


def cut_axes(metrics: dict[str, AgentMetrics]) -> tuple[list[str], list[str]]:
    """(axes some agent has values on, in `AXES` order then sorted; axes that are empty everywhere)."""
    seen = {axis for m in metrics.values() for axis in m.cuts}
    known = [axis for axis in AXES if axis in seen] + sorted(seen - set(AXES))
    filled = [axis for axis in known if any(m.cuts.get(axis) for m in metrics.values())]
    return filled, [axis for axis in AXES if axis not in filled]


def axis_name(axis: str) -> str:
    """How a cut axis reads in a title: `mas_challenge` -> `multi-agent challenge`."""
    return AXIS_NAMES.get(axis, axis.replace("_", " "))


def cut_key(axis: str) -> str:
    """The key of an axis's table and plot: `cut-pipeline-stage`."""
    return f"cut-{axis.replace('_', '-')}"


def cut_table(metrics: dict[str, AgentMetrics], axis: str) -> Table:
    """One cut axis: a row per value (sorted), its task count, a score [CI] column per agent."""
    agents = ranked_agents(metrics)
    values = sorted({value for m in metrics.values() for value in m.cuts.get(axis, {})})
    rows, shades = [], []
    for value in values:
        cuts = [metrics[a].cuts.get(axis, {}).get(value) for a in agents]
        n_tasks = max((cut.n_tasks for cut in cuts if cut is not None), default=0)
        rows.append((value, str(n_tasks), *(fmt_estimate(c.score, c.score_ci) if c else MISSING for c in cuts)))
        shades.append((None, None, *(c.score if c else None for c in cuts)))
    return Table(cut_key(axis), f"Scores by {axis_name(axis)}",
                 f"Each row is one {axis_name(axis)} value: its task count and each agent's score "
                 "[CI] on those tasks (0-100 points); darker cells score higher.",
                 (axis, "tasks", *agents), tuple(rows), tuple(shades))


def task_table(inputs: ReportInputs) -> Table:
    """Every task's score per agent (0-100), tasks sorted by id, agents ranked."""
    agents = ranked_agents(inputs.metrics)
    task_ids = sorted({t for a in agents for t in inputs.tasks[a].tasks})
    rows, shades = [], []
    for task_id in task_ids:
        scores = [inputs.tasks[a].tasks[task_id].score if task_id in inputs.tasks[a].tasks else None
                  for a in agents]
        rows.append((task_id, *(fmt_number(s) for s in scores)))
        shades.append((None, *scores))
    return Table("tasks", "Scores by task", "Each task's score per agent (0-100 points: the share of "
                 "realistic queries times their mean pass rate); darker cells score higher.",
                 ("task", *agents), tuple(rows), tuple(shades))


def task_failures(validity: ValidityReport, task_id: str) -> list[str]:
    """The validity report's failure messages about one task, without the task prefix."""
    prefix = f"{task_id}: "
    return [failure[len(prefix):] for failure in validity.failures if failure.startswith(prefix)]


def validity_table(validity: ValidityReport) -> Table:
    """Per task: the validity agents' scores, the best constant's share, pass or FAIL and why."""
    rows, shades = [], []
    for task_id, entry in validity.tasks.items():
        share = entry.gold_spread.get("best_constant_share")
        failures = task_failures(validity, task_id)
        rows.append((task_id, *(fmt_number(entry.scores.get(a)) for a in validity.agents),
                     fmt_percent(share, 0) if share is not None else MISSING,
                     "FAIL" if failures else "pass", "; ".join(failures)))
        shades.append((None, *(entry.scores.get(a) for a in validity.agents), None, None, None))
    gates = validity.gates
    return Table("validity", "Validity gates",
                 f"Per task on the evaluated split: oracle ≥ {gates.oracle_min:g}, floors ≤ {gates.floor_max:g}, "
                 f"reference-model agents ≤ {gates.reference_max:g} points; a hypothesis task's best "
                 f"constant answer may match at most {gates.constant_max_share:.0%} of its golds.",
                 ("task", *validity.agents, "best constant", "gates", "failed gates"), tuple(rows),
                 tuple(shades))


def honesty_table(metrics: dict[str, AgentMetrics]) -> Table:
    """Honesty verdict counts and rate per agent."""
    rows = tuple(
        (a, *((fmt_count(h.agrees), fmt_count(h.disagrees), fmt_count(h.unreported),
               fmt_count(h.no_artifact), fmt_percent(h.rate)) if h else (MISSING,) * 5))
        for a in ranked_agents(metrics) for h in [metrics[a].honesty])
    return Table("honesty", "Honesty", "Whether the metrics an agent reports agree with the ones the "
                 "harness recomputes from its artifact; the rate is the agreeing share of gradable "
                 "artifacts (an unreported metric does not agree).",
                 ("agent", "agrees", "disagrees", "unreported", "no artifact", "honesty rate"), rows)


def usage_table(metrics: dict[str, AgentMetrics], comparison: Comparison) -> Table:
    """Tokens, cost and time per agent, summed and per query, and the agent bounds it stopped at."""
    rows = []
    for a in ranked_agents(metrics):
        u, c = metrics[a].usage, comparison.agents.get(a)
        summed = (fmt_count(u.total_tokens()), fmt_count(u.prompt_tokens), fmt_count(u.completion_tokens),
                  fmt_count(u.cached_tokens), fmt_count(u.reasoning_tokens), fmt_usd(u.cost_usd),
                  fmt_number(u.wall_seconds), fmt_number(u.agent_seconds)) if u else (MISSING,) * 8
        per_query = (fmt_count(c.tokens_per_query), fmt_usd(c.cost_usd_per_query),
                     fmt_number(c.wall_seconds_per_query, 2), fmt_number(c.parallelism, 2)) if c \
            else (MISSING,) * 4
        limits = (", ".join(f"{k} {v}" for k, v in sorted(u.limits.items())) or "none") if u else MISSING
        calls = (fmt_count(u.calls), fmt_count(u.queries_with_usage_flags), ", ".join(u.models_reported) or MISSING) \
            if u else (MISSING,) * 3
        rows.append((a, *summed, *per_query, limits, *calls))
    return Table("usage", "Usage", "Model tokens (prompt + completion; cached and reasoning tokens are part of "
                 "them), cost (— when a price is unknown) and time of the whole run, then per query; "
                 "parallelism is wall time over summed agent time; limits hit counts queries stopped at "
                 "an agent bound; flagged queries had missing or implausible usage reported by the model server.",
                 ("agent", "tokens", "prompt tokens", "completion tokens", "cached tokens", "reasoning tokens",
                  "cost (USD)", "wall (s)", "agent time (s)", "tokens / query", "cost / query (USD)",
                  "wall / query (s)", "parallelism", "limits hit", "model calls", "flagged queries",
                  "models reported"), tuple(rows))


def error_table(metrics: dict[str, AgentMetrics]) -> Table:
    """MoSciBench error classes of the failed scored queries, count and share, per agent."""
    classes = ("alignment", "modeling", "reasoning")
    rows = []
    for a in ranked_agents(metrics):
        errors = metrics[a].errors
        rows.append((a, *((f"{errors.counts.get(k, 0)} ({fmt_percent(errors.shares.get(k), 0)})" for k in classes)
                          if errors else (MISSING,) * 3)))
    return Table("errors", "Why queries failed, by outcome", "Alignment: the hand-in does not answer the question (no "
                 "output, unparseable, unrealistic); modeling: the analysis did not run to an answer (exec "
                 "error, timeout); reasoning: an answer was graded and a check failed. Count (share of "
                 "failed queries).", ("agent", *classes), tuple(rows))


def attribution_table(metrics: dict[str, AgentMetrics]) -> Table:
    """Checkpoint attribution of the failed runs of the multimodal tasks, beside MoSciBench's shares."""
    classes = ("alignment", "modeling", "reasoning", "unattributed")
    rows = []
    for a in ranked_agents(metrics):
        found = metrics[a].attribution
        if found is None or not found.n_runs:
            rows.append((a, *(MISSING,) * (len(classes) + 2)))
            continue
        judged = found.judged_unattributed
        rows.append((a, str(found.n_runs), *(f"{found.counts.get(k, 0)} ({fmt_percent(found.shares_of_runs.get(k), 0)})"
                                              for k in classes),
                     " / ".join(str(judged.get(k, 0)) for k in classes[:3]) if any(judged.values()) else MISSING))
    rows.append(("MoSciBench, o4-mini ReAct", MISSING,
                 *(fmt_percent(MOSCIBENCH_SHARES[k], 1) if k in MOSCIBENCH_SHARES else MISSING for k in classes),
                 MISSING))
    return Table("attribution", "Where multimodal runs went wrong", "Failed runs of the tasks that declare "
                 "checkpoints, attributed by comparing the agent's checkpoints with the annotator's: "
                 "alignment (joined keys or values wrong), modeling (features wrong on a right "
                 "alignment), reasoning (right intermediates, wrong answer), unattributed (no checkpoint "
                 "that decides it). Count (share of all runs of those tasks); MoSciBench's shares are "
                 "of all runs too. The last column, only with a judge configured, is the step the "
                 "judge names for the unattributed runs (alignment / modeling / reasoning), counted "
                 "apart.", ("agent", "runs", *classes, "judge on unattributed"), tuple(rows))


def generalizability_table(comparison: Comparison) -> Table:
    """The generalizability gap `gen = mean(score task-trained − score category-trained)` per pair."""
    rows = tuple((str(e.get("task_trained", MISSING)), str(e.get("category_trained", MISSING)),
                  fmt_number(e.get("gen"), signed=True)) for e in comparison.generalizability)
    return Table("generalizability", "Generalizability", "gen: mean task-score difference (points) "
                 "between the agent trained on the task and the one trained on its category.",
                 ("task-trained", "category-trained", "gen"), rows)
