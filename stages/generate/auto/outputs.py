"""The loop's report and files: runs with and without experience cards, kept tasks staged for agents.

processed/generated/auto/ holds report.json (the generator that ran; per round: share of easy / moderate / hard /
unverifiable; solver success; kept difficulties; with vs without cards), cards.json, rounds.json,
tasks.json (the kept tasks' public description) and tasks/<task_id>/ (prompt.md and data/, exactly
what an agent's workspace gets). The gold and the recipe's hidden parts are under private/ only.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np

from stages.generate.auto import staged
from stages.generate.auto.generator import Concept, Generator, OfflineGenerator
from stages.generate.auto.loop import Gate, Run, Solver, run_loop
from stages.generate.sda import load_scenarios
from stages.generate.sda.templates import TASK_TYPES
from stages.hashing import content_hash, write_json

LEVELS = ("easy", "moderate", "hard")


def report(runs: list[Run]) -> dict:
    """As AutoSciBench reports: share of easy / moderate / hard per round, solver success by round."""
    by_round: dict[int, Counter] = {}
    success: dict[int, list[float]] = {}
    refused = Counter()
    for run in runs:
        for entry in run.rounds:
            by_round.setdefault(entry["round"], Counter())[entry["difficulty"] or "unverifiable"] += 1
            if entry["solved"] is not None:
                success.setdefault(entry["round"], []).append(entry["solved"] / entry["trials"])
            if entry["reason"].startswith("passed by"):
                refused[entry["reason"]] += 1
    kept = Counter(run.kept["difficulty"] if run.kept else "none" for run in runs)
    return {
        "concepts": len(runs),
        "kept": {level: kept[level] for level in (*LEVELS, "none")},
        "rounds": {str(r): {level: round(c[level] / sum(c.values()), 3) for level in (*LEVELS, "unverifiable")}
                   for r, c in sorted(by_round.items())},
        "solver_success_by_round": {str(r): round(float(np.mean(v)), 3) for r, v in sorted(success.items())},
        "refused_by_floors": dict(sorted(refused.items())),
    }


def seed_concepts() -> list[Concept]:
    """One concept per (domain, task type) of the scenarios, tables as the modality."""
    domains = sorted({s.domain for s in load_scenarios()})
    return [Concept(domain, "table", (task_type,)) for domain in domains for task_type in TASK_TYPES]


def write_outputs(out_dir: Path, seed: int, solver: Solver, generator: Generator | None = None,
                  gate: Gate | None = None) -> dict:
    """Run the loop with and without experience cards on the same seed concepts; write what it found.

    The report names the generator that ran and, for a model, its usage over both runs.
    """
    generator = generator or OfflineGenerator()
    with_cards = run_loop(seed_concepts(), solver, seed, True, generator, gate)
    without = run_loop(seed_concepts(), solver, seed, False, generator, gate)
    summary = {"generator": {"name": getattr(generator, "name", type(generator).__name__),
                             "usage": getattr(generator, "usage", None)},
               "with_cards": report(with_cards), "without_cards": report(without)}
    write_json(out_dir / "report.json", summary)
    write_json(out_dir / "cards.json", [run.card for run in with_cards])
    write_json(out_dir / "rounds.json", [{"concept": run.card["concept"], "rounds": run.rounds} for run in with_cards])
    public, gold = [], []
    for run in (run for run in with_cards if run.kept):
        task = run.kept["task"]
        task_id = content_hash([staged.prompt(task), run.kept["recipe"]], 16)
        folder = out_dir / "tasks" / task_id
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "prompt.md").write_text(staged.prompt(task))
        staged.stage(task, folder / "data")
        public.append({"task_id": task_id, "concept": run.card["concept"], "question": task.question,
                       "notes": task.notes, "difficulty": run.kept["difficulty"]})
        gold.append({"task_id": task_id, "gold": task.gold, "tolerance": task.tolerance,
                     "recipe": run.kept["recipe"]})
    write_json(out_dir / "tasks.json", public)
    write_json(out_dir / "private" / "gold.json", gold)
    return summary
