"""Where concepts and recipes come from: the generator protocol and the offline default.

A generator refines a seed concept (it may narrow the operations), writes the first recipe of a
concept and revises a recipe from the judge's verdict. It chooses only from the `Menu` the loop
offers (the domain's scenarios, the operations' templates, the hiding strategies in the order the
experience cards rank them), so a proposal is always a buildable recipe. The offline generator is
deterministic for its random stream; an OpenAI-compatible model is `stages.generate.auto.model`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np


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


@dataclass(frozen=True)
class Menu:
    """What a recipe for one concept may choose from."""

    scenarios: tuple[str, ...]
    templates: tuple[str, ...]
    strategies: tuple[str, ...]  # most useful first, by the experience cards read
    n_rows: int = 300
    seed: int = 0


class Generator(Protocol):
    """Proposes concepts and recipes; the loop builds, judges and keeps."""

    def concept(self, seed: Concept, cards: list[dict]) -> Concept:
        """The concept to run for a seed concept, given the experience cards."""

    def first(self, concept: Concept, menu: Menu, cards: list[dict], rng: np.random.Generator) -> Recipe:
        """The first recipe of a concept."""

    def revise(self, concept: Concept, recipe: Recipe, verdict: dict, menu: Menu, cards: list[dict],
               rng: np.random.Generator) -> Recipe:
        """The next recipe after the judge's verdict on `recipe`."""


class OfflineGenerator:
    """Composes recipes from the menu: a drawn scenario and template, then hiding strategies added.

    An easy or moderate task gets the next unused strategy (the cards' ranking first); an
    unverifiable one drops its last strategy and is rebuilt on another drawn scenario and template.
    """

    name = "offline"

    def concept(self, seed: Concept, cards: list[dict]) -> Concept:
        """The seed concept unchanged."""
        return seed

    def first(self, concept: Concept, menu: Menu, cards: list[dict], rng: np.random.Generator) -> Recipe:
        """A drawn scenario and template, nothing hidden."""
        return self._drawn(menu, (), rng)

    def revise(self, concept: Concept, recipe: Recipe, verdict: dict, menu: Menu, cards: list[dict],
               rng: np.random.Generator) -> Recipe:
        """One more hiding strategy, or (unverifiable) one fewer on a newly drawn scenario and template."""
        unused = [name for name in menu.strategies if name not in recipe.hiding]
        if verdict["verifiable"] and unused:
            return Recipe(recipe.scenario, recipe.template, recipe.n_rows, (*recipe.hiding, unused[0]), recipe.seed)
        return self._drawn(menu, recipe.hiding[:-1], rng)

    @staticmethod
    def _drawn(menu: Menu, hiding: tuple[str, ...], rng: np.random.Generator) -> Recipe:
        scenario = menu.scenarios[rng.integers(len(menu.scenarios))]
        return Recipe(scenario, menu.templates[rng.integers(len(menu.templates))], menu.n_rows, hiding, menu.seed)
