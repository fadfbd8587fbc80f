"""End to end: the whole DAG on the tiny profile, in a temporary copy of the project.

The copy holds the checkout's tracked files only (scibench_testing/project.py says why); flow runs
report to a local Prefect server started so that it cannot lose its port to another process
(scibench_testing/prefect_server.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pandas as pd
import pytest
import yaml
from scibench_testing.prefect_server import start_prefect_server
from scibench_testing.processes import descendants, survivors
from scibench_testing.project import ROOT, TINY_TASKS, edit_params, offline_env, run, tiny_project

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None,
                                reason="bubblewrap (bwrap) is not installed: the sandbox needs it")


@pytest.fixture(scope="module")
def listener():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    yield server.getsockname()[1]
    server.close()


@pytest.fixture(scope="module")
def prefect_ui(tmp_path_factory):
    """A local Prefect server with its UI, as `make ui` starts it."""
    home = tmp_path_factory.mktemp("prefect-ui")
    server = start_prefect_server(offline_env(home), home)
    yield {"url": server.url, "port": server.port}
    server.stop()


@pytest.fixture(scope="module")
def built(tmp_path_factory, listener, prefect_ui):
    project = tmp_path_factory.mktemp("scibench") / "project"
    snoop = {"kind": "command", "options": {
        "cmd": f"python {{agent_dir}}/snoop.py {{workspace}} {project} {listener}",
        "agent_dir": str(project / "tests/data/agents/snoop")}}
    tiny_project(project, agents={"snoop": snoop})
    env = offline_env(project.parent) | {"PREFECT_API_URL": f"{prefect_ui['url']}/api"}
    first = run(["dvc", "repro"], project, env)
    second = run(["dvc", "repro"], project, env)
    snooped = run([sys.executable, "-m", "flows.evaluate", "snoop"], project, env)
    return {"project": project, "first": first, "second": second, "snoop": snooped, "env": env}


def metrics(project: Path, agent: str) -> dict:
    return json.loads((project / "processed/metrics" / f"{agent}.json").read_text())


def test_reference_agents_score_as_expected(built):
    project = built["project"]
    assert metrics(project, "oracle")["score"] >= 99.0
    assert metrics(project, "defensive")["score"] == 0.0
    assert metrics(project, "nodata")["score"] <= 5.0


def test_the_validity_gates_hold_for_every_task(built):
    """oracle >= 99, fabricate/nodata/defensive <= 2, each reference-model agent <= 40, per task."""
    report = json.loads((built["project"] / "processed/reports/validity.json").read_text())
    summary = json.loads((built["project"] / "processed/metrics/validity.json").read_text())
    assert summary["passed"] is True and summary["overall"]["oracle"] >= 99.0
    assert report["passed"] and report["failures"] == []
    assert len(report["tasks"]) == len(TINY_TASKS)
    for task_id, entry in report["tasks"].items():
        scores = entry["scores"]
        assert scores["oracle"] >= 99.0, task_id
        assert max(scores[a] or 0.0 for a in ("fabricate", "nodata", "defensive")) <= 2.0, task_id
        references = ("climatology", "linear_forcing", "interpolate", "region_partition",
                      "mean_flow_split")
        assert max(scores[a] or 0.0 for a in references) <= 40.0, task_id
    assert report["overall"]["fabricate"] == 0.0
    rates = report["hypotheses"]["exact_match_percent"]
    assert rates["nodata"] <= 5.0 and rates["prior"] <= 10.0
    assert rates["heuristic"] > max(rates["nodata"], rates["prior"])
    assert report["tasks"]["gridcells-ndvi-precipitation"]["hypothesis"] == {"format": "number",
                                                                            "chance_level": None}
    assert report["provenance"]["camels"]["origins"] == {"camels_us": "synthetic",
                                                         "imagery": "synthetic"}
    spread = report["tasks"]["camels-aridity-runoff"]["gold_spread"]
    assert spread["best_constant_share"] <= 0.34
    record = json.loads((built["project"] / "processed/benchmark/benchmark.json").read_text())
    sources = record["data"]["camels"]["sources"]
    assert {name: entry["origin"] for name, entry in sources.items()} == {
        "camels_us": "synthetic", "imagery": "synthetic"}
    assert sources["camels_us"]["params"]["n_basins"] == 25 and record["data"]["camels"]["mixed"] is False


def test_a_graded_task_scores_what_the_harness_recomputed(built):
    """The oracle's reported estimates differ from the recomputed test values; scores use the latter."""
    project = built["project"]
    private = project / "processed/benchmark/tasks/camels-streamflow-prediction/private"
    records = json.loads((private / "queries.json").read_text())
    assert any(r["reported"]["metrics"]["nse"] != r["gold"]["metrics"]["nse"] for r in records.values())
    journal = [json.loads(line) for line in
               (project / "processed/runs/oracle/journal.jsonl").read_text().splitlines()]
    hypotheses = ("camels-aridity-runoff", "gridcells-ndvi-precipitation")
    graded = [r for r in journal if r["task_id"] not in hypotheses]
    assert graded and all(r["artifact_sha256"] for r in graded)
    for record in graded:
        assert (project / "processed/runs/oracle/artifacts" / record["artifact_sha256"]).is_file()
    # the multimodal task's checkpoints are kept the same way (they attribute errors, never score)
    multimodal = [r for r in journal if r["task_id"] == "gridcells-ndvi-precipitation"]
    assert multimodal and all(sorted(r["checkpoints"]) == ["aligned.parquet", "features.parquet"]
                              for r in multimodal)
    for record in multimodal:
        for sha in record["checkpoints"].values():
            assert (project / "processed/runs/oracle/artifacts" / sha).is_file()


def test_the_oracle_is_graded_on_the_verify_runs_kept_at_construction(built):
    """Every kept query keeps its verify run; the oracle's records grade those, byte for byte."""
    project = built["project"]
    benchmark = project / "processed/benchmark"
    queries = pd.read_parquet(benchmark / "queries.parquet")
    kept = {row.query_id: benchmark / "tasks" / row.task_id / "private" / row.query_id / "verify_run"
            for row in queries.itertuples()}
    assert all((folder / "run.json").is_file() for folder in kept.values())
    journal = [json.loads(line) for line in
               (project / "processed/runs/oracle/journal.jsonl").read_text().splitlines()]
    assert journal and all(r["reused_from"] == "verify run at construction" for r in journal)
    for record in journal:
        run = json.loads((kept[record["query_id"]] / "run.json").read_text())
        assert record["answer_text"] == run["answer_text"]
        if record["artifact_sha256"]:
            artifact = project / "processed/runs/oracle/artifacts" / record["artifact_sha256"]
            assert record["artifact_sha256"] in {f["sha256"] for f in run["files"].values()}
            assert artifact.read_bytes() in {p.read_bytes() for p in (kept[record["query_id"]] / "files").iterdir()}


def test_every_task_keeps_three_test_queries(built):
    queries = pd.read_parquet(built["project"] / "processed/benchmark/queries.parquet")
    tests = queries[queries["split"] == "test"].groupby("task_id").size()
    assert len(tests) >= 4
    assert (tests >= 3).all()


def test_the_warm_golds_are_those_of_cold_runs(built):
    """The build ran its annotators warm (construct.warm); run cold, every task's first query labels the same."""
    out = built["project"] / "coldcheck.json"
    run([sys.executable, "-m", "stages.construction.coldcheck", "--out", str(out)], built["project"], built["env"])
    summary = json.loads(out.read_text())
    assert (summary["tasks"], summary["identical"], summary["differ"]) == (len(TINY_TASKS), len(TINY_TASKS), {})


def test_second_repro_runs_nothing(built):
    assert "Running stage" not in built["second"]


def test_metrics_record_the_benchmark_version(built):
    project = built["project"]
    version = metrics(project, "oracle")["version"]
    bench = json.loads((project / "processed/benchmark/benchmark.json").read_text())
    assert version["benchmark_id"] == bench["benchmark_id"]
    assert version["dvc_lock"] is not None
    assert version["model"] == {"configured": None, "reported": []}
    assert version["packages"]["scibench"] == "0.1.0"
    assert version["git"] == "unversioned"  # the test's copy of the project is not a git checkout


def test_no_gold_citation_or_private_path_reaches_an_agent(built):
    benchmark = built["project"] / "processed/benchmark"
    queries = pd.read_parquet(benchmark / "queries.parquet")
    public_text = [p.read_text() for p in benchmark.glob("tasks/*/public/*/README.md")]
    assert len(public_text) == len(queries)
    assert not list(benchmark.glob("tasks/*/public/*/truth*"))
    secrets = ["private", str(benchmark)]
    for private in benchmark.glob("tasks/*/private"):
        spec = yaml.safe_load((private / "task.yaml").read_text())
        secrets += [spec["source"]["citation"], spec["source"].get("doi") or spec["source"]["citation"]]
        for entry in json.loads((private / "queries.json").read_text()).values():
            if entry["scope_citation"]:
                secrets.append(entry["scope_citation"])
            for value in _numbers(entry["gold"]):
                if value != round(value):
                    secrets += [repr(value), f"{value:.4f}"]
    for text in list(queries["prompt"]) + public_text:
        for secret in secrets:
            assert secret not in text, f"{secret!r} reached a prompt or public file"
    # Files in their own formats (a NetCDF grid, GeoTIFF layers) carry no path of the build and no
    # citation in their attributes or tags either.
    native = [p for p in benchmark.glob("tasks/*/public/*/**/*")
              if p.is_file() and p.suffix in (".nc", ".tif", ".sdf", ".h5")]
    assert native, "the tiny build stages a multimodal task"
    for path in native:
        data = path.read_bytes()
        for secret in [str(built["project"]), "raw/synthetic", *secrets[2:]]:
            if not secret.replace(".", "").lstrip("-").isdigit():
                assert secret.encode() not in data, f"{secret!r} reached {path.relative_to(benchmark)}"
    # The release's card must credit the data products its values come from (CAMELS' terms ask for
    # both papers); a task that adapts a data product's own paper shares that citation, and the card
    # never says which task it is. Every other secret stays out of the card.
    products = " ".join(str(source.get("citation")) + str(source.get("stands_in_for"))
                        for manifest in (built["project"] / "processed/repositories").glob("*/manifest.json")
                        for source in json.loads(manifest.read_text())["sources"].values())
    release = built["project"] / "processed/release"
    for text in [(release / "croissant.json").read_text(), (release / "DATASHEET.md").read_text()]:
        for secret in secrets:
            assert secret not in text or secret in products, f"{secret!r} reached the release's card"


def _numbers(value):
    if isinstance(value, dict):
        for item in value.values():
            yield from _numbers(item)
    elif isinstance(value, list):
        for item in value:
            yield from _numbers(item)
    elif isinstance(value, float):
        yield value


def test_hostile_agent_is_contained_and_the_run_goes_on(built):
    project = built["project"]
    records = [json.loads(line) for line in
               (project / "processed/runs/snoop/journal.jsonl").read_text().splitlines()]
    test_queries = pd.read_parquet(project / "processed/benchmark/queries.parquet").query(
        "split == 'test'")
    assert sorted(r["query_id"] for r in records) == sorted(test_queries["query_id"])
    for record in records:
        report = json.loads(re.search(r"SNOOP (\{.*\})", record["stdout"]).group(1))
        assert report == {"private_files_visible": 0, "project": "FileNotFoundError",
                          "socket": report["socket"]}
        assert report["socket"] in {"ConnectionRefusedError", "OSError", "TimeoutError"}
        assert record["exit_code"] == 0


def test_make_run_does_not_report_to_a_server_this_checkout_did_not_start(prefect_ui, tmp_path):
    env = {key: value for key, value in os.environ.items() if key != "PREFECT_API_URL"}
    printed = subprocess.run(["make", "-s", "-C", str(ROOT), "api-url", f"UI_PORT={prefect_ui['port']}",
                              f"CACHE={tmp_path}"], env=env, capture_output=True, text=True, check=True).stdout
    assert printed == "\n"  # this checkout's own server is started by `make ui` (tests/flows/test_ui.py)


def test_flow_runs_are_watchable_in_the_prefect_ui(built, prefect_ui):
    request = urllib.request.Request(f"{prefect_ui['url']}/api/flow_runs/filter", data=b"{}",
                                     headers={"Content-Type": "application/json"})
    runs = json.loads(urllib.request.urlopen(request, timeout=10).read())
    states = {run["name"]: run["state_type"] for run in runs}
    for name in ("construct tiny benchmark", "evaluate oracle on test",
                 "evaluate nodata on test", "evaluate defensive on test", "evaluate snoop on test"):
        assert states.get(name) == "COMPLETED", (name, states)
    ids = {run["name"]: run["id"] for run in runs}
    request = urllib.request.Request(f"{prefect_ui['url']}/api/artifacts/filter", data=b"{}",
                                     headers={"Content-Type": "application/json"})
    artifacts = json.loads(urllib.request.urlopen(request, timeout=10).read())
    run_tables = {artifact["key"]: artifact["flow_run_id"] for artifact in artifacts if artifact["type"] == "table"}
    assert run_tables.get("evaluate-oracle-test") == ids["evaluate oracle on test"], run_tables
    if shutil.which("chromium") is None:
        pytest.skip("chromium is not installed: the rendered UI page was not checked")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        for name, task_run in (("construct tiny benchmark", "extract camels-"),
                               ("evaluate oracle on test", "oracle on camels-")):
            page.goto(f"{prefect_ui['url']}/runs/flow-run/{ids[name]}")
            page.get_by_text(name).first.wait_for(timeout=30_000)
            page.get_by_text(task_run).first.wait_for(timeout=30_000)
            page.screenshot(path=str(built["project"].parent / f"{name.replace(' ', '-')}.png"))
        page.goto(f"{prefect_ui['url']}/runs/flow-run/{ids['evaluate oracle on test']}")
        page.get_by_text("Artifacts", exact=True).first.click(timeout=30_000)
        page.get_by_text("evaluate-oracle-test").first.wait_for(timeout=30_000)
        page.screenshot(path=str(built["project"].parent / "evaluate-oracle-artifacts.png"))
        browser.close()


def test_a_killed_evaluation_resumes_without_loss_or_duplicates(built):
    """Kill the run once exactly the quick queries are journaled; resume with a short wall clock.

    `blocker` answers a query at once when its prompt names one of the given tasks and blocks
    otherwise, so the run can never finish before the kill and the journal holds exactly the
    quick queries when it comes. The wall-clock limit is not part of the journal key, so the
    resumed run skips exactly those and ends the blocked ones as timeouts.
    """
    project, env = built["project"], built["env"]
    train = pd.read_parquet(project / "processed/benchmark/queries.parquet").query("split == 'train'")
    tasks = sorted(train["task_id"].unique())
    words = tasks[: len(tasks) // 2]
    quick = sorted(train[train["prompt"].map(lambda text: any(w in text for w in words))]["query_id"])
    blocked = sorted(set(train["query_id"]) - set(quick))
    assert quick and blocked, (words, quick, blocked)
    blocker = {"kind": "command", "options": {
        "cmd": f"python {{agent_dir}}/blocker.py {{workspace}} {' '.join(words)}",
        "agent_dir": str(project / "tests/data/agents/blocker")}}
    journal = project / "processed/runs/blocker/journal.jsonl"
    command = [sys.executable, "-m", "flows.evaluate", "blocker", "--split", "train"]
    params = edit_params(project, {"agents": {"blocker": blocker}, "evaluate": {"concurrency": len(train)}})
    try:
        with open(project.parent / "blocker-killed.log", "w") as log:
            killed = subprocess.Popen(command, cwd=project, env=env, stdout=log, stderr=subprocess.STDOUT,
                                      start_new_session=True)
        try:
            wait_for_records(journal, quick, killed)
        finally:
            family = descendants(killed.pid)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(killed.pid, signal.SIGKILL)
            killed.wait()
            survivors(family)  # none should outlive the kill (test_crash_safety checks); never leave one
        survived = journal.read_text().splitlines()
        assert sorted(json.loads(line)["query_id"] for line in survived) == quick
        with open(journal, "a") as handle:  # a write cut short by the kill
            handle.write(survived[-1][:50])
        edit_params(project, {"evaluate": {"limits": {"wall_seconds": 3}}})
        resumed = run(command, project, env)
    finally:
        (project / "params.yaml").write_text(params)
    assert (f"evaluate@blocker on train: {len(train)} queries, ran {len(blocked)}, {len(quick)} already in the "
            "journal; limits hit {'wall': " f"{len(blocked)}}}") in resumed
    after = journal.read_text().splitlines()
    assert after[: len(survived)] == survived
    records = [json.loads(line) for line in after]
    assert sorted(r["query_id"] for r in records) == sorted(train["query_id"])  # none lost, none twice
    assert sorted(r["query_id"] for r in records if r["timed_out"]) == blocked


def wait_for_records(journal: Path, expected: list[str], process: subprocess.Popen) -> None:
    """Wait until the journal holds exactly the records of `expected` (the run cannot get further)."""
    deadline = time.monotonic() + 300
    found: list[str] = []
    while time.monotonic() < deadline and process.poll() is None:
        lines = journal.read_text().splitlines() if journal.exists() else []
        if all(line.endswith("}") for line in lines):
            found = sorted(json.loads(line)["query_id"] for line in lines)
            if found == expected:
                return
        time.sleep(0.2)
    pytest.fail(f"the journal holds {found}, not {expected}; exit code {process.poll()}")


def test_scoring_again_gives_byte_identical_metrics(built):
    project, env = built["project"], built["env"]
    files = [project / "processed/metrics/oracle.json", project / "processed/metrics/oracle.tasks.json"]
    before = [path.read_bytes() for path in files]
    run([sys.executable, "-m", "stages.scoring.score", "oracle"], project, env)
    assert [path.read_bytes() for path in files] == before
    tasks = json.loads(files[1].read_text())["tasks"]
    assert all(entry["score"] == 100.0 for entry in tasks.values())


def test_the_release_holds_the_public_files_only_and_a_valid_croissant_file(built):
    import mlcroissant as mlc

    benchmark, release = built["project"] / "processed/benchmark", built["project"] / "processed/release"
    queries = pd.read_parquet(benchmark / "queries.parquet")
    public = {"workspaces/" + "/".join(p.parts[p.parts.index("public") + 1:])
              for p in benchmark.glob("tasks/*/public/*/**/*") if p.is_file()}
    shipped = {str(p.relative_to(release)) for p in release.rglob("*") if p.is_file()}
    assert shipped == public | {"queries.parquet", "croissant.json", "DATASHEET.md"}
    assert len({path.split("/")[1] for path in public}) == len(queries)
    dataset = mlc.Dataset(jsonld=release / "croissant.json")
    assert dataset.metadata.ctx.issues.errors == set()
    records = list(dataset.records("queries"))
    assert sorted(r["queries/query_id"].decode() for r in records) == sorted(queries["query_id"])
    document = json.loads((release / "croissant.json").read_text())
    assert document["conformsTo"] == "http://mlcommons.org/croissant/1.0"
    for field in ("rai:dataCollection", "rai:dataLimitations", "rai:dataBiases", "rai:dataUseCases",
                  "rai:personalSensitiveInformation", "rai:dataReleaseMaintenancePlan",
                  "rai:dataAnnotationProtocol"):
        assert document[field], field
    verification = json.loads((benchmark / "verification.json").read_text())
    sheet = (release / "DATASHEET.md").read_text()
    assert f"{verification['queries_drawn']} queries drawn from the tasks' scopes and " \
           f"{verification['queries_verified']} kept" in sheet
    assert f"{len(queries)} queries" in sheet


def test_the_card_is_rebuilt_byte_identical(built):
    project, env = built["project"], built["env"]
    files = [project / "processed/release/croissant.json", project / "processed/release/DATASHEET.md"]
    before = [path.read_bytes() for path in files]
    run([sys.executable, "-m", "stages.card"], project, env)
    assert [path.read_bytes() for path in files] == before


def test_both_protocols_run_end_to_end_on_tiny(built):
    """Offline, the protocol's stages skipped and the report says why; with a (scripted) model,
    `dvc repro compare_systems` learns per task and per category, runs the systems on test and
    compares them with the one-turn baseline. Last: it changes the project's params."""
    from scibench_testing.llm_tasks import API_KEY, KEY_ENV, llm_options
    from scibench_testing.optimize import PLAN_THEN_PROGRAM, team_model

    from stages.evaluation.agents.llm.scripted import ScriptedLLM

    project, env = built["project"], built["env"]
    offline = json.loads((project / "processed/metrics/compare_systems.json").read_text())
    assert offline["skipped"].startswith("no LLM endpoint configured")
    assert "Not run: no LLM endpoint configured" in (project / "processed/reports/index.html").read_text()
    runs = ["one_turn", "oneshot-task", "oneshot-category"]  # every method's search: tests/optimize/methods
    hand_in_nothing = 'import json\njson.dump({}, open("work/answer.json", "w"))\n'
    with ScriptedLLM(team_model([PLAN_THEN_PROGRAM], lambda task: hand_in_nothing)) as llm:
        access = {key: value for key, value in llm_options(llm.base_url).items() if key != "strategy"}
        edit_params(project, {"optimize": {"model": access, "runs": runs,
                                           "budgets": {"oneshot": {"rounds": 1, "val_queries": 1}}}})
        run(["dvc", "repro", "compare_systems"], project, env | {KEY_ENV: API_KEY})
    compared = json.loads((project / "processed/metrics/compare_systems.json").read_text())
    assert "skipped" not in compared and sorted(compared["versus_baseline"]) == sorted(runs)
    assert compared["generalizability"][0]["task_trained"] == "oneshot-task"
    per_task = json.loads((project / "processed/optimize/oneshot-task/summary.json").read_text())
    per_category = json.loads((project / "processed/optimize/oneshot-category/summary.json").read_text())
    specs = {task: yaml.safe_load(next(project.glob(f"catalog/*/{task}/task.yaml")).read_text()) for task in TINY_TASKS}
    assert sorted(per_task["units"]) == sorted(TINY_TASKS)
    assert sorted(per_category["units"]) == sorted({spec["category"] for spec in specs.values()})
    assert compared["search_cost"]["oneshot-category"]["designer_calls"] == len(per_category["units"])
    index = json.loads((project / "processed/optimize/oneshot-category/index.json").read_text())
    assert index == {task: f"workflows/{spec['category']}.yaml" for task, spec in specs.items()}
    tested = pd.read_parquet(project / "processed/scores/oneshot-task.parquet")
    queries = pd.read_parquet(project / "processed/benchmark/queries.parquet")
    assert sorted(tested["query_id"]) == sorted(queries.loc[queries["split"] == "test", "query_id"])
