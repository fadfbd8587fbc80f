"""Prefect flow: turn the catalog into a benchmark (extract -> align -> formalize & label -> verify).

Run by DVC as `python -m flows.construct`. Every task here calls a plain function from `stages/`.

This process extracts and aligns, one task after another; each staged query's label and verify
(two sandboxed annotator runs) go to the task runner: `construct.concurrency` threads, or the
workers of an existing Dask cluster (`construct.dask_address`). What a worker gets pickles (the
query, spec, limits and resume store are plain values) and names files by absolute paths under the
project root, so a worker started in another folder finds them; it returns only the gold and discard.
"""

from __future__ import annotations

import gc
import shutil
import time
from pathlib import Path

from prefect import flow, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE

from flows.prefect_api import prefect_api, publish, run_flow
from flows.runners import task_runner
from stages.catalog import CatalogTask, load_catalog, load_scopes
from stages.construction import annotate, drawing, resume, screening, staging
from stages.construction.benchmark import finalize_benchmark, verification_markdown
from stages.layout import BENCHMARK, CATALOG, REPOSITORIES, task_dir, verify_run_dir
from stages.params import ConstructParams, load_params
from stages.provenance import provenance_summary
from stages.repository import read_manifest, read_table
from stages.sandbox import debris
from stages.sandbox.pools import close_all, imports_of


@task(name="extract", task_run_name="extract {catalog_task.spec.id}", cache_policy=NO_CACHE)
def extract(catalog_task: CatalogTask):
    """Stage 1: select the repository tables and columns the task needs."""
    return drawing.extract_tables(catalog_task, REPOSITORIES / catalog_task.spec.data.repository)


@task(name="align", task_run_name="align {catalog_task.spec.id}", cache_policy=NO_CACHE)
def align(catalog_task: CatalogTask, key: str, queries: list, store: resume.ResumeStore, fresh: bool = True):
    """Stages 1 and 2: stage each query's public files and hidden truth, or restore them from `store`.

    A query's public files hold its scope only. `fresh` empties the task's folder first (its first
    round). The task's tables are extracted only when some query's staging is not stored. Returns
    the staged queries and the discards of those that could not be staged, in `queries`' order.
    """
    folder = task_dir(BENCHMARK, catalog_task.spec.id)
    if fresh:
        staging.stage_task(catalog_task, folder)
    repository = REPOSITORIES / catalog_task.spec.data.repository
    stored_as = {q.query_id: resume.staging_key(catalog_task, repository, q) for q in queries}
    discards, missing = {}, []
    for query in queries:
        found, discards[query.query_id] = store.staging(stored_as[query.query_id], folder, query.query_id)
        if not found:
            missing.append(query)
    if missing:
        tables = extract(catalog_task)
        for query in missing:
            started = time.monotonic()
            discards[query.query_id] = staging.stage_or_discard(catalog_task, tables, key, query, folder)
            store.put_staging(stored_as[query.query_id], folder, query.query_id, discards[query.query_id],
                              about(query, started))
        del tables
        # The tables end up in reference cycles that only the cyclic collector frees, and it seldom
        # runs (large arrays do not count towards its threshold): without this a `full` build held
        # ~1 GB more per task and the kernel killed it at 24 GB.
        gc.collect()
    return ([q for q in queries if discards[q.query_id] is None],
            [discards[q.query_id] for q in queries if discards[q.query_id] is not None])


@task(name="label", task_run_name="label {query.task_id} {query.scope}", cache_policy=NO_CACHE)
def label(query: drawing.Query, spec, limits, hidden, key: str, rel_tol: float, store: resume.ResumeStore,
           root: Path, warm: tuple[str, ...] | None = None):
    """Stage 3: run the annotator script for the query's gold answer (or reuse a stored one).

    Then stage 4 on it. `root` is the project's absolute path (the task may run in another
    process, in another folder). Returns (gold, the discard of label or verify, or None).
    """
    folder = task_dir(root / BENCHMARK, query.task_id)
    stored_as = resume.label_key(folder, query, limits, annotate.collected_files(spec))
    stored = store.label(stored_as)
    if stored is None:
        started = time.monotonic()
        stored = annotate.label_query(spec, query, folder, limits, hidden, key, warm)
        store.put_label(stored_as, *stored, about(query, started))
    gold, discard = stored
    if discard is None:
        discard = verify(query, spec, gold, limits, hidden, rel_tol, key, store, root, warm)
    return gold, discard


@task(name="verify", task_run_name="verify {query.task_id} {query.scope}", cache_policy=NO_CACHE)
def verify(query: drawing.Query, spec, gold, limits, hidden, rel_tol: float, key: str,
           store: resume.ResumeStore, root: Path, warm: tuple[str, ...] | None = None):
    """Stage 4: re-run the annotator in a fresh sandbox and check gold against targets.

    A kept query's re-run is written to its verify-run folder, from the store when it had it.
    """
    folder = task_dir(root / BENCHMARK, query.task_id)
    run = verify_run_dir(folder / "private", query.query_id)
    stored_as = resume.verify_key(resume.label_key(folder, query, limits,
                                                   annotate.collected_files(spec)), gold, rel_tol)
    found, discard = store.verification(stored_as, run)
    if found:
        return discard
    started = time.monotonic()
    discard = annotate.verify_query(spec, query, gold, folder, limits, hidden, rel_tol, key, warm)
    store.put_verification(stored_as, discard, about(query, started), run)
    return discard


def about(query: drawing.Query, started: float) -> dict:
    """What the resume store records beside a result: the query and the seconds it took."""
    return {"task_id": query.task_id, "scope": query.scope, "query_id": query.query_id,
            "seconds": round(time.monotonic() - started, 2)}


def draw(catalog_task: CatalogTask, limit: int):
    """Resolve a task's scopes against its repository into rendered queries."""
    repository = REPOSITORIES / catalog_task.spec.data.repository
    key = read_manifest(repository)["entity_key"]
    scopes = load_scopes(CATALOG / catalog_task.spec.domain)
    return drawing.draw_queries(catalog_task, scopes, read_table(repository, "entities"), key,
                                drawing.repository_span(repository), limit)


def data_provenance(domains: list[str]) -> dict:
    """Per domain: each source's provenance and whether real and synthetic sources are mixed."""
    out = {}
    for domain in domains:
        manifest = read_manifest(REPOSITORIES / domain)
        out[domain] = {"sources": {name: entry.get("provenance")
                                   for name, entry in sorted(manifest["sources"].items())},
                       **provenance_summary(manifest)}
    return out


def entity_key(catalog_task: CatalogTask) -> str:
    """The entity key of the task's repository."""
    return read_manifest(REPOSITORIES / catalog_task.spec.data.repository)["entity_key"]


def _next_batch(candidates: dict[str, list], verified: dict[str, list], tried: dict[str, int],
                wanted: dict[str, int]) -> dict[str, list]:
    """Per task still short of its `wanted` verified queries, its next untried candidates (in scope order)."""
    batch = {}
    for task_id, pool in candidates.items():
        need = wanted[task_id] - len(verified[task_id])
        if need > 0 and tried[task_id] < len(pool):
            batch[task_id] = pool[tried[task_id]:tried[task_id] + need]
            tried[task_id] += len(batch[task_id])
    return batch


def _round(batch: dict[str, list], started: set, by_id: dict, keys: dict, settings, limits, hidden,
           golds: dict, verified: dict[str, list], store: resume.ResumeStore, root: Path,
           warm: tuple[str, ...] | None = None) -> list:
    """One round, the four stages pipelined; fills `golds` and `verified`, returns the discards.

    A staged query no gold could keep (`stages.construction.screening`) is discarded before its
    annotator runs.

    The flow aligns one task after another (in this process, one task's tables in memory at a
    time) while the task runner labels and verifies the queries of those already aligned,
    `concurrency` sandboxed annotator runs at a time (or one per Dask worker thread): both cores
    work. Results are taken in each task's query order, whatever order the runs finish in.
    """
    discards, labelled = [], []
    for task_id, queries in batch.items():
        staged, unstaged = align(by_id[task_id], keys[task_id], queries, store, fresh=task_id not in started)
        staged, screened = screening.screen(by_id[task_id].spec, staged, task_dir(root / BENCHMARK, task_id))
        discards += unstaged + screened
        labelled += [(query, label.submit(query, by_id[task_id].spec, limits, hidden, keys[task_id],
                                          settings.verify_rel_tol, store, root, warm)) for query in staged]
    for query, future in labelled:
        gold, discard = future.result()
        if discard is None or discard.stage != "label":
            golds[query.query_id] = gold
        if discard is None:
            verified[query.task_id].append(query)
        else:
            discards.append(discard)
    return discards


@flow(name="construct", flow_run_name="construct {profile} benchmark")
def build_benchmark(profile: str, settings: ConstructParams) -> str:
    """Build processed/benchmark from the catalog at the given profile's scale (params.yaml `construct`)."""
    debris.start_harness()  # after Prefect's own SIGTERM handler: ours cleans up, then calls it
    limits = settings.limits.to_limits()
    root = Path.cwd().resolve()  # what the label tasks are given: they may run in another folder
    hidden = [root]
    store = resume.ResumeStore(root / settings.resume_dir if settings.resume_dir else None)
    # the modules every annotator script imports, preloaded by the warm interpreters (None: cold runs)
    warm = imports_of([CATALOG]) if settings.warm else None
    tasks = load_catalog(CATALOG, settings.domains)
    if settings.tasks:
        unknown = sorted(set(settings.tasks) - {t.spec.id for t in tasks})
        if unknown:
            raise ValueError(f"params.yaml construct.tasks names unknown tasks {unknown}")
        tasks = [t for t in tasks if t.spec.id in settings.tasks]
    by_id = {t.spec.id: t for t in tasks}
    shutil.rmtree(BENCHMARK, ignore_errors=True)
    # A hypothesis task needs enough queries for the constant-answer gate to be measurable (one
    # constant always matches 1 of 2 queries, 50 %): at least `hypothesis_min_queries`.
    wanted = {t.spec.id: max(settings.queries_per_task[profile],
                             settings.hypothesis_min_queries if t.spec.answer.hypothesis else 0)
              for t in tasks}
    candidates, discards, keys = {}, [], {}
    for catalog_task in tasks:
        task_id = catalog_task.spec.id
        drawn_all, formalize = draw(catalog_task, len(catalog_task.spec.scopes))
        candidates[task_id], duplicates = drawing.drop_near_duplicates(drawn_all, settings.max_jaccard)
        discards += formalize + duplicates
        keys[task_id] = entity_key(catalog_task)
    # Rounds: each task short of `wanted` verified queries tries its next candidates, until it has
    # them or its scopes run out (a query discarded at align, label or verify is replaced).
    verified: dict[str, list] = {t: [] for t in by_id}
    golds, tried, started = {}, dict.fromkeys(by_id, 0), set()
    while batch := _next_batch(candidates, verified, tried, wanted):
        discards += _round(batch, started, by_id, keys, settings, limits, hidden, golds, verified, store, root,
                           warm)
        started.update(batch)
    for task_id, pool in candidates.items():
        discards += [drawing.Discard(task_id, q.scope, "formalize",
                                     f"query pool is full ({wanted[task_id]} queries per task)")
                     for q in pool[tried[task_id]:]]
    drawn = {task_id: tried[task_id] for task_id in by_id}
    bench_id, report = finalize_benchmark(BENCHMARK, drawn, verified, golds, discards,
                                          settings.split.for_profile(profile),
                                          data_provenance(settings.domains))
    publish("the artifact 'verification'", create_markdown_artifact, key="verification",
            markdown=verification_markdown(report), description="Queries drawn, verified and discarded per task")
    return bench_id


def main() -> None:
    """DVC entry point."""
    params = load_params()
    runner = task_runner(params.construct.dask_address, params.construct.concurrency)
    with prefect_api():
        try:
            bench_id = run_flow(build_benchmark.with_options(task_runner=runner), params.profile, params.construct)
        finally:
            close_all()  # this process's warm sandboxes
        print(f"construct: benchmark {bench_id} written to {BENCHMARK}")


if __name__ == "__main__":
    main()
