"""The construct flow's resume store: a staging, label or verification is never computed twice.

Staging a query grades its reference models (1-3 s per query at `full`); labelling and verifying it
run its annotator script twice (seconds to minutes each). Without this store a build killed after an
hour, or re-run by `dvc repro` because one task changed, stages every query and starts every
annotator over. Each finished result is written to `construct.resume_dir`, keyed by the content of
everything it depends on. A staging (`staging_key`, known before staging, so a stored one needs
neither the task's tables nor the reference models):
- the query (every `Query` field: id, prompt, entities, period, scope) and the task's task.yaml;
- the repository's manifest, which records every table's SHA-256 (and through the `native_files`
  table, the SHA-256 of every native file a query's modalities are cut from);
- the harness code and library versions below.
Its entry keeps the query's staged public and private folders, which a resumed build copies back, or
the discard of a query that could not be staged. A label or verification:
- the query (id and prompt) and the bytes of its public files, private truth and references;
- the bytes of the task's annotator folder (script and library);
- the sandbox limits, the files collected and, for a verification, the gold and `verify_rel_tol`;
- the harness code the construct stage depends on (`LABEL_CODE`): a change to grading reruns all;
  the Python version and the numerical libraries' versions (`LIBRARIES`).
A change to any of them is a miss, so nothing stale is reused. Results that depend on the machine
rather than the inputs (the sandbox failed to start, the script timed out, memory or disk ran out, a
raw file changed after its inventory was written) are not stored. A passed verification keeps a copy
of its verify run (`stages.evaluation.verify_run`), which a resumed build writes into the benchmark
as a fresh one does.

Entries are written whole (temporary file or folder, then rename; the folders before the entry that
names them): a kill leaves an entry or none, never half of one. The store is a cache: deleting it
(or `construct.resume_dir: ""`) only costs time. Each entry also names its task, scope and query and
the seconds its staging or annotator run took, so `python -m stages.construction.resume` shows per
task what a running or killed build has done.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import threading
from collections import defaultdict
from dataclasses import asdict
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from stages.catalog import CatalogTask
from stages.construction.annotate import Label
from stages.construction.drawing import Discard, Query
from stages.hashing import content_hash, file_sha256
from stages.layout import verify_run_dir
from stages.repository import MANIFEST

PROJECT_CODE = Path(__file__).resolve().parents[2]  # the folder holding stages/ and flows/
# The harness code a label depends on: the construct stage's code deps in dvc.yaml (a test keeps the
# two lists equal). A change elsewhere (agents, scoring of runs, the report) keeps the store valid.
LABEL_CODE = ("flows/construct.py", "flows/prefect_api.py", "flows/temporary_server.py", "flows/runners.py",
              "stages/ports.py",
              "stages/construction", "stages/sources/hdf", "stages/domains/imagery_join.py", "stages/repository.py",
              "stages/catalog", "stages/catalog_scopes.py",
              "stages/scoring/query", "stages/evaluation/agents/scripts/reference_models",
              "stages/provenance.py", "stages/evaluation/runner.py", "stages/evaluation/program.py",
              "stages/evaluation/verify_run.py",
              "stages/sandbox")
# Machine trouble, not the query's: a discard whose reason starts so is not stored. The last three
# are staging's (`staging.stage_or_discard`): out of memory, disk full, a raw file changed under its
# inventory (the repository's manifest, and so the key, cannot see that).
TRANSIENT = ("sandbox failed", "annotator script timed out", "MemoryError", "OSError: [Errno 28]",
             "StaleImageryError")
SIDES = ("public", "private")  # a staged query's two folders under its task's folder
COUNTS = {"stage": ("staged", "stage_discards"), "label": ("labelled", "label_discards"),
          "verify": ("verified", "verify_discards")}  # an entry's stage -> (kept, discarded) in `summary`


# The packages an annotator's numbers come from: a new scikit-learn may fit differently.
LIBRARIES = ("numpy", "pandas", "pyarrow", "scipy", "scikit-learn", "statsmodels")


@lru_cache(maxsize=1)
def harness_hash() -> str:
    """Hash of `LABEL_CODE`'s source, the Python version and `LIBRARIES`' versions (once per process)."""
    files = sorted(p for name in LABEL_CODE for p in
                   ([PROJECT_CODE / name] if name.endswith(".py") else (PROJECT_CODE / name).rglob("*.py")))
    versions = {name: _version(name) for name in LIBRARIES}
    return content_hash([[[str(p.relative_to(PROJECT_CODE)), file_sha256(p)] for p in files],
                         sys.version, versions])


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def tree_hashes(folder: Path) -> list[list[str]]:
    """(relative path, SHA-256) of every file under `folder`, sorted; [] when it does not exist."""
    if not folder.is_dir():
        return []
    return [[str(p.relative_to(folder)), file_sha256(p)]
            for p in sorted(folder.rglob("*")) if p.is_file() and "__pycache__" not in p.parts]


def staging_key(task: CatalogTask, repository: Path, query: Query) -> str:
    """The key of a query's staging: the query, the task spec, the repository's manifest and the harness."""
    return content_hash({
        "harness": harness_hash(), "query": asdict(query), "task": file_sha256(task.folder / "task.yaml"),
        "repository": file_sha256(repository / MANIFEST)}, length=32)


def label_key(task_dir: Path, query: Query, limits, collected: tuple[str, ...]) -> str:
    """The key of a query's label: its inputs, its annotator, the limits and the harness."""
    return content_hash({
        "harness": harness_hash(), "query": query.query_id, "prompt": query.prompt,
        "public": tree_hashes(task_dir / "public" / query.query_id),
        "private": tree_hashes(task_dir / "private" / query.query_id),
        "annotator": tree_hashes(task_dir / "private" / "annotator"),
        "limits": asdict(limits), "collected": list(collected)}, length=32)


def verify_key(label_key_: str, label: Label, rel_tol: float) -> str:
    """The key of a verification: the label's key, the gold it checks and the tolerance."""
    return content_hash({"label": label_key_, "gold": asdict(label), "rel_tol": rel_tol}, length=32)


def is_transient(discard: Discard | None) -> bool:
    """Whether a discard comes from the machine (sandbox start, timeout) rather than the query."""
    if discard is None:
        return False
    reason = discard.reason.removeprefix("re-run: ")
    return reason.startswith(TRANSIENT)


class ResumeStore:
    """Finished stagings, labels and verifications under one folder, one JSON file per key.

    Beside an entry: a staged query's folders (`<key>.staged/{public,private}`) and a passed
    verification's verify run (`<key>.run`).
    """

    def __init__(self, root: Path | None):
        self.root = root

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def _read(self, key: str) -> dict | None:
        if self.root is None:
            return None
        try:
            return json.loads(self._path(key).read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return None

    def _write(self, key: str, value: dict) -> None:
        if self.root is None:
            return
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = self._partial(path)
        partial.write_text(json.dumps(value, sort_keys=True))
        partial.replace(path)

    def label(self, key: str) -> tuple[Label | None, Discard | None] | None:
        """A stored label result, or None when there is none."""
        entry = self._read(key)
        if entry is None:
            return None
        label = Label(**entry["label"]) if entry["label"] is not None else None
        discard = Discard(**entry["discard"]) if entry["discard"] is not None else None
        return label, discard

    def put_label(self, key: str, label: Label | None, discard: Discard | None, about: dict) -> None:
        """Store a label result (unless it failed for a machine's reason).

        `about`: the query's task_id, scope, query_id and the annotator run's seconds (`summary`).
        """
        if not is_transient(discard):
            self._write(key, {"stage": "label", **about,
                              "label": asdict(label) if label is not None else None,
                              "discard": asdict(discard) if discard is not None else None})

    def _staged_path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.staged"

    def _partial(self, path: Path) -> Path:
        """A temporary name beside `path`, unique to this process and thread."""
        return path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")

    def staging(self, key: str, task_dir: Path, query_id: str) -> tuple[bool, Discard | None]:
        """(found, the discard or None) for a stored staging.

        A staged query's public and private folders are copied back under `task_dir` (replacing
        any there); when the store has no copy of them, the staging counts as not found.
        """
        entry = self._read(key)
        if entry is None:
            return False, None
        if entry["discard"] is not None:
            return True, Discard(**entry["discard"])
        stored = self._staged_path(key)
        if not stored.is_dir():
            return False, None
        for side in SIDES:
            shutil.rmtree(task_dir / side / query_id, ignore_errors=True)
            shutil.copytree(stored / side, task_dir / side / query_id)
        return True, None

    def put_staging(self, key: str, task_dir: Path, query_id: str, discard: Discard | None, about: dict) -> None:
        """Store a staging (unless it failed for a machine's reason); `about` as for a label.

        A staged query's folders under `task_dir` are copied into the store first (without a
        verify run, which is the verification's), so an entry never lacks the folders it restores.
        """
        if self.root is None or is_transient(discard):
            return
        if discard is None:
            path = self._staged_path(key)
            partial = self._partial(path)
            run = verify_run_dir(task_dir / "private", query_id)
            for side in SIDES:
                shutil.copytree(task_dir / side / query_id, partial / side, ignore=shutil.ignore_patterns(run.name))
            shutil.rmtree(path, ignore_errors=True)
            partial.replace(path)
        self._write(key, {"stage": "stage", **about, "discard": asdict(discard) if discard is not None else None})

    def _run_path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.run"

    def verification(self, key: str, run: Path | None = None) -> tuple[bool, Discard | None]:
        """(found, the discard or None) for a stored verification.

        A passed one's verify run is copied back to `run` (a build starts from an empty benchmark);
        when the store has no copy of it, the verification counts as not found.
        """
        entry = self._read(key)
        if entry is None:
            return False, None
        if entry["discard"] is not None:
            return True, Discard(**entry["discard"])
        if run is not None:
            if not self._run_path(key).is_dir():
                return False, None
            shutil.rmtree(run, ignore_errors=True)
            shutil.copytree(self._run_path(key), run)
        return True, None

    def put_verification(self, key: str, discard: Discard | None, about: dict, run: Path | None = None) -> None:
        """Store a verification (unless it failed for a machine's reason); `about` as for a label.

        A passed one's verify run folder `run` is copied into the store first, so an entry never
        lacks the run it restores.
        """
        if is_transient(discard):
            return
        if discard is None and run is not None and self.root is not None:
            partial = self._partial(self._run_path(key))
            shutil.copytree(run, partial)
            shutil.rmtree(self._run_path(key), ignore_errors=True)
            partial.replace(self._run_path(key))
        self._write(key, {"stage": "verify", **about, "discard": asdict(discard) if discard is not None else None})

    def summary(self) -> dict[str, dict]:
        """Per task: stagings, labels and verifications stored, those kept, and their seconds.

        `seconds` are the annotator runs' (label and verify), `stage_seconds` the stagings'.
        """
        tasks: dict[str, dict] = defaultdict(lambda: {**{name: 0 for pair in COUNTS.values() for name in pair},
                                                      "stage_seconds": 0.0, "seconds": 0.0})
        for path in sorted(self.root.glob("*/*.json")) if self.root is not None else []:
            entry = json.loads(path.read_text())
            row = tasks[entry.get("task_id", "?")]
            kept, discarded = COUNTS[entry["stage"]]
            row[discarded if entry["discard"] is not None else kept] += 1
            seconds = "stage_seconds" if entry["stage"] == "stage" else "seconds"
            row[seconds] = round(row[seconds] + entry.get("seconds", 0.0), 1)
        return dict(sorted(tasks.items()))


def main() -> None:
    """Print what a (running or killed) build has finished, per task."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--store", type=Path, default=Path(".cache/construct"))
    rows = ResumeStore(parser.parse_args().store).summary()
    print(f"{'task':44} {'staged':>6} {'s-disc':>6} {'labelled':>8} {'l-disc':>6} {'verified':>8} {'v-disc':>6} "
          f"{'stage-s':>7} {'seconds':>8}")
    for task_id, row in rows.items():
        print(f"{task_id:44} {row['staged']:6} {row['stage_discards']:6} {row['labelled']:8} "
              f"{row['label_discards']:6} {row['verified']:8} {row['verify_discards']:6} "
              f"{row['stage_seconds']:7.0f} {row['seconds']:8.0f}")
    total = {name: sum(row[name] for row in rows.values())
             for name in ("staged", "labelled", "verified", "stage_seconds", "seconds")}
    print(f"{len(rows)} tasks: {total['staged']} staged, {total['labelled']} labelled, {total['verified']} verified, "
          f"{total['stage_seconds'] / 60:.0f} staging-minutes, {total['seconds'] / 60:.0f} annotator-minutes")


if __name__ == "__main__":
    main()
