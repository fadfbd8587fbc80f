"""The docs' counts, computed from the catalog and the registries: `docs/generated/catalog.md`.

    python -m stages.docs_figures            # (re)write docs/generated/catalog.md
    python -m stages.docs_figures --check    # exit 1 when the committed file differs

Every number that changes when a task, a source or an agent is added is written here and nowhere
else in the docs. Only task specs, scope lists and registries are read: no build output, no gold.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from stages.catalog import HYPOTHESIS_TYPES, STBENCH_CATEGORIES, CatalogTask, load_catalog
from stages.catalog_scopes import ScopeLibrary, read_yaml
from stages.catalog_summary import TAG_AXES
from stages.evaluation.agents import AGENTS
from stages.evaluation.agents.scripts.reference_models import MODELS
from stages.layout import CATALOG
from stages.params import load_params
from stages.scoring.query.grade import FEATURE_FUNCTIONS
from stages.scoring.query.metrics import METRICS
from stages.sources import SOURCES

OUT = Path("docs/generated/catalog.md")
HEADER = ("<!-- Written by `python -m stages.docs_figures` (make docs) from the catalog and the registries; "
          "do not edit. -->")


def table(head: list[str], rows: Iterable[list[object]]) -> list[str]:
    """A Markdown table (a blank line after it)."""
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return [*lines, ""]


def grid(tasks: list[CatalogTask], rows: tuple[str, ...], domains: list[str], head: str) -> list[str]:
    """Tasks counted by category (rows) and domain (columns), with totals; empty rows left out."""
    counts = Counter((t.spec.category, t.spec.domain) for t in tasks)
    used = [d for d in domains if any(counts[r, d] for r in rows)]
    body = [[f"`{r}`", *(counts[r, d] for d in used), sum(counts[r, d] for d in used)]
            for r in rows if any(counts[r, d] for d in used)]
    return table([head, *used, "all"], body)


def bound(domain: str) -> str:
    """`20 x 10 years`: the most entities and calendar years one query of the domain covers."""
    limits = ScopeLibrary.model_validate(read_yaml(CATALOG / domain / "scopes.yaml")).bounds
    return f"{limits.entities or 'any'} entities x {limits.years or 'any'} years"


def tally(values: Iterable[str]) -> str:
    """`a 3, b 2`: most frequent first, then by name."""
    return ", ".join(f"`{k}` {n}" for k, n in sorted(Counter(values).items(), key=lambda kv: (-kv[1], kv[0])))


def catalog_page(tasks: list[CatalogTask], domains: list[str], sources_of: dict[str, list[str]],
                 agents: dict[str, str]) -> str:
    """The page's Markdown, from the loaded tasks, the domains' sources and the evaluated agents' kinds."""
    metric = [t for t in tasks if t.spec.answer.metrics]
    hypothesis = [t for t in tasks if t.spec.answer.hypothesis]
    scopes = [len(t.spec.scopes) for t in tasks]
    lines = [HEADER, "", "# Catalog figures", "",
             f"The catalog holds **{len(tasks)} tasks** on {len(domains)} domains: {len(metric)} metric tasks "
             f"(the hand-in graded against withheld truth) and {len(hypothesis)} hypothesis tasks (one typed "
             f"answer against the annotator's gold). They list {sum(scopes)} scopes, {min(scopes)} to "
             f"{max(scopes)} per task. The registries hold {len(SOURCES)} sources, {len(AGENTS)} agent kinds, "
             f"{len(METRICS) + len(FEATURE_FUNCTIONS)} graded metric functions and {len(MODELS)} reference "
             f"models; `make run` evaluates {len(agents)} agents.", "", "## Tasks by domain", "",
             "The query bound is the most entities and calendar years one query covers at every profile "
             "(`bounds` of `catalog/<domain>/scopes.yaml`).", ""]
    lines += table(["domain", "sources", "metric tasks", "hypothesis tasks", "scopes", "query bound"], [
        [f"`{d}`", ", ".join(f"`{s}`" for s in sources_of.get(d, [])),
         sum(t.spec.domain == d for t in metric), sum(t.spec.domain == d for t in hypothesis),
         sum(len(t.spec.scopes) for t in tasks if t.spec.domain == d), bound(d)] for d in domains])
    lines += ["## ST-Bench categories", ""] + grid(tasks, STBENCH_CATEGORIES, domains, "category")
    lines += ["## MoSciBench problem types", ""] + grid(tasks, HYPOTHESIS_TYPES, domains, "problem type")
    lines += ["## Difficulty and tags", ""]
    lines += table(["axis", "tasks"], [
        ["difficulty (metric tasks)", tally(t.spec.difficulty for t in metric)],
        ["difficulty (hypothesis tasks)", tally(t.spec.difficulty for t in hypothesis)],
        *([f"`{axis}`", tally(tag for t in tasks for tag in getattr(t.spec.tags, axis))] for axis in TAG_AXES)])
    lines += ["## Truth, baselines and answers", ""]
    lines += table(["what", "tasks"], [
        ["truth kind", tally(t.spec.truth.kind for t in tasks if t.spec.truth)],
        ["reference models named", tally(m for t in tasks for m in t.spec.reference_models)],
        ["hypothesis answer format", tally(t.spec.answer.hypothesis.format for t in hypothesis)],
        ["graded metric function", tally(m.grade.function for t in metric for m in t.spec.answer.metrics
                                         if m.grade)]])
    lines += ["## Registries", ""]
    lines += table(["registry", "names"], [
        ["sources (`stages/sources/__init__.py` `SOURCES`)", ", ".join(f"`{s}`" for s in SOURCES)],
        ["agent kinds (`stages/evaluation/agents/__init__.py` `AGENTS`)", ", ".join(f"`{k}`" for k in AGENTS)],
        ["metric functions (`stages/scoring/query/metrics.py` `METRICS`, `grade.py` `FEATURE_FUNCTIONS`)",
         ", ".join(f"`{m}`" for m in [*METRICS, *FEATURE_FUNCTIONS])],
        ["reference models (`reference_models` `MODELS`)", ", ".join(f"`{m}`" for m in MODELS)]])
    lines += ["## Agents `make run` evaluates (`evaluate.agents`)", ""]
    lines += table(["kind", "agents"], [
        [f"`{kind}`", ", ".join(f"`{a}`" for a, k in agents.items() if k == kind)]
        for kind in dict.fromkeys(agents.values())])
    return "\n".join(lines).rstrip("\n") + "\n"


def main() -> None:
    """Write the page (or, with `--check`, compare it with the file) from params.yaml's domains and agents."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the file is not what would be written")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    params = load_params()
    domains = params.construct.domains
    text = catalog_page(load_catalog(CATALOG, domains), domains,
                        {d: params.align[d].sources for d in domains if d in params.align},
                        {name: params.agents[name].kind for name in params.evaluate.agents})
    if args.check:
        current = args.out.read_text() if args.out.exists() else ""
        if current != text:
            sys.exit(f"{args.out} is stale: run `python -m stages.docs_figures`")
        return
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(f"docs_figures: {args.out} ({len(text.splitlines())} lines)")


if __name__ == "__main__":
    main()
