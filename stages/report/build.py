"""Build the report: plots into `plots/`, then `index.html` beside them.

The same inputs give the same bytes: plots are deterministic (`stages.report.figures`), tables are
ordered (agents by score, tasks and cut values by name), and the page records no time. An agent's
name links to its transcript pages when the `inspect` stage wrote them (`transcripts/<agent>.html`;
none for the oracle): the report stage runs after it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from stages.report.contents import report_tables
from stages.report.html import Section, render_page
from stages.report.inputs import ReportInputs
from stages.report.plots import plot_coverage, plot_cut, plot_frontier, plot_outcomes, plot_scores
from stages.report.systems import systems_section
from stages.report.tables import cut_axes, cut_key
from stages.report.transcript_pages import transcript_links


def _versions(inputs: ReportInputs) -> dict[str, list[str]]:
    """Benchmark version (id, git, build lock) -> the agents scored on it."""
    found: dict[str, list[str]] = {}
    for agent in sorted(inputs.metrics):
        version = inputs.metrics[agent].version
        key = (f"benchmark {version.get('benchmark_id', '?')}, git {version.get('git', '?')}, "
               f"build lock {version.get('dvc_lock') or '?'}")
        found.setdefault(key, []).append(agent)
    return found


def build_sections(inputs: ReportInputs, plots_dir: Path, transcripts: dict[str, str] | None = None) -> list[Section]:
    """Draw every plot and lay out the page's sections (`transcripts`: agent -> href of its transcript pages)."""
    tables = {table.key: table for table in report_tables(inputs, transcripts)}
    axes, empty = cut_axes(inputs.metrics)
    metrics = inputs.metrics
    comparison = inputs.comparison
    if comparison.baseline:
        versus = Section("cost-performance", "Cost and performance",
                         [plot_frontier(comparison, plots_dir), tables["versus-baseline"]])
    else:
        versus = Section("cost-performance", "Cost and performance",
                         note="No baseline is configured (params.yaml scoring.baseline): no comparison.")
    cuts = [item for axis in axes for item in (plot_cut(metrics, axis, plots_dir), tables[cut_key(axis)])]
    sections = [
        Section("scores", "Scores", [plot_scores(metrics, plots_dir), tables["scores"],
                                     *[tables[key] for key in ("repeated-runs", "pass-at-k") if key in tables]]),
        versus,
        Section("coverage-quality", "Coverage and quality", [plot_coverage(metrics, plots_dir)],
                note="The rates per agent are in the Scores table."),
        Section("outcomes", "Outcomes", [plot_outcomes(metrics, plots_dir), tables["outcomes"], tables["errors"],
                                             tables["attribution"]]),
        Section("cuts", "Cuts", cuts, f"No task has a value on: {', '.join(empty)}." if empty else ""),
        Section("tasks", "Tasks", [tables["tasks"]]),
        Section("validity", "Validity", [tables["validity"]],
                note="All gates pass." if inputs.validity.passed
                else f"{len(inputs.validity.failures)} gate(s) failed: the build fails until they pass."),
        Section("honesty", "Honesty", [tables["honesty"]]),
        Section("usage", "Usage", [tables["usage"]]),
    ]
    if "generalizability" in tables:
        sections.append(Section("generalizability", "Generalizability", [tables["generalizability"]]))
    if inputs.systems is not None:
        sections.append(systems_section(inputs.systems, plots_dir))
    generated = [tables[key] for key in ("generated", "autoscibench") if key in tables]
    if generated:
        sections.append(Section("generated", "Generated benchmark", generated,
                                note="Beside the catalog: processed/generated/ (`dvc repro generate`); the "
                                     "floors' gate in processed/metrics/generated_validity.json."))
    return sections


def page_notes(inputs: ReportInputs) -> tuple[list[str], list[str], list[str]]:
    """The page's header lines, warnings and footer lines (versions, where the numbers are)."""
    versions = _versions(inputs)
    split = inputs.metrics[inputs.agents[0]].split if inputs.agents else inputs.comparison.split
    validity = "all validity gates pass" if inputs.validity.passed \
        else f"{len(inputs.validity.failures)} validity gate(s) FAILED"
    meta = [f"{len(inputs.agents)} agents on the {split} split; baseline {inputs.comparison.baseline or 'none'}; "
            f"{validity}.",
            *(f"Scored on {version}." for version in versions)]
    benchmarks = sorted({str(m.version.get("benchmark_id")) for m in inputs.metrics.values()})
    warnings = [f"The agents were scored on {len(benchmarks)} different benchmarks ({', '.join(benchmarks)}): "
                "their scores do not compare."] if len(benchmarks) > 1 else []
    footer = [f"{version}: {', '.join(agents)}" for version, agents in versions.items()]
    footer.append("Numbers: processed/metrics/<agent>.json (dvc metrics show), per task "
                  "<agent>.tasks.json, comparisons compare.json, validity processed/reports/validity.json.")
    return meta, warnings, footer


def build_report(inputs: ReportInputs, reports_dir: Path) -> Path:
    """Write `index.html` and `plots/` into `reports_dir` (old plots removed); returns the page's path."""
    plots_dir = reports_dir / "plots"
    shutil.rmtree(plots_dir, ignore_errors=True)
    sections = build_sections(inputs, plots_dir, transcript_links(inputs.agents, reports_dir))
    meta, warnings, footer = page_notes(inputs)
    page = render_page("scibench report", meta, warnings, sections, footer)
    path = reports_dir / "index.html"
    path.write_text(page, encoding="utf-8")
    return path
