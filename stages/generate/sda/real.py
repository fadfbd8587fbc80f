"""SDA-Real: the SDA templates instantiated on the aligned real-data repositories.

SDA-Bench's SDA-Real asks the synthetic templates of real tables, answers derived the same way.
Here the table is a repository's `entities` table (one row per basin, site, region, molecule, ...):
its numeric columns become the scenario's variables (unit from the manifest, range as observed),
its first text column with 2-6 levels the group factor; there are no mechanisms and no graph.

Which templates apply (decided by reading them; `REAL_TEMPLATES` is the result):
- not the causal ones: their answers replay the generator under do(), and their binders walk its graph;
- not the mechanistic ones: they state the generator's equations or fit forms along its edges;
- not the table-only templates whose binders draw their columns from the generator's graph
  (`GRAPH_BINDERS`): real data has no graph, so they would never bind;
- on a table without a group factor, not the templates that name `{group}`.
The rest (descriptive, inferential, exploratory, predictive) read only `context.table`. As a backstop a
`RealContext` has no generator: `intervened` raises `GeneratorMissing` instead of simulating.

Choices left open by the issue: rows missing a kept column are dropped (the agent sees the
complete-case table, so it answers on the same rows); a column missing in more than `MAX_MISSING`
of the rows is dropped instead; every variable has the role `target` (nothing is known to be
exogenous on real data, so any column may be the outcome a predictive template asks for).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from pydantic import Field, model_validator

from stages.generate.sda.build import Generated, select
from stages.generate.sda.dataset import Simulation
from stages.generate.sda.instances import candidates
from stages.generate.sda.scenario import Scenario, Variable
from stages.generate.sda.templates import TEMPLATES, Context, Template
from stages.hashing import content_hash
from stages.params import Profile, SdaParams
from stages.repository import MANIFEST, SNAKE_CASE, read_manifest, read_table

ENTITIES = "entities"  # the per-entity table of an aligned repository (SPEC section 2)
GENERATOR_TASK_TYPES = ("causal", "mechanistic")
GRAPH_BINDERS = frozenset({  # derivations read only the table, binders pick (x, y) along edges or ancestors
    "descriptive.group_correlation", "inferential.slope_margin", "exploratory.steepest_group_slope",
    "exploratory.best_split_gap", "exploratory.largest_partial_correlation", "predictive.poly2_mae",
    "predictive.log_linear_r2", "predictive.best_feature_set"})
REAL_TEMPLATES: dict[str, Template] = {id_: t for id_, t in TEMPLATES.items()
                                       if t.task_type not in GENERATOR_TASK_TYPES and id_ not in GRAPH_BINDERS}
MAX_MISSING = 0.05  # a column missing in more of the rows is dropped rather than the rows
MIN_ROWS = 30  # complete rows a table needs (predictive templates hold out 30 %)
MIN_VARIABLES = 3  # a target and two features
GROUP_LEVELS = (2, 6)  # levels a text column needs to become the group factor
MIN_LEVEL_ROWS = 5  # rows every level needs (a t-test, a percentile within the level)
NO_GROUP = "no_group"  # the factor's name on a table without one; it has no levels and no column


class GeneratorMissing(RuntimeError):
    """A template asked real data for its generator (an intervention replay): real data has none."""


class RealScenario(Scenario):
    """A repository's entities table described as a scenario: measured columns, no mechanisms."""

    domain: str = Field(pattern=SNAKE_CASE.pattern)  # the repository's domain key, not an SDA domain

    @model_validator(mode="after")
    def _a_dag_over_declared_variables(self) -> RealScenario:  # replaces the synthetic DAG check
        names = [v.name for v in (*self.variables, *self.distractors)] + list(self.groups)
        if len(set(names)) != len(names):
            raise ValueError(f"{self.id}: a name is used twice")
        if self.mechanisms or self.group_effects:
            raise ValueError(f"{self.id}: real data has no mechanisms or group effects")
        if len(self.variables) < MIN_VARIABLES:
            raise ValueError(f"{self.id}: fewer than {MIN_VARIABLES} variables")
        return self


@dataclass(frozen=True)
class RealContext(Context):
    """A real table as the templates see it; there is no generator behind it."""

    def intervened(self, do: dict[str, float]) -> Simulation:
        """Refuse: an intervention needs the generator, and real data has none."""
        raise GeneratorMissing(f"{self.scenario.id}: real data has no generator to replay under do({do}); "
                               "causal templates do not apply to it")


def real_context(folder: Path) -> RealContext | None:
    """The context of one repository's entities table, or None where it has none usable."""
    manifest = read_manifest(folder)
    entry = manifest["tables"].get(ENTITIES)
    if entry is None:
        return None
    units = {column: spec.get("unit", "") for column, spec in entry["columns"].items()}
    return context_of(folder.name, read_table(folder, ENTITIES), tuple(entry["keys"]), units)


def context_of(domain: str, frame: pd.DataFrame, keys: tuple[str, ...], units: dict[str, str]) -> RealContext | None:
    """A per-entity frame as a context (None: too few complete rows or numeric columns)."""
    numeric = [c for c in frame.columns if c not in keys and c != "sample_id" and _is_number(frame[c])]
    values = frame[numeric].astype("float64").replace([np.inf, -np.inf], np.nan)
    kept = [c for c in numeric if values[c].isna().mean() <= MAX_MISSING]
    complete = values[kept].notna().all(axis=1).to_numpy()
    group = _group_column(frame[complete], [c for c in frame.columns if c not in keys and c not in numeric])
    if group is not None:
        complete = complete & frame[group].notna().to_numpy()
    rows = values.loc[complete, kept].reset_index(drop=True)
    kept = [c for c in kept if rows[c].min() < rows[c].max()]  # a constant column has no range
    if len(rows) < MIN_ROWS or len(kept) < MIN_VARIABLES:
        return None
    entity = " / ".join(keys)
    variables = tuple(Variable(name=c, role="target", unit=str(units.get(c) or ""), low=float(rows[c].min()),
                               high=float(rows[c].max()), description=f"{c} of each {entity} (real data)")
                      for c in sorted(kept))
    sample_id = frame.loc[complete, list(keys)].astype(str).agg("/".join, axis=1).to_numpy(dtype=object)
    columns = {"sample_id": sample_id}
    if group is not None:
        columns[group] = frame.loc[complete, group].astype(str).to_numpy()
    table = pd.DataFrame(columns | {c: rows[c].to_numpy() for c in sorted(kept)})
    table = table.sort_values("sample_id", kind="stable", ignore_index=True)
    levels = tuple(sorted(table[group].unique())) if group is not None else ()
    scenario = RealScenario(id=f"real_{domain}", domain=domain, title=f"Entities of the {domain} repository",
                            unit_of_observation=f"one {entity} of the {domain} repository", variables=variables,
                            mechanisms=(), groups={group or NO_GROUP: levels})
    hidden = {"origin": "real", "repository": domain, "table": ENTITIES, "keys": list(keys),
              "rows_read": len(frame), "rows_kept": len(table), "group": group,
              "columns_dropped": sorted(set(numeric) - set(kept))}
    return RealContext(scenario, Simulation(true={}, table=table, hidden=hidden))


def templates_for(context: Context) -> list[Template]:
    """The real-data templates this table can take (the group ones only where it has a group factor)."""
    grouped = bool(context.levels())
    return [t for t in REAL_TEMPLATES.values() if grouped or "{group}" not in t.text]


def on_repository(context: RealContext, params: SdaParams) -> Generated:
    """Every verified candidate instance on one repository's table (not yet selected or split)."""
    scenario, found, rejected = context.scenario, [], Counter()
    for template in templates_for(context):
        with np.errstate(divide="ignore", invalid="ignore"):  # a real column may be constant in a held-out part
            drawn = candidates(template, context, params.seed, params.attempts, rejected)
        for instance in drawn:
            instance |= {"scenario": scenario.id, "domain": scenario.domain}
            public = {k: v for k, v in instance.items() if k not in ("options", "option_perturbations",
                                                                    "correct_option")}
            found.append(instance | {"instance_id": content_hash(public)})
    return Generated({scenario.id: context.table}, {scenario.id: context.simulation.hidden}, found, rejected)


def build_real(repositories_dir: Path, params: SdaParams, profile: Profile) -> Generated:
    """Instances on every repository under `repositories_dir` with a usable entities table, selected per pair.

    Each instance's `domain` is its repository's folder name (its domain key); deterministic for the
    params and the repositories' contents. Write the result with `build.write`.
    """
    folders = sorted(p for p in repositories_dir.iterdir() if (p / MANIFEST).is_file())
    contexts = [context for context in map(real_context, folders) if context is not None]
    return select([on_repository(context, params) for context in contexts], params.per_pair[profile])


def _is_number(column: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)


def _group_column(frame: pd.DataFrame, columns: list[str]) -> str | None:
    """The first text column with 2-6 levels, each held by at least `MIN_LEVEL_ROWS` rows."""
    low, high = GROUP_LEVELS
    for column in columns:
        if not (pd.api.types.is_string_dtype(frame[column]) or isinstance(frame[column].dtype, pd.CategoricalDtype)):
            continue
        counts = frame[column].dropna().astype(str).value_counts()
        if low <= len(counts) <= high and counts.min() >= MIN_LEVEL_ROWS:
            return column
    return None
