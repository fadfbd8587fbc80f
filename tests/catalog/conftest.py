"""The camels catalog, loaded once for the catalog tests."""

from __future__ import annotations

import pytest
from scibench_testing.annotators import CATALOG

from stages.catalog import CatalogTask, load_catalog


@pytest.fixture(scope="module")
def tasks() -> dict[str, CatalogTask]:
    return {task.spec.id: task for task in load_catalog(CATALOG, ["camels"])}
