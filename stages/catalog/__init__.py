"""The benchmark catalog: `catalog/<domain>/<task_id>/{task.yaml, reproduce.py}` as validated specs.

A task spec is pydantic with `extra="forbid"`: a typo in a task file fails the build, naming the file.
Scopes are defined once per domain in `catalog/<domain>/scopes.yaml` and referenced by name
(`stages.catalog_scopes`). The package's modules:

- `spec`: a task as `task.yaml` states it (`TaskSpec`: categories, tags, data, truth, artifact,
  checkpoints);
- `answer`: what it asks for and how that is graded (`AnswerSpec`: metrics or a hypothesis);
- `load`: the catalog's folders read and validated (`load_task`, `load_catalog`, `CatalogTask`).

Their names are re-exported here, where the rest of the project imports them from.
"""

from stages.catalog.answer import (
    DIRECTIONAL_TARGETS,
    TARGET_PATTERN,
    AnswerSpec,
    BootstrapSpec,
    GradeSpec,
    HypothesisSpec,
    MetricSpec,
)
from stages.catalog.load import ANNOTATOR_COMMON, ANNOTATOR_LIB, HARNESS_METRICS, CatalogTask, load_catalog, load_task
from stages.catalog.spec import (
    HYPOTHESIS_TYPES,
    PROFILE_DEFINITIONS,
    STBENCH_CATEGORIES,
    ArtifactDtype,
    ArtifactSpec,
    Category,
    CheckpointSpec,
    DataSpec,
    NativeSpec,
    Source,
    Tags,
    TaskSpec,
    TruthSpec,
)
from stages.catalog_scopes import CatalogError, load_scopes

__all__ = [
    "ANNOTATOR_COMMON", "ANNOTATOR_LIB", "HARNESS_METRICS", "DIRECTIONAL_TARGETS", "HYPOTHESIS_TYPES",
    "PROFILE_DEFINITIONS",
    "STBENCH_CATEGORIES", "TARGET_PATTERN", "AnswerSpec", "ArtifactDtype", "ArtifactSpec", "BootstrapSpec",
    "CatalogError", "CatalogTask", "Category", "CheckpointSpec", "DataSpec", "GradeSpec", "HypothesisSpec",
    "MetricSpec", "NativeSpec", "Source", "Tags", "TaskSpec", "TruthSpec", "load_catalog", "load_scopes",
    "load_task",
]
