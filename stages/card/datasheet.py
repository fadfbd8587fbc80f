"""The release's datasheet: Gebru et al.'s questions answered from the build.

Gebru et al., "Datasheets for Datasets", Communications of the ACM 64(12), 2021 (arXiv:1803.09010).

Sections follow the paper: motivation, composition, collection process, preprocessing and labeling,
uses, distribution, maintenance. Figures come from `Facts`; the answers shared with the Croissant
file's RAI fields are the same sentences (`stages.card.text`).
"""

from __future__ import annotations

from stages.card.facts import Facts
from stages.card.text import DOMAIN_SCOPE, rai_text, source_line


def _table(rows: dict[str, dict[str, int]], columns: list[str]) -> list[str]:
    lines = ["| | " + " | ".join(columns) + " | all |", "|---" * (len(columns) + 2) + "|"]
    for name, counts in rows.items():
        values = [counts.get(c, 0) for c in columns]
        lines.append(f"| {name} | " + " | ".join(str(v) for v in values) + f" | {sum(values)} |")
    return lines


def _bullets(items: list[str]) -> list[str]:
    return [f"- {item}" for item in items]


def datasheet(facts: Facts, card: dict) -> str:
    """The datasheet as Markdown."""
    catalog, rai = facts.catalog, rai_text(facts)
    domains = sorted(catalog["tasks_by_domain"])
    splits = sorted(catalog["queries_by_split"])
    categories = {c: d for c, d in catalog["tasks_by_category_domain"].items() if d}
    lines = [f"# Datasheet: {card['name']} {card['version']} ({facts.benchmark_id}, profile `{facts.profile}`)", "",
             "## Motivation", "",
             card["description"].strip(), "",
             "## Composition", "",
             f"{catalog['tasks']} tasks and {catalog['queries']} queries. A task is one peer-reviewed analysis "
             "adapted to the data; a query is that task on one scope (a named slice of entities and period) with "
             "its own withheld truth. Each query is one row of `queries.parquet` and one folder "
             "`workspaces/<query_id>/` holding the tables an agent gets in `data/`; gold, truth, annotator "
             "scripts and task sources are not part of the release.", "",
             "Tasks by category and domain:", "", *_table(categories, domains), "",
             "Queries by domain and split:", "", *_table(catalog["queries_by_domain_split"], splits), "",
             "Tasks by difficulty: " + ", ".join(f"{k} {v}" for k, v in catalog["tasks_by_difficulty"].items()) + ".",
             "", "Entities per domain: " + "; ".join(f"{d} {n} ({DOMAIN_SCOPE.get(d, d)})"
                                                     for d, n in facts.entities.items()) + ".", "",
             "Personal or sensitive information: " + "; ".join(rai["personal_sensitive_information"]) + ".", "",
             "## Collection process", ""]
    for domain, sources in facts.sources.items():
        lines += [f"- {domain}: " + "; ".join(source_line(s) for s in sources)]
    lines += ["", "## Preprocessing, cleaning and labeling", "",
              *_bullets(rai["data_preprocessing_protocol"] + rai["data_annotation_protocol"]), "",
              *_bullets(rai["data_annotation_analysis"]), "",
              "## Uses", "", *_bullets(rai["data_use_cases"]), "",
              "Limitations:", "", *_bullets(rai["data_limitations"]), "",
              "Overall scores on the evaluated split (0-100): "
              + ", ".join(f"{agent} {score:g}" for agent, score in sorted(facts.overall.items())) + ".", "",
              "## Distribution", "",
              f"License: {card.get('license') or 'not chosen yet (params.yaml card.license)'}. "
              f"URL: {card.get('url') or 'not published yet (params.yaml card.url)'}. "
              "Machine-readable metadata: `croissant.json` (Croissant 1.0 with its RAI fields) beside this file.",
              "", "## Maintenance", "", rai["data_release_maintenance_plan"] + ".", ""]
    return "\n".join(lines)
