"""Loading the catalog: each task folder's `task.yaml` validated, its files and its content hash.

Helper modules the domain's annotator scripts share live in `catalog/<domain>/annotator_lib/`, and
helpers every domain may use (reading the scope block, the bootstrap, writing answers and
checkpoints) in `catalog/annotator_common/`, and the harness's metrics (`HARNESS_METRICS`); they are
part of every task's hash and are mounted beside `reproduce.py` when it runs. Scope names are
checked against the domain's `scopes.yaml`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from stages.catalog.spec import TaskSpec
from stages.catalog_scopes import CatalogError, load_scopes, read_yaml
from stages.hashing import content_hash

ANNOTATOR_LIB = "annotator_lib"  # catalog/<domain>/annotator_lib/*.py: mounted beside reproduce.py
ANNOTATOR_COMMON = "annotator_common"  # catalog/annotator_common/*.py: mounted for every domain
# The harness's metric definitions, mounted beside every annotator as `metrics` so a gold's reported
# estimates use the formulas grading uses. A path, not an import: the catalog sits below scoring.
HARNESS_METRICS = Path(__file__).resolve().parents[1] / "scoring" / "query" / "metrics.py"


@dataclass(frozen=True)
class CatalogTask:
    """A task spec with the files that define it and its two content hashes.

    `definition_hash` covers what the task asks (`task.yaml` but its scope list): query ids, and so
    the held-out draws and the splits seeded by them, derive from it, so a refactor of the
    reproduction code that leaves every gold as it was leaves the benchmark as it was.
    `task_hash` also covers the code that produces the gold (`reproduce.py` and the libraries
    mounted beside it): journal records are keyed by it, so any change to that code runs the
    agents again instead of trusting records graded against an older gold.
    """

    spec: TaskSpec
    folder: Path
    reproduce: Path
    definition_hash: str
    task_hash: str
    annotator_lib: tuple[Path, ...] = ()

    def query_id(self, scope_block: str) -> str:
        """The id of this task's query over a resolved scope (its rendered block)."""
        return "q-" + content_hash([self.definition_hash, scope_block])


def load_task(folder: Path) -> CatalogTask:
    """Load and validate `folder/task.yaml`; the folder name must equal the task id."""
    path = folder / "task.yaml"
    raw = read_yaml(path)
    try:
        spec = TaskSpec.model_validate(raw)
    except ValidationError as error:
        raise CatalogError(f"{path}: {error}") from error
    if spec.id != folder.name:
        raise CatalogError(f"{path}: id {spec.id!r} differs from its folder name {folder.name!r}")
    reproduce = folder / "reproduce.py"
    if not reproduce.is_file():
        raise CatalogError(f"{folder}: missing reproduce.py (the annotator reproduction script)")
    # In a fixed order, never by absolute path: where the checkout lies must not change a hash.
    library = (*sorted((folder.parent.parent / ANNOTATOR_COMMON).glob("*.py")),
               *sorted((folder.parent / ANNOTATOR_LIB).glob("*.py")), HARNESS_METRICS)
    # The scope list is the task's query pool, not the task: adding a scope adds queries and keeps
    # every other query's id (and its label, journal records and scores) as it was.
    identity = {name: value for name, value in raw.items() if name != "scopes"} if isinstance(raw, dict) else raw
    task_hash = content_hash([identity, reproduce.read_text(), [[p.name, p.read_text()] for p in library]])
    return CatalogTask(spec=spec, folder=folder, reproduce=reproduce,
                       definition_hash=content_hash(identity), task_hash=task_hash, annotator_lib=library)


def load_catalog(catalog_dir: Path, domains: list[str]) -> list[CatalogTask]:
    """Load every task of the given domains, sorted by id; unknown scope names fail."""
    tasks = []
    for domain in domains:
        domain_dir = catalog_dir / domain
        scopes = load_scopes(domain_dir)
        for folder in sorted(p for p in domain_dir.iterdir() if (p / "task.yaml").exists()):
            task = load_task(folder)
            unknown = sorted(set(task.spec.scopes) - set(scopes))
            if unknown:
                raise CatalogError(f"{folder / 'task.yaml'}: unknown scopes {unknown}")
            tasks.append(task)
    return sorted(tasks, key=lambda t: t.spec.id)
