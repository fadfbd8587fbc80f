"""Build the SDA-style generated benchmark: datasets, verified instances, splits, rejection counts.

One dataset per scenario; every template is tried on every dataset; the verified candidates of
each (domain, task type) pair are ordered by their content id and the first `per_pair` kept, and
split 60 / 40 by that order, an instance's OEQ and MCQ versions together. Public files: the
datasets (as the agent sees them) and the questions with their options. Private files: answers,
correct options, the option values and the perturbation behind each, bindings, and the hidden
generator metadata.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from stages.generate.sda import load_scenarios
from stages.generate.sda.dataset import simulate
from stages.generate.sda.instances import LETTERS, candidates
from stages.generate.sda.scenario import Scenario
from stages.generate.sda.templates import TASK_TYPES, TEMPLATES, Context
from stages.hashing import content_hash, write_json
from stages.params import Profile, SdaParams
from stages.repository import write_parquet

TRAIN_SHARE = 0.6


@dataclass(frozen=True)
class Generated:
    """What a build produced."""

    datasets: dict[str, pd.DataFrame]
    hidden: dict[str, dict]
    instances: list[dict]
    rejected: Counter


def build(params: SdaParams, profile: Profile, scenarios: list[Scenario] | None = None) -> Generated:
    """Generate the scenarios' datasets (default: all) and the kept instances (deterministic for the params)."""
    chosen = load_scenarios() if scenarios is None else scenarios
    return select([on_scenario(scenario, params) for scenario in chosen], params.per_pair[profile])


def on_scenario(scenario: Scenario, params: SdaParams) -> Generated:
    """One scenario's dataset and every verified candidate instance on it (not yet selected or split)."""
    simulation = simulate(scenario, params.n_rows, params.seed)
    context, found, rejected = Context(scenario, simulation), [], Counter()
    for template in TEMPLATES.values():
        for instance in candidates(template, context, params.seed, params.attempts, rejected):
            instance |= {"scenario": scenario.id, "domain": scenario.domain}
            public = {k: v for k, v in instance.items() if k not in ("options", "option_perturbations",
                                                                    "correct_option")}
            found.append(instance | {"instance_id": content_hash(public)})
    return Generated({scenario.id: simulation.table}, {scenario.id: simulation.hidden}, found, rejected)


def select(parts: list[Generated], per_pair: int) -> Generated:
    """Keep the first `per_pair` candidates of each (domain, task type) by id; split them 60 / 40."""
    pool: dict[tuple[str, str], list[dict]] = {}
    rejected = Counter()
    for part in parts:
        rejected.update(part.rejected)
        for instance in part.instances:
            pool.setdefault((instance["domain"], instance["task_type"]), []).append(instance)
    kept = []
    for key in sorted(pool):
        chosen = sorted(pool[key], key=lambda instance: instance["instance_id"])[:per_pair]
        rejected["over_quota"] += len(pool[key]) - len(chosen)
        train = round(len(chosen) * TRAIN_SHARE)
        kept += [instance | {"split": "train" if rank < train else "test"} for rank, instance in enumerate(chosen)]
    datasets = {k: v for part in parts for k, v in part.datasets.items()}
    hidden = {k: v for part in parts for k, v in part.hidden.items()}
    return Generated(datasets, hidden, kept, rejected)


def write(generated: Generated, out_dir: Path) -> dict:
    """Write the public and private files under `out_dir`; returns the summary written to summary.json."""
    (out_dir / "datasets").mkdir(parents=True, exist_ok=True)
    (out_dir / "private").mkdir(parents=True, exist_ok=True)
    for scenario_id, table in sorted(generated.datasets.items()):
        write_parquet(table, out_dir / "datasets" / f"{scenario_id}.parquet")
    rows = []
    for instance in generated.instances:
        base = {"instance_id": instance["instance_id"], "scenario": instance["scenario"],
                "domain": instance["domain"], "task_type": instance["task_type"], "template": instance["template"],
                "split": instance["split"], "dataset": f"datasets/{instance['scenario']}.parquet"}
        rows.append(base | {"format": "oeq", "question": instance["question"], "options": ""})
        options = "\n".join(f"{letter}. {_shown(value)}"
                            for letter, value in zip(LETTERS, instance["options"], strict=False))
        rows.append(base | {"format": "mcq", "question": instance["question"], "options": options})
    write_parquet(pd.DataFrame(rows), out_dir / "instances.parquet")
    private = [{"instance_id": i["instance_id"], "answer": json.dumps(i["answer"]), "answer_kind": i["answer_kind"],
                "tolerance": i["tolerance"], "correct_option": i["correct_option"],
                "options": json.dumps(i["options"]),
                "option_perturbations": json.dumps(i["option_perturbations"]),
                "binding": json.dumps(i["binding"], sort_keys=True)} for i in generated.instances]
    write_parquet(pd.DataFrame(private), out_dir / "private" / "answers.parquet")
    write_json(out_dir / "private" / "hidden.json", generated.hidden)
    counts = Counter((i["domain"], i["task_type"]) for i in generated.instances)
    summary = {"instances": len(generated.instances), "datasets": len(generated.datasets),
               "rejected": dict(sorted(generated.rejected.items())),
               "by_domain_and_task_type": {f"{d}/{t}": counts[(d, t)] for d in sorted({d for d, _ in counts})
                                           for t in TASK_TYPES},
               "splits": dict(sorted(Counter(i["split"] for i in generated.instances).items()))}
    write_json(out_dir / "summary.json", summary)
    return summary


def _shown(value: float | str) -> str:
    return value if isinstance(value, str) else f"{value:.4g}"
