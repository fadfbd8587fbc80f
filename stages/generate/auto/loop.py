"""The AutoSciBench loop: concept -> recipe -> implementation -> K solver trials -> judge -> revise.

A concept is (domain, modality, operations); a recipe fixes the data strategy (a scenario of the
domain and its row count), the construction mechanism (a template of the operation), the gold
plan (derive on the table the hiding strategies' `undo` recovers), the answer spec (the template's
kind and tolerance) and the hiding strategies. A generator (`generator.py`: offline by default, a
model in `model.py`) proposes concepts and recipes from a menu. The implementation is the task:
question, notes, artefacted table, gold. The judge calls a task verifiable when its gold is
defined, no data-free guess reaches it, a hiding strategy changes the answer and no data-free
floor agent passes it (the gate, `solvers.FloorGate`); K trials of the configured solver grade its
difficulty by solve rate (all / some / none: easy / moderate / hard; infrastructure errors are not
counted). The generator revises the recipe; after `MAX_RECIPE_REVISIONS` without a verifiable hard
task the concept is abandoned; at most `MAX_ROUNDS` rounds per concept; the hardest verifiable task
is kept. An experience card closes every run; later concepts read at most `MAX_CARDS` of them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from stages.generate.auto.generator import Concept, Generator, Menu, OfflineGenerator, Recipe
from stages.generate.auto.hiding import STRATEGIES, cleaned, undo
from stages.generate.sda import load_scenarios
from stages.generate.sda.dataset import Simulation, simulate
from stages.generate.sda.instances import COLUMN_SLOTS, correct, data_free_guesses, derived, stated_numbers
from stages.generate.sda.templates import TEMPLATES, Context
from stages.hashing import content_hash

K_TRIALS, MAX_ROUNDS, MAX_RECIPE_REVISIONS, MAX_CARDS, MAX_PRIOR_CONCEPTS = 3, 10, 4, 12, 120


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
    binding = template.bound(Context(scenario, simulation), rng)
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
    reason = _unverifiable(gold, naive, template.tolerance, clean, " ".join([question, *notes]), bool(recipe.hiding))
    shown = derived(template, _context(scenario, simulation, cleaned(table, " ".join(notes))), binding)
    if not reason and not _same(shown, gold, 1e-9):
        reason = "the gold does not follow from what the task shows"
    return Task(recipe, question, notes, table, gold, naive, template.tolerance, not reason, reason,
                binding, _context(scenario, simulation, table), column)


def _unverifiable(gold, naive, tolerance: float, context: Context, text: str, hidden: bool) -> str:
    """Why the task cannot grade an analysis ("" when it can).

    The gold must be defined; a hiding strategy must change the answer; no data-free guess (the
    SDA verifier's, and every number the task text states) may land within the tolerance.
    """
    if not (isinstance(gold, str) or (gold is not None and bool(np.isfinite(gold)))):
        return "gold undefined"
    if hidden and _same(naive, gold, tolerance):
        return "hiding does not change the answer"
    stated = stated_numbers(text)
    if not isinstance(gold, str) and any(_same(guess, gold, tolerance)
                                         for guess in [*data_free_guesses(context, text), *stated]):
        return "guessable without data"
    return ""


Solver = Callable[[Task, int], float | str | None]
Gate = Callable[[Task], str | None]  # why a task is not a test of the analysis (a floor passed it), or None


class InfraError(RuntimeError):
    """A solver trial that failed for the harness's reasons, not the solver's: not counted."""


def judge(task: Task, solver: Solver, gate: Gate | None = None) -> dict:
    """Verifiable or not, solve count over the K trials that ran and the difficulty it implies.

    A task the gate refuses (a data-free floor agent passes it) is not verifiable; the reason says
    which floor. A trial that raises `InfraError` is not counted; any other exception is a failure.
    """
    reason = task.reason if not task.verifiable else (gate(task) if gate is not None else None)
    if reason:
        return {"verifiable": False, "solved": None, "trials": 0, "difficulty": None, "reason": reason}
    solved, counted = 0, 0
    for trial in range(K_TRIALS):
        try:
            answer = solver(task, trial)
        except InfraError:
            continue
        except Exception:  # noqa: BLE001 - a solver that crashes did not solve it
            answer = None
        counted += 1
        solved += answer is not None and correct(answer, task.gold, task.tolerance)
    if counted == 0:
        return {"verifiable": True, "solved": None, "trials": 0, "difficulty": None,
                "reason": "no trial ran (infrastructure)"}
    level = "easy" if solved == counted else ("hard" if solved == 0 else "moderate")
    return {"verifiable": True, "solved": solved, "trials": counted, "difficulty": level, "reason": ""}


def run_concept(seed_concept: Concept, cards: list[dict], solver: Solver, seed: int,
                generator: Generator | None = None, gate: Gate | None = None) -> Run:
    """Rounds of recipe revision for one concept; the hardest verifiable task kept; its experience card."""
    generator = generator or OfflineGenerator()
    concept = generator.concept(seed_concept, cards)
    rng = np.random.default_rng([seed, int(content_hash([concept.domain, concept.operations], 8), 16)])
    cards = read_cards(cards, rng)
    useful = Counter(name for card in cards for name in card["useful_patterns"])
    menu = Menu(tuple(s.id for s in load_scenarios() if s.domain == concept.domain),
                tuple(sorted(t for t in TEMPLATES if TEMPLATES[t].task_type in concept.operations)),
                tuple(sorted(STRATEGIES, key=lambda name: (-useful[name], name))), 300, seed)
    recipe = checked(generator.first(concept, menu, cards, rng), menu)
    run, revisions = Run(concept), 0
    for round_number in range(1, MAX_ROUNDS + 1):
        task = implement(recipe)
        verdict = judge(task, solver, gate)
        run.rounds.append({"round": round_number, "recipe": recipe.__dict__ | {"hiding": list(recipe.hiding)},
                           **verdict})
        if verdict["difficulty"] and (run.kept is None or _harder(verdict, run.kept)):
            run.kept = {"question": task.question, "notes": task.notes, "gold": task.gold, **verdict,
                        "recipe": run.rounds[-1]["recipe"], "task": task}
        if verdict["difficulty"] == "hard":
            break
        revisions += 1
        if revisions > MAX_RECIPE_REVISIONS and (run.kept is None or run.kept["difficulty"] != "hard"):
            break  # the concept is revised: the caller moves on to the next one
        recipe = checked(generator.revise(concept, recipe, verdict, menu, cards, rng), menu)
    run.card = experience_card(run)
    return run


def checked(recipe: Recipe, menu: Menu) -> Recipe:
    """A generator's recipe, refused when it chooses outside the menu (a model can propose anything)."""
    problems = [f"hiding strategy {name!r}" for name in recipe.hiding if name not in menu.strategies]
    if recipe.scenario not in menu.scenarios:
        problems.insert(0, f"scenario {recipe.scenario!r}")
    if recipe.template not in menu.templates:
        problems.insert(0, f"template {recipe.template!r}")
    if len(set(recipe.hiding)) != len(recipe.hiding):
        problems.append(f"a hiding strategy repeated in {list(recipe.hiding)}")
    if problems:
        raise ValueError(f"recipe outside the menu: {', '.join(problems)}")
    return recipe


def read_cards(cards: list[dict], rng: np.random.Generator) -> list[dict]:
    """At most `MAX_CARDS` of the experience cards: all of them, or a seeded uniform sample in order."""
    if len(cards) <= MAX_CARDS:
        return cards
    return [cards[i] for i in sorted(rng.choice(len(cards), size=MAX_CARDS, replace=False))]


def _harder(verdict: dict, kept: dict) -> bool:
    return verdict["solved"] / verdict["trials"] < kept["solved"] / kept["trials"]


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


def run_loop(concepts: list[Concept], solver: Solver, seed: int, use_cards: bool,
             generator: Generator | None = None, gate: Gate | None = None) -> list[Run]:
    """Every concept in order; with `use_cards`, each reads the cards of the runs before it."""
    runs: list[Run] = []
    for concept in concepts:
        prior = [run.card for run in runs] if use_cards else []
        runs.append(run_concept(concept, prior, solver, seed, generator, gate))
    return runs


def _context(scenario, simulation: Simulation, table) -> Context:
    """A context whose observed table is `table` (the generator behind it unchanged)."""
    return Context(scenario, Simulation(simulation.true, table, simulation.hidden))


def _same(first: float | str | None, second: float | str, tolerance: float) -> bool:
    if first is None:
        return False
    if isinstance(first, str) or isinstance(second, str):
        return first == second
    return bool(np.isfinite(first)) and correct(first, second, tolerance)
