"""The report's section on ST-Bench's protocol: the systems learned on the pools against the one-turn baseline.

From `compare_systems.json` and each run's `<run>.json`: ST-Bench's Figure 2 (scores), Figure 3
(gen per method) and Figure 4 (the cost-performance frontier; coverage against the pass rate given
a realistic output), the system metrics against the baseline, gen, what the searches cost apart
from the test runs, and the reward-hacking audit. When the protocol skipped (no LLM endpoint), the
section says why and how to run it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from stages.report.figures import Plot, figure, save
from stages.report.formatting import fmt_count, fmt_number, fmt_percent
from stages.report.html import Section
from stages.report.inputs import AgentMetrics, Comparison, read_model
from stages.report.plots import plot_coverage, plot_frontier, plot_scores
from stages.report.tables import Table, generalizability_table, versus_table

RUN_IT = ("set params.yaml optimize.model to an OpenAI-compatible endpoint and run "
          "`dvc repro compare_systems report` (docs/optimization.md)")


class SystemsComparison(Comparison):
    """`processed/metrics/compare_systems.json` (stages/optimize/compare.py)."""

    skipped: str | None = None
    search_cost: dict[str, dict] = {}
    audit: dict[str, dict] = {}


@dataclass(frozen=True)
class Systems:
    """What the section shows: the comparison and each run's metrics (none when it skipped)."""

    comparison: SystemsComparison
    metrics: dict[str, AgentMetrics]


def load_systems(metrics_dir: Path) -> Systems | None:
    """The protocol's outputs, or None when compare_systems never ran here."""
    path = metrics_dir / "compare_systems.json"
    if not path.is_file():
        return None
    comparison = SystemsComparison.model_validate(json.loads(path.read_text()))
    runs = [] if comparison.skipped else sorted(comparison.agents)
    return Systems(comparison, {run: read_model(metrics_dir / f"{run}.json", AgentMetrics, f"score_system@{run}")
                                for run in runs})


def systems_section(systems: Systems, plots_dir: Path) -> Section:
    """The section: the figures and tables, or why the protocol did not run."""
    comparison = systems.comparison
    title = "Multi-agent systems learned on the pools"
    if comparison.skipped:
        return Section("systems", title, note=f"Not run: {comparison.skipped}. To run it, {RUN_IT}.")
    items = [plot_scores(systems.metrics, plots_dir, "systems-scores"), plot_gen(comparison, plots_dir),
             plot_frontier(comparison, plots_dir, "systems-frontier"),
             plot_coverage(systems.metrics, plots_dir, "systems-coverage"),
             replace(versus_table(comparison), key="systems-versus")]
    if comparison.generalizability:
        items.append(replace(generalizability_table(comparison), key="systems-generalizability"))
    items += [cost_table(comparison), audit_table(comparison)]
    return Section("systems", title, items, note="Each run's workflows were learned by `optimize@<run>` on the "
                   "train/val pools and evaluated on the test split against the one-turn baseline of the same "
                   "model (ST-Bench's protocol); processed/metrics/compare_systems.json holds every number, "
                   "processed/reports/transcripts/<run>.html every test run.")


def plot_gen(comparison: SystemsComparison, plots_dir: Path) -> Plot:
    """Gen per method: mean task score of the per-task variant minus the per-category one's."""
    pairs = [(entry["task_trained"].rsplit("-", 1)[0], entry["gen"]) for entry in comparison.generalizability
             if entry["gen"] is not None]
    title = "Generalizability: per-task minus per-category"
    with figure(6.5, 0.9 + 0.4 * max(len(pairs), 1)) as fig:
        ax = fig.add_subplot()
        y = np.arange(len(pairs))[::-1]
        ax.barh(y, [gen for _, gen in pairs], color="#4c72b0", height=0.6)
        ax.axvline(0, color="black", lw=0.8)
        ax.set_yticks(y, [method for method, _ in pairs])
        ax.set_xlabel("gen (points): > 0, narrow specialisation helps; <= 0, the category's workflow transfers")
        ax.set_title(title)
        size = save(fig, plots_dir, "systems-gen")
    return Plot("systems-gen", title, "One bar per method run under both protocols.", size)


def cost_table(comparison: SystemsComparison) -> Table:
    """What each run's searches spent, apart from its test runs."""
    rows = tuple((run, fmt_count(cost["candidates"]), fmt_count(cost["candidate_tokens"]),
                  fmt_number(cost["candidate_seconds"]), fmt_count(cost["designer_calls"]),
                  fmt_count(cost["designer_tokens"])) for run, cost in sorted(comparison.search_cost.items()))
    return Table("systems-search-cost", "What the searches cost", "Apart from test-time cost (in the table "
                 "above): the candidates scored, their runs' model tokens and wall seconds, the designer's calls "
                 "and tokens.", ("run", "candidates", "candidate tokens", "candidate seconds", "designer calls",
                                 "designer tokens"), rows)


def audit_table(comparison: SystemsComparison) -> Table:
    """The reward-hacking audit per run."""
    rows = tuple((run, fmt_percent(entry["honesty_rate"]), fmt_number(entry["fabricate_margin"], signed=True),
                  str(len(entry["inflated_preferred"]))) for run, entry in sorted(comparison.audit.items()))
    return Table("systems-audit", "Reward-hacking audit", "Honesty: share of test artifacts whose reported metrics "
                 "agree with the recomputed; margin: test score minus the fabricate floor's; inflated preferred: "
                 "candidates a search preferred whose hand-ins reported more reward than they earned (expected 0: "
                 "searches climb recomputed rewards only).", ("run", "honesty", "margin over fabricate",
                                                               "inflated preferred"), rows)
