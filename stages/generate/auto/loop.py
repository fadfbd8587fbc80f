"""The AutoSciBench loop, offline: concept -> recipe -> implementation -> K solver trials -> judge -> revise.

A concept is (domain, modality, operations); a recipe fixes the data strategy (a scenario of the
domain and its row count), the construction mechanism (a template of the operation), the gold
plan (derive on the table the hiding strategies' `undo` recovers), the answer spec (the template's
kind and tolerance) and the hiding strategies. The implementation is the task: question, notes,
artefacted table, gold. K solver trials run the configured solver; the judge calls the task
verifiable when its gold is defined, passes the instance verifier and differs from the answer on
the artefacted table whenever a hiding strategy is applied, and grades difficulty by solve rate
(all / some / none: easy / moderate / hard; infrastructure errors are not counted). An easy or
moderate task is revised by adding a hiding strategy, an unverifiable one by dropping its last
strategy and changing template; after `MAX_RECIPE_REVISIONS` without a verifiable hard task the
concept is abandoned; at most `MAX_ROUNDS` rounds per concept; the hardest verifiable task is kept.
An experience card closes every run and later concepts read the last `MAX_CARDS` of them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from stages.generate.auto.hiding import STRATEGIES, undo
from stages.generate.sda import load_scenarios
from stages.generate.sda.dataset import Simulation, simulate
from stages.generate.sda.instances import COLUMN_SLOTS, correct, derived
from stages.generate.sda.templates import TEMPLATES, Context
from stages.hashing import content_hash

K_TRIALS, MAX_ROUNDS, MAX_RECIPE_REVISIONS, MAX_CARDS, MAX_PRIOR_CONCEPTS = 3, 10, 4, 12, 120
LEVELS = {3: "easy", 1: "moderate", 2: "moderate", 0: "hard"}


@dataclass(frozen=True)
class Concept:
    """What a task should be about: a domain, a data modality and the operations it asks for."""

    domain: str
    modality: str
    operations: tuple[str, ...]


@dataclass(frozen=True)
class Recipe:
    """How to build a task for a concept."""

    scenario: str
    template: str
    n_rows: int
    hiding: tuple[str, ...] = ()
    seed: int = 0


@dataclass
class Task:
    """An implemented recipe: what an agent gets (question, notes, table) and the gold."""

    recipe: Recipe
    question: str
    notes: list[str]
    table: object
    gold: float | str
    naive: float | str
    tolerance: float
    verifiable: bool
    reason: str = ""
    binding: dict = field(default_factory=dict, repr=False)  # the solver's own copy of what the text states
    context: Context | None = field(default=None, repr=False)
    column: str = ""


@dataclass
class Run:
    """One concept's rounds and its kept task."""

    concept: Concept
    rounds: list[dict] = field(default_factory=list)
    kept: dict | None = None
    card: dict | None = None


def implement(recipe: Recipe) -> Task:
    """Build the task of a recipe (deterministic for the recipe)."""
    scenario = next(s for s in load_scenarios() if s.id == recipe.scenario)
    template = TEMPLATES[recipe.template]
    simulation = simulate(scenario, recipe.n_rows, recipe.seed)
    rng = np.random.default_rng([recipe.seed, int(content_hash(recipe.template, 8), 16)])
    binding = template.bind(Context(scenario, simulation), rng)
    if binding is None:
        return Task(recipe, "", [], simulation.table, "", "", template.tolerance, False, "no binding")
    named = [binding[slot] for slot in COLUMN_SLOTS if slot in binding]
    column = named[0] if named else scenario.variables[-1].name  # the artefacts hit a column the question uses
    table, notes = simulation.table, []
    for name in recipe.hiding:
        table, note = STRATEGIES[name](table, column, rng)
        notes += [note] if note else []
    clean = _context(scenario, simulation, undo(table, column, " ".join(notes), list(recipe.hiding)))
    gold = derived(template, clean, binding)
    naive = derived(template, _context(scenario, simulation, table), binding) if recipe.hiding else gold
    question = template.question(clean, binding)
    defined = isinstance(gold, str) or (gold is not None and bool(np.isfinite(gold)))
    matters = not recipe.hiding or not _same(naive, gold, template.tolerance)
    reason = "" if defined and matters else ("gold undefined" if not defined else "hiding does not change the answer")
    return Task(recipe, question, notes, table, gold, naive, template.tolerance, defined and matters, reason,
                binding, _context(scenario, simulation, table), column)


Solver = Callable[[Task, int], float | str | None]


def heuristic_solver(task: Task, trial: int) -> float | str | None:
    """The offline default: the template's own analysis on the table as given, after some cleaning.

    It undoes what it spots (the stated calibration and the coded missing values, each remembered
    with probability 0.7 per trial; duplicated records are never looked for). It cannot intervene,
    so for a causal question it gives the observational estimate (the template's confusion).
    """
    rng = np.random.default_rng([trial, int(content_hash(task.question, 8), 16)])
    known = [name for name in task.recipe.hiding if name != "duplicated_records" and rng.uniform() < 0.7]
    cleaned = undo(task.table, task.column, " ".join(task.notes), known).drop(columns="instrument", errors="ignore")
    context = Context(task.context.scenario, Simulation({}, cleaned, task.context.simulation.hidden))
    template = TEMPLATES[task.recipe.template]
    binding = task.binding
    if template.task_type == "causal":
        naive = template.confusion(context, binding)
        binding = naive[0] if naive else binding
    return derived(template, context, binding)


def judge(task: Task, solver: Solver) -> dict:
    """Verifiable or not, solve count over K trials and the difficulty it implies."""
    if not task.verifiable:
        return {"verifiable": False, "solved": None, "difficulty": None, "reason": task.reason}
    solved = 0
    for trial in range(K_TRIALS):
        try:
            answer = solver(task, trial)
        except Exception:  # noqa: BLE001 - a solver that crashes did not solve it
            answer = None
        solved += answer is not None and correct(answer, task.gold, task.tolerance)
    return {"verifiable": True, "solved": solved, "difficulty": LEVELS[solved], "reason": ""}


def run_concept(concept: Concept, cards: list[dict], solver: Solver, seed: int) -> Run:
    """Rounds of recipe revision for one concept; the hardest verifiable task kept; its experience card."""
    rng = np.random.default_rng([seed, int(content_hash([concept.domain, concept.operations], 8), 16)])
    scenarios = [s.id for s in load_scenarios() if s.domain == concept.domain]
    templates = sorted(t for t in TEMPLATES if TEMPLATES[t].task_type in concept.operations)
    useful = Counter(name for card in cards[-MAX_CARDS:] for name in card["useful_patterns"])
    order = sorted(STRATEGIES, key=lambda name: (-useful[name], name))
    recipe = Recipe(scenarios[rng.integers(len(scenarios))], templates[rng.integers(len(templates))], 300, (), seed)
    run, revisions = Run(concept), 0
    for round_number in range(1, MAX_ROUNDS + 1):
        task = implement(recipe)
        verdict = judge(task, solver)
        run.rounds.append({"round": round_number, "recipe": recipe.__dict__ | {"hiding": list(recipe.hiding)},
                           **verdict})
        if verdict["verifiable"] and (run.kept is None or verdict["solved"] < run.kept["solved"]):
            run.kept = {"question": task.question, "notes": task.notes, "gold": task.gold, **verdict,
                        "recipe": run.rounds[-1]["recipe"]}
        if verdict["difficulty"] == "hard":
            break
        revisions += 1
        if revisions > MAX_RECIPE_REVISIONS and (run.kept is None or run.kept["difficulty"] != "hard"):
            break  # the concept is revised: the caller moves on to the next one
        unused = [name for name in order if name not in recipe.hiding]
        if verdict["verifiable"] and unused:
            recipe = Recipe(recipe.scenario, recipe.template, recipe.n_rows, (*recipe.hiding, unused[0]), seed)
        else:
            recipe = Recipe(scenarios[rng.integers(len(scenarios))], templates[rng.integers(len(templates))],
                            recipe.n_rows, recipe.hiding[:-1], seed)
    run.card = experience_card(run)
    return run


def experience_card(run: Run) -> dict:
    """What this run teaches the next ones."""
    hard = [r for r in run.rounds if r["difficulty"] == "hard"]
    broken = [r for r in run.rounds if not r["verifiable"]]
    kept = run.kept["difficulty"] if run.kept else "none"
    return {
        "concept": [run.concept.domain, run.concept.modality, list(run.concept.operations)],
        "summary": f"{len(run.rounds)} rounds; kept a {kept} task",
        "useful_patterns": sorted({h for r in hard for h in r["recipe"]["hiding"]}),
        "anti_patterns": sorted({f"{r['recipe']['template']}: {r['reason']}" for r in broken}),
        "selection_guidance": sorted({r["recipe"]["template"] for r in hard}),
        "generation_guidance": ("add the useful hiding strategies first; drop a strategy that leaves the"
                                " answer unchanged"),
    }


def run_loop(concepts: list[Concept], solver: Solver, seed: int, use_cards: bool) -> list[Run]:
    """Every concept in order; with `use_cards`, each reads the cards of the runs before it."""
    runs: list[Run] = []
    for concept in concepts:
        prior = [run.card for run in runs[-MAX_PRIOR_CONCEPTS:]] if use_cards else []
        runs.append(run_concept(concept, prior, solver, seed))
    return runs


def report(runs: list[Run]) -> dict:
    """As AutoSciBench reports: share of easy / moderate / hard per round, solver success by round."""
    by_round: dict[int, Counter] = {}
    success: dict[int, list[float]] = {}
    for run in runs:
        for entry in run.rounds:
            by_round.setdefault(entry["round"], Counter())[entry["difficulty"] or "unverifiable"] += 1
            if entry["solved"] is not None:
                success.setdefault(entry["round"], []).append(entry["solved"] / K_TRIALS)
    kept = Counter(run.kept["difficulty"] if run.kept else "none" for run in runs)
    return {
        "concepts": len(runs),
        "kept": {level: kept[level] for level in ("easy", "moderate", "hard", "none")},
        "rounds": {str(r): {level: round(c[level] / sum(c.values()), 3)
                            for level in ("easy", "moderate", "hard", "unverifiable")}
                   for r, c in sorted(by_round.items())},
        "solver_success_by_round": {str(r): round(float(np.mean(v)), 3) for r, v in sorted(success.items())},
    }


def _context(scenario, simulation: Simulation, table) -> Context:
    """A context whose observed table is `table` (the generator behind it unchanged)."""
    return Context(scenario, Simulation(simulation.true, table, simulation.hidden))


def _same(first: float | str | None, second: float | str, tolerance: float) -> bool:
    if first is None:
        return False
    if isinstance(first, str) or isinstance(second, str):
        return first == second
    return bool(np.isfinite(first)) and correct(first, second, tolerance)


def seed_concepts() -> list[Concept]:
    """One concept per (domain, task type) of the scenarios, tables as the modality."""
    from stages.generate.sda.templates import TASK_TYPES

    domains = sorted({s.domain for s in load_scenarios()})
    return [Concept(domain, "table", (task_type,)) for domain in domains for task_type in TASK_TYPES]


def write_outputs(out_dir, seed: int, solver: Solver) -> dict:
    """Run the loop with and without experience cards on the same seed concepts; write report, cards, tasks."""
    from stages.hashing import write_json

    with_cards = run_loop(seed_concepts(), solver, seed, use_cards=True)
    without = run_loop(seed_concepts(), solver, seed, use_cards=False)
    summary = {"with_cards": report(with_cards), "without_cards": report(without)}
    write_json(out_dir / "report.json", summary)
    write_json(out_dir / "cards.json", [run.card for run in with_cards])
    public = [{"concept": run.card["concept"], "question": run.kept["question"], "notes": run.kept["notes"],
               "difficulty": run.kept["difficulty"], "recipe": run.kept["recipe"]} for run in with_cards if run.kept]
    write_json(out_dir / "tasks.json", public)
    write_json(out_dir / "private" / "gold.json", [{"question": run.kept["question"], "gold": run.kept["gold"]}
                                                   for run in with_cards if run.kept])
    write_json(out_dir / "rounds.json", [{"concept": run.card["concept"], "rounds": run.rounds} for run in with_cards])
    return summary
