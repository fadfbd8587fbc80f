"""The first five camels tasks (one per method family), loaded once for the catalog tests.

The rest of the catalog has its own modules (tests/catalog/test_catalog.py for the whole of it).
"""

from __future__ import annotations

import pytest
from scibench_testing.annotators import CATALOG
from scibench_testing.project import TINY_TASKS

from stages.catalog import CatalogTask, load_catalog


@pytest.fixture(scope="module")
def tasks() -> dict[str, CatalogTask]:
    return {task.spec.id: task for task in load_catalog(CATALOG, ["camels"]) if task.spec.id in TINY_TASKS}
