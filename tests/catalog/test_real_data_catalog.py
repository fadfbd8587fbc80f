"""The real-data path: with real downloads in place of the synthetic files, the same catalog builds.

Each domain's main source is ingested from the real samples (`../shared/realdata`), aligned with the
tiny synthetic imagery exactly as `ingest@<source>` and `align@<domain>` do, and then every task of
the domain extracts its tables and columns from that repository (a task that used a column only the
generator writes would fail here) and draws its queries. The samples are small (4 CAMELS basins
over 2000-2002, 3 FLUXNET-CH4 sites' daily files, CY-Bench maize and wheat in the Netherlands with a
48-row meteo excerpt), so most scopes are discarded with their reason, as a real build reports; the
CAMELS and methane samples are large enough to label and reproduce queries end to end (CAMELS
golds also clear their targets).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from scibench_testing.annotators import CATALOG
from scibench_testing.domains import TINY_IMAGERY, synthesize_and_ingest
from scibench_testing.realdata import realdata

from stages.align import align
from stages.catalog import load_catalog, load_scopes
from stages.construction import annotate, drawing, staging
from stages.ingest import ingest
from stages.params import load_params
from stages.repository import read_manifest, read_table

# domain -> (source, real sample folder, reader params)
REAL = {
    "camels": ("camels_us", "camels_us", {"forcing": "daymet"}),
    "methanewet": ("fluxnet_ch4", "fluxnet_ch4", {}),
    "cropbench": ("crops", "cybench", {}),
}
# The samples hold no FLUXNET-CH4 half-hourly file: the half-hourly tasks need a real download.
NEEDS_HALFHOURLY = "halfhourly"


@pytest.fixture(scope="module")
def imagery(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("imagery")
    synthesize_and_ingest("imagery", TINY_IMAGERY, root)
    return root / "sources"


def has_halfhourly(repository: Path) -> bool:
    return read_manifest(repository)["tables"].get(NEEDS_HALFHOURLY, {}).get("rows", 0) > 0


def real_repository(domain: str, imagery: Path, root: Path) -> Path:
    source, folder, reader_params = REAL[domain]
    sources = root / "sources"
    ingest(source, realdata(folder), reader_params, sources / source)
    (sources / "imagery").symlink_to(imagery / "imagery")
    align(domain, [source, "imagery"], sources, root / "repository")
    return root / "repository"


@pytest.mark.parametrize("domain", sorted(REAL))
def test_every_task_extracts_and_draws_from_the_real_repository(domain, imagery, tmp_path):

    repository = real_repository(domain, imagery, tmp_path)
    assert read_manifest(repository)["provenance"]["origins"][REAL[domain][0]] == "real"
    key = read_manifest(repository)["entity_key"]
    dates = read_table(repository, "timeseries", ["date"])["date"]
    entities = read_table(repository, "entities")
    scopes = load_scopes(CATALOG / domain)
    drawn = {}
    for task in load_catalog(CATALOG, [domain]):
        if NEEDS_HALFHOURLY in task.spec.data.tables and not has_halfhourly(repository):
            continue
        drawing.extract_tables(task, repository)  # raises naming the missing table or columns
        queries, discards = drawing.draw_queries(task, scopes, entities, key, (dates.min(), dates.max()), 20)
        assert len(queries) + len(discards) == len(task.spec.scopes)
        assert all(d.reason for d in discards)
        drawn[task.spec.id] = queries
    assert drawn


MISSED_TARGETS = "gold misses the task's own targets"


@pytest.mark.parametrize(("domain", "must_verify"), [("camels", True), ("methanewet", False)])
def test_real_queries_label_and_verify_end_to_end(domain, must_verify, imagery, tmp_path):
    """Annotators label real queries and reproduce in a fresh sandbox.

    On the 4 real CAMELS basins a gold also clears its targets. On the 3 real methane sites the
    daily gold methods do not beat every standard model (marginal distribution sampling and
    persistence fill a 3-site record as well), so a reproduced gold that misses its targets is
    discarded with that reason, as a real build reports it; a crash or a failed reproduction is not.
    """
    repository = real_repository(domain, imagery, tmp_path)
    key = read_manifest(repository)["entity_key"]
    dates = read_table(repository, "timeseries", ["date"])["date"]
    entities = read_table(repository, "entities")
    scopes = load_scopes(CATALOG / domain)
    limits, hidden = load_params().construct.limits.to_limits(), [Path.cwd().resolve()]
    reproduced, verified, reasons = [], [], []
    for task in load_catalog(CATALOG, [domain]):
        if NEEDS_HALFHOURLY in task.spec.data.tables or len(reproduced) >= 2:
            continue
        queries, _ = drawing.draw_queries(task, scopes, entities, key, (dates.min(), dates.max()), 1)
        if not queries:
            continue
        folder = tmp_path / "benchmark" / task.spec.id
        staging.stage_task(task, folder)
        staging.stage_query(task, drawing.extract_tables(task, repository), key, queries[0], folder)
        label, discard = annotate.label_query(task.spec, queries[0], folder, limits, hidden, key)
        if discard is None:
            discard = annotate.verify_query(task.spec, queries[0], label, folder, limits, hidden, 1e-6, key)
            if discard is None or discard.reason.startswith(MISSED_TARGETS):
                reproduced.append(task.spec.id)
        if discard is None:
            verified.append(task.spec.id)
        else:
            reasons.append(f"{task.spec.id} [{discard.stage}]: {discard.reason[:200]}")
    assert reproduced, f"no {domain} task labels and reproduces a query on the real samples: {reasons}"
    if must_verify:
        assert verified, f"no {domain} task verifies a query on the real samples: {reasons}"
