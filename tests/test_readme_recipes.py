"""The README's three recipes (add a task, a source, an agent), followed literally against the code."""

from __future__ import annotations

import ast
import re
import shutil
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
import yaml
from pydantic import BaseModel, ConfigDict

from stages.catalog import CatalogError, load_catalog
from stages.domains import ALIGNERS
from stages.evaluation.agents import AGENTS, QueryContext
from stages.evaluation.agents.identity import setup_agent
from stages.evaluation.program import AgentProgram
from stages.ingest import ingest
from stages.params import AgentParams, ParamsError, load_params
from stages.provenance import write_synthetic_record
from stages.sources import SOURCES
from stages.synthesize import SYNTHESIZERS
from stages.tables import Table, quarantine_table

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def recipe(title: str) -> str:
    """The README's text under `### <title>`, up to the next heading."""
    match = re.search(rf"^### {re.escape(title)}\n(.*?)(?=^##)", README, re.DOTALL | re.MULTILINE)
    assert match, title
    return match.group(1)


def top_level_names(path: Path) -> set[str]:
    """Names a module defines or imports at its top level."""
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def project_params(tmp_path: Path, change) -> Path:
    """params.yaml with `change(raw)` applied, written to `tmp_path`."""
    raw = yaml.safe_load((ROOT / "params.yaml").read_text())
    change(raw)
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


# --- Add a task ---------------------------------------------------------------------------------

@pytest.fixture
def copied_task(tmp_path):
    """The recipe's `cp -r` run in a copy of the template's domain; returns (catalog, domain, old id, new id)."""
    source, target = re.search(r"^cp -r (\S+) (\S+)$", recipe("Add a task"), re.MULTILINE).groups()
    _, domain, old_id = Path(source).parts
    new_id = Path(target).name
    catalog = tmp_path / "catalog"
    shutil.copytree(ROOT / "catalog" / domain, catalog / domain)
    shutil.copytree(ROOT / "catalog" / "annotator_common", catalog / "annotator_common")
    shutil.copytree(tmp_path / source, tmp_path / target)
    return catalog, domain, old_id, new_id


def set_id(folder: Path, task_id: str) -> None:
    """Step 1: `id: <folder name>` in task.yaml."""
    spec = folder / "task.yaml"
    spec.write_text(re.sub(r"^id: .*$", f"id: {task_id}", spec.read_text(), count=1, flags=re.MULTILINE))


def test_a_copied_task_fails_to_load_until_its_id_is_its_folder_name(copied_task):
    catalog, domain, old_id, new_id = copied_task
    with pytest.raises(CatalogError, match=f"id '{old_id}' differs from its folder name '{new_id}'"):
        load_catalog(catalog, [domain])
    set_id(catalog / domain / new_id, new_id)
    tasks = {t.spec.id: t for t in load_catalog(catalog, [domain])}
    template_ids = {p.name for p in (ROOT / "catalog" / domain).iterdir() if (p / "task.yaml").exists()}
    assert set(tasks) == template_ids | {new_id}
    new, old = tasks[new_id], tasks[old_id]
    assert new.spec.model_copy(update={"id": old_id}) == old.spec
    assert new.definition_hash != old.definition_hash  # a new task, with query ids of its own
    assert new.task_hash != old.task_hash
    assert [p.name for p in new.annotator_lib] == [p.name for p in old.annotator_lib]


def test_a_task_names_only_scopes_of_its_domain_and_the_template_lists_enough(copied_task):
    catalog, domain, _, new_id = copied_task
    folder = catalog / domain / new_id
    set_id(folder, new_id)
    task = next(t for t in load_catalog(catalog, [domain]) if t.spec.id == new_id)
    assert len(task.spec.scopes) >= 26  # the recipe's minimum (tests/catalog/test_catalog.py)
    assert len(task.reproduce.read_text().splitlines()) <= 120
    text = (folder / "task.yaml").read_text()
    (folder / "task.yaml").write_text(text.replace("scopes: [", "scopes: [no_such_scope, ", 1))
    with pytest.raises(CatalogError, match=r"unknown scopes \['no_such_scope'\]"):
        load_catalog(catalog, [domain])


def test_the_task_recipe_commands_exist():
    text = recipe("Add a task")
    domain = re.search(r"dvc repro align@(\w+)", text).group(1)
    assert domain in load_params(ROOT / "params.yaml").align
    trial = (ROOT / "stages" / "construction" / "trial.py").read_text()
    assert 'add_argument("task_id")' in trial and 'add_argument("--queries"' in trial
    assert re.search(r"python -m stages\.construction\.trial \S+ --queries \d", text)
    assert (ROOT / re.search(r"pytest ([\w/.]+)", text).group(1)).is_file()


# --- Add a source -------------------------------------------------------------------------------

@pytest.mark.parametrize("key", list(SOURCES))
def test_every_source_has_the_files_and_names_the_recipe_lists(key):
    params = load_params(ROOT / "params.yaml")
    reader = ROOT / "stages" / "sources" / key / "__init__.py"
    assert {"CITATION", "LICENSE", "Params", "read"} <= top_level_names(reader)
    assert "doi" in ast.get_docstring(ast.parse(reader.read_text())).lower() or key == "control"
    generator = ROOT / "stages" / "synthesize" / key / "__init__.py"
    assert key in SYNTHESIZERS and {"Params", "write"} <= top_level_names(generator)
    assert key in params.synthesize and set(params.synthesize[key].scales) == {"tiny", "default", "full"}
    assert params.ingest[key].raw_dir == f"raw/synthetic/{key}"
    assert (ROOT / "tests" / "sources" / key / f"test_{key}.py").is_file()
    assert (ROOT / "tests" / "synthesize" / key / f"test_{key}.py").is_file()


def test_dvc_fans_out_over_the_synthesize_and_ingest_sections():
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    assert stages["synthesize"]["foreach"] == "${synthesize}" and stages["ingest"]["foreach"] == "${ingest}"


@pytest.mark.parametrize("domain", load_params(ROOT / "params.yaml").construct.domains)
def test_every_domain_is_wired_where_the_recipe_says(domain):
    params = load_params(ROOT / "params.yaml")
    deps = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    assert domain in ALIGNERS
    assert {"ENTITY_KEY", "align"} <= top_level_names(ROOT / "stages" / "domains" / f"{domain}.py")
    assert set(params.align[domain].sources) <= set(SOURCES)
    assert (ROOT / "catalog" / domain / "scopes.yaml").is_file()
    assert f"processed/repositories/{domain}" in deps["construct"]["deps"]
    assert f"processed/repositories/{domain}/manifest.json" in deps["card"]["deps"]


class ToyWriterParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seed: int
    n_rows: int


class ToyReaderParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    on_error: str = "raise"


def toy_write(out_dir: Path, params: ToyWriterParams) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = "\n".join(f"s{i},{i * params.seed}" for i in range(params.n_rows))
    (out_dir / "values.csv").write_text(f"site_id,value\n{rows}\n")


def toy_read(raw_dir: Path, params: ToyReaderParams) -> Iterator[Table]:
    frame = pd.read_csv(raw_dir / "values.csv", dtype={"site_id": "string", "value": "float64"})
    yield Table("values", frame, ("site_id",), {"value": "1"})
    yield quarantine_table([])


@pytest.fixture
def toy_source(monkeypatch):
    """Steps 1-2 for a source `toy`: a reader and a generator module, each listed in its registry."""
    reader = types.ModuleType("stages.sources.toy")
    reader.CITATION, reader.LICENSE = "Toy, A. (2020): a data paper, doi:10.0000/toy", "CC-BY-4.0"
    reader.Params, reader.read = ToyReaderParams, toy_read
    generator = types.ModuleType("stages.synthesize.toy")
    generator.Params, generator.write = ToyWriterParams, toy_write
    monkeypatch.setitem(sys.modules, reader.__name__, reader)
    monkeypatch.setitem(sys.modules, generator.__name__, generator)
    monkeypatch.setattr(SOURCES, "names", [*SOURCES.names, "toy"])
    monkeypatch.setattr(SYNTHESIZERS, "names", [*SYNTHESIZERS.names, "toy"])
    return reader


def test_a_new_source_synthesizes_and_ingests_through_the_registries(tmp_path, toy_source):
    def add_sections(raw):
        scales = {profile: {"n_rows": 4} for profile in ("tiny", "default", "full")}
        raw["synthesize"]["toy"] = {"params": {"seed": 3}, "scales": scales}
        raw["ingest"]["toy"] = {"raw_dir": "raw/synthetic/toy", "params": {"on_error": "raise"}}

    params = load_params(project_params(tmp_path, add_sections))  # step 3
    section = params.synthesize["toy"]
    generator = SYNTHESIZERS["toy"]
    written = generator.Params(**section.params, **section.scales[params.profile])
    raw = tmp_path / params.ingest["toy"].raw_dir
    generator.write(raw, written)  # what synthesize@toy runs
    write_synthetic_record(raw, "toy", written)
    manifest = ingest("toy", raw, params.ingest["toy"].params, tmp_path / "processed" / "sources" / "toy")
    assert manifest["provenance"]["origin"] == "synthetic"
    assert (manifest["citation"], manifest["stands_in_for"]) == (None, toy_source.CITATION)
    assert manifest["tables"]["values"]["rows"] == 4
    values = pd.read_parquet(tmp_path / "processed" / "sources" / "toy" / "values.parquet")
    assert values["value"].tolist() == [0.0, 3.0, 6.0, 9.0]


def test_a_source_missing_from_the_registry_is_refused(tmp_path):
    with pytest.raises(KeyError, match="toy"):
        ingest("toy", tmp_path, {}, tmp_path / "out")


# --- Add an agent -------------------------------------------------------------------------------

def agent_block() -> dict:
    block = re.search(r"```yaml\n(.*?)```", recipe("Add an agent"), re.DOTALL).group(1)
    return yaml.safe_load(block)["agents"]


def test_the_agent_recipe_validates_when_appended_to_evaluate_agents(tmp_path):
    (name, config), = agent_block().items()

    def appended(raw):
        raw["agents"][name] = config
        raw["evaluate"]["agents"].append(name)

    params = load_params(project_params(tmp_path, appended))
    assert params.evaluate.agents[-1] == name and params.agents[name].kind == "command"

    def replaced(raw):
        raw["agents"][name] = config
        raw["evaluate"]["agents"] = ["oracle", "nodata", "defensive", name]

    with pytest.raises(ParamsError, match="validity names agents that evaluate.agents does not run"):
        load_params(project_params(tmp_path, replaced))


def test_the_agent_recipe_runs_its_program_from_agent_dir_in_the_sandbox_paths(tmp_path, monkeypatch):
    (name, config), = agent_block().items()
    monkeypatch.chdir(tmp_path)
    script = tmp_path / config["options"]["agent_dir"] / "my_agent.py"
    script.parent.mkdir(parents=True)
    script.write_text("print('hello')\n")
    params = AgentParams.model_validate(config)
    setup = setup_agent(name, params)
    program = AGENTS[params.kind](params.options, QueryContext("q", "t", tmp_path))
    assert program.argv == ["python", "/agent/my_agent.py", "/workspace"]
    assert program.agent_dir == script.parent.resolve()
    script.write_text("print('changed')\n")
    assert setup_agent(name, params).agent_hash != setup.agent_hash  # its code keys its journal records


def test_a_new_agent_kind_is_found_once_it_is_in_agents(monkeypatch):
    with pytest.raises(KeyError, match="unknown kind 'echo'"):
        setup_agent("mine", AgentParams(kind="echo"))
    monkeypatch.setitem(AGENTS, "echo", lambda options, query: AgentProgram(argv=["echo", options["word"]]))
    setup = setup_agent("mine", AgentParams(kind="echo", options={"word": "hi"}))
    assert setup.params.kind == "echo"
    assert AGENTS["echo"]({"word": "hi"}, QueryContext("q", "t", Path("."))).argv == ["echo", "hi"]
    assert "AGENTS" in recipe("Add an agent") and "--split" in (ROOT / "flows" / "evaluate.py").read_text()
