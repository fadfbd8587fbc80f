"""What every domain's catalog test checks the same way: its tasks, its annotator library, its shape.

Shared by the per-domain catalog tests (tests/catalog/test_<domain>_catalog.py): each builds its
`tasks` and `lib` fixtures from `load_domain_tasks` and `import_library`, and states its own
categories, difficulties and author names to the assertions here.
"""

from __future__ import annotations

import importlib
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from stages.catalog import HARNESS_METRICS, CatalogTask, load_scopes, load_task


def load_domain_tasks(domain: Path) -> dict[str, CatalogTask]:
    """Every task folder (one with a task.yaml) of `domain`, loaded, by task id."""
    folders = sorted(p for p in domain.iterdir() if (p / "task.yaml").exists())
    return {task.spec.id: task for task in map(load_task, folders)}


def import_library(library: Path, *names: str) -> Iterator[tuple[ModuleType, ...]]:
    """Yield the annotator library modules `names`, imported as the annotator imports them (flat, by name).

    A generator for a module-scoped fixture: the library folder, `catalog/annotator_common` and the
    harness's metrics (mounted beside every library) are on sys.path only while it runs.
    """
    folders = [str(library), str(library.parents[1] / "annotator_common"), str(HARNESS_METRICS.parent)]
    sys.path[:0] = folders
    try:
        yield tuple(importlib.import_module(name) for name in names)
    finally:
        for folder in folders:
            sys.path.remove(folder)


def assert_domain_shape(tasks: dict[str, CatalogTask], domain: str, count: int,
                        categories: dict[str, int], difficulties: dict[str, int]) -> None:
    """The domain holds `count` tasks named `<domain>-...` with exactly these category and difficulty counts."""
    assert len(tasks) == count and all(t.startswith(f"{domain}-") for t in tasks)
    assert Counter(t.spec.category for t in tasks.values()) == categories
    assert Counter(t.spec.difficulty for t in tasks.values()) == difficulties


def assert_graded_on_known_scopes(tasks: dict[str, CatalogTask], domain: Path, min_scopes: int = 0) -> None:
    """Every task names only scopes of the domain (at least `min_scopes`), reads the domain's repository,
    and is a graded metric task: truth, artifact, reference models, every metric graded against references."""
    scopes = load_scopes(domain)
    for task in tasks.values():
        spec = task.spec
        assert set(spec.scopes) <= set(scopes) and len(spec.scopes) >= min_scopes, spec.id
        assert spec.data.repository == domain.name, spec.id
        assert spec.truth is not None and spec.artifact is not None and spec.reference_models, spec.id
        assert all(m.grade is not None and m.references for m in spec.answer.metrics), spec.id


def assert_prompt_clean(prompt: str, authors: tuple[str, ...], task_id: str) -> None:
    """A rendered prompt carries no DOI, no author's name and no unfilled `$placeholder`."""
    assert "doi" not in prompt.lower() and "10." + "1" not in prompt, task_id
    assert not [name for name in authors if name in prompt], task_id
    assert "$" not in prompt, task_id
