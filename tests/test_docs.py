"""The docs site builds without a warning, the README's links resolve, and the generated counts are current."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from stages import docs_figures
from stages.catalog import load_catalog
from stages.params import load_params

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} (.+)$", re.MULTILINE)


def relative_links(text: str) -> list[str]:
    """Markdown link targets that point into the repository (no scheme, no bare anchor)."""
    return [t for t in LINK.findall(text) if not re.match(r"^[a-z]+:", t) and not t.startswith("#")]


def anchor(heading: str) -> str:
    """The id Python-Markdown's toc gives a heading (its default slugify)."""
    text = re.sub(r"[^\w\s-]", "", heading.replace("`", "")).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def nav_pages(nav: list) -> list[str]:
    pages = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        pages += nav_pages(value) if isinstance(value, list) else [value]
    return pages


def test_the_site_builds_strict_without_a_warning(tmp_path):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(ROOT / "mkdocs.yml"),
                           "-d", str(tmp_path / "site")], capture_output=True, text=True, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WARNING" not in done.stdout + done.stderr
    assert (tmp_path / "site" / "generated" / "catalog" / "index.html").is_file()


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert sorted(nav_pages(config["nav"])) == pages


def test_the_readme_links_resolve_to_files_and_headings():
    readme = (ROOT / "README.md").read_text()
    links = relative_links(readme)
    assert "docs/generated/catalog.md" in links and "docs/layout.md" in links
    for link in links:
        path, _, fragment = link.partition("#")
        target = ROOT / path
        assert target.exists(), link
        if fragment:
            assert fragment in {anchor(h) for h in HEADING.findall(target.read_text())}, link


def test_the_readme_stays_an_entry_point():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250


def test_the_generated_catalog_page_is_what_the_script_writes_now(monkeypatch):
    monkeypatch.chdir(ROOT)
    params = load_params()
    domains = params.construct.domains
    expected = docs_figures.catalog_page(
        load_catalog(ROOT / "catalog", domains), domains,
        {d: params.align[d].sources for d in domains}, {a: params.agents[a].kind for a in params.evaluate.agents})
    assert (DOCS / "generated" / "catalog.md").read_text() == expected, "run `python -m stages.docs_figures`"


def test_no_page_types_the_catalog_counts_the_generated_page_holds():
    tasks = load_catalog(ROOT / "catalog", load_params(ROOT / "params.yaml").construct.domains)
    metric = sum(1 for t in tasks if t.spec.answer.metrics)
    typed = re.compile(rf"\b({len(tasks)}|{metric}|{len(tasks) - metric}) (metric |hypothesis |catalog )?tasks\b")
    pages = [ROOT / "README.md", *(p for p in DOCS.rglob("*.md") if p.parent.name != "generated")]
    assert {p.name: typed.findall(p.read_text()) for p in pages if typed.search(p.read_text())} == {}


@pytest.mark.parametrize("heading, expected", [("Resuming (`construct.resume_dir`)", "resuming-constructresume_dir"),
                                               ("Watching runs: `make ui`", "watching-runs-make-ui")])
def test_anchors_are_slugged_as_the_site_slugs_them(heading, expected):
    assert anchor(heading) == expected
