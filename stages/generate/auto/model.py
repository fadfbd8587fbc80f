"""An OpenAI-compatible model as the AutoSciBench loop's generator (`generate.auto.generator: kind: openai`).

The model sees the concept, the menu (scenario ids and titles, template ids with their question
text and task type, hiding strategies with their docstrings), the experience cards, at most
`MAX_PRIOR_CONCEPTS` concepts run before (a seeded uniform sample beyond) and, to revise, the
previous recipe and the judge's verdict. Every field that enters a prompt is taken from an allow
list (`CARD_KEYS`, `VERDICT_KEYS`, the recipe's scenario, template and hiding), so nothing that
bears a task's gold can reach the model. It answers a JSON object; a reply that does not parse or
chooses outside the menu (`loop.checked`) is sent back once with the problem stated, then that step
falls back to the `OfflineGenerator` (counted). So does a model API that fails after the client's
retries. Every call is kept in `log` (messages, reply, usage, problem, fallback reason).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from stages.evaluation.agents.llm.asking import Asker
from stages.generate.auto.generator import Concept, Menu, OfflineGenerator, Recipe
from stages.generate.auto.hiding import STRATEGIES
from stages.generate.auto.loop import MAX_PRIOR_CONCEPTS, checked, read_cards
from stages.generate.sda import load_scenarios
from stages.generate.sda.templates import TEMPLATES
from stages.params import Generation, GeneratorParams

CARD_KEYS = ("concept", "summary", "useful_patterns", "anti_patterns", "selection_guidance", "generation_guidance")
VERDICT_KEYS = ("verifiable", "solved", "trials", "difficulty", "reason")
SYSTEM = ("You design data-analysis tasks for a benchmark of AI agents. A recipe picks a scenario (a simulated"
          " table), a question template and hiding strategies: artefacts put into the table that a careful"
          " analysis must notice and undo. Aim for tasks that stay verifiable and that solvers fail unless"
          " they undo the artefacts. Choose only from the menu. Reply with one JSON object and nothing else.")
RECIPE_REPLY = 'Reply {"scenario": "<id>", "template": "<id>", "hiding": ["<id>", ...], "rationale": "<why>"}.'
RETRY = "Your reply could not be used: {problem}. Reply again with one JSON object, choosing only from the menu."


def prior_concepts(cards: list[dict], seed: int) -> list[list]:
    """The concepts of the cards, at most `MAX_PRIOR_CONCEPTS` (a seeded uniform sample, in order)."""
    concepts = [card["concept"] for card in cards if "concept" in card]
    if len(concepts) <= MAX_PRIOR_CONCEPTS:
        return concepts
    chosen = np.random.default_rng(seed).choice(len(concepts), size=MAX_PRIOR_CONCEPTS, replace=False)
    return [concepts[i] for i in sorted(chosen)]


def _described(concept: Concept) -> str:
    return f"domain {concept.domain}, modality {concept.modality}, operations {list(concept.operations)}"


def _background(cards: list[dict], prior: list[list]) -> str:
    shown = [json.dumps({key: card[key] for key in CARD_KEYS if key in card}) for card in cards]
    return (f"Experience cards of earlier concepts:\n{chr(10).join(shown) or '(none)'}\n"
            f"Concepts run before [domain, modality, operations]:\n{chr(10).join(map(json.dumps, prior)) or '(none)'}")


def menu_text(menu: Menu) -> str:
    """The menu as the model sees it: ids with their titles, question text and docstrings."""
    titles = {scenario.id: scenario.title for scenario in load_scenarios()}
    return "\n".join([
        "Scenarios (id: title):", *(f"- {s}: {titles[s]}" for s in menu.scenarios),
        "Templates (id [task type]: question):",
        *(f"- {t} [{TEMPLATES[t].task_type}]: {TEMPLATES[t].text}" for t in menu.templates),
        "Hiding strategies (id: what it does), most useful first by the experience cards:",
        *(f"- {h}: {' '.join((STRATEGIES[h].__doc__ or '').split())}" for h in menu.strategies)])


def _json_object(reply: str) -> dict:
    match = re.search(r"\{.*\}", reply, re.DOTALL)  # the outermost braces: a reply may wrap it in a fence
    try:
        value = json.loads(match.group(0)) if match else None
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise ValueError("the reply is not a JSON object")
    return value


def parse_recipe(reply: str, menu: Menu) -> Recipe:
    """The recipe a reply proposes, checked against the menu (ValueError naming what is wrong)."""
    value = _json_object(reply)
    scenario, template, hiding = value.get("scenario"), value.get("template"), value.get("hiding", [])
    if not (isinstance(scenario, str) and isinstance(template, str) and isinstance(hiding, list)
            and all(isinstance(name, str) for name in hiding)):
        raise ValueError('the reply needs "scenario" and "template" strings and a "hiding" list of strings')
    return checked(Recipe(scenario, template, menu.n_rows, tuple(hiding), menu.seed), menu)


def parse_concept(reply: str, seed: Concept) -> Concept:
    """The seed concept with the operations a reply keeps (a non-empty subset of the seed's)."""
    operations = _json_object(reply).get("operations")
    if not (isinstance(operations, list) and operations and set(operations) <= set(seed.operations)):
        raise ValueError(f'"operations" must be a non-empty subset of {list(seed.operations)}, got {operations!r}')
    return Concept(seed.domain, seed.modality, tuple(o for o in seed.operations if o in operations))


class ModelGenerator:
    """The `Generator` protocol over the `openai` client, with the offline generator as its fallback."""

    def __init__(self, model: str, base_url: str, api_key: str | None, generation: Generation,
                 timeout_s: float = 120.0, max_retries: int = 2):
        self.name, self.model, self.generation = f"openai:{model}", model, generation
        self.asker = Asker(model, base_url, api_key, generation, RETRY, "offline generator", timeout_s, max_retries)
        self.offline = OfflineGenerator()
        self._prior: list[list] = []  # set by `concept`, read by `first` and `revise` of that concept

    @classmethod
    def from_params(cls, settings: GeneratorParams) -> ModelGenerator:
        """The generator params.yaml configures; the key is read from `api_key_env`."""
        key = os.environ.get(settings.api_key_env) if settings.api_key_env else None
        if settings.api_key_env and not key:
            raise RuntimeError(f"generate.auto.generator: the environment variable {settings.api_key_env} is not set")
        return cls(settings.model or "", settings.base_url, key, Generation.model_validate(settings.generation),
                   settings.timeout_s, settings.max_retries)

    @property
    def log(self) -> list[dict]:
        """Every call: step, attempt, messages, reply, usage, problem, fallback."""
        return self.asker.log

    @property
    def fallbacks(self) -> int:
        """Steps that fell back to the offline generator."""
        return self.asker.fallbacks

    @property
    def usage(self) -> dict:
        """Tokens as the server reported them, calls answered, fallbacks."""
        return self.asker.usage

    def write_log(self, path: Path) -> None:
        """Every call as one JSON line: step, attempt, messages, reply, usage, problem, fallback."""
        self.asker.write_log(path)

    def concept(self, seed: Concept, cards: list[dict]) -> Concept:
        """The seed concept, its operations narrowed or kept by the model."""
        self._prior = prior_concepts(cards, self.generation.seed or 0)
        shown = read_cards(cards, np.random.default_rng(self.generation.seed or 0))
        prompt = (f"Seed concept: {_described(seed)}.\n{_background(shown, self._prior)}\nKeep the seed's operations"
                  ' or narrow them to a non-empty subset. Reply {"operations": [...], "rationale": "<why>"}.')
        found = self._ask("concept", prompt, lambda reply: parse_concept(reply, seed))
        return found or self.offline.concept(seed, cards)

    def first(self, concept: Concept, menu: Menu, cards: list[dict], rng: np.random.Generator) -> Recipe:
        """The model's first recipe, or the offline generator's."""
        prompt = (f"Concept: {_described(concept)}.\nMenu:\n{menu_text(menu)}\n{_background(cards, self._prior)}\n"
                  f"Write the first recipe of this concept. {RECIPE_REPLY}")
        return self._ask("first", prompt, lambda reply: parse_recipe(reply, menu)) or self.offline.first(
            concept, menu, cards, rng)

    def revise(self, concept: Concept, recipe: Recipe, verdict: dict, menu: Menu, cards: list[dict],
               rng: np.random.Generator) -> Recipe:
        """The model's revision of `recipe` after the judge's verdict, or the offline generator's."""
        previous = {"scenario": recipe.scenario, "template": recipe.template, "hiding": list(recipe.hiding)}
        judged = {key: verdict.get(key) for key in VERDICT_KEYS}
        prompt = (f"Concept: {_described(concept)}.\nMenu:\n{menu_text(menu)}\n{_background(cards, self._prior)}\n"
                  f"Previous recipe: {json.dumps(previous)}\nJudge's verdict (solved: of the trials that ran):"
                  f" {json.dumps(judged)}\nRevise the recipe: a verifiable task the solvers solve"
                  f" should get harder; an unverifiable one must change. {RECIPE_REPLY}")
        return self._ask("revise", prompt, lambda reply: parse_recipe(reply, menu)) or self.offline.revise(
            concept, recipe, verdict, menu, cards, rng)

    def _ask(self, step: str, prompt: str, parse: Callable[[str], Any]) -> Any:
        """The parsed reply; None (a fallback, counted and logged) after a second unusable reply or an API failure."""
        return self.asker.ask(step, SYSTEM, prompt, parse)
